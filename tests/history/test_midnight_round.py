"""The collect round across midnight closes the day; its merge runs on a thread after the
round returns (history/compaction.py: merge_later), and the next round waits for it.

The round that crossed midnight used to merge the closed day before it returned: the whole
day read and written again, 1.9-3.5x a list at 1,000 indexes against 1.2-1.3x for the
other rounds. The closed day's rollup is current by then (each round extends it), so
readers answer it meanwhile, and see every point exactly once throughout.
"""

from __future__ import annotations

import pathlib
import shutil
import socket
import threading
import types

import fsspec
import pandas as pd
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

import searchkit as sk
from searchkit.errors import TransportError
from searchkit.history import compaction
from searchkit.history.compaction import merge_later, settle, settle_all
from searchkit.history.layout import Layout
from searchkit.history.usage_history import History
from tests.stores import copy_store

HOUR = 3600
CLOSED = "day=2026-11-20"


def closed_files(root: pathlib.Path) -> list[pathlib.Path]:
    return sorted((root / "throughput" / CLOSED).glob("*.parquet"))


def to_midnight(hist: History, emulator, client) -> None:
    """Rounds every 10 minutes from 23:30 to 23:50; the clock then shows midnight."""
    emulator.advance(11 * HOUR + 30 * 60)
    for _ in range(3):
        hist.collect(client, now=emulator.now())
        emulator.advance(600)


class Writes(pafs.FSSpecHandler):
    """A local filesystem that notes the thread each file of points is written on."""

    def __init__(self) -> None:
        super().__init__(fsspec.filesystem("file", auto_mkdir=True))
        self.threads: dict[str, str] = {}

    def open_output_stream(self, path, metadata):
        if "/throughput/" in path:
            self.threads[path.rpartition("/")[2]] = threading.current_thread().name
        return super().open_output_stream(path, metadata)


def test_the_midnight_round_leaves_the_closed_day_s_merge_to_a_thread(tmp_path, emulator, client):
    root = tmp_path / "h"
    writes = Writes()
    hist = History(str(root), filesystem=pafs.PyFileSystem(writes))
    to_midnight(hist, emulator, client)

    midnight = hist.collect(client, now=emulator.now())  # 00:00: the day's last ten minutes
    points = hist.throughput()  # while the merge may be at work: each point once
    settle_all()
    summary = hist.sums("2026-11-20", "2026-11-20")["2026-11-20"]

    assert midnight.new_points == 6 * 10
    assert len(points) == 6 * 150  # 21:30 .. 23:59
    assert int(summary.points.sum()) == len(points)  # the merged day's rollup
    (merged,) = closed_files(root)  # one file, written on the merge's thread
    assert writes.threads[merged.name] == "searchkit-compaction"
    assert [writes.threads[f.rpartition("/")[2]] for f in midnight.files] == ["MainThread"]
    pd.testing.assert_frame_equal(hist.throughput(), points, check_exact=True)
    bare = tmp_path / "bare"
    copy_store(root, bare, ignore=shutil.ignore_patterns("rollups"))
    pd.testing.assert_frame_equal(sk.usage_frame(hist), sk.usage_frame(History(bare)))


def test_a_file_the_merge_cannot_read_is_the_next_round_s_warning(tmp_path, emulator, client):
    root = tmp_path / "h"
    hist = History(root)
    to_midnight(hist, emulator, client)
    hist.collect(client, now=emulator.now())  # 00:00
    settle_all()
    foreign = root / "throughput" / CLOSED / "part-9-other.parquet"
    pq.write_table(pa.table({"index_id": ["x"], "reading": [1.0]}), foreign)
    layout = Layout(str(root), pafs.LocalFileSystem(), str(root))

    merging = merge_later(layout, "2026-11-21")  # as a round leaves it
    assert merging is not None
    assert settle(layout) is merging

    assert merging.notes() == [
        f"the closed days were not all merged ({foreign} was not written by searchkit's "
        "history (missing column(s) account, name, time, value, collected_at); move it out "
        "of the throughput folder to continue); nothing is lost, and the next collect tries "
        "again"
    ]
    assert len(closed_files(root)) == 2  # the merged day and the foreign file, untouched
    foreign.unlink()
    assert merge_later(layout, "2026-11-21") is None  # one file: nothing to merge


def test_the_next_round_waits_for_the_merge_even_when_its_list_fails(tmp_path, emulator, client):
    root = tmp_path / "h"
    hist = History(root)
    to_midnight(hist, emulator, client)
    hist.collect(client, now=emulator.now())  # 00:00
    before = hist.throughput()
    emulator.advance(600)
    with socket.socket() as probe:  # a port nothing listens on: the list is refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    refused = sk.Client(
        base_url=f"http://127.0.0.1:{port}", username="u", password="p", max_retries=0
    )

    with pytest.raises(TransportError):
        hist.collect(refused, now=emulator.now())

    assert "searchkit-compaction" not in [thread.name for thread in threading.enumerate()]
    assert len(closed_files(root)) == 1
    pd.testing.assert_frame_equal(hist.throughput(), before, check_exact=True)


def test_a_round_settling_while_the_merge_is_being_started_waits_for_it(
    tmp_path, emulator, client, monkeypatch
):
    """Two rounds on one store in one process (two threads, as two History objects on one
    bucket): the second's settle() can come just as the first starts its merge's thread. It
    waits for that merge; it never joins a thread not yet started (RuntimeError, 10:16 UTC
    2026-11-27 in tests/history/test_history_s3.py: the merge was registered before its
    thread was started)."""
    root = tmp_path / "h"
    to_midnight(History(root), emulator, client)  # three files in the day that closes
    layout = Layout(str(root), pafs.LocalFileSystem(), str(root))
    settled: list[object] = []

    def other_round() -> None:
        try:
            settled.append(settle(layout))
        except RuntimeError as error:
            settled.append(error)

    other = threading.Thread(target=other_round)

    class Starting(threading.Thread):
        def start(self) -> None:  # the other round's settle(), right now
            other.start()
            if not compaction._MERGING_LOCK.locked():  # nothing holds it back: it goes first
                other.join()
            super().start()

    monkeypatch.setattr(
        compaction,
        "threading",
        types.SimpleNamespace(
            Thread=Starting, Lock=threading.Lock, current_thread=threading.current_thread
        ),
    )
    merging = merge_later(layout, "2026-11-21")
    other.join()

    assert merging is not None and settled == [merging]
    assert not merging.thread.is_alive() and merging.error is None
    assert len(closed_files(root)) == 1  # merged
    assert settle(layout) is None


@pytest.fixture(scope="module")
def days_for_a_module(tmp_path_factory) -> pathlib.Path:
    """A store collected once a day for three days by a fixture wider than a test: its last
    collects close days, whose merges they leave on threads."""
    from searchkit.emulator import Emulator

    root = tmp_path_factory.mktemp("module-days") / "h"
    start = pd.Timestamp("2026-11-17 19:00", tz="UTC").to_pydatetime()
    with Emulator(demo=True, seed=2026, clock=start, window_minutes=1440) as emu:
        with emu.client() as client:
            for _ in range(3):
                emu.advance(86_400)
                History(str(root)).collect(client, now=emu.now())
    return root


def test_a_fixture_wider_than_a_test_hands_over_a_store_no_merge_is_changing(days_for_a_module):
    """tests/conftest.py's pytest_fixture_setup waits for those merges: a test copying the
    store (as test_seen_history's steps do) could otherwise list a file the merge then
    deletes (CI, 2026-11-27: copytree's "No such file or directory")."""
    assert compaction._MERGING == {}
    days = sorted(p.name for p in (days_for_a_module / "throughput").iterdir())
    assert days == ["day=2026-11-17", "day=2026-11-18", "day=2026-11-19", "day=2026-11-20"]
    files = [len(list((days_for_a_module / "throughput" / day).glob("*.parquet"))) for day in days]
    assert files[:3] == [1, 1, 1]  # each closed day merged into one file before the test began
