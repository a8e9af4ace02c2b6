"""The counting rules: what a throughput point counts for, stated once.

The history's rollups (:mod:`searchkit.history.rollups`) and the analytics (usage, the
forecast's bins, the backtest) count with these and nothing else, so a figure read from a
rollup and the same figure read from the points are one computation.

**The unit assumption.** The service does not document the unit of throughput. One
assumption, stated here and nowhere else, and a parameter (``value_unit``) everywhere it
matters: **a value is operations per second, sampled at each point**, so the operations in
an interval are the value times the interval's length, the interval being the index's
median sampling step (:func:`median_spacing`), :data:`DEFAULT_INTERVAL` for an index with
a single point. ``value_unit="per_minute"`` reads a value as operations per minute,
``"per_point"`` as a count of operations.

**A valid value.** No usage is negative or infinite: such a value is *invalid*, counted
apart (``invalid``) and neither summed nor counted as a point (:func:`invalid_values`).
A missing value (NaN) is a point worth 0 (:func:`clean_values`).

**One point per instant.** An index has one value per instant: a list that repeats an
instant keeps the larger value, a missing one losing (:func:`one_per_instant`, by
:func:`tie_key`), the tie-break of the stored points' "latest write wins" rule
(:mod:`searchkit.history.dedupe`).

**The median spacing.** An index's sampling interval is the median of the spacings between
its consecutive points (:func:`median_spacing`): the :func:`midpoint` of the two middle
ones (:func:`median_ranks`), to the nanosecond. A rollup keeps spacings around the median
so that it extends as points come (:mod:`searchkit.history.spacings`), by the same rule.

**Time bins.** A UTC day is cut into :data:`HOURS` hours (the forecast's bins) and
:data:`QUARTERS` quarter-hours (every real zone's hours and midnights fall on a quarter:
Kolkata +05:30, Chatham +12:45, Lord Howe's half-hour DST). A bin's values are summed in
time order by :func:`binned` (``np.bincount``: one addition after the other), so the same
points give the same sums to the last bit wherever they are summed. A period made of
whole bins sums its bins' sums, in time order, with :func:`run_sums`: a UTC day is summed
by hour where each of its hours lies in one period, else by quarter, and a day that is all
one period by its quarters (:mod:`searchkit.analytics.periods` decides). An instant's
bin is :func:`bin_slots`; bins extended with later points (today's rollup, as each collect
writes) add them after the sums so far, one at a time (:func:`add_binned`): the same sums.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal, get_args

import numpy as np
import pandas as pd

from searchkit.errors import ValidationError

__all__ = [
    "DAY_NS",
    "DEFAULT_INTERVAL",
    "DEFAULT_SECONDS",
    "HOURS",
    "HOUR_NS",
    "QUARTERS",
    "QUARTER_NS",
    "VALUE_UNITS",
    "ValueUnit",
    "add_binned",
    "bin_slots",
    "binned",
    "check_value_unit",
    "clean_values",
    "clock_changes",
    "index_codes",
    "index_intervals",
    "interval_seconds",
    "invalid_values",
    "median_ranks",
    "median_spacing",
    "midpoint",
    "one_per_instant",
    "period_ends",
    "period_starts",
    "quarter_periods",
    "run_sums",
    "spacings",
    "spacings_median",
    "sums_in_order",
    "tie_key",
    "unit_scales",
]

HOUR_NS = 3_600 * 10**9
QUARTER_NS = HOUR_NS // 4
DAY_NS = 24 * HOUR_NS
HOURS = 24
QUARTERS = 96

#: The sampling interval of an index with a single point (none to measure).
DEFAULT_INTERVAL = pd.Timedelta(minutes=1)
DEFAULT_SECONDS = DEFAULT_INTERVAL.total_seconds()

#: How a throughput value is read (see the module): the ``value_unit`` of every function.
ValueUnit = Literal["per_second", "per_minute", "per_point"]
#: Seconds one unit of a value stands for, per :data:`ValueUnit` (None: a value is a count).
VALUE_UNITS: dict[str, float | None] = {"per_second": 1.0, "per_minute": 60.0, "per_point": None}
assert tuple(VALUE_UNITS) == get_args(ValueUnit)

_NAT = np.iinfo(np.int64).min


def check_value_unit(value_unit: object) -> ValueUnit:
    """Return ``value_unit`` if it is a :data:`ValueUnit`, else raise a ValidationError."""
    if not isinstance(value_unit, str) or value_unit not in VALUE_UNITS:
        raise ValidationError(
            f"value_unit must be one of {sorted(VALUE_UNITS)}, got {value_unit!r}"
        )
    return value_unit  # type: ignore[return-value]


def invalid_values(values: np.ndarray) -> np.ndarray:
    """Which values no usage can have: negative or infinite (NaN is a missing value)."""
    with np.errstate(invalid="ignore"):
        invalid: np.ndarray = np.isinf(values) | (values < 0)
    return invalid


def clean_values(values: np.ndarray, invalid: np.ndarray) -> np.ndarray:
    """The values as summed: an invalid one as 0 (and not counted), a missing one as 0."""
    clean: np.ndarray = np.where(invalid, 0.0, np.nan_to_num(values))
    return clean


def interval_seconds(intervals: pd.Series | np.ndarray) -> np.ndarray:
    """Sampling intervals in seconds (timedeltas, or seconds with NaN where unknown),
    :data:`DEFAULT_INTERVAL` where unknown (NaT or NaN: a single point)."""
    if isinstance(intervals, pd.Series):
        seconds = intervals.dt.total_seconds().to_numpy(dtype=np.float64)
    else:
        seconds = np.asarray(intervals, dtype=np.float64)
    result: np.ndarray = np.where(np.isnan(seconds), DEFAULT_SECONDS, seconds)
    return result


def unit_scales(value_unit: str, seconds: np.ndarray) -> np.ndarray:
    """Operations one unit of value stands for, per sampling interval in ``seconds``."""
    per = VALUE_UNITS[check_value_unit(value_unit)]
    if per is None:
        return np.ones(len(seconds))
    result: np.ndarray = np.asarray(seconds, dtype=np.float64) / per
    return result


def index_codes(column: pd.Series) -> tuple[np.ndarray, list[str]]:
    """Integer codes of a column of index ids and their labels, without a string per row."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        array = column.array
        return np.asarray(array.codes), [str(c) for c in array.categories]
    codes, uniques = pd.factorize(column)
    return codes, [str(u) for u in uniques]


def index_intervals(frame: pd.DataFrame) -> pd.Series:
    """Each index's median sampling interval (NaT with fewer than two points), by index_id,
    of a tidy throughput frame: :func:`~searchkit.throughput_intervals` from the codes."""
    codes, ids = index_codes(frame["index_id"])
    nanos = np.asarray(pd.DatetimeIndex(frame["time"]).as_unit("ns").asi8, dtype=np.int64)
    return median_spacing(codes, nanos, pd.Index(ids, name="index_id"))


def spacings(codes: np.ndarray, nanos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The group and length of each spacing between a group's consecutive instants, in
    (group, time) order: ``codes[i]`` is the group of ``nanos[i]`` (epoch ns; NaT left out)."""
    codes = np.asarray(codes)
    if len(nanos) and nanos.min() == _NAT:
        known = nanos != _NAT
        codes, nanos = codes[known], nanos[known]
    same = codes[1:] == codes[:-1]
    spacing = np.diff(nanos)[same]
    if (len(codes) > 1 and (np.diff(codes) < 0).any()) or (len(spacing) and spacing.min() < 0):
        order = np.lexsort((nanos, codes))  # else already in (group, time) order
        codes, nanos = codes[order], nanos[order]
        same = codes[1:] == codes[:-1]
        spacing = np.diff(nanos)[same]
    return codes[1:][same], spacing


def median_ranks(total: Any) -> tuple[Any, Any]:
    """The ranks (from 0, ascending) of the two middle ones of ``total`` values, the same
    rank twice for an odd count: the median is their :func:`midpoint`."""
    return (total - 1) // 2, total // 2


def midpoint(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """A median spacing from its two middle spacings (ns): their mean, rounded to the
    nanosecond (half to even)."""
    middle: np.ndarray = np.round((np.asarray(low, np.float64) + high) / 2).astype(np.int64)
    return middle


def median_spacing(codes: np.ndarray, nanos: np.ndarray, labels: pd.Index) -> pd.Series:
    """Return the median spacing of each group's instants, NaT for a group of fewer than two.

    ``codes[i]`` is the position in ``labels`` of the group of ``nanos[i]`` (epoch
    nanoseconds, NaT ignored); the result is named ``interval`` and indexed by ``labels``.
    The median is the :func:`midpoint` of the spacings at the :func:`median_ranks` (the
    rule a rollup's kept spacings follow too: :mod:`searchkit.history.spacings`).
    """
    return spacings_median(*spacings(codes, nanos), labels)


def spacings_median(groups: np.ndarray, spacing: np.ndarray, labels: pd.Index) -> pd.Series:
    """:func:`median_spacing` from the :func:`spacings` of the instants, when they are at
    hand already (a rollup keeps them too: one pass over a day's points for both)."""
    out = np.full(len(labels), _NAT, dtype=np.int64)
    if len(spacing):
        # A group whose spacings are all equal (a steady sampler) has that median: only
        # the others are sorted.
        heads = np.append(0, np.flatnonzero(groups[1:] != groups[:-1]) + 1)
        low = np.minimum.reduceat(spacing, heads)
        steady = low == np.maximum.reduceat(spacing, heads)
        out[groups[heads[steady]]] = low[steady]
        if not steady.all():
            sizes = np.diff(np.append(heads, len(groups)))
            uneven = np.repeat(~steady, sizes)
            within, counts = groups[uneven], sizes[~steady]
            starts = np.append(0, np.cumsum(counts)[:-1])
            apart = _sorted_runs(within, spacing[uneven], starts, counts)
            first, second = median_ranks(counts)
            out[within[starts]] = midpoint(apart[starts + first], apart[starts + second])
    return pd.Series(out.view("m8[ns]"), index=labels, name="interval")


def _sorted_runs(
    groups: np.ndarray, values: np.ndarray, starts: np.ndarray, sizes: np.ndarray
) -> np.ndarray:
    """``values`` sorted within each run of one group (runs at ``starts``, ``sizes`` long):
    a few long runs each sorted in place (a sort per index), many short ones by two stable
    sorts over all of them (several times faster than ``np.lexsort`` either way)."""
    if len(starts) * 64 <= len(values):
        out = values.copy()
        for low, size in zip(starts.tolist(), sizes.tolist(), strict=True):
            out[low : low + size].sort()
        return out
    order = np.argsort(values, kind="stable")
    ordered: np.ndarray = values[order][np.argsort(groups[order], kind="stable")]
    return ordered


def tie_key(values: np.ndarray) -> np.ndarray:
    """Values as the key that orders points of one instant, the winner last: the larger
    value wins, a missing one (NaN) loses to any number (as SQL's ``DESC``). The stored
    points' rule (:mod:`searchkit.history.dedupe`: latest write wins) breaks its ties by it."""
    key: np.ndarray = np.where(np.isnan(values), -np.inf, values)
    return key


def one_per_instant(frame: pd.DataFrame) -> pd.DataFrame:
    """Keep one point per ``(index_id, time)`` of a throughput frame, the larger value.

    A list that repeats a minute is the same as two writes collected at the same instant,
    so it gets the same tie-break as the stored points; the frame keeps its order and is
    returned as is when nothing repeats.
    """
    if len(frame) < 2:
        return frame
    codes, _ = index_codes(frame["index_id"])
    times = pd.DatetimeIndex(frame["time"]).asi8
    values = frame["value"].to_numpy(dtype=np.float64, na_value=np.nan)
    order = np.lexsort((tie_key(values), times, codes))
    same = (codes[order][1:] == codes[order][:-1]) & (times[order][1:] == times[order][:-1])
    if not same.any():
        return frame
    keep = np.sort(order[np.append(~same, True)])
    return frame.iloc[keep].reset_index(drop=True)


def bin_slots(nanos: np.ndarray, start: int, width: int) -> np.ndarray:
    """Each instant's bin among bins of ``width`` ns from ``start`` (epoch ns): an hour
    (:data:`HOUR_NS`) or a quarter-hour (:data:`QUARTER_NS`) of a UTC day, say."""
    slots: np.ndarray = (np.asarray(nanos, np.int64) - start) // width
    return slots


def sums_in_order(flat: np.ndarray, clean: np.ndarray, size: int) -> np.ndarray:
    """Each of ``size`` bins' :func:`clean_values` summed one after the other in the
    points' order (``np.bincount``): the same sum to the last bit wherever it is made."""
    sums: np.ndarray = np.bincount(flat, weights=clean, minlength=size)
    return sums


def binned(
    flat: np.ndarray, clean: np.ndarray, invalid: np.ndarray, size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sum points into bins: ``flat[i]`` is point i's bin (points in time order within a
    bin), ``clean`` its :func:`clean_values`; return each bin's value sum (in time order),
    valid points and invalid points, ``size`` bins."""
    sums = sums_in_order(flat, clean, size)
    if not invalid.any():  # the usual day: every point valid, no copy of the bins
        valid = np.bincount(flat, minlength=size).astype(np.int64)
        return sums, valid, np.zeros(size, np.int64)
    valid = np.bincount(flat[~invalid], minlength=size).astype(np.int64)
    bad = np.bincount(flat[invalid], minlength=size).astype(np.int64)
    return sums, valid, bad


def add_binned(
    sums: np.ndarray,
    flat: np.ndarray,
    clean: np.ndarray,
    invalid: np.ndarray | None = None,
    valid: np.ndarray | None = None,
) -> None:
    """Extend bins :func:`binned` summed with later points (in time order), in place:
    each value added after the bin's sum so far, one at a time (``np.add.at``), so the
    sums are those of :func:`binned` over all the points, to the last bit; ``valid``
    (of ``sums``' shape) counts the points not ``invalid``."""
    np.add.at(sums.reshape(-1), flat, clean)
    if valid is not None:
        kept = flat if invalid is None else flat[~invalid]
        valid += np.bincount(kept, minlength=valid.size).reshape(valid.shape)


def run_sums(values: np.ndarray, starts: Any) -> np.ndarray:
    """Sum runs of columns of ``values`` [rows, bins], one after the other in bin order.

    ``starts`` are the first bin of each run (ascending, the first 0): the result has a
    column per run. Each row's run is summed left to right, one addition at a time (as
    ``np.add.accumulate`` does, never a pairwise sum), so a run's sum depends only on its
    bins' sums, wherever they come from. Done a bin at a time over blocks of rows (that
    stay in the CPU's cache): the same additions in the same order, several times faster
    than an accumulate along each row.
    """
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.append(starts[1:], values.shape[1])
    out = np.empty((values.shape[0], len(starts)), dtype=values.dtype)
    for low_row in range(0, values.shape[0], _BLOCK):
        block = values[low_row : low_row + _BLOCK]
        rows = out[low_row : low_row + _BLOCK]
        for run, (low, high) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
            total = block[:, low].copy()
            for column in range(low + 1, high):
                total += block[:, column]
            rows[:, run] = total
    return out


#: Rows :func:`run_sums` adds at a time (a block of 96 bins, 3 MiB, stays in the cache).
_BLOCK = 4_096


# --- periods -------------------------------------------------------------------------------


def period_starts(nanos: np.ndarray, zone: dt.tzinfo, freq: str) -> np.ndarray:
    """The start (epoch ns) of the period of ``freq`` in ``zone`` that holds each instant.

    The rule, for every source (points, rollups) and every zone: a period starts where the
    wall clock in ``zone`` reaches a multiple of ``freq`` (``"h"``, ``"15min"``: counted
    from 1970-01-01 in wall time; ``"D"``, ``"2D"``: midnights; ``"W"``, ``"MS"`` and other
    calendar periods: the midnight of their anchor day, rolled back) and is labelled by that
    instant: the latest one showing that wall time not after the point (an hour the clocks
    repeat is two periods), or, for a wall time the clocks skipped, the instant they skipped
    to. A clock period (a fixed length) also starts at each change of the zone's offset, so
    no period holds an hour twice.
    """
    nanos = np.asarray(nanos, dtype=np.int64)
    if not len(nanos):
        return nanos.copy()
    offset = _offset(freq)
    starts = _instants_not_after(_floor_wall(_wall(nanos, zone), offset), zone, nanos)
    skipped = starts == _NAT
    if _is_clock(offset) or skipped.any():
        changes = clock_changes(int(nanos.min()) - DAY_NS, int(nanos.max()), zone)
        at = np.searchsorted(changes, nanos, side="right") - 1
        since = changes[np.maximum(at, 0)] if len(changes) else np.full(len(nanos), _NAT)
        since = np.where(at >= 0, since, _NAT)
        starts = (
            np.maximum(starts, since) if _is_clock(offset) else np.where(skipped, since, starts)
        )
    return starts


def period_ends(starts: np.ndarray, zone: dt.tzinfo, freq: str) -> np.ndarray:
    """The end (epoch ns, exclusive) of each period :func:`period_starts` labels ``starts``:
    where the next one starts. A day or a calendar period ends at its next wall midnight of
    the rule (23 or 25 hours across a DST change), a clock period a length later or at the
    next wall boundary or offset change if sooner."""
    starts = np.asarray(starts, dtype=np.int64)
    if not len(starts):
        return starts.copy()
    offset = _offset(freq)
    walls = _floor_wall(_wall(starts, zone), offset) + offset
    first = np.ones(len(walls), dtype=bool)  # a repeated wall time: its first occurrence
    localized = walls.tz_localize(zone, ambiguous=first, nonexistent="NaT")
    ends = np.asarray(localized.as_unit("ns").asi8, dtype=np.int64)
    skipped = ends == _NAT  # the clocks skip the next start: it is where they jumped
    clock = _is_clock(offset)
    if clock or skipped.any():
        high = int(starts.max()) + (offset.nanos if clock else 40 * DAY_NS)
        changes = clock_changes(int(starts.min()) + 1, high, zone)
        after = np.searchsorted(changes, starts, side="right")
        later = changes[np.minimum(after, len(changes) - 1)] if len(changes) else ends
        later = np.where(after < len(changes), later, np.iinfo(np.int64).max)
        if clock:  # a length later, or at the next wall boundary or offset change if sooner
            ends = np.where(skipped, np.iinfo(np.int64).max, ends)
            ends = np.minimum(np.minimum(ends, later), starts + np.int64(offset.nanos))
        else:
            ends = np.where(skipped, later, ends)
    return ends


def clock_changes(low: int, high: int, zone: dt.tzinfo) -> np.ndarray:
    """The instants (epoch ns) from ``low`` to ``high`` at which ``zone``'s offset from UTC
    changes (found on a quarter-hour grid, then to the nanosecond)."""
    first = low - low % QUARTER_NS
    grid = np.arange(first, high + QUARTER_NS, QUARTER_NS, dtype=np.int64)
    offsets = _wall(grid, zone).asi8 - grid
    found = []
    for at in np.flatnonzero(offsets[1:] != offsets[:-1]).tolist():
        before, after = int(grid[at]), int(grid[at + 1])
        while after - before > 1:  # the offset at ``before`` holds until ``after``
            middle = (before + after) // 2
            if _offset_at(middle, zone) == offsets[at]:
                before = middle
            else:
                after = middle
        if low <= after <= high:
            found.append(after)
    return np.asarray(found, dtype=np.int64)


def quarter_periods(days: np.ndarray, zone: dt.tzinfo, freq: str) -> tuple[np.ndarray, np.ndarray]:
    """The period start (:func:`period_starts`) of each quarter-hour of each UTC day.

    ``days`` are the days' midnights (epoch ns). Returns the starts [days, :data:`QUARTERS`]
    and, per day, whether every quarter lies in one period: else a period boundary falls
    inside a quarter and the day's periods must be counted from its points.
    """
    days = np.asarray(days, dtype=np.int64)
    begins = (days[:, None] + np.arange(QUARTERS, dtype=np.int64) * QUARTER_NS).ravel()
    labels = period_starts(np.concatenate([begins, begins + (QUARTER_NS - 1)]), zone, freq)
    first, last = labels[: len(begins)], labels[len(begins) :]
    whole = (first == last).reshape(len(days), QUARTERS).all(axis=1)
    return first.reshape(len(days), QUARTERS), whole


def _offset(freq: str) -> Any:
    return pd.tseries.frequencies.to_offset(freq)


def _is_clock(offset: Any) -> bool:
    """Whether a period has a fixed length (hours, minutes, ...), not a calendar one."""
    return isinstance(offset, pd.offsets.Tick)


def _wall(nanos: np.ndarray, zone: dt.tzinfo) -> pd.DatetimeIndex:
    """Instants as the naive wall times of ``zone``."""
    utc = pd.DatetimeIndex(np.asarray(nanos, dtype=np.int64).view("M8[ns]")).tz_localize("UTC")
    return utc.tz_convert(zone).tz_localize(None)


def _offset_at(nanos: int, zone: dt.tzinfo) -> int:
    return int(_wall(np.asarray([nanos], dtype=np.int64), zone).asi8[0]) - nanos


def _floor_wall(wall: pd.DatetimeIndex, offset: Any) -> pd.DatetimeIndex:
    """Wall times floored to their period's start (see :func:`period_starts`)."""
    if _is_clock(offset):
        return wall.floor(offset)
    days = wall.normalize()
    if isinstance(offset, pd.offsets.Day):
        if offset.n == 1:
            return days
        number = days.asi8 // DAY_NS
        return pd.DatetimeIndex(((number - number % offset.n) * DAY_NS).view("M8[ns]"))
    unique, inverse = np.unique(days.asi8, return_inverse=True)
    rolled = [offset.rollback(pd.Timestamp(u)).normalize().as_unit("ns").value for u in unique]
    return pd.DatetimeIndex(np.asarray(rolled, dtype=np.int64)[inverse].view("M8[ns]"))


def _instants_not_after(walls: pd.DatetimeIndex, zone: dt.tzinfo, nanos: np.ndarray) -> np.ndarray:
    """The latest instant showing each wall time in ``zone`` not after ``nanos`` (NaT for a
    wall time the clocks skipped)."""
    size = len(walls)
    early = walls.tz_localize(zone, ambiguous=np.ones(size, bool), nonexistent="NaT")
    late = walls.tz_localize(zone, ambiguous=np.zeros(size, bool), nonexistent="NaT")
    first = np.asarray(early.as_unit("ns").asi8, dtype=np.int64)
    second = np.asarray(late.as_unit("ns").asi8, dtype=np.int64)
    return np.where((second <= nanos) & (second != _NAT), second, first)
