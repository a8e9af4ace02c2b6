"""usage_frame in every zone, from rollups or from points: the same frame, to the last bit.

A store of days around every kind of clock change (New York's spring and autumn, London's
and Lisbon's, Lord Howe's half hour, Chatham's +12:45/+13:45) and plain summer and winter
days; its closed days have rollups, the newest is open. ``usage_frame`` on it equals, with
``check_exact``, ``usage_frame`` on a copy without rollups (every day from its points), in
UTC, London, Lisbon, New York, Kolkata, Lord Howe and Chatham, by day, week, hour and month.
"""

from __future__ import annotations

import functools
import pathlib
import shutil

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import searchkit as sk
from searchkit.history.layout import LIMITS_SCHEMA
from tests.analytics.test_forecast_bins import series, write
from tests.stores import copy_store

ZONES = [
    "UTC",
    "Europe/London",
    "Europe/Lisbon",
    "America/New_York",
    "Asia/Kolkata",
    "Australia/Lord_Howe",
    "Pacific/Chatham",
]
FREQS = ["D", "W", "h", "MS"]
#: UTC days: London in January and July, every clock change of the zones above.
DAYS = [
    "2026-01-10", "2026-01-11",  # London, Lisbon in winter (UTC+0)
    "2026-03-08", "2026-03-09",  # New York springs forward (03-08 07:00 UTC)
    "2026-03-29", "2026-03-30",  # London, Lisbon spring forward (03-29 01:00 UTC)
    "2026-04-04", "2026-04-05",  # Chatham (14:00 UTC) and Lord Howe (15:00 UTC) fall back
    "2026-07-10", "2026-07-11",  # London, Lisbon in summer (UTC+1)
    "2026-09-26", "2026-09-27",  # Chatham springs forward (09-26 14:00 UTC)
    "2026-10-03", "2026-10-04",  # Lord Howe springs forward half an hour (10-03 15:30 UTC)
    "2026-10-31", "2026-11-01",  # New York falls back (11-01 06:00 UTC); the open day
]  # fmt: skip

#: Days with negative or infinite values: a rollup answers them only whole (the quarters
#: keep no invalid counts), so where a period splits them they are read from their points.
WITH_INVALID = ["2026-03-09", "2026-07-10", "2026-11-01"]


def build(root: pathlib.Path) -> None:
    """Three indexes a day, every 5 minutes, every minute for 8 hours and every 15 minutes,
    random values; bad and missing values, a late file repeating minutes with new values,
    an index with a single point on one day."""
    rng = np.random.default_rng(26)
    for number, day in enumerate(DAYS):
        start = pd.Timestamp(day, tz="UTC")
        done = start + pd.Timedelta(days=1, minutes=5)
        every5 = series(rng, "acct", "id-a", "alpha", start, np.arange(0, 1440, 5), done)
        burst = series(rng, "acct", "id-b", "beta", start, np.arange(180, 660), done)
        quarter = series(rng, "acct", "id-c", "gamma", start, np.arange(7, 1440, 15), done)
        if day in WITH_INVALID:
            quarter[10] = (*quarter[10][:4], float("nan"), quarter[10][5])
            quarter[20] = (*quarter[20][:4], -2.0, quarter[20][5])
            quarter[30] = (*quarter[30][:4], float("inf"), quarter[30][5])
        single = []
        if number == 4:
            single = series(rng, "acct", "id-d", "delta", start, np.array([733]), done)
        write(root, day, every5 + burst + quarter + single, f"{done.value}-main")
        later = (done + pd.Timedelta(hours=1)).value
        again = [(*p[:4], round(p[4] * 1.7, 3), later) for p in every5[40:70]]
        write(root, day, again, f"{later}-late")
    newest = pd.Timestamp(DAYS[-1], tz="UTC")
    limits = [
        {
            "account": "acct",
            "id": index_id,
            "name": name,
            "type": "free",
            "region": "eu-west-1",
            "created": pd.Timestamp(DAYS[0], tz="UTC").value,
            "max_daily_queries": 30_000.0,
            "max_daily_updates": 1_000.0,
            "collected_at": newest.value,
        }
        for index_id, name in (("id-a", "alpha"), ("id-b", "beta"), ("id-c", "gamma"))
    ]
    folder = root / "limits" / f"day={DAYS[-1]}"
    folder.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(limits, schema=LIMITS_SCHEMA), folder / "part-1.parquet")


class Reads(sk.History):
    """A History that records the days it reads points of."""

    def __init__(self, location: str) -> None:
        super().__init__(location)
        self.read: list[str] = []

    def points(self, *, start=None, end=None):
        self.read.append(f"{start:%Y-%m-%d}")
        return super().points(start=start, end=end)


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> tuple[pathlib.Path, pathlib.Path]:
    base = tmp_path_factory.mktemp("zones")
    plain = base / "points-only"
    build(plain)
    rolled = base / "rolled"
    copy_store(plain, rolled)
    assert sk.History(str(rolled)).refresh_rollups(DAYS[:-1]) == len(DAYS) - 1
    return rolled, plain


@functools.cache
def from_points(plain: pathlib.Path, *, freq: str, tz: str) -> pd.DataFrame:
    """``usage_frame`` of the store without rollups (every day from its points): worked out
    once per zone and period for the tests of this module that compare with it."""
    return sk.usage_frame(sk.History(str(plain)), freq=freq, tz=tz)


@pytest.mark.parametrize("freq", FREQS)
@pytest.mark.parametrize("zone", ZONES)
def test_usage_from_rollups_is_usage_from_points_in_every_zone(stores, zone, freq):
    rolled, plain = stores
    hist = Reads(str(rolled))
    got = sk.usage_frame(hist, freq=freq, tz=zone)
    want = from_points(plain, freq=freq, tz=zone)

    pd.testing.assert_frame_equal(got, want, check_exact=True)
    # The closed days came from their rollups (but days with invalid values that a period
    # splits); the open day from its points.
    assert DAYS[-1] in hist.read and set(hist.read) <= set(WITH_INVALID)
    assert len(got) > len(DAYS) and got["operations"].gt(0).all()
    local = pd.DatetimeIndex(got["period"])
    assert str(local.tz) == zone
    if freq != "h":  # days, weeks and months start at a local midnight
        assert (local == local.normalize()).all(), sorted(set(local.time))
    else:  # local whole hours, but where a clock change starts one
        off = local.minute != 0
        assert zone in ("Pacific/Chatham", "Australia/Lord_Howe") or not off.any()
        assert len(set(local[off])) <= 2


def test_a_summer_day_in_london_is_one_period_from_local_midnight(stores):
    rolled, _ = stores
    usage = sk.usage_frame(sk.History(str(rolled)), tz="Europe/London")
    alpha = usage[usage["name"] == "alpha"]
    july = alpha[alpha["period"].dt.month == 7]
    assert july["period"].tolist() == [
        pd.Timestamp(day, tz="Europe/London") for day in ("2026-07-10", "2026-07-11")
    ] + [pd.Timestamp("2026-07-12", tz="Europe/London")]
    # 07-10 00:00+01:00 holds 23 hours of the UTC day 07-10 (the hour before is 07-09's).
    assert july["points"].tolist() == [23 * 12, 24 * 12, 12]


def test_rollups_of_an_older_writer_without_quarters_are_stale_and_rewritten(stores, tmp_path):
    rolled, plain = stores
    root = tmp_path / "h"
    copy_store(rolled, root)
    shutil.rmtree(root / "rollups" / "_months")  # an older writer packed no months
    for path in (root / "rollups").glob("day=*/*.parquet"):
        table = pq.read_table(path)
        old = [c for c in table.column_names if c.startswith("quarter_") or c == "first_point"]
        old.append("digest")  # the seal came after the quarters
        pq.write_table(table.drop_columns(old), path)
    hist = Reads(str(root))
    want = from_points(plain, freq="D", tz="America/New_York")

    pd.testing.assert_frame_equal(sk.usage_frame(hist, tz="America/New_York"), want)
    assert hist.read == DAYS  # every day from its points
    assert hist.refresh_rollups(DAYS[:-1]) == len(DAYS) - 1  # stale: rewritten
    hist.read.clear()
    pd.testing.assert_frame_equal(sk.usage_frame(hist, tz="America/New_York"), want)
    assert hist.read == WITH_INVALID


@pytest.mark.parametrize(("zone", "freq"), [("America/New_York", "W"), ("Pacific/Chatham", "MS")])
def test_rollups_read_a_few_days_at_a_time_count_as_all_at_once(stores, monkeypatch, zone, freq):
    # usage_frame reads a long history's rollups BATCH_DAYS days at a time (memory stays a
    # month's); periods that span batches still add their days in day order.
    from searchkit.analytics import periods

    rolled, plain = stores
    asked: list[tuple[str, str]] = []

    class Sums(sk.History):
        def sums(self, first, last, *, detail="day"):
            asked.append((first, last))
            return super().sums(first, last, detail=detail)

    monkeypatch.setattr(periods, "BATCH_DAYS", 3)
    got = sk.usage_frame(Sums(str(rolled)), freq=freq, tz=zone)
    want = from_points(plain, freq=freq, tz=zone)

    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert sorted(set(asked)) == [
        (DAYS[at], DAYS[min(at + 2, len(DAYS) - 1)]) for at in range(0, len(DAYS), 3)
    ]


@pytest.mark.parametrize(
    ("zone", "freq"),
    [
        ("Asia/Kathmandu", "h"),  # +05:45: hours on the quarter-hour
        ("America/St_Johns", "D"),  # -03:30 / -02:30
        ("Europe/London", "6h"),
        ("America/New_York", "2D"),
        ("Australia/Lord_Howe", "30min"),
        ("Asia/Kolkata", "QS"),
        ("Pacific/Chatham", "7min"),  # boundaries inside quarters: those days from points
    ],
)
def test_usage_from_rollups_is_usage_from_points_for_other_zones_and_periods(stores, zone, freq):
    # "Correct for every zone and every freq" (issue 26 item 2): beyond the four periods
    # above, zones a quarter or a half off the hour and periods of other lengths.
    rolled, plain = stores
    got = sk.usage_frame(sk.History(str(rolled)), freq=freq, tz=zone)
    want = from_points(plain, freq=freq, tz=zone)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert len(got) >= 12 and got["operations"].sum() > 0
    assert str(pd.DatetimeIndex(got["period"]).tz) == zone


@pytest.mark.parametrize(
    ("zone", "freq", "details"),
    [
        # A zone a whole number of hours from UTC: its days' periods are made of hours.
        ("America/New_York", "D", {"hour"}),
        ("Europe/London", "h", {"hour"}),
        ("UTC", "h", {"hour"}),
        ("America/New_York", "W", {"day", "hour"}),  # most UTC days lie in one week
        # Half- and quarter-hour offsets and periods of quarters: quarters.
        ("Asia/Kolkata", "D", {"quarter"}),
        ("Pacific/Chatham", "D", {"quarter"}),
        ("UTC", "30min", {"quarter"}),
        ("UTC", "D", {"day"}),
    ],
)
def test_a_zone_whole_hours_from_utc_reads_the_rollups_hours(stores, zone, freq, details):
    # By hour a year is a quarter of the figures a quarter-hour read decodes and adds up
    # (issue 30: New York's plot_utilization on a year); the same frame as the points'.
    rolled, plain = stores
    asked: list[str] = []

    class Sums(sk.History):
        def sums(self, first, last, *, detail="day"):
            asked.append(detail)
            return super().sums(first, last, detail=detail)

    got = sk.usage_frame(Sums(str(rolled)), freq=freq, tz=zone)

    assert set(asked) == details
    pd.testing.assert_frame_equal(got, from_points(plain, freq=freq, tz=zone), check_exact=True)


def test_the_plan_sums_a_day_by_hour_only_where_each_hour_lies_in_one_period():
    from searchkit.analytics.periods import plan

    days = np.asarray([pd.Timestamp(day, tz="UTC").value for day in ("2026-03-08", "2026-07-10")])
    new_york = plan(days, pd.Timestamp(0, tz="America/New_York").tzinfo, "D")
    # 03-08: New York springs forward at 07:00 UTC (an hour's boundary); 05:00 UTC is
    # midnight in winter, 04:00 UTC in summer.
    assert [new_york.detail(at) for at in range(2)] == ["hour", "hour"]
    hours = new_york.bins(0)
    assert len(hours) == 24 and (hours[:5] < hours[5]).all() and len(set(hours[5:])) == 1
    assert len(new_york.bins(1)) == 24 and len(set(new_york.bins(1)[4:])) == 1
    kolkata = plan(days, pd.Timestamp(0, tz="Asia/Kolkata").tzinfo, "D")
    assert [kolkata.detail(at) for at in range(2)] == ["quarter", "quarter"]
    assert len(kolkata.bins(0)) == 96 and len(set(kolkata.bins(0)[74:])) == 1  # 18:30 UTC
    utc = plan(days, pd.Timestamp(0, tz="UTC").tzinfo, "D")
    assert utc.detail(0) == "day" and len(utc.bins(0)) == 96  # a day is its quarters' sum
    assert plan(days, pd.Timestamp(0, tz="UTC").tzinfo, "7min").bins(0) is None
