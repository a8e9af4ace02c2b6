"""Plan presets, identifier generation and synthetic throughput for the emulator.

Everything here is the emulator's invention. The limit presets in particular are NOT the
real service's values (SPEC.md does not show them); they are chosen to look plausible and to
exercise clients: ``-1`` (unlimited) in several fields, a ``0`` (reranking is not part of the
free plan), and values spanning five orders of magnitude, one beyond 32-bit integers.

Randomness comes from :func:`rng_for`: a ``random.Random`` keyed by the emulator's seed and
a purpose string when a seed is given (so runs repeat exactly), else the operating system's
generator. Throughput is a pure function of an index's series seed and the clock, rendered
in Go's ``time.Time.String()`` layout.
"""

from __future__ import annotations

import math
import random
import string
import sys
import threading
import uuid
from array import array
from collections.abc import Iterator, Mapping
from datetime import datetime, tzinfo
from functools import lru_cache
from types import MappingProxyType
from typing import Any, NamedTuple
from zoneinfo import ZoneInfo

__all__ = [
    "LIMIT_FIELDS",
    "MINUTES_PER_DAY",
    "PRESETS",
    "REGIONS",
    "REGION_CODES",
    "THROUGHPUT_SCALE",
    "TYPES",
    "Rhythm",
    "ThroughputVector",
    "format_go_time",
    "new_endpoint",
    "new_password",
    "new_token",
    "new_uuid",
    "rng_for",
    "throughput_json",
    "throughput_vector",
]

REGIONS: tuple[str, ...] = ("eu-west-1", "us-central1")
TYPES: tuple[str, ...] = ("free", "payg", "fixed")
REGION_CODES: Mapping[str, str] = MappingProxyType({"eu-west-1": "eu1", "us-central1": "us1"})

LIMIT_FIELDS: tuple[str, ...] = (
    "max_vector_count",
    "max_monthly_reranks",
    "max_daily_updates",
    "max_daily_queries",
    "max_monthly_bandwidth",
    "max_writes_per_second",
    "max_query_per_second",
    "max_reads_per_request",
    "max_writes_per_request",
)

PRESETS: Mapping[str, Mapping[str, int]] = MappingProxyType(
    {
        "free": MappingProxyType(
            {
                "max_vector_count": 10_000,
                "max_monthly_reranks": 0,
                "max_daily_updates": 10_000,
                "max_daily_queries": 10_000,
                "max_monthly_bandwidth": 50_000_000_000,
                "max_writes_per_second": 1_000,
                "max_query_per_second": 1_000,
                "max_reads_per_request": 1_000,
                "max_writes_per_request": 1_000,
            }
        ),
        "payg": MappingProxyType(
            {
                "max_vector_count": 2_000_000_000,
                "max_monthly_reranks": -1,
                "max_daily_updates": -1,
                "max_daily_queries": -1,
                "max_monthly_bandwidth": -1,
                "max_writes_per_second": 10_000,
                "max_query_per_second": 10_000,
                "max_reads_per_request": 1_000,
                "max_writes_per_request": 1_000,
            }
        ),
        "fixed": MappingProxyType(
            {
                "max_vector_count": 100_000_000,
                "max_monthly_reranks": 1_000_000,
                "max_daily_updates": -1,
                "max_daily_queries": -1,
                "max_monthly_bandwidth": -1,
                "max_writes_per_second": 5_000,
                "max_query_per_second": 5_000,
                "max_reads_per_request": 5_000,
                "max_writes_per_request": 5_000,
            }
        ),
    }
)

# Relative traffic level per plan, so free indexes look quieter than paid ones in plots. Read as
# operations per second (the unit assumption of searchkit.frames.counting), a free index then does
# 0.015 to 1.5 operations a second: from a fifteenth of its daily limits (queries + updates,
# 20,000 operations) to six and a half times them, two thirds of them for the median index, as
# the free indexes of a real account mostly stay under their limits and a few outgrow them.
THROUGHPUT_SCALE: Mapping[str, float] = MappingProxyType({"free": 0.003, "payg": 1.0, "fixed": 2.5})

_ADJECTIVES = (
    "amber", "bold", "brave", "calm", "clever", "cosmic", "crisp", "daring", "eager", "fancy",
    "gentle", "golden", "happy", "honest", "jolly", "keen", "lively", "lucky", "merry", "mighty",
    "nimble", "noble", "polite", "proud", "quick", "quiet", "rapid", "shiny", "smart", "steady",
    "sunny", "swift", "tidy", "upbeat", "vivid", "warm", "wise", "witty", "young", "zesty",
)  # fmt: skip
_ANIMALS = (
    "badger", "beagle", "bison", "camel", "cobra", "condor", "crane", "dingo", "eagle", "ferret",
    "finch", "gecko", "heron", "hornet", "ibex", "jackal", "koala", "lemur", "lynx", "macaw",
    "marlin", "mole", "moose", "newt", "ocelot", "orca", "otter", "panda", "puffin", "quail",
    "raven", "salmon", "seal", "shrew", "sloth", "tapir", "toucan", "walrus", "wombat", "yak",
)  # fmt: skip
_TOKEN_ALPHABET = string.ascii_letters + string.digits + "-_"


def rng_for(seed: int | str | None, *purpose: object) -> random.Random:
    """Return the random generator for one purpose (an index, an account, a password).

    Args:
        seed: The emulator's seed; ``None`` means cryptographically random output.
        *purpose: Values naming what the generator is for, e.g. ``("index", 7)``.

    Returns:
        A ``random.Random`` seeded from ``seed`` and ``purpose`` (string seeding is stable
        across processes and Python versions), or a ``random.SystemRandom`` without a seed.
    """
    if seed is None:
        return random.SystemRandom()
    key = ":".join(str(part) for part in ("searchkit-emulator", seed, *purpose))
    return random.Random(key)


def new_uuid(rng: random.Random) -> str:
    """Return a version-4 UUID string drawn from ``rng``."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def new_token(rng: random.Random, length: int = 64) -> str:
    """Return a URL-safe token of ``length`` characters drawn from ``rng``."""
    return "".join(rng.choice(_TOKEN_ALPHABET) for _ in range(length))


def new_password(rng: random.Random) -> str:
    """Return a strong generated account password (32 URL-safe characters)."""
    return new_token(rng, 32)


def new_endpoint(rng: random.Random, region: str) -> str:
    """Return an endpoint name such as ``proud-otter-12345-eu1``.

    Args:
        rng: The generator to draw from.
        region: A region from :data:`REGIONS`; its short code ends the name.

    Returns:
        ``<adjective>-<animal>-<5 digits>-<region code>``.
    """
    code = REGION_CODES.get(region, "xx1")
    return f"{rng.choice(_ADJECTIVES)}-{rng.choice(_ANIMALS)}-{rng.randint(10000, 99999)}-{code}"


def format_go_time(epoch_ns: int, zone: tzinfo) -> str:
    """Render an instant the way Go's ``time.Time.String()`` does (without the monotonic part).

    The layout is ``2006-01-02 15:04:05.999999999 -0700 MST``: the fraction has its
    trailing zeros trimmed and disappears with its dot when it is zero; the offset ignores
    seconds, as Go's ``-0700`` does; the zone abbreviation comes from the tz database, so
    zones without a lettered one print a numeric label such as ``+0545`` or ``-03``.

    Args:
        epoch_ns: Nanoseconds since the Unix epoch, as an integer (never a float, which
            cannot carry nanoseconds at today's magnitudes).
        zone: The zone to render in, e.g. ``ZoneInfo("Asia/Kathmandu")``.

    Returns:
        The text, e.g. ``2024-05-01 12:15:00.25 +0545 +0545``.
    """
    seconds, nanos = divmod(epoch_ns, 1_000_000_000)
    local = datetime.fromtimestamp(seconds, zone)
    offset = local.utcoffset()
    offset_seconds = int(offset.total_seconds()) if offset is not None else 0
    # Go divides with truncation toward zero, which matters for historical offsets with
    # seconds (Dublin's -00:25:21 prints as -0025).
    offset_minutes = -(-offset_seconds // 60) if offset_seconds < 0 else offset_seconds // 60
    sign = "-" if offset_minutes < 0 else "+"
    hours, minutes = divmod(abs(offset_minutes), 60)
    digits = f"{nanos:09d}".rstrip("0")
    fraction = f".{digits}" if digits else ""
    return (
        f"{local.year:04d}-{local.month:02d}-{local.day:02d} "
        f"{local.hour:02d}:{local.minute:02d}:{local.second:02d}{fraction} "
        f"{sign}{hours:02d}{minutes:02d} {local.tzname()}"
    )


_MASK64 = (1 << 64) - 1
_TAU = 2.0 * math.pi


def _mix(value: int) -> int:
    """Return the splitmix64 finaliser of ``value``: a cheap, well-spread 64-bit hash."""
    value = (value + 0x9E3779B97F4A7C15) & _MASK64
    value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & _MASK64
    return value ^ (value >> 31)


def _jitter_ns(minute: int) -> int:
    """Return the sub-second sampling delay of the point at epoch ``minute``.

    One point in four each lands on the whole second, on a millisecond, on a microsecond or
    on a nanosecond, so rendered fractions have 0, up to 3, up to 6 and up to 9 digits.
    """
    h = _mix(minute ^ 0x5EED_7157)
    kind = h & 3
    if kind == 0:
        return 0
    if kind == 1:
        return ((h >> 8) % 1_000) * 1_000_000
    if kind == 2:
        return ((h >> 8) % 1_000_000) * 1_000
    return (h >> 8) % 1_000_000_000


_BLOCK = 1440
#: Minutes in a day: series are computed in day-long blocks aligned on the epoch.
MINUTES_PER_DAY = _BLOCK


def _blocks(first_minute: int, count: int) -> Iterator[tuple[int, int, int]]:
    """Yield (block, start, stop) slices covering the minutes of a window.

    Series are computed and cached in day-long blocks aligned on the epoch, so a window that
    moves by one minute reuses them and only the (cheap) slicing is redone.
    """
    minute, end = first_minute, first_minute + count
    while minute < end:
        block = minute // _BLOCK
        stop = min(end, (block + 1) * _BLOCK)
        yield block, minute - block * _BLOCK, stop - block * _BLOCK
        minute = stop


# Timestamps depend only on the zone and the minute, so one rendering serves every index.
@lru_cache(maxsize=128)
def _timeline_block(zone_name: str, block: int) -> tuple[str, ...]:
    zone = ZoneInfo(zone_name)
    first = block * _BLOCK
    return tuple(
        format_go_time((minute * 60) * 1_000_000_000 + _jitter_ns(minute), zone)
        for minute in range(first, first + _BLOCK)
    )


def _timeline(zone_name: str, first_minute: int, count: int) -> list[str]:
    out: list[str] = []
    for block, start, stop in _blocks(first_minute, count):
        out.extend(_timeline_block(zone_name, block)[start:stop])
    return out


class _ValuesBlock:
    """The values of one series over part of one day-long block: offsets ``[lo, hi)``.

    A window rarely needs a whole block (one crossing midnight needs the end of one and the
    start of the next), so only what was asked is computed, and the range grows as windows
    move. Shared through :func:`_values_block`, mutated under :data:`_GROW`.
    """

    __slots__ = (
        "amplitude",
        "base",
        "gap_start",
        "hi",
        "lo",
        "noise",
        "peak",
        "rhythm",
        "values",
    )

    def __init__(self, series_seed: int, scale: float) -> None:
        shape = random.Random(series_seed)
        self.base = 10 ** shape.uniform(0.7, 2.7) * scale
        self.amplitude = shape.uniform(0.35, 0.8)
        self.peak = shape.uniform(0.0, 1.0)
        self.noise = shape.uniform(0.06, 0.2)
        # A daily three-minute maintenance gap guarantees exact zeros in any one-day window.
        self.gap_start = shape.randrange(_BLOCK)
        self.rhythm = Rhythm.draw(shape)
        self.lo = self.hi = 0
        self.values = array("d")


class Rhythm(NamedTuple):
    """A series' days: weekends, day-to-day variation, a slow trend, burst episodes.

    Drawn after the daily shape from the same generator, so a series keeps its daily curve;
    each day's factor and burst is a pure function of the series and the day (one block).
    """

    weekend: float
    spread: float
    trend: float
    trend_days: float
    trend_phase: float
    burst_chance: float

    @classmethod
    def draw(cls, shape: random.Random) -> Rhythm:
        return cls(
            weekend=shape.uniform(0.45, 1.05),
            spread=shape.uniform(0.03, 0.15),
            trend=shape.uniform(0.0, 0.15),
            trend_days=shape.uniform(60.0, 240.0),
            trend_phase=shape.uniform(0.0, 1.0),
            burst_chance=shape.uniform(0.1, 0.5),
        )

    def day(self, series_seed: int, block: int) -> tuple[float, int, int, float]:
        """(level factor, burst start minute, burst length, burst factor) of a UTC day."""
        h = _mix(series_seed ^ _mix((block ^ 0xDA7_0F_DA75) & _MASK64))
        # Three uniform draws summed: a bell-shaped day-to-day wobble of about +-spread.
        bell = sum(((h >> shift) & 0xFFFF) / 65536.0 for shift in (0, 16, 32)) - 1.5
        weekday = (block + 3) % 7  # 1970-01-01 was a Thursday; Monday is 0
        level = math.exp(2.0 * self.spread * bell)
        level *= self.weekend if weekday >= 5 else 1.0
        level *= 1.0 + self.trend * math.sin(_TAU * (block / self.trend_days + self.trend_phase))
        if ((h >> 48) & 0xFF) / 256.0 >= self.burst_chance:
            return level, 0, 0, 1.0
        g = _mix(h)
        return level, g % _BLOCK, 10 + (g >> 11) % 80, 1.5 + ((g >> 20) & 0xFF) / 128.0


_GROW = threading.Lock()


# At most 8,192 blocks: a one-day window of 4,096 indexes, holding no more values (47 MB)
# than the 4,096 whole blocks of before.
@lru_cache(maxsize=8192)
def _values_block(series_seed: int, block: int, scale: float) -> _ValuesBlock:
    return _ValuesBlock(series_seed, scale)


def _block_values(
    series_seed: int, block: int, scale: float, start: int, stop: int
) -> array[float]:
    """Return the values of offsets ``[start, stop)`` of a block, computing what is missing."""
    cached = _values_block(series_seed, block, scale)
    with _GROW:
        if cached.lo == cached.hi:
            cached.values = _compute_values(cached, series_seed, block, start, stop)
            cached.lo, cached.hi = start, stop
        else:
            if start < cached.lo:  # the range stays contiguous: fills any hole in between
                before = _compute_values(cached, series_seed, block, start, cached.lo)
                before.extend(cached.values)
                cached.values, cached.lo = before, start
            if stop > cached.hi:
                cached.values.extend(_compute_values(cached, series_seed, block, cached.hi, stop))
                cached.hi = stop
        return cached.values[start - cached.lo : stop - cached.lo]


def _compute_values(
    shape: _ValuesBlock, series_seed: int, block: int, start: int, stop: int
) -> array[float]:
    # Blocks are aligned on the epoch, so a generator per (series, block) keeps every value
    # a pure function of the series and the absolute minute: the value at an offset uses the
    # generator's draw of that rank, the 32-bit words of one getrandbits call in order.
    words = random.Random(_mix(series_seed ^ _mix(block & _MASK64))).getrandbits(32 * stop)
    bits_of = array("I", words.to_bytes(4 * stop, sys.byteorder))
    amplitude, peak, noise = shape.amplitude, shape.peak, shape.noise
    gap_start = shape.gap_start
    level, burst_at, burst_for, burst_by = shape.rhythm.day(series_seed, block)
    base = shape.base * level
    out = array("d", bytes(8 * (stop - start)))
    for offset in range(start, stop):
        bits = bits_of[offset]
        minute_of_day = (block * _BLOCK + offset) % _BLOCK
        if (minute_of_day - gap_start) % _BLOCK < 3 or bits & 0x1FF < 2:
            continue
        diurnal = 1.0 + amplitude * math.cos(_TAU * (minute_of_day / _BLOCK - peak))
        wobble = 1.0 + noise * (((bits >> 9) & 0xFFFF) / 32768.0 - 1.0)
        burst = 1.0 + (bits >> 28) / 6.0 if (bits >> 25) & 0x7 == 0 and bits & 0x1E00 == 0 else 1.0
        if 0 <= minute_of_day - burst_at < burst_for:  # a burst episode of 10-90 minutes
            burst *= burst_by
        out[offset - start] = round(base * diurnal * wobble * burst, 2)
    return out


def _values(series_seed: int, first_minute: int, count: int, scale: float) -> array[float]:
    out = array("d")
    for block, start, stop in _blocks(first_minute, count):
        out.extend(_block_values(series_seed, block, scale, start, stop))
    return out


def throughput_vector(
    series_seed: int,
    *,
    now: float,
    zone: str = "UTC",
    window_minutes: int = 1440,
    plan: str = "payg",
    created: float | None = None,
) -> list[dict[str, Any]]:
    """Return the synthetic per-minute throughput of one index.

    Points are the ``window_minutes`` whole minutes before the one containing ``now``, each
    sampled a fraction of a second after the minute. The values follow a daily curve with
    noise, rare bursts and a few exact zeros, and depend only on ``series_seed`` and the
    minute, so overlapping windows agree. Minutes that begin before ``created`` are 0: an
    index has no traffic before it exists, so a new index starts at zero operations.

    Args:
        series_seed: The index's stored series seed.
        now: The clock, in epoch seconds.
        zone: IANA zone the timestamps are rendered in.
        window_minutes: How many points to return.
        plan: The index type; free indexes get quieter traffic.
        created: The index's creation time in epoch seconds; ``None`` for a series without
            a beginning.

    Returns:
        A list of ``{"x": <Go time text>, "y": <float>}``, oldest first.
    """
    first = math.floor(now) // 60 - window_minutes
    scale = THROUGHPUT_SCALE.get(plan, 1.0)
    unborn = _unborn(first, window_minutes, created)
    xs = _timeline(zone, first, window_minutes)
    ys = _values(series_seed, first, window_minutes, scale)
    ys[:unborn] = array("d", bytes(8 * unborn))
    vector = ThroughputVector({"x": x, "y": y} for x, y in zip(xs, ys, strict=True))
    vector.json = _encoded(series_seed, first, window_minutes, zone, scale, unborn)
    return vector


def _unborn(first_minute: int, count: int, created: float | None) -> int:
    """How many minutes of a window begin before ``created`` (epoch seconds)."""
    if created is None:
        return 0
    return min(count, max(0, math.ceil(created / 60) - first_minute))


def throughput_json(
    series_seed: int,
    *,
    now: float,
    zone: str = "UTC",
    window_minutes: int = 1440,
    plan: str = "payg",
    created: float | None = None,
) -> str:
    """Return the compact JSON text of :func:`throughput_vector`, without its objects.

    Same arguments and same points as :func:`throughput_vector`, whose JSON text this
    equals; no dict per point is built and the text is not kept, so a long list holds one
    index's text at a time however many indexes it has.

    Returns:
        ``json.dumps(throughput_vector(...), separators=(",", ":"))``.
    """
    first = math.floor(now) // 60 - window_minutes
    scale = THROUGHPUT_SCALE.get(plan, 1.0)
    unborn = _unborn(first, window_minutes, created)
    # The uncached encoder: caching whole texts costs up to 0.5 MB per index and window.
    return str(_encoded.__wrapped__(series_seed, first, window_minutes, zone, scale, unborn))


class ThroughputVector(list[dict[str, Any]]):
    """A throughput list that also carries its compact JSON text in :attr:`json`.

    The HTTP layer splices that text into responses instead of re-encoding some 1440 small
    objects per index on every list; it equals ``json.dumps(vector, separators=(",", ":"))``.
    """

    __slots__ = ("json",)
    json: str


@lru_cache(maxsize=1024)
def _encoded(
    series_seed: int, first_minute: int, count: int, zone: str, scale: float, unborn: int = 0
) -> str:
    xs = _timeline(zone, first_minute, count)
    ys = _values(series_seed, first_minute, count, scale)
    ys[:unborn] = array("d", bytes(8 * unborn))  # the minutes before the index existed
    # Go time texts are plain ASCII (digits, letters, "+-:. ") and float repr is exactly what
    # the json module writes, so formatting directly gives json.dumps's output, faster.
    return "[" + ",".join(f'{{"x":"{x}","y":{y!r}}}' for x, y in zip(xs, ys, strict=True)) + "]"
