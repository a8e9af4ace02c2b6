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
instant keeps the larger value (:func:`one_per_instant`), the tie-break of the stored
points' "latest write wins" rule (:mod:`searchkit.history.dedupe`).

**Time bins.** A UTC day is cut into :data:`HOURS` hours (the forecast's bins) and
:data:`QUARTERS` quarter-hours (every real zone's hours and midnights fall on a quarter:
Kolkata +05:30, Chatham +12:45, Lord Howe's half-hour DST). A bin's values are summed in
time order by :func:`binned` (``np.bincount``: one addition after the other), so the same
points give the same sums to the last bit wherever they are summed. A period made of
whole quarters sums its quarters' sums, in time order, with :func:`run_sums`.
"""

from __future__ import annotations

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
    "binned",
    "check_value_unit",
    "clean_values",
    "index_codes",
    "index_intervals",
    "interval_seconds",
    "invalid_values",
    "median_spacing",
    "one_per_instant",
    "run_sums",
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


def median_spacing(codes: np.ndarray, nanos: np.ndarray, labels: pd.Index) -> pd.Series:
    """Return the median spacing of each group's instants, NaT for a group of fewer than two.

    ``codes[i]`` is the position in ``labels`` of the group of ``nanos[i]`` (epoch
    nanoseconds, NaT ignored); the result is named ``interval`` and indexed by ``labels``.
    """
    codes = np.asarray(codes)
    if len(nanos) and nanos.min() == _NAT:
        known = nanos != _NAT
        codes, nanos = codes[known], nanos[known]
    step = np.diff(codes)
    same = step == 0
    spacing = np.diff(nanos)[same]
    if (len(step) and step.min() < 0) or (len(spacing) and spacing.min() < 0):
        order = np.lexsort((nanos, codes))  # else already in (group, time) order
        codes, nanos = codes[order], nanos[order]
        same = codes[1:] == codes[:-1]
        spacing = np.diff(nanos)[same]
    groups = codes[1:][same]
    out = np.full(len(labels), _NAT, dtype=np.int64)
    if len(spacing):
        # A group whose spacings are all equal (a steady sampler) has that median: only
        # the others go through the groupby.
        heads = np.append(0, np.flatnonzero(groups[1:] != groups[:-1]) + 1)
        low = np.minimum.reduceat(spacing, heads)
        steady = low == np.maximum.reduceat(spacing, heads)
        out[groups[heads[steady]]] = np.round(low[steady].astype(np.float64)).astype(np.int64)
        if not steady.all():
            uneven = ~steady[np.cumsum(np.append(0, groups[1:] != groups[:-1]))]
            part = pd.Series(spacing[uneven], dtype=np.float64).groupby(groups[uneven])
            medians = part.median()
            out[medians.index.to_numpy()] = np.round(medians.to_numpy()).astype(np.int64)
    return pd.Series(out.view("m8[ns]"), index=labels, name="interval")


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
    order = np.lexsort((np.where(np.isnan(values), -np.inf, values), times, codes))
    same = (codes[order][1:] == codes[order][:-1]) & (times[order][1:] == times[order][:-1])
    if not same.any():
        return frame
    keep = np.sort(order[np.append(~same, True)])
    return frame.iloc[keep].reset_index(drop=True)


def binned(
    flat: np.ndarray, clean: np.ndarray, invalid: np.ndarray, size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sum points into bins: ``flat[i]`` is point i's bin (points in time order within a
    bin), ``clean`` its :func:`clean_values`; return each bin's value sum (in time order),
    valid points and invalid points, ``size`` bins."""
    sums = np.bincount(flat, weights=clean, minlength=size)
    valid = np.bincount(flat[~invalid], minlength=size).astype(np.int64)
    bad = np.bincount(flat[invalid], minlength=size).astype(np.int64)
    return sums, valid, bad


def run_sums(values: np.ndarray, starts: Any) -> np.ndarray:
    """Sum runs of columns of ``values`` [rows, bins], one after the other in bin order.

    ``starts`` are the first bin of each run (ascending, the first 0): the result has a
    column per run. Each row's run is summed left to right, one addition at a time, so a
    run's sum depends only on its bins' sums, wherever they come from.
    """
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.append(starts[1:], values.shape[1])
    out = np.zeros((values.shape[0], len(starts)), dtype=values.dtype)
    for run, (low, high) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        total = values[:, low].copy()
        for column in range(low + 1, high):
            total += values[:, column]
        out[:, run] = total
    return out
