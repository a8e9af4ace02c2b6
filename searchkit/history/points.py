"""Stored points as arrays: the span a read covers, and the points inside it.

:meth:`~searchkit.History.throughput` makes a frame of the points; code that only sums
them (``forecast_limits`` bins a day at a time) reads them here instead: the columns as
the reader gives them (texts as dictionaries: each index id, name and account once, a code
per point), deduplicated by :func:`~searchkit.history.dedupe.unique_points`, the rule
:meth:`~searchkit.History.throughput` follows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from searchkit.errors import UnknownIndexError, ValidationError
from searchkit.frames.zones import Instant, utc_instant
from searchkit.history import reader
from searchkit.history.bounds import Bounds
from searchkit.history.dedupe import Points, unique_points
from searchkit.history.layout import THROUGHPUT_SCHEMA, Layout

__all__ = ["read_points", "refuse_unknown", "selection", "span"]

Span = tuple[pd.Timestamp | None, pd.Timestamp | None, tuple[str | None, str | None], Bounds | None]


def span(start: Instant | None, end: Instant | None) -> Span:
    """Return the instants ``start`` and ``end`` name, their UTC days, and the bounds on
    ``time`` they make (None when both are None): what a read chooses row groups by and
    filters rows with.

    Raises:
        ValidationError: ``start`` or ``end`` is no time, or ``end`` comes before ``start``.
    """
    lo, hi = utc_instant(start, "start"), utc_instant(end, "end")
    if lo is not None and hi is not None and hi < lo:
        raise ValidationError(f"end ({hi}) is before start ({lo})")
    days = (
        None if lo is None else f"{lo:%Y-%m-%d}",
        None if hi is None else f"{(hi - pd.Timedelta(1, 'ns')):%Y-%m-%d}",
    )
    bounds = Bounds.of(ranges=[("time", _nanos(lo), _nanos(hi))])
    return lo, hi, days, bounds


def _nanos(instant: pd.Timestamp | None) -> int | None:
    return None if instant is None else int(instant.value)


def selection(
    start: Instant | None,
    end: Instant | None,
    *,
    names: Iterable[str] | str | None = None,
    index_ids: Iterable[str] | str | None = None,
) -> tuple[tuple[str | None, str | None], Bounds | None]:
    """Return the UTC days and the one set of bounds a read of points between ``start``
    and ``end`` (of these names and ids) needs: it chooses row groups, then rows.

    Raises:
        ValidationError: As :func:`span`, or ``names`` or ``index_ids`` holds something
            other than text.
    """
    lo, hi, days, _ = span(start, end)
    texts = [
        (column, None if given is None else _texts(given, what))
        for column, given, what in (("name", names, "names"), ("index_id", index_ids, "index_ids"))
    ]
    return days, Bounds.of(ranges=[("time", _nanos(lo), _nanos(hi))], texts=texts)


def refuse_unknown(
    layout: Layout,
    read: pa.Table,
    current: Mapping[str, str],
    *,
    names: Iterable[str] | str | None = None,
    index_ids: Iterable[str] | str | None = None,
) -> None:
    """Refuse a name or id in ``names``/``index_ids`` that no index of the history has had.

    A name is known when the points ``read`` carry it or an index has it now (``current``:
    id -> name); else the stored limits snapshots (their ``id`` and ``name``, read only
    then) decide, so an index's former name, with no points in the span read, is no error.

    Raises:
        UnknownIndexError: A name or id that is none of these; the message lists the names
            the indexes have now.
    """
    for column, given, stored, known_now in (
        ("name", names, "name", set(current.values())),
        ("index_id", index_ids, "id", set(current)),
    ):
        if given is None:
            continue
        known = known_now | {t for t in pc.unique(read[column]).to_pylist() if t is not None}
        missing = [t for t in _texts(given, f"{column}s") if t not in known]
        if missing:
            snapshots = reader.read(layout, "limits", columns=[stored])
            ever = {t for t in pc.unique(snapshots[stored]).to_pylist() if t is not None}
            missing = [t for t in missing if t not in ever]
        if missing:
            what = "named" if column == "name" else "with id"
            shown = ", ".join(sorted(set(current.values()))) or "(none)"
            raise UnknownIndexError(
                f"no index {what} {', '.join(map(repr, missing))} in this history; indexes: {shown}"
            )


def _texts(value: Iterable[str] | str, name: str) -> list[str]:
    """Return one text or several as a list (a text is one, not its letters), checked."""
    if isinstance(value, str):
        return [value]
    try:
        items = list(value)
    except TypeError:
        raise ValidationError(
            f"{name} must be a text or several texts, got {type(value).__name__}"
        ) from None
    for position, item in enumerate(items):
        if not isinstance(item, str):
            raise ValidationError(f"{name} must hold texts only: item {position} is {item!r}")
    return items


def read_points(
    layout: Layout,
    lo: pd.Timestamp | None,
    hi: pd.Timestamp | None,
    rename: Mapping[str, str],
) -> Points:
    """Read the stored points from ``lo`` (inclusive) to ``hi`` (exclusive) as arrays.

    ``rename`` maps index ids to the names to show (see
    :func:`~searchkit.history.dedupe.unique_points`).
    """
    _, _, days, prune = span(lo, hi)  # row groups pruned by time; rows cut below
    low = lo.value if lo is not None else np.iinfo(np.int64).min
    high = hi.value if hi is not None else np.iinfo(np.int64).max

    def read(columns: list[str]) -> pa.Table:
        # Texts as read, each column's row groups then put on one dictionary and in one
        # chunk (unique_points numbers them: an encoded table would be numbered twice).
        table = reader.read(
            layout, "throughput", days=days, columns=columns, prune=prune, encode=False
        )
        table = table.unify_dictionaries().combine_chunks()
        times = table["time"].combine_chunks().cast(pa.int64()).to_numpy()
        if len(times) and (times.min() < low or times.max() >= high):
            # A row group that straddles the span's ends.
            table = table.filter(pa.array((times >= low) & (times < high)))
        return table

    # collected_at only decides between repeats and accounts: files of one account, sorted
    # and unique (as written) are read without it, and read again with it otherwise.
    columns = list(THROUGHPUT_SCHEMA.names)
    lean = [column for column in columns if column != "collected_at"]
    return unique_points(read(lean), rename, full=lambda: read(columns))
