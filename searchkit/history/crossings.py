"""When an index's use of the day reached a limit: kept in the open day's rollup.

``forecast_limits`` says when today's operations reached an index's limit: at the first
point where the day's values, summed one at a time in time order (``running_value``),
times the operations a unit stands for (the day's sampling interval, seconds), reach it.
That needs the index's points; the rollup the collector keeps current for the open day
holds the answer instead, for the limits the collector saw (``crossing_limits``, and
``crossing_times``: the point's time, NaT where the day's points do not reach it), so a
forecast at 23:50 reads no point of an index long past its limit. An answer is kept only
when certain (the points known then decide it); a limit changed during the day, or an
interval that changed, leaves it out, and the forecast reads that index's points.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from searchkit.frames.counting import interval_seconds, sums_in_order

__all__ = [
    "DAILY",
    "NOT_REACHED",
    "Crossings",
    "crossed",
    "crossing_columns",
    "daily_limits",
    "limit_crossings",
    "reached_at",
]

#: A crossing time for "the day's points so far do not reach the limit".
NOT_REACHED = np.iinfo(np.int64).min


def reached_at(values: np.ndarray, start: float, scale: float, limit: float) -> int | None:
    """The position in ``values`` (clean, in time order) of the first point at which
    ``start`` + the values so far (one addition at a time), times ``scale``, reach
    ``limit``; None when none does."""
    running = np.cumsum(np.append(start, values))[1:]
    with np.errstate(invalid="ignore", over="ignore"):
        used = running * scale
    hit = np.flatnonzero((used >= limit) & (used > 0))
    return int(hit[0]) if len(hit) else None


class Crossings:
    """Each row's known crossings: (limit, time) pairs, NaT time where not reached."""

    def __init__(self, rows: int) -> None:
        self.pairs: list[dict[float, int]] = [{} for _ in range(rows)]

    @classmethod
    def of(cls, limits: pa.ChunkedArray, times: pa.ChunkedArray) -> Crossings:
        """The crossings of rollup rows (their ``crossing_limits``/``crossing_times``)."""
        out = cls(len(limits))
        # Only the rows that hold any (an index without daily limits holds none).
        sizes = [pc.fill_null(pc.list_value_length(c), 0).to_numpy() for c in (limits, times)]
        rows = np.flatnonzero((sizes[0] > 0) | (sizes[1] > 0))
        listed = zip(limits.take(rows).to_pylist(), _nanos(times.take(rows)), strict=True)
        for row, (values, when) in zip(rows.tolist(), listed, strict=True):
            out.pairs[row] = dict(zip(values or [], when, strict=True))
        return out

    def add_row(self) -> None:
        self.pairs.append({})

    def update(
        self,
        rows: Sequence[int],
        points: Mapping[int, tuple[np.ndarray, np.ndarray]],
        running: tuple[np.ndarray, np.ndarray],
        seconds: tuple[np.ndarray, np.ndarray],
        wanted: Mapping[int, Sequence[float]],
    ) -> None:
        """Answer the ``wanted`` limits of ``rows`` from their new ``points`` (times, clean
        values, in time order): ``running`` holds each row's running value before and after
        them, ``seconds`` its interval before and after (NaN: none). A row whose interval
        changed forgets what it knew (those answers were told at the old interval)."""
        (start, end), (before, after) = running, seconds
        scales = interval_seconds(after)
        same = (before == after) | (np.isnan(before) & np.isnan(after))
        with np.errstate(invalid="ignore", over="ignore"):
            past, now = start * scales, end * scales
        for row in rows:
            known = self.pairs[row] if same[row] else {}
            kept: dict[float, int] = {}
            for limit in wanted.get(row, ()):
                told = known.get(limit)
                if told is not None and told != NOT_REACHED:
                    kept[limit] = told  # reached before these points
                elif told is None and past[row] >= limit and past[row] > 0:
                    continue  # reached at a point not at hand: not known
                elif not (now[row] >= limit and now[row] > 0):
                    kept[limit] = NOT_REACHED  # the running value only grows
                else:
                    times, values = points[row]
                    at = reached_at(values, start[row], scales[row], limit)
                    kept[limit] = NOT_REACHED if at is None else int(times[at])
            self.pairs[row] = kept

    def arrays(self, order: np.ndarray) -> tuple[pa.Array, pa.Array]:
        """``crossing_limits`` and ``crossing_times`` of the rows in ``order``."""
        held = [self.pairs[row] for row in order.tolist()]
        limits = [limit for pairs in held for limit in sorted(pairs)]
        times = [pairs[limit] for pairs in held for limit in sorted(pairs)]
        sizes = np.fromiter((len(pairs) for pairs in held), np.int32, len(held))
        offsets = pa.array(np.append(np.int32(0), np.cumsum(sizes, dtype=np.int32)))
        instants = [None if time == NOT_REACHED else time for time in times]
        return (
            pa.ListArray.from_arrays(offsets, pa.array(limits, pa.float64())),
            pa.ListArray.from_arrays(offsets, pa.array(instants, pa.timestamp("ns", tz="UTC"))),
        )


def _nanos(times: pa.ChunkedArray) -> list[list[int]]:
    """Each row's crossing times as epoch ns, :data:`NOT_REACHED` for a null."""
    numbers = times.cast(pa.list_(pa.int64())).to_pylist()
    return [[NOT_REACHED if t is None else int(t) for t in row or []] for row in numbers]


#: The limits a forecast compares today's operations with, as ``forecast_limits`` sums
#: them (its ``FORECASTABLE_FIELDS``: each daily limit, then their sum; a test keeps them
#: equal): the limits whose crossings the collector keeps.
DAILY = ("max_daily_queries", "max_daily_updates")


def daily_limits(limits: pd.DataFrame) -> dict[str, list[float]]:
    """Each index's finite daily limits (a limits frame indexed by index_id), and their
    sum, added as the forecast adds them."""
    if limits.empty or not all(field in limits.columns for field in DAILY):
        return {}
    values = [limits[field].to_numpy(np.float64) for field in DAILY]
    total = np.zeros(len(limits))
    for column in values:
        total = total + column
    out: dict[str, list[float]] = {}
    for at, index_id in enumerate(limits.index.astype(str)):
        found = [float(v[at]) for v in (*values, total) if np.isfinite(v[at])]
        if found:
            out[index_id] = list(dict.fromkeys(found))
    return out


def crossing_columns(
    codes: np.ndarray,
    nanos: np.ndarray,
    clean: np.ndarray,
    seconds: np.ndarray,
    wanted: Mapping[int, Sequence[float]],
) -> tuple[pa.Array, pa.Array]:
    """The crossing columns of a day rolled up from all its points (``codes`` of rows in
    order, each row's points in time order; ``clean`` values): the ``wanted`` limits of
    each row answered. Rows whose points are not together (two accounts) answer none."""
    count = len(seconds)
    if not any(wanted.values()):
        return _unknown(count)  # no limit: every row's lists empty
    found = Crossings(count)
    heads = np.flatnonzero(np.append(True, codes[1:] != codes[:-1]))
    # Each row's points together: as many runs as rows with points (codes are rows).
    if len(codes) and len(heads) == np.count_nonzero(np.bincount(codes - codes.min())):
        ends = np.append(heads[1:], len(codes)).astype(np.int64)
        starts = np.asarray(heads, np.int64)
        points = {
            int(codes[low]): (nanos[low:high], clean[low:high])
            for low, high in zip(starts.tolist(), ends.tolist(), strict=True)
        }
        end = sums_in_order(codes, clean, count)  # one at a time, in order
        found.update(list(wanted), points, (np.zeros(count), end), (seconds, seconds), wanted)
    return found.arrays(np.arange(count))


def _unknown(count: int) -> tuple[pa.Array, pa.Array]:
    """The crossing columns of ``count`` rows without limits: an empty list each (what
    :meth:`Crossings.arrays` gives them, without a list per row)."""
    offsets = pa.array(np.zeros(count + 1, np.int32))
    return (
        pa.ListArray.from_arrays(offsets, pa.array([], pa.float64())),
        pa.ListArray.from_arrays(offsets, pa.array([], pa.timestamp("ns", tz="UTC"))),
    )


def limit_crossings(
    codes: np.ndarray,
    nanos: np.ndarray,
    clean: np.ndarray,
    seconds: np.ndarray,
    ids: Sequence[str],
    limits: Mapping[str, Sequence[float]] | None,
) -> tuple[pa.Array, pa.Array]:
    """The crossing columns of a day's rollup rows (``ids``, each index's in the day's
    order) with ``limits`` (by index id)."""
    wanted: dict[int, Sequence[float]] = {}
    if limits:
        row_of = {str(index_id): row for row, index_id in enumerate(ids)}
        wanted = {row_of[i]: values for i, values in limits.items() if i in row_of}
    return crossing_columns(codes, nanos, clean, seconds, wanted)


def crossed(rows: pa.Table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The crossings of a day's rollup rows as (row, limit, time ns) arrays."""
    limits, times = rows["crossing_limits"], rows["crossing_times"]
    lengths = pc.fill_null(pc.list_value_length(limits), 0).to_numpy()
    flat_times = pc.list_flatten(times.combine_chunks()).cast(pa.int64())
    return (
        np.repeat(np.arange(rows.num_rows), lengths),
        pc.list_flatten(limits.combine_chunks()).to_numpy(zero_copy_only=False),
        pc.fill_null(flat_times, NOT_REACHED).to_numpy(),
    )
