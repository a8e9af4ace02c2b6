"""History on real files: collect, read, dedupe, gaps, compact, and bad input."""

from __future__ import annotations

import pathlib
import threading

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import searchkit as sk
from searchkit.errors import HistoryError
from searchkit.history.snapshots import limits_table
from searchkit.history.usage_history import THROUGHPUT_SCHEMA, History
from tests.history.conftest import data_files

HOUR = 3600


def test_collect_stores_the_listed_points_with_the_frame_columns(tmp_path, emulator, client):
    hist = History(tmp_path / "h")
    summary = hist.collect(client)
    indexes = client.list_indexes()
    expected = sk.throughput_frame(indexes)
    # Instants are kept to the microsecond (Parquet TIMESTAMP(MICROS), which Spark reads).
    expected["time"] = expected["time"].dt.floor("us")

    stored = hist.throughput()

    assert summary.indexes == 6
    assert summary.new_points == 6 * 120
    assert list(stored.columns) == ["index_id", "name", "time", "value", "account"]
    assert stored.dtypes.astype(str).tolist() == [
        "category",
        "category",
        "datetime64[ns, UTC]",
        "float64",
        "category",
    ]
    key = ["index_id", "time"]
    left = stored.astype({"index_id": str, "name": str}).sort_values(key).reset_index(drop=True)
    right = expected.astype({"index_id": str, "name": str}).sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(left[["index_id", "name", "time", "value"]], right)
    assert set(stored["account"].astype(str)) == {indexes[0].customer_id}
    assert stored.attrs == {}
    assert sk.throughput_intervals(stored)[indexes[0].id] == pd.Timedelta(minutes=1)


def test_files_are_hive_partitioned_by_utc_day(tmp_path, emulator, client):
    hist = History(tmp_path / "h")
    hist.collect(client, now=emulator.now())
    days = sorted(p.parent.name for p in data_files(tmp_path / "h"))
    assert days == ["day=2026-11-20"]
    assert [p.parent.name for p in data_files(tmp_path / "h", "limits")] == ["day=2026-11-20"]


def test_second_collect_stores_nothing_new(tmp_path, emulator, client):
    hist = History(tmp_path / "h")
    hist.collect(client)
    before = data_files(tmp_path / "h")

    again = hist.collect(client)

    assert again.new_points == 0
    assert data_files(tmp_path / "h") == before
    assert len(hist.throughput()) == 6 * 120


def test_an_advanced_clock_adds_only_the_new_minutes(tmp_path, emulator, client):
    hist = History(tmp_path / "h")
    hist.collect(client)
    emulator.advance(30 * 60)

    summary = hist.collect(client)

    assert summary.new_points == 6 * 30
    assert summary.gaps == ()
    frame = hist.throughput(names="docs-search")
    assert len(frame) == 150
    assert frame["time"].diff().dropna().dt.round("min").eq(pd.Timedelta(minutes=1)).all()


def test_collecting_too_rarely_reports_the_gap_and_never_fills_it(tmp_path, emulator, client):
    hist = History(tmp_path / "h")
    hist.collect(client)
    emulator.advance(5 * HOUR)

    summary = hist.collect(client)

    assert len(summary.gaps) == 6
    gap = next(g for g in summary.gaps if g.name == "docs-search")
    assert gap.stored_until.floor("min") == pd.Timestamp("2026-11-20 11:59", tz="UTC")
    assert gap.listed_from.floor("min") == pd.Timestamp("2026-11-20 15:00", tz="UTC")
    assert "gap in 'docs-search'" in repr(summary)
    frame = hist.throughput(names="docs-search")
    assert len(frame) == 240  # two windows, nothing invented in between
    info = hist.info()
    assert len(info.gaps) == 6


def test_throughput_filters_by_time_and_name_and_converts_the_zone(tmp_path, emulator, client):
    hist = History(tmp_path / "h")
    hist.collect(client)
    frame = hist.throughput(
        start="2026-11-20 11:00",
        end=pd.Timestamp("2026-11-20 11:30", tz="UTC"),
        names=["docs-search", "code-snippets"],
        tz="Asia/Kathmandu",
    )
    assert sorted(frame["name"].cat.categories) == ["code-snippets", "docs-search"]
    assert len(frame) == 2 * 30
    assert str(frame["time"].dt.tz) == "Asia/Kathmandu"
    assert frame["time"].min().floor("min") == pd.Timestamp("2026-11-20 16:45", tz="Asia/Kathmandu")


def test_reading_one_day_opens_only_that_partition(tmp_path, emulator, client):
    hist = History(tmp_path / "h")
    hist.collect(client)
    emulator.advance(24 * HOUR)
    hist.collect(client)
    # A corrupt file in the other day's folder is never opened by a one-day read.
    (tmp_path / "h/throughput/day=2026-11-21/part-0-broken.parquet").write_bytes(b"nope")
    frame = hist.throughput(start="2026-11-20", end="2026-11-21")
    assert frame["time"].max() < pd.Timestamp("2026-11-21", tz="UTC")
    assert len(frame) == 6 * 120


def test_two_concurrent_collectors_lose_and_duplicate_nothing(tmp_path, emulator, client):
    location = tmp_path / "h"
    barrier = threading.Barrier(2)
    results = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            with emulator.client() as own:
                listed = own.list_indexes()
                barrier.wait()
                results.append(History(location).collect(own, indexes=listed))
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    frame = History(location).throughput()
    assert errors == []
    assert len(results) == 2
    assert len(frame) == 6 * 120
    assert not frame.duplicated(["account", "index_id", "time"]).any()


def write_points(folder: pathlib.Path, rows: list[tuple[str, float, int]]) -> None:
    """Write (time, value, collected_at ns) rows of one index as a file of the layout."""
    folder.mkdir(parents=True, exist_ok=True)
    table = pa.table(
        {
            "account": ["acct"] * len(rows),
            "index_id": ["id-1"] * len(rows),
            "name": ["docs"] * len(rows),
            "time": [pd.Timestamp(t, tz="UTC").value for t, _, _ in rows],
            "value": [v for _, v, _ in rows],
            "collected_at": [c for _, _, c in rows],
        },
        schema=THROUGHPUT_SCHEMA,
    )
    pq.write_table(table, folder / f"part-{rows[0][2]}-x.parquet")


def test_the_last_written_value_wins(tmp_path):
    day = tmp_path / "h/throughput/day=2026-11-20"
    write_points(day, [("2026-11-20 10:00", 1.0, 2), ("2026-11-20 10:01", 5.0, 2)])
    write_points(day, [("2026-11-20 10:00", 9.0, 1)])  # older write of the same minute
    write_points(day, [("2026-11-20 10:01", 7.0, 3)])  # newer write

    frame = History(tmp_path / "h").throughput()

    assert frame["value"].tolist() == [1.0, 7.0]


def test_compact_merges_a_day_and_drops_duplicates_keeping_the_latest(tmp_path):
    day = tmp_path / "h/throughput/day=2026-11-20"
    write_points(day, [("2026-11-20 10:00", 1.0, 2), ("2026-11-20 10:01", 5.0, 2)])
    write_points(day, [("2026-11-20 10:00", 9.0, 1)])
    write_points(day, [("2026-11-20 10:01", 7.0, 3)])
    hist = History(tmp_path / "h")

    result = hist.compact()

    assert result == {
        "partitions": 1,
        "files_removed": 3,
        "duplicates_dropped": 2,
        "snapshots_thinned": 0,
        "rollups_written": 1,
        "days_skipped": 0,
        "stale_temporaries_removed": 0,
    }
    assert len(list(day.glob("*.parquet"))) == 1
    assert hist.throughput()["value"].tolist() == [1.0, 7.0]
    assert hist.compact()["partitions"] == 0


def test_compact_after_collects_keeps_what_readers_see(tmp_path, emulator, client):
    hist = History(tmp_path / "h")
    for _ in range(3):
        hist.collect(client)
        emulator.advance(40 * 60)
    before = hist.throughput()
    hist.compact()
    after = hist.throughput()
    assert len(data_files(tmp_path / "h")) == 1
    pd.testing.assert_frame_equal(
        before.astype({"index_id": str, "name": str, "account": str}),
        after.astype({"index_id": str, "name": str, "account": str}),
    )


def test_limits_as_of_a_time_show_a_plan_change(tmp_path, emulator, client):
    hist = History(tmp_path / "h")
    raw = client.list_indexes().to_dicts()
    hist.collect(client, indexes=raw, now="2026-11-20 12:00")
    raw[0]["max_daily_queries"] = 50_000
    hist.collect(client, indexes=raw, now="2026-11-21 12:00")

    first_id = raw[0]["id"]
    assert hist.limits(at="2026-11-20 18:00").loc[first_id, "max_daily_queries"] == float("inf")
    assert hist.limits().loc[first_id, "max_daily_queries"] == 50_000
    latest = hist.limits()
    assert list(latest.columns[: len(sk.limits_frame(raw).columns)]) == list(
        sk.limits_frame(raw).columns
    )
    assert latest["collected_at"].iloc[0] == pd.Timestamp("2026-11-21 12:00", tz="UTC")


def test_no_token_reaches_the_files_or_the_summary(tmp_path, emulator, client):
    hist = History(tmp_path / "h")
    summary = hist.collect(client)
    tokens = [i.token for i in client.list_indexes()]
    tokens = [getattr(t, "get_secret_value", lambda t=t: t)() for t in tokens]
    blobs = b"".join(p.read_bytes() for p in (tmp_path / "h").rglob("*.parquet"))
    for token in tokens:
        assert token.encode() not in blobs
        assert token not in repr(summary) + summary._repr_html_()


def test_summary_displays_counts_in_text_and_html(tmp_path, emulator, client):
    summary = History(tmp_path / "h").collect(client)
    assert "6 indexes, 720 new points, 0 gaps" in repr(summary)
    html = summary._repr_html_()
    assert "<strong>720</strong> new points" in html
    assert "<td>docs-search</td><td style='text-align:right'>120</td>" in html


# --- bad input ---------------------------------------------------------------------------


def test_an_unwritable_location_is_a_clear_error(tmp_path, client):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(HistoryError, match="cannot write to the history"):
        History(blocker / "h").collect(client)


def test_a_foreign_file_is_named_and_nothing_stored_is_lost(tmp_path, emulator, client):
    hist = History(tmp_path / "h")
    hist.collect(client)
    foreign = tmp_path / "h/throughput/day=2026-11-20/part-9-other.parquet"
    pq.write_table(pa.table({"index_id": ["x"], "reading": [1.0]}), foreign)

    with pytest.raises(HistoryError, match=r"part-9-other\.parquet was not written by searchkit"):
        hist.throughput()
    # A collect reads only the record of each index's newest point, not the stored files.
    assert hist.collect(client).new_points == 0

    foreign.unlink()
    assert len(hist.throughput()) == 720


def test_a_truncated_file_is_named_and_nothing_stored_is_lost(tmp_path, emulator, client):
    hist = History(tmp_path / "h")
    hist.collect(client)
    emulator.advance(600)
    hist.collect(client)
    victim = data_files(tmp_path / "h")[-1]
    saved = victim.read_bytes()
    victim.write_bytes(saved[: len(saved) // 2])

    with pytest.raises(HistoryError, match="truncated or corrupt"):
        History(tmp_path / "h").throughput()

    victim.write_bytes(saved)
    assert len(History(tmp_path / "h").throughput()) == 780


def test_a_clock_gone_backwards_is_reported_and_keeps_stored_points(tmp_path, emulator, client):
    hist = History(tmp_path / "h")
    earlier = client.list_indexes()
    emulator.advance(HOUR)
    hist.collect(client)

    summary = hist.collect(client, indexes=earlier)

    assert summary.new_points == 6 * 60  # the older hour was not stored yet
    assert any("clock went backwards for 'docs-search'" in w for w in summary.warnings)
    assert len(hist.throughput(names="docs-search")) == 180


def test_a_disappeared_or_renamed_index_is_reported(tmp_path, emulator, client):
    hist = History(tmp_path / "h")
    raw = client.list_indexes().to_dicts()
    hist.collect(client, indexes=raw)
    gone = raw.pop()
    raw[0]["name"] = "docs-search-v2"

    summary = hist.collect(client, indexes=raw)

    assert f"index {gone['name']!r} ({gone['id']}) is no longer listed" in summary.warnings[-1]
    assert any("renamed from 'docs-search' to 'docs-search-v2'" in w for w in summary.warnings)
    frame = hist.throughput()
    assert "docs-search-v2" in set(frame["name"])
    assert "docs-search" not in set(frame["name"])
    assert gone["name"] in set(frame["name"])  # its history is kept


def test_a_name_or_id_no_stored_index_had_is_an_unknown_index_error(tmp_path, emulator, client):
    hist = History(tmp_path / "h")
    raw = client.list_indexes().to_dicts()
    hist.collect(client, indexes=raw)
    raw[0]["name"] = "docs-search-v2"
    hist.collect(client, indexes=raw)
    after = pd.Timestamp.now(tz="UTC") + pd.Timedelta(days=1)  # no point stored after it
    # a name an index has now or had before, with or without points in the span: no error
    assert len(hist.throughput(names="docs-search")) == 120
    assert set(hist.throughput(names="docs-search")["name"]) == {"docs-search-v2"}
    assert hist.throughput(start=after, names=["docs-search", "docs-search-v2"]).empty
    assert hist.throughput(start=after, index_ids=raw[0]["id"]).empty

    names = sorted(["docs-search-v2", *(r["name"] for r in raw[1:])])
    with pytest.raises(sk.UnknownIndexError) as caught:
        hist.throughput(names=["docs-search", "nope"])
    assert str(caught.value) == (
        f"no index named 'nope' in this history; indexes: {', '.join(names)}"
    )
    assert isinstance(caught.value, KeyError) and isinstance(caught.value, sk.ValidationError)
    with pytest.raises(sk.UnknownIndexError, match=r"^no index with id 'zzz' in this history;"):
        hist.throughput(start=after, index_ids=["zzz"])


def test_a_temporary_file_of_a_writer_at_work_is_never_read(tmp_path, emulator, client):
    hist = History(tmp_path / "h")
    hist.collect(client)
    folder = data_files(tmp_path / "h")[0].parent
    (folder / ".part-1-abc.parquet.tmp").write_bytes(b"half written")
    assert len(hist.throughput()) == 720


def test_duckdb_reads_the_files_with_the_readme_query(tmp_path, emulator, client):
    duckdb = pytest.importorskip("duckdb")
    hist = History(tmp_path / "h")
    hist.collect(client)
    emulator.advance(600)
    hist.collect(client)
    # Written twice on purpose: the query keeps the latest write of each point.
    hist.collect(client, indexes=client.list_indexes())
    glob = f"{tmp_path}/h/throughput/*/*.parquet"
    rows = duckdb.execute(
        """
        WITH points AS (
            SELECT * FROM read_parquet(?, hive_partitioning = true)
            QUALIFY row_number() OVER (
                PARTITION BY account, index_id, time ORDER BY collected_at DESC) = 1
        )
        SELECT name, count(*) AS points, round(sum(value), 2) AS total
        FROM points GROUP BY ALL ORDER BY name
        """,
        [glob],
    ).fetchall()
    frame = hist.throughput()
    expected = frame.astype({"name": str}).groupby("name")["value"].agg(["count", "sum"])
    assert [(n, c, t) for n, c, t in rows] == [
        (name, int(r["count"]), round(float(r["sum"]), 2)) for name, r in expected.iterrows()
    ]


def test_compact_thins_unchanged_limits_snapshots_and_keeps_plan_changes(
    tmp_path, emulator, client
):
    hist = History(tmp_path / "h")
    raw = client.list_indexes().to_dicts()
    folder = tmp_path / "h/limits/day=2026-11-20"
    folder.mkdir(parents=True)
    for hour in range(5):  # a snapshot per collect, as older collectors stored them
        if hour == 3:
            raw[0]["max_daily_queries"] = 50_000
        stamp = pd.Timestamp(f"2026-11-20 1{hour}:00", tz="UTC").value
        table = limits_table(sk.limits_frame(raw), ["acct"] * len(raw), stamp)
        pq.write_table(table, folder / f"part-{stamp}-x.parquet")
    before = {at: hist.limits(at=at) for at in ("2026-11-20 12:30", "2026-11-20 13:30")}

    result = hist.compact()

    # Per index 5 snapshots; the third of an unchanged run of five goes, and for the
    # changed index (runs 10-12 and 13-14) only 11:00 goes: 5 x 3 + 1.
    assert result["snapshots_thinned"] == 16
    first = raw[0]["id"]
    assert hist.limits(at="2026-11-20 12:30").loc[first, "max_daily_queries"] == float("inf")
    assert hist.limits(at="2026-11-20 13:30").loc[first, "max_daily_queries"] == 50_000
    for at, frame in before.items():
        after = hist.limits(at=at)
        pd.testing.assert_frame_equal(
            after.drop(columns="collected_at"), frame.drop(columns="collected_at")
        )


def test_readers_see_every_point_while_compact_replaces_files(tmp_path, emulator, client):
    """Each read gives every point, or says the files kept changing (a HistoryError, the
    contract when every retry met a change): never fewer points. Its interleavings are
    forced one by one, with no threads, in test_listing_races.py."""
    hist = History(tmp_path / "h")
    for _ in range(6):
        hist.collect(client)
        emulator.advance(20 * 60)
    expected = len(hist.throughput())
    counts: list[int] = []
    errors: list[BaseException] = []
    done = threading.Event()

    def read() -> None:
        reader = History(tmp_path / "h")
        while not done.is_set() or not counts:
            try:
                counts.append(len(reader.throughput()))
            except HistoryError as exc:
                if "kept changing while it was" not in str(exc):
                    errors.append(exc)
                    return
            except BaseException as exc:  # collected for the assertion below
                errors.append(exc)
                return

    thread = threading.Thread(target=read)
    thread.start()
    try:
        for _ in range(3):
            hist.collect(client)
            emulator.advance(60)
            hist.compact()
    finally:
        done.set()
        thread.join(60)
    assert errors == []
    assert counts and min(counts) >= expected
    assert len(data_files(tmp_path / "h")) == 1


def test_info_finds_a_gap_that_spans_midnight(tmp_path, emulator, client):
    hist = History(tmp_path / "h")
    emulator.advance(10 * HOUR)  # window 20:00-21:59
    hist.collect(client)
    emulator.advance(6 * HOUR)  # window 02:00-03:59 the next day
    hist.collect(client)

    info = hist.info()

    assert (info.indexes, info.points) == (6, 6 * 240)
    assert len(info.gaps) == 6
    gap = next(g for g in info.gaps if g.name == "docs-search")
    assert gap.stored_until.floor("min") == pd.Timestamp("2026-11-20 21:59", tz="UTC")
    assert gap.listed_from.floor("min") == pd.Timestamp("2026-11-21 02:00", tz="UTC")
    assert "(4 h 1 min)" in str(gap)


def test_compact_removes_a_dead_writers_temporary_file_but_not_a_fresh_one(
    tmp_path, emulator, client
):
    import os
    import time

    hist = History(tmp_path / "h")
    hist.collect(client)
    folder = data_files(tmp_path / "h")[0].parent
    dead, fresh = folder / ".part-1-dead.parquet.tmp", folder / ".part-2-busy.parquet.tmp"
    dead.write_bytes(b"half")
    fresh.write_bytes(b"half")
    two_hours_ago = time.time() - 7200
    os.utime(dead, (two_hours_ago, two_hours_ago))

    assert hist.compact()["stale_temporaries_removed"] == 1
    assert not dead.exists() and fresh.exists()
    assert len(hist.throughput()) == 720
