"""A rollup is checked, not trusted (issue 29 items 6 and 12): rows removed or added by hand,
day figures changed together, a throughput file rewritten in place under its name, a period
that is not a midnight, a point filed in another day's folder. Each time the figures are the
points', the rollup is named in a warning (or simply stale) and the next refresh rewrites it.
"""

from __future__ import annotations

import os
import pathlib
import warnings

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import searchkit as sk
from searchkit.history.layout import THROUGHPUT_SCHEMA, HistoryWarning
from searchkit.history.usage_history import History
from tests.history.conftest import data_files as files
from tests.history.test_history_rollups import CLOSED, without_rollups

DAY = "2026-11-20"
WARNED = r"rollups that do not add up ignored: 2026-11-20"


def rewrite(path, table: pa.Table) -> None:
    """Write ``table`` over ``path``: the file keeps its name (an edit by another tool)."""
    pq.write_table(table, path)


def closed_rollup(tmp_path) -> pathlib.Path:
    """The closed day's rollup file (the open day has one too: the collector keeps it)."""
    [rolled] = [p for p in files(tmp_path / "h", "rollups") if p.parent.name == CLOSED]
    return rolled


def usage_equal(hist: History, points_only: History, **options) -> None:
    pd.testing.assert_frame_equal(
        sk.usage_frame(hist, **options), sk.usage_frame(points_only, **options), check_exact=True
    )


@pytest.fixture
def store(tmp_path, across_midnight):
    """A store with one closed day's rollup (6 indexes, 7 files) and its points-only copy."""
    hist = across_midnight(compact=False)
    return hist, without_rollups(tmp_path, tmp_path / "h")


def quiet_afterwards(hist: History, points_only: History) -> None:
    """The day's rollup is rewritten, and then answers without a warning."""
    assert hist.refresh_rollups([DAY]) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        usage_equal(hist, points_only)
        assert sorted(hist.sums(DAY, DAY)) == [DAY]


@pytest.mark.parametrize("tz", ["UTC", "America/New_York"])
def test_a_removed_row_is_found_and_the_index_keeps_its_day(store, tmp_path, tz):
    hist, points_only = store
    rolled = closed_rollup(tmp_path)
    table = pq.read_table(rolled)
    rewrite(rolled, table.slice(1))  # one index's row gone

    with pytest.warns(HistoryWarning, match=WARNED):
        usage_equal(hist, points_only, tz=tz)
    with pytest.warns(HistoryWarning, match=WARNED):
        assert hist.sums(DAY, DAY, detail="quarter") == {}
    quiet_afterwards(hist, points_only)


def test_a_phantom_row_adds_no_index(store, tmp_path):
    hist, points_only = store
    rolled = closed_rollup(tmp_path)
    table = pq.read_table(rolled)
    phantom = table.slice(0, 1).to_pylist()[0] | {"index_id": "phantom", "name": "phantom"}
    rewrite(rolled, pa.concat_tables([table, pa.Table.from_pylist([phantom], table.schema)]))

    for detail in ("day", "hour", "quarter"):
        with pytest.warns(HistoryWarning, match=WARNED):
            assert hist.sums(DAY, DAY, detail=detail) == {}
    with pytest.warns(HistoryWarning, match=WARNED):
        usage = sk.usage_frame(hist)
    assert "phantom" not in set(usage["index_id"])
    with pytest.warns(HistoryWarning, match=WARNED):
        usage_equal(hist, points_only)
    quiet_afterwards(hist, points_only)


def test_day_figures_changed_together_are_found_on_a_whole_day_read(store, tmp_path):
    """value_sum and operations x10 agree with each other, not with the quarters: a whole
    UTC day read (which does not read the quarters) refuses them as a quarter read does."""
    hist, points_only = store
    rolled = closed_rollup(tmp_path)
    table = pq.read_table(rolled)
    value_sum = pc.multiply(table["value_sum"], 10.0)
    operations = pc.multiply(value_sum, table["interval_seconds"])  # as the check computes
    for column, values in (("value_sum", value_sum), ("operations", operations)):
        table = table.set_column(table.schema.get_field_index(column), column, values)
    rewrite(rolled, table)

    for detail in ("day", "quarter"):
        with pytest.warns(HistoryWarning, match=WARNED):
            assert hist.sums(DAY, DAY, detail=detail) == {}
    with pytest.warns(HistoryWarning, match=WARNED):
        usage_equal(hist, points_only)
    quiet_afterwards(hist, points_only)


def hours_changed_by_hand(rolled):
    """Rewrite the rollup file ``rolled`` with every hourly sum ten times what it was (the
    day's total, quarters and seal left as they were)."""
    table = pq.read_table(rolled)
    at = table.schema.get_field_index("hourly_value_sum")
    hours = pa.array([[v * 10 for v in row] for row in table["hourly_value_sum"].to_pylist()])
    rewrite(rolled, table.set_column(at, "hourly_value_sum", hours))


def test_hours_that_do_not_give_the_day_are_not_used_for_a_zone_whole_hours_from_utc(
    store, tmp_path
):
    # New York's days are summed by hour (issue 30): hours changed by hand are found, and
    # the day is read from its points.
    hist, points_only = store
    hours_changed_by_hand(closed_rollup(tmp_path))

    for tz, freq in (("America/New_York", "D"), ("UTC", "h")):
        with pytest.warns(HistoryWarning, match=WARNED):
            usage_equal(hist, points_only, tz=tz, freq=freq)
    quiet_afterwards(hist, points_only)


def test_hours_that_do_not_give_the_day_are_not_used_by_the_forecast(store, tmp_path):
    hist, points_only = store
    hours_changed_by_hand(closed_rollup(tmp_path))

    with pytest.warns(HistoryWarning, match=WARNED):
        assert hist.sums(DAY, DAY, detail="hour") == {}
    with pytest.warns(HistoryWarning, match=WARNED):
        forecast = sk.forecast_limits(hist, now="2026-11-21 01:00")
    pd.testing.assert_frame_equal(
        forecast, sk.forecast_limits(points_only, now="2026-11-21 01:00"), check_exact=True
    )


def test_a_throughput_file_rewritten_in_place_makes_its_rollup_stale(tmp_path, across_midnight):
    """A deletion with DuckDB's COPY ... TO the file's own path: same name, other points."""
    duckdb = pytest.importorskip("duckdb")
    hist = across_midnight(compact=False)
    hist.compact()  # one file a day, and its rollup names it
    [day_file] = [p for p in files(tmp_path / "h") if p.parent.name == CLOSED]
    before = os.stat(day_file)
    gone = pq.read_table(day_file, columns=["index_id"])["index_id"][0].as_py()
    with duckdb.connect() as db:
        # COPY takes its target as a literal; both texts are this test's own.
        db.execute(
            f"COPY (SELECT * FROM read_parquet('{day_file}') WHERE index_id <> '{gone}') "  # noqa: S608
            f"TO '{day_file}' (FORMAT parquet)"
        )
    assert os.stat(day_file).st_size != before.st_size
    points_only = without_rollups(tmp_path, tmp_path / "h")

    assert hist.sums(DAY, DAY) == {}  # stale: its file changed (no warning: late points do so)
    assert DAY not in set(hist.rollups()["period"].dt.strftime("%Y-%m-%d"))
    usage_equal(hist, points_only)
    assert hist.compact()["rollups_written"] == 1  # compaction sees it too, and rewrites it
    assert sorted(hist.sums(DAY, DAY)) == [DAY]
    usage_equal(hist, points_only)
    rows = hist.rollups()
    ids = set(rows.loc[rows["period"] == pd.Timestamp(DAY, tz="UTC"), "index_id"])
    assert len(ids) == 5 and gone not in ids


def test_a_rollup_whose_period_is_not_a_midnight_is_refused(store, tmp_path):
    hist, points_only = store
    rolled = closed_rollup(tmp_path)
    table = pq.read_table(rolled)
    at = table.schema.get_field_index("period")
    shifted = pc.add(table["period"], pa.scalar(pd.Timedelta(hours=5)))
    rewrite(rolled, table.set_column(at, "period", shifted))

    with pytest.warns(HistoryWarning, match=r"2026-11-20 .*period.* not .*midnight"):
        rows = hist.rollups()
    assert rows["period"].min() == pd.Timestamp("2026-11-21", tz="UTC")  # today's only
    with pytest.warns(HistoryWarning, match="midnight"):
        usage_equal(hist, points_only, freq="D")
    quiet_afterwards(hist, points_only)


def test_a_point_filed_in_another_day_s_folder_counts_nowhere(store, tmp_path):
    """One rule for throughput(), the points, usage and the rollups: a point counts only in
    its own UTC day's folder; one a foreign writer filed elsewhere is left out, and said."""
    hist, points_only = store
    first = pq.read_table(files(tmp_path / "h")[0]).slice(0, 1).to_pylist()[0]
    stray_point(tmp_path / "h/throughput" / CLOSED, first, "2026-11-21 00:30:30")
    stray = r"1 point in throughput/day=2026-11-20/part-1-foreign.parquet dated on another day"

    with pytest.warns(HistoryWarning, match=stray):
        shown = hist.throughput()
    pd.testing.assert_frame_equal(shown, points_only.throughput(), check_exact=True)
    with pytest.warns(HistoryWarning, match=stray):  # a new History says it again
        later = History(tmp_path / "h").throughput(start="2026-11-20 23:00")
    pd.testing.assert_frame_equal(
        later, points_only.throughput(start="2026-11-20 23:00"), check_exact=True
    )
    assert hist.refresh_rollups([DAY]) == 1  # the day's files changed
    assert sorted(hist.sums(DAY, DAY, detail="quarter")) == [DAY]  # its rollup answers
    usage_equal(hist, points_only)
    usage_equal(hist, points_only, tz="Asia/Kolkata")
    figures = ["index_id", "operations", "value_sum", "points", "first_point", "last_point"]
    assert points_only.refresh_rollups([DAY]) == 1

    def closed(store: History) -> pd.DataFrame:
        rows = store.rollups([*figures, "period"])
        return rows[rows["period"] == pd.Timestamp(DAY, tz="UTC")].reset_index(drop=True)

    pd.testing.assert_frame_equal(closed(hist), closed(points_only))

    hist.compact()  # the point is kept as it was filed: nothing a reader leaves out is lost
    [merged] = [p for p in files(tmp_path / "h") if p.parent.name == CLOSED]
    times = pq.read_table(merged)["time"].to_pylist()
    assert pd.Timestamp("2026-11-21 00:30:30", tz="UTC") in times
    with pytest.warns(HistoryWarning, match=f"1 point in throughput/{CLOSED}/{merged.name} "):
        shown = hist.throughput()
    pd.testing.assert_frame_equal(shown, points_only.throughput(), check_exact=True)
    usage_equal(hist, points_only)  # a day's points read by time: the stray is not there


def stray_point(folder, like: dict, at: str) -> None:
    """A foreign writer's file: one point of ``like``'s index dated ``at``, in ``folder``."""
    stamp = pd.Timestamp(at, tz="UTC")
    row = like | {"time": stamp, "value": 1000.0, "collected_at": stamp}
    pq.write_table(
        pa.Table.from_pylist([row], THROUGHPUT_SCHEMA), folder / "part-1-foreign.parquet"
    )


def test_the_open_day_s_rollup_is_checked_before_a_collect_extends_it(
    tmp_path, emulator, client, across_midnight
):
    """Each collect round extends today's rollup with the points it wrote: a rollup whose
    row was removed by hand is not extended (that index would restart from the new
    points): the day is rolled up from its points, named by its files as they are."""
    hist = across_midnight(compact=False, emulator=emulator)  # collected up to 2026-11-21 01:00
    today = "2026-11-21"
    [rolled] = [p for p in files(tmp_path / "h", "rollups") if p.parent.name == f"day={today}"]
    table = pq.read_table(rolled)
    rewrite(rolled, table.slice(1))

    emulator.advance(600)
    with pytest.warns(HistoryWarning, match=f"rollups that do not add up ignored: {today}"):
        assert hist.sums(today, today) == {}
    hist.collect(client, now=emulator.now(), compact=False)

    points_only = without_rollups(tmp_path, tmp_path / "h")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sums = hist.sums(today, today)
        usage_equal(hist, points_only)
    assert len(sums[today].ids) == 6
    assert hist.refresh_rollups([today]) == 0  # current: named by the day's files as they are


def test_rollups_asked_for_their_quarters_check_them(store, tmp_path):
    """hist.rollups() gives the quarters only when they give the day: a list changed alone
    leaves the day figures right (shown), its quarters not (the day left out, named)."""
    hist, _ = store
    rolled = closed_rollup(tmp_path)
    table = pq.read_table(rolled)
    quarters = table["quarter_value_sum"].to_pylist()
    quarters[0] = [v * 10 for v in quarters[0]]
    at = table.schema.get_field_index("quarter_value_sum")
    rewrite(rolled, table.set_column(at, "quarter_value_sum", pa.array(quarters)))
    day = pd.Timestamp(DAY, tz="UTC")

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert (hist.rollups()["period"] == day).sum() == 6
    with pytest.warns(HistoryWarning, match=f"{WARNED} \\(bins not the day\\)"):
        rows = hist.rollups(["index_id", "period", "quarter_value_sum"])
    assert not (rows["period"] == day).any()
    with pytest.warns(HistoryWarning, match=WARNED):
        assert hist.sums(DAY, DAY, detail="quarter") == {}


def test_a_rollup_filed_in_another_day_s_folder_is_left_out_and_named(store, tmp_path):
    hist, points_only = store
    rolled = closed_rollup(tmp_path)
    (tmp_path / "h/rollups/day=2026-11-19").mkdir()
    copy = tmp_path / "h/rollups/day=2026-11-19" / rolled.name  # period 2026-11-20
    copy.write_bytes(rolled.read_bytes())

    with pytest.warns(HistoryWarning, match=f"6 rollup rows in rollups/day=2026-11-19/{copy.name}"):
        rows = hist.rollups()
    assert rows.groupby("period").size().tolist() == [6, 6]  # 11-20 and today, once each
    assert hist.sums("2026-11-19", "2026-11-19") == {}
    usage_equal(hist, points_only)


def test_the_seal_covers_list_and_struct_columns_in_order(monkeypatch):
    """A column of lists of structs (as the day's gaps) can be sealed: its rows' order does
    not matter, each item and its place in its list does."""
    from searchkit.history import checks
    from searchkit.history.rollups import rollup

    stamp = pd.Timestamp(f"{DAY} 10:00", tz="UTC")
    rows = [
        {"account": "a", "index_id": i, "name": i, "time": stamp + pd.Timedelta(minutes=m)}
        for i in ("x", "y")
        for m in (0, 1, 30)
    ]
    points = pa.Table.from_pylist(
        [r | {"value": 1.0, "collected_at": stamp} for r in rows], THROUGHPUT_SCHEMA
    )
    base = rollup(points, DAY, "src")
    kind = pa.list_(pa.struct([("stored_until", pa.timestamp("us", "UTC")), ("note", pa.string())]))
    gap = [{"stored_until": stamp, "note": "a"}, {"stored_until": stamp, "note": "b"}]
    monkeypatch.setattr(checks, "SEALED", [*checks.SEALED, "extra"])

    def digest(gaps, order=(0, 1)) -> int:
        table = base.append_column("extra", pa.array(gaps, kind)).take(list(order))
        return int(checks.day_digests(table)[0])

    sealed = digest([gap, []])
    assert digest([gap, []], order=(1, 0)) == sealed
    assert len({sealed, digest([gap[::-1], []]), digest([gap[:1], []]), digest([[], gap])}) == 4
    assert digest([gap, None]) != sealed  # no list is not an empty one


def test_a_gap_changed_by_hand_is_found_and_info_counts_the_points(store, tmp_path):
    hist, points_only = store
    rolled = closed_rollup(tmp_path)
    table = pq.read_table(rolled)
    gaps = table["gaps"].to_pylist()
    start = pd.Timestamp(f"{DAY} 03:00", tz="UTC")
    gaps[0] = [*gaps[0], {"stored_until": start, "listed_from": start + pd.Timedelta(hours=2)}]
    at = table.schema.get_field_index("gaps")
    rewrite(rolled, table.set_column(at, "gaps", pa.array(gaps, table.schema.field("gaps").type)))

    with pytest.warns(HistoryWarning, match=f"{WARNED} \\(rows removed, added or changed\\)"):
        info = hist.info()
    assert info.gaps == points_only.info().gaps
    with pytest.warns(HistoryWarning, match=WARNED):
        assert hist.sums(DAY, DAY) == {}
    quiet_afterwards(hist, points_only)


def test_gaps_not_known_add_nothing_to_the_seal(store, tmp_path, monkeypatch):
    """Gaps and crossings not known (null: the day's points answer for them) seal as if not
    sealed, so a rollup written before they were sealed keeps its seal."""
    from searchkit.history import checks

    table = pq.read_table(closed_rollup(tmp_path))
    unknown = table
    for name in checks.UNKNOWN_WHEN_NULL:
        at = unknown.schema.get_field_index(name)
        nulls = pa.nulls(table.num_rows, unknown.schema.field(at).type)
        unknown = unknown.set_column(at, name, nulls)
    sealed = checks.day_digests(unknown)
    assert (sealed != checks.day_digests(table)).all()
    before = [c for c in checks.SEALED if c not in checks.UNKNOWN_WHEN_NULL]
    assert checks.SEALED[: len(before)] == before  # the columns sealed first, in order
    monkeypatch.setattr(checks, "SEALED", before)
    assert (checks.day_digests(unknown) == sealed).all()
