"""Indexes -> throughput frames: one row per point (tidy), one column per index (wide).

This is the one place where points become frames: :func:`throughput_frame`,
:func:`throughput_series` (one index) and :func:`throughput_intervals` (each index's
sampling interval). They take a ``source`` as :func:`~searchkit.limits_frame` does (see
:mod:`searchkit.frames.sources`); every tidy frame keys an index as ``index_id`` with
``name`` beside it, and the frames read the models' columns without a Python loop per point.

Decisions (see DESIGN.md): throughput ``y`` of 0 is kept and ``null`` is NaN; times are exact
UTC instants; a throughput point that cannot be read is an error naming the index and the
position unless ``errors="coerce"``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

import numpy as np
import pandas as pd

from searchkit._deprecation import legacy_arguments
from searchkit.errors import InvalidResponseError, UnknownIndexError, ValidationError
from searchkit.frames.counting import median_spacing
from searchkit.frames.sources import (
    Source,
    as_indexes,
    is_recorded,
    throughput_from,
    wide_from_tidy,
)
from searchkit.frames.zones import TimeZone, resolve_zone
from searchkit.model.gotime import ErrorsMode, check_errors, nanos_to_index
from searchkit.model.index import IndexList, SearchIndex
from searchkit.model.throughput import NAT

__all__ = [
    "THROUGHPUT_COLUMNS",
    "as_nanos",
    "throughput_frame",
    "throughput_intervals",
    "throughput_series",
]

#: Columns of :func:`throughput_frame`, in order.
THROUGHPUT_COLUMNS: tuple[str, ...] = ("index_id", "name", "time", "value")


class _Throughput:
    """Points of several indexes as flat arrays, sorted by index (input order) then time."""

    def __init__(self, items: list[SearchIndex], errors: ErrorsMode) -> None:
        if errors == "raise":
            for item in items:
                _check_points(item)
        self.ids = [i.id for i in items]
        self.names = [i.name for i in items]
        self.counts = np.fromiter(
            (len(i.throughput) for i in items), dtype=np.int64, count=len(items)
        )
        self.ends = np.cumsum(self.counts)
        if items:
            self.nanos = np.concatenate([i.throughput.nanos for i in items])
            self.values = np.concatenate([i.throughput.values for i in items])
        else:
            self.nanos = np.empty(0, dtype=np.int64)
            self.values = np.empty(0, dtype=np.float64)
        self._sort()

    def _sort(self) -> None:
        # Services send points in time order: check that in one pass, sort only if not.
        if self.nanos.size < 2:
            return
        if self.nanos.min() != NAT:  # every point has an instant: int64 order is time order
            keys = self.nanos
        else:
            # Points without an instant (kept with errors="coerce") sort last, as pandas does.
            keys = self.nanos.view(np.uint64) ^ np.uint64(1 << 63)  # int64 order, NaT lowest
            keys = np.where(self.nanos == NAT, np.uint64(2**64 - 1), keys)
        backwards = keys[1:] < keys[:-1]
        boundaries = self.ends[:-1] - 1
        backwards[boundaries[(boundaries >= 0) & (boundaries < backwards.size)]] = False
        if backwards.any():
            segment = np.repeat(np.arange(self.counts.size), self.counts)
            order = np.lexsort((keys, segment))
            self.nanos, self.values = self.nanos[order], self.values[order]

    def segments(self) -> Iterable[tuple[int, slice]]:
        for item, (count, end) in enumerate(zip(self.counts, self.ends, strict=True)):
            yield item, slice(int(end - count), int(end))

    def times(self, tz: TimeZone, part: slice | None = None) -> pd.DatetimeIndex:
        nanos = self.nanos if part is None else self.nanos[part]
        return _convert(nanos_to_index(nanos, name="time"), tz)


def _check_points(item: SearchIndex) -> None:
    """Raise the error naming the first point of ``item`` that cannot be read."""
    if "throughput_vector" in item.invalid:
        kind = type(item.invalid["throughput_vector"]).__name__
        raise InvalidResponseError(
            f"throughput_vector of index {item.name!r} should be an array, got {kind}"
        )
    error = item.throughput.error(item.name)
    if error is not None:
        raise error


def _convert(times: pd.DatetimeIndex, tz: TimeZone) -> pd.DatetimeIndex:
    zone = resolve_zone(tz)
    return times if zone is None else times.tz_convert(zone)


def _codes_and_categories(labels: list[str | None], counts: np.ndarray) -> pd.Categorical[Any]:
    codes, uniques = pd.factorize(np.array(labels, dtype=object))
    categories = pd.Index(uniques, dtype="str")
    row_codes = np.repeat(codes.astype(np.int32), counts)
    return cast(
        pd.Categorical,
        pd.Categorical.from_codes(row_codes, dtype=pd.CategoricalDtype(categories)),
    )


def _select(items: list[SearchIndex], names: str | Iterable[str] | None) -> list[SearchIndex]:
    if names is None:
        return items
    wanted = [names] if isinstance(names, str) else list(names)
    present = {i.name for i in items}
    missing = [n for n in wanted if n not in present]
    if missing:
        shown = ", ".join(sorted(str(n) for n in present))
        raise UnknownIndexError(
            f"no index named {', '.join(map(repr, missing))}; indexes: {shown or '(none)'}"
        )
    keep = set(wanted)
    return [i for i in items if i.name in keep]


@legacy_arguments(renamed={"indexes": "source"})
def throughput_frame(
    source: Source,
    *,
    tz: TimeZone = None,
    wide: bool = False,
    names: str | Iterable[str] | None = None,
    errors: ErrorsMode = "raise",
) -> pd.DataFrame:
    """Return the throughput points of indexes as a tidy DataFrame.

    Args:
        source: An IndexList, a sequence of SearchIndex, or the raw API JSON (a list of
            dicts); a single index or dict is read as a list of one. A History gives its
            stored points, a throughput frame is given back (filtered, converted).
        tz: Time zone of the ``time`` column (a name like ``"Europe/Berlin"`` or a
            ``tzinfo``); when None, the source's own: UTC for indexes and a History, a
            frame's own zone. Conversion never changes the instants.
        wide: Return one column per index name instead, indexed by ``time`` (outer join of
            the indexes' times; duplicate times within an index are averaged; an index
            whose name is missing or shared is labelled ``"name (id)"``).
        names: Keep only the indexes with these names (one name or several), in input
            order.
        errors: ``"raise"`` to refuse a point that cannot be read, ``"coerce"`` to keep
            it with a NaT time or a NaN value.

    Returns:
        Columns exactly ``index_id``, ``name`` (categoricals), ``time``
        (``datetime64[ns, tz]``) and ``value`` (``float64``: 0 kept, ``null`` as NaN), one
        row per point, sorted by index (in input order) then time. Units are not
        documented by the service, so none are invented; the sampling interval is
        :func:`throughput_intervals` of the frame.

    Raises:
        TimestampError: A point's ``x`` does not parse or is missing; the message names the
            index and the point's position.
        InvalidResponseError: A point is not an object or its ``y`` is not a number.
        ValidationError: ``source`` is not one of the accepted shapes or ``tz`` is unknown.
        UnknownIndexError: A name in ``names`` is not there.

    Example:
        >>> raw = [{"id": "a1", "name": "docs", "throughput_vector": [
        ...     {"x": "2026-01-01 12:00:00 +0100 CET", "y": 3},
        ...     {"x": "2026-01-01 12:01:00.5 +0100 CET", "y": None}]}]
        >>> throughput_frame(raw)[["time", "value"]]
                                   time  value
        0 2026-01-01 11:00:00.000+00:00    3.0
        1 2026-01-01 11:01:00.500+00:00    NaN
    """
    check_errors(errors)
    resolve_zone(tz)
    if is_recorded(source) or isinstance(source, pd.DataFrame):
        frame = throughput_from(source, tz=tz, names=names)
        return wide_from_tidy(frame) if wide else frame
    data = _Throughput(_select(as_indexes(source), names), errors)
    if wide:
        return _wide(data, tz)
    return pd.DataFrame(
        {
            "index_id": _codes_and_categories(data.ids, data.counts),
            "name": _codes_and_categories(data.names, data.counts),
            "time": data.times(tz).array,
            "value": data.values,
        },
        copy=False,
    )


def _wide(data: _Throughput, tz: TimeZone) -> pd.DataFrame:
    seen: dict[str | None, int] = {}
    for name in data.names:
        seen[name] = seen.get(name, 0) + 1
    columns: dict[str, pd.Series] = {}
    for item, part in data.segments():
        name = data.names[item]
        label = name if name is not None and seen[name] == 1 else f"{name} ({data.ids[item]})"
        series = pd.Series(data.values[part], index=data.times(tz, part), name=label)
        if series.index.has_duplicates:
            series = series.groupby(level=0).mean()
        columns[label] = series
    if columns:
        frame = pd.concat(columns, axis=1, join="outer", sort=True)
    else:
        frame = pd.DataFrame(index=data.times(tz), dtype=np.float64)
    frame.index.name = "time"
    frame.columns.name = "name"
    return frame


@legacy_arguments(renamed={"frame": "source"})
def throughput_intervals(source: Source | pd.Series) -> pd.Series:
    """Return the median sampling interval of each index in a throughput frame.

    Computed from the frame as it is now, so a filtered frame gives the intervals of what
    it holds. Units of throughput are not documented; the interval is what the data shows.

    Args:
        source: A tidy frame of :func:`throughput_frame` (grouped by ``index_id``), a wide
            one (one column per index), or a Series of :func:`throughput_series`; indexes
            in any form :func:`throughput_frame` takes, or a History, are read first.

    Returns:
        A ``timedelta64[ns]`` Series of median spacings between consecutive points (NaT
        with fewer than two), indexed by ``index_id`` (tidy, in order of appearance) or
        by ``name`` (wide, Series; a wide frame cannot tell a null value from no point,
        so there it is the spacing of the values present). The median of an even count
        of spacings is the mean of the middle two, to the nearest nanosecond.

    Raises:
        ValidationError: ``source`` is none of these.

    Example:
        >>> raw = [{"id": "a1", "name": "docs", "throughput_vector": [
        ...     {"x": f"2026-01-01 12:0{m}:00 +0000 UTC", "y": 1} for m in range(3)]}]
        >>> throughput_intervals(throughput_frame(raw))["a1"]
        Timedelta('0 days 00:01:00')
    """
    frame = source
    if is_recorded(frame) or isinstance(frame, IndexList | SearchIndex | list | tuple | Mapping):
        frame = throughput_frame(frame)
    if isinstance(frame, pd.DataFrame) and {"index_id", "time"} <= set(frame.columns):
        codes, ids = pd.factorize(frame["index_id"].to_numpy(dtype=object), use_na_sentinel=False)
        nanos = as_nanos(frame["time"])
        return median_spacing(codes, nanos, pd.Index(ids, name="index_id"))
    if isinstance(frame, pd.DataFrame) and isinstance(frame.index, pd.DatetimeIndex):
        nanos = as_nanos(frame.index)
        present = frame.notna().to_numpy()
        columns, rows = np.nonzero(present.T)
        return median_spacing(columns, nanos[rows], pd.Index(frame.columns, name="name"))
    if isinstance(frame, pd.Series) and isinstance(frame.index, pd.DatetimeIndex):
        nanos = as_nanos(frame.index)  # one row per point, null values included
        codes = np.zeros(nanos.size, dtype=np.intp)
        return median_spacing(codes, nanos, pd.Index([frame.name], name="name"))
    raise ValidationError(
        "expected a frame of throughput_frame (tidy or wide) or a Series of "
        f"throughput_series, got {type(frame).__name__}"
    )


def as_nanos(times: Any) -> np.ndarray:
    """Return instants (anything ``pd.DatetimeIndex`` takes) as int64 epoch nanoseconds."""
    return np.asarray(pd.DatetimeIndex(times).as_unit("ns").asi8, dtype=np.int64)


def throughput_series(
    index: SearchIndex | Mapping[str, Any], *, tz: TimeZone = None, errors: ErrorsMode = "raise"
) -> pd.Series:
    """Return one index's throughput as a Series indexed by time.

    Args:
        index: A SearchIndex or one raw API JSON object.
        tz: Time zone of the index (a name or a ``tzinfo``); UTC when None.
        errors: ``"raise"`` or ``"coerce"``, as for :func:`throughput_frame`.

    Returns:
        ``float64`` values (0 kept, ``null`` as NaN) named after the index, indexed by
        ``time`` in ascending order; :func:`throughput_intervals` gives its spacing.

    Raises:
        TimestampError: A point's ``x`` does not parse or is missing.
        ValidationError: ``index`` is not a single index, or ``tz`` is unknown.

    Example:
        >>> s = throughput_series({"name": "docs", "throughput_vector": [
        ...     {"x": "2026-01-01 12:00:00 +0000 UTC", "y": 3}]})
        >>> s.name, s.iloc[0]
        ('docs', np.float64(3.0))
    """
    if not isinstance(index, SearchIndex | Mapping):
        raise ValidationError(
            f"expected one SearchIndex or JSON object, got {type(index).__name__}"
        )
    check_errors(errors)
    data = _Throughput(as_indexes(index), errors)
    return pd.Series(data.values, index=data.times(tz), name=data.names[0], copy=False)
