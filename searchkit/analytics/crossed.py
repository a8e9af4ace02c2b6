"""When today's operations reached an index's limit (``forecast_limits``' ``hit_at`` once
passed): at the first point where the index's values today, summed one at a time in time
order, times the operations a unit stands for, reach the limit. Today's rollup, which
the collector keeps current, knows that point for the limits it saw
(:mod:`searchkit.history.crossings`); only the points of the other indexes at their limit
are read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from searchkit.analytics.bins import Bins, last_day_points
from searchkit.frames.counting import DAY_NS, HOUR_NS
from searchkit.history.crossings import NOT_REACHED, reached_at

if TYPE_CHECKING:
    from searchkit.history.usage_history import History

__all__ = ["crossed_at", "read_crossings"]


def read_crossings(
    source: History, bins: Bins, limit: np.ndarray, index: pd.Index, moment: pd.Timestamp
) -> None:
    """When today came from its rollup: take the crossings it knows of each index whose
    operations today reach its limit (what :func:`_crossed` needs), and read today's
    points of the others. The sum of the hours and the running sum of the points agree
    far inside 1e-9 of the total (their additions' rounding): an index under its limit
    by more than that has no point that reached it."""
    each = _limit_of_rows(bins, limit, index)
    used = bins.ops[:, -1].sum(axis=1)
    near = np.isfinite(each) & (used > 0) & (used >= each * (1 - 1e-9))
    known: dict[int, float] = {}
    if bins.last_crossings is not None and bins.last_scales is not None:
        rows, values, times, scales = bins.last_crossings
        same = (values == each[rows]) & (scales == bins.last_scales[rows]) & near[rows]
        start = bins.first_day.value + (bins.days - 1) * DAY_NS
        for row, when in zip(rows[same].tolist(), times[same].tolist(), strict=True):
            known[row] = np.nan if when == NOT_REACHED else (when - start) / HOUR_NS
    bins.known_crossings = known
    wanted = np.asarray([row for row in np.flatnonzero(near).tolist() if row not in known])
    last_day_points(source, bins, wanted.astype(np.int64), moment.value)


def _limit_of_rows(bins: Bins, limit: np.ndarray, index: pd.Index) -> np.ndarray:
    """The ``limit`` of each index of ``index`` for each index of ``bins`` (inf: none)."""
    row_of = {str(index_id): at for at, index_id in enumerate(index)}
    each = np.full(len(bins.ids), np.inf)
    for row, index_id in enumerate(bins.ids):
        if index_id in row_of:
            each[row] = limit[row_of[index_id]]
    return each


def crossed_at(bins: Bins, limit: np.ndarray, rows: np.ndarray, start: pd.Timestamp) -> np.ndarray:
    """Hours after midnight of the point that took today's operations to the limit: the
    first at which the index's values today, summed one at a time in time order, times
    the operations a unit stands for, reach it (or what today's rollup knows of it)."""
    point_rows, times, _ = bins.last_points
    values = bins.last_values
    per_limit = np.full(len(bins.ids), np.inf)
    known = rows >= 0
    per_limit[rows[known]] = limit[known]
    hours = np.full(len(bins.ids), np.nan)
    for row, told in bins.known_crossings.items():
        hours[row] = told
    heads = np.flatnonzero(np.append(True, point_rows[1:] != point_rows[:-1]))[: len(times)]
    ends = np.append(heads[1:], len(point_rows))
    scales = bins.last_scales if bins.last_scales is not None else np.ones(len(bins.ids))
    for head, end in zip(heads.tolist(), ends.tolist()[: len(heads)], strict=True):
        row = int(point_rows[head])
        if not np.isfinite(per_limit[row]) or row in bins.known_crossings:
            continue
        at = reached_at(values[head:end], 0.0, scales[row], per_limit[row])
        if at is not None:
            hours[row] = (times[head + at] - start.value) / HOUR_NS
    out = np.full(len(rows), np.nan)
    out[known] = hours[rows[known]]
    return out
