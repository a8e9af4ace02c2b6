"""Each index's spacings between consecutive points, kept so that a median extends.

The sampling interval of an index on a day is the median spacing of its points
(:func:`~searchkit.frames.counting.median_spacing`). A median does not add up, but the
spacings do: a rollup keeps each index's distinct spacings and how often each occurs
(``spacing_values``, ``spacing_counts``, values ascending), so the spacings of points
written later join them, and the median of all of them is told without the earlier
points (:mod:`searchkit.history.open_day`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["histogram", "pairs", "seconds_of", "spacing_medians", "spacings"]

_NAT = np.iinfo(np.int64).min


def spacings(codes: np.ndarray, nanos: np.ndarray, count: int) -> tuple[pa.Array, pa.Array]:
    """Each group's distinct spacings between consecutive instants and how often each
    occurs (two list arrays of ``count`` rows, values ascending): what
    :func:`~searchkit.frames.counting.median_spacing` takes the median of. ``codes[i]``
    is the group of ``nanos[i]``; NaT instants are left out, as there."""
    groups, spacing = pairs(np.asarray(codes, np.int64), np.asarray(nanos, np.int64))
    counts = np.ones(len(spacing), np.int64)
    if len(spacing):
        # A group whose spacings are all equal (a steady sampler) is one (value, count):
        # only the others are sorted.
        heads = np.flatnonzero(np.append(True, groups[1:] != groups[:-1]))
        steady = np.minimum.reduceat(spacing, heads) == np.maximum.reduceat(spacing, heads)
        if steady.any():
            sizes = np.diff(np.append(heads, len(groups)))
            uneven = np.repeat(~steady, sizes)
            groups = np.concatenate([groups[heads[steady]], groups[uneven]])
            spacing = np.concatenate([spacing[heads[steady]], spacing[uneven]])
            counts = np.concatenate([sizes[steady], counts[uneven]])
    return histogram(groups, spacing, counts, count)


def pairs(codes: np.ndarray, nanos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The group and length of each spacing between a group's consecutive instants."""
    if len(nanos) and nanos.min() == _NAT:
        known = nanos != _NAT
        codes, nanos = codes[known], nanos[known]
    same = codes[1:] == codes[:-1]
    spacing = np.diff(nanos)[same]
    if (len(codes) > 1 and (np.diff(codes) < 0).any()) or (len(spacing) and spacing.min() < 0):
        order = np.lexsort((nanos, codes))  # else already in (group, time) order
        codes, nanos = codes[order], nanos[order]
        same = codes[1:] == codes[:-1]
        spacing = np.diff(nanos)[same]
    return codes[1:][same], spacing


def histogram(
    groups: np.ndarray, values: np.ndarray, counts: np.ndarray, count: int
) -> tuple[pa.Array, pa.Array]:
    """Sum ``counts`` per (group, value): the list arrays of :func:`spacings`."""
    if len(values):
        order = np.lexsort((values, groups))
        groups, values, counts = groups[order], values[order], counts[order]
        head = np.append(True, (groups[1:] != groups[:-1]) | (values[1:] != values[:-1]))
        starts = np.flatnonzero(head)
        groups, values = groups[starts], values[starts]
        counts = np.add.reduceat(counts, starts)
    offsets = np.searchsorted(groups, np.arange(count + 1)).astype(np.int32)
    return (
        pa.ListArray.from_arrays(pa.array(offsets), pa.array(values, pa.int64())),
        pa.ListArray.from_arrays(pa.array(offsets), pa.array(counts, pa.int64())),
    )


def spacing_medians(values: pa.Array, counts: pa.Array) -> np.ndarray:
    """The median spacing (epoch ns, NaT where none) of each row of :func:`spacings`: the
    middle value, or the mean of the two middle ones rounded to the nanosecond, as
    :func:`~searchkit.frames.counting.median_spacing` gives it."""
    out = np.full(len(values), _NAT, np.int64)
    lengths = pc.fill_null(pc.list_value_length(values), 0).to_numpy().astype(np.int64)
    flat = pc.list_flatten(values).to_numpy().astype(np.int64)
    weight = pc.list_flatten(counts).to_numpy().astype(np.int64)
    has = lengths > 0
    if not has.any():
        return out
    holder = np.repeat(np.arange(len(lengths)), lengths)
    total = np.bincount(holder, weights=weight, minlength=len(lengths)).astype(np.int64)
    running = np.cumsum(weight)
    starts = (np.cumsum(lengths) - lengths)[has]
    before = (running - weight)[starts]  # the counts of the rows before each row
    low = before + (total[has] - 1) // 2  # ranks of the middle spacings in the flat list
    high = before + total[has] // 2
    at_low = np.searchsorted(running, low, side="right")
    at_high = np.searchsorted(running, high, side="right")
    middle = (flat[at_low].astype(np.float64) + flat[at_high].astype(np.float64)) / 2
    out[has] = np.round(middle).astype(np.int64)
    return out


def seconds_of(medians: np.ndarray) -> np.ndarray:
    """Median spacings (ns, NaT where none) as rollups keep them: seconds, NaN where none."""
    series = pd.Series(medians.view("m8[ns]"))
    return series.dt.total_seconds().to_numpy(dtype=np.float64)
