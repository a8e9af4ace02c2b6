"""Usage against limits: operations per index and day, beside the limit.

How a value counts (the unit assumption, ``value_unit``, the invalid-value rule, the
sampling interval) is :mod:`searchkit.frames.counting`'s, as for the rollups. Throughput
counts queries and updates together, so by default it is compared with
``max_daily_queries + max_daily_updates``, days aligned to the limits' reset, UTC midnight.
Any single limit field can be chosen instead; monthly ones (``max_monthly_*``) reset on the
first of the month, UTC. Forecasts of the daily limits are in
:mod:`searchkit.analytics.forecast`.

``source`` is an :class:`~searchkit.IndexList` (the service's current window only), the raw
API JSON, a :class:`~searchkit.History` (as far back as it was collected), or a throughput
frame (``History.throughput()``'s, say: it carries no limits, so ``limit`` is NaN).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, TypeGuard

import numpy as np
import pandas as pd

from searchkit._deprecation import legacy_arguments
from searchkit.analytics.days import PointsReader
from searchkit.analytics.limit_periods import (
    DAILY_FIELDS,
    compare_with_limits,
    field_label,
    period_mismatch,
    share_of_limit,
)
from searchkit.analytics.periods import frame_tally, history_tally
from searchkit.analytics.reading import listed_once
from searchkit.errors import ValidationError
from searchkit.frames.counting import (
    ValueUnit,
    check_value_unit,
    interval_seconds,
    one_per_instant,
    period_ends,
)
from searchkit.frames.limits_frames import limits_frame
from searchkit.frames.sources import Source, is_throughput_frame
from searchkit.frames.throughput_frames import throughput_frame
from searchkit.frames.zones import TimeZone, resolve_zone

if TYPE_CHECKING:
    from searchkit.history.usage_history import History

__all__ = [
    "DAILY_FIELDS",
    "is_history",
    "source_frames",
    "usage_frame",
    "utilization_ratio",
]


def source_frames(source: Source) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return (throughput, limits) of a History, an IndexList, raw JSON or a throughput frame."""
    from searchkit.history.usage_history import History

    if isinstance(source, History):
        return source.throughput(), source.limits()
    if isinstance(source, pd.DataFrame):
        if not is_throughput_frame(source):
            raise ValidationError(
                "usage needs throughput: a frame must have the columns index_id, name, time "
                f"and value; this one has {', '.join(map(str, source.columns)) or 'none'}"
            )
        tp = one_per_instant(source)
        return tp, _no_limits(tp)
    # The History's rule for a repeated minute holds for a list too (one point, the larger).
    return one_per_instant(throughput_frame(source)), limits_frame(source)


def _no_limits(tp: pd.DataFrame) -> pd.DataFrame:
    """A limits frame of a throughput frame's indexes: each its newest name, no limit
    known (NaN), so every index gets a row, its limit said to be missing."""
    names = tp.drop_duplicates("index_id", keep="last").set_index("index_id")["name"]
    frame = limits_frame([]).reindex(pd.Index(names.index.astype(str), name="index_id"))
    frame["name"] = pd.array(names.to_numpy(dtype=object), dtype="str")
    return frame


def _field_limit(limits: pd.DataFrame, field: str | None) -> tuple[str, pd.Series]:
    label = field_label(field)
    if field is None:
        return label, limits[DAILY_FIELDS[0]] + limits[DAILY_FIELDS[1]]
    return label, limits[field]


#: ``used / limit``: NaN for an unlimited or unreported limit (the forecast's share too).
utilization_ratio = share_of_limit


@legacy_arguments(positional=("freq", "tz", "field", "value_unit"))
@listed_once
def usage_frame(
    source: Source,
    *,
    freq: str = "D",
    tz: TimeZone = None,
    field: str | None = None,
    value_unit: ValueUnit = "per_second",
) -> pd.DataFrame:
    """Return the estimated operations per index per period, beside the limit.

    Args:
        source: An IndexList, the raw API JSON, a :class:`~searchkit.History`, or a
            throughput frame (no limits in it: ``limit`` is NaN).
        freq: The period, a pandas frequency; ``"D"`` (default) gives days starting at
            midnight in ``tz``, which for UTC is the daily limits' reset; ``"h"`` local
            hours, ``"W"`` weeks from Sunday's midnight, ``"MS"`` months. Every period
            starts on the wall clock of ``tz`` and is labelled by its start
            (:func:`~searchkit.frames.counting.period_starts`: DST days last 23 or 25
            hours, a repeated hour is two periods).
        tz: Time zone the periods are aligned in; None: the source's own, UTC (the
            limits' reset) but for a frame, whose own zone is kept.
        field: A limit field to compare with; default the sum of ``max_daily_queries``
            and ``max_daily_updates``.
        value_unit: How to read a value: ``"per_second"`` (default: operations per second
            at that point, times the sampling interval), ``"per_minute"``, or
            ``"per_point"`` (each value is a count).

    Returns:
        One row per index and period: ``index_id``, ``name``, ``period`` (start, aware),
        ``operations``, ``points``, ``invalid`` (points left out because their value is
        negative or infinite: no usage is), ``limit`` (what the service allows in that
        period: ``inf`` when unlimited, NaN when not reported or when the periods are not
        the limit's), ``utilization`` (operations / limit; NaN when unlimited, not
        reported, or not the limit's period: never 0% of no limit), ``breached``
        (operations above a limit compared with), ``complete`` (the points cover the
        whole period; a first or last partial day undercounts), ``field`` (the limit
        compared with: ``field``, or ``"max_daily_queries+max_daily_updates"``) and
        ``reason`` (empty where utilization is a number, else why not: ``"unlimited"``,
        ``"limit not reported"``, or why the periods are not the limit's). A daily limit
        is compared only with UTC days (``freq="D"``, ``tz="UTC"``: it resets at UTC
        midnight), a monthly one only with UTC calendar months (``"MS"``); weeks, hours or
        days in another zone keep their operations and leave the comparison empty. From a
        History, each period is compared with the limits in force at its end (plan changes
        show). A point's interval is its index's median sampling interval
        (:func:`~searchkit.throughput_intervals`; a History's, day by day), a minute for an
        index with a single point. The frame has no ``attrs``: it saves to Parquet as is.

    Example:
        >>> usage_frame(client.list_indexes()).head()  # doctest: +SKIP
    """
    _check_freq(freq)
    check_value_unit(value_unit)
    zone = resolve_zone(tz) or _zone_of(source) or dt.timezone.utc
    columns = ["index_id", "name", "period", "operations", "points", "invalid", "limit"]
    if is_history(source):
        limits = source.limits()
        tally = history_tally(source, zone, freq, value_unit, reader=PointsReader(source))
    else:
        tp, limits = source_frames(source)
        tally = frame_tally(tp, zone, freq, value_unit)
    _, limit = _field_limit(limits, field)
    out = tally.frame(zone)
    if out.empty:
        return _empty_usage(zone)
    # Per index once, then per row by its code (no lookup per row).
    codes = out["code"].to_numpy(np.int64)
    names = pd.Series(tally.per_index(tally.names, np.nan))  # one per index: typed once
    out["name"] = names.array.take(codes)
    limits_by_code = limit.reindex(pd.Index(list(tally.ids))).to_numpy(np.float64, na_value=np.nan)
    out["limit"] = limits_by_code[codes]
    if is_history(source) and period_mismatch(field, freq, zone) is None:
        out["limit"] = _limits_as_of(out, source, field, freq, out["limit"].to_numpy())
    kept = ((out["points"] > 0) | (out["invalid"] > 0)).to_numpy()
    steps = tally.per_index(tally.steps, np.nan).astype(np.float64)[codes[kept]]
    out = out[kept][columns].reset_index(drop=True)
    out["complete"] = _complete(out, steps, zone, freq)
    out = compare_with_limits(out, out["limit"].to_numpy(), field, freq, zone)
    return _by_name_and_period(out, names, codes[kept])


def _by_name_and_period(out: pd.DataFrame, names: pd.Series, codes: np.ndarray) -> pd.DataFrame:
    """``out`` sorted by name, then period (stable), as ``sort_values`` sorts them: each
    row's name ranked among the indexes' few names (``names`` by code; missing last), not
    compared text by text."""
    ranks, distinct = pd.factorize(names, sort=True)
    ranks = np.where(ranks < 0, len(distinct), ranks)
    starts = pd.DatetimeIndex(out["period"]).asi8
    order = np.lexsort((starts, ranks[codes]))
    return out.take(order).reset_index(drop=True)


def _zone_of(source: Source) -> dt.tzinfo | None:
    """The zone of a frame's times (None for anything else: UTC by default)."""
    if isinstance(source, pd.DataFrame) and "time" in source.columns:
        zone = pd.DatetimeIndex(source["time"]).tz
        return None if zone is None else zone
    return None


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
            "reason": pd.array([], dtype="str"),
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


def is_history(source: Source) -> TypeGuard[History]:
    """Whether ``source`` is a :class:`~searchkit.History` (read day by day)."""
    from searchkit.history.usage_history import History

    return isinstance(source, History)


def _limits_as_of(
    out: pd.DataFrame, source: History, field: str | None, freq: str, latest: np.ndarray
) -> np.ndarray:
    """The limit in force at the end of each period, from the history's snapshots.

    A period that ended before the first snapshot of its index takes that first snapshot;
    an index without snapshots keeps the latest limits (``latest``).
    """
    fields = list(DAILY_FIELDS) if field is None else [field]
    snaps = source.snapshots(columns=["index_id", "collected_at", *fields])
    if snaps.empty or out.empty:
        return latest
    snaps["value"] = snaps[fields].sum(axis=1, min_count=len(fields))
    snaps = snaps.sort_values("collected_at", kind="stable")[["index_id", "collected_at", "value"]]
    try:
        length = pd.tseries.frequencies.to_offset(freq)
        ends = out["period"] + length
    except (ValueError, TypeError):
        ends = out["period"]
    left = pd.DataFrame(
        {
            "row": np.arange(len(out)),
            "index_id": out["index_id"].astype(str).to_numpy(),
            "end": pd.DatetimeIndex(ends).tz_convert("UTC"),
        }
    ).sort_values("end", kind="stable")
    snaps["collected_at"] = pd.DatetimeIndex(snaps["collected_at"]).tz_convert("UTC")
    snaps["index_id"] = snaps["index_id"].astype(str)
    merged = pd.merge_asof(
        left, snaps, left_on="end", right_on="collected_at", by="index_id", direction="backward"
    )
    early = merged["value"].isna() & merged["collected_at"].isna()
    if early.any():
        first = snaps.drop_duplicates("index_id", keep="first").set_index("index_id")["value"]
        merged.loc[early, "value"] = merged.loc[early, "index_id"].map(first)
    values = np.asarray(latest, dtype=np.float64).copy()
    # Membership against the few distinct ids: isin over every snapshot row is slow.
    known = merged["collected_at"].notna() | merged["index_id"].isin(snaps["index_id"].unique())
    rows = merged.loc[known, "row"].to_numpy()
    values[rows] = merged.loc[known, "value"].to_numpy(dtype=np.float64)
    return values


def _complete(out: pd.DataFrame, known: np.ndarray, zone: dt.tzinfo, freq: str) -> np.ndarray:
    """Whether the points of each row cover its whole period (else operations undercount).

    A period lasts from its start to the next one's (a day across a DST change: 23 or 25
    hours); ``known`` is each row's index's sampling interval in seconds (NaN where
    unknown: a minute).
    """
    starts = pd.DatetimeIndex(out["period"]).tz_convert("UTC").as_unit("ns").asi8
    length = (period_ends(starts, zone, freq) - starts) / 1e9
    points = out["points"].to_numpy(dtype=np.float64)
    result: np.ndarray = points * interval_seconds(known) >= length * 0.99
    return result
