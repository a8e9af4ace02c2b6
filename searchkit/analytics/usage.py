"""Usage against limits: operations per index and day, beside the limit.

How a value counts (the unit assumption, ``value_unit``, the invalid-value rule, the
sampling interval) is :mod:`searchkit.frames.counting`'s, as for the rollups. Throughput
counts queries and updates together, so by default it is compared with
``max_daily_queries + max_daily_updates``, days aligned to the limits' reset, UTC midnight.
Any single limit field can be chosen instead; monthly ones (``max_monthly_*``) reset on the
first of the month, UTC. Forecasts of the daily limits are in
:mod:`searchkit.analytics.forecast`.

``source`` is an :class:`~searchkit.IndexList` (the service's current window only), the raw
API JSON, or a :class:`~searchkit.History` (as far back as it was collected).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np
import pandas as pd

from searchkit.analytics.reading import listed_once
from searchkit.errors import ValidationError
from searchkit.frames.counting import (
    DEFAULT_SECONDS,
    VALUE_UNITS,
    index_codes,
    index_intervals,
    interval_seconds,
    invalid_values,
    one_per_instant,
    unit_scales,
)
from searchkit.frames.frames import Indexes, limits_frame, throughput_frame
from searchkit.frames.zones import TimeZone, resolve_zone
from searchkit.model.limits import LIMIT_FIELDS

if TYPE_CHECKING:
    from typing import TypeAlias

    from searchkit.history.store import History

    #: What usage is computed from: indexes (models or raw API JSON) or a History.
    Source: TypeAlias = Indexes | History

__all__ = [
    "DAILY_FIELDS",
    "is_history",
    "source_frames",
    "usage_frame",
    "utilization_ratio",
]

#: The default comparison: throughput counts queries and updates together.
DAILY_FIELDS: tuple[str, str] = ("max_daily_queries", "max_daily_updates")
_DAY = pd.Timedelta(days=1)


def source_frames(source: Source) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return (throughput, limits) of a History, an IndexList or raw JSON."""
    from searchkit.history.store import History

    if isinstance(source, History):
        return source.throughput(), source.limits()
    # The History's rule for a repeated minute holds for a list too (one point, the larger).
    return one_per_instant(throughput_frame(source)), limits_frame(source)


def _field_limit(limits: pd.DataFrame, field: str | None) -> tuple[str, pd.Series]:
    if field is None:
        total = limits[DAILY_FIELDS[0]] + limits[DAILY_FIELDS[1]]
        return "+".join(DAILY_FIELDS), total
    if field not in LIMIT_FIELDS:
        raise ValidationError(
            f"field must be a limit field, one of {', '.join(LIMIT_FIELDS)}; got {field!r}"
        )
    return field, limits[field]


def _scales(value_unit: str, intervals: pd.Series, ids: list[str]) -> np.ndarray:
    """Operations one unit of value stands for, per index of ``ids`` (interval / unit)."""
    return unit_scales(value_unit, interval_seconds(intervals.reindex(pd.Index(ids))))


def utilization_ratio(used: Any, limit: Any) -> np.ndarray:
    used = np.asarray(used, dtype=np.float64)
    limit = np.asarray(limit, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = used / limit
    ratio[np.isinf(limit)] = 0.0  # unlimited: never any share of it used
    ratio[limit == 0] = np.where(used[limit == 0] > 0, np.inf, 0.0)
    result: np.ndarray = ratio
    return result


@listed_once
def usage_frame(
    source: Source,
    freq: str = "D",
    tz: TimeZone = "UTC",
    field: str | None = None,
    value_unit: str = "per_second",
) -> pd.DataFrame:
    """Return the estimated operations per index per period, beside the limit.

    Args:
        source: An IndexList, the raw API JSON, or a :class:`~searchkit.History`.
        freq: The period, a pandas frequency; ``"D"`` (default) gives days starting at
            midnight in ``tz``, which for UTC is the daily limits' reset.
        tz: Time zone the periods are aligned in.
        field: A limit field to compare with; default the sum of ``max_daily_queries``
            and ``max_daily_updates``.
        value_unit: How to read a value: ``"per_second"`` (default: operations per second
            at that point, times the sampling interval), ``"per_minute"``, or
            ``"per_point"`` (each value is a count).

    Returns:
        One row per index and period: ``index_id``, ``name``, ``period`` (start, aware),
        ``operations``, ``points``, ``invalid`` (points left out because their value is
        negative or infinite: no usage is), ``limit`` (``inf`` when unlimited),
        ``utilization``
        (operations / limit; 0 when unlimited; NaN when the limit is not reported),
        ``breached`` (operations above the limit) and ``complete`` (the points cover the
        whole period; a first or last partial day undercounts), ``field`` (the limit
        compared with: ``field``, or ``"max_daily_queries+max_daily_updates"``). From a
        History, each period is compared with the limits in force at its end (plan changes
        show). A point's interval is its index's median sampling interval
        (:func:`~searchkit.throughput_intervals`; a History's, day by day), a minute for an
        index with a single point. The frame has no ``attrs``: it saves to Parquet as is.

    Example:
        >>> usage_frame(client.list_indexes()).head()  # doctest: +SKIP
    """
    _check_freq(freq)
    zone = resolve_zone(tz, default=dt.timezone.utc) or dt.timezone.utc
    columns = ["index_id", "name", "period", "operations", "points", "invalid", "limit"]
    if is_history(source):
        limits = source.limits()
        out, names, steps = _history_usage(source, zone, freq, value_unit, limits)
    else:
        tp, limits = source_frames(source)
        out, names, steps = _usage_parts(tp, zone, freq, value_unit)
    label, limit = _field_limit(limits, field)
    if out.empty:
        return _empty_usage(zone)
    out["name"] = out["index_id"].map(names)
    out["limit"] = out["index_id"].map(limit).astype(np.float64).to_numpy()
    if is_history(source):
        out["limit"] = _limits_as_of(out, source, field, freq, out["limit"].to_numpy())
    out = out[(out["points"] > 0) | (out["invalid"] > 0)][columns].reset_index(drop=True)
    out["complete"] = _complete(out, steps, freq)
    out["utilization"] = utilization_ratio(out["operations"], out["limit"])
    out["breached"] = out["operations"].to_numpy() > out["limit"].to_numpy()
    out["field"] = label
    return out.sort_values(["name", "period"], kind="stable").reset_index(drop=True)


def _history_usage(
    source: History,
    zone: dt.tzinfo,
    freq: str,
    value_unit: str,
    limits: pd.DataFrame,
) -> tuple[pd.DataFrame, dict[str, str], pd.Series]:
    """Usage parts of a History: the days its rollups answer at once, the others one day
    at a time (memory stays that of a day)."""
    rolled = _rollup_rows(source, zone, freq, value_unit, limits)
    parts, labels, intervals = [], [], []  # each with the UTC day it comes from
    if rolled is not None:
        parts.append(rolled[_PARTS])
        labels.append(rolled[["day", "index_id", "name"]])
        intervals.append(rolled.loc[rolled["interval"].notna(), ["day", "index_id", "interval"]])
    done = set() if rolled is None else set(rolled["day"].unique())
    for day in source.days("throughput"):
        if day in done:
            continue
        begin = pd.Timestamp(day, tz="UTC")
        tp = source.throughput(start=begin, end=begin + _DAY)
        part, part_names, day_step = _usage_parts(tp, zone, freq, value_unit)
        parts.append(part.assign(day=day))
        labels.append(
            pd.DataFrame({"day": day, "index_id": list(part_names), "name": part_names.values()})
        )
        step = day_step.dropna()
        intervals.append(
            pd.DataFrame({"day": day, "index_id": step.index.astype(str), "interval": step})
        )
    if not parts:
        return pd.DataFrame(), {}, pd.Series(dtype="m8[ns]")
    # In day order (a day's rows as read), as a day at a time would give them.
    ordered = pd.concat(parts, ignore_index=True)
    ordered = ordered.iloc[np.argsort(ordered["day"].to_numpy(), kind="stable")]
    out = ordered.groupby(["index_id", "period"], sort=False, as_index=False)[
        ["operations", "points", "invalid"]
    ].sum()
    # Each index's name on the newest day it has a point on, its interval on the newest
    # day it has two points on.
    names = _last_by_day(labels, "name")
    steps = _last_by_day(intervals, "interval")
    return out, dict(zip(names.index, names.tolist(), strict=True)), steps


def _last_by_day(frames: list[pd.DataFrame], column: str) -> pd.Series:
    """``column`` by ``index_id``: the value of the newest ``day`` each index has."""
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if frame.empty:
        return pd.Series(dtype="m8[ns]" if column == "interval" else object)
    frame = frame.iloc[np.argsort(frame["day"].to_numpy(), kind="stable")]
    last = frame.drop_duplicates("index_id", keep="last")
    return pd.Series(last[column].to_numpy(), index=pd.Index(last["index_id"], name="index_id"))


def _empty_usage(zone: dt.tzinfo) -> pd.DataFrame:
    """A usage frame without rows, with the dtypes of one with rows."""
    return pd.DataFrame(
        {
            "index_id": pd.array([], dtype="str"),
            "name": pd.array([], dtype="str"),
            "period": pd.DatetimeIndex([], tz=zone).as_unit("ns"),
            "operations": np.array([], dtype=np.float64),
            "points": np.array([], dtype=np.int64),
            "invalid": np.array([], dtype=np.int64),
            "limit": np.array([], dtype=np.float64),
            "complete": np.array([], dtype=bool),
            "utilization": np.array([], dtype=np.float64),
            "breached": np.array([], dtype=bool),
            "field": pd.array([], dtype="str"),
        }
    )


def _check_freq(freq: object) -> None:
    """Refuse a period pandas cannot read or that is not positive, naming ``freq``."""
    try:
        offset = pd.tseries.frequencies.to_offset(freq)  # type: ignore[call-overload]
    except (ValueError, TypeError) as exc:
        raise ValidationError(
            f"freq must be a pandas frequency such as 'D', '6h' or 'W', got {freq!r}"
        ) from exc
    if offset is None or offset.n <= 0:
        raise ValidationError(f"freq must be a positive period such as 'D', got {freq!r}")


def _usage_parts(
    tp: pd.DataFrame, zone: dt.tzinfo, freq: str, value_unit: str
) -> tuple[pd.DataFrame, dict[str, Any], pd.Series]:
    """Operations and points per (index_id, period) of a throughput frame, the names, and
    the intervals (:func:`_intervals`)."""
    codes, ids = index_codes(tp["index_id"])
    steps = index_intervals(tp)
    scale = _scales(value_unit, steps, ids)
    values = tp["value"].to_numpy(dtype=np.float64, na_value=np.nan)
    invalid = invalid_values(values)
    frame = pd.DataFrame(
        {
            "code": codes,
            "time": pd.DatetimeIndex(tp["time"].array).tz_convert(zone),
            # An invalid point is no point: NaN, so neither summed nor counted. Values are
            # summed first and scaled after, as a daily rollup does: the same figures.
            "operations": np.where(invalid, np.nan, np.nan_to_num(values)),
            "invalid": invalid.astype(np.int64),
        }
    )
    if frame.empty:
        empty = pd.DataFrame(columns=["index_id", "period", "operations", "points", "invalid"])
        return empty, {}, steps
    grouped = frame.groupby(["code", pd.Grouper(key="time", freq=freq)], sort=False)
    out = grouped.agg(
        operations=("operations", "sum"),
        points=("operations", "count"),
        invalid=("invalid", "sum"),
    ).reset_index()
    out = out.rename(columns={"time": "period"})
    out["operations"] = out["operations"].to_numpy() * scale[out["code"].to_numpy()]
    # The name at each index's last point (a History already labels renamed indexes so).
    name_codes, name_labels = index_codes(tp["name"])
    last = np.zeros(len(ids), dtype=np.int64)
    last[codes] = np.arange(len(codes))  # later rows overwrite earlier ones
    # Code -1 (no name) picks the None appended at the end.
    names = np.asarray([*name_labels, None], dtype=object)[name_codes[last]]
    out["index_id"] = np.asarray(ids, dtype=object)[out["code"].to_numpy()]
    return (
        out[["index_id", "period", "operations", "points", "invalid"]],
        dict(zip(ids, names.tolist(), strict=True)),
        steps,
    )


_PARTS = ["index_id", "period", "operations", "points", "invalid", "day"]


def _rollup_rows(
    source: Any, zone: dt.tzinfo, freq: str, value_unit: str, limits: pd.DataFrame
) -> pd.DataFrame | None:
    """The rows of every UTC day a current rollup answers, as :func:`_usage_parts` would
    give them from its points (with ``name``, ``interval`` and the ``day``), or None.

    Only daily periods in UTC match a rollup's day; anything else reads the points.
    """
    if (
        freq != "D"
        or pd.Timestamp("2026-01-01", tz=zone).utcoffset()
        or value_unit not in (VALUE_UNITS)
    ):
        return None
    wanted = ["index_id", "name", "period", "value_sum", "points", "invalid", "interval_seconds"]
    rows = source.rollups(columns=wanted)  # not the hours: 48 values a row
    if rows.empty:
        return None
    per = VALUE_UNITS[value_unit]
    seconds = rows["interval_seconds"].fillna(DEFAULT_SECONDS).to_numpy(np.float64)
    sums = rows["value_sum"].to_numpy(np.float64)
    rows["operations"] = sums if per is None else sums * (seconds / per)  # as from points
    rows["day"] = np.datetime_as_string(
        pd.DatetimeIndex(rows["period"]).tz_convert("UTC").tz_localize(None).to_numpy(), "D"
    )
    rows["period"] = pd.DatetimeIndex(rows["period"]).tz_convert(zone)
    current = dict(zip(limits.index.astype(str), limits["name"], strict=True))
    # The history's texts are categoricals; the points' path gives ids as text. A name
    # stays a reference to its category (one text per index, however many days).
    rows["index_id"] = rows["index_id"].astype("str")
    rows["name"] = rows["index_id"].map(current).fillna(rows["name"].astype(object))
    rows["interval"] = pd.to_timedelta(rows["interval_seconds"].to_numpy(), unit="s")
    result: pd.DataFrame = rows
    return result


def is_history(source: Source) -> TypeGuard[History]:
    """Whether ``source`` is a :class:`~searchkit.History` (read day by day)."""
    from searchkit.history.store import History

    return isinstance(source, History)


def _limits_as_of(
    out: pd.DataFrame, source: History, field: str | None, freq: str, latest: np.ndarray
) -> np.ndarray:
    """The limit in force at the end of each period, from the history's snapshots.

    A period that ended before the first snapshot of its index takes that first snapshot;
    an index without snapshots keeps the latest limits (``latest``).
    """
    fields = list(DAILY_FIELDS) if field is None else [field]
    snaps = source.snapshots(columns=["id", "collected_at", *fields])
    if snaps.empty or out.empty:
        return latest
    snaps["value"] = snaps[fields].sum(axis=1, min_count=len(fields))
    snaps = snaps.sort_values("collected_at", kind="stable")[["id", "collected_at", "value"]]
    try:
        length = pd.tseries.frequencies.to_offset(freq)
        ends = out["period"] + length
    except (ValueError, TypeError):
        ends = out["period"]
    left = pd.DataFrame(
        {
            "row": np.arange(len(out)),
            "id": out["index_id"].astype(str).to_numpy(),
            "end": pd.DatetimeIndex(ends).tz_convert("UTC"),
        }
    ).sort_values("end", kind="stable")
    snaps["collected_at"] = pd.DatetimeIndex(snaps["collected_at"]).tz_convert("UTC")
    snaps["id"] = snaps["id"].astype(str)
    merged = pd.merge_asof(
        left, snaps, left_on="end", right_on="collected_at", by="id", direction="backward"
    )
    early = merged["value"].isna() & merged["collected_at"].isna()
    if early.any():
        first = snaps.drop_duplicates("id", keep="first").set_index("id")["value"]
        merged.loc[early, "value"] = merged.loc[early, "id"].map(first)
    values = np.asarray(latest, dtype=np.float64).copy()
    # Membership against the few distinct ids: isin over every snapshot row is slow.
    known = merged["collected_at"].notna() | merged["id"].isin(snaps["id"].unique())
    rows = merged.loc[known, "row"].to_numpy()
    values[rows] = merged.loc[known, "value"].to_numpy(dtype=np.float64)
    return values


def _complete(out: pd.DataFrame, intervals: pd.Series, freq: str) -> np.ndarray:
    """Whether the points of each row cover its whole period (else operations undercount).

    ``intervals`` is each index's sampling interval by index_id (a minute where unknown).
    """
    try:
        length = pd.Timedelta(pd.tseries.frequencies.to_offset(freq).nanos, "ns")
    except ValueError:  # a calendar period (months, weeks on a weekday) has no fixed length
        return np.full(len(out), True)
    step = interval_seconds(intervals.reindex(pd.Index(out["index_id"].astype(str))))
    points = out["points"].to_numpy(dtype=np.float64)
    result: np.ndarray = points * step >= length.total_seconds() * 0.99
    return result
