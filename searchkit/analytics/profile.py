"""The forecaster's arithmetic: each day's usual profile, the forecast, its band.

Pure NumPy over arrays shaped ``[index, day, hour]`` (the bins of
:mod:`searchkit.analytics.bins`, re-exported here), so one pass forecasts every index and
every day at a time of day: :mod:`searchkit.analytics.forecast` uses today's row,
:mod:`searchkit.analytics.backtest` all of them. The method is described in
:mod:`searchkit.analytics.forecast`; the constants below were tuned by ``bench/forecast.py``.
"""

from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from searchkit.frames.counting import median_ranks

__all__ = [
    "COMPLETE_HOURS",
    "MIN_CALIBRATION",
    "WIDE_BAND",
    "WINDOW",
    "Forecast",
    "Reference",
    "band",
    "crossing",
    "future_share",
    "log_errors",
    "predict",
    "quiet",
    "reference",
    "shift",
    "windows",
]

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
_ODD_FROM = 5  # with 5-8 errors, an extreme error this far beyond the next one in ...
_ODD_GAP = float(np.log(10.0))  # ... (10x in the rest of the day) counts as that one
WIDE_BAND = (0.5, 2.0)  # rest-of-day multipliers when an index's own errors are too few
COMPLETE_HOURS = 23.0
_NETWORK = 8  # a median of at most this many values sorts them by a network (_short_median)


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
    if values.shape[-1] <= _NETWORK:
        return _short_median(values)
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
        low, high = median_ranks(present)
        at = np.arange(len(some))
        with np.errstate(invalid="ignore", over="ignore"):
            median[some] = (ordered[at, low] + ordered[at, high]) / 2.0
    return median.reshape(values.shape[:-1])


def _short_median(values: np.ndarray) -> np.ndarray:
    """:func:`nanmedian` of a short last axis (the windows of days): the same numbers.

    The values at each position of the axis are sorted against each other by a network
    of minima and maxima (:data:`_NETWORKS`; NaN taken as +inf, so it sorts last as
    ``np.sort`` puts it), whole arrays at a time: ``np.sort`` of a million rows of 7
    values spends its time per row and copies the windows twice; this copies them once.
    Then each slice's middle two of the values present are picked (``np.choose``).
    """
    size = values.shape[-1]
    ranks, count = [], np.zeros(values.shape[:-1], np.int64)
    for k in range(size):
        column = values[..., k]
        missing = np.isnan(column)
        count += ~missing
        ranks.append(np.where(missing, np.inf, column))
    spare = np.empty_like(ranks[0])
    for low_at, high_at in _NETWORKS.get(size) or _transpositions(size):
        low, high = ranks[low_at], ranks[high_at]
        np.minimum(low, high, out=spare)
        np.maximum(low, high, out=high)
        ranks[low_at], spare = spare, low
    # The middle two of the values present (the middle one twice for an odd count).
    first, second = median_ranks(count)
    below = np.choose(np.maximum(first, 0), ranks[: (size + 1) // 2])
    above = np.choose(np.minimum(second, size - 1), ranks[: size // 2 + 1])
    with np.errstate(invalid="ignore", over="ignore"):
        median: np.ndarray = (below + above) / 2.0
    median[count == 0] = np.nan
    return median


def _transpositions(size: int) -> list[tuple[int, int]]:
    """An odd-even transposition sorting network of ``size`` places."""
    return [(at, at + 1) for turn in range(size) for at in range(turn % 2, size - 1, 2)]


#: Sorting networks of the fewest comparators (Knuth; Dobbelaere's list), by size; a test
#: checks each sorts every input of zeros and ones (so, any input).
_NETWORKS: dict[int, list[tuple[int, int]]] = {
    2: [(0, 1)],
    3: [(0, 2), (0, 1), (1, 2)],
    4: [(0, 2), (1, 3), (0, 1), (2, 3), (1, 2)],
    5: [(0, 3), (1, 4), (0, 2), (1, 3), (0, 1), (2, 4), (1, 2), (3, 4), (2, 3)],
    6: [
        (0, 5), (1, 3), (2, 4), (1, 2), (3, 4), (0, 3),
        (2, 5), (0, 1), (2, 3), (4, 5), (1, 2), (3, 4),
    ],
    7: [
        (0, 6), (2, 3), (4, 5), (0, 2), (1, 4), (3, 6), (0, 1), (2, 5),
        (3, 4), (1, 2), (4, 6), (2, 3), (4, 5), (1, 2), (3, 4), (5, 6),
    ],
    8: [
        (0, 2), (1, 3), (4, 6), (5, 7), (0, 4), (1, 5), (2, 6), (3, 7), (0, 1), (2, 3),
        (4, 5), (6, 7), (2, 4), (3, 5), (1, 4), (3, 6), (1, 2), (3, 4), (5, 6),
    ],
}  # fmt: skip


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


#: The last references worked out (at most two shapes: a forecast's and a backtest's), with
#: the days before the last they came from: see :func:`reference`.
_KEPT: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray, Reference]] = {}
_KEPT_LOCK = threading.Lock()


def reference(ops: np.ndarray, cov: np.ndarray) -> Reference:
    """Each day's usual level and profile, from the complete days before it only.

    No day's reference looks at the day itself, so the last day's points change only its
    own ``complete`` and ``totals``: when every day before the last is what the previous
    call was given (a refresh of today's forecast, the same past days), that call's
    reference is kept and only those two are worked out again. The same numbers, to the bit.
    """
    with _KEPT_LOCK:
        kept = _KEPT.get(ops.shape)
    if kept is not None and _same_past(kept[0], ops) and _same_past(kept[1], cov):
        last_complete = cov[:, -1:].sum(axis=2) >= COMPLETE_HOURS
        complete = kept[2].complete.copy()
        complete[:, -1:] = last_complete
        totals = kept[2].totals.copy()
        totals[:, -1:] = np.where(last_complete, ops[:, -1:].sum(axis=2), np.nan)
        return replace(kept[2], complete=complete, totals=totals)
    ref = _reference(ops, cov)
    for values in vars(ref).values():
        values.setflags(write=False)  # kept: a caller writing into it would change the next
    with _KEPT_LOCK:
        if len(_KEPT) >= 2:
            _KEPT.clear()
        _KEPT[ops.shape] = (ops[:, :-1].copy(), cov[:, :-1].copy(), ref)
    return ref


def _same_past(kept: np.ndarray, now: np.ndarray) -> bool:
    """Whether the days before the last of ``now`` are ``kept`` (NaN equal to NaN)."""
    return bool(np.array_equal(kept, now[:, :-1], equal_nan=True))


def _reference(ops: np.ndarray, cov: np.ndarray) -> Reference:
    """:func:`reference`, worked out."""
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
    the extremes while n < 7); with 5 to 8 errors, a largest or smallest error more than
    10x beyond the next one in is first taken as that one, so one odd day (a one-minute
    spike) cannot set the band of a young store. With 3 to 8 errors the band is widened by
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
    # One odd day (a one-minute spike, an outage) never sets a young store's band alone:
    # with _ODD_FROM to 8 errors, an extreme error more than _ODD_GAP (in log, 10x) beyond
    # the next one in counts as that one. With so few errors the quantile is the extreme
    # itself (then widened), so one spike of 70,000x the usual day made the band of a
    # 9-day store reach 10^11 operations. Taking every young store's extremes as the next
    # ones in cost 1-16 points of the backtests' coverage (bench/forecast.py); only the
    # outliers cost 0-1.
    young = (count >= _ODD_FROM) & (count < MIN_CALIBRATION)
    top = np.maximum(count - 1, 0)[..., None]
    largest = np.take_along_axis(ordered, top, -1)[..., 0]
    second = np.take_along_axis(ordered, np.maximum(count - 2, 0)[..., None], -1)[..., 0]
    odd_high = young & (largest - second > _ODD_GAP)
    np.put_along_axis(ordered, top, np.where(odd_high, second, largest)[..., None], -1)
    odd_low = young & (ordered[..., 1] - ordered[..., 0] > _ODD_GAP)
    ordered[..., 0] = np.where(odd_low, ordered[..., 1], ordered[..., 0])
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
