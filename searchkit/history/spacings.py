"""Each index's spacings between consecutive points, kept so that a median extends.

The sampling interval of an index on a day is the median spacing of its points
(:func:`~searchkit.frames.counting.median_spacing`). A median does not add up, but a
window of the sorted spacings around it does: a rollup keeps each index's distinct
spacings nearest its median and how often each occurs (``spacing_values``,
``spacing_counts``, values ascending, at most :data:`WINDOW` of them), and how many
spacings lie below and above them (``spacings_below``, ``spacings_above``). The spacings of
points written later join them (a value beyond a trimmed end counts on that side), and the
median of all of them is told without the earlier points while it stays inside the window
(:mod:`searchkit.history.open_day`; else the day is rolled up from its points again). A
steady sampler has one distinct spacing: one value, nothing below or above.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from searchkit.frames.counting import median_ranks, midpoint, spacings

__all__ = ["WINDOW", "Spacings", "seconds_of"]

_NAT = np.iinfo(np.int64).min
#: The most distinct spacings an index keeps around its median.
WINDOW = 64


class Spacings:
    """Per row: distinct spacings near the median with their counts (flat arrays, by row
    then value), and the counts of spacings below and above them."""

    def __init__(
        self,
        groups: np.ndarray,
        values: np.ndarray,
        counts: np.ndarray,
        below: np.ndarray,
        above: np.ndarray,
    ) -> None:
        self.groups, self.values, self.counts = groups, values, counts
        self.below, self.above = below, above
        self._merge()

    @classmethod
    def of_points(cls, codes: np.ndarray, nanos: np.ndarray, count: int) -> Spacings:
        """The spacings of ``count`` groups' instants (``codes[i]``: the group of
        ``nanos[i]``)."""
        spaced = spacings(np.asarray(codes, np.int64), np.asarray(nanos, np.int64))
        return cls.of_spacings(*spaced, count)

    @classmethod
    def of_spacings(cls, groups: np.ndarray, spacing: np.ndarray, count: int) -> Spacings:
        """:meth:`of_points` from the instants' :func:`~searchkit.frames.counting.spacings`
        (groups as int64), when they are at hand already."""
        counts = np.ones(len(spacing), np.int64)
        if len(spacing):
            # A group whose spacings are all equal (a steady sampler) is one (value,
            # count): only the others are sorted.
            heads = np.flatnonzero(np.append(True, groups[1:] != groups[:-1]))
            steady = np.minimum.reduceat(spacing, heads) == np.maximum.reduceat(spacing, heads)
            if steady.any():
                sizes = np.diff(np.append(heads, len(groups)))
                uneven = np.repeat(~steady, sizes)
                groups = np.concatenate([groups[heads[steady]], groups[uneven]])
                spacing = np.concatenate([spacing[heads[steady]], spacing[uneven]])
                counts = np.concatenate([sizes[steady], counts[uneven]])
        zero = np.zeros(count, np.int64)
        return cls(groups, spacing, counts, zero, zero.copy())

    @classmethod
    def of_table(cls, table: pa.Table) -> Spacings:
        """The spacings kept in rollup rows."""
        values, counts = table["spacing_values"], table["spacing_counts"]
        lengths = pc.list_value_length(values).to_numpy(zero_copy_only=False)
        return cls(
            np.repeat(np.arange(table.num_rows), lengths),
            _flat(values),
            _flat(counts),
            table["spacings_below"].to_numpy().astype(np.int64),
            table["spacings_above"].to_numpy().astype(np.int64),
        )

    def grow(self) -> None:
        """Add a row without spacings."""
        self.below, self.above = np.append(self.below, 0), np.append(self.above, 0)

    def add(self, groups: np.ndarray, values: np.ndarray) -> None:
        """Count one more occurrence of each (row, spacing): beyond a trimmed end of the
        row's window, on that side."""
        rows = len(self.below)
        low = np.full(rows, np.iinfo(np.int64).max)
        high = np.full(rows, np.iinfo(np.int64).min)
        np.minimum.at(low, self.groups, self.values)
        np.maximum.at(high, self.groups, self.values)
        under = (values < low[groups]) & (self.below[groups] > 0)
        over = (values > high[groups]) & (self.above[groups] > 0)
        self.below += np.bincount(groups[under], minlength=rows)
        self.above += np.bincount(groups[over], minlength=rows)
        inside = ~(under | over)
        self.groups = np.concatenate([self.groups, groups[inside]])
        self.values = np.concatenate([self.values, values[inside]])
        self.counts = np.concatenate([self.counts, np.ones(int(inside.sum()), np.int64)])
        self._merge()

    def totals(self) -> np.ndarray:
        """Each row's number of spacings."""
        kept = np.bincount(self.groups, weights=self.counts, minlength=len(self.below))
        totals: np.ndarray = kept.astype(np.int64) + self.below + self.above
        return totals

    def medians(self) -> tuple[np.ndarray, np.ndarray]:
        """Each row's median spacing (epoch ns, NaT where none: the middle value, or the
        mean of the two middle ones rounded to the nanosecond, as ``median_spacing``), and
        whether the window holds it."""
        rows = len(self.below)
        out = np.full(rows, _NAT, np.int64)
        total = self.totals()
        starts = np.searchsorted(self.groups, np.arange(rows))
        running = np.cumsum(self.counts)
        before = np.append(0, running)[starts]  # the counts of the rows before each row
        first, second = median_ranks(total)
        low, high = first - self.below, second - self.below  # their ranks in the window
        kept = total - self.below - self.above
        has = total > 0
        held = ~has | ((low >= 0) & (high < kept))
        take = has & held
        at_low = np.searchsorted(running, (before + low)[take], side="right")
        at_high = np.searchsorted(running, (before + high)[take], side="right")
        out[take] = midpoint(self.values[at_low], self.values[at_high])
        return out, held

    def columns(self, order: np.ndarray) -> list[pa.Array]:
        """The four rollup columns of the rows in ``order``."""
        place = np.empty(len(order), np.int64)
        place[order] = np.arange(len(order))
        moved = Spacings(
            place[self.groups], self.values, self.counts, self.below[order], self.above[order]
        )
        offsets = pa.array(np.searchsorted(moved.groups, np.arange(len(order) + 1)), pa.int32())
        return [
            pa.ListArray.from_arrays(offsets, pa.array(moved.values, pa.int64())),
            pa.ListArray.from_arrays(offsets, pa.array(moved.counts, pa.int64())),
            pa.array(moved.below, pa.int64()),
            pa.array(moved.above, pa.int64()),
        ]

    def _merge(self) -> None:
        """Sum counts per (row, value), in (row, value) order; keep at most WINDOW values a
        row around its median."""
        groups, values = self.groups, self.values
        ordered = (groups[1:] > groups[:-1]) | (
            (groups[1:] == groups[:-1]) & (values[1:] > values[:-1])
        )
        # As a rollup keeps them (read back, or placed in the same order): nothing to merge.
        if len(self.values) and not ordered.all():
            order = np.lexsort((self.values, self.groups))
            groups, values, counts = self.groups[order], self.values[order], self.counts[order]
            head = np.append(True, (groups[1:] != groups[:-1]) | (values[1:] != values[:-1]))
            starts = np.flatnonzero(head)
            self.groups, self.values = groups[starts], values[starts]
            self.counts = np.add.reduceat(counts, starts)
        sizes = np.bincount(self.groups, minlength=len(self.below))
        if (sizes > WINDOW).any():
            self._trim(sizes)

    def _trim(self, sizes: np.ndarray) -> None:
        """Keep WINDOW values of each longer row, centred on its median's rank."""
        starts = np.append(0, np.cumsum(sizes))
        keep = np.ones(len(self.values), bool)
        for row in np.flatnonzero(sizes > WINDOW).tolist():
            low, high = int(starts[row]), int(starts[row + 1])
            counts = self.counts[low:high]
            total = int(self.below[row] + counts.sum() + self.above[row])
            rank = median_ranks(total)[0] - int(self.below[row])
            middle = int(np.searchsorted(np.cumsum(counts), rank, side="right"))
            first = min(max(middle - WINDOW // 2, 0), len(counts) - WINDOW)
            self.below[row] += int(counts[:first].sum())
            self.above[row] += int(counts[first + WINDOW :].sum())
            keep[low : low + first] = False
            keep[low + first + WINDOW : high] = False
        self.groups, self.values, self.counts = (
            self.groups[keep],
            self.values[keep],
            self.counts[keep],
        )


def _flat(column: pa.ChunkedArray) -> np.ndarray:
    """A list column's values, flattened, as int64."""
    values = pc.list_flatten(column.combine_chunks()).to_numpy(zero_copy_only=False)
    return np.asarray(values, np.int64)


def seconds_of(medians: np.ndarray) -> np.ndarray:
    """Median spacings (ns, NaT where none) as rollups keep them: seconds, NaN where none."""
    series = pd.Series(medians.view("m8[ns]"))
    return series.dt.total_seconds().to_numpy(dtype=np.float64)
