"""Forecasts of stores the attack run broke (issue 29 items 8, 9, 15), on History files."""

from __future__ import annotations

import pandas as pd
import pytest

import searchkit as sk
from searchkit.emulator import Emulator
from tests.analytics.test_forecast import days_of

pytestmark = pytest.mark.filterwarnings("error::pandas.errors.Pandas4Warning")


def stored(tmp_path, *raw: dict) -> sk.History:
    """A History on disk holding ``raw`` indexes' points, collected once."""
    hist = sk.History(str(tmp_path / "usage"))
    with Emulator() as emu, emu.client() as client:
        hist.collect(client, indexes=sk.IndexList.from_json(list(raw)), now="2026-11-18 10:00")
    return hist


def test_one_minute_spike_on_a_young_store_keeps_the_band_in_proportion(tmp_path):
    # 9 days of a steady 1 op/s (86,400 a day), one minute of 10^8 op/s on 2026-11-12.
    spiky = days_of("spiky", 9, lambda hour, when: 1.0, today_until=10, every=1)
    for point in spiky["throughput_vector"]:
        if point["x"].startswith("2026-11-12 14:03:00"):
            point["y"] = 1e8
    hist = stored(tmp_path, spiky)

    row = sk.forecast_limits(hist, now="2026-11-18 10:00").loc["id-spiky"]

    assert (row["used"], row["projected"]) == (36_000.0, 86_400.0)
    assert (row["projected_low"], row["projected_high"]) == (86_400.0, 86_400.0)
    assert pd.isna(row["hit_at_earliest"])  # the limit is 100,000: not hit, even at the top
    assert row["method"] == "profile+weekly"


def test_an_all_zero_index_is_forecast_zero_by_its_profile_and_says_it_is_idle(tmp_path):
    idle = days_of("idle", 9, lambda hour, when: 0.0, today_until=10)
    hist = stored(tmp_path, idle)

    row = sk.forecast_limits(hist, now="2026-11-18 10:00").loc["id-idle"]

    assert (row["used"], row["projected"], row["projected_high"]) == (0.0, 0.0, 0.0)
    assert row["method"] == "profile"
    assert row["reason"] == (
        "idle: the last 7 complete day(s) had no operations; the rest of the day is forecast 0"
    )


def test_an_idle_index_busy_today_is_forecast_at_its_pace_and_says_why(tmp_path):
    idle = days_of("woke", 9, lambda hour, when: 0.0, today_until=10)
    for point in idle["throughput_vector"][-12:]:  # the last hour of today: 2 op/s
        point["y"] = 2.0
    hist = stored(tmp_path, idle)

    row = sk.forecast_limits(hist, now="2026-11-18 10:00").loc["id-woke"]

    assert row["method"] == "pace"
    assert (row["used"], row["projected"]) == (7_200.0, 7_200.0 + 2.0 * 14 * 3600)
    assert row["reason"] == (
        "idle: the last 7 complete day(s) had no operations; today has some: the rest of "
        "the day at the pace of the last 1 h, band 0.5x-2x"
    )


def test_a_now_before_the_first_point_says_the_points_come_after_it(tmp_path):
    steady = days_of("steady", 2, lambda hour, when: 1.0, start="2026-11-16", today_until=10)
    hist = stored(tmp_path, steady)

    from_history = sk.forecast_limits(hist, now="2026-11-01 10:00").loc["id-steady"]
    from_list = sk.forecast_limits([steady], now="2026-11-01 10:00").loc["id-steady"]

    assert from_history["reason"] == (
        "no throughput points before now (2026-11-01 10:00 UTC); the history holds points "
        "after it, up to 2026-11-18 09:55 UTC: give a later now, or none for the present"
    )
    assert from_list["reason"] == (
        "no throughput points before now (2026-11-01 10:00 UTC); 696 point(s) after it: "
        "give a later now, or none for the present"
    )
    assert pd.isna(from_history["projected"]) and pd.isna(from_list["projected"])
