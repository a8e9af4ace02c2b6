"""Test data for the analytics tests: Go time texts and realistic raw API JSON.

Independent of searchkit on purpose: texts are rendered and instants computed with the
standard library only (``zoneinfo``, ``calendar``), so the parser is checked against a
second implementation rather than against itself.
"""

from __future__ import annotations

import calendar
import datetime as dt
import math
import random
import uuid
import zoneinfo
from typing import Any

#: Zones with every kind of offset and zone name: letters, numeric names, half and
#: quarter hours, DST on both hemispheres, and +13/+14 beyond the usual range.
ZONES = (
    "UTC",
    "Europe/Berlin",  # CET/CEST
    "America/St_Johns",  # NST/NDT, -0330/-0230
    "Asia/Kathmandu",  # +0545, numeric name
    "America/Sao_Paulo",  # -03, numeric name
    "Asia/Kolkata",  # IST +0530
    "Australia/Adelaide",  # ACST/ACDT +0930/+1030
    "Australia/Eucla",  # +0845, numeric name
    "Pacific/Chatham",  # +1245/+1345, numeric name
    "Pacific/Marquesas",  # -0930, numeric name
    "Asia/Tehran",  # +0330, numeric name
    "Pacific/Kiritimati",  # +14
    "America/Los_Angeles",  # PST/PDT
    "Pacific/Honolulu",  # HST -1000
)


def go_format(
    when: dt.datetime, nanosecond: int | None = None, *, monotonic: str | None = None
) -> str:
    """Render an aware datetime as Go's ``time.Time.String()`` does.

    ``nanosecond`` (0-999999999) replaces the microseconds of ``when``; the fraction loses
    its trailing zeros and its dot when zero; the zone name is ``tzname()`` or, when that is
    empty, the numeric offset (as Go prints it).
    """
    if nanosecond is None:
        nanosecond = when.microsecond * 1000
    offset = when.utcoffset()
    assert offset is not None, "go_format needs an aware datetime"
    minutes = int(offset.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    hh, mm = divmod(abs(minutes), 60)
    numeric = f"{sign}{hh:02d}{mm:02d}"
    digits = f"{nanosecond:09d}".rstrip("0")
    fraction = f".{digits}" if digits else ""
    zone = when.tzname() or numeric
    text = f"{when:%Y-%m-%d %H:%M:%S}{fraction} {numeric} {zone}"
    return f"{text} m={monotonic}" if monotonic else text


def epoch_nanos(when: dt.datetime, nanosecond: int | None = None) -> int:
    """Return the instant of ``when`` (with ``nanosecond``) as integer epoch nanoseconds."""
    if nanosecond is None:
        nanosecond = when.microsecond * 1000
    return calendar.timegm(when.utctimetuple()) * 1_000_000_000 + nanosecond


def throughput_points(
    zone: str,
    *,
    start: dt.datetime,
    minutes: int,
    seed: int = 0,
    scale: float = 100.0,
) -> list[dict[str, Any]]:
    """Per-minute points with a daily shape, noise, zeros and a few nulls, as Go texts."""
    rng = random.Random(seed)
    tz = zoneinfo.ZoneInfo(zone)
    peak = rng.uniform(0, 24)
    points = []
    for minute in range(minutes):
        instant = start + dt.timedelta(minutes=minute)
        nanosecond = rng.choice([0, 0, rng.randrange(1000) * 1_000_000, rng.randrange(10**9)])
        hour = instant.hour + instant.minute / 60
        daily = 1 + 0.6 * math.cos(2 * math.pi * (hour - peak) / 24)
        value: float | None = round(scale * daily * rng.uniform(0.85, 1.15), 2)
        if minute % 337 == 5:
            value = 0
        elif minute % 911 == 7:
            value = None
        points.append({"x": go_format(instant.astimezone(tz), nanosecond), "y": value})
    return points


#: Limits per plan (the emulator's presets are its own; these only need to look real).
PLAN_LIMITS: dict[str, dict[str, int]] = {
    "free": {
        "max_vector_count": 10_000,
        "max_monthly_reranks": 100,
        "max_daily_updates": 10_000,
        "max_daily_queries": 10_000,
        "max_monthly_bandwidth": 50_000_000_000,
        "max_writes_per_second": 1_000,
        "max_query_per_second": 1_000,
        "max_reads_per_request": 1_000,
        "max_writes_per_request": 1_000,
    },
    "payg": {
        "max_vector_count": 200_000_000,
        "max_monthly_reranks": -1,
        "max_daily_updates": -1,
        "max_daily_queries": -1,
        "max_monthly_bandwidth": -1,
        "max_writes_per_second": 1_000,
        "max_query_per_second": 1_000,
        "max_reads_per_request": 1_000,
        "max_writes_per_request": 1_000,
    },
    "fixed": {
        "max_vector_count": 2_000_000,
        "max_monthly_reranks": 1_000_000,
        "max_daily_updates": 2_000_000,
        "max_daily_queries": 50_000_000,
        "max_monthly_bandwidth": 200_000_000_000,
        "max_writes_per_second": 5_000,
        "max_query_per_second": 5_000,
        "max_reads_per_request": 1_000,
        "max_writes_per_request": 1_000,
    },
}


def raw_index(
    name: str,
    *,
    plan: str = "payg",
    region: str = "eu-west-1",
    zone: str = "UTC",
    minutes: int = 60,
    seed: int = 0,
    start: dt.datetime | None = None,
    **overrides: Any,
) -> dict[str, Any]:
    """Return one index as the list operation's JSON would carry it."""
    rng = random.Random(f"{name}-{seed}")
    start = start or dt.datetime(2026, 3, 28, 12, 0, tzinfo=dt.timezone.utc)
    index: dict[str, Any] = {
        "customer_id": "user@example.com",
        "id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "name": name,
        "endpoint": f"{name}-{rng.randint(10000, 99999)}-eu1",
        "type": plan,
        "region": region,
        "partner_email": "",
        "token": f"tok-{rng.getrandbits(64):016x}",
        "read_only_token": f"ro-{rng.getrandbits(64):016x}",
        **PLAN_LIMITS.get(plan, PLAN_LIMITS["payg"]),
        "creation_time": 1_767_225_600 + rng.randrange(10_000_000),
        "input_enrichment_enabled": True,
        "throughput_vector": throughput_points(
            zone, start=start, minutes=minutes, seed=seed, scale=10 ** rng.uniform(1, 3)
        ),
    }
    index.update(overrides)
    return index


def realistic_indexes(minutes: int = 1440) -> list[dict[str, Any]]:
    """Five indexes over one day per minute, in five zones, with every kind of limit."""
    return [
        raw_index("docs-search", plan="payg", zone="UTC", minutes=minutes, seed=1),
        raw_index(
            "product-catalog",
            plan="fixed",
            region="us-central1",
            zone="America/St_Johns",
            minutes=minutes,
            seed=2,
        ),
        raw_index("support-tickets", plan="free", zone="Europe/Berlin", minutes=minutes, seed=3),
        raw_index(
            "code-snippets",
            plan="free",
            zone="Asia/Kathmandu",
            minutes=minutes,
            seed=4,
            max_daily_queries=0,
        ),
        raw_index(
            "legal-contracts",
            plan="paid",
            region="ap-south-2",
            zone="America/Sao_Paulo",
            minutes=minutes,
            seed=5,
            max_daily_queries=None,
        ),
    ]
