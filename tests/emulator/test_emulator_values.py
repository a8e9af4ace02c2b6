"""Throughput values: fixed per (series, minute) however windows ask for them."""

from __future__ import annotations

import random

import pytest

from searchkit.emulator import data

MIDNIGHT = 1440 * 20_001  # an epoch minute starting a UTC day (and a block)


@pytest.fixture(autouse=True)
def cold_values():
    data._values_block.cache_clear()
    yield
    data._values_block.cache_clear()


def test_values_around_midnight_are_the_ones_the_emulator_always_gave():
    # Pinned from the generator since it has a day-to-day rhythm (issue 16): each UTC day
    # its own level, so midnight is a step; the values of a minute never change after.
    assert list(data._values(77, MIDNIGHT - 3, 6, 1.0)) == [
        267.44,
        242.79,
        222.88,
        120.67,
        157.1,
        126.32,
    ]
    assert list(data._values(2**63 + 5, MIDNIGHT - 3, 6, 0.05)) == [
        1.99,
        2.0,
        2.01,
        0.79,
        0.81,
        0.78,
    ]


def test_a_window_across_midnight_computes_only_its_own_points():
    data._values(77, MIDNIGHT - 600, 1440, 1.0)
    before = data._values_block(77, MIDNIGHT // 1440 - 1, 1.0)
    after = data._values_block(77, MIDNIGHT // 1440, 1.0)
    assert (before.lo, before.hi, len(before.values)) == (840, 1440, 600)
    assert (after.lo, after.hi, len(after.values)) == (0, 840, 840)
    data._values(77, MIDNIGHT - 599, 1440, 1.0)  # a minute later: one more point
    assert (after.lo, after.hi, len(after.values)) == (0, 841, 841)


def test_values_do_not_depend_on_the_windows_asked_before():
    rng = random.Random(4)
    windows = [
        (seed, MIDNIGHT + rng.randrange(-3000, 3000), rng.randrange(1, 2000))
        for seed in (3, 2**62 + 11)
        for _ in range(60)
    ]
    warm = [list(data._values(seed, first, count, 1.0)) for seed, first, count in windows]
    for (seed, first, count), values in zip(windows, warm, strict=True):
        data._values_block.cache_clear()
        assert list(data._values(seed, first, count, 1.0)) == values
    # And each minute has one value whichever window holds it.
    data._values_block.cache_clear()
    whole = list(data._values(3, MIDNIGHT - 3000, 8000, 1.0))
    for seed, first, count in windows:
        if seed == 3:
            offset = first - (MIDNIGHT - 3000)
            assert list(data._values(3, first, count, 1.0)) == whole[offset : offset + count]
