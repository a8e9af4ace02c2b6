"""Forecasts of the daily limits: the rhythm, the band, the fallbacks, the refusals."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

import searchkit as sk
from searchkit.analytics import forecast
from searchkit.analytics.forecast import FORECAST_COLUMNS
from tests.analytics.test_usage import go, index
from tests.analytics_data import raw_index

# A pandas warning is a future error: none is allowed here.
pytestmark = pytest.mark.filterwarnings("error::pandas.errors.Pandas4Warning")

UTC = "UTC"
GO_FORMAT = "%Y-%m-%d %H:%M:%S +0000 UTC"  # go()'s


def shaped(rate_of_hour, hour: int) -> float:
    return rate_of_hour(hour)


def days_of(
    name: str,
    days: int,
    rate_of_hour,
    *,
    start: str = "2026-11-09",
    today_until: float | None = None,
    today_factor: float = 1.0,
    skip_today: tuple[int, int] | None = None,
    queries: int = 100_000,
    updates: int = 0,
    every: int = 5,
) -> dict:
    """``days`` whole days of points every ``every`` minutes, then today until an hour."""
    first = pd.Timestamp(start, tz=UTC)
    points = []
    for day in range(days + 1):
        minutes = []
        for minute in range(0, 1440, every):
            if day == days and today_until is not None and minute >= today_until * 60:
                break
            if day == days and skip_today and skip_today[0] * 60 <= minute < skip_today[1] * 60:
                continue
            minutes.append(minute)
        factor = today_factor if day == days else 1.0
        # A day's instants and their texts at once (as go() writes them, a point at a time).
        whens = first + pd.Timedelta(days=day) + pd.to_timedelta(minutes, unit="min")
        texts = whens.strftime(GO_FORMAT)
        for minute, when, text in zip(minutes, whens, texts, strict=True):
            points.append({"x": text, "y": rate_of_hour(minute // 60, when) * factor})
    return {
        "id": f"id-{name}",
        "name": name,
        "max_daily_queries": queries,
        "max_daily_updates": updates,
        "throughput_vector": points,
    }


def busy_days(hour: int, when: pd.Timestamp) -> float:
    """1 operation a second at night, 3 from 08:00: 201,600 a day."""
    return 1.0 if hour < 8 else 3.0


def test_the_rest_of_the_day_follows_the_index_s_own_daily_profile():
    raw = [days_of("shaped", 12, busy_days, today_until=6)]
    row = sk.forecast_limits(raw, now="2026-11-21 06:00").loc["id-shaped"]
    assert list(row.index) == list(FORECAST_COLUMNS)
    assert (row["used"], row["pace"]) == (21_600.0, 1.0)
    assert row["projected"] == 201_600.0  # 8 h x 3,600 x 1 + 16 h x 3,600 x 3
    # Every past day was forecast exactly at 06:00: the calibrated band has no width.
    assert (row["projected_low"], row["projected_high"]) == (201_600.0, 201_600.0)
    assert row["projected_utilization"] == 2.016
    # 100,000 - 28,800 (at 08:00) = 71,200 at 3 a second: 6 h 35 min 33 s later
    # (instants to the second).
    assert row["hit_at"] == pd.Timestamp("2026-11-21 14:35:33", tz=UTC)
    assert row["hit_at_earliest"] == row["hit_at_latest"] == row["hit_at"]
    # Twelve days stored: the same weekday a week back is known, so the weekly rhythm
    # is used (here the same as every day's).
    assert (row["unit"], row["method"], row["reason"]) == ("operations", "profile+weekly", "")
    assert row["as_of"] == pd.Timestamp("2026-11-21 06:00", tz=UTC)


def test_a_busier_morning_scales_the_rest_of_the_day_up():
    raw = [days_of("double", 12, busy_days, today_until=6, today_factor=2.0)]
    row = sk.forecast_limits(raw, now="2026-11-21 06:00").loc["id-double"]
    assert row["used"] == 43_200.0
    # Twice the usual morning: nearly twice the usual rest of the day (the last 3 hours'
    # ratio, shrunk towards 1, pulls it down a little).
    assert round(row["projected"]) == 382_446
    assert row["hit_at"] == pd.Timestamp("2026-11-21 10:07:26", tz=UTC)


def test_a_gap_in_today_s_points_is_not_read_as_a_quiet_morning():
    full = days_of("full", 12, busy_days, today_until=12)
    gap = days_of("gap", 12, busy_days, today_until=12, skip_today=(9, 11))
    rows = sk.forecast_limits([full, gap], now="2026-11-21 12:00")
    assert rows.loc["id-full", "projected"] == pytest.approx(201_600.0, rel=1e-12)
    assert rows.loc["id-gap", "used"] == rows.loc["id-full", "used"] - 2 * 3_600 * 3
    # The missing two hours stay missing; the rest of the day is forecast as usual.
    assert rows.loc["id-gap", "projected"] == pytest.approx(201_600.0 - 21_600.0, rel=1e-12)


def weekdays_busier(hour: int, when: pd.Timestamp) -> float:
    return (0.5 if when.day_of_week >= 5 else 1.0) * busy_days(hour, when)


def test_with_one_week_stored_a_weekend_day_is_forecast_as_a_weekend_day():
    # 2026-11-16 is a Monday; today, 2026-11-28, is a Saturday: one Saturday stored.
    raw = [days_of("weekly", 12, weekdays_busier, start="2026-11-16", today_until=9)]
    row = sk.forecast_limits(raw, now="2026-11-28 09:00").loc["id-weekly"]
    assert row["method"] == "profile+weekly"
    assert row["projected"] == pytest.approx(100_800.0, rel=1e-12)  # half a weekday
    # Six days stored (one Saturday short of a week back): no weekly rhythm, a weekday.
    raw = [days_of("short", 5, weekdays_busier, start="2026-11-23", today_until=9)]
    row = sk.forecast_limits(raw, now="2026-11-28 09:00").loc["id-short"]
    assert row["method"] == "profile"


def nights_on_weekends(hour: int, when: pd.Timestamp) -> float:
    """Busy from 08:00 on weekdays, busy before 08:00 on weekends: 201,600 / 144,000."""
    busy = hour < 8 if when.day_of_week >= 5 else hour >= 8
    return 3.0 if busy else 1.0


def test_an_index_shaped_otherwise_on_weekends_learns_to_follow_its_weekday():
    # Today, 2026-12-12, is a Saturday: 144,000 operations, 90,000 of them by 09:00.
    raw = [days_of("nights", 33, nights_on_weekends, today_until=9)]
    row = sk.forecast_limits(raw, now="2026-12-12 09:00").iloc[0]
    assert (row["used"], row["method"]) == (90_000.0, "profile+weekly")
    # The weekday's profile fitted the past weekends (the week's did not), so it gets
    # most of the weight: 152,571 (6% high), where a fixed half of each gave 174,857.
    assert row["projected"] == pytest.approx(1_068_000 / 7, rel=1e-12)


def test_with_two_weeks_stored_a_weekend_day_is_forecast_as_a_weekend_day():
    # 2026-11-09 is a Monday; today, 2026-11-28, is a Saturday.
    raw = [days_of("weekly", 19, weekdays_busier, today_until=9)]
    row = sk.forecast_limits(raw, now="2026-11-28 09:00").loc["id-weekly"]
    assert row["method"] == "profile+weekly"
    assert row["projected"] == pytest.approx(100_800.0, rel=1e-12)  # half a weekday


def test_the_tests_own_generator_is_forecast_within_two_percent_at_two_in_the_morning():
    start = dt.datetime(2026, 3, 20, tzinfo=dt.timezone.utc)
    raw = [raw_index("docs", minutes=9 * 1440, seed=1, start=start, plan="free")]
    row = sk.forecast_limits(raw, now="2026-03-28 02:00").iloc[0]
    actual = sk.usage_frame(raw)["operations"].iloc[-1]  # the whole of 2026-03-28
    assert actual == 8_599_021.8
    assert abs(row["projected"] / actual - 1) < 0.02
    assert row["method"] == "profile+weekly"  # 2026-03-21, a Saturday, a week back
    assert row["reason"] == (
        "band from only 7 past day(s) at this hour (9 or more calibrate it): widened"
    )


def test_without_past_days_the_pace_carries_the_day_and_says_so():
    raw = [index("steady", "2026-11-20 00:00", 360, 1.0)]
    row = sk.forecast_limits(raw, now="2026-11-20 06:00").loc["id-steady"]
    assert (row["used"], row["pace"], row["projected"]) == (21_600.0, 1.0, 86_400.0)
    assert (row["projected_low"], row["projected_high"]) == (21_600 + 32_400, 21_600 + 129_600)
    assert row["projected_utilization"] == 1.44
    assert row["hit_at"] == pd.Timestamp("2026-11-20 16:40", tz=UTC)
    assert row["hit_at_earliest"] == pd.Timestamp("2026-11-20 11:20", tz=UTC)
    assert pd.isna(row["hit_at_latest"])  # at half the pace the day ends first
    assert row["method"] == "pace"
    assert row["reason"] == (
        "no past day to learn a rhythm from: the rest of the day at the pace of the last "
        "1 h, band 0.5x-2x; collect a History for more"
    )


def test_an_index_already_past_its_limit_gives_the_point_that_crossed_it():
    raw = [index("busy", "2026-11-20 00:00", 120, 10.0, queries=20_000, updates=10_000)]
    row = sk.forecast_limits(raw, now="2026-11-20 02:00").loc["id-busy"]
    assert row["used"] == 72_000.0
    assert row["hit_at"] == pd.Timestamp("2026-11-20 00:49", tz=UTC)  # 50 points x 600
    assert row["hit_at_earliest"] == row["hit_at_latest"] == row["hit_at"]
    assert row["projected_utilization"] == 28.8


def test_unlimited_gives_no_projected_utilization_and_no_hit():
    raw = [index("open", "2026-11-20 00:00", 60, 100.0, queries=-1, updates=-1)]
    row = sk.forecast_limits(raw, now="2026-11-20 01:00").loc["id-open"]
    assert np.isnan(row["projected_utilization"])  # no share of a limit: not 0%
    assert row["reason"].startswith("unlimited")
    assert pd.isna(row["hit_at"]) and pd.isna(row["hit_at_earliest"])


def test_a_limit_of_zero_with_no_operations_is_not_hit_at_midnight():
    raw = [index("idle", "2026-11-20 00:00", 60, 0.0, queries=0, updates=0)]
    row = sk.forecast_limits(raw, now="2026-11-20 01:00").loc["id-idle"]
    assert (row["used"], row["projected"], row["projected_utilization"]) == (0.0, 0.0, 0.0)
    assert pd.isna(row["hit_at"]) and pd.isna(row["hit_at_earliest"])


def test_a_tiny_pace_against_a_huge_limit_is_not_before_the_reset():
    raw = [
        index("tiny", "2026-11-20 00:00", 1, 0.01, queries=10_000_000, updates=0),
        index("steady", "2026-11-20 00:00", 360, 1.0),
    ]
    raw[0]["throughput_vector"] = [{"x": go(pd.Timestamp("2026-11-20 05:59", tz=UTC)), "y": 0.01}]
    forecast = sk.forecast_limits(raw, now="2026-11-20 06:00")
    assert forecast.loc["id-tiny", "used"] == 0.6
    assert pd.isna(forecast.loc["id-tiny", "hit_at"])
    assert forecast.loc["id-steady", "hit_at"] == pd.Timestamp("2026-11-20 16:40", tz=UTC)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # inf arithmetic on purpose
@pytest.mark.parametrize("value", [float("-inf"), -1e308, 1e308])
def test_extreme_values_never_raise_and_never_hit_beyond_representable_time(value):
    raw = [index("odd", "2026-11-20 00:00", 60, 1.0), index("steady", "2026-11-20 00:00", 360, 1.0)]
    raw[0]["throughput_vector"][-1]["y"] = value
    forecast = sk.forecast_limits(raw, now="2026-11-20 06:00")
    assert forecast.loc["id-steady", "hit_at"] == pd.Timestamp("2026-11-20 16:40", tz=UTC)
    hit = forecast.loc["id-odd", "hit_at"]
    assert pd.isna(hit) or hit < pd.Timestamp("2026-11-21", tz=UTC)


@pytest.mark.parametrize(
    "field",
    ["max_monthly_reranks", "max_query_per_second", "max_vector_count", "max_reads_per_request"],
)
def test_limits_throughput_cannot_use_up_are_refused(field):
    raw = [index("steady", "2026-11-20 00:00", 60, 1.0)]
    with pytest.raises(sk.ValidationError) as caught:
        sk.forecast_limits(raw, field=field)
    assert str(caught.value) == (
        f"cannot forecast '{field}': throughput counts queries and updates, so only "
        "'max_daily_queries' or 'max_daily_updates' or their sum (field=None, the default) "
        "can be used up by it; a rate, a size, a per-request cap or a monthly limit of "
        "another quantity cannot"
    )


@pytest.mark.parametrize(
    ("now", "message"),
    [
        (pd.NaT, "now must be a time, got NaT (leave it out for the present)"),
        (
            1_763_600_000_000,
            "now=1763600000000 is not in epoch seconds (a number this large is milliseconds "
            "or nanoseconds): pass seconds, a text or a Timestamp",
        ),
        (float("nan"), "now must be a time, got nan"),
    ],
)
def test_a_now_that_is_not_a_time_is_refused(now, message):
    with pytest.raises(sk.ValidationError) as caught:
        sk.forecast_limits([index("steady", "2026-11-20 00:00", 60, 1.0)], now=now)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("window", "message"),
    [
        ("-1h", "pace_window must be a positive duration, got '-1h'"),
        ("0s", "pace_window must be a positive duration, got '0s'"),
        ("soon", "pace_window must be a duration, got 'soon'"),
    ],
)
def test_a_pace_window_that_is_not_a_positive_duration_is_refused(window, message):
    with pytest.raises(sk.ValidationError) as caught:
        sk.forecast_limits([index("steady", "2026-11-20 00:00", 60, 1.0)], pace_window=window)
    assert str(caught.value) == message


def test_stale_data_forecast_nothing_for_today_and_say_when_they_end():
    raw = [days_of("old", 8, busy_days, today_until=10)]
    row = sk.forecast_limits(raw, now="2026-11-17 15:00").loc["id-old"]
    assert np.isnan(row["projected"]) and pd.isna(row["hit_at"])
    assert row["method"] == ""
    assert row["reason"] == (
        "stale: the data end at 2026-11-17 09:55 UTC, 5 h 5 min before now; nothing forecast "
        "for today: collect again (searchkit collect) and retry"
    )


def test_a_point_from_the_future_is_reported_and_does_not_move_now():
    raw = [
        index("steady", "2026-11-20 00:00", 360, 1.0),
        index("ahead", "2026-11-20 00:00", 360, 1.0),
    ]
    raw[1]["throughput_vector"].append({"x": "2100-01-01 00:00:00 +0000 UTC", "y": 1.0})
    forecast = sk.forecast_limits(raw)
    assert forecast["as_of"].tolist() == [pd.Timestamp("2026-11-20 06:00", tz=UTC)] * 2
    assert forecast["projected"].tolist() == [86_400.0, 86_400.0]
    assert forecast.loc["id-ahead", "reason"].startswith(
        "1 point(s) dated after now (2026-11-20 06:00 UTC) left out; no past day"
    )
    assert forecast.loc["id-steady", "reason"].startswith("no past day")


def test_the_service_s_current_window_forecasts_from_yesterday_s_same_hours():
    # A day's window ending at 06:00: yesterday's 06:00-24:00 stand for today's rest.
    raw = [index("window", "2026-11-19 06:00", 1440, 2.0)]
    row = sk.forecast_limits(raw, now="2026-11-20 06:00").loc["id-window"]
    assert (row["used"], row["projected"]) == (43_200.0, 172_800.0)
    assert row["method"] == "yesterday"
    assert row["reason"].startswith("no complete past day (only the service's current window?)")


def test_backtest_replays_each_day_and_hour_against_the_baselines():
    raw = [days_of("shaped", 12, busy_days)]
    result = sk.backtest_forecast(raw, hours=[6, 18], limit=150_000)
    assert isinstance(result, sk.Backtest)
    days = pd.date_range("2026-11-16", "2026-11-21", freq="D", tz=UTC)
    assert result.results["period"].tolist() == [d for d in days for _ in (6, 18)]
    assert result.results["hour"].tolist() == [6.0, 18.0] * 6
    assert (result.results["used_at_reset"] == 201_600.0).all()
    assert (result.results["projected"] == 201_600.0).all()
    first = result.results.iloc[0]
    assert first["hit_at_actual"] == pd.Timestamp("2026-11-16 19:13:20", tz=UTC)
    assert first["hit_at"] == first["hit_at_actual"]
    assert first["last_hour_pace"] == 21_600.0 + 18 * 3_600
    summary = result.summary
    assert list(summary.index) == [
        "forecast",
        "last_hour_pace",
        "yesterday",
        "mean_7_days",
        "ratio_7_days",
    ]
    assert summary["forecasts"].dtype == "int64"  # a count, not 12.0
    assert summary.loc["forecast"].to_dict() == {
        "forecasts": 12,
        "mean_abs_error": 0.0,
        "median_abs_error": 0.0,
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
        "coverage": 1.0,
        "hit_time_error_min": 0.0,
    }
    assert summary.loc["last_hour_pace", "recall"] == 0.5  # misses every 06:00 call
    assert "Backtest of 12 forecasts" in repr(result)


def test_backtest_refuses_what_it_cannot_replay():
    raw = [days_of("shaped", 3, busy_days)]
    with pytest.raises(sk.ValidationError, match=r"hours must be times of day in \[0, 24\)"):
        sk.backtest_forecast(raw, hours=[25])
    with pytest.raises(sk.ValidationError, match='limit must be None, "median" or a number'):
        sk.backtest_forecast(raw, limit="most")
    with pytest.raises(sk.ValidationError, match="cannot forecast 'max_monthly_reranks'"):
        sk.backtest_forecast(raw, field="max_monthly_reranks")
    assert len(sk.backtest_forecast(raw).results) == 0  # fewer days than the warm-up


def test_the_demo_s_morning_forecast_says_code_snippets_crosses_its_limit_this_evening():
    from searchkit.emulator import Emulator

    morning = dt.datetime(2026, 11, 20, 6, 0, tzinfo=dt.timezone.utc)
    with Emulator(demo=True, seed=2026, clock=morning, window_minutes=7 * 1440) as emu:
        with emu.client() as client:
            forecast = sk.forecast_limits(client.list_indexes()).set_index("name")
    snippets, tickets = forecast.loc["code-snippets"], forecast.loc["support-tickets"]
    # 7,597.2 operations (usage_frame's figure); the hours' sums, each times 60 s, add up
    # to it but for the last bit.
    assert (snippets["used"], snippets["limit"]) == (7_597.199999999999, 20_000.0)
    assert snippets["method"] == "profile"
    assert snippets["hit_at"] == pd.Timestamp("2026-11-20 19:26:48", tz=UTC)
    assert snippets["hit_at_earliest"] == pd.Timestamp("2026-11-20 19:16:52", tz=UTC)
    assert snippets["hit_at_latest"] == pd.Timestamp("2026-11-20 20:00:22", tz=UTC)
    # support-tickets is about to pass its limit: in 43 minutes, at 06:43
    assert tickets["used"] < tickets["limit"]
    assert tickets["hit_at"] == pd.Timestamp("2026-11-20 06:42:58", tz=UTC)

    # And so it goes: the day's points, listed at midnight, cross at 19:22.
    midnight = dt.datetime(2026, 11, 21, tzinfo=dt.timezone.utc)
    with Emulator(demo=True, seed=2026, clock=midnight) as emu, emu.client() as client:
        day = sk.throughput_frame(client.list_indexes())
    points = day[day["name"] == "code-snippets"].sort_values("time")
    crossed = points["time"][(points["value"] * 60).cumsum().to_numpy() >= 20_000].iloc[0]
    assert crossed == pd.Timestamp("2026-11-20 19:22:00.009235", tz=UTC)
    morning_points = points[points["time"] < pd.Timestamp(morning)]
    assert snippets["used"] == pytest.approx((morning_points["value"] * 60).sum(), rel=1e-12)
    assert snippets["hit_at_earliest"] <= crossed <= snippets["hit_at_latest"]


def test_a_history_forecasts_the_same_as_the_index_list_it_was_collected_from(tmp_path):
    # The History path reads stored files (sorted, one row per point, no sort needed);
    # the IndexList path bins the listed points: both must give the same rows.
    from searchkit.emulator import Emulator

    noon = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)
    with Emulator(demo=True, seed=5, clock=noon) as emu, emu.client() as client:
        indexes = client.list_indexes()
        hist = sk.History(str(tmp_path / "h"))
        hist.collect(client, indexes=indexes, now=emu.now())
        hist.collect(client, indexes=indexes, now=emu.now())  # a second write of each point
    for now in ("2026-11-20 06:00", "2026-11-20 11:30"):
        from_history = sk.forecast_limits(hist, now=now)
        from_list = sk.forecast_limits(indexes, now=now)
        assert from_history["projected"].notna().any()
        pd.testing.assert_frame_equal(
            from_history.astype({"name": str}), from_list.astype({"name": str})
        )


@pytest.mark.parametrize(
    ("now", "window"),
    [("2026-03-28 02:00", "1h"), ("2026-03-28 13:30", "5h"), ("2026-03-24 19:10", "3h")],
)
def test_the_days_before_any_complete_one_change_no_number(monkeypatch, now, window):
    # forecast_limits works the profile over the days from the first one some index
    # completed; over all the days it reads (NaN-only windows before that) it must say
    # exactly the same, with an index whose first day is partial beside a full one.
    start = dt.datetime(2026, 3, 20, tzinfo=dt.timezone.utc)
    late = dt.datetime(2026, 3, 22, 15, 7, tzinfo=dt.timezone.utc)
    raw = [
        raw_index("docs", minutes=9 * 1440, seed=1, start=start, plan="free"),
        raw_index("late", minutes=6 * 1440, seed=2, start=late, plan="free"),
    ]
    trimmed = sk.forecast_limits(raw, now=now, pace_window=window)
    monkeypatch.setattr(forecast, "_from_first_complete", lambda bins: (bins.ops, bins.cov))
    whole = sk.forecast_limits(raw, now=now, pace_window=window)
    assert trimmed["projected"].notna().all()
    pd.testing.assert_frame_equal(trimmed, whole, check_exact=True)


def test_a_throughput_frame_is_forecast_per_index_with_its_limit_said_missing():
    # A throughput frame is a source like the others (issue 26 item 4): it carries no
    # limits, so each index gets its forecast with limit NaN and the reason saying so,
    # as usage_frame does; before, the frame gave no row at all.
    raw = [
        index("steady", "2026-11-20 00:00", 360, 1.0, queries=10_000, updates=0),
        index("busy", "2026-11-20 00:00", 360, 3.0, queries=10_000, updates=0),
    ]
    frame = sk.throughput_frame(raw)
    got = sk.forecast_limits(frame, now="2026-11-20 06:00")
    want = sk.forecast_limits(raw, now="2026-11-20 06:00")

    assert got.index.tolist() == ["id-steady", "id-busy"]
    assert got["name"].tolist() == ["steady", "busy"]
    assert got["used"].tolist() == want["used"].tolist() == [21_600.0, 64_800.0]
    assert got["projected"].tolist() == want["projected"].tolist()
    assert got["limit"].isna().all() and want["limit"].tolist() == [10_000.0, 10_000.0]
    assert got["reason"].tolist() == ["the service did not report this limit"] * 2
    assert got["hit_at"].isna().all()
