"""Today's forecast as curves: the path ends at the row's numbers and crosses at hit_at."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

import searchkit as sk
from searchkit.analytics.day_forecast import MAX_KNOTS, DayForecast, forecast_day
from searchkit.analytics.forecast import forecast_parts
from searchkit.emulator import Emulator
from tests.analytics.test_forecast import busy_days, days_of

UTC = "UTC"
NOW = "2026-11-21 06:00"


@pytest.fixture(scope="module")
def raw():
    unlimited = days_of("unlimited", 12, busy_days, today_until=6, queries=-1)
    return [days_of("shaped", 12, busy_days, today_until=6), unlimited]


def test_the_rows_are_forecast_limits_rows(raw):
    day = forecast_day(raw, NOW)
    pd.testing.assert_frame_equal(day.rows, sk.forecast_limits(raw, now=NOW))


def test_today_runs_from_midnight_to_now_and_ends_at_used(raw):
    today = forecast_day(raw, NOW).today("id-shaped")
    assert today["time"].iloc[0] == pd.Timestamp("2026-11-21", tz=UTC)
    assert today["time"].iloc[-1] == pd.Timestamp(NOW, tz=UTC)
    assert today["used"].iloc[0] == 0.0
    assert today["used"].iloc[-1] == 21_600.0  # 6 h at 1 a second
    assert today["used"].is_monotonic_increasing
    # A point every 5 minutes: 72 this morning, plus midnight and now.
    assert len(today) == 74
    assert today["used"].iloc[1] == 300.0  # the first point: 5 minutes at 1 a second


def test_the_path_ends_at_the_projected_band_and_crosses_the_limit_at_hit_at(raw):
    day = forecast_day(raw, NOW)
    path = day.path("id-shaped")
    row = day.rows.loc["id-shaped"]
    assert path["time"].iloc[0] == pd.Timestamp(NOW, tz=UTC)
    assert path["time"].iloc[-1] == pd.Timestamp("2026-11-22", tz=UTC)
    assert list(path.iloc[0, 1:]) == [21_600.0] * 3  # it starts at what is used
    assert path["projected"].iloc[-1] == pytest.approx(201_600.0, rel=1e-12)
    last = path.iloc[-1]
    assert (last["projected_low"], last["projected_high"]) == (
        pytest.approx(row["projected_low"], rel=1e-12),
        pytest.approx(row["projected_high"], rel=1e-12),
    )
    # 28,800 at 08:00, then 10,800 an hour: straight lines between the hours' knots
    # cross 100,000 at 14:35:33, the row's hit_at.
    assert path.loc[
        path["time"] == pd.Timestamp("2026-11-21 08:00", tz=UTC), "projected"
    ].item() == (pytest.approx(28_800.0, rel=1e-12))
    seconds = (path["time"] - path["time"].iloc[0]).dt.total_seconds().to_numpy()
    crossing = np.interp(100_000.0, path["projected"].to_numpy(), seconds)
    assert pd.Timestamp(NOW, tz=UTC) + pd.Timedelta(seconds=round(crossing)) == row["hit_at"]
    assert row["hit_at"] == pd.Timestamp("2026-11-21 14:35:33", tz=UTC)


def test_past_days_are_the_complete_days_before_today_newest_first(raw):
    past = forecast_day(raw, NOW).past("id-shaped", days=3)
    assert list(past["day"].unique()) == [
        pd.Timestamp(d, tz=UTC) for d in ("2026-11-20", "2026-11-19", "2026-11-18")
    ]
    one = past[past["day"] == pd.Timestamp("2026-11-20", tz=UTC)]
    assert list(one["hour"]) == list(range(25))
    assert one["used"].iloc[8] == 28_800.0
    assert one["used"].iloc[-1] == 201_600.0


def test_today_is_thinned_to_the_knots_a_picture_can_show():
    raw = [days_of("dense", 1, busy_days, today_until=12, every=1)]
    today = forecast_day(raw, "2026-11-10 12:00").today("id-dense")
    assert len(today) == MAX_KNOTS + 2  # 720 points thinned, plus midnight and now
    assert today["used"].iloc[-1] == 8 * 3_600 * 1.0 + 4 * 3_600 * 3.0  # 72,000


def test_an_index_with_no_forecast_has_no_path_and_an_unknown_one_is_refused(raw):
    day = forecast_day(raw, "2026-11-23 06:00")  # two days after the points end: stale
    assert day.path("id-shaped").empty
    with pytest.raises(sk.UnknownIndexError, match="no forecast row for the index 'nope'"):
        day.path("nope")


def test_the_backtest_of_the_days_read_is_backtest_forecast_without_a_second_read(raw):
    day = forecast_day(raw, NOW)
    replayed, expected = day.backtest(), sk.backtest_forecast(raw)
    assert len(replayed.results) == 2 * 5 * 7  # 12 days, 7 of warm-up: 5 days x 7 hours
    pd.testing.assert_frame_equal(replayed.results, expected.results)
    pd.testing.assert_frame_equal(replayed.summary, expected.summary)
    # The forecaster's alone (what the cockpit shows): the same, the baselines' NaN.
    alone = day.backtest(baselines=False).results
    baseline = [
        c for c in alone.columns if c.startswith(("last_hour", "yesterday", "mean_7", "ratio_7"))
    ]
    assert len(baseline) == 8 and alone[baseline].isna().all().all()
    pd.testing.assert_frame_equal(
        alone.drop(columns=baseline), expected.results.drop(columns=baseline)
    )


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    """A History as the collector leaves it: three daily collects, then three of ten
    minutes into the open day (its rollup extended by each)."""
    start = dt.datetime(2026, 11, 17, 12, 0, tzinfo=dt.timezone.utc)
    with Emulator(demo=True, seed=2026, clock=start, window_minutes=1440) as emu:
        with emu.client() as client:
            hist = sk.History(tmp_path_factory.mktemp("day") / "store")
            for step in (86_400,) * 3 + (600,) * 3:
                emu.advance(step)
                hist.collect(client, now=emu.now())
            return hist, emu.now()


def test_today_from_its_rollup_draws_quarter_hours_equal_to_its_points(collected):
    hist, now = collected
    day = forecast_day(hist, now)
    pd.testing.assert_frame_equal(day.rows, sk.forecast_limits(hist, now=now))
    assert day.bins.last_from_sums and day.quarters is not None  # no read of today's points
    _, bins, _ = forecast_parts(hist, now)  # today's points, read
    name = "code-snippets"
    index_id = str(day.rows.index[day.rows["name"] == name][0])
    curve = day.today(index_id)
    # midnight, each quarter-hour until 12:30 (50), then used at 12:30
    assert curve["time"].iloc[0] == pd.Timestamp("2026-11-20", tz=UTC)
    assert curve["time"].iloc[1] == pd.Timestamp("2026-11-20 00:15", tz=UTC)
    assert curve["time"].iloc[-2] == pd.Timestamp("2026-11-20 12:15", tz=UTC)
    assert curve["time"].iloc[-1] == pd.Timestamp("2026-11-20 12:30", tz=UTC) == day.as_of
    assert len(curve) == 1 + 49 + 1
    assert curve["used"].iloc[-1] == day.rows.loc[index_id, "used"]
    rows, times, ops = bins.last_points
    mine = rows == bins.ids.index(index_id)
    running = [ops[mine & (times < t.value)].sum() for t in curve["time"].iloc[1:-1]]
    np.testing.assert_allclose(curve["used"].iloc[1:-1], running, rtol=1e-12)
    # Without the quarter-hours (the rollup moved on meanwhile): the index's own points.
    alone = DayForecast(day.rows, day.bins, day.plan, None, hist).today(index_id)
    assert mine.sum() == 750 and len(alone) == 2 + MAX_KNOTS  # thinned as any day's points
    knots = np.searchsorted(times[mine], alone["time"].iloc[1:-1].array.asi8)
    assert np.array_equal(times[mine][knots], alone["time"].iloc[1:-1].array.asi8)
    np.testing.assert_allclose(alone["used"].iloc[1:-1], np.cumsum(ops[mine])[knots], rtol=1e-12)


def scores_of(results: pd.DataFrame) -> pd.DataFrame:
    """The cockpit's backtest column as the backtest's results give it (each index's share
    of forecasts inside the band, of right breach calls, and their number)."""
    made = results[results["projected"].notna()]
    actual = made["used_at_reset"]
    inside = (actual >= made["projected_low"]) & (actual <= made["projected_high"])
    finite = np.isfinite(made["limit"].to_numpy(np.float64))
    called = (made["projected"] > made["limit"]) == (actual > made["limit"])
    frame = pd.DataFrame(
        {
            "index_id": made["index_id"].astype(str),
            "band_held": inside.astype(float),
            "calls_right": called.astype(float).where(finite),
        }
    )
    grouped = frame.groupby("index_id", sort=True)
    out = grouped[["band_held", "calls_right"]].mean()
    out["backtested"] = grouped.size()
    return out


def test_the_scores_are_the_backtest_s_results_without_building_them(raw):
    day = forecast_day(raw, NOW)
    expected = scores_of(day.backtest().results)
    assert expected["backtested"].tolist() == [35, 35]  # 5 days x 7 hours each
    assert expected["calls_right"].isna().tolist() == [False, True]  # unlimited: no call
    pd.testing.assert_frame_equal(day.scores(), expected, check_index_type=False)
