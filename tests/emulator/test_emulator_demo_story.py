"""Issue 28 item 12: new indexes start at zero; the demo indexes sit around their limits.

A new index has no traffic before it exists. The demo's free indexes tell one story on any
day (one past its daily limit from the morning, one crossing it in the evening, one under
it), its unlimited ones are busy, so a forecast, an alert and a backtest have something to
say.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

import searchkit as sk
from searchkit.emulator import Emulator

UTC = dt.timezone.utc
DEMO_DAY = dt.datetime(2026, 11, 20, tzinfo=UTC)
LIMIT = 20_000  # a free index's max_daily_queries + max_daily_updates


def ts(text: str) -> pd.Timestamp:
    return pd.Timestamp(text, tz="UTC")


def test_a_new_index_starts_at_zero_operations():
    created = dt.datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
    with Emulator(clock=created, seed=3) as emu, emu.client() as client:
        client.create_index("fresh", region="eu-west-1", type="payg")
        emu.advance(120)  # two minutes later
        index = client.list_indexes()["fresh"]
    frame = sk.throughput_frame(index)
    before = frame[frame["time"] < ts("2026-11-20 12:00")]
    after = frame[frame["time"] >= ts("2026-11-20 12:00")]
    assert len(before) == 1438 and (before["value"] == 0.0).all()
    assert len(after) == 2 and (after["value"] > 0).all()
    usage = sk.usage_frame(index)
    today = usage[usage["period"] == ts("2026-11-20")]
    # Two minutes of traffic, nothing from before the index existed (it was 9.7M).
    assert today["operations"].tolist() == [60.0 * after["value"].sum()]


def _crossings(indexes: sk.IndexList, day: dt.datetime) -> tuple[pd.Series, pd.Series]:
    """(operations on ``day``, the instant each index passed the free limit) by name."""
    frame = sk.throughput_frame(indexes)
    start = pd.Timestamp(day)
    frame = frame[(frame["time"] >= start) & (frame["time"] < start + pd.Timedelta(days=1))]
    frame = frame.assign(name=frame["name"].astype(str))
    used = (frame["value"] * 60).groupby(frame["name"]).cumsum()
    total = used.groupby(frame["name"]).max()
    first = frame[used.to_numpy() > LIMIT].groupby("name")["time"].min()
    return total, first


@pytest.mark.parametrize("seed", [None, 1, 2026])
def test_the_demo_indexes_sit_around_their_limits_the_way_real_ones_do(seed):
    with Emulator(demo=True, seed=seed, clock=DEMO_DAY, window_minutes=2880) as emu:
        emu.advance(86_400)  # the window now holds exactly 2026-11-20
        with emu.client() as client:
            indexes = client.list_indexes()
    plans = {index.name: str(index.type) for index in indexes}
    assert sorted(n for n, p in plans.items() if p == "free") == [
        "code-snippets",
        "product-catalog",
        "support-tickets",
    ]
    total, first = _crossings(indexes, DEMO_DAY)
    # Past its limit from the morning on, at a few times the limit (not 87 times).
    assert ts("2026-11-20 04:00") < first["support-tickets"] < ts("2026-11-20 07:30")
    assert 1.8 * LIMIT < total["support-tickets"] < 3.5 * LIMIT
    # Crossing it this evening.
    assert ts("2026-11-20 18:00") < first["code-snippets"] < ts("2026-11-20 23:00")
    assert 1.1 * LIMIT < total["code-snippets"] < 1.6 * LIMIT
    # Under it, but not far.
    assert "product-catalog" not in first.index
    assert 0.5 * LIMIT < total["product-catalog"] < LIMIT
    # The unlimited ones are busy: over 100,000 operations a day each.
    for name in ("docs-search", "news-archive", "legal-contracts"):
        assert total[name] > 100_000, name


@pytest.mark.slow  # two lists of 30 days
def test_the_under_index_stays_under_in_the_demo_week_and_goes_over_on_some_days():
    days = []
    for end in ("2026-11-12", "2026-12-12"):  # 60 days, 30 a list
        clock = dt.datetime.fromisoformat(end).replace(tzinfo=UTC)
        with Emulator(demo=True, seed=2026, clock=clock, window_minutes=30 * 1440) as emu:
            emu.advance(0)
            with emu.client() as client:
                index = client.list_indexes()["product-catalog"]
        usage = sk.usage_frame(index)
        days.append(usage[usage["complete"]].set_index("period")["operations"])
    daily = pd.concat(days) / LIMIT
    week = daily[ts("2026-11-13") : ts("2026-11-21")]
    assert len(week) == 9 and (week < 1).all()
    over = daily[daily > 1]
    assert 3 <= len(over) <= 15, over


def test_the_demo_forecast_warns_in_the_morning_of_the_breach_in_the_evening():
    morning = dt.datetime(2026, 11, 20, 8, 0, tzinfo=UTC)
    with Emulator(demo=True, seed=2026, clock=morning, window_minutes=8 * 1440) as emu:
        with emu.client() as client:
            forecast = sk.forecast_limits(client.list_indexes()).set_index("name")
    snippets = forecast.loc["code-snippets"]
    assert snippets["used"] < LIMIT < snippets["projected_low"]
    assert ts("2026-11-20 18:00") < snippets["hit_at"] < ts("2026-11-20 23:00")
    tickets = forecast.loc["support-tickets"]
    assert tickets["used"] > LIMIT and tickets["hit_at"] < ts("2026-11-20 08:00")
    catalog = forecast.loc["product-catalog"]
    assert catalog["projected"] < LIMIT and pd.isna(catalog["hit_at"])


def test_the_demo_backtest_tells_the_methods_apart():
    noon = dt.datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
    with Emulator(demo=True, seed=2026, clock=noon, window_minutes=12 * 1440) as emu:
        with emu.client() as client:
            summary = sk.backtest_forecast(client.list_indexes()).summary
    f1 = summary["f1"]
    # Not every method scores 1.00 (all did when the free indexes ran at 87 times their
    # limit): the index under its limit and the one crossing it in the evening are hard
    # calls early in the day.
    assert f1.min() < 0.95
    assert len(np.unique(f1.round(3))) >= 3
    assert f1["forecast"] == f1.max()
