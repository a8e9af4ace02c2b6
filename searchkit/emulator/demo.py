"""The demo set of the emulator: its indexes and where their traffic sits against limits.

Everything here is the emulator's invention (see :mod:`searchkit.emulator.data`): six
indexes of three plans whose synthetic traffic tells, on any day and for any emulator seed,
the story a forecast, an alert and a backtest can say something about.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

from searchkit.emulator.data import MINUTES_PER_DAY, PRESETS, THROUGHPUT_SCALE, Rhythm

__all__ = ["DEMO_INDEXES", "DEMO_TRAFFIC", "demo_series_seed"]

TAU = 2.0 * math.pi

_DAY = 86_400

# (name, region, type, zone, age in seconds, partner_email); oldest first so that the
# list order (by creation time) matches this table.
DEMO_INDEXES: tuple[tuple[str, str, str, str, int, str], ...] = (
    ("docs-search", "eu-west-1", "payg", "UTC", 412 * _DAY + 3_723, ""),
    ("product-catalog", "us-central1", "free", "America/New_York", 230 * _DAY + 51_002, ""),
    ("support-tickets", "eu-west-1", "free", "Europe/Berlin", 97 * _DAY + 7_777, ""),
    ("news-archive", "us-central1", "fixed", "UTC", 41 * _DAY + 30_303, "ops@example.com"),
    ("code-snippets", "us-central1", "free", "Asia/Kathmandu", 9 * _DAY + 12_345, ""),
    ("legal-contracts", "eu-west-1", "payg", "America/Sao_Paulo", 2 * _DAY + 4_321, ""),
)


# Where the demo's free indexes sit against their daily limits (queries + updates, 20,000
# operations; searchkit.analytics.usage reads a value as operations per second), the way a
# real account's do, so that forecasts, alerts and backtests have something to tell:
# "past": 1.8 to 3.2 times the limit a day, crossing it between 04:00 and 07:00 UTC on a
# usual day, so it is already past it from the morning on;
# "on course": 1.2 to 1.5 times it, crossing it in the evening (about 19:00-22:30 UTC), so a
# forecast warns in the morning, hours before the breach;
# "under": about 0.85-0.9 of it on weekdays (weekends quieter), with enough day-to-day
# variation that about one day in six goes over, late in the evening; under it on every day
# of the notebooks' demo week (2026-11-13 .. 2026-11-21), so that one index crosses on the
# demo day. The unlimited (payg, fixed) indexes are busy: 5 to 1,250 operations a second.
DEMO_TRAFFIC: Mapping[str, str] = MappingProxyType(
    {"support-tickets": "past", "code-snippets": "on course", "product-catalog": "under"}
)
#: The UTC days (epoch days) the "under" index stays under its limit on: the demo week.
_DEMO_WEEK = range(20_770, 20_779)


def _series_shape(series_seed: int, plan: str) -> tuple[float, float, float, Rhythm]:
    """Return (mean level, amplitude, peak, rhythm) of a series, as :class:`_ValuesBlock`
    draws them."""
    shape = random.Random(series_seed)
    base = 10 ** shape.uniform(0.7, 2.7) * THROUGHPUT_SCALE.get(plan, 1.0)
    amplitude, peak = shape.uniform(0.35, 0.8), shape.uniform(0.0, 1.0)
    shape.uniform(0.06, 0.2)  # noise
    shape.randrange(MINUTES_PER_DAY)  # the maintenance gap
    return base, amplitude, peak, Rhythm.draw(shape)


def _calm(rhythm: Rhythm) -> bool:
    """A rhythm steady enough for a demo story told on any day: weekends as weekdays,
    days within about 10% of each other, no trend or bursts to speak of."""
    return (
        rhythm.weekend >= 0.93
        and rhythm.spread <= 0.07
        and rhythm.trend <= 0.05
        and rhythm.burst_chance <= 0.2
    )


def _crossing_hour(level: float, amplitude: float, peak: float) -> float:
    """The UTC hour a day of mean rate ``level`` (in limits a day) crosses the limit.

    The daily curve is ``1 + amplitude * cos(2 pi (t - peak))`` (``t`` in days), so the
    share of a day's operations done by ``t`` is ``t + amplitude / (2 pi) * (sin(2 pi
    (t - peak)) + sin(2 pi peak))``; 24.0 when the day stays under.
    """
    for minute in range(MINUTES_PER_DAY + 1):
        t = minute / MINUTES_PER_DAY
        wave = math.sin(TAU * (t - peak)) + math.sin(TAU * peak)
        if level * (t + amplitude / TAU * wave) >= 1.0:
            return 24.0 * t
    return 24.0


def _fits(target: str, seed: int, plan: str, daily: int) -> bool:
    """Whether series ``seed`` tells the story of ``target`` (see :data:`DEMO_TRAFFIC`)."""
    base, amplitude, peak, rhythm = _series_shape(seed, plan)
    level = base * _DAY / daily  # the usual day, in limits
    if target == "past":
        return (
            _calm(rhythm)
            and 1.8 <= level <= 3.2
            and 4.0 <= _crossing_hour(level, amplitude, peak) <= 7.0
        )
    if target == "on course":
        return _calm(rhythm) and 1.2 <= level <= 1.5
    # "under": a weekday level just below the limit, days that vary, no slow trend; and the
    # demo week's days (their level factors, bursts counted in full) all under it.
    if not (0.85 <= level <= 0.9 and rhythm.spread >= 0.08 and rhythm.trend <= 0.05):
        return False
    for day in _DEMO_WEEK:
        factor, _, length, burst = rhythm.day(seed, day)
        if level * factor * (1.0 + (burst - 1.0) * length / MINUTES_PER_DAY) >= 0.97:
            return False
    return True


@lru_cache(maxsize=64)
def demo_series_seed(name: str, plan: str) -> int | None:
    """Return the series seed giving demo index ``name`` its :data:`DEMO_TRAFFIC`, if any.

    Seeds are drawn from a generator keyed by the name until one tells the index's story
    (:func:`_fits`), so the demo's free indexes show the same usage whatever the emulator's
    seed.

    Args:
        name: A demo index name.
        plan: Its type, whose preset holds the daily limits.

    Returns:
        The seed, or ``None`` for an index without a traffic target.
    """
    target = DEMO_TRAFFIC.get(name)
    if target is None:
        return None
    daily = PRESETS[plan]["max_daily_queries"] + PRESETS[plan]["max_daily_updates"]
    draw = random.Random(f"searchkit-demo-series:{name}")
    while True:
        seed = draw.getrandbits(63)
        if _fits(target, seed, plan, daily):
            return seed
