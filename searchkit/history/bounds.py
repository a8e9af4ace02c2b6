"""What a read of the history keeps, as bounds per column: one predicate for row groups and rows.

A read names an instant range on a timestamp column (``time`` from ``start`` to ``end``,
``collected_at`` up to an instant) and the texts a text column may hold (``names=``,
``index_ids=``). :class:`Bounds` says that once. Its :meth:`~Bounds.row_groups` chooses a
file's row groups by walking the footer's min/max statistics, and its
:meth:`~Bounds.expression` is the same condition as a pyarrow expression, which filters the
rows of the groups read.

Why a walk and not pyarrow's own ``ParquetFileFragment.subset(expression)``: both choose the
same row groups (tests/history/test_history_bounds.py compares them), but the walk is
faster on the stores searchkit writes, most for a time range (bench/pruning.py prints the
two side by side: see the README's figures).
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import operator
from collections.abc import Iterable

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from searchkit.history.layout import TIMESTAMP

__all__ = ["Bounds"]

_PER_UNIT = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}


@dataclasses.dataclass(frozen=True)
class Bounds:
    """Rows a read keeps: instants in ``[low, high)`` per timestamp column, and texts.

    ``ranges`` holds ``(column, low, high)`` in epoch nanoseconds (None: unbounded on that
    side); ``texts`` holds ``(column, allowed texts)``. Every bound must hold for a row to
    be kept. A file without one of the columns is not pruned by it (its rows are filtered).
    """

    ranges: tuple[tuple[str, int | None, int | None], ...] = ()
    texts: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @classmethod
    def of(
        cls,
        ranges: Iterable[tuple[str, int | None, int | None]] = (),
        texts: Iterable[tuple[str, Iterable[str] | None]] = (),
    ) -> Bounds | None:
        """Return the bounds that say something (None for none: keep every row)."""
        kept_ranges = tuple((c, lo, hi) for c, lo, hi in ranges if lo is not None or hi is not None)
        kept_texts = tuple((c, tuple(sorted(set(v)))) for c, v in texts if v is not None)
        if not kept_ranges and not kept_texts:
            return None
        return cls(kept_ranges, kept_texts)

    def expression(self) -> ds.Expression:
        """The same condition as a pyarrow expression (to filter rows with)."""
        parts = []
        for column, low, high in self.ranges:
            if low is not None:
                parts.append(ds.field(column) >= pa.scalar(low, TIMESTAMP))
            if high is not None:
                parts.append(ds.field(column) < pa.scalar(high, TIMESTAMP))
        for column, allowed in self.texts:
            parts.append(ds.field(column).isin(pa.array(allowed, pa.string())))
        return functools.reduce(operator.and_, parts) if parts else ds.scalar(True)

    def row_groups(self, metadata: pq.FileMetaData, schema: pa.Schema) -> list[int]:
        """Return the row groups of a file whose statistics can hold a row kept.

        ``schema`` is the file's Arrow schema (it gives each timestamp column's unit). A
        group is kept unless a column's min/max rule it out; a group without statistics
        for a column is kept.
        """
        position = {name: place for place, name in enumerate(metadata.schema.names)}
        ranges = []
        for column, low, high in self.ranges:
            kind = schema.field(column).type if column in schema.names else None
            if column in position and isinstance(kind, pa.TimestampType):
                scale = _PER_UNIT[kind.unit]
                ranges.append((position[column], scale, low, high))
        texts = [
            (position[column], sorted(text.encode("utf-8") for text in allowed))
            for column, allowed in self.texts
            if column in position
        ]
        return [
            group
            for group in range(metadata.num_row_groups)
            if _may_hold(metadata.row_group(group), ranges, texts)
        ]


def _may_hold(
    group: pq.RowGroupMetaData,
    ranges: list[tuple[int, int, int | None, int | None]],
    texts: list[tuple[int, list[bytes]]],
) -> bool:
    for place, scale, low, high in ranges:
        stats = group.column(place).statistics
        if stats is None or not stats.has_min_max or stats.physical_type != "INT64":
            continue
        if (low is not None and stats.max_raw * scale < low) or (
            high is not None and stats.min_raw * scale >= high
        ):
            return False
    for place, allowed in texts:
        stats = group.column(place).statistics
        if stats is None or not stats.has_min_max or stats.physical_type != "BYTE_ARRAY":
            continue
        # Parquet orders texts as unsigned bytes, as Python orders bytes.
        smallest, largest = _bytes(stats.min_raw), _bytes(stats.max_raw)
        first = bisect.bisect_left(allowed, smallest)
        if first == len(allowed) or allowed[first] > largest:
            return False
    return True


def _bytes(value: bytes | str) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else value
