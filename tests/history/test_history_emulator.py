"""The emulator features that make usage history testable: stable minutes, window, clock."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

import searchkit as sk
from searchkit.emulator import Emulator, data


def pd_ts(text: str) -> pd.Timestamp:
    return pd.Timestamp(text, tz="UTC")


NOON = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)


def _points(emu: Emulator, name: str) -> dict[str, float]:
    with emu.client() as client:
        index = client.list_indexes().by_name(name)
    return {p["x"]: p["y"] for p in index.throughput.points()}


def test_a_minute_has_the_same_value_whenever_it_is_listed():
    with Emulator(demo=True, seed=5, clock=NOON) as emu:
        before = _points(emu, "docs-search")
        emu.advance(7 * 3600 + 17)
        after = _points(emu, "docs-search")
    shared = before.keys() & after.keys()
    assert len(shared) == 1440 - 7 * 60
    assert {x: before[x] for x in shared} == {x: after[x] for x in shared}


def test_advance_moves_the_window_and_now():
    with Emulator(demo=True, seed=5, clock=NOON, window_minutes=90) as emu:
        assert emu.now() == NOON.timestamp()
        assert emu.advance(600) == NOON.timestamp() + 600
        with emu.client() as client:
            frame = sk.throughput_frame(client.list_indexes().by_name("docs-search"))
    assert len(frame) == 90
    assert frame["time"].min().floor("min") == pd_ts("2026-11-20 10:40")
    assert frame["time"].max().floor("min") == pd_ts("2026-11-20 12:09")


def test_advance_refuses_going_backwards():
    with Emulator(clock=NOON) as emu, pytest.raises(ValueError, match="non-negative"):
        emu.advance(-1)


def test_advance_works_on_the_real_clock():
    emu = Emulator()
    try:
        start = emu.now()
        assert emu.advance(86_400) - start >= 86_400
    finally:
        emu.stop()


@pytest.mark.parametrize("seed", [None, 1, 2026])
def test_demo_has_an_index_past_its_daily_limit_and_one_on_course(seed):
    day_start = dt.datetime(2026, 11, 20, tzinfo=dt.timezone.utc)
    with Emulator(demo=True, seed=seed, clock=day_start, window_minutes=2880) as emu:
        emu.advance(86_400)  # the window now holds exactly 2026-11-20
        with emu.client() as client:
            indexes = client.list_indexes()
    frame = sk.throughput_frame(indexes)
    limits = sk.limits_frame(indexes)
    daily = limits["max_daily_queries"] + limits["max_daily_updates"]
    today = frame[frame["time"] >= pd_ts("2026-11-20")]
    # A value is operations per second, sampled once a minute.
    used = (today["value"] * 60).groupby(today["index_id"], observed=True).cumsum()
    crossed = today.assign(used=used.to_numpy())
    crossed = crossed[crossed["used"].to_numpy() > daily.loc[crossed["index_id"]].to_numpy()]
    first = crossed.groupby("name", observed=True)["time"].min()
    assert first["support-tickets"] < pd_ts("2026-11-20 00:15")
    assert pd_ts("2026-11-20 14:00") < first["code-snippets"] < pd_ts("2026-11-20 23:59")


def test_serve_accepts_window_minutes():
    from searchkit.cli.parser import build_parser

    args = build_parser().parse_args(["serve", "--window-minutes", "60"])
    assert args.window_minutes == 60


def test_demo_series_seed_is_none_for_indexes_without_a_target():
    assert data.demo_series_seed("docs-search", "payg") is None
