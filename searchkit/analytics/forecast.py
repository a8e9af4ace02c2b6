"""Forecast today's use of the daily limits from each index's own rhythm.

The method (chosen by :func:`~searchkit.backtest_forecast` on public request-count traces
and on synthetic ones; ``bench/forecast.py`` prints the comparison):

1. **Bins.** Operations (value x sampling interval, see :mod:`searchkit.frames.counting`)
   are summed per index, UTC day and hour, beside how much of each hour the points cover.
   A day is *complete* when its points cover at least 23 of its 24 hours.
2. **The usual day.** For the day forecast, the *level* is the median total of the
   complete days among the 7 before it, the *profile* the per-hour median of their shares
   of the day. Once the same weekday a week back is stored, the level is multiplied by
   the weekday's factor (the median, over the same weekday of up to 4 past weeks, of that
   day's total over the median of the week before it) and the profile mixes that
   weekday's profile with the week's: the share that fitted the index's own last 28 days
   best (least squares), pulled towards a half (three tenths from a single past week,
   whose one day's shape is noisier) by ten days' worth of weight. Taxis and offices,
   shaped otherwise on weekends, learn to follow the weekday; an index shaped the same
   every day, the steadier week.
3. **Today so far.** The operations before ``now`` are compared with what the profile
   expects of the hours the points cover (a gap is not read as a quiet morning; an hour
   counts for at most 1.25 times its usual amount, or times the median hour of today's
   ratio to usual where that is higher, so a burst, or a level change that started
   today, counts only as far as today's typical hour bears out), blended (9:1 in log
   space) with the same ratio over the last 3 hours, shrunk towards 1. How much of that
   ratio carries into the rest of the day is learnt per index: the least-squares slope,
   over its last 28 days at this time of day, of log(real rest / usual rest) on
   log(ratio), pulled towards 1 by ten days' worth of weight. The rest of the day is
   level x ratio ** slope x the profile's share of the hours to come; ``projected`` =
   used + rest.
4. **Band.** The same forecast made at the same time of day on each of the last 28
   complete days gives the index's own errors (log of real rest / forecast rest); the
   band is their quantiles at 1 - q and q, q = 0.87 (n + 1) / n for n errors (split-
   conformal, with its finite-sample correction; the extremes up to 6 days, and with 5 to
   8 days an extreme error 10x beyond the next one counts as that one, so one odd day, a
   one-minute spike, cannot blow up a young store's band). The level
   0.87 is the backtests': errors drift, so 0.9 held 84-88% of outcomes on most real
   traces, 0.87 held 75-89% on each, about 80% on most. With 3 to 8 days the band is
   widened by half its spread each side, with fewer it is a fixed 0.5x-2x of the rest
   of the day; ``reason`` says so.
5. **When.** ``hit_at`` is where used + the rest, spread over the hours by the profile,
   crosses the limit (already crossed: the point that crossed it); ``hit_at_earliest``
   uses the band's high end, ``hit_at_latest`` its low end; NaT is "not before the reset".

What it needs: complete past days (a History, or an IndexList or raw JSON whose points
span days); a week and a day for the weekly rhythm (more weeks steady it), about two
weeks and a half for a calibrated band. With only
the service's current window (about a day) the rest of the day is the same hours of
yesterday that the window holds, else the pace of the last ``pace_window``; ``method``
and ``reason`` say which. Where it fails: a change of level that starts today (a launch,
an outage) shows only as the day goes on; a one-off day (a holiday) is forecast as a usual
one, and the same weekday a week later is forecast low while a single past week is
stored; the first week knows no weekly rhythm; all values are read in one assumed unit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from searchkit._deprecation import legacy_arguments
from searchkit.analytics import profile as pf
from searchkit.analytics.bins import DAY, NO_TIME, Bins, bins_from_frame, bins_from_history
from searchkit.analytics.crossed import crossed_at, read_crossings
from searchkit.analytics.days import PointsReader
from searchkit.analytics.limit_periods import UNLIMITED_REASON
from searchkit.analytics.reading import listed_once
from searchkit.analytics.reasons import (
    no_data_reasons,
    reasons,
    require_limits,
    say_points_after,
)
from searchkit.analytics.usage import DAILY_FIELDS, is_history, source_frames, utilization_ratio
from searchkit.errors import ValidationError
from searchkit.frames.counting import DAY_NS, HOUR_NS, ValueUnit, check_value_unit
from searchkit.frames.zones import Instant, TimeZone, resolve_zone, utc_instant

if TYPE_CHECKING:
    from searchkit.frames.sources import Source
    from searchkit.history.usage_history import History

__all__ = [
    "FORECASTABLE_FIELDS",
    "FORECAST_COLUMNS",
    "check_field",
    "field_limit",
    "forecast_limits",
    "forecast_parts",
]

#: Limits that throughput can use up: throughput counts queries and updates together.
FORECASTABLE_FIELDS: tuple[str, ...] = (*DAILY_FIELDS, "+".join(DAILY_FIELDS))
#: Columns of :func:`forecast_limits`, in order (the index is ``index_id``).
FORECAST_COLUMNS: tuple[str, ...] = (
    "name",
    "field",
    "period",
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
#: The columns that hold instants (shown in ``tz``).
_INSTANTS = ("period", "reset", "hit_at", "hit_at_earliest", "hit_at_latest", "as_of")
#: Unit of ``used``, ``projected*`` and ``limit`` (``pace`` is operations per second).
UNIT = "operations"
_DAYS_READ = pf.CALIBRATION_DAYS + pf.WINDOW + 7
_STALE = pd.Timedelta(hours=2)


def check_field(field: str | None) -> str:
    """Return the label of the limit compared with, refusing what throughput cannot use up."""
    if field is None:
        return FORECASTABLE_FIELDS[-1]
    if field not in FORECASTABLE_FIELDS:
        raise ValidationError(
            f"cannot forecast {field!r}: throughput counts queries and updates, so only "
            f"{' or '.join(repr(f) for f in DAILY_FIELDS)} or their sum (field=None, the "
            "default) can be used up by it; a rate, a size, a per-request cap or a "
            "monthly limit of another quantity cannot"
        )
    return field


def field_limit(limits: pd.DataFrame, label: str) -> pd.Series:
    """The limit ``label`` names (a field or a sum of fields) per index, NaN if unreported."""
    total = pd.Series(0.0, index=limits.index)
    for name in label.split("+"):
        if name not in limits.columns:
            return pd.Series(np.nan, index=limits.index)
        total = total + limits[name].astype(np.float64)
    return total


def _check_now(now: Instant | None) -> pd.Timestamp | None:
    if now is None:
        return None
    if isinstance(now, int | float) and not isinstance(now, bool):
        if not np.isfinite(now):
            raise ValidationError(f"now must be a time, got {now!r}")
        if abs(now) >= 1e11:  # past the year 5138 as seconds: milli- or nanoseconds
            raise ValidationError(
                f"now={now!r} is not in epoch seconds (a number this large is "
                "milliseconds or nanoseconds): pass seconds, a text or a Timestamp"
            )
    if isinstance(now, type(pd.NaT)):
        raise ValidationError(f"now must be a time, got {now!r} (leave it out for the present)")
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


@legacy_arguments(positional=("now",))
@listed_once
def forecast_limits(
    source: Source,
    *,
    now: Instant | None = None,
    field: str | None = None,
    pace_window: str | pd.Timedelta = "1h",
    value_unit: ValueUnit = "per_second",
    tz: TimeZone = None,
) -> pd.DataFrame:
    """Say, per index, how much of a daily limit today will use and when it runs out.

    The rest of the day is the index's usual rest of the day (its last week's level and
    hourly profile, and its weekday's once a week back is stored), scaled by how today
    compares so far; the band comes from its own past errors at this time of day. The
    method, what it needs and where it fails: :mod:`searchkit.analytics.forecast`.
    Points after ``now`` are never looked at.

    Args:
        source: An IndexList, the raw API JSON, a :class:`~searchkit.History`, or a
            throughput frame (it carries no limits: ``limit`` is NaN, ``reason`` says so).
        now: The instant to forecast from (naive is UTC, a number is epoch seconds).
            Default: the present, or the end of the newest point's interval when the
            data end earlier; points dated in the future are left out and counted in
            ``reason``.
        field: ``"max_daily_queries"``, ``"max_daily_updates"``, or None (default) for
            their sum: the limits throughput can use up.
        pace_window: How far back ``pace`` (and the fallback without past days) looks.
        value_unit: See :func:`~searchkit.usage_frame`.
        tz: Time zone of the instants (``period``, ``reset``, ``hit_at*``, ``as_of``);
            None shows them in UTC. The day forecast is the UTC day, the limits' reset,
            whatever the zone.

    Returns:
        Indexed by ``index_id``, the columns of :data:`FORECAST_COLUMNS`. ``used``,
        ``projected`` (at the reset), ``projected_low``/``projected_high`` (its 10-90
        band) and ``limit`` are in operations (``unit``); ``pace`` is operations per
        second over the last ``pace_window``; ``projected_utilization`` = projected /
        limit (NaN when unlimited: no share of a limit is used; ``reason`` then starts
        with ``"unlimited"``); ``hit_at`` the instant the limit is (or was) reached,
        NaT when not before the reset, ``hit_at_earliest``/``hit_at_latest`` the same at
        the band's high and low ends; ``method`` how the row was forecast
        (``profile``, ``profile+weekly``, ``yesterday``, ``pace``, or empty when not);
        ``reason`` empty for a forecast with a calibrated band, else what is missing or
        why nothing was forecast (NaN/NaT); ``as_of`` the instant forecast from.

    Raises:
        ValidationError: ``field`` is not forecastable, ``now`` is not a time,
            ``pace_window`` is not a positive duration, or ``tz`` is unknown.
        HistoryError: a History holds throughput points but no limits (a first collect
            stopped between the two): the message says to collect once more.

    Example:
        >>> sk.forecast_limits(sk.History("usage-history"))  # doctest: +SKIP
    """
    zone = resolve_zone(tz)
    out, _, _ = forecast_parts(
        source,
        now,
        field=field,
        pace_window=pace_window,
        value_unit=value_unit,
        last_points=False,
    )
    if zone is not None:
        for column in _INSTANTS:
            out[column] = out[column].dt.tz_convert(zone)
    return out


def forecast_parts(
    source: Source,
    now: Instant | None = None,
    *,
    field: str | None = None,
    pace_window: str | pd.Timedelta = "1h",
    value_unit: str = "per_second",
    last_points: bool = True,
) -> tuple[pd.DataFrame, Bins, dict[str, np.ndarray]]:
    """:func:`forecast_limits`' rows (in UTC), with the bins and the plan (each index's rest
    of the day spread over the hours, its band) they come from: what a picture of the day
    draws. The plan is worked out once, for the rows and the picture.

    Without ``last_points`` today may come from its rollup (the collector keeps it current):
    then :attr:`Bins.last_points` holds only the points of indexes that reach their limit
    today (their crossing instant needs them), not the whole day a picture draws."""
    label = check_field(field)
    window = _check_window(pace_window)
    asked = _check_now(now)
    check_value_unit(value_unit)
    bins, limits, moment = _load(
        source, asked, pd.Timestamp.now(tz="UTC"), value_unit, last_points=last_points
    )
    if bins.last_from_sums and is_history(source):  # today from its rollup: the points
        limit = field_limit(limits, label).to_numpy(np.float64)  # of any index at its limit
        read_crossings(source, bins, limit, limits.index, moment)
    later = bins.future.copy()
    if asked is not None:  # points after an explicit now are not news: only ignored
        bins.future[:] = 0
    tau = (moment - moment.normalize()) / pd.Timedelta(hours=1)
    plan = _plan(bins, tau, window)
    out = _rows(bins, limits, label, moment, window, plan)
    if asked is not None:
        say_points_after(out, bins, later, source, moment)
    return out, bins, plan


def _load(
    source: Source,
    asked: pd.Timestamp | None,
    present: pd.Timestamp,
    value_unit: str,
    *,
    last_points: bool = True,
) -> tuple[Bins, pd.DataFrame, pd.Timestamp]:
    """Bin the days the forecast looks at, up to the forecast's instant, and find it;
    without ``last_points``, today from its rollup when current (see
    :func:`~searchkit.analytics.bins.bins_from_history`)."""
    if is_history(source):
        limits = source.limits()
        require_limits(source, limits)
        reader = PointsReader(source)  # today's points: read to find the instant, then binned
        moment = asked or _history_now(source, reader, present, value_unit)
        first = moment.normalize() - (_DAYS_READ - 1) * DAY
        bins = bins_from_history(
            source,
            value_unit,
            first,
            _DAYS_READ,
            moment.value,
            asked is None,
            reader=reader,
            last_points=last_points,
        )
    else:
        tp, limits = source_frames(source)
        moment = asked or _data_now(tp, present, value_unit)
        first = moment.normalize() - (_DAYS_READ - 1) * DAY
        bins = bins_from_frame(tp, value_unit, first, _DAYS_READ, moment.value)
    return bins, limits, moment


def _data_now(tp: pd.DataFrame, present: pd.Timestamp, value_unit: str) -> pd.Timestamp:
    """The end of the newest point's interval not in the future; else the present."""
    if tp.empty:
        return present
    return _bins_now(bins_from_frame(tp, value_unit, cut=present.value + 1), present)


def _bins_now(bins: Bins, present: pd.Timestamp) -> pd.Timestamp:
    """:func:`_data_now` of binned points (those after ``present`` left out)."""
    known = bins.newest != NO_TIME
    if not known.any():
        return present
    ends = bins.newest[known] + np.round(bins.step[known] * 1e9).astype(np.int64)
    return pd.Timestamp(min(int(ends.max()), present.value), unit="ns", tz="UTC")


def _history_now(
    source: History, reader: PointsReader, present: pd.Timestamp, value_unit: str
) -> pd.Timestamp:
    """:func:`_data_now` of a History, reading only the newest day not in the future (or,
    when it holds no point before the present, the day before)."""
    newest = source.newest_time()
    if newest is None:
        return present
    day = min(newest, present).normalize()
    # The days the forecast then bins, read once: this instant's day is among them.
    reader.sums(f"{day - _DAYS_READ * DAY:%Y-%m-%d}", f"{day:%Y-%m-%d}")
    for first in (day, day - DAY):
        bins = bins_from_history(
            source, value_unit, first, 1, present.value + 1, reader=reader, last_points=False
        )
        if (bins.newest != NO_TIME).any():
            break
    return _bins_now(bins, present)


def _rows(
    bins: Bins,
    limits: pd.DataFrame,
    label: str,
    moment: pd.Timestamp,
    window: pd.Timedelta,
    plan: dict[str, np.ndarray],
) -> pd.DataFrame:
    """One row per index of ``limits``: today's forecast as of ``moment`` (by ``plan``)."""
    start = moment.normalize()
    row_of = {index_id: i for i, index_id in enumerate(bins.ids)}
    rows = np.asarray([row_of.get(str(i), -1) for i in limits.index], np.int64)
    limit = field_limit(limits, label).to_numpy(np.float64)
    today = _today(bins, plan, moment, window, limit, rows)
    out = pd.DataFrame(index=pd.Index(limits.index, name="index_id"))
    out["name"] = limits["name"].astype("str") if "name" in limits.columns else ""
    out["field"] = label
    out["period"] = start
    out["reset"] = start + DAY
    for column in ("used", "pace", "projected", "projected_low", "projected_high"):
        out[column] = today[column]
    out["limit"] = limit
    out["projected_utilization"] = utilization_ratio(today["projected"], limit)  # NaN: no limit
    for column in ("hit_at", "hit_at_earliest", "hit_at_latest"):
        out[column] = _instants(start, today[column])
    out["unit"] = UNIT
    out["method"] = pd.array(today["method"], dtype="str")
    out["reason"] = pd.array(_unlimited_first(today["reason"], limit), dtype="str")
    out["as_of"] = pd.DatetimeIndex([moment] * len(out), dtype="datetime64[ns, UTC]")
    for column in ("period", "reset"):
        out[column] = pd.DatetimeIndex(out[column]).as_unit("ns")
    return out[list(FORECAST_COLUMNS)]


def _unlimited_first(reasons: Any, limit: np.ndarray) -> np.ndarray:
    """The reasons, each unlimited index's led by ``"unlimited"`` (no share of a limit)."""
    out = np.asarray(reasons, dtype=object).copy()
    for row in np.flatnonzero(np.isposinf(limit)):
        out[row] = f"{UNLIMITED_REASON}; {out[row]}" if out[row] else UNLIMITED_REASON
    return out


def _instants(start: pd.Timestamp, hours: np.ndarray) -> pd.DatetimeIndex:
    """``start`` + hours to the second (NaN, and anything not before the reset, is NaT)."""
    hours = np.where(np.isfinite(hours) & (hours < 24.0), hours, np.nan)
    nanos = np.round(hours * 3600.0) * 1e9
    values = np.where(np.isnan(nanos), np.iinfo(np.int64).min, nanos).astype(np.int64)
    values = np.where(np.isnan(nanos), values, values + start.value)
    return pd.DatetimeIndex(values.view("M8[ns]")).tz_localize("UTC")


def _today(
    bins: Bins,
    plan: dict[str, np.ndarray],
    moment: pd.Timestamp,
    window: pd.Timedelta,
    limit: np.ndarray,
    rows: np.ndarray,
) -> dict[str, Any]:
    """Today's numbers per index of ``rows`` (-1: no points), vectorised over indexes."""
    count = len(rows)
    found = rows >= 0
    take = np.where(found, rows, 0)
    out: dict[str, Any] = {
        name: np.full(count, np.nan)
        for name in ("used", "pace", "projected", "projected_low", "projected_high")
    }
    for name in ("hit_at", "hit_at_earliest", "hit_at_latest"):
        out[name] = np.full(count, np.nan)
    out["method"] = np.full(count, "", dtype=object)
    out["reason"] = np.full(count, "", dtype=object)
    if bins.days == 0 or not found.any():
        out["reason"][:] = no_data_reasons(limit, found)
        return out
    tau = (moment - moment.normalize()) / pd.Timedelta(hours=1)
    used = bins.ops[take, -1].sum(axis=1)
    out["used"] = np.where(found, used, np.nan)
    out["pace"] = np.where(found, plan["pace"][take], np.nan)
    amounts = plan["amounts"][take]
    rest = np.nansum(amounts, axis=1)
    defined = np.isfinite(amounts).all(axis=1) & found & (plan["method"][take] != "")
    low, high = plan["low"][take], plan["high"][take]
    out["projected"] = np.where(defined, used + rest, np.nan)
    out["projected_low"] = np.where(defined, used + rest * low, np.nan)
    out["projected_high"] = np.where(defined, used + rest * high, np.nan)
    for name, factor in (("hit_at", 1.0), ("hit_at_earliest", high), ("hit_at_latest", low)):
        ahead = pf.crossing(used, amounts * np.asarray(factor)[..., None], limit, tau)
        out[name] = np.where(defined, ahead, np.nan)
    crossed = crossed_at(bins, limit, rows, moment.normalize())
    for name in ("hit_at", "hit_at_earliest", "hit_at_latest"):
        out[name] = np.where(np.isfinite(crossed), crossed, out[name])
    out["method"] = np.where(found, plan["method"][take], "")
    out["reason"] = reasons(bins, plan, rows, limit, moment, window)
    stale = out["method"] == ""
    for name in ("projected", "projected_low", "projected_high"):
        out[name] = np.where(stale, np.nan, out[name])
    return out


def _plan(bins: Bins, tau: float, window: pd.Timedelta) -> dict[str, np.ndarray]:
    """Per index: how today is forecast, the rest spread over the hours, the band."""
    ops, cov = _from_first_complete(bins)
    ref = pf.reference(ops, cov)
    seen = 1.0 - pf.future_share(tau)
    # Past days as they looked at this time of day (an hour's points taken as even);
    # today as it is, its bins holding only the points before the moment.
    seen_ops, seen_cov = ops * seen, cov * seen
    seen_ops[:, -1], seen_cov[:, -1] = ops[:, -1], cov[:, -1]
    actual = (ops * pf.future_share(tau)).sum(axis=2)
    outcome = np.where(ref.complete, actual, np.nan)
    outcome[:, -1] = np.nan  # today's rest is what is forecast
    fc = pf.predict(ref, seen_ops, seen_cov, tau, outcome)
    errors = pf.log_errors(actual, fc.rest, ref.level)
    errors[:, -1] = np.nan
    low, high, calibrated = pf.band(errors, fc.usable & ref.complete)
    count = len(bins.ids)
    method = np.where(fc.usable[:, -1], "profile", "")
    method = np.where(fc.usable[:, -1] & ref.weekly[:, -1], "profile+weekly", method)
    amounts = fc.amounts[:, -1].copy()
    low, high = low[:, -1].copy(), high[:, -1].copy()
    pace = _pace(bins, tau, window)
    future = pf.future_share(tau)
    # An index whose complete past days all had no operations has a usual day of 0 (no
    # profile to scale): the rest of the day is 0 too while today has none either; once
    # today has some, its pace says more than those days.
    idle = (method == "") & (ref.past_days[:, -1] > 0) & (ref.level[:, -1] == 0)
    quiet_today = bins.ops[:, -1].sum(axis=1) == 0
    amounts[idle & quiet_today] = 0.0
    method[idle & quiet_today] = "profile"
    low[idle], high[idle] = 1.0, 1.0
    if bins.days > 1:  # the same hours of yesterday, when the data hold them
        covered = (bins.cov[:, -2] * future).sum(axis=1) >= 0.95 * future.sum()
        use = (method == "") & ~idle & covered & (future.sum() > 0)
        amounts[use] = bins.ops[use, -2] * future
        method[use] = "yesterday"
    use = (method == "") & np.isfinite(pace)
    amounts[use] = pace[use, None] * 3600.0 * future
    method[use] = "pace"
    wide = ~np.isin(method, ["profile", "profile+weekly"])
    low[wide], high[wide] = pf.WIDE_BAND
    stale = _stale(bins, tau)
    method[stale] = ""
    return {
        "method": method,
        "amounts": np.where((method != "")[:, None], amounts, np.nan),
        "low": low,
        "high": high,
        "pace": pace,
        "calibrated": np.where(wide, 0, calibrated[:, -1]),
        "past_days": ref.past_days[:, -1] if count else np.zeros(0),
        "stale": stale,
        "idle": idle,
    }


def _from_first_complete(bins: Bins) -> tuple[np.ndarray, np.ndarray]:
    """Operations and coverage from the first day some index completed (today at least).

    The days before it change nothing the profile arithmetic says of the days after:
    every value it takes from a past day (total, shares, outcome, error) is NaN unless
    the day is complete, which is what its windows pad with before the first day. So a
    short History is worked over the days it holds, not all of ``_DAYS_READ``.
    """
    complete = (bins.cov.sum(axis=2) >= pf.COMPLETE_HOURS).any(axis=0)
    first = int(np.argmax(complete)) if complete.any() else bins.days - 1
    first = min(first, bins.days - 1)
    return np.ascontiguousarray(bins.ops[:, first:]), np.ascontiguousarray(bins.cov[:, first:])


def _stale(bins: Bins, tau: float) -> np.ndarray:
    """Indexes whose newest point ends more than 2 hours (or 3 intervals) before now."""
    moment = bins.first_day.value + (bins.days - 1) * DAY_NS + round(tau * HOUR_NS)
    ends = bins.newest + np.round(bins.step * 1e9).astype(np.int64)
    allowed = np.maximum(_STALE.value, 3 * np.round(bins.step * 1e9)).astype(np.int64)
    stale: np.ndarray = (bins.newest == NO_TIME) | (ends < moment - allowed)
    return stale


def _pace(bins: Bins, tau: float, window: pd.Timedelta) -> np.ndarray:
    """Operations per second over the ``window`` before the moment, per index.

    An hour the window cuts counts its points in proportion (points taken as even);
    NaN where no point falls in the window.
    """
    hours = bins.days * 24
    moment = (bins.days - 1) * 24 + tau  # in hours since the first day
    begin = moment - window / pd.Timedelta(hours=1)
    starts = np.arange(hours, dtype=np.float64)
    ends = np.minimum(starts + 1, moment)
    with np.errstate(divide="ignore", invalid="ignore"):
        weight = np.clip((ends - np.maximum(starts, begin)) / (ends - starts), 0.0, 1.0)
    weight = np.nan_to_num(weight)
    ops = bins.ops.reshape(len(bins.ids), hours)
    cov = bins.cov.reshape(len(bins.ids), hours)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = (ops * weight).sum(axis=1) / ((cov * weight).sum(axis=1) * 3600.0)
    return np.where((cov * weight).sum(axis=1) > 0, rate, np.nan)
