"""Daily rollups whatever the layout: an uncompacted closed day gets one from the collector,
and a rollup always gives the operations its day's points give."""

from __future__ import annotations

import os
import pathlib
import shutil
import warnings

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import searchkit as sk
from searchkit.history.compaction import settle_all
from searchkit.history.layout import THROUGHPUT_SCHEMA, HistoryWarning
from searchkit.history.usage_history import History
from tests.history.conftest import data_files as files
from tests.stores import copy_store

HOUR = 3600
CLOSED = "day=2026-11-20"
OPEN = "day=2026-11-21"  # the day the collects end on: its rollup is extended each round


def closed_rollups(root: pathlib.Path) -> list[pathlib.Path]:
    """The rollup files of the closed day."""
    return [path for path in files(root, "rollups") if path.parent.name == CLOSED]


def closed_rows(hist: History) -> pd.DataFrame:
    """The current rollup rows of the closed day."""
    rows = hist.rollups()
    return rows[rows["period"] == pd.Timestamp(CLOSED[4:], tz="UTC")]


def late_points(path: pathlib.Path, values: list[float], collected_at: int) -> None:
    """Write points of one index at 10:00 and 10:01 of the closed day, collected late."""
    minutes = [
        pd.Timestamp("2026-11-20 10:00", tz="UTC").value + i * 60_000_000_000 for i in (0, 1)
    ]
    table = pa.table(
        {
            "account": ["acct", "acct"],
            "index_id": ["id-late", "id-late"],
            "name": ["late", "late"],
            "time": minutes,
            "value": values,
            "collected_at": [collected_at, collected_at],
        },
        schema=THROUGHPUT_SCHEMA,
    )
    pq.write_table(table, path)


def without_rollups(tmp_path: pathlib.Path, root: pathlib.Path) -> History:
    """A copy of the store without its rollups: usage from the points alone."""
    copy = tmp_path / "points-only"
    shutil.rmtree(copy, ignore_errors=True)
    copy_store(root, copy, ignore=shutil.ignore_patterns("rollups"))
    return History(copy)


def test_collect_without_compaction_writes_the_closed_days_rollup(tmp_path, across_midnight):
    hist = across_midnight(compact=False)  # what 13 collects leave, every file as written

    days = [p.parent.name for p in files(tmp_path / "h")]
    assert days.count(CLOSED) == 7  # the closed day's files stay as collected
    assert [p.parent.name for p in files(tmp_path / "h", "rollups")] == [CLOSED, OPEN]
    rows = hist.rollups()
    assert len(rows) == 12  # the six demo indexes, on the closed day and on the open one
    sources = rows.groupby(rows["period"].dt.day)["source"].unique().to_dict()
    assert [len(texts) for texts in sources.values()] == [1, 1]
    assert sources[20][0].startswith("7 files sha256:")
    assert sources[21][0].startswith(f"{days.count(OPEN)} files sha256:")
    pd.testing.assert_frame_equal(
        sk.usage_frame(hist),
        sk.usage_frame(without_rollups(tmp_path, tmp_path / "h")),
        check_exact=True,
    )


def test_rollups_are_written_to_decode_fast_and_read_as_any_parquet(tmp_path, across_midnight):
    # A year's zones read 35M quarter sums from 365 files of 27 columns: every figure is
    # LZ4 (LZ4_RAW, which Spark and DuckDB read; zstd's decoder costs more to set up per
    # column chunk than a small column takes to decode), the texts zstd (a huge name
    # compresses), the sums without a dictionary page (they hardly repeat); the other
    # columns keep their dictionaries.
    hist = across_midnight(compact=False)
    (rollup,) = closed_rollups(tmp_path / "h")
    meta = pq.ParquetFile(rollup).metadata.row_group(0)
    chunks = {meta.column(i).path_in_schema: meta.column(i) for i in range(meta.num_columns)}
    lists = {path for path in chunks if ".list." in path}

    assert lists == {f"{kind}_{figure}.list.element" for kind in ("hourly", "quarter")
                     for figure in ("value_sum", "points")} | {
        "spacing_values.list.element", "spacing_counts.list.element",
        "gaps.list.element.stored_until", "gaps.list.element.listed_from",
        "crossing_limits.list.element", "crossing_times.list.element"}  # fmt: skip
    assert {path: chunks[path].compression for path in lists} == dict.fromkeys(lists, "LZ4")
    texts = {"account", "index_id", "name", "source"}
    assert {path: chunks[path].compression for path in texts} == dict.fromkeys(texts, "ZSTD")
    assert {chunks[path].compression for path in set(chunks) - lists - texts} == {"LZ4"}
    assert "RLE_DICTIONARY" in chunks["index_id"].encodings
    for path in ("quarter_value_sum.list.element", "hourly_value_sum.list.element"):
        assert "RLE_DICTIONARY" not in chunks[path].encodings, path
    for path in ("index_id", "name", "value_sum", "quarter_points.list.element"):
        assert "RLE_DICTIONARY" in chunks[path].encodings, path
    duckdb = pytest.importorskip("duckdb")
    query = "SELECT sum(points), sum(len(quarter_value_sum)) FROM read_parquet(?)"
    got = duckdb.connect().execute(query, [str(rollup)]).fetchall()
    assert got == [(closed_rows(hist)["points"].sum(), 6 * 96)]


def test_rollups_equal_the_points_with_late_points_and_duplicates(tmp_path, across_midnight):
    hist = across_midnight(compact=False)
    folder = tmp_path / "h/throughput" / CLOSED
    late_points(folder / "part-7-late.parquet", [2.0, 3.0], 7)
    late_points(folder / "part-9-later.parquet", [4.0, 6.0], 9)  # the same points, later
    shutil.copy(files(tmp_path / "h")[0], folder / "part-0-copy.parquet")  # a duplicate file

    assert closed_rows(hist).empty  # the day's files changed: its rollup is stale
    stale = sk.usage_frame(hist)
    assert hist.refresh_rollups(["2026-11-20"]) == 1
    fresh = sk.usage_frame(hist)

    assert len(closed_rows(hist)) == 7
    late = fresh[fresh["index_id"] == "id-late"]
    assert late[["operations", "points", "invalid"]].values.tolist() == [[600.0, 2, 0]]
    points_only = sk.usage_frame(without_rollups(tmp_path, tmp_path / "h"))
    pd.testing.assert_frame_equal(fresh, points_only, check_exact=True)
    pd.testing.assert_frame_equal(stale, points_only, check_exact=True)
    assert hist.refresh_rollups(["2026-11-20"]) == 0  # current already


def test_the_next_collect_recomputes_the_rollup_of_a_day_that_got_late_points(
    tmp_path, emulator, client, across_midnight
):
    hist = across_midnight(compact=False, emulator=emulator)
    before = set(closed_rows(hist)["index_id"])
    late_points(tmp_path / "h/throughput" / CLOSED / "part-7-late.parquet", [2.0, 3.0], 7)
    assert closed_rows(hist).empty

    hist.collect(client, now=emulator.now(), compact=False)

    assert set(closed_rows(hist)["index_id"]) == {*before, "id-late"}
    assert len(closed_rollups(tmp_path / "h")) == 1  # the stale rollup was replaced


def test_two_writers_rollups_of_the_same_files_count_once(tmp_path, across_midnight):
    hist = across_midnight(compact=False)
    expected = sk.usage_frame(hist)
    [rolled] = closed_rollups(tmp_path / "h")
    shutil.copy(rolled, rolled.with_name("part-1-racing-writer.parquet"))

    assert len(closed_rollups(tmp_path / "h")) == 2
    assert len(closed_rows(hist)) == 6
    pd.testing.assert_frame_equal(sk.usage_frame(hist), expected, check_exact=True)


def test_rollups_written_before_they_held_hours_are_rewritten_by_the_next_collect(
    tmp_path, emulator, client
):
    hist = History(tmp_path / "h")
    for _ in range(11):  # every 6 hours, 2026-11-20 12:00 .. 2026-11-23 00:00
        hist.collect(client, now=emulator.now())
        emulator.advance(6 * HOUR)
    settle_all()  # the merge of the day the last round closed
    days = ["2026-11-20", "2026-11-21", "2026-11-22"]
    assert sorted(hist.sums(days[0], days[-1], detail="hour")) == days
    for path in files(tmp_path / "h", "rollups"):  # as a searchkit without hours wrote them
        table = pq.read_table(path)
        old = table.drop_columns(["hourly_value_sum", "hourly_points", "last_point", "digest"])
        pq.write_table(old, path)
    assert hist.sums(days[0], days[-1], detail="hour") == {}
    old_files = {path.name for path in files(tmp_path / "h", "rollups")}

    # 06:00: yesterday's stale rollup is rewritten, and so the days before it (and today's,
    # rolled up again from its points: an old rollup cannot be extended)
    hist.collect(client, now=emulator.now())

    assert sorted(hist.sums(days[0], days[-1], detail="hour")) == days
    rewritten = {path.name for path in files(tmp_path / "h", "rollups")}
    assert len(rewritten) == 4 and not rewritten & old_files
    closed = {
        path.name
        for path in files(tmp_path / "h", "rollups")
        if path.parent.name < "day=2026-11-23"
    }
    emulator.advance(600)
    hist.collect(client, now=emulator.now())  # the closed days all current: none rewritten
    after = {path.name for path in files(tmp_path / "h", "rollups")}
    assert len(after) == 4 and after & rewritten == closed


def test_the_collector_refreshes_the_days_forecasts_read():
    from searchkit.analytics.forecast import _DAYS_READ
    from searchkit.history.rollups import RECENT_DAYS

    assert RECENT_DAYS == _DAYS_READ


def test_an_index_s_interval_comes_from_its_newest_day_with_two_points(tmp_path):
    """Every 5 minutes on the 20th (complete at that interval), one point on the 21st: the
    20th stays complete, from the rollups as from the points."""
    day = pd.Timestamp("2026-11-20", tz="UTC").value
    times = [day + m * 60_000_000_000 for m in range(0, 1440, 5)] + [day + 86_400 * 10**9]
    for stamp in {t // (86_400 * 10**9) for t in times}:
        rows = [t for t in times if t // (86_400 * 10**9) == stamp]
        folder = tmp_path / "h" / "throughput" / f"day={pd.Timestamp(rows[0], tz='UTC'):%Y-%m-%d}"
        folder.mkdir(parents=True)
        table = pa.table(
            {
                "account": ["acct"] * len(rows),
                "index_id": ["id-5"] * len(rows),
                "name": ["five"] * len(rows),
                "time": rows,
                "value": [2.0] * len(rows),
                "collected_at": [times[-1]] * len(rows),
            },
            schema=THROUGHPUT_SCHEMA,
        )
        pq.write_table(table, folder / "part-1.parquet")
    points_only = sk.usage_frame(History(tmp_path / "h"))
    hist = History(tmp_path / "h")
    assert hist.refresh_rollups(["2026-11-20", "2026-11-21"]) == 2

    rolled = sk.usage_frame(hist)

    pd.testing.assert_frame_equal(rolled, points_only, check_exact=True)
    assert rolled[["operations", "points", "complete"]].to_dict("list") == {
        "operations": [288 * 2.0 * 300, 2.0 * 60],  # a single point counts a minute
        "points": [288, 1],
        "complete": [True, False],
    }


def test_a_corrupt_rollup_never_blocks_the_points_and_is_rewritten(tmp_path, across_midnight):
    hist = across_midnight(compact=False)
    expected = sk.usage_frame(without_rollups(tmp_path, tmp_path / "h"))
    [rolled] = closed_rollups(tmp_path / "h")
    rolled.write_bytes(b"PAR1 not a parquet file")  # truncated, or written by something else

    with pytest.warns(HistoryWarning, match=r"rollups ignored .*2026-11-20 .*not a readable"):
        usage = sk.usage_frame(hist)
    pd.testing.assert_frame_equal(usage, expected, check_exact=True)
    with pytest.warns(HistoryWarning, match="rollups ignored"):
        assert len(sk.forecast_limits(hist)) == 6
    with pytest.warns(HistoryWarning, match="rollups ignored"):
        assert closed_rows(hist).empty

    with pytest.warns(HistoryWarning, match="rollups ignored"):
        assert hist.refresh_rollups(["2026-11-20"]) == 1  # rewritten
    [again] = closed_rollups(tmp_path / "h")
    assert again != rolled and len(pq.read_table(again)) == 6
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pd.testing.assert_frame_equal(sk.usage_frame(hist), expected, check_exact=True)
        assert hist.compact()["days_skipped"] == 0


def test_a_corrupt_rollup_of_a_compacted_day_is_rewritten_by_compaction(tmp_path, across_midnight):
    hist = across_midnight(compact=False)
    hist.compact()  # one file a day, and its rollup
    [rolled] = [p for p in files(tmp_path / "h", "rollups") if p.parent.name == CLOSED]
    rolled.write_bytes(b"garbage")

    with pytest.warns(HistoryWarning, match="rollups ignored"):
        counts = hist.compact()  # it read the rollup to see whether it is current

    assert counts["rollups_written"] == 1
    [again] = [p for p in files(tmp_path / "h", "rollups") if p.parent.name == CLOSED]
    assert again != rolled and len(pq.read_table(again)) == 6
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert hist.compact()["rollups_written"] == 0


def test_a_rollup_that_does_not_add_up_is_ignored_named_and_rewritten(tmp_path, across_midnight):
    hist = across_midnight(compact=False)
    points_only = without_rollups(tmp_path, tmp_path / "h")
    [rolled] = closed_rollups(tmp_path / "h")
    table = pq.read_table(rolled)
    at = table.schema.get_field_index("value_sum")
    tampered = pa.compute.multiply(table["value_sum"], 10.0)  # the file keeps its name
    pq.write_table(table.set_column(at, "value_sum", tampered), rolled)

    for tz in ("UTC", "America/New_York"):  # the day's totals, and its quarters
        with pytest.warns(HistoryWarning, match="rollups that do not add up ignored: 2026-11-20"):
            usage = sk.usage_frame(hist, tz=tz)
        pd.testing.assert_frame_equal(usage, sk.usage_frame(points_only, tz=tz), check_exact=True)

    assert hist.refresh_rollups(["2026-11-20"]) == 1  # stale: rewritten from the points
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pd.testing.assert_frame_equal(sk.usage_frame(hist), sk.usage_frame(points_only))


def test_a_rollup_changed_since_the_collector_found_it_current_is_rewritten_next_round(
    tmp_path, emulator, client, across_midnight
):
    hist = across_midnight(emulator=emulator)
    hist.collect(client, now=emulator.now())  # finds the closed day's rollup current
    settle_all()
    [rolled] = closed_rollups(tmp_path / "h")
    table = pq.read_table(rolled)
    at = table.schema.get_field_index("value_sum")
    stamp = rolled.stat().st_mtime + 5  # another process rewrites it under its name
    pq.write_table(table.set_column(at, "value_sum", pa.compute.multiply(table[at], 10.0)), rolled)
    os.utime(rolled, (stamp, stamp))

    emulator.advance(600)
    hist.collect(client, now=emulator.now())  # must look at it again: it is not current

    [again] = closed_rollups(tmp_path / "h")
    assert again != rolled
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = closed_rows(hist)
        assert len(rows) == 6
        pd.testing.assert_frame_equal(
            sk.usage_frame(hist), sk.usage_frame(without_rollups(tmp_path, tmp_path / "h"))
        )
