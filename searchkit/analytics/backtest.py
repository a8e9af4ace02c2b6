"""Replay the past: forecast each stored day from its own morning, compare with the outcome.

:func:`backtest_forecast` makes, for every complete past day and each hour asked, the
forecast :func:`~searchkit.forecast_limits` would have made from the points before that
instant, beside four simple baselines, and scores them on what really happened. A user
sees how far to trust the forecasts of their own indexes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from searchkit.analytics import profile as pf
from searchkit.analytics.bins import Bins, bins_from_frame, bins_from_history
from searchkit.analytics.forecast import check_field, field_limit
from searchkit.analytics.reading import listed_once
from searchkit.analytics.usage import is_history, source_frames
from searchkit.errors import ValidationError
from searchkit.frames.counting import ValueUnit, check_value_unit

if TYPE_CHECKING:
    from searchkit.frames.sources import Source

__all__ = [
    "BACKTEST_HOURS",
    "METHODS",
    "Backtest",
    "backtest_forecast",
    "day_limits",
    "hour_forecast",
    "replay",
    "replay_scores",
    "source_bins",
]

#: The hours (UTC) :func:`backtest_forecast` forecasts from by default.
BACKTEST_HOURS: tuple[int, ...] = (3, 6, 9, 12, 15, 18, 21)
#: The forecaster, then the baselines it is compared with.
METHODS: tuple[str, ...] = (
    "forecast",
    "last_hour_pace",
    "yesterday",
    "mean_7_days",
    "ratio_7_days",
)
_SUMMARY = (
    "forecasts",
    "mean_abs_error",
    "median_abs_error",
    "precision",
    "recall",
    "f1",
    "coverage",
    "hit_time_error_min",
)
#: The results' public names, those of :func:`~searchkit.forecast_limits` (the replay
#: computes under its own: a method's projection is named after the method).
_PUBLIC_NAMES = {
    "day": "period",
    "actual": "used_at_reset",
    "actual_hit_at": "hit_at_actual",
    "forecast": "projected",
    "forecast_low": "projected_low",
    "forecast_high": "projected_high",
    "forecast_hit_at": "hit_at",
}


@dataclass(frozen=True)
class Backtest:
    """What :func:`backtest_forecast` found: every replayed forecast, and a summary.

    Attributes:
        results: One row per index, day and hour forecast from (see
            :func:`backtest_forecast` for the columns).
        summary: One row per method (the forecaster first, then the baselines).
    """

    results: pd.DataFrame
    summary: pd.DataFrame

    def __repr__(self) -> str:
        table = self.summary.to_string(float_format=lambda v: f"{v:.3f}")
        return f"Backtest of {len(self.results)} forecasts\n{table}"

    def _repr_html_(self) -> str:
        table = self.summary.to_html(float_format=lambda v: f"{v:.3f}")
        return f"<p>Backtest of {len(self.results)} forecasts</p>{table}"


@listed_once
def backtest_forecast(
    source: Source,
    *,
    hours: Sequence[float] = BACKTEST_HOURS,
    field: str | None = None,
    limit: float | str | None = None,
    value_unit: ValueUnit = "per_second",
    warmup: int = pf.WINDOW,
) -> Backtest:
    """Replay past days: forecast at each hour from only the data before it, compare.

    For each complete past day (points over 23 hours or more) with at least ``warmup``
    days stored before it, and each hour in ``hours``, the forecast of
    :func:`~searchkit.forecast_limits` is made from the points before that instant and
    compared with the day's real total, beside four baselines: ``last_hour_pace`` (the
    last hour's rate until midnight), ``yesterday`` (the rest of the day as yesterday's
    same hours), ``mean_7_days`` (as the mean of the last 7 days' same hours) and
    ``ratio_7_days`` (today so far x the last 7 days' rest / so-far ratio).

    Args:
        source: An IndexList, the raw API JSON, a :class:`~searchkit.History`, or a
            throughput frame (no limits in it), whose points span several days.
        hours: Times of day (UTC hours, fractions allowed) to forecast from.
        field: The limit, as in :func:`~searchkit.forecast_limits`.
        limit: What breaches are judged against: None (default) each index's latest
            limit; ``"median"`` each index's median daily total (about half the days
            breach: a fair test of the breach calls); or a number of operations.
        value_unit: See :func:`~searchkit.usage_frame`.
        warmup: Days stored before a day for it to be replayed.

    Returns:
        A :class:`Backtest`. ``results``: ``index_id``, ``name``, ``period`` (the UTC
        day), ``hour``, ``as_of``, ``limit``, ``used`` (before ``as_of``),
        ``used_at_reset`` (the day's total), ``hit_at_actual`` (when it crossed the
        limit, if after ``as_of``), then the forecast as :func:`~searchkit.forecast_limits`
        names it (``projected``, its band ``projected_low``/``projected_high``,
        ``hit_at``), then per baseline its projected total (``last_hour_pace``, ...) and
        ``<baseline>_hit_at``; all in operations. ``summary``, per method:
        ``forecasts``, ``mean_abs_error`` and ``median_abs_error`` (of the day's total,
        relative to it), ``precision``, ``recall`` and ``f1`` of the breach calls
        (projected above the limit vs the real total above it), ``coverage`` (share of
        real totals inside the 10-90 band, the forecaster only) and
        ``hit_time_error_min`` (median absolute error of the hit time in minutes, over
        the days the method and the outcome both cross after ``as_of``).

    Raises:
        ValidationError: ``field`` is not forecastable, ``hours`` are not times of day,
            or ``limit`` is not understood.

    Example:
        >>> sk.backtest_forecast(sk.History("usage-history")).summary  # doctest: +SKIP
    """
    label = check_field(field)
    check_value_unit(value_unit)
    try:
        times = [float(h) for h in hours]
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"hours must be numbers of hours, got {hours!r}") from exc
    if not times or any(not 0 <= h < 24 for h in times):
        raise ValidationError(f"hours must be times of day in [0, 24), got {list(hours)!r}")
    bins, limits = source_bins(source, value_unit)
    return replay(bins, day_limits(bins, limits, label, limit), times, warmup)


def source_bins(source: Source, value_unit: str) -> tuple[Bins, pd.DataFrame]:
    """Every stored day's hourly bins of ``source``, and its limits frame."""
    if is_history(source):
        return bins_from_history(source, value_unit), source.limits()
    tp, limits = source_frames(source)
    return bins_from_frame(tp, value_unit), limits


def day_limits(bins: Bins, limits: pd.DataFrame, label: str, limit: Any) -> np.ndarray:
    """The limit each index of ``bins`` is judged against (``limit`` as in
    :func:`backtest_forecast`): per index, in operations."""
    if limit is None:
        values = field_limit(limits, label)
        values.index = values.index.astype(str)
        return np.asarray([values.get(i, np.nan) for i in bins.ids], np.float64)
    if isinstance(limit, str):
        if limit != "median":
            raise ValidationError(f'limit must be None, "median" or a number, got {limit!r}')
        complete = bins.cov.sum(axis=2) >= pf.COMPLETE_HOURS
        totals = np.where(complete, bins.ops.sum(axis=2), np.nan)
        if not totals.size:
            return np.zeros(len(bins.ids))
        return np.asarray(pf.quiet(np.nanmedian, totals, axis=1), np.float64)
    try:
        number = float(limit)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f'limit must be None, "median" or a number, got {limit!r}') from exc
    return np.full(len(bins.ids), number)


def replay(
    bins: Bins,
    limit: np.ndarray,
    hours: Sequence[float],
    warmup: int,
    *,
    baselines: bool = True,
) -> Backtest:
    """The backtest of binned data against per-index limits (what bench/forecast.py runs);
    without ``baselines``, only the forecaster's (the baselines' columns NaN), in a fraction
    of the memory (their windows of past days are the replay's largest arrays)."""
    ref = pf.reference(bins.ops, bins.cov)
    evaluable = ref.complete & (np.arange(bins.days) >= warmup)[None, :]
    totals = np.nan_to_num(ref.totals)
    limits = np.broadcast_to(limit[:, None], totals.shape)
    outcome_hit = pf.crossing(np.zeros_like(totals), bins.ops, limits, 0.0)
    parts = [
        _replay_hour(bins, ref, evaluable, totals, limits, outcome_hit, float(tau), baselines)
        for tau in hours
    ]
    parts = [part for part in parts if len(part)]
    columns = [
        "index_id", "name", "day", "hour", "as_of", "limit", "used", "actual", "actual_hit_at",
        "forecast", "forecast_low", "forecast_high", "forecast_hit_at",
        *(c for m in METHODS[1:] for c in (m, f"{m}_hit_at")),
    ]  # fmt: skip
    if not parts:
        empty = pd.DataFrame({c: pd.Series(dtype=np.float64) for c in columns})
        for c in ("index_id", "name"):
            empty[c] = empty[c].astype("str")
        for c in ("day", "as_of", "actual_hit_at", *(f"{m}_hit_at" for m in METHODS)):
            empty[c] = pd.DatetimeIndex([], tz="UTC").as_unit("ns")
        return Backtest(empty[columns].rename(columns=_PUBLIC_NAMES), _summary(empty))
    results = pd.concat(parts, ignore_index=True)
    results["as_of"] = results["day"] + pd.to_timedelta(results["hour"], unit="h")
    for column in ["actual_hit_at", *(f"{m}_hit_at" for m in METHODS)]:
        seconds = (results[column] * 3600.0).round()  # to the second, as forecast_limits
        results[column] = results["day"] + pd.to_timedelta(seconds, unit="s")
    results = results.sort_values(["index_id", "day", "hour"], kind="stable")
    results = results[columns].reset_index(drop=True)
    return Backtest(results.rename(columns=_PUBLIC_NAMES), _summary(results))


def _replay_hour(
    bins: Bins,
    ref: pf.Reference,
    evaluable: np.ndarray,
    totals: np.ndarray,
    limits: np.ndarray,
    outcome_hit: np.ndarray,
    tau: float,
    baselines: bool = True,
) -> pd.DataFrame:
    """Every day's forecasts at ``tau`` hours, the forecaster's and the baselines' (NaN
    without ``baselines``)."""
    fc, low, high, seen_ops, seen_cov = hour_forecast(bins, ref, tau)
    ii, jj = np.nonzero(evaluable & fc.usable)
    used = fc.used
    part: dict[str, Any] = {
        "index_id": np.asarray(bins.ids, dtype=object)[ii],
        "name": np.asarray([bins.names.get(i) for i in bins.ids], dtype=object)[ii],
        "day": bins.first_day + pd.to_timedelta(jj, unit="D"),
        "hour": np.full(len(ii), tau),
        "limit": limits[ii, jj],
        "used": used[ii, jj],
        "actual": totals[ii, jj],
        "actual_hit_at": np.where(used < limits, outcome_hit, np.nan)[ii, jj],
    }
    methods = {"forecast": fc.amounts}
    if baselines:
        methods.update(_baselines(bins, ref, seen_ops, seen_cov, tau))
    for method in METHODS[1:] if not baselines else ():
        part[method] = part[f"{method}_hit_at"] = np.full(len(ii), np.nan)
    for method, amounts in methods.items():
        defined = np.isfinite(amounts).all(axis=2)
        rest = np.where(defined, np.nansum(amounts, axis=2), np.nan)
        part[method] = (used + rest)[ii, jj]
        hit = pf.crossing(used, amounts, limits, tau)
        part[f"{method}_hit_at"] = np.where(defined, hit, np.nan)[ii, jj]
    rest = fc.rest[ii, jj]
    part["forecast_low"] = used[ii, jj] + rest * low[ii, jj]
    part["forecast_high"] = used[ii, jj] + rest * high[ii, jj]
    return pd.DataFrame(part)


def hour_forecast(
    bins: Bins, ref: pf.Reference, tau: float
) -> tuple[pf.Forecast, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every day's forecast at ``tau`` hours from what was seen of it, its band's low and
    high multipliers, and what was seen (operations, coverage)."""
    future = pf.future_share(tau)
    seen_ops, seen_cov = bins.ops * (1 - future), bins.cov * (1 - future)
    actual_rest = (bins.ops * future).sum(axis=2)
    outcome = np.where(ref.complete, actual_rest, np.nan)
    fc = pf.predict(ref, seen_ops, seen_cov, tau, outcome)
    errors = pf.log_errors(actual_rest, fc.rest, ref.level)
    low, high, _ = pf.band(errors, fc.usable & ref.complete)
    return fc, low, high, seen_ops, seen_cov


def replay_scores(
    bins: Bins, limit: np.ndarray, hours: Sequence[float], warmup: int
) -> pd.DataFrame:
    """How each index's replayed forecasts fared, from :func:`replay`'s forecasts without
    its frame of results (nor the baselines): by ``index_id``, ``band_held`` (the share
    whose day's total fell inside the band), ``calls_right`` (the share of right breach
    calls, over a finite limit; NaN without one) and ``backtested`` (how many); an index
    with no forecast replayed is left out. The same shares as of ``replay(...).results``."""
    ref = pf.reference(bins.ops, bins.cov)
    evaluable = ref.complete & (np.arange(bins.days) >= warmup)[None, :]
    totals = np.nan_to_num(ref.totals)
    limits = limit[:, None]
    finite = np.isfinite(limits)
    made, inside, right, judged = (np.zeros(len(bins.ids), np.int64) for _ in range(4))
    for tau in hours:
        fc, low, high, _, _ = hour_forecast(bins, ref, float(tau))
        defined = np.isfinite(fc.amounts).all(axis=2)
        projected = fc.used + np.where(defined, np.nansum(fc.amounts, axis=2), np.nan)
        kept = evaluable & fc.usable & np.isfinite(projected)
        within = (totals >= fc.used + fc.rest * low) & (totals <= fc.used + fc.rest * high)
        call = (projected > limits) == (totals > limits)
        made += kept.sum(axis=1)
        inside += (kept & within).sum(axis=1)
        right += (kept & call & finite).sum(axis=1)
        judged += (kept & finite).sum(axis=1)
    some = made > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        out = pd.DataFrame(
            {
                "band_held": inside / made,
                "calls_right": np.where(judged > 0, right / judged, np.nan),
                "backtested": made,
            },
            index=pd.Index(bins.ids, name="index_id", dtype="str"),
        )
    return out[some].sort_index()


def _baselines(
    bins: Bins, ref: pf.Reference, seen_ops: np.ndarray, seen_cov: np.ndarray, tau: float
) -> dict[str, np.ndarray]:
    """The rest of each day spread over its hours, as each simple baseline sees it."""
    future = pf.future_share(tau)
    full = np.where(ref.complete[..., None], bins.ops, np.nan)
    last = (np.arange(24) >= tau - 1) & (np.arange(24) < tau)
    with np.errstate(divide="ignore", invalid="ignore"):
        pace = (seen_ops * last).sum(axis=2) / ((seen_cov * last).sum(axis=2) * 3600)
    week = pf.windows(full, pf.WINDOW)  # [I, D, 24, 7]
    mean_week = pf.quiet(np.nanmean, week, axis=-1) * future
    so_far = pf.quiet(np.nansum, pf.windows(full * (1 - future), pf.WINDOW), axis=(-1, -2))
    rest = pf.quiet(np.nansum, pf.windows(full * future, pf.WINDOW), axis=(-1, -2))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(so_far > 0, rest / so_far, np.nan)
        spread = mean_week / mean_week.sum(axis=2, keepdims=True)
    ratio_amounts = (seen_ops.sum(axis=2) * ratio)[..., None] * spread
    return {
        "last_hour_pace": pace[..., None] * 3600 * future,
        "yesterday": pf.shift(full, 1) * future,
        "mean_7_days": mean_week,
        "ratio_7_days": ratio_amounts,
    }


def _summary(results: pd.DataFrame) -> pd.DataFrame:
    rows = [_score(results, method) for method in METHODS]
    return pd.DataFrame(rows, index=pd.Index(METHODS, name="method"))[list(_SUMMARY)]


def _score(results: pd.DataFrame, method: str) -> dict[str, float | int]:
    part = results[results[method].notna() & (results["actual"] > 0)]
    actual = part["actual"].to_numpy(np.float64)
    projected = part[method].to_numpy(np.float64)
    limit = part["limit"].to_numpy(np.float64)
    error = np.abs(projected - actual) / actual if len(part) else np.array([np.nan])
    breach, called = actual > limit, projected > limit
    hits = float((breach & called).sum())
    precision = hits / called.sum() if called.sum() else np.nan
    recall = hits / breach.sum() if breach.sum() else np.nan
    f1 = np.nan
    if np.isfinite(precision) and np.isfinite(recall) and precision + recall > 0:
        f1 = 2 * precision * recall / (precision + recall)
    coverage = np.nan
    if method == "forecast" and len(part):
        inside = (part["forecast_low"] <= part["actual"]) & (
            part["actual"] <= part["forecast_high"]
        )
        coverage = float(inside.mean())
    both = part["actual_hit_at"].notna() & part[f"{method}_hit_at"].notna()
    late = part.loc[both, f"{method}_hit_at"] - part.loc[both, "actual_hit_at"]
    minutes = late.abs().dt.total_seconds() / 60
    return {
        "forecasts": len(part),
        "mean_abs_error": float(np.mean(error)),
        "median_abs_error": float(np.median(error)),
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "coverage": coverage,
        "hit_time_error_min": float(minutes.median()) if len(minutes) else np.nan,
    }
