"""What a collect refuses to store, so that one bad point or index never costs the others.

An index without an id cannot be keyed, so it is left out whole (its limits and points). A
point is left out when its time is missing, does not parse, or lies outside the instants a
timestamp can hold (1677 to 2262: Go's zero time ``0001-01-01``, the year 2300), or when its
value is negative or infinite (no usage is). A missing value (``null``) is kept as NaN, as
:func:`~searchkit.throughput_frame` keeps it. Each refusal is counted and named in one
sentence per index, which the collect's summary carries as a warning.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from searchkit.frames.counting import invalid_values
from searchkit.model.index import SearchIndex

__all__ = ["Skipped", "indexes_with_ids", "storable_points"]


class Skipped:
    """Points left out per index name, and a sentence for each index."""

    def __init__(self) -> None:
        self.by_index: dict[str, int] = {}
        self.notes: list[str] = []

    @property
    def total(self) -> int:
        """How many points were left out."""
        return sum(self.by_index.values())


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def _point_count(item: Any) -> int:
    """How many points an index (a model or its JSON) carries."""
    if isinstance(item, dict):
        points = item.get("throughput_vector")
        return len(points) if isinstance(points, list | tuple) else 0
    return len(item.throughput)


def indexes_with_ids(listed: Any, skipped: Skipped) -> list[Any]:
    """Return the listed indexes that have an id; note each one without (it cannot be stored).

    ``listed`` is a listing: an IndexList or a sequence of indexes (models or JSON objects),
    or one index.
    """
    items = [listed] if isinstance(listed, dict | SearchIndex) else list(listed)
    kept = []
    for position, item in enumerate(items):
        index_id = _field(item, "id")
        if isinstance(index_id, str) and index_id.strip():
            kept.append(item)
            continue
        name = _field(item, "name")
        count = _point_count(item)
        label = repr(name) if isinstance(name, str) else f"at position {position}"
        skipped.by_index[str(name)] = skipped.by_index.get(str(name), 0) + count
        skipped.notes.append(
            f"index {label} has no id ({index_id!r}): it was not stored, nor its "
            f"{_points(count)} and limits"
        )
    return kept


def storable_points(frame: pd.DataFrame, skipped: Skipped) -> pd.DataFrame:
    """Return the rows of a ``throughput_frame(..., errors="coerce")`` that can be stored.

    Rows with a NaT time (missing, unreadable or out of range) or a negative or infinite
    value are dropped and counted per index, in one vectorised pass.
    """
    values = frame["value"].to_numpy(dtype=np.float64, na_value=np.nan)
    no_time = np.asarray(frame["time"].isna())
    bad_value = invalid_values(values)
    bad = no_time | bad_value
    if not bad.any():
        return frame
    ids = frame["index_id"].array
    codes = np.asarray(ids.codes)
    size = len(ids.categories)
    times = np.bincount(codes[no_time], minlength=size)
    impossible = np.bincount(codes[bad_value & ~no_time], minlength=size)
    names = frame["name"].array
    present, first = np.unique(codes, return_index=True)
    first_row = dict(zip(present.tolist(), first.tolist(), strict=True))
    for code in np.flatnonzero(times + impossible).tolist():
        name = str(names[first_row[code]])
        reasons = []
        if times[code]:
            reasons.append(
                f"{_points(times[code])} with a time that is missing, unreadable or outside "
                "1677-2262"
            )
        if impossible[code]:
            reasons.append(f"{_points(impossible[code])} with a negative or infinite value")
        count = int(times[code] + impossible[code])
        skipped.by_index[name] = skipped.by_index.get(name, 0) + count
        skipped.notes.append(
            f"skipped {_points(count)} of {name!r} ({ids.categories[code]}): "
            + " and ".join(reasons)
        )
    kept: pd.DataFrame = frame[~bad]
    return kept


def _points(count: int) -> str:
    return f"{count:,} point" + ("" if count == 1 else "s")
