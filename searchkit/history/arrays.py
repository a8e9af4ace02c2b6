"""Arrow columns as NumPy arrays, the ways the rollup readers need them.

The checks (:mod:`searchkit.history.checks`), the reports (:mod:`searchkit.history.scan`)
and the rollups (:mod:`searchkit.history.rollups`) all read instants and counts as int64
and test columns for nulls, and read a rollup's lists as figures per row and bin
(:class:`Bins`); this is the one place that says how.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["Bins", "int64_values", "null_mask"]


def int64_values(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Instants (or integers) as int64 NumPy values, nulls as 0."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    values: np.ndarray = pc.fill_null(column.cast(pa.int64()), 0).to_numpy()
    return values


def null_mask(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Which entries of ``column`` are null, as booleans."""
    return np.asarray(pc.is_null(column).to_numpy(zero_copy_only=False), dtype=bool)


class Bins:
    """Figures [rows, bins] of rollup rows read from several files, kept in the parts they
    were read in (views of each file's decoded column): a year of quarter sums (35M
    figures) is never copied into one array. A part is one file's rows, so a day's rows
    are one part's: :meth:`rows` gives them without a copy."""

    def __init__(self, parts: Sequence[np.ndarray]) -> None:
        self.parts = list(parts)
        self.width = int(self.parts[0].shape[1]) if self.parts else 0
        self.starts = np.cumsum([0, *(len(part) for part in self.parts)])

    def rows(self, low: int, high: int) -> np.ndarray:
        """Rows ``low`` to ``high`` (exclusive): a view when they lie in one part."""
        at = int(np.searchsorted(self.starts, low, side="right")) - 1
        if at >= 0 and high <= self.starts[at + 1]:
            begin = int(self.starts[at])
            return self.parts[at][low - begin : high - begin]
        return np.concatenate(self.parts)[low:high]

    def each(self, per_row: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """``per_row`` (a function of a part that gives one value per row) of every row."""
        if not self.parts:
            return np.zeros(0)
        return np.concatenate([per_row(part) for part in self.parts])
