"""Indexes -> pandas DataFrames: limits (one row per index) and throughput (one row per point).

This is the one place where indexes become frames. Every function takes a ``source``, what a
notebook has at hand: an :class:`~searchkit.model.index.IndexList`, a sequence of
:class:`~searchkit.model.index.SearchIndex`, or the raw API JSON (a list of dicts, e.g. a saved
dump); one index or one dict works too; so do a :class:`~searchkit.History` and a frame these
functions returned (see :mod:`searchkit.frames.sources`). Every frame keys an index as
``index_id`` with ``name`` beside it. Raw JSON is converted to models first, in one pass
(:meth:`IndexList.from_json`), so both give the same frame; the frames read the models'
columns without a Python loop per point.

Decisions (see DESIGN.md): a limit of -1 is ``inf`` in a float64 column and an absent one is
NaN, as is a limit the service garbled (see :mod:`searchkit.model.index`: it is kept in
``index.invalid``); throughput ``y`` of 0 is kept and ``null`` is NaN; times are exact UTC
instants; a throughput point that cannot be read is an error naming the index and the
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
    INDEX_KEY,
    is_recorded,
    limits_from_frame,
    throughput_from,
    wide_from_tidy,
)
from searchkit.frames.zones import TimeZone, resolve_zone
from searchkit.model.gotime import ErrorsMode, check_errors, nanos_to_index
from searchkit.model.index import IndexList, SearchIndex
from searchkit.model.limits import LIMIT_FIELDS, REGIONS, TYPES, UNLIMITED
from searchkit.model.secret import secret_value

__all__ = [
    "LIMITS_COLUMNS",
    "THROUGHPUT_COLUMNS",
    "as_nanos",
    "limits_frame",
    "throughput_frame",
    "throughput_intervals",
    "throughput_series",
]

#: Indexes as models, raw API JSON objects, or a sequence of either.
Indexes = SearchIndex | Mapping[str, Any] | Iterable[SearchIndex | Mapping[str, Any]]
#: What a ``source`` may be: indexes, a History, or a frame searchkit returned.
Source = Indexes | pd.DataFrame | Any

#: Columns of :func:`limits_frame` without secrets, in order (the index is ``index_id``).
LIMITS_COLUMNS: tuple[str, ...] = (
    "name",
    "short_id",
    "type",
    "region",
    "endpoint",
    "created",
    "input_enrichment_enabled",
    "partner_email",
    *LIMIT_FIELDS,
)
#: Columns of :func:`throughput_frame`, in order.
THROUGHPUT_COLUMNS: tuple[str, ...] = ("index_id", "name", "time", "value")

_SECRET_COLUMNS = ("token", "read_only_token")
_TEXT_COLUMNS = ("name", "short_id", "endpoint", "partner_email")
_NAT = np.iinfo(np.int64).min


# --- inputs ------------------------------------------------------------------------------


def _as_indexes(indexes: Any) -> list[SearchIndex]:
    """Return the indexes as models, converting raw JSON objects in one pass."""
    if isinstance(indexes, IndexList):
        return list(indexes)
    if isinstance(indexes, SearchIndex | Mapping):
        indexes = [indexes]
    if isinstance(indexes, str | bytes | pd.DataFrame | pd.Series) or not isinstance(
        indexes, Iterable
    ):
        raise ValidationError(
            "expected an IndexList, a sequence of SearchIndex, the API's JSON (a list of "
            f"objects), a History or a frame searchkit returned, got {type(indexes).__name__}"
        )
    items = list(indexes)
    raw = []
    for position, item in enumerate(items):
        if isinstance(item, Mapping):
            raw.append(position)
        elif not isinstance(item, SearchIndex):
            raise ValidationError(
                f"item {position} is a {type(item).__name__}, not a SearchIndex or a JSON object"
            )
    if raw:
        for position, model in zip(raw, IndexList.from_json([items[p] for p in raw]), strict=True):
            items[position] = model
    return items


# --- limits ------------------------------------------------------------------------------


@legacy_arguments(renamed={"indexes": "source"})
def limits_frame(source: Source, *, include_secrets: bool = False) -> pd.DataFrame:
    """Return the limits and settings of indexes as a DataFrame, one row per index.

    Args:
        source: An IndexList, a sequence of SearchIndex, or the raw API JSON (a list of
            dicts); a single index or dict is read as a list of one. A History gives its
            latest limits (``History.limits()``), a limits frame is given back indexed by
            ``index_id``.
        include_secrets: Add the ``token`` and ``read_only_token`` columns (real text).

    Returns:
        A frame indexed by ``index_id`` (``str``) with the columns of :data:`LIMITS_COLUMNS`:
        ``name``, ``short_id`` (the id's first 8 characters, to tell same-named indexes
        apart), ``endpoint`` and ``partner_email`` as ``str``; ``type`` and ``region`` as
        categoricals whose categories are the spec's values plus any unknown ones seen;
        ``created`` as ``datetime64[ns, UTC]``; ``input_enrichment_enabled`` as nullable
        ``boolean``; the nine ``max_*`` limits as ``float64``, where -1 (unlimited) is
        ``inf`` and an absent limit is NaN. A value the service garbled (a limit of
        ``"lots"``, ``true``, ``12.5`` or beyond int64 such as ``10**400``) is missing
        here, as on the model, which keeps what was sent in ``index.invalid``. An empty
        input gives an empty frame with the same columns and dtypes.

    Raises:
        ValidationError: ``source`` is not one of the accepted shapes, or secrets are asked
            of a History or a frame (neither holds them).

    Example:
        >>> frame = limits_frame([{"id": "a1", "name": "docs", "max_daily_queries": -1}])
        >>> frame.loc["a1", "max_daily_queries"]
        np.float64(inf)
    """
    if is_recorded(source) or isinstance(source, pd.DataFrame):
        if include_secrets:
            raise ValidationError(
                "include_secrets needs the indexes: a History or a frame holds no tokens"
            )
        if isinstance(source, pd.DataFrame):
            return limits_from_frame(source)
        return source.limits()
    items = _as_indexes(source)
    columns: dict[str, Any] = {
        name: pd.array([getattr(i, name) for i in items], dtype="str") for name in _TEXT_COLUMNS
    }
    columns["type"] = _categorical([_text(i.type) for i in items], TYPES)
    columns["region"] = _categorical([_text(i.region) for i in items], REGIONS)
    columns["created"] = _created([i.creation_time for i in items])
    columns["input_enrichment_enabled"] = pd.array(
        [i.input_enrichment_enabled for i in items], dtype="boolean"
    )
    for name in LIMIT_FIELDS:
        column = np.array(
            [np.nan if (v := getattr(i, name)) is None else float(v) for i in items],
            dtype=np.float64,
        )
        column[column == UNLIMITED] = np.inf
        columns[name] = column
    order = list(LIMITS_COLUMNS)
    if include_secrets:
        for name in _SECRET_COLUMNS:
            columns[name] = pd.array([secret_value(getattr(i, name)) for i in items], dtype="str")
        order += _SECRET_COLUMNS
    index = pd.Index([i.id for i in items], dtype="str", name=INDEX_KEY)
    return pd.DataFrame({name: columns[name] for name in order}, index=index)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _categorical(values: list[str | None], known: tuple[str, ...]) -> pd.Categorical:
    # Unknown values (a new region, a type "paid") are kept as extra categories.
    unknown = sorted({v for v in values if v is not None and v not in known})
    categories = pd.Index([*known, *unknown], dtype="str")
    return pd.Categorical(values, dtype=pd.CategoricalDtype(categories))


def _created(values: list[int | None]) -> pd.DatetimeIndex:
    nanos = np.full(len(values), _NAT, dtype=np.int64)
    for position, seconds in enumerate(values):
        # Out of datetime64[ns] range (a garbled value) reads as unknown, not as an error.
        if seconds is not None and abs(seconds) < 9_200_000_000:
            nanos[position] = seconds * 1_000_000_000
    return nanos_to_index(nanos)


# --- throughput --------------------------------------------------------------------------


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
        if self.nanos.min() != _NAT:  # every point has an instant: int64 order is time order
            keys = self.nanos
        else:
            # Points without an instant (kept with errors="coerce") sort last, as pandas does.
            keys = self.nanos.view(np.uint64) ^ np.uint64(1 << 63)  # int64 order, NaT lowest
            keys = np.where(self.nanos == _NAT, np.uint64(2**64 - 1), keys)
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
    data = _Throughput(_select(_as_indexes(source), names), errors)
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
    data = _Throughput(_as_indexes(index), errors)
    return pd.Series(data.values, index=data.times(tz), name=data.names[0], copy=False)
