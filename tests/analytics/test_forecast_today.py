"""forecast_limits takes today from its rollup (kept current by each collect) and gives
the same frame, to the last bit, as from today's points."""

from __future__ import annotations

import datetime as dt
import pathlib
import shutil

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import searchkit as sk
from searchkit.emulator import Emulator
from searchkit.history.checks import seal
from tests.stores import copy_store

TODAY = "2026-11-20"


@pytest.fixture(scope="module")
def collected(tmp_path_factory) -> pathlib.Path:
    """The demo's week collected at 20:00, then every 10 minutes until 20:20: today's
    rollup rolled up at 20:00 and extended twice; two indexes past their limit today."""
    root = tmp_path_factory.mktemp("today") / "h"
    evening = dt.datetime(2026, 11, 20, 20, 0, tzinfo=dt.timezone.utc)
    with Emulator(demo=True, seed=2026, clock=evening, window_minutes=7 * 1440) as emu:
        hist = sk.History(root)
        with emu.client() as client:
            for _ in range(3):
                hist.collect(client, now=emu.now())
                emu.advance(600)
    return root


def without_todays_rollup(tmp_path: pathlib.Path, root: pathlib.Path) -> sk.History:
    copy = tmp_path / "points"
    copy_store(root, copy)
    shutil.rmtree(copy / "rollups" / f"day={TODAY}")
    return sk.History(copy)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"field": "max_daily_queries", "tz": "America/New_York"},
        {"value_unit": "per_minute", "tz": "Asia/Kolkata"},
        {"now": "2026-11-20 20:30"},
    ],
)
def test_today_from_its_rollup_is_the_forecast_from_its_points(collected, tmp_path, options):
    hist = sk.History(collected)
    assert len(hist.rollups().query("period == @pd.Timestamp(@TODAY, tz='UTC')")) == 6
    points = without_todays_rollup(tmp_path, collected)

    got = sk.forecast_limits(hist, **options)

    pd.testing.assert_frame_equal(got, sk.forecast_limits(points, **options), check_exact=True)
    if not options:  # the points that took two indexes past their limits, read by id
        crossed = got[got["hit_at"] <= got["as_of"]].set_index("name")["hit_at"]
        assert crossed.dt.strftime("%H:%M").sort_index().to_dict() == {
            "code-snippets": "19:22",
            "support-tickets": "06:43",
        }


class Counting(sk.History):
    """A History that notes which points it was asked for."""

    def __init__(self, location) -> None:
        super().__init__(location)
        self.reads: list = []

    def points(self, *, start=None, end=None):
        self.reads.append(("points", start, end))
        return super().points(start=start, end=end)

    def throughput(self, **kwargs):
        self.reads.append(("throughput", kwargs.get("index_ids")))
        return super().throughput(**kwargs)


def test_today_from_its_rollup_reads_no_point_of_today(collected):
    hist = Counting(collected)

    got = sk.forecast_limits(hist)

    # The points after the instant, to count them: none; not one of today's. The two
    # indexes past their limit: when, from the rollup (the collector saw their limits).
    assert hist.reads == [("points", pd.Timestamp("2026-11-21", tz="UTC"), None)]
    assert (got["hit_at"] <= got["as_of"]).sum() == 2


def test_without_the_crossings_it_reads_the_points_of_indexes_past_their_limit(collected, tmp_path):
    root = tmp_path / "h"
    copy_store(collected, root)
    (path,) = (root / "rollups" / f"day={TODAY}").glob("*.parquet")
    table = pq.read_table(path)
    for name in ("crossing_limits", "crossing_times"):  # as a collector that knew no limit
        empty = pa.array([[]] * table.num_rows, table.schema.field(name).type)
        table = table.set_column(table.schema.get_field_index(name), name, empty)
    pq.write_table(seal(table), path)  # sealed as such a collector seals it
    hist = Counting(root)

    got = sk.forecast_limits(hist)

    past = sorted(got[got["hit_at"] <= got["as_of"]].index)
    assert len(past) == 2
    assert hist.reads == [
        ("points", pd.Timestamp("2026-11-21", tz="UTC"), None),
        ("throughput", past),
    ]
    pd.testing.assert_frame_equal(got, sk.forecast_limits(sk.History(collected)), check_exact=True)


def test_a_crossing_changed_by_hand_is_found_and_the_points_answer(collected, tmp_path):
    """The crossings are sealed: one moved by hand (an index past its limit an hour
    earlier) is not believed; the forecast reads today's points and says so."""
    root = tmp_path / "h"
    copy_store(collected, root)
    (path,) = (root / "rollups" / f"day={TODAY}").glob("*.parquet")
    table = pq.read_table(path)
    times = table["crossing_times"].to_pylist()
    row = next(at for at, listed in enumerate(times) if any(t is not None for t in listed))
    times[row] = [t - pd.Timedelta(hours=1) if t is not None else None for t in times[row]]
    at = table.schema.get_field_index("crossing_times")
    kind = table.schema.field(at).type
    pq.write_table(table.set_column(at, "crossing_times", pa.array(times, kind)), path)

    with pytest.warns(sk.HistoryWarning, match=f"rollups that do not add up ignored: {TODAY}"):
        got = sk.forecast_limits(sk.History(root))
    pd.testing.assert_frame_equal(got, sk.forecast_limits(sk.History(collected)), check_exact=True)
