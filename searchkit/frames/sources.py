"""What a ``source`` is: anything with indexes in it, and the frames read from it.

Every function that takes "something with indexes in it" names that argument ``source``
and accepts the same kinds: an IndexList, a sequence of SearchIndex (or one), the raw API
JSON (a list of dicts, or one), a :class:`~searchkit.History`, and a frame searchkit
returned when it carries what the function needs (a throughput frame for throughput and
usage, a limits frame for limits). This module tells those kinds apart for the frames
that are not read from models: a History is recognised by what it offers
(:class:`Recorded`), so the frames layer never imports the history layer above it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol, TypeGuard, runtime_checkable

import numpy as np
import pandas as pd

from searchkit.errors import UnknownIndexError, ValidationError
from searchkit.frames.zones import Instant, TimeZone, resolve_zone
from searchkit.model.index import IndexList, SearchIndex
from searchkit.model.limits import LIMIT_FIELDS

__all__ = [
    "INDEX_KEY",
    "Indexes",
    "Recorded",
    "Source",
    "as_indexes",
    "is_recorded",
    "is_throughput_frame",
    "limits_from_frame",
    "throughput_from",
    "wide_from_tidy",
]

#: The name of the index key in every frame: the index of a frame with one row per index,
#: a column of a frame with many.
INDEX_KEY = "index_id"
#: Indexes as models, raw API JSON objects, or a sequence of either.
Indexes = SearchIndex | Mapping[str, Any] | Iterable[SearchIndex | Mapping[str, Any]]
_TIDY = ("index_id", "name", "time", "value")


@runtime_checkable
class Recorded(Protocol):
    """What a recorded source (a :class:`~searchkit.History`) offers the frame functions."""

    def throughput(
        self,
        *,
        start: Instant | None = None,
        end: Instant | None = None,
        names: Iterable[str] | str | None = None,
        tz: TimeZone = None,
        index_ids: Iterable[str] | str | None = None,
    ) -> pd.DataFrame:
        """The stored points as a throughput frame (plus ``account``)."""

    def limits(self, *, at: Instant | None = None) -> pd.DataFrame:
        """The limits in force at ``at`` as a limits frame."""


#: What a ``source`` may be: indexes, a History (anything :class:`Recorded`), or a frame
#: searchkit returned. The one type of every ``source`` argument.
Source = Indexes | pd.DataFrame | Recorded


def as_indexes(indexes: Any) -> list[SearchIndex]:
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


def is_recorded(source: object) -> TypeGuard[Recorded]:
    """Whether ``source`` is a recorded history rather than indexes, JSON or a frame.

    A SearchIndex has ``throughput`` and ``limits`` attributes too, so models, JSON and
    frames are ruled out first.
    """
    if isinstance(source, SearchIndex | IndexList | Mapping | pd.DataFrame | pd.Series):
        return False
    return callable(getattr(source, "throughput", None)) and callable(
        getattr(source, "limits", None)
    )


def is_throughput_frame(frame: object) -> TypeGuard[pd.DataFrame]:
    """Whether ``frame`` is a tidy throughput frame: ``index_id``, ``name``, ``time``, ``value``."""
    return isinstance(frame, pd.DataFrame) and set(_TIDY) <= set(frame.columns)


def limits_from_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Return a limits frame given back to searchkit, indexed by ``index_id``.

    A frame of 0.1.0 (indexed by ``id``) or one whose ``index_id`` became a column
    (``reset_index()``) is indexed by ``index_id`` again.

    Raises:
        ValidationError: The frame has no limit column (a throughput frame, say).
    """
    if not any(field in frame.columns for field in LIMIT_FIELDS):
        raise ValidationError(
            "this frame has no limit columns (max_daily_queries, ...): pass the indexes, a "
            "History or a frame of limits_frame"
        )
    if frame.index.name == INDEX_KEY:
        return frame
    for column in (INDEX_KEY, "id"):
        if column in frame.columns:
            return frame.set_index(column).rename_axis(INDEX_KEY)
    if frame.index.name == "id":
        return frame.rename_axis(INDEX_KEY)
    return frame


def throughput_from(
    source: Source, *, tz: TimeZone = None, names: str | Iterable[str] | None = None
) -> pd.DataFrame:
    """Return the tidy throughput frame of a History or of a frame searchkit returned.

    ``tz`` None keeps a frame's own zone (a History's is UTC); ``names`` keeps only those
    indexes and refuses a name that is not there.

    Raises:
        ValidationError: ``source`` is neither, or ``tz`` is unknown.
        UnknownIndexError: A name in ``names`` is not there.
    """
    zone = resolve_zone(tz)
    if is_recorded(source):
        frame = source.throughput(tz=zone)
    elif is_throughput_frame(source):
        frame = source
        if zone is not None:
            frame = frame.assign(time=pd.DatetimeIndex(frame["time"]).tz_convert(zone))
    else:
        raise ValidationError(
            "expected indexes, a History or a throughput frame (columns index_id, name, time, "
            f"value), got {type(source).__name__}"
        )
    if names is None:
        return frame
    wanted = [names] if isinstance(names, str) else list(names)
    present = set(frame["name"].astype(object).dropna())
    missing = [n for n in wanted if n not in present]
    if missing:
        shown = ", ".join(sorted(map(str, present)))
        raise UnknownIndexError(
            f"no index named {', '.join(map(repr, missing))}; indexes: {shown or '(none)'}"
        )
    return frame[frame["name"].isin(wanted).to_numpy()].reset_index(drop=True)


def wide_from_tidy(frame: pd.DataFrame) -> pd.DataFrame:
    """One column per index from a tidy frame, as ``throughput_frame(..., wide=True)``.

    Columns are labelled by name, ``"name (id)"`` where a name is missing or shared; each
    index's repeated times are averaged; the times are the outer join of the indexes'.
    """
    ids = frame["index_id"].astype(object).to_numpy()
    times = pd.DatetimeIndex(frame["time"])
    values = frame["value"].to_numpy(dtype=np.float64, na_value=np.nan)
    labels_of = frame["name"].astype(object).to_numpy()
    order, first = np.unique(ids, return_index=True)
    pairs = [(order[i], labels_of[first[i]]) for i in np.argsort(first, kind="stable")]
    counts: dict[Any, int] = {}
    for _, name in pairs:
        counts[name] = counts.get(name, 0) + 1
    columns: dict[str, pd.Series] = {}
    for index_id, name in pairs:
        label = name if name is not None and counts[name] == 1 else f"{name} ({index_id})"
        rows = ids == index_id
        series = pd.Series(values[rows], index=times[rows])
        if series.index.has_duplicates:
            series = series.groupby(level=0).mean()
        columns[str(label)] = series
    if columns:
        wide = pd.concat(columns, axis=1, join="outer", sort=True)
    else:
        wide = pd.DataFrame(index=times[:0], dtype=np.float64)
    wide.index.name = "time"
    wide.columns.name = "name"
    return wide
