"""Issue 28 items 1 and 2: a period is compared only with the limit of that period, and
unlimited is no 0%.

A daily limit beside a week, an hour or a New York day is a number that misleads: those rows
keep their operations, no limit and no utilization, and ``reason`` says why. An unlimited
index has no share of a limit used: NaN and "unlimited", never 0.0.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import searchkit as sk
from searchkit.cli.forecast import forecast_text
from tests.analytics.test_usage import index

DAILY = "max_daily_queries+max_daily_updates"


def two_weeks():
    """A limited index (60,000 a day) at 1 op/s and an unlimited one, 2026-11-16 .. 11-29."""
    minutes = 14 * 1440
    return [
        index("limited", "2026-11-16 00:00", minutes, 1.0, every=1),
        index("unlimited", "2026-11-16 00:00", minutes, 2.0, queries=-1, updates=-1),
    ]


def test_utc_days_are_compared_with_the_daily_limit():
    usage = sk.usage_frame(two_weeks())
    limited = usage[usage["name"] == "limited"]
    assert limited["limit"].unique().tolist() == [60_000.0]
    assert limited["utilization"].unique().tolist() == [86_400 / 60_000]
    assert limited["breached"].all()
    assert limited["reason"].unique().tolist() == [""]


def test_unlimited_is_no_share_of_a_limit_not_zero():
    usage = sk.usage_frame(two_weeks())
    free = usage[usage["name"] == "unlimited"]
    assert len(free) == 14
    assert free["limit"].tolist() == [math.inf] * 14  # the limit is unlimited: a number
    assert free["utilization"].isna().all()  # it was 0.0
    assert not free["breached"].any()
    assert free["reason"].unique().tolist() == ["unlimited"]
    assert free["operations"].unique().tolist() == [2.0 * 86_400]


def test_weeks_keep_their_operations_and_no_daily_limit():
    usage = sk.usage_frame(two_weeks(), freq="W")
    limited = usage[usage["name"] == "limited"]
    # Weeks from Sunday's midnight, labelled by their start like days (the one period rule)
    assert limited["period"].tolist() == [
        pd.Timestamp("2026-11-15", tz="UTC"),
        pd.Timestamp("2026-11-22", tz="UTC"),
        pd.Timestamp("2026-11-29", tz="UTC"),
    ]
    assert limited["operations"].tolist() == [6 * 86_400.0, 7 * 86_400.0, 86_400.0]
    # A week's operations are never set beside a daily limit (it showed 7.29, "breached")
    assert limited["limit"].isna().all() and limited["utilization"].isna().all()
    assert not usage["breached"].any()
    assert usage["reason"].unique().tolist() == [
        f"{DAILY} is a limit per UTC day; these periods are W-SUN"
    ]


def test_hours_are_not_compared_with_a_daily_limit():
    usage = sk.usage_frame(two_weeks(), freq="h")
    assert usage["limit"].isna().all() and usage["utilization"].isna().all()
    assert not usage["breached"].any()
    assert usage["reason"].unique().tolist() == [
        f"{DAILY} is a limit per UTC day; these periods are h"
    ]
    assert usage["period"].iloc[0] == pd.Timestamp("2026-11-16 00:00", tz="UTC")


def test_new_york_days_are_not_compared_with_a_limit_that_resets_at_utc_midnight():
    usage = sk.usage_frame(two_weeks(), tz="America/New_York")
    assert usage["period"].iloc[0] == pd.Timestamp("2026-11-15", tz="America/New_York")
    assert usage["limit"].isna().all() and usage["utilization"].isna().all()
    assert not usage["breached"].any()
    assert usage["reason"].unique().tolist() == [
        f"{DAILY} resets at UTC midnight; these days start at midnight in America/New_York"
    ]


def test_a_monthly_limit_is_compared_with_utc_months_labelled_by_their_first_day():
    raw = [index("m", "2026-11-16 00:00", 14 * 1440, 1.0, max_monthly_reranks=2_000_000)]
    usage = sk.usage_frame(raw, freq="MS", field="max_monthly_reranks")
    assert usage["period"].tolist() == [pd.Timestamp("2026-11-01", tz="UTC")]
    assert usage["limit"].tolist() == [2_000_000.0]
    assert usage["utilization"].tolist() == [14 * 86_400 / 2_000_000]
    assert usage["reason"].tolist() == [""]
    daily = sk.usage_frame(raw, field="max_monthly_reranks")
    assert daily["limit"].isna().all()
    assert (
        daily["reason"].iloc[0]
        == "max_monthly_reranks is a limit per UTC month; these periods are D"
    )


def test_a_size_or_rate_limit_is_never_beside_operations():
    usage = sk.usage_frame(two_weeks(), field="max_vector_count")
    assert usage["utilization"].isna().all()
    assert usage["reason"].unique().tolist() == [
        "max_vector_count is not a number of operations per period"
    ]


def test_the_forecast_of_an_unlimited_index_is_no_share_and_says_unlimited():
    now = pd.Timestamp("2026-11-29 12:00", tz="UTC")
    forecast = sk.forecast_limits(two_weeks(), now=now).set_index("name")
    free = forecast.loc["unlimited"]
    assert free["limit"] == math.inf
    assert np.isnan(free["projected_utilization"])  # it was 0.0
    assert free["reason"].split("; ")[0] == "unlimited"
    assert forecast.loc["limited", "projected_utilization"] == pytest.approx(86_400 / 60_000)
    assert not forecast.loc["limited", "reason"].startswith("unlimited")
    # The command line shows "unlimited" where the share would be, and no note for it.
    lines = forecast_text(forecast.reset_index()).splitlines()
    (row,) = [line for line in lines if line.startswith("unlimited ")]
    assert row.split()[-3:] == ["unlimited", "unlimited", "—"]
    assert (
        not any("unlimited" in line for line in lines[lines.index("notes:") :])
        if ("notes:" in lines)
        else True
    )
