"""The forecaster's arithmetic: points to hourly bins, each day's usual profile, the forecast.

Pure NumPy over arrays shaped ``[index, day, hour]``, so one pass forecasts every index and
every day at a time of day: :mod:`searchkit.analytics.forecast` uses today's row,
:mod:`searchkit.analytics.backtest` all of them. The method is described in
:mod:`searchkit.analytics.forecast`; the constants below were tuned by ``bench/forecast.py``.
"""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from searchkit.analytics.usage import (
    index_codes,
    index_intervals,
    operation_scales,
    point_operations,
)
from searchkit.frames.frames import median_spacing

__all__ = [
    "COMPLETE_HOURS",
    "MIN_CALIBRATION",
    "WIDE_BAND",
    "WINDOW",
    "Bins",
    "Forecast",
    "Reference",
    "band",
    "bins_from_frame",
    "bins_from_history",
    "crossing",
    "future_share",
    "log_errors",
    "predict",
    "quiet",
    "reference",
    "shift",
    "windows",
]

DAY = pd.Timedelta(days=1)
DAY_NS = 86_400 * 10**9
HOUR_NS = 3_600 * 10**9
NO_TIME = np.iinfo(np.int64).min
_HOURS = np.arange(24, dtype=np.float64)

WINDOW = 7  # past days for the usual level and profile
_WEEKS = 4  # same weekdays looked at for the weekly rhythm
_SHRINK = 0.001  # a pseudo-share: no ratio from nothing seen (the learnt slope shrinks)
_SHRINK_RECENT = 0.3  # the same for the last hours' ratio
_RECENT_HOURS = 3
_RECENT_WEIGHT = 0.1  # weight of the last hours' ratio, in log space
_WEEKLY_SHAPE = 0.5  # prior share of the same weekday's profile, two past weeks or more
_ONE_WEEK_SHAPE = 0.3  # the same from a single past week (one day's shape is noisier)
_SHAPE_PRIOR = 10.0  # days' worth of weight of those priors against the learnt share
_PRIOR_DAYS = 10.0  # weight of "carry today's ratio as it is" against the learnt slope
_BURST = 1.25  # an hour counts for at most this x its usual x max(1, today's median hour)
CALIBRATION_DAYS = 28
MIN_CALIBRATION = 9  # below 9 errors the band is widened (reason says so)
_MIN_ERRORS = 3
BAND_LEVEL = 0.87  # the band's nominal upper level (the lower is 1 - it): see band()
_FEW_WIDEN = 0.5  # the band's extremes widened by this share of their spread with 3-8 errors
WIDE_BAND = (0.5, 2.0)  # rest-of-day multipliers when an index's own errors are too few
COMPLETE_HOURS = 23.0
_AHEAD = 2  # days a History is read ahead of the one binned


# --------------------------------------------------------------------------------------
# Points -> operations per (index, UTC day, hour)


@dataclass
class Bins:
    """Operations and coverage per index, UTC day and hour, and what the points say."""

    ids: list[str]
    names: dict[str, Any]
    first_day: pd.Timestamp
    ops: np.ndarray  # [I, D, 24] operations
    cov: np.ndarray  # [I, D, 24] share of the hour the points cover (0..1)
    step: np.ndarray  # [I] sampling interval, seconds
    newest: np.ndarray  # [I] newest point's time (ns), NO_TIME where none
    future: np.ndarray  # [I] points left out for being at or after the cut
    last_points: tuple[np.ndarray, np.ndarray, np.ndarray]  # rows, ns, ops of the last day

    @property
    def days(self) -> int:
        return int(self.ops.shape[1])


def _points(tp: pd.DataFrame, value_unit: str) -> tuple[list[str], Any, Any, Any, Any]:
    """Index ids, codes, epoch ns, operations and each index's step (s) of a frame."""
    codes, ids = index_codes(tp["index_id"])
    steps = index_intervals(tp)
    ops = point_operations(tp, value_unit, steps) if len(tp) else np.zeros(0)
    step = steps.reindex(pd.Index(ids, name="index_id"))
    seconds = step.fillna(pd.Timedelta(minutes=1)).dt.total_seconds().to_numpy(np.float64)
    times = pd.DatetimeIndex(tp["time"].array).tz_convert("UTC").as_unit("ns").asi8
    return ids, np.asarray(codes, np.int64), np.asarray(times, np.int64), ops, seconds


def _names(tp: pd.DataFrame) -> dict[str, Any]:
    last = tp.drop_duplicates("index_id", keep="last")
    return dict(zip(last["index_id"].astype(str), last["name"], strict=True))


def _point_arrays(points: Any, value_unit: str) -> tuple[list[str], Any, Any, Any, Any]:
    """:func:`_points` of a History's :class:`~searchkit.history.dedupe.Points`: the same
    arrays, with no frame of the points made."""
    labels = pd.Index(points.ids, name="index_id")
    steps = median_spacing(points.codes, points.times, labels)
    values = points.values
    if len(values) and np.isfinite(values).all() and values.min() >= 0:
        # No value missing or invalid: point_operations' product, without its clean-up.
        ops = values * operation_scales(value_unit, steps, points.ids)[points.codes]
    else:
        frame = pd.DataFrame(
            {
                "index_id": pd.Categorical.from_codes(points.codes, categories=labels),
                "value": values,
            }
        )
        ops = point_operations(frame, value_unit, steps)
    seconds = steps.fillna(pd.Timedelta(minutes=1)).dt.total_seconds().to_numpy(np.float64)
    return points.ids, np.asarray(points.codes, np.int64), points.times, ops, seconds


class _Accumulator:
    """Bins built from parts (a History's days), each index mapped to one row.

    Each part is binned as it comes (hours x the indexes known so far); only the points of
    the last day are kept, for :attr:`Bins.last_points`.
    """

    def __init__(self, first_day: pd.Timestamp, days: int, cut: int | None) -> None:
        self.first, self.days, self.cut = first_day, days, cut
        self.ids: list[str] = []
        self.row: dict[str, int] = {}
        self.names: dict[str, Any] = {}
        self.steps: dict[str, float] = {}
        # (first hour since first_day, operations [hours, indexes], points [hours, indexes])
        self.blocks: list[tuple[int, np.ndarray, np.ndarray]] = []
        self.newest: list[np.ndarray] = []  # per part and index known then
        self.future: list[np.ndarray] = []
        self.last: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def add(self, tp: pd.DataFrame, value_unit: str) -> None:
        """Add a throughput frame's points."""
        if not tp.empty:
            self._add(*_points(tp, value_unit), _names(tp))

    def add_points(self, points: Any, value_unit: str) -> None:
        """Add a History's :class:`~searchkit.history.dedupe.Points`."""
        if len(points.codes):
            names = dict(zip(points.ids, points.names, strict=True))
            self._add(*_point_arrays(points, value_unit), names)

    def _add(
        self,
        ids: list[str],
        codes: np.ndarray,
        times: np.ndarray,
        ops: np.ndarray,
        seconds: np.ndarray,
        names: dict[str, Any],
    ) -> None:
        for index_id, step in zip(ids, seconds, strict=True):
            if index_id not in self.row:
                self.row[index_id] = len(self.ids)
                self.ids.append(index_id)
            self.steps[index_id] = float(step)
        self.names.update(names)
        row_of = np.asarray([self.row[i] for i in ids], np.int64)
        same = np.array_equal(row_of, np.arange(len(ids))) and codes.dtype == np.int64
        rows = codes if same else row_of[codes]
        values = np.asarray(ops, np.float64)
        first, last = int(times.min()), int(times.max())
        self._keep_last_day(rows, times, values, first, last)
        count = len(self.ids)
        if self.cut is not None and last >= self.cut:
            late = times >= self.cut
            if late.any():
                self.future.append(np.bincount(rows[late], minlength=count))
                rows, times, values = rows[~late], times[~late], values[~late]
        if not len(rows):
            return
        # The newest of each run of one index's points, then of the runs.
        heads = np.append(0, np.flatnonzero(rows[1:] != rows[:-1]) + 1)
        newest = np.full(count, NO_TIME, np.int64)
        np.maximum.at(newest, rows[heads], np.maximum.reduceat(times, heads))
        self.newest.append(newest)
        hours = (times - self.first.value) // HOUR_NS  # since the first day: its day and hour
        if hours.min() < 0 or hours.max() >= self.days * 24:
            keep = (hours >= 0) & (hours < self.days * 24)
            hours, rows, values = hours[keep], rows[keep], values[keep]
        if len(hours):
            low = int(hours.min())
            flat = (hours - low) * count + rows
            size = (int(hours.max()) - low + 1) * count
            summed = np.bincount(flat, weights=values, minlength=size).reshape(-1, count)
            points = np.bincount(flat, minlength=size).reshape(-1, count)
            self.blocks.append((low, summed, points))

    def _keep_last_day(
        self, rows: np.ndarray, times: np.ndarray, values: np.ndarray, first: int, last: int
    ) -> None:
        """Keep the points of the last day (before the cut); ``first``/``last``: the times'
        range."""
        begin = self.first.value + (self.days - 1) * DAY_NS
        end = begin + DAY_NS if self.cut is None else min(begin + DAY_NS, self.cut)
        if last < begin or first >= end:
            return
        keep = (times >= begin) & (times < end)
        if keep.any():
            self.last.append((rows[keep], times[keep], values[keep]))

    def bins(self) -> Bins:
        count = len(self.ids)
        ops, points = np.zeros((self.days * 24, count)), np.zeros((self.days * 24, count))
        for low, summed, counted in self.blocks:
            hours, known = summed.shape
            ops[low : low + hours, :known] += summed
            points[low : low + hours, :known] += counted
        shape = (self.days, 24, count)
        ops = np.ascontiguousarray(ops.reshape(shape).transpose(2, 0, 1))
        points = np.ascontiguousarray(points.reshape(shape).transpose(2, 0, 1))
        newest = np.full(count, NO_TIME, np.int64)
        for part in self.newest:
            np.maximum(newest[: len(part)], part, out=newest[: len(part)])
        future = np.zeros(count, np.int64)
        for part in self.future:
            future[: len(part)] += part
        seconds = np.asarray([self.steps[i] for i in self.ids], np.float64)
        cov = np.minimum(points * seconds[:, None, None] / 3600.0, 1.0)
        last = self._last_day()
        return Bins(self.ids, self.names, self.first, ops, cov, seconds, newest, future, last)

    def _last_day(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The points of the last day (before the cut), sorted by index then time."""
        if not self.last:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
        rows, times, values = (np.concatenate(column) for column in zip(*self.last, strict=True))
        step = rows[1:] > rows[:-1]
        if not np.all(step | ((rows[1:] == rows[:-1]) & (times[1:] >= times[:-1]))):
            order = np.lexsort((times, rows))  # else in order already (a stable sort keeps it)
            rows, times, values = rows[order], times[order], values[order]
        return rows, times, values


def bins_from_frame(
    tp: pd.DataFrame,
    value_unit: str,
    first_day: pd.Timestamp | None = None,
    days: int | None = None,
    cut: int | None = None,
) -> Bins:
    """Bin a throughput frame (days from its first point's by default); points at or
    after ``cut`` (epoch ns) are left out and counted in ``Bins.future``."""
    if first_day is None or days is None:
        if tp.empty:
            first_day, days = pd.Timestamp(0, tz="UTC"), 0
        else:
            times = pd.DatetimeIndex(tp["time"].array).tz_convert("UTC")
            first_day = times.min().normalize()
            days = (times.max().normalize() - first_day).days + 1
    acc = _Accumulator(first_day, days, cut)
    acc.add(tp, value_unit)
    return acc.bins()


def bins_from_history(
    source: Any,
    value_unit: str,
    first_day: pd.Timestamp | None = None,
    days: int | None = None,
    cut: int | None = None,
    beyond: bool = False,
) -> Bins:
    """Bin a History one day at a time, so memory stays that of a day's points."""
    if first_day is None or days is None:
        stored = source.days("throughput")
        if not stored:
            return bins_from_frame(pd.DataFrame(), value_unit)
        first_day = pd.Timestamp(stored[0], tz="UTC")
        days = (pd.Timestamp(stored[-1], tz="UTC") - first_day).days + 1
    acc = _Accumulator(first_day, days, cut)
    stored = set(source.days("throughput"))
    spans: list[tuple[pd.Timestamp, pd.Timestamp | None]] = [
        (begin, begin + DAY)
        for begin in (first_day + offset * DAY for offset in range(days))
        if f"{begin:%Y-%m-%d}" in stored  # a day not stored has no points to read
    ]
    if beyond:  # points dated after the last day, only to count them
        spans.append((first_day + days * DAY, None))
    # The next days are read (Parquet decodes, NumPy sorts, without the GIL) while this
    # one is binned: at most _AHEAD days' points in memory besides it.
    with ThreadPoolExecutor(max_workers=_AHEAD) as pool:
        reading = [pool.submit(source.points, start, end) for start, end in spans[:_AHEAD]]
        for start, end in spans[_AHEAD:]:
            reading.append(pool.submit(source.points, start, end))
            acc.add_points(reading.pop(0).result(), value_unit)
        for read in reading:
            acc.add_points(read.result(), value_unit)
    return acc.bins()


# --------------------------------------------------------------------------------------
# The usual day, and the forecast of the rest of each day


def windows(values: np.ndarray, size: int) -> np.ndarray:
    """For each day j, the ``size`` days before it, on a last axis: [I, D, ..., size]."""
    pad = np.full((values.shape[0], size, *values.shape[2:]), np.nan)
    padded = np.concatenate([pad, values.astype(np.float64)], axis=1)
    view = np.lib.stride_tricks.sliding_window_view(padded, size, axis=1)
    return view[:, : values.shape[1]]


def shift(values: np.ndarray, days: int) -> np.ndarray:
    """``values`` of ``days`` days earlier (NaN before the first day)."""
    out = np.full(values.shape, np.nan)
    if days < values.shape[1]:
        out[:, days:] = values[:, : values.shape[1] - days]
    return out


def nanmedian(values: np.ndarray) -> np.ndarray:
    """``np.nanmedian`` over the last axis (NaN where all NaN), without a warning per
    all-NaN slice: numpy's own masked median for short axes, the same numbers."""
    if values.shape[-1] >= 600:  # numpy takes another path for long axes
        return np.asarray(quiet(np.nanmedian, values, axis=-1))
    if values.shape[-1] == 0:
        return np.full(values.shape[:-1], np.nan)
    # What np.ma.median does, without its masked arrays: sort (NaN last), take the middle
    # two of the values present (the middle one twice for an odd count), (low + high) / 2;
    # only the slices holding a value are sorted (a window before the first day holds none).
    flat = values.reshape(-1, values.shape[-1])
    count = np.count_nonzero(~np.isnan(flat), axis=-1)
    median = np.full(len(flat), np.nan)
    some = np.flatnonzero(count)
    if len(some):
        ordered = np.sort(flat[some], axis=-1)
        present = count[some]
        high = present // 2
        low = np.where(present % 2 == 1, high, high - 1)
        at = np.arange(len(some))
        with np.errstate(invalid="ignore", over="ignore"):
            median[some] = (ordered[at, low] + ordered[at, high]) / 2.0
    return median.reshape(values.shape[:-1])


def quiet(function: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a nan-reduction without its warnings about all-NaN slices."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return function(*args, **kwargs)


def _normal(profile: np.ndarray) -> np.ndarray:
    total = np.nansum(profile, axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, np.nan_to_num(profile) / total, np.nan)


def future_share(tau: float) -> np.ndarray:
    """Share of each hour still to come at ``tau`` hours after midnight: [24]."""
    return np.clip(_HOURS + 1 - tau, 0.0, 1.0)


@dataclass
class Reference:
    """The usual day before each day: level [I, D] and hourly profile [I, D, 24]."""

    level: np.ndarray
    profile: np.ndarray
    weekly: np.ndarray  # [I, D] the weekly rhythm was used
    complete: np.ndarray  # [I, D] the day's points cover COMPLETE_HOURS or more
    totals: np.ndarray  # [I, D] day totals, NaN when not complete
    past_days: np.ndarray  # [I, D] complete days among the WINDOW before


def reference(ops: np.ndarray, cov: np.ndarray) -> Reference:
    """Each day's usual level and profile, from the complete days before it only."""
    complete = cov.sum(axis=2) >= COMPLETE_HOURS
    totals = np.where(complete, ops.sum(axis=2), np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        shares = np.where((totals > 0)[..., None], ops / totals[..., None], np.nan)
    recent = windows(totals, WINDOW)
    level = nanmedian(recent)
    recent_shape = nanmedian(windows(shares, WINDOW))
    # The same weekday of each past week: its total over the median of the week before it.
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = np.where(level > 0, totals / level, np.nan)
    same = np.stack([shift(relative, 7 * w) for w in range(1, _WEEKS + 1)], axis=-1)
    weeks = np.isfinite(same).sum(axis=-1)
    weekly = weeks >= 1
    factor = np.where(weekly, nanmedian(same), 1.0)
    same_shape = np.stack([shift(shares, 7 * w) for w in range(1, _WEEKS + 1)], axis=-1)
    weekday_shape = _normal(nanmedian(same_shape))
    recent_shape = _normal(recent_shape)
    part = _weekday_part(shares, recent_shape, weekday_shape, weeks)[..., None]
    mixed = part * weekday_shape + (1 - part) * recent_shape
    use_week = weekly[..., None] & np.isfinite(weekday_shape)
    profile = _normal(np.where(use_week, mixed, _normal(recent_shape)))
    past_days = np.isfinite(recent).sum(axis=-1)
    return Reference(level * factor, profile, weekly, complete, totals, past_days)


def _weekday_part(
    shares: np.ndarray, recent: np.ndarray, weekday: np.ndarray, weeks: np.ndarray
) -> np.ndarray:
    """Per index and day: the share of the weekday's profile (against the last week's)
    that fitted the shares of its last ``CALIBRATION_DAYS`` days best (least squares),
    pulled towards :data:`_WEEKLY_SHAPE` (:data:`_ONE_WEEK_SHAPE` from a single past
    week) by :data:`_SHAPE_PRIOR` days' worth of weight; clipped to [0, 1].

    An index whose weekends are shaped unlike its weekdays (taxis, offices) learns to
    follow the weekday; one shaped the same every day, to follow the steadier week.
    """
    gap = weekday - recent
    num = np.nansum((shares - recent) * gap, axis=2)
    den = np.nansum(gap * gap, axis=2)
    known = np.isfinite(shares).all(axis=2) & np.isfinite(gap).all(axis=2)
    num_w = np.nansum(windows(np.where(known, num, np.nan), CALIBRATION_DAYS), axis=-1)
    den_w = np.nansum(windows(np.where(known, den, np.nan), CALIBRATION_DAYS), axis=-1)
    count = np.nansum(windows(known.astype(np.float64), CALIBRATION_DAYS), axis=-1)
    prior = np.where(weeks == 1, _ONE_WEEK_SHAPE, _WEEKLY_SHAPE)
    typical = den_w / np.maximum(count, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        part = (num_w + _SHAPE_PRIOR * typical * prior) / (den_w + _SHAPE_PRIOR * typical)
    return np.where(den_w > 0, np.clip(part, 0.0, 1.0), prior)


@dataclass
class Forecast:
    """The rest of each day as the profile forecaster sees it at one time of day."""

    used: np.ndarray  # [I, D] operations before the time of day
    rest: np.ndarray  # [I, D] operations after it, NaN where no forecast
    amounts: np.ndarray  # [I, D, 24] the rest spread over the hours
    usable: np.ndarray  # [I, D] a profile forecast was made


def predict(
    ref: Reference,
    seen_ops: np.ndarray,
    seen_cov: np.ndarray,
    tau: float,
    outcome: np.ndarray | None = None,
) -> Forecast:
    """Forecast the rest of each day from what was seen of it before ``tau`` hours.

    Today's ratio to the usual day is the operations seen (each hour capped at
    ``_BURST`` times its usual amount, or times today's median hour's ratio to usual
    where that is higher) over what the profile expects of the hours seen,
    shrunk towards 1 while little of the day is seen, blended with the same ratio over
    the last ``_RECENT_HOURS`` hours. With ``outcome`` (each day's real rest after
    ``tau``, NaN where unknown), how much of that ratio carries into the rest of the day
    is learnt per index from its last ``CALIBRATION_DAYS`` days (a least-squares slope in
    log space, pulled towards 1 by ``_PRIOR_DAYS`` days' worth of weight).
    """
    level, shape = ref.level, ref.profile
    expected = shape * seen_cov
    used = seen_ops.sum(axis=2)
    recent = (np.floor(tau) - _RECENT_HOURS <= _HOURS) & (tau > _HOURS)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        usual = level[..., None] * np.maximum(shape, 1 / 48) * seen_cov
        typical = nanmedian(np.where(usual > 0, seen_ops / usual, np.nan))  # today's hours
        lift = np.maximum(np.nan_to_num(typical, nan=1.0), 1.0)
        cap = _BURST * lift[..., None] * usual
        seen = np.minimum(seen_ops, cap)
        ratio = (seen.sum(axis=2) / level + _SHRINK) / (expected.sum(axis=2) + _SHRINK)
        ratio_recent = ((seen * recent).sum(axis=2) / level + _SHRINK_RECENT) / (
            (expected * recent).sum(axis=2) + _SHRINK_RECENT
        )
        log_ratio = (1 - _RECENT_WEIGHT) * np.log(ratio) + _RECENT_WEIGHT * np.log(ratio_recent)
        if outcome is not None:
            log_ratio = log_ratio * _carry(ref, log_ratio, outcome, tau)
        amounts = level[..., None] * np.exp(log_ratio)[..., None] * shape * future_share(tau)
    usable = np.isfinite(level) & (level > 0) & np.isfinite(amounts).all(axis=2)
    amounts = np.where(usable[..., None], amounts, np.nan)
    return Forecast(used, amounts.sum(axis=2), amounts, usable)


def _carry(ref: Reference, x: np.ndarray, outcome: np.ndarray, tau: float) -> np.ndarray:
    """Per index and day: the slope of log(real rest / usual rest) on today's log ratio,
    over the days before, pulled towards 1 (trust the ratio as it is)."""
    usual = ref.level * (ref.profile * future_share(tau)).sum(axis=2)
    floor = np.maximum(np.nan_to_num(ref.level), 1.0) * 1e-3
    y = np.log((outcome + floor) / (usual + floor))
    known = np.isfinite(x) & np.isfinite(y)
    xy = windows(np.where(known, x * y, np.nan), CALIBRATION_DAYS)
    xx = windows(np.where(known, x * x, np.nan), CALIBRATION_DAYS)
    count = np.isfinite(xx).sum(axis=-1)
    sum_xy, sum_xx = np.nansum(xy, axis=-1), np.nansum(xx, axis=-1)
    prior = _PRIOR_DAYS * sum_xx / np.maximum(count, 1)
    slope = (sum_xy + prior) / (sum_xx + prior)
    return np.where((count > 0) & (sum_xx > 0), np.clip(slope, 0.0, 1.5), 1.0)


def crossing(used: np.ndarray, amounts: np.ndarray, limit: np.ndarray, tau: float) -> np.ndarray:
    """Hours after midnight at which used + the hourly ``amounts`` reach ``limit``.

    Each hour's amount is spread evenly over its part after ``tau``. NaN where the limit
    is not reached before midnight, is already reached (``used >= limit``), is not
    finite, or where nothing is used (a limit of 0 with no operations is not hit).
    """
    amounts = np.nan_to_num(amounts, nan=0.0, posinf=0.0, neginf=0.0)
    cum = used[..., None] + np.cumsum(amounts, axis=-1)
    reached = (cum >= limit[..., None]) & (cum > 0)
    hour = np.argmax(reached, axis=-1)[..., None]
    amount = np.take_along_axis(amounts, hour, -1)[..., 0]
    before = np.take_along_axis(cum, hour, -1)[..., 0] - amount
    hour = hour[..., 0]
    start = np.maximum(hour, tau)
    with np.errstate(divide="ignore", invalid="ignore"):
        part = np.where(amount > 0, (limit - before) / amount, 0.0)
    when = start + np.clip(part, 0.0, 1.0) * np.clip(hour + 1 - start, 0.0, 1.0)
    hit = reached.any(axis=-1) & np.isfinite(limit) & (used < limit)
    return np.where(hit, when, np.nan)


def log_errors(actual: np.ndarray, predicted: np.ndarray, level: np.ndarray) -> np.ndarray:
    """log(actual / predicted) rest of the day, with a floor of a thousandth of the level."""
    floor = np.maximum(np.nan_to_num(level), 1.0) * 1e-3
    with np.errstate(divide="ignore", invalid="ignore"):
        errors: np.ndarray = np.log((actual + floor) / (predicted + floor))
    return errors


def _quantile(ordered: np.ndarray, count: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The ``q`` quantile of the first ``count`` values of ``ordered`` (sorted, NaN last),
    linear between order statistics as ``np.quantile`` is."""
    top = np.maximum(count, 1) - 1
    position = q * top
    below = np.floor(position).astype(np.int64)
    above = np.minimum(below + 1, top)
    low = np.take_along_axis(ordered, below[..., None], -1)[..., 0]
    high = np.take_along_axis(ordered, above[..., None], -1)[..., 0]
    return np.asarray(low + (position - below) * (high - low))


def band(errors: np.ndarray, usable: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The 10-90 band of each day from the errors of the ``CALIBRATION_DAYS`` before it.

    Split-conformal with the finite-sample correction: of the n past errors, the
    quantiles at levels 1 - q and q with q = :data:`BAND_LEVEL` (n + 1) / n (at most 1:
    the extremes while n < 7). With 3 to 8 errors the band is widened by
    :data:`_FEW_WIDEN` of its spread on each side; with fewer, the fixed
    :data:`WIDE_BAND`. The nominal 0.87 rather than 0.9 was set by ``bench/forecast.py``:
    errors drift (a calm month after a rough one keeps the rough month's errors in the
    window), and 0.9 held 84-88% of outcomes on most traces and 94% on one; 0.87 holds
    75-89% on every trace, about 80% on most.

    Returns:
        Low and high multipliers of the rest of the day, and n.
    """
    window = windows(np.where(usable, errors, np.nan), CALIBRATION_DAYS)
    count = np.isfinite(window).sum(axis=-1)
    ordered = np.sort(window, axis=-1)  # NaN last
    n = np.maximum(count, 1)
    upper = np.minimum(1.0, BAND_LEVEL * (n + 1) / n)
    low = _quantile(ordered, count, 1.0 - upper)
    high = _quantile(ordered, count, upper)
    few = (count >= _MIN_ERRORS) & (count < MIN_CALIBRATION)
    spread = high - low
    low = np.where(few, low - _FEW_WIDEN * spread, low)
    high = np.where(few, high + _FEW_WIDEN * spread, high)
    enough = count >= _MIN_ERRORS
    with np.errstate(over="ignore"):
        low = np.where(enough, np.exp(np.minimum(low, 0.0)), WIDE_BAND[0])
        high = np.where(enough, np.exp(np.maximum(high, 0.0)), WIDE_BAND[1])
    return low, high, count
