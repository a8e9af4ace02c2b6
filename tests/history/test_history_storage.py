"""The history's storage at scale and under hostile layouts: rollups, compaction by collect,
stray folders, links out of the store, concurrent compactors, one tie-break, bounded collects,
and engines that read the files without flags (Spark: test_history_spark.py)."""

from __future__ import annotations

import datetime as dt
import os
import pathlib
import shutil

import pandas as pd
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

import searchkit as sk
from searchkit import HistoryWarning
from searchkit.history.layout import THROUGHPUT_SCHEMA
from searchkit.history.usage_history import History
from tests.history.conftest import data_files as files
from tests.history.conftest import stored_files
from tests.local_fs import LocalHandler
from tests.stores import copy_store

HOUR = 3600

README_SQL = """
    WITH points AS (
        SELECT * FROM read_parquet(?, hive_partitioning = true)
        QUALIFY row_number() OVER (
            PARTITION BY account, index_id, time ORDER BY collected_at DESC, value DESC) = 1
    )
    SELECT index_id, time, value FROM points ORDER BY index_id, time
"""


def write_points(path: pathlib.Path, value: float, collected_at: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.table(
        {
            "account": ["acct"],
            "index_id": ["id-1"],
            "name": ["docs"],
            "time": [pd.Timestamp("2026-11-20 10:00", tz="UTC").value],
            "value": [value],
            "collected_at": [collected_at],
        },
        schema=THROUGHPUT_SCHEMA,
    )
    pq.write_table(table, path)


def test_collect_compacts_the_day_that_closed_and_leaves_today_alone(tmp_path, across_midnight):
    across_midnight()  # what 13 collects leave, each compacting what it can

    days = [p.parent.name for p in files(tmp_path / "h")]
    assert days.count("day=2026-11-20") == 1  # 8 collects of the closed day, merged
    assert days.count("day=2026-11-21") == 6  # today stays as collected
    # The closed day's rollup, and today's (kept current by each collect)
    assert [p.parent.name for p in files(tmp_path / "h", "rollups")] == [
        "day=2026-11-20",
        "day=2026-11-21",
    ]
    assert [p.parent.name for p in files(tmp_path / "h", "limits")].count("day=2026-11-20") == 1


def test_usage_from_rollups_equals_usage_from_the_points(tmp_path, across_midnight):
    compacted, raw = across_midnight(tmp_path / "a"), History(tmp_path / "b")
    for day in (tmp_path / "a/throughput").iterdir():
        copy_store(day, tmp_path / "b/throughput" / day.name)
    copy_store(tmp_path / "a/limits", tmp_path / "b/limits")

    assert len(compacted.rollups()) == 12  # six indexes on the closed day and on today
    assert raw.rollups().empty
    for unit in ("per_second", "per_minute", "per_point"):
        pd.testing.assert_frame_equal(
            sk.usage_frame(compacted, value_unit=unit), sk.usage_frame(raw, value_unit=unit)
        )


def test_late_points_make_a_days_rollup_stale_until_the_next_compaction(tmp_path, across_midnight):
    hist = across_midnight()
    before = sk.usage_frame(hist)
    late = tmp_path / "h/throughput/day=2026-11-20/part-9-late.parquet"
    write_points(late, 1e9, 9)  # an index no rollup knows, on the closed day

    assert "id-1" not in set(hist.rollups()["index_id"])
    assert hist.rollups()["period"].dt.day.unique().tolist() == [21]  # the 20th: its points
    assert "id-1" in set(sk.usage_frame(hist)["index_id"])
    assert hist.compact()["rollups_written"] == 2  # the stale day, and today (merged)
    assert "id-1" in set(hist.rollups()["index_id"])
    assert len(sk.usage_frame(hist)) == len(before) + 1


def test_a_stray_folder_is_skipped_and_named_in_a_warning(tmp_path, emulator, client):
    hist = History(tmp_path / "h")
    hist.collect(client)
    expected = sk.usage_frame(hist)
    real = files(tmp_path / "h")[0]
    for folder in ("day=notadate", "day=", "misc"):
        (tmp_path / "h/throughput" / folder).mkdir()
        shutil.copy(real, tmp_path / "h/throughput" / folder / real.name)
    (tmp_path / "h/limits/day=zzz").mkdir()
    renamed = pq.read_table(files(tmp_path / "h", "limits")[0])
    renamed = renamed.set_column(2, "name", pa.array(["renamed"] * renamed.num_rows))
    pq.write_table(renamed, tmp_path / "h/limits/day=zzz/part-9-x.parquet")

    stray = r"throughput/day=, throughput/day=notadate, throughput/misc"
    with pytest.warns(HistoryWarning, match=stray):
        usage = sk.usage_frame(History(tmp_path / "h"))
    with pytest.warns(HistoryWarning, match=r"limits/day=zzz"):
        info = History(tmp_path / "h").info()

    pd.testing.assert_frame_equal(usage, expected)
    assert info.points == 720
    # Read: the layout's files only. Counted on disk: every file, the strays as "other".
    assert {kind: stored.files for kind, stored in info.by_kind.items()} == {
        "throughput": 1,
        "limits": 1,
        "rollups": 1,
        "other": 5,
    }
    assert info.other_files == (
        "_newest.parquet",
        "limits/day=zzz/part-9-x.parquet",
        f"throughput/day=/{real.name}",
        f"throughput/day=notadate/{real.name}",
        f"throughput/misc/{real.name}",
    )
    every = stored_files(tmp_path / "h")
    assert (info.files, info.bytes) == (8, sum(p.stat().st_size for p in every))


@pytest.mark.skipif(os.name != "posix", reason="symlinks")
def test_compact_never_follows_a_link_out_of_the_store(tmp_path):
    outside = tmp_path / "outside"
    write_points(outside / "part-1-a.parquet", 1.0, 1)
    write_points(outside / "part-2-b.parquet", 2.0, 2)
    before = {p.name: p.read_bytes() for p in outside.iterdir()}
    (tmp_path / "h/throughput").mkdir(parents=True)
    (tmp_path / "h/throughput/day=2026-11-20").symlink_to(outside)

    with pytest.warns(HistoryWarning, match=r"throughput/day=2026-11-20"):
        result = History(tmp_path / "h").compact()

    assert result["partitions"] == 0
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == before


@pytest.mark.skipif(os.name != "posix", reason="symlinks")
def test_info_counts_no_file_behind_a_link_and_survives_a_link_loop(tmp_path):
    write_points(tmp_path / "h/throughput/day=2026-11-20/part-1-a.parquet", 1.0, 1)
    write_points(tmp_path / "outside/part-2-b.parquet", 2.0, 2)
    (tmp_path / "h/throughput/day=2026-11-21").symlink_to(tmp_path / "outside")
    (tmp_path / "h/loop").symlink_to(tmp_path / "h")  # pyarrow's own listing loops here
    (tmp_path / "h/linked.parquet").symlink_to(tmp_path / "outside/part-2-b.parquet")

    with pytest.warns(HistoryWarning, match=r"throughput/day=2026-11-21"):
        info = History(tmp_path / "h").info()

    inside = (tmp_path / "h/throughput/day=2026-11-20/part-1-a.parquet").stat().st_size
    assert (info.files, info.bytes, info.other_files) == (1, inside, ())
    assert info.by_kind["throughput"] == (1, inside)


def test_a_second_compactor_skips_a_day_another_holds(tmp_path):
    day = tmp_path / "h/throughput/day=2026-11-20"
    write_points(day / "part-1-a.parquet", 1.0, 1)
    write_points(day / "part-2-b.parquet", 2.0, 2)
    (day / "_compacting.lock").touch()  # another compactor at work (an older searchkit)

    with pytest.warns(HistoryWarning, match="its holder is not recorded"):
        result = History(tmp_path / "h").compact()

    assert (result["partitions"], result["files_removed"], result["days_skipped"]) == (0, 0, 1)
    assert sorted(p.name for p in day.glob("*.parquet")) == ["part-1-a.parquet", "part-2-b.parquet"]


def test_a_dead_compactors_lock_is_taken_over(tmp_path):
    day = tmp_path / "h/throughput/day=2026-11-20"
    write_points(day / "part-1-a.parquet", 1.0, 1)
    write_points(day / "part-2-b.parquet", 2.0, 2)
    lock = day / "_compacting.lock"
    lock.touch()
    two_hours_ago = lock.stat().st_mtime - 2 * HOUR
    os.utime(lock, (two_hours_ago, two_hours_ago))

    result = History(tmp_path / "h").compact()

    assert (result["partitions"], result["files_removed"], result["days_skipped"]) == (1, 2, 0)
    assert not lock.exists()


def test_equal_collected_at_keeps_the_larger_value_in_history_compaction_and_sql(tmp_path):
    duckdb = pytest.importorskip("duckdb")
    day = tmp_path / "h/throughput/day=2026-11-20"
    # The file listed last holds the smaller value: the rule must not depend on names.
    write_points(day / "part-5-aaaa.parquet", 5.0, 5)
    write_points(day / "part-5-zzzz.parquet", 1.0, 5)
    hist = History(tmp_path / "h")

    read = hist.throughput()["value"].tolist()
    sql = duckdb.execute(README_SQL, [f"{tmp_path}/h/throughput/*/*.parquet"]).fetchall()
    hist.compact()

    assert read == [5.0]
    assert [value for _, _, value in sql] == [5.0]
    assert hist.throughput()["value"].tolist() == [5.0]


def test_a_collect_reads_what_the_service_returned_not_the_whole_history(
    tmp_path, emulator, client
):
    hist = History(tmp_path / "h")
    hist.collect(client)
    raw = client.list_indexes().to_dicts()
    old = tmp_path / "h/throughput/day=1999-01-01/part-1-x.parquet"
    old.parent.mkdir(parents=True)
    old.write_bytes(b"PAR1 not a parquet file")  # any read of the old days fails
    emulator.advance(600)
    raw = client.list_indexes().to_dicts()
    vector = raw[0]["throughput_vector"]
    vector.insert(0, {**vector[0], "t": "1970-01-01 00:00:00 +0000 UTC"})

    summary = hist.collect(client, indexes=raw)

    assert summary.new_points == 6 * 10
    assert summary.gaps == ()


def test_timestamps_are_stored_as_microseconds_every_engine_reads(tmp_path, emulator, client):
    hist = History(tmp_path / "h")
    hist.collect(client)
    schema = pq.read_schema(files(tmp_path / "h")[0])
    assert schema.field("time").type == pa.timestamp("us", tz="UTC")
    assert schema.field("collected_at").type == pa.timestamp("us", tz="UTC")


def test_dask_reads_the_store_and_agrees_on_the_total(tmp_path, across_midnight):
    dd = pytest.importorskip("dask.dataframe")
    hist = across_midnight()

    points = dd.read_parquet(str(tmp_path / "h/throughput")).compute()

    assert points["time"].dtype == "datetime64[us, UTC]"
    assert len(points.drop_duplicates(["account", "index_id", "time"])) == len(hist.throughput())
    total = sk.usage_frame(hist, value_unit="per_point")["operations"].sum()
    deduped = points.sort_values("collected_at").drop_duplicates(
        ["account", "index_id", "time"], keep="last"
    )
    assert round(deduped["value"].sum(), 6) == round(total, 6)


def test_a_minute_listed_twice_counts_once_from_a_list_and_from_the_history(
    tmp_path, emulator, client
):
    raw = client.list_indexes().to_dicts()
    vector = raw[0]["throughput_vector"]
    vector.insert(1, {**vector[1], "y": vector[1]["y"] + 100.0})  # the same minute, revised
    hist = History(tmp_path / "h")
    hist.collect(client, indexes=raw)

    from_list = sk.usage_frame(raw)
    from_history = sk.usage_frame(hist)

    key = ["index_id", "period"]
    left = from_list.set_index(key)[["operations", "points"]]
    right = from_history.set_index(key)[["operations", "points"]]
    pd.testing.assert_frame_equal(left.sort_index(), right.sort_index())
    assert from_list["points"].sum() == 6 * 120
    assert (from_list["operations"] > 0).all()


def test_a_collect_that_fails_midway_says_what_it_stored(tmp_path, emulator, client):
    emulator.advance(12 * HOUR + 30 * 60)  # 00:30: the window spans two UTC days
    (tmp_path / "h/throughput").mkdir(parents=True)
    (tmp_path / "h/throughput/day=2026-11-21").write_text("a file where a folder goes")
    hist = History(tmp_path / "h")

    with pytest.raises(sk.HistoryError) as info:
        hist.collect(client, now=emulator.now())

    stored = files(tmp_path / "h")
    assert [p.parent.name for p in stored] == ["day=2026-11-20"]
    assert len(hist.throughput()) == 6 * 90
    assert str(info.value).endswith(
        f"; this collect had stored {6 * 90} new points in 1 file(s) ({stored[0].name}) "
        "before that; the next collect stores the rest"
    )


class _Vanishing(LocalHandler):
    """A real local filesystem whose listing of one day always shows a file that is gone
    by the time it is opened: a compaction that never stops replacing files."""

    def __init__(self, day: str) -> None:
        super().__init__()
        self._day = day

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        infos = self._fs.get_file_info(selector)
        folder = f"day={self._day}"
        found = [i.path for i in infos if i.path.endswith(folder)] if selector.recursive else []
        if selector.base_dir.endswith(folder) or found:
            base = selector.base_dir if selector.base_dir.endswith(folder) else found[0]
            ghost = f"{base}/part-0-{len(infos)}-gone.parquet"
            infos.append(pafs.FileInfo(ghost, pafs.FileType.File, size=100))
        return infos


def test_reads_whose_retries_run_out_end_in_a_history_error(tmp_path):
    day = tmp_path / "h/throughput/day=2026-11-20"
    write_points(day / "part-1-a.parquet", 1.0, 1)
    fs = pafs.PyFileSystem(_Vanishing("2026-11-20"))
    hist = History(str(tmp_path / "h"), filesystem=fs)

    with pytest.raises(sk.HistoryError) as info:
        hist.throughput()

    assert str(info.value).startswith(
        f"the throughput history at {str(tmp_path / 'h')!r} kept changing while it was read ("
    )
    assert str(info.value).endswith("); nothing is lost: try again")


def test_points_read_in_file_order_or_shuffled_give_the_same_tidy_frame():
    # Files hold points sorted and unique, which the reader takes without sorting; any
    # other order (and a point written twice) goes through the latest-write-wins sort.
    from searchkit.history import dedupe

    base = pd.Timestamp("2026-11-20", tz="UTC").value
    rows = [
        ("acct", f"id-{i}", f"n{i}", base + m * 60_000_000_000, float(i * 100 + m), base)
        for i in range(3)
        for m in range(5)
    ]
    names = THROUGHPUT_SCHEMA.names
    table = pa.Table.from_pylist(
        [dict(zip(names, row, strict=True)) for row in rows], THROUGHPUT_SCHEMA
    )
    shuffled = table.take(pa.array([7, 3, 14, 0, 9, 1, 12, 5, 2, 11, 4, 13, 6, 10, 8]))

    def plain(frame: pd.DataFrame) -> pd.DataFrame:  # index codes follow first appearance
        frame = frame.astype({"index_id": str, "name": str, "account": str})
        return frame.sort_values(["index_id", "time"]).reset_index(drop=True)

    sorted_frame = dedupe.tidy(table, dt.timezone.utc)
    assert sorted_frame["index_id"].astype(str).tolist() == [row[1] for row in rows]
    pd.testing.assert_frame_equal(
        plain(sorted_frame), plain(dedupe.tidy(shuffled, dt.timezone.utc))
    )
    later = dict(zip(names, rows[4], strict=True))
    later.update(value=-1.0, collected_at=base + 1)  # a later write of a point wins
    twice = pa.concat_tables([table, pa.Table.from_pylist([later], THROUGHPUT_SCHEMA)])
    frame = dedupe.tidy(twice, dt.timezone.utc)
    assert len(frame) == 15
    assert frame["value"].tolist()[4] == -1.0


# -- a compactor killed while holding a day's lock (issue 29, item 17) ----------------------

HOLD = """
import sys, time
from searchkit.history.usage_history import History
hist = History(sys.argv[1])
with hist._layout.lock("throughput", "2026-11-20") as held:
    print("held" if held else "not held", flush=True)
    time.sleep(600)
"""


def hold_the_lock(store: pathlib.Path):
    """A real process holding the day's lock, as a compactor does while it merges."""
    import subprocess
    import sys

    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(store)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    assert process.stdout.readline() == "held\n"
    return process


def test_a_lock_whose_holder_was_killed_is_taken_over_at_once(tmp_path):
    import signal

    day = tmp_path / "h/throughput/day=2026-11-20"
    write_points(day / "part-1-a.parquet", 1.0, 1)
    write_points(day / "part-2-b.parquet", 2.0, 2)
    holder = hold_the_lock(tmp_path / "h")
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=60)
    assert (day / "_compacting.lock").exists()  # left behind, fresh

    result = History(tmp_path / "h").compact()

    assert (result["partitions"], result["files_removed"], result["days_skipped"]) == (1, 2, 0)
    assert not (day / "_compacting.lock").exists()
    assert History(tmp_path / "h").throughput()["value"].tolist() == [2.0]


def test_a_killed_holder_does_not_stop_refresh_rollups(tmp_path):
    import signal

    day = tmp_path / "h/throughput/day=2026-11-20"
    write_points(day / "part-1-a.parquet", 1.0, 1)
    holder = hold_the_lock(tmp_path / "h")
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=60)

    assert History(tmp_path / "h").refresh_rollups(["2026-11-20"]) == 1


def test_a_day_skipped_for_a_live_holder_says_who_holds_it(tmp_path):
    import socket

    day = tmp_path / "h/throughput/day=2026-11-20"
    write_points(day / "part-1-a.parquet", 1.0, 1)
    write_points(day / "part-2-b.parquet", 2.0, 2)
    holder = hold_the_lock(tmp_path / "h")
    try:
        with pytest.warns(HistoryWarning) as caught:
            result = History(tmp_path / "h").compact()
        with pytest.warns(HistoryWarning) as again:
            written = History(tmp_path / "h").refresh_rollups(["2026-11-20"])
    finally:
        holder.kill()
        holder.wait(timeout=60)

    assert result["days_skipped"] == 1 and written == 0
    (message,) = {str(w.message) for w in [*caught, *again]}
    assert message.startswith(
        f"throughput day 2026-11-20 skipped: another compactor holds its lock (pid "
        f"{holder.pid} on this host, since "
    )
    assert message.endswith("); it is taken over once that process is gone")
    assert socket.gethostname()  # the lock names the host: the pid is checked only there


def test_a_lock_from_another_host_is_kept_for_an_hour_and_says_so(tmp_path):
    import json

    day = tmp_path / "h/throughput/day=2026-11-20"
    write_points(day / "part-1-a.parquet", 1.0, 1)
    write_points(day / "part-2-b.parquet", 2.0, 2)
    holder = {"pid": 1, "host": "elsewhere.example", "since": "2026-11-20 10:00:00 UTC"}
    (day / "_compacting.lock").write_text(json.dumps(holder))

    with pytest.warns(HistoryWarning) as caught:
        result = History(tmp_path / "h").compact()

    assert result["days_skipped"] == 1
    assert [str(w.message) for w in caught] == [
        "throughput day 2026-11-20 skipped: another compactor holds its lock (pid 1 on host "
        "'elsewhere.example', since 2026-11-20 10:00:00 UTC); a lock whose holder cannot be "
        "checked from here is taken over once it is 1 h old"
    ]
