"""Arrow columns as NumPy arrays, the two ways the rollup readers need them.

The checks (:mod:`searchkit.history.checks`), the reports (:mod:`searchkit.history.scan`)
and the rollups (:mod:`searchkit.history.rollups`) all read instants and counts as int64
and test columns for nulls; this is the one place that says how.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["int64_values", "null_mask"]


def int64_values(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Instants (or integers) as int64 NumPy values, nulls as 0."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    values: np.ndarray = pc.fill_null(column.cast(pa.int64()), 0).to_numpy()
    return values


def null_mask(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Which entries of ``column`` are null, as booleans."""
    return np.asarray(pc.is_null(column).to_numpy(zero_copy_only=False), dtype=bool)
