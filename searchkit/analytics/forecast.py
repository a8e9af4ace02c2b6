"""Forecast daily limits from each index's own rhythm, and replay the past to show how well.

The method (chosen by :func:`backtest_forecast` on public request-count traces and on
synthetic ones; ``bench/forecast.py`` prints the comparison):

1. **Bins.** Operations (value x sampling interval, see :mod:`searchkit.analytics.usage`)
   are summed per index, UTC day and hour, beside how much of each hour the points cover.
   A day is *complete* when its points cover at least 23 of its 24 hours.
2. **Usual day.** For the day forecast, the *level* is the median total of the complete
   days among the 7 before it, and the *profile* the per-hour median of their shares of
   the day. With two weeks stored, the level is multiplied by the day of week's factor
   (the median, over the same weekday of up to 4 past weeks, of that day's total over the
   week before it) and the profile is half the same weekday's, half the last week's.
3. **Today so far.** The operations before ``now`` are compared with what the profile
   expects for the hours the points cover (so a gap is not read as a quiet morning), the
   ratio shrunk towards 1 while little of the day has passed; the last 3 hours get the
   same treatment, and the two ratios are blended (3:1 in log space). The rest of the
   day is the level x that ratio x the profile's share of the hours still to come;
   ``projected`` = used + rest.
4. **Band.** The same forecast made at the same time of day on each of the last 28
   complete days gives the index's own errors (log of actual rest / forecast rest); the
   band is their 10th and 90th percentiles (order statistics with the split-conformal
   finite-sample correction). With fewer than 5 such days the band is a fixed wide one,
   and ``reason`` says so.
5. **When.** ``hit_at`` is where used + the rest, spread over the hours by the profile,
   crosses the limit; ``hit_at_earliest`` uses the band's high end, ``hit_at_latest`` its
   low end. A crossing at or after the reset is NaT ("not before the reset").

What it needs: a few complete past days (a History, or an IndexList or raw JSON whose
points span days). With only the service's current window (about a day), the rest of the
day is taken as the same hours of yesterday that the window holds, or else as the pace of
the last ``pace_window``, and ``reason`` says which. Where it fails: a change of level
that starts today (a launch, an outage) is seen only as the day goes on; a one-off day
(a holiday) is forecast as a usual one; the first two weeks have no weekly rhythm; bursts
of a few minutes move the "last 3 hours" ratio; one unit is assumed for all values.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from searchkit.analytics.usage import (
    DAILY_FIELDS,
    VALUE_UNITS,
    _codes,
    _frames,
    _intervals,
    _is_history,
    _operations,
    _utilization,
)
from searchkit.errors import ValidationError
from searchkit.model.timestamps import utc_instant

__all__ = [
    "BACKTEST_HOURS",
    "FORECASTABLE_FIELDS",
    "FORECAST_COLUMNS",
    "Backtest",
    "backtest_forecast",
    "forecast_limits",
]

#: Limits that throughput can use up: throughput counts queries and updates together.
FORECASTABLE_FIELDS: tuple[str, ...] = (*DAILY_FIELDS, "+".join(DAILY_FIELDS))
#: Columns of :func:`forecast_limits`, in order (the index is ``index_id``).
FORECAST_COLUMNS: tuple[str, ...] = (
    "name",
    "field",
    "period_start",
    "reset",
    "used",
    "pace",
    "projected",
    "projected_low",
    "projected_high",
    "limit",
    "projected_utilization",
    "hit_at",
    "hit_at_earliest",
    "hit_at_latest",
    "unit",
    "method",
    "reason",
    "as_of",
)
#: The hours (UTC) :func:`backtest_forecast` forecasts from by default.
BACKTEST_HOURS: tuple[int, ...] = (3, 6, 9, 12, 15, 18, 21)
#: The methods of a backtest: the forecaster, then the baselines it is compared with.
METHODS: tuple[str, ...] = ("forecast", "last_hour_pace", "yesterday", "mean_7_days", "ratio_7_days")

_DAY = pd.Timedelta(days=1)
_DAY_NS = 86_400 * 10**9
_HOUR_NS = 3_600 * 10**9
_HOURS = np.arange(24, dtype=np.float64)
_UNIT = "operations"

# Tuned by bench/forecast.py on the real and synthetic traces (see the module docstring).
_WINDOW = 7  # past days for the usual level and profile
_WEEKS = 4  # same weekdays looked at for the weekly rhythm
_SHRINK = 0.15  # pseudo-share pulling today's ratio towards 1 early in the day
_SHRINK_RECENT = 0.3  # the same for the last hours' ratio
_RECENT_HOURS = 3
_RECENT_WEIGHT = 0.25  # weight of the last hours' ratio, in log space
_WEEKLY_SHAPE = 0.5  # share of the same weekday's profile once two weeks are stored
_BURST = 4.0  # an hour above this multiple of its expected share counts only that much
_CALIBRATION_DAYS = 28
_MIN_CALIBRATION = 5
_WIDE_BAND = (0.5, 2.0)  # rest-of-day multipliers when the index's own errors are too few
_COMPLETE_HOURS = 23.0
_STALE = pd.Timedelta(hours=2)


def _check_field(field: str | None) -> str:
    """Return the label of the limit compared with, refusing what throughput cannot use up."""
    if field is None:
        return FORECASTABLE_FIELDS[-1]
    if field not in FORECASTABLE_FIELDS:
        raise ValidationError(
            f"cannot forecast {field!r}: throughput counts queries and updates, so only "
            f"{', '.join(repr(f) for f in DAILY_FIELDS)} or their sum (field=None, the "
            "default) can be used up by it; rates, sizes, per-request caps and monthly "
            "limits of other quantities are not"
        )
    return field


def _limit_of(limits: pd.DataFrame, label: str) -> pd.Series:
    fields = label.split("+")
    missing = [f for f in fields if f not in limits.columns]
    if missing:
        return pd.Series(np.nan, index=limits.index, dtype=np.float64)
    total = limits[fields[0]].astype(np.float64)
    for f in fields[1:]:
        total = total + limits[f].astype(np.float64)
    return total


def _check_now(now: Any) -> pd.Timestamp | None:
    if now is None:
        return None
    if isinstance(now, int | float) and not isinstance(now, bool):
        if not np.isfinite(now):
            raise ValidationError(f"now must be a time, got {now!r}")
        if abs(now) > 1e11:  # beyond year 5138 as seconds: milliseconds or nanoseconds
            raise ValidationError(
                f"now={now!r} is not epoch seconds (a number this large looks like "
                "milliseconds or nanoseconds): pass seconds, or a text or Timestamp"
            )
    try:
        moment = utc_instant(now)
    except (ValueError, TypeError, OverflowError) as exc:
        raise ValidationError(f"now must be a time, got {now!r}: {exc}") from exc
    if moment is None or pd.isna(moment):
        raise ValidationError(f"now must be a time, got {now!r} (leave it out for the present)")
    return moment


def _check_window(pace_window: Any) -> pd.Timedelta:
    try:
        window = pd.Timedelta(pace_window)
    except (ValueError, TypeError) as exc:
        raise ValidationError(f"pace_window must be a duration, got {pace_window!r}") from exc
    if pd.isna(window) or window <= pd.Timedelta(0):
        raise ValidationError(f"pace_window must be a positive duration, got {pace_window!r}")
    return window


# --------------------------------------------------------------------------------------
# Binning: points -> operations per (index, day, hour)


@dataclass
class _Bins:
    """Operations and coverage per index, UTC day and hour, and what the points say."""

    ids: list[str]
    names: dict[str, Any]
    first_day: pd.Timestamp
    ops: np.ndarray  # [I, D, 24] operations
    cov: np.ndarray  # [I, D, 24] share of the hour the points cover (0..1)
    step: np.ndarray  # [I] sampling interval, seconds
    newest: np.ndarray  # [I] newest point's time (ns), NaT-int where none

    @property
    def days(self) -> int:
        return int(self.ops.shape[1])


def _point_arrays(tp: pd.DataFrame, value_unit: str) -> tuple[list[str], np.ndarray, ...]:
    """Codes, epoch ns, operations and the per-index step (s) of a throughput frame."""
    codes, ids = _codes(tp["index_id"])
    steps = _intervals(tp)
    ops = _operations(tp, value_unit, steps) if len(tp) else np.zeros(0)
    step = steps.reindex(pd.Index(ids, name="index_id"))
    seconds = step.fillna(pd.Timedelta(minutes=1)).dt.total_seconds().to_numpy(np.float64)
    times = np.asarray(
        pd.DatetimeIndex(tp["time"].array).tz_convert("UTC").as_unit("ns").asi8, np.int64
    )
    return ids, np.asarray(codes, np.int64), times, np.asarray(ops, np.float64), seconds


def _accumulate(
    bins_ops: np.ndarray,
    bins_cnt: np.ndarray,
    code_map: np.ndarray,
    codes: np.ndarray,
    times: np.ndarray,
    ops: np.ndarray,
    first_ns: int,
) -> None:
    days = bins_ops.shape[1]
    offset = times - first_ns
    day = offset // _DAY_NS
    keep = (day >= 0) & (day < days)
    if not keep.any():
        return
    rows = code_map[codes[keep]]
    flat = (rows * days + day[keep]) * 24 + (offset[keep] % _DAY_NS) // _HOUR_NS
    size = bins_ops.size
    bins_ops += np.bincount(flat, weights=ops[keep], minlength=size).reshape(bins_ops.shape)
    bins_cnt += np.bincount(flat, minlength=size).reshape(bins_cnt.shape)


def _bins_from_frame(
    tp: pd.DataFrame, first_day: pd.Timestamp, days: int, value_unit: str, before: int | None
) -> tuple[_Bins, np.ndarray]:
    """Bin a throughput frame; points at or after ``before`` (ns) are left out and counted."""
    ids, codes, times, ops, seconds = _point_arrays(tp, value_unit)
    later = np.zeros(len(ids), np.int64)
    if before is not None and len(times):
        after = times >= before
        later = np.bincount(codes[after], minlength=len(ids))
        codes, times, ops = codes[~after], times[~after], ops[~after]
    shape = (len(ids), days, 24)
    bins_ops, cnt = np.zeros(shape), np.zeros(shape)
    _accumulate(bins_ops, cnt, np.arange(len(ids)), codes, times, ops, first_day.value)
    newest = np.full(len(ids), np.iinfo(np.int64).min, np.int64)
    if len(times):
        np.maximum.at(newest, codes, times)
    names = _names(tp, ids)
    cov = np.minimum(cnt * seconds[:, None, None] / 3600.0, 1.0)
    return _Bins(ids, names, first_day, bins_ops, cov, seconds, newest), later


def _names(tp: pd.DataFrame, ids: list[str]) -> dict[str, Any]:
    if not len(tp):
        return {}
    last = tp.drop_duplicates("index_id", keep="last")
    return dict(zip(last["index_id"].astype(str), last["name"], strict=True))


def _bins_from_history(
    source: Any, first_day: pd.Timestamp, days: int, value_unit: str, before: int | None
) -> tuple[_Bins, np.ndarray]:
    """Bin a History one day at a time, so memory stays that of a day."""
    ids: list[str] = []
    index: dict[str, int] = {}
    names: dict[str, Any] = {}
    parts_ops: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    step_parts: dict[str, float] = {}
    later: dict[str, int] = {}
    newest: dict[str, int] = {}
    for offset in range(days):
        begin = first_day + offset * _DAY
        if before is not None and begin.value >= before:
            break
        tp = source.throughput(start=begin, end=begin + _DAY)
        if tp.empty:
            continue
        day_ids, codes, times, ops, seconds = _point_arrays(tp, value_unit)
        for pos, index_id in enumerate(day_ids):
            if index_id not in index:
                index[index_id] = len(ids)
                ids.append(index_id)
            if np.isfinite(seconds[pos]):
                step_parts[index_id] = float(seconds[pos])
        names.update(_names(tp, day_ids))
        mapped = np.asarray([index[i] for i in day_ids], np.int64)[codes]
        if before is not None:
            after = times >= before
            for row, count in zip(*np.unique(mapped[after], return_counts=True), strict=True):
                later[ids[row]] = later.get(ids[row], 0) + int(count)
            mapped, times, ops = mapped[~after], times[~after], ops[~after]
        if len(times):
            top = np.full(len(ids), np.iinfo(np.int64).min, np.int64)
            np.maximum.at(top, mapped, times)
            for row in np.flatnonzero(top > np.iinfo(np.int64).min):
                newest[ids[row]] = max(newest.get(ids[row], top[row]), int(top[row]))
        parts_ops.append((mapped, times, ops))
    shape = (len(ids), days, 24)
    bins_ops, cnt = np.zeros(shape), np.zeros(shape)
    for mapped, times, ops in parts_ops:
        _accumulate(bins_ops, cnt, np.arange(len(ids)), mapped, times, ops, first_day.value)
    seconds = np.asarray([step_parts.get(i, 60.0) for i in ids], np.float64)
    cov = np.minimum(cnt * seconds[:, None, None] / 3600.0, 1.0)
    top = np.asarray([newest.get(i, np.iinfo(np.int64).min) for i in ids], np.int64)
    return (
        _Bins(ids, names, first_day, bins_ops, cov, seconds, top),
        np.asarray([later.get(i, 0) for i in ids], np.int64),
    )


# --------------------------------------------------------------------------------------
# The model, vectorised over indexes and days


def _windows(values: np.ndarray, size: int, pad: float = np.nan) -> np.ndarray:
    """For each day j, the ``size`` days before it: shape [I, D, ..., size]."""
    padded = np.concatenate(
        [np.full((values.shape[0], size, *values.shape[2:]), pad), values], axis=1
    )
    view = np.lib.stride_tricks.sliding_window_view(padded, size, axis=1)
    return view[:, : values.shape[1]]


def _quiet(function: Any, *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return function(*args, **kwargs)


@dataclass
class _Reference:
    """The usual day before each day: level [I, D] and hourly profile [I, D, 24]."""

    level: np.ndarray
    profile: np.ndarray
    weekly: np.ndarray  # [I, D] bool: the weekly rhythm was used
    complete: np.ndarray  # [I, D] bool
    totals: np.ndarray  # [I, D] day totals (NaN when not complete)
    past_days: np.ndarray  # [I, D] complete days among the _WINDOW before


def _reference(ops: np.ndarray, cov: np.ndarray) -> _Reference:
    complete = cov.sum(axis=2) >= _COMPLETE_HOURS
    totals = np.where(complete, ops.sum(axis=2), np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        shares = np.where((totals > 0)[..., None], ops / totals[..., None], np.nan)
    level = _quiet(np.nanmedian, _windows(totals, _WINDOW), axis=-1)
    past_days = np.isfinite(_windows(totals, _WINDOW)).sum(axis=-1)
    recent_shape = _quiet(np.nanmedian, _windows(shares, _WINDOW), axis=-1)
    # The same weekday in each of the last weeks: its total over the week before it.
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = np.where(level > 0, totals / level, np.nan)
    same = np.stack([_shift(relative, 7 * w) for w in range(1, _WEEKS + 1)], axis=-1)
    same_shape = np.stack([_shift(shares, 7 * w) for w in range(1, _WEEKS + 1)], axis=-1)
    weekly = np.isfinite(same).sum(axis=-1) >= 2
    factor = np.where(weekly, _quiet(np.nanmedian, same, axis=-1), 1.0)
    weekday_shape = _quiet(np.nanmedian, same_shape, axis=-1)
    profile = np.where(
        weekly[..., None] & np.isfinite(weekday_shape),
        _WEEKLY_SHAPE * _normal(weekday_shape) + (1 - _WEEKLY_SHAPE) * _normal(recent_shape),
        _normal(recent_shape),
    )
    return _Reference(level * factor, _normal(profile), weekly, complete, totals, past_days)


def _shift(values: np.ndarray, days: int) -> np.ndarray:
    """``values`` of ``days`` days earlier (NaN before the first day)."""
    out = np.full_like(values, np.nan, dtype=np.float64)
    if days < values.shape[1]:
        out[:, days:] = values[:, : values.shape[1] - days]
    return out


def _normal(profile: np.ndarray) -> np.ndarray:
    total = np.nansum(profile, axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, np.nan_to_num(profile) / total, np.nan)


def _future(tau: float | np.ndarray) -> np.ndarray:
    """Share of each hour still to come at time of day ``tau`` (hours): [..., 24]."""
    return np.clip(_HOURS + 1 - np.asarray(tau, np.float64)[..., None], 0.0, 1.0)


@dataclass
class _Forecast:
    used: np.ndarray  # [I, J]
    rest: np.ndarray
    amounts: np.ndarray  # [I, J, 24] the rest spread over the hours
    usable: np.ndarray  # [I, J] a profile forecast could be made


def _predict(
    ref: _Reference, obs_ops: np.ndarray, obs_cov: np.ndarray, tau: float | np.ndarray
) -> _Forecast:
    """The profile forecast of the rest of each day, from what was seen before ``tau``."""
    level, shape = ref.level, ref.profile
    future = _future(tau)
    if future.ndim == 2:
        future = future[:, None, :]
    expected_share = shape * obs_cov
    used = obs_ops.sum(axis=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        # An hour's burst counts for at most _BURST times what the hour usually holds.
        cap = _BURST * level[..., None] * np.maximum(shape, 1 / 48) * obs_cov
        seen = np.minimum(obs_ops, cap).sum(axis=2)
        ratio = (seen / level + _SHRINK) / (expected_share.sum(axis=2) + _SHRINK)
        tau_arr = np.broadcast_to(np.asarray(tau, np.float64)[..., None], level.shape)
        recent = (_HOURS >= np.floor(tau_arr)[..., None] - _RECENT_HOURS) & (
            _HOURS < tau_arr[..., None]
        )
        seen_recent = (np.minimum(obs_ops, cap) * recent).sum(axis=2)
        share_recent = (expected_share * recent).sum(axis=2)
        ratio_recent = (seen_recent / level + _SHRINK_RECENT) / (share_recent + _SHRINK_RECENT)
        blend = np.exp(
            (1 - _RECENT_WEIGHT) * np.log(ratio) + _RECENT_WEIGHT * np.log(ratio_recent)
        )
    amounts = level[..., None] * blend[..., None] * shape * future
    usable = np.isfinite(level) & (level > 0) & np.isfinite(amounts).all(axis=2)
    amounts = np.where(usable[..., None], amounts, np.nan)
    return _Forecast(used, amounts.sum(axis=2), amounts, usable)


def _crossing(
    used: np.ndarray, amounts: np.ndarray, limit: np.ndarray, tau: float | np.ndarray
) -> np.ndarray:
    """Hours after midnight at which used + the hourly amounts reach ``limit`` (NaN: not
    before the reset). ``amounts`` [..., 24] are spread evenly over each hour's future part."""
    tau = np.broadcast_to(np.asarray(tau, np.float64), used.shape)
    amounts = np.nan_to_num(amounts)
    cum = used[..., None] + np.cumsum(amounts, axis=-1)
    reached = (cum >= limit[..., None]) & (cum > 0)
    hit = reached.any(axis=-1) & np.isfinite(limit)
    hour = np.argmax(reached, axis=-1)
    before = np.take_along_axis(cum, hour[..., None], -1)[..., 0] - np.take_along_axis(
        amounts, hour[..., None], -1
    )[..., 0]
    amount = np.take_along_axis(amounts, hour[..., None], -1)[..., 0]
    start = np.maximum(hour, tau)
    span = np.clip(hour + 1 - start, 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        part = np.where(amount > 0, (limit - before) / amount, 0.0)
    when = start + np.clip(part, 0.0, 1.0) * span
    return np.where(hit & (used < limit), when, np.nan)


def _band(errors: np.ndarray, usable: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split-conformal 10th/90th percentile of each day's last ``_CALIBRATION_DAYS`` errors.

    Returns the low and high multipliers of the rest of the day and how many errors each
    rests on; fewer than ``_MIN_CALIBRATION`` gives the fixed wide band.
    """
    window = _windows(np.where(usable, errors, np.nan), _CALIBRATION_DAYS)
    count = np.isfinite(window).sum(axis=-1)
    ordered = np.sort(window, axis=-1)  # NaN last
    low_rank = np.clip(np.floor(0.1 * (count + 1)).astype(np.int64), 1, None) - 1
    high_rank = np.clip(np.ceil(0.9 * (count + 1)).astype(np.int64), 1, np.maximum(count, 1)) - 1
    low = np.take_along_axis(ordered, low_rank[..., None], -1)[..., 0]
    high = np.take_along_axis(ordered, high_rank[..., None], -1)[..., 0]
    enough = count >= _MIN_CALIBRATION
    low = np.where(enough, np.exp(np.minimum(low, 0.0)), _WIDE_BAND[0])
    high = np.where(enough, np.exp(np.maximum(high, 0.0)), _WIDE_BAND[1])
    return low, high, count


def _log_errors(actual: np.ndarray, predicted: np.ndarray, level: np.ndarray) -> np.ndarray:
    floor = np.maximum(np.nan_to_num(level), 1.0) * 1e-3
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log((actual + floor) / (predicted + floor))


# --------------------------------------------------------------------------------------
# forecast_limits


def forecast_limits(
    source: Any,
    now: Any = None,
    *,
    field: str | None = None,
    pace_window: str | pd.Timedelta = "1h",
    value_unit: str = "per_second",
) -> pd.DataFrame:
    """Say, per index, how much of a daily limit today will use and when it runs out.

    The method, what it needs and where it fails are in :mod:`searchkit.analytics.forecast`;
    in short: the rest of the day is the index's usual rest of the day (its last week's
    level and hourly profile, and its weekday's once two weeks are stored), scaled by how
    today compares so far; the band comes from its own past errors at this time of day.
    Points after ``now`` are never looked at.

    Args:
        source: An IndexList, the raw API JSON, or a :class:`~searchkit.History`.
        now: The instant to forecast from (naive is UTC, a number is epoch seconds).
            Default: the present, or the end of the newest point not in the future when
            the data end earlier (points dated in the future are left out and counted
            in ``reason``).
        field: ``"max_daily_queries"``, ``"max_daily_updates"``, or None (default) for
            their sum: the limits throughput can use up.
        pace_window: How far back ``pace`` (and the fallback without past days) looks.
        value_unit: See :func:`~searchkit.usage_frame`.

    Returns:
        Indexed by ``index_id``, the columns of :data:`FORECAST_COLUMNS`: ``used``,
        ``projected`` (at the reset), ``projected_low``/``projected_high`` (the 10-90 band)
        and ``limit`` in operations (``unit``), ``pace`` in operations per second over the
        last ``pace_window``, ``projected_utilization`` = projected / limit (0 when
        unlimited), ``hit_at`` the instant the limit is (or was) reached, NaT when not
        before the reset, ``hit_at_earliest``/``hit_at_latest`` the same at the band's
        ends, ``method`` how the row was forecast, ``reason`` empty for a forecast with a
        calibrated band, else what is missing or why nothing was forecast (NaN/NaT), and
        ``as_of`` the instant forecast from (aware UTC, the same on every row).

    Raises:
        ValidationError: ``field`` is not forecastable, ``now`` or ``pace_window`` is not
            a time or a positive duration.

    Example:
        >>> forecast_limits(sk.History("usage-history"))  # doctest: +SKIP
    """
    label = _check_field(field)
    window = _check_window(pace_window)
    asked = _check_now(now)
    if value_unit not in VALUE_UNITS:
        raise ValidationError(
            f"value_unit must be one of {sorted(VALUE_UNITS)}, got {value_unit!r}"
        )
    present = pd.Timestamp.now(tz="UTC")
    history = _is_history(source)
    if history:
        limits = source.limits()
        newest = source._newest_time()
        anchor = asked if asked is not None else min(newest or present, present)
    else:
        tp, limits = _frames(source)
        anchor = asked if asked is not None else present
    today = anchor.normalize()
    days = _CALIBRATION_DAYS + _WINDOW + 7 * _WEEKS - 7 + 1
    first = today - (days - 1) * _DAY
    cutoff = asked.value if asked is not None else present.value
    if history:
        bins, later = _bins_from_history(source, first, days, value_unit, cutoff + 1)
    else:
        bins, later = _bins_from_frame(tp, first, days, value_unit, cutoff + 1)
    if asked is None:
        # The data's own "now" when they end before the present: the newest point's end.
        known = bins.newest > np.iinfo(np.int64).min
        if known.any():
            ends = bins.newest[known] + (bins.step[known] * 1e9).astype(np.int64)
            moment = pd.Timestamp(min(int(ends.max()), present.value), unit="ns", tz="UTC")
        else:
            moment = present
        if moment.normalize() != today:
            return forecast_limits(
                source, moment, field=field, pace_window=pace_window, value_unit=value_unit
            )
        # Points after the moment (only the future ones were left out so far).
        moment_ns = moment.value
    else:
        moment = asked
        moment_ns = asked.value
    return _forecast_rows(bins, later, limits, label, moment, moment_ns, window, value_unit, source)


def _forecast_rows(
    bins: _Bins,
    later: np.ndarray,
    limits: pd.DataFrame,
    label: str,
    moment: pd.Timestamp,
    moment_ns: int,
    window: pd.Timedelta,
    value_unit: str,
    source: Any,
) -> pd.DataFrame:
    start = moment.normalize()
    tau = (moment_ns - start.value) / _HOUR_NS
    today = bins.days - 1
    ref = _reference(bins.ops, bins.cov)
    # Past days as they looked at this time of day (an hour's points assumed even), today
    # as it is: its bins hold only points before the moment.
    seen = 1.0 - _future(tau)
    obs_ops = bins.ops * seen
    obs_cov = bins.cov * seen
    obs_ops[:, today], obs_cov[:, today] = bins.ops[:, today], bins.cov[:, today]
    fc = _predict(ref, obs_ops, obs_cov, tau)
    actual_rest = (bins.ops * _future(tau)).sum(axis=2)
    errors = _log_errors(actual_rest, fc.rest, ref.level)
    errors[:, today] = np.nan
    outcome = ref.complete & (np.arange(bins.days) < today)
    low_k, high_k, calibrated = _band(errors, fc.usable & outcome)

    index_of = {index_id: i for i, index_id in enumerate(bins.ids)}
    limit = _limit_of(limits, label)
    rows = []
    seconds_left = max((start + _DAY - moment).total_seconds(), 0.0)
    for index_id in limits.index:
        key = str(index_id)
        row: dict[str, Any] = dict.fromkeys(FORECAST_COLUMNS, np.nan)
        row.update(
            name=limits.loc[index_id, "name"] if "name" in limits.columns else None,
            field=label,
            period_start=start,
            reset=start + _DAY,
            limit=float(limit.loc[index_id]),
            hit_at=pd.NaT,
            hit_at_earliest=pd.NaT,
            hit_at_latest=pd.NaT,
            unit=_UNIT,
            method="",
            reason="",
        )
        i = index_of.get(key)
        notes: list[str] = []
        if i is not None and later[i]:
            notes.append(
                f"{later[i]} point{'s' if later[i] != 1 else ''} dated after now "
                f"({moment:%Y-%m-%d %H:%M} UTC) left out"
            )
        if np.isnan(row["limit"]):
            row["reason"] = "the service did not report this limit"
        elif i is None or bins.newest[i] == np.iinfo(np.int64).min:
            row["reason"] = "no throughput points for this index"
        else:
            _fill_row(row, i, bins, ref, fc, low_k, high_k, calibrated, tau, moment, window)
            row["used"] = float(fc.used[i, today])
            row["pace"] = _pace(bins, i, moment_ns, window, value_unit, source)
            if not row["method"]:
                pass
            elif row["method"] == "pace":
                pace = row["pace"]
                rest = pace * seconds_left if np.isfinite(pace) else np.nan
                amounts = pace * 3600 * _future(tau) if np.isfinite(pace) else None
                _fill_projection(row, i, bins, rest, amounts, (0.5, 2.0), tau, start)
            notes = [*notes, *([row["reason"]] if row["reason"] else [])]
            row["reason"] = "; ".join(notes)
            notes = []
        if notes:
            row["reason"] = "; ".join([*notes, *([row["reason"]] if row["reason"] else [])])
        if np.isinf(row["limit"]) and row["limit"] > 0:
            # Unlimited is known without any data: nothing of it is ever used up.
            row.update(projected_utilization=0.0)
        rows.append(row)
    return _frame(rows, limits.index, moment)


def _fill_row(
    row: dict[str, Any],
    i: int,
    bins: _Bins,
    ref: _Reference,
    fc: _Forecast,
    low_k: np.ndarray,
    high_k: np.ndarray,
    calibrated: np.ndarray,
    tau: float,
    moment: pd.Timestamp,
    window: pd.Timedelta,
) -> None:
    today = bins.days - 1
    start = moment.normalize()
    newest = pd.Timestamp(int(bins.newest[i]), unit="ns", tz="UTC")
    step = pd.Timedelta(seconds=float(bins.step[i]))
    if newest + step < moment - max(_STALE, 3 * step):
        row["method"] = ""
        row["reason"] = (
            f"stale: the data end at {newest:%Y-%m-%d %H:%M} UTC, "
            f"{_age(moment - newest - step)} before now; nothing forecast for today: "
            "collect again (searchkit collect) and retry"
        )
        return
    if fc.usable[i, today]:
        row["method"] = "profile+weekly" if ref.weekly[i, today] else "profile"
        rest = float(fc.rest[i, today])
        k = (float(low_k[i, today]), float(high_k[i, today]))
        notes = []
        if ref.past_days[i, today] < 3:
            notes.append(f"only {ref.past_days[i, today]} complete past day(s) for the profile")
        if calibrated[i, today] < _MIN_CALIBRATION:
            notes.append(
                f"band wide ({_WIDE_BAND[0]}x-{_WIDE_BAND[1]}x the rest of the day): "
                f"{calibrated[i, today]} past day(s) to calibrate it on, "
                f"{_MIN_CALIBRATION} needed"
            )
        row["reason"] = "; ".join(notes)
        _fill_projection(row, i, bins, rest, fc.amounts[i, today], k, tau, start)
        return
    # No complete past day: what the window holds of yesterday's same hours, else the pace.
    future = _future(tau)
    yesterday = today - 1
    covered = (bins.cov[i, yesterday] * future).sum() >= 0.95 * future.sum() > 0
    if yesterday >= 0 and covered:
        amounts = bins.ops[i, yesterday] * future
        row["method"] = "yesterday"
        row["reason"] = (
            "no complete past day (only the service's current window?): the rest of the "
            "day is yesterday's same hours, band wide; collect a History for the daily "
            "profile and a calibrated band"
        )
        _fill_projection(row, i, bins, float(amounts.sum()), amounts, _WIDE_BAND, tau, start)
        return
    row["method"] = "pace"
    row["reason"] = (
        f"no past day to learn a rhythm from: the rest of the day at the pace of the last "
        f"{_age(window)}, band wide; collect a History for a better forecast"
    )


def _fill_projection(
    row: dict[str, Any],
    i: int,
    bins: _Bins,
    rest: float,
    amounts: np.ndarray | None,
    band: tuple[float, float],
    tau: float,
    start: pd.Timestamp,
) -> None:
    today = bins.days - 1
    used = float(bins.ops[i, today].sum())
    limit = row["limit"]
    if amounts is None or not np.isfinite(rest):
        row["reason"] = row["reason"] or "no points in the pace window before now"
        return
    row["projected"] = used + rest
    row["projected_low"] = used + rest * band[0]
    row["projected_high"] = used + rest * band[1]
    row["projected_utilization"] = float(_utilization([used + rest], [limit])[0])
    crossed = _crossed_at(bins, i, limit, start) if used >= limit and used > 0 else None
    for column, factor in (("hit_at", 1.0), ("hit_at_earliest", band[1]), ("hit_at_latest", band[0])):
        if crossed is not None:
            row[column] = crossed
            continue
        hours = _crossing(
            np.asarray(used), np.asarray(amounts) * factor, np.asarray(limit, np.float64), tau
        )
        row[column] = _instant(start, float(hours))


def _instant(start: pd.Timestamp, hours: float) -> Any:
    """``start`` + ``hours``, NaT when not finite or not before the reset."""
    if not np.isfinite(hours) or hours >= 24.0:
        return pd.NaT
    return start + pd.Timedelta(round(hours * _HOUR_NS), "ns")


_CROSSED: dict[int, Any] = {}


def _crossed_at(bins: _Bins, i: int, limit: float, start: pd.Timestamp) -> Any:
    """The hour-resolution instant today's operations reached ``limit`` (already past)."""
    cum = np.cumsum(bins.ops[i, -1])
    hour = int(np.argmax(cum >= limit))
    before = cum[hour] - bins.ops[i, -1, hour]
    amount = bins.ops[i, -1, hour]
    part = (limit - before) / amount if amount > 0 else 0.0
    span = min(bins.cov[i, -1, hour], 1.0)
    return start + pd.Timedelta(round((hour + min(max(part, 0.0), 1.0) * span) * _HOUR_NS), "ns")


def _pace(
    bins: _Bins, i: int, moment_ns: int, window: pd.Timedelta, value_unit: str, source: Any
) -> float:
    """Mean operations per second over the ``window`` before the moment (hour bins)."""
    begin = moment_ns - window.value
    first = bins.first_day.value
    hours = np.arange(bins.days * 24)
    starts = first + hours * _HOUR_NS
    ends = starts + _HOUR_NS
    overlap = np.clip(np.minimum(ends, moment_ns) - np.maximum(starts, begin), 0, None) / _HOUR_NS
    inside = overlap > 0
    if not inside.any():
        return np.nan
    ops = bins.ops[i].reshape(-1)[inside]
    cov = bins.cov[i].reshape(-1)[inside]
    # An hour cut by the window counts its points in proportion (points assumed even).
    seconds = (np.minimum(cov, overlap[inside] * 0 + 1) * 3600 * overlap[inside]).sum()
    if seconds <= 0:
        return np.nan
    return float((ops * overlap[inside]).sum() / seconds)


def _age(delta: pd.Timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    if minutes < 120:
        return f"{minutes} min"
    if minutes < 2 * 1440:
        return f"{minutes // 60} h"
    return f"{minutes // 1440} days"


def _frame(rows: list[dict[str, Any]], index: pd.Index, moment: pd.Timestamp) -> pd.DataFrame:
    out = pd.DataFrame(rows, columns=list(FORECAST_COLUMNS), index=pd.Index(index, name="index_id"))
    for column in ("period_start", "reset", "hit_at", "hit_at_earliest", "hit_at_latest"):
        out[column] = pd.to_datetime(out[column], utc=True).dt.as_unit("ns")
    for column in (
        "used",
        "pace",
        "projected",
        "projected_low",
        "projected_high",
        "limit",
        "projected_utilization",
    ):
        out[column] = out[column].astype(np.float64)
    out["as_of"] = pd.DatetimeIndex([moment] * len(out), dtype="datetime64[ns, UTC]")
    for column in ("name", "field", "unit", "method", "reason"):  # also when empty
        out[column] = out[column].astype("str")
    return out


# --------------------------------------------------------------------------------------
# backtest_forecast


@dataclass(frozen=True)
class Backtest:
    """What :func:`backtest_forecast` found: every replayed forecast and a summary.

    Attributes:
        results: One row per index, day and hour forecast from (tidy; see
            :func:`backtest_forecast`).
        summary: One row per method: the forecaster first, then the baselines.
    """

    results: pd.DataFrame
    summary: pd.DataFrame

    def __repr__(self) -> str:
        return (
            f"Backtest({len(self.results)} forecasts)\n"
            + self.summary.to_string(float_format=lambda v: f"{v:.3f}")
        )

    def _repr_html_(self) -> str:
        return (
            f"<p>Backtest of {len(self.results)} forecasts</p>"
            + self.summary.to_html(float_format=lambda v: f"{v:.3f}")
        )


def backtest_forecast(
    source: Any,
    *,
    hours: Sequence[float] = BACKTEST_HOURS,
    field: str | None = None,
    limit: float | str | None = None,
    value_unit: str = "per_second",
    warmup: int = _WINDOW,
) -> Backtest:
    """Replay past days: forecast at each hour from only the data before it, compare.

    For each complete past day (its points cover 23 hours or more) with at least
    ``warmup`` days stored before it, and each hour in ``hours``, the forecast of
    :func:`forecast_limits` is made from the points before that instant and compared with
    the day's real total, beside four baselines: ``last_hour_pace`` (the last hour's rate
    until midnight), ``yesterday`` (the rest of the day as yesterday's same hours),
    ``mean_7_days`` (as the mean of the last 7 days' same hours) and ``ratio_7_days``
    (today so far x the last 7 days' rest / so-far ratio).

    Args:
        source: An IndexList, the raw API JSON, or a :class:`~searchkit.History`; the
            points must span several days.
        hours: Times of day (UTC hours, may be fractional) to forecast from.
        field: The limit, as in :func:`forecast_limits`.
        limit: The limit breaches are judged against: None (default) each index's own
            (latest) limit; ``"median"`` each index's median daily total (about half of
            the days breach, a fair test of the breach calls); or a number.
        value_unit: See :func:`~searchkit.usage_frame`.
        warmup: Days stored before a day for it to be replayed.

    Returns:
        A :class:`Backtest`. ``results`` has one row per index, day and hour:
        ``index_id``, ``name``, ``day``, ``hour``, ``as_of``, ``limit``, ``used`` (before
        ``as_of``), ``actual`` (the day's total), ``actual_hit_at``, then per method
        ``<method>`` (projected total) and ``<method>_hit_at``, and for the forecaster
        ``forecast_low``/``forecast_high`` (the band). ``summary`` has one row per
        method: ``forecasts``, ``mean_abs_error`` and ``median_abs_error`` (of the day's
        total, relative to it), ``precision``, ``recall`` and ``f1`` of the breach calls
        (projected above the limit vs the real total above it), ``coverage`` (share of
        real totals inside the 10-90 band; forecaster only) and ``hit_time_error_min``
        (median absolute error of the hit time in minutes, on the days both the method
        and the outcome cross after ``as_of``).

    Raises:
        ValidationError: ``field`` is not forecastable or ``limit`` is not understood.
    """
    label = _check_field(field)
    if value_unit not in VALUE_UNITS:
        raise ValidationError(
            f"value_unit must be one of {sorted(VALUE_UNITS)}, got {value_unit!r}"
        )
    hours = [float(h) for h in hours]
    if not hours or any(not 0 <= h < 24 for h in hours):
        raise ValidationError(f"hours must be times of day in [0, 24), got {hours!r}")
    bins, limits = _all_bins(source, value_unit)
    limit_values = _backtest_limits(bins, limits, label, limit)
    return _backtest(bins, limit_values, hours, warmup)


def _all_bins(source: Any, value_unit: str) -> tuple[_Bins, pd.DataFrame]:
    if _is_history(source):
        days = source._days("throughput")
        limits = source.limits()
        if not days:
            empty = pd.DataFrame(columns=["index_id", "time", "value", "name"])
            return _bins_from_frame(empty, pd.Timestamp(0, tz="UTC"), 0, value_unit, None)[
                0
            ], limits
        first = pd.Timestamp(days[0], tz="UTC")
        count = (pd.Timestamp(days[-1], tz="UTC") - first).days + 1
        return _bins_from_history(source, first, count, value_unit, None)[0], limits
    tp, limits = _frames(source)
    return _bins_from_throughput(tp, value_unit), limits


def _bins_from_throughput(tp: pd.DataFrame, value_unit: str) -> _Bins:
    """Bin a whole throughput frame, days from its first to its last point's."""
    if tp.empty:
        return _bins_from_frame(tp, pd.Timestamp(0, tz="UTC"), 0, value_unit, None)[0]
    times = pd.DatetimeIndex(tp["time"].array).tz_convert("UTC")
    first = times.min().normalize()
    count = (times.max().normalize() - first).days + 1
    return _bins_from_frame(tp, first, count, value_unit, None)[0]


def _backtest_limits(bins: _Bins, limits: pd.DataFrame, label: str, limit: Any) -> np.ndarray:
    if limit is None:
        values = _limit_of(limits, label)
        return np.asarray([values.get(i, np.nan) for i in bins.ids], np.float64)
    if isinstance(limit, str):
        if limit != "median":
            raise ValidationError(f'limit must be None, "median" or a number, got {limit!r}')
        complete = bins.cov.sum(axis=2) >= _COMPLETE_HOURS
        totals = np.where(complete, bins.ops.sum(axis=2), np.nan)
        return np.asarray(_quiet(np.nanmedian, totals, axis=1), np.float64)
    try:
        number = float(limit)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f'limit must be None, "median" or a number, got {limit!r}') from exc
    return np.full(len(bins.ids), number)


def _backtest(bins: _Bins, limit: np.ndarray, hours: list[float], warmup: int) -> Backtest:
    ref = _reference(bins.ops, bins.cov)
    day_index = np.arange(bins.days)
    evaluable = ref.complete & (day_index >= warmup)[None, :] & np.isfinite(ref.totals)
    rows: list[pd.DataFrame] = []
    totals = np.nan_to_num(ref.totals)
    limit_2d = np.broadcast_to(limit[:, None], totals.shape)
    actual_hit_full = _crossing(np.zeros_like(totals), bins.ops, limit_2d, 0.0)
    for tau in hours:
        future = _future(tau)
        seen = 1.0 - future
        obs_ops, obs_cov = bins.ops * seen, bins.cov * seen
        fc = _predict(ref, obs_ops, obs_cov, tau)
        actual_rest = (bins.ops * future).sum(axis=2)
        errors = _log_errors(actual_rest, fc.rest, ref.level)
        low_k, high_k, _ = _band(errors, fc.usable & ref.complete)
        used = fc.used
        methods = {"forecast": fc.amounts, **_baselines(bins, ref, obs_ops, obs_cov, tau)}
        mask = evaluable & fc.usable
        ii, jj = np.nonzero(mask)
        if not len(ii):
            continue
        part = {
            "index_id": np.asarray(bins.ids, dtype=object)[ii],
            "name": [bins.names.get(bins.ids[i]) for i in ii],
            "day": bins.first_day + pd.to_timedelta(jj, unit="D"),
            "hour": np.full(len(ii), tau),
            "limit": limit[ii],
            "used": used[ii, jj],
            "actual": totals[ii, jj],
        }
        actual_hit = np.where(
            (used < limit_2d), actual_hit_full, np.nan
        )  # only crossings after as_of are a hit-time question
        part["actual_hit_at"] = actual_hit[ii, jj]
        for method, amounts in methods.items():
            rest = np.nansum(amounts, axis=2) if amounts is not None else np.full(totals.shape, np.nan)
            defined = np.isfinite(amounts).all(axis=2)
            part[method] = np.where(defined, used + rest, np.nan)[ii, jj]
            part[f"{method}_hit_at"] = np.where(
                defined, _crossing(used, amounts, limit_2d, tau), np.nan
            )[ii, jj]
            if method == "forecast":
                part["forecast_low"] = (used + rest * low_k)[ii, jj]
                part["forecast_high"] = (used + rest * high_k)[ii, jj]
        rows.append(pd.DataFrame(part))
    results = pd.concat(rows, ignore_index=True) if rows else _empty_results()
    if len(results):
        results["as_of"] = results["day"] + pd.to_timedelta(results["hour"], unit="h")
        for column in ["actual_hit_at", *(f"{m}_hit_at" for m in METHODS)]:
            results[column] = results["day"] + pd.to_timedelta(results[column], unit="h")
        results = results.sort_values(["index_id", "day", "hour"], kind="stable")
        results = results.reset_index(drop=True)
    ordered = [
        "index_id", "name", "day", "hour", "as_of", "limit", "used", "actual", "actual_hit_at",
        "forecast", "forecast_low", "forecast_high", "forecast_hit_at",
        *(c for m in METHODS[1:] for c in (m, f"{m}_hit_at")),
    ]  # fmt: skip
    results = results.reindex(columns=ordered)
    return Backtest(results, _summary(results))


def _empty_results() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "day": pd.DatetimeIndex([], tz="UTC"),
            "hour": np.array([], np.float64),
        }
    )


def _baselines(
    bins: _Bins, ref: _Reference, obs_ops: np.ndarray, obs_cov: np.ndarray, tau: float
) -> dict[str, np.ndarray]:
    """The rest of each day spread over its hours, as each simple baseline sees it."""
    future = _future(tau)
    full = np.where(ref.complete[..., None], bins.ops, np.nan)
    # Last hour's pace: the operations of the last hour before tau over the time covered.
    last = (_HOURS >= tau - 1) & (_HOURS < tau)
    with np.errstate(divide="ignore", invalid="ignore"):
        pace = (obs_ops * last).sum(axis=2) / ((obs_cov * last).sum(axis=2) * 3600)
    pace_amounts = pace[..., None] * 3600 * future
    yesterday = _shift(full, 1) * future
    week = _windows(full, _WINDOW)  # [I, D, 24, 7]
    mean_week = _quiet(np.nanmean, week, axis=-1) * future
    so_far = _quiet(np.nansum, _windows(full * (1 - future), _WINDOW), axis=(-1, -2))
    rest = _quiet(np.nansum, _windows(full * future, _WINDOW), axis=(-1, -2))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = rest / so_far
        spread = mean_week / mean_week.sum(axis=2, keepdims=True)
    ratio_amounts = (obs_ops.sum(axis=2) * ratio)[..., None] * np.where(
        np.isfinite(spread), spread, future / max(future.sum(), 1e-9)
    )
    ratio_amounts = np.where(np.isfinite(ratio)[..., None], ratio_amounts, np.nan)
    return {
        "last_hour_pace": pace_amounts,
        "yesterday": yesterday,
        "mean_7_days": mean_week,
        "ratio_7_days": ratio_amounts,
    }


def _summary(results: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for method in METHODS:
        if method not in results.columns or results.empty:
            rows.append({"method": method, "forecasts": 0})
            continue
        known = results[method].notna() & (results["actual"] > 0)
        part = results[known]
        actual = part["actual"].to_numpy(np.float64)
        projected = part[method].to_numpy(np.float64)
        error = np.abs(projected - actual) / actual
        breach = actual > part["limit"].to_numpy(np.float64)
        called = projected > part["limit"].to_numpy(np.float64)
        hits = int((breach & called).sum())
        precision = hits / called.sum() if called.sum() else np.nan
        recall = hits / breach.sum() if breach.sum() else np.nan
        f1 = (
            2 * precision * recall / (precision + recall)
            if np.isfinite(precision) and np.isfinite(recall) and precision + recall > 0
            else np.nan
        )
        coverage = np.nan
        if method == "forecast":
            inside = (part["forecast_low"] <= part["actual"]) & (
                part["actual"] <= part["forecast_high"]
            )
            coverage = float(inside.mean()) if len(part) else np.nan
        both = part["actual_hit_at"].notna() & part[f"{method}_hit_at"].notna()
        minutes = (
            (part.loc[both, f"{method}_hit_at"] - part.loc[both, "actual_hit_at"])
            .abs()
            .dt.total_seconds()
            / 60
        )
        rows.append(
            {
                "method": method,
                "forecasts": len(part),
                "mean_abs_error": float(np.mean(error)) if len(part) else np.nan,
                "median_abs_error": float(np.median(error)) if len(part) else np.nan,
                "precision": precision,
                "recall": recall,
                "f1": f1,
                "coverage": coverage,
                "hit_time_error_min": float(minutes.median()) if len(minutes) else np.nan,
            }
        )
    columns = [
        "forecasts", "mean_abs_error", "median_abs_error", "precision", "recall", "f1",
        "coverage", "hit_time_error_min",
    ]  # fmt: skip
    return pd.DataFrame(rows).set_index("method").reindex(columns=columns)


def _iter_ids(values: Iterable[Any]) -> list[str]:
    return [str(v) for v in values]
