"""Indexes -> pandas DataFrames: limits (one row per index) and throughput (one row per point).

This is the one place where indexes become frames. Every function accepts what a notebook
has at hand: an :class:`~searchkit.models.IndexList`, a sequence of
:class:`~searchkit.models.SearchIndex`, or the raw API JSON (a list of dicts, e.g. a saved
dump); one index or one dict works too. Raw dicts are read directly, without building
models, because a list response can carry a million throughput points.

Decisions (see DESIGN.md): a limit of -1 is ``inf`` in a float64 column and an absent one is
NaN; throughput ``y`` of 0 is kept and ``null`` is NaN; times are exact UTC instants.
"""

from __future__ import annotations

import datetime as dt
import enum
import itertools
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd
import pyarrow as pa
from numpy.lib.stride_tricks import sliding_window_view

from searchkit.errors import InvalidResponseError, TimestampError, ValidationError
from searchkit.models import LIMIT_FIELDS, REGIONS, TYPES, UNLIMITED, SearchIndex
from searchkit.timestamps import nanos_to_index, parse_to_nanos

__all__ = [
    "LIMITS_COLUMNS",
    "THROUGHPUT_COLUMNS",
    "limits_frame",
    "throughput_frame",
    "throughput_series",
]

#: What the frame functions accept: models, raw API JSON objects, or a sequence of either.
Indexes = SearchIndex | Mapping[str, Any] | Iterable[SearchIndex | Mapping[str, Any]]
#: A time zone: an IANA name such as ``"Europe/Berlin"`` or a ``tzinfo``.
TimeZone = str | dt.tzinfo | None

#: Columns of :func:`limits_frame` without secrets, in order (the index is ``id``).
LIMITS_COLUMNS: tuple[str, ...] = (
    "name",
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
_TEXT_COLUMNS = ("name", "endpoint", "partner_email")
_NAT = np.iinfo(np.int64).min
_POINT_TYPE = pa.struct([("x", pa.string()), ("y", pa.float64())])
_VECTORS_TYPE = pa.large_list(_POINT_TYPE)


# --- inputs ------------------------------------------------------------------------------


def _as_items(indexes: Any) -> list[SearchIndex | Mapping[str, Any]]:
    """Return the indexes as a list of SearchIndex or raw dicts, refusing anything else."""
    if isinstance(indexes, SearchIndex | Mapping):
        return [indexes]
    if isinstance(indexes, str | bytes | pd.DataFrame | pd.Series) or not isinstance(
        indexes, Iterable
    ):
        raise ValidationError(
            "expected an IndexList, a sequence of SearchIndex or the API's JSON (a list of "
            f"objects), got {type(indexes).__name__}"
        )
    items = list(indexes)
    for position, item in enumerate(items):
        if not isinstance(item, SearchIndex | Mapping):
            raise ValidationError(
                f"item {position} is a {type(item).__name__}, not a SearchIndex or a JSON object"
            )
    return items


def _field(item: SearchIndex | Mapping[str, Any], name: str) -> Any:
    """Return one field of a model or raw dict, enums as their text, aliases applied."""
    if isinstance(item, SearchIndex):
        value = getattr(item, name)
        return value.value if isinstance(value, enum.Enum) else value
    if name == "partner_email" and "partner_email" not in item:
        # The service's older name for the field.
        return item.get("vercel_email")
    return item.get(name)


def _points(item: SearchIndex | Mapping[str, Any]) -> Sequence[Any]:
    if isinstance(item, SearchIndex):
        return item.throughput_raw
    points = item.get("throughput_vector")
    if points is None:
        return ()
    if not isinstance(points, list | tuple):
        raise InvalidResponseError(
            f"throughput_vector of index {_text(item.get('name'))!r} should be an array, "
            f"got {type(points).__name__}"
        )
    return points


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, enum.Enum):
        return str(value.value)
    return str(value)


def _number(value: Any) -> float | None:
    """Read a JSON number (or numeric text) as a float; anything else is absent."""
    if value is None or isinstance(value, bool | np.bool_):
        return None
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


# --- limits ------------------------------------------------------------------------------


def limits_frame(indexes: Indexes, *, include_secrets: bool = False) -> pd.DataFrame:
    """Return the limits and settings of indexes as a DataFrame, one row per index.

    Args:
        indexes: An IndexList, a sequence of SearchIndex, or the raw API JSON (a list of
            dicts); a single index or dict is read as a list of one.
        include_secrets: Add the ``token`` and ``read_only_token`` columns.

    Returns:
        A frame indexed by ``id`` (``str``) with the columns of :data:`LIMITS_COLUMNS`:
        ``name``, ``endpoint`` and ``partner_email`` as ``str``; ``type`` and ``region`` as
        categoricals whose categories are the spec's values plus any unknown ones seen;
        ``created`` as ``datetime64[ns, UTC]``; ``input_enrichment_enabled`` as nullable
        ``boolean``; the nine ``max_*`` limits as ``float64``, where -1 (unlimited) is
        ``inf`` and an absent limit is NaN. An empty input gives an empty frame with the
        same columns and dtypes.

    Raises:
        ValidationError: ``indexes`` is not one of the accepted shapes.

    Example:
        >>> frame = limits_frame([{"id": "a1", "name": "docs", "max_daily_queries": -1}])
        >>> frame.loc["a1", "max_daily_queries"]
        np.float64(inf)
    """
    items = _as_items(indexes)
    columns: dict[str, Any] = {
        name: pd.array([_text(_field(i, name)) for i in items], dtype="str")
        for name in _TEXT_COLUMNS
    }
    columns["type"] = _categorical([_text(_field(i, "type")) for i in items], TYPES)
    columns["region"] = _categorical([_text(_field(i, "region")) for i in items], REGIONS)
    columns["created"] = _created([_field(i, "creation_time") for i in items])
    enrichment = [_field(i, "input_enrichment_enabled") for i in items]
    columns["input_enrichment_enabled"] = pd.array(
        [v if isinstance(v, bool) else None for v in enrichment], dtype="boolean"
    )
    for name in LIMIT_FIELDS:
        columns[name] = _limit_column([_field(i, name) for i in items])
    order = list(LIMITS_COLUMNS)
    if include_secrets:
        for name in _SECRET_COLUMNS:
            columns[name] = pd.array([_text(_field(i, name)) for i in items], dtype="str")
        order += _SECRET_COLUMNS
    index = pd.Index([_text(_field(i, "id")) for i in items], dtype="str", name="id")
    return pd.DataFrame({name: columns[name] for name in order}, index=index)


def _categorical(values: list[str | None], known: tuple[str, ...]) -> pd.Categorical:
    # Unknown values (a new region, a type "paid") are kept as extra categories.
    unknown = sorted({v for v in values if v is not None and v not in known})
    categories = pd.Index([*known, *unknown], dtype="str")
    return pd.Categorical(values, dtype=pd.CategoricalDtype(categories))


def _created(values: list[Any]) -> pd.DatetimeIndex:
    nanos = np.full(len(values), _NAT, dtype=np.int64)
    for position, value in enumerate(values):
        seconds = _number(value)
        # Out of datetime64[ns] range (a garbled value) reads as unknown, not as an error.
        if seconds is not None and math.isfinite(seconds) and abs(seconds) < 9.2e9:
            nanos[position] = round(seconds * 1_000_000_000)
    return nanos_to_index(nanos)


def _limit_column(values: list[Any]) -> np.ndarray:
    numbers = [_number(v) for v in values]
    column = np.array([np.nan if v is None else v for v in numbers], dtype=np.float64)
    column[column == UNLIMITED] = np.inf
    return column


# --- throughput --------------------------------------------------------------------------


class _Throughput:
    """Points of several indexes as flat arrays, sorted by index (input order) then time."""

    def __init__(self, items: list[SearchIndex | Mapping[str, Any]]) -> None:
        self.ids = [_text(_field(i, "id")) for i in items]
        self.names = [_text(_field(i, "name")) for i in items]
        vectors = [_points(i) for i in items]
        self.counts = np.fromiter((len(v) for v in vectors), dtype=np.int64, count=len(items))
        self.ends = np.cumsum(self.counts)
        self.nanos, self.values = self._read(vectors)
        self._sort()

    def _where(self, position: int) -> tuple[int, int]:
        """Map a flat position to (index number, position in its throughput_vector)."""
        item = int(np.searchsorted(self.ends, position, side="right"))
        return item, position - int(self.ends[item] - self.counts[item])

    def _describe(self, position: int) -> str:
        item, local = self._where(position)
        return f"at position {local} of index {self.names[item]!r}"

    def _read(self, vectors: list[Sequence[Any]]) -> tuple[np.ndarray, np.ndarray]:
        try:
            # One C++ pass over every index's list of dicts reads both fields (extra keys
            # are ignored); flattening the lists is free.
            table = pa.array(vectors, type=_VECTORS_TYPE).flatten()
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            table = self._read_slowly(list(itertools.chain.from_iterable(vectors)))
        if table.null_count:
            position = int(np.argmax(table.is_null().to_numpy(zero_copy_only=False)))
            item, local = self._where(position)
            raise InvalidResponseError(
                f"throughput_vector[{local}] of index {self.names[item]!r} is not an object"
            )
        texts, values = table.field("x"), table.field("y")
        nanos = parse_to_nanos(texts, errors="raise", describe=self._describe)
        if texts.null_count:
            position = int(np.argmax(texts.is_null().to_numpy(zero_copy_only=False)))
            raise TimestampError(f"throughput point {self._describe(position)} has no time 'x'")
        return nanos, values.to_numpy(zero_copy_only=False)

    def _read_slowly(self, points: list[Any]) -> pa.StructArray:
        # Reached only when a point has an unusual shape: find it and say where, or read
        # numeric texts such as "12.5" that Arrow refuses for a float column.
        texts: list[Any] = []
        values: list[float | None] = []
        for position, point in enumerate(points):
            if not isinstance(point, Mapping):
                item, local = self._where(position)
                raise InvalidResponseError(
                    f"throughput_vector[{local}] of index {self.names[item]!r} is not an object"
                )
            x, y = point.get("x"), point.get("y")
            if x is not None and not isinstance(x, str):
                raise TimestampError(
                    f"cannot parse timestamp {x!r:.60} {self._describe(position)}: "
                    f"expected text, got {type(x).__name__}"
                )
            number = _number(y)
            if number is None and y is not None:
                item, local = self._where(position)
                raise InvalidResponseError(
                    f"throughput_vector[{local}] of index {self.names[item]!r} has a "
                    f"non-numeric y: {y!r:.60}"
                )
            texts.append(x)
            values.append(number)
        return pa.StructArray.from_arrays(
            [pa.array(texts, pa.string()), pa.array(values, pa.float64())], names=["x", "y"]
        )

    def _sort(self) -> None:
        # Services send points in time order: check that in one pass, sort only if not.
        if self.nanos.size < 2:
            return
        backwards = self.nanos[1:] < self.nanos[:-1]
        boundaries = self.ends[:-1] - 1
        backwards[boundaries[(boundaries >= 0) & (boundaries < backwards.size)]] = False
        if backwards.any():
            segment = np.repeat(np.arange(self.counts.size), self.counts)
            order = np.lexsort((self.nanos, segment))
            self.nanos, self.values = self.nanos[order], self.values[order]

    def segments(self) -> Iterable[tuple[int, slice]]:
        for item, (count, end) in enumerate(zip(self.counts, self.ends, strict=True)):
            yield item, slice(int(end - count), int(end))

    def intervals(self) -> dict[str | None, Any]:  # Timedelta, or NaT when unknown
        """Median spacing of each index's points (NaT with fewer than two), by index id."""
        spacing = np.diff(self.nanos)
        medians = np.full(self.counts.size, _NAT, dtype=np.int64)
        firsts = self.ends - self.counts
        # Indexes with the same number of points share one 2-D partition along rows:
        # usually all of them, so a thousand medians cost one vectorised call.
        for count in np.unique(self.counts[self.counts >= 2]):
            which = np.flatnonzero(self.counts == count)
            width = int(count) - 1
            rows = sliding_window_view(spacing, width)[firsts[which]]
            # Evenly spaced series (the usual case) need no partition: any spacing is it.
            lowest = rows.min(axis=1)
            regular = lowest == rows.max(axis=1)
            medians[which[regular]] = lowest[regular]
            which, rows = which[~regular], rows[~regular]
            middle = width // 2
            if width % 2:
                medians[which] = np.partition(rows, middle, axis=1)[:, middle]
            else:
                ranked = np.partition(rows, [middle - 1, middle], axis=1)
                pair = ranked[:, middle - 1] + ranked[:, middle]
                # The mean of the two middle spacings, to the nearest nanosecond.
                medians[which] = np.round(pair / 2).astype(np.int64)
        return {
            self.ids[item]: pd.NaT if value == _NAT else pd.Timedelta(int(value), unit="ns")
            for item, value in enumerate(medians)
        }

    def times(self, tz: TimeZone, part: slice | None = None) -> pd.DatetimeIndex:
        nanos = self.nanos if part is None else self.nanos[part]
        return _convert(nanos_to_index(nanos, name="time"), tz)


def _convert(times: pd.DatetimeIndex, tz: TimeZone) -> pd.DatetimeIndex:
    if tz is None:
        return times
    try:
        return times.tz_convert(tz)
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise ValidationError(f"unknown time zone {tz!r}") from exc


def _codes_and_categories(labels: list[str | None], counts: np.ndarray) -> pd.Categorical:
    codes, uniques = pd.factorize(np.array(labels, dtype=object))
    categories = pd.Index(uniques, dtype="str")
    row_codes = np.repeat(codes.astype(np.int32), counts)
    return cast(
        pd.Categorical,
        pd.Categorical.from_codes(row_codes, dtype=pd.CategoricalDtype(categories)),
    )


def throughput_frame(indexes: Indexes, *, tz: TimeZone = None, wide: bool = False) -> pd.DataFrame:
    """Return the throughput points of indexes as a tidy DataFrame.

    Args:
        indexes: An IndexList, a sequence of SearchIndex, or the raw API JSON (a list of
            dicts); a single index or dict is read as a list of one.
        tz: Time zone of the ``time`` column (a name like ``"Europe/Berlin"`` or a
            ``tzinfo``); UTC when None. Conversion never changes the instants.
        wide: Return one column per index name instead, indexed by ``time`` (outer join of
            the indexes' times; duplicate times within an index are averaged; an index
            whose name is missing or shared is labelled ``"name (id)"``).

    Returns:
        Columns exactly ``index_id``, ``name`` (categoricals), ``time``
        (``datetime64[ns, tz]``) and ``value`` (``float64``: 0 kept, ``null`` as NaN), one
        row per point, sorted by index (in input order) then time. ``frame.attrs["interval"]``
        maps each index id to its median spacing as a ``pd.Timedelta`` (NaT with fewer than
        two points); units are not documented by the service, so none are invented.

    Raises:
        TimestampError: A point's ``x`` does not parse or is missing; the message names the
            index and the point's position.
        InvalidResponseError: A point is not an object or its ``y`` is not a number.
        ValidationError: ``indexes`` is not one of the accepted shapes, or ``tz`` is unknown.

    Example:
        >>> raw = [{"id": "a1", "name": "docs", "throughput_vector": [
        ...     {"x": "2026-01-01 12:00:00 +0100 CET", "y": 3},
        ...     {"x": "2026-01-01 12:01:00.5 +0100 CET", "y": None}]}]
        >>> throughput_frame(raw)[["time", "value"]]
                                   time  value
        0 2026-01-01 11:00:00.000+00:00    3.0
        1 2026-01-01 11:01:00.500+00:00    NaN
    """
    data = _Throughput(_as_items(indexes))
    if wide:
        return _wide(data, tz)
    frame = pd.DataFrame(
        {
            "index_id": _codes_and_categories(data.ids, data.counts),
            "name": _codes_and_categories(data.names, data.counts),
            "time": data.times(tz).array,
            "value": data.values,
        },
        copy=False,
    )
    frame.attrs["interval"] = data.intervals()
    return frame


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
    frame.attrs["interval"] = data.intervals()
    return frame


def throughput_series(index: SearchIndex | Mapping[str, Any], *, tz: TimeZone = None) -> pd.Series:
    """Return one index's throughput as a Series indexed by time.

    Args:
        index: A SearchIndex or one raw API JSON object.
        tz: Time zone of the index (a name or a ``tzinfo``); UTC when None.

    Returns:
        ``float64`` values (0 kept, ``null`` as NaN) named after the index, indexed by
        ``time`` in ascending order; ``series.attrs["interval"]`` is the median spacing.

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
    data = _Throughput([index])
    series = pd.Series(data.values, index=data.times(tz), name=data.names[0], copy=False)
    series.attrs["interval"] = next(iter(data.intervals().values()))
    return series
