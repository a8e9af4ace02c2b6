"""Reads of many days from their points stay within the read budget (history/budget.py).

When no rollup answers (none written, or every one rejected: tampered or stale), the
analytics read each day from its points. They used to keep every day read (the points
reader's cache): a year of 1,000 indexes took +16.5 GiB, although each day's read alone
passed the budget. Now they hold a few days at once, and each day's read must fit in its
share of the limit, or is refused saying how to bound it.
"""

from __future__ import annotations

import pathlib
import weakref

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import searchkit as sk
from searchkit.analytics.days import HELD
from searchkit.errors import HistoryError
from searchkit.history.layout import LIMITS_SCHEMA
from tests.analytics.test_forecast_bins import series, write
from tests.stores import copy_store

DAYS = [f"2026-11-{day:02d}" for day in range(10, 18)]
NOW = pd.Timestamp("2026-11-17 18:00", tz="UTC")


def build(root: pathlib.Path) -> None:
    """Eight days of three indexes, a point a minute (4,320 points a day), no rollups."""
    rng = np.random.default_rng(30)
    for day in DAYS:
        start = pd.Timestamp(day, tz="UTC")
        done = start + pd.Timedelta(days=1, minutes=5)
        rows = [
            point
            for index_id, name in (("id-a", "alpha"), ("id-b", "beta"), ("id-c", "gamma"))
            for point in series(rng, "acct", index_id, name, start, np.arange(1440), done)
        ]
        write(root, day, rows, f"{done.value}-main")
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
            "collected_at": pd.Timestamp(DAYS[0], tz="UTC").value,
        }
        for index_id, name in (("id-a", "alpha"), ("id-b", "beta"), ("id-c", "gamma"))
    ]
    folder = root / "limits" / f"day={DAYS[0]}"
    folder.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(limits, schema=LIMITS_SCHEMA), folder / "part-1.parquet")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("bounded") / "points-only"
    build(root)
    return root


class Held(sk.History):
    """A History that notes, at each read of points, how many earlier reads' points are
    still held (alive) by the caller."""

    def __init__(self, location: str) -> None:
        super().__init__(location)
        self.alive: list[weakref.ref] = []
        self.held: list[int] = []

    def points(self, *, start=None, end=None):
        self.held.append(sum(ref() is not None for ref in self.alive))
        points = super().points(start=start, end=end)
        self.alive.append(weakref.ref(points))
        return points


CALLS = {
    "usage_frame": lambda hist: sk.usage_frame(hist),
    "usage_frame New York by hour": lambda hist: sk.usage_frame(
        hist, tz="America/New_York", freq="h"
    ),
    "forecast_limits": lambda hist: sk.forecast_limits(hist, now=NOW),
    "backtest_forecast": lambda hist: sk.backtest_forecast(hist).summary,
}


@pytest.mark.parametrize("call", list(CALLS))
def test_days_read_from_their_points_are_not_all_held_at_once(store, call):
    hist = Held(str(store))

    CALLS[call](hist)

    assert len(hist.held) >= len(DAYS) - 1  # every day (the forecast: from its first) read
    assert max(hist.held) <= HELD - 1  # the older days were let go (was: every day read)


def test_a_day_over_its_share_of_the_limit_is_refused_saying_how_to_bound_it(
    store, tmp_path, monkeypatch
):
    root = tmp_path / "h"
    copy_store(store, root)
    hist = sk.History(str(root))
    expected = sk.usage_frame(hist)
    # A day's points (4,320 rows, about 580 KiB) fit in 900 kB, but not HELD days at once.
    monkeypatch.setenv("SEARCHKIT_READ_LIMIT", "900kB")

    with pytest.raises(HistoryError) as caught:
        sk.usage_frame(hist)

    assert str(caught.value) == (
        "reading the throughput history from 2026-11-10 to 2026-11-10 would take about "
        "580.1 KiB of memory (4,320 rows), more than the 219.7 KiB allowed (a quarter of this "
        "machine's memory, or of SEARCHKIT_READ_LIMIT: 4 days are held at once); nothing "
        "was read: the days without a usable rollup are read from their points; write "
        "their rollups with hist.refresh_rollups() (it reads a day at a time), or raise "
        "SEARCHKIT_READ_LIMIT"
    )
    assert hist.refresh_rollups() == len(DAYS)  # within the limit: a day at a time
    pd.testing.assert_frame_equal(sk.usage_frame(hist), expected, check_exact=True)
