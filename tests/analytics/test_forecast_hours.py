"""Closed days are binned from their rollups' hours, and the bins are those of the points
to the last bit: on a store as collectors leave it (test_forecast_bins' messy store), on a
store whose rollups an older searchkit wrote (no hours), and on a day whose files hold a
point dated on another day (no hours either)."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import searchkit as sk
from searchkit.analytics import bins as pb
from searchkit.history.layout import ROLLUP_SCHEMA, WRITE_OPTIONS, HistoryWarning
from tests.analytics.test_forecast_bins import (
    DAY,
    FIRST,
    NOW,
    assert_same_bins,
    oracle_bins,
    write,
)
from tests.analytics.test_forecast_bins import store as messy_store
from tests.stores import copy_store

store = messy_store  # the messy store's fixture, shared

STORED = ["2026-11-16", "2026-11-17", "2026-11-18", "2026-11-19", "2026-11-21"]


class Reads:
    """A History that records which spans were read from the points."""

    def __init__(self, hist: sk.History) -> None:
        self.hist, self.spans = hist, []

    def __getattr__(self, name):
        return getattr(self.hist, name)

    def points(self, *, start, end):
        self.spans.append((f"{start:%Y-%m-%d}", None if end is None else f"{end:%m-%d}"))
        return self.hist.points(start=start, end=end)


@pytest.fixture(scope="module")
def rolled(store, tmp_path_factory) -> sk.History:
    root = tmp_path_factory.mktemp("rolled") / "h"
    copy_store(store.hist.location, root)
    hist = sk.History(str(root))
    assert hist.refresh_rollups() == 5  # every stored day (all before today)
    return hist


def test_rollups_give_the_hours_when_asked(rolled):
    assert rolled.rollups().columns.tolist() == [
        "account",
        "index_id",
        "name",
        "period",
        "operations",
        "value_sum",
        "points",
        "invalid",
        "interval_seconds",
        "source",
        "last_point",
        "first_point",
    ]  # the hours' 48 and the quarters' 288 values a row only on request
    hours = rolled.rollups(columns=["index_id", "hourly_points"])
    assert hours.columns.tolist() == ["index_id", "hourly_points"] and len(hours) == 16


def test_rollups_hold_each_day_s_hours(rolled):
    rows = rolled.rollups(columns=ROLLUP_SCHEMA.names)
    rows = rows.sort_values(["period", "index_id"], ignore_index=True)
    day = rows[rows["period"] == pd.Timestamp("2026-11-17", tz="UTC")].set_index("index_id")
    beta = day.loc["id-a2"]  # every 5 minutes, with no point from 10:00 to 13:00
    assert beta["hourly_points"].tolist() == [12] * 10 + [0] * 3 + [12] * 11
    assert beta["last_point"] == pd.Timestamp("2026-11-17 23:55", tz="UTC")
    assert beta["hourly_value_sum"].sum() == pytest.approx(beta["value_sum"], rel=1e-12)
    bad = rows[rows["period"] == pd.Timestamp("2026-11-19", tz="UTC")].set_index("index_id")
    # 23:01 NaN, 23:02 -5, 23:03 inf, 23:04 7.5: two invalid, left out as in `points`
    assert bad.loc["id-a1", "hourly_points"][23] == 2
    assert (bad.loc["id-a1", "invalid"], bad.loc["id-a1", "points"]) == (2, 1380 + 2)
    for _, row in rows.iterrows():
        assert row["hourly_points"].sum() == row["points"]


@pytest.mark.parametrize(
    ("first_day", "days", "cut", "beyond", "read"),
    [
        (FIRST, 4, None, False, [("2026-11-19", "11-20")]),  # the last day: its points
        (FIRST - 3 * DAY, 7, NOW.value, False, [("2026-11-19", "11-20")]),  # today
        (FIRST - 38 * DAY, 42, NOW.value, True, [("2026-11-19", "11-20"), ("2026-11-20", None)]),
        # The cut inside the second day: that day and the next are read.
        (
            FIRST + DAY,
            2,
            (FIRST + DAY + pd.Timedelta(hours=9)).value,
            True,
            [("2026-11-17", "11-18"), ("2026-11-18", "11-19"), ("2026-11-19", None)],
        ),
    ],
)
@pytest.mark.parametrize("value_unit", ["per_second", "per_minute", "per_point"])
def test_bins_from_rollups_are_the_points_bins_to_the_last_bit(
    store,
    rolled,
    first_day,
    days,
    cut,
    beyond,
    read,
    value_unit,
):
    reads = Reads(rolled)
    got = pb.bins_from_history(reads, value_unit, first_day, days, cut, beyond)
    assert reads.spans == read
    assert_same_bins(got, oracle_bins(store.hist, value_unit, first_day, days, cut, beyond))


@pytest.mark.parametrize("now", ["2026-11-19 17:30", "2026-11-19 03:10", "2026-11-18 23:59"])
def test_forecast_limits_is_the_same_frame_with_rollups(store, rolled, now):
    new, old = sk.forecast_limits(rolled, now=now), sk.forecast_limits(store.hist, now=now)
    assert new["projected"].notna().sum() == 4
    pd.testing.assert_frame_equal(new, old, check_exact=True)


def test_an_older_writer_s_rollups_are_read_from_the_points_until_refreshed(
    store,
    rolled,
    tmp_path,
):
    root = tmp_path / "h"
    copy_store(rolled.location, root)
    for path in (root / "rollups").rglob("*.parquet"):  # as a searchkit without hours wrote
        table = pq.read_table(path)
        old = table.drop_columns(["hourly_value_sum", "hourly_points", "last_point", "digest"])
        pq.write_table(old, path, **WRITE_OPTIONS)
    hist = sk.History(str(root))
    assert hist.sums("2026-11-16", "2026-11-21", detail="hour") == {}
    assert hist.rollups()["last_point"].isna().all()  # read as nulls
    reads = Reads(hist)
    got = pb.bins_from_history(reads, "per_second", FIRST, 4)
    assert [start for start, _ in reads.spans] == STORED[:4]
    assert_same_bins(got, oracle_bins(store.hist, "per_second", FIRST, 4, None, False))
    assert hist.refresh_rollups() == 5  # stale: rewritten with their hours
    assert sorted(hist.sums("2026-11-16", "2026-11-21", detail="hour")) == STORED


def test_a_point_filed_in_another_day_s_folder_counts_nowhere(rolled, tmp_path):
    """A foreign writer's point dated 11-18, filed in 11-17's folder: the rollup of 11-17
    leaves it out as the points do, so the forecast bins 11-17 from its hours, and the
    bins equal the points' (which leave it out too)."""
    root = tmp_path / "h"
    copy_store(rolled.location, root)
    stray = (FIRST + pd.Timedelta(days=2, hours=1)).value  # 2026-11-18 01:00
    write(root, "2026-11-17", [("acct-1", "id-a1", "alpha", stray, 4.0, stray)], "9-stray")
    hist = sk.History(str(root))
    with pytest.warns(HistoryWarning, match=r"1 point in throughput/day=2026-11-17/\S+ dated"):
        assert hist.refresh_rollups() == 1  # 11-17: its files changed
    rows = hist.rollups(columns=ROLLUP_SCHEMA.names).set_index(["period", "index_id"])
    row = rows.loc[(pd.Timestamp("2026-11-17", tz="UTC"), "id-a1")]
    before = rolled.rollups(columns=ROLLUP_SCHEMA.names).set_index(["period", "index_id"])
    same = ["value_sum", "points", "last_point", "first_point", "operations"]
    assert row[same].tolist() == before.loc[row.name, same].tolist()
    assert row["hourly_points"].tolist() == before.loc[row.name, "hourly_points"].tolist()
    assert sorted(hist.sums("2026-11-16", "2026-11-21", detail="hour")) == STORED
    reads = Reads(hist)
    got = pb.bins_from_history(reads, "per_second", FIRST, 4)
    assert [start for start, _ in reads.spans] == ["2026-11-19"]
    assert_same_bins(got, oracle_bins(hist, "per_second", FIRST, 4, None, False))


README_HOURS_SQL = """
    SELECT index_id, period, generate_subscripts(hourly_value_sum, 1) - 1 AS hour,
           unnest(hourly_value_sum) AS value_sum, unnest(hourly_points) AS points
    FROM read_parquet(?, hive_partitioning = true)
    ORDER BY period, index_id, hour
"""


def test_the_readme_s_hours_sql_gives_the_rollups_hours(rolled):
    duckdb = pytest.importorskip("duckdb")
    glob = f"{rolled.location}/rollups/*/*.parquet"
    rows = duckdb.execute(README_HOURS_SQL, [glob]).fetchall()
    assert len(rows) == (3 + 3 * 4 + 1) * 24  # 11-16: 3 indexes, 11-17..19: 4, 11-21: 1
    hours = rolled.sums("2026-11-16", "2026-11-21", detail="hour")
    for index_id, period, hour, value_sum, points in rows:
        day = hours[f"{period:%Y-%m-%d}"]
        at = day.ids.index(index_id)
        assert (value_sum, points) == (day.value_sums[at, hour], day.points[at, hour])


def test_a_rollup_whose_hours_are_not_24_valid_figures_is_read_from_its_points(
    store, rolled, tmp_path
):
    root = tmp_path / "h"
    copy_store(rolled.location, root)
    (path,) = (root / "rollups" / "day=2026-11-17").glob("*.parquet")
    table = pq.read_table(path)
    short = pa.array([row[:23] for row in table["hourly_points"].to_pylist()], pa.list_(pa.int64()))
    at = table.schema.get_field_index("hourly_points")
    pq.write_table(table.set_column(at, "hourly_points", short), path, **WRITE_OPTIONS)
    (path,) = (root / "rollups" / "day=2026-11-18").glob("*.parquet")  # an hour with no sum
    table = pq.read_table(path)
    holed = pa.array(
        [[None, *row[1:]] for row in table["hourly_value_sum"].to_pylist()],
        pa.list_(pa.float64()),
    )
    at = table.schema.get_field_index("hourly_value_sum")
    pq.write_table(table.set_column(at, "hourly_value_sum", holed), path, **WRITE_OPTIONS)
    (path,) = (root / "rollups" / "day=2026-11-16").glob("*.parquet")  # a negative sum
    table = pq.read_table(path)
    negative = pa.array(
        [[-1.0, *row[1:]] for row in table["hourly_value_sum"].to_pylist()],
        pa.list_(pa.float64()),
    )
    pq.write_table(table.set_column(at, "hourly_value_sum", negative), path, **WRITE_OPTIONS)
    hist = sk.History(str(root))

    assert sorted(hist.sums("2026-11-16", "2026-11-21", detail="hour")) == [
        "2026-11-19",
        "2026-11-21",
    ]
    reads = Reads(hist)
    got = pb.bins_from_history(reads, "per_second", FIRST, 4)
    assert [start for start, _ in reads.spans] == [
        "2026-11-16",
        "2026-11-17",
        "2026-11-18",
        "2026-11-19",
    ]
    assert_same_bins(got, oracle_bins(store.hist, "per_second", FIRST, 4, None, False))


def test_forecast_limits_reads_each_day_s_points_once(rolled):
    class Counting(sk.History):
        spans: list = []

        def points(self, *, start=None, end=None):
            self.spans.append((start, end))
            return super().points(start=start, end=end)

    hist = Counting(rolled.location)
    sk.forecast_limits(hist)  # as of the newest point's minute: 2026-11-21 03:01
    day = pd.Timestamp("2026-11-21", tz="UTC")
    # Today's hours came from its rollup (each collect keeps it current), as the closed
    # days' did: no point of them was read; the next day was looked at for points after
    # the instant.
    assert hist.spans == [(day + DAY, None)]
