"""The collect and history commands: rounds, progress lines, a clean stop, the summary."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from searchkit.cli.main import main
from searchkit.history.usage_history import History
from tests.conftest import FIXED_CLOCK


def two_indexes(emulator):
    with emulator.client() as client:
        client.create_index("docs", region="eu-west-1", type="free")
        client.create_index("shop", region="us-central1", type="payg")


# ``configured`` (tests/conftest.py) points the environment at this emulator.
pytestmark = pytest.mark.emulator(seed=7, clock=FIXED_CLOCK, setup=two_indexes)


def test_collect_prints_a_progress_line_per_round(configured, tmp_path, capsys):
    store = tmp_path / "h"
    assert main(["collect", "--store", str(store), "--count", "2", "--every", "0s"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("round 1: ") and lines[0].endswith(
        "2 indexes, 2,880 new points, 0 gaps, 0 warnings"
    )
    assert lines[1].endswith("2 indexes, 0 new points, 0 gaps, 0 warnings")
    assert len(History(store).throughput()) == 2880


def test_collect_no_compact_leaves_the_closed_days_files_and_writes_their_rollups(
    configured, tmp_path, capsys
):
    store = tmp_path / "h"
    closed = store / "throughput/day=2026-11-20"  # the machine's clock is days later
    for _ in range(2):
        assert main(["collect", "--store", str(store), "--no-compact"]) == 0
        configured.advance(600)

    assert len(list(closed.glob("*.parquet"))) == 2
    rows = History(store).rollups()
    assert sorted(rows["period"].dt.strftime("%Y-%m-%d").value_counts().items()) == [
        ("2026-11-19", 2),
        ("2026-11-20", 2),
    ]
    assert main(["collect", "--store", str(store)]) == 0  # compaction is the default
    assert len(list(closed.glob("*.parquet"))) == 1
    assert len(History(store).throughput()) == 2880 + 2 * 10 * 2


def test_history_summarises_the_store(configured, tmp_path, capsys):
    store = tmp_path / "h"
    main(["collect", "--store", str(store)])
    capsys.readouterr()
    assert main(["history", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert f"history at {store}" in out
    assert "  indexes   2\n" in out
    assert "  time span 2026-11-19 12:00 .. 2026-11-20 11:59 UTC\n" in out
    assert "  points    2,880\n" in out
    assert "  gaps      0" in out


def test_history_counts_every_stored_file_and_its_bytes_by_kind(configured, tmp_path, capsys):
    from searchkit._units import binary_size
    from tests.history.conftest import stored_files

    store = tmp_path / "h"
    for _ in range(2):
        assert main(["collect", "--store", str(store), "--no-compact"]) == 0
        configured.advance(600)
    capsys.readouterr()

    assert main(["history", "--store", str(store)]) == 0

    def size(pattern: str) -> str:
        return binary_size(sum(p.stat().st_size for p in store.glob(pattern)))

    every = stored_files(store)
    assert len(every) == 7  # what `find h -type f` counts
    lines = capsys.readouterr().out.splitlines()
    assert lines[4:10] == [
        f"  on disk   {binary_size(sum(p.stat().st_size for p in every))} in 7 files",
        f"    throughput {size('throughput/day=*/*.parquet'):>10} in 3 files",
        f"    limits     {size('limits/day=*/*.parquet'):>10} in 1 file",
        f"    rollups    {size('rollups/day=*/*.parquet'):>10} in 2 files",
        f"    other      {size('_newest.parquet'):>10} in 1 file: _newest.parquet",
        "  gaps      0",
    ]
    info = History(store).info()
    assert info.by_kind["rollups"] == (2, sum(p.stat().st_size for p in store.glob("rollups/*/*")))
    assert (info.files, info.bytes) == (7, sum(p.stat().st_size for p in every))


def test_an_unwritable_store_is_one_line_and_exit_1(configured, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["collect", "--store", str(blocker / "h")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("searchkit: cannot write to the history")
    assert err.rstrip().endswith("[HistoryError]")
    assert len(err.splitlines()) == 1


def test_a_bad_interval_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["collect", "--store", "x", "--every", "ten minutes"])
    assert exit_info.value.code == 2
    assert "expected a duration such as 30s, 10m, 1h" in capsys.readouterr().err


def test_sigterm_stops_between_rounds_without_a_partial_file(configured, tmp_path):
    store = tmp_path / "h"
    env = {
        **os.environ,
        "SEARCHKIT_BASE_URL": configured.url,
        "SEARCHKIT_USERNAME": configured.username,
        "SEARCHKIT_PASSWORD": configured.password,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "searchkit", "collect", "--store", str(store), "--every", "1h"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        first = process.stdout.readline()
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert first.startswith("round 1: ")
    assert process.returncode == 0, err
    assert "stopped after 1 round(s); every stored file is complete" in out
    assert not [p for p in store.rglob("*") if p.name.startswith(".")]
    assert len(History(store).throughput()) == 2880
