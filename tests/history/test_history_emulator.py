"""The emulator features that make usage history testable: stable minutes, window, clock."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

import searchkit as sk
from searchkit.emulator import Emulator, demo


def pd_ts(text: str) -> pd.Timestamp:
    return pd.Timestamp(text, tz="UTC")


NOON = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)


def _points(emu: Emulator, name: str) -> dict[str, float]:
    with emu.client() as client:
        index = client.list_indexes().by_name(name)
    return {p.x: p.y for p in index.throughput_vector}


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


# Where the demo indexes sit against their limits: tests/emulator/test_emulator_demo_story.py


def test_serve_accepts_window_minutes():
    from searchkit.cli.parser import build_parser

    args = build_parser().parse_args(["serve", "--window-minutes", "60"])
    assert args.window_minutes == 60


def test_demo_series_seed_is_none_for_indexes_without_a_target():
    assert demo.demo_series_seed("docs-search", "payg") is None
