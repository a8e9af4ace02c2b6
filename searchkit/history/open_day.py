"""The open day's rollup, kept current by each collect round without reading the day again.

A collect round writes one file of new points for the open UTC day. The day's rollup
(:mod:`searchkit.history.rollups`: the same row, the same schema) is then *extended* with
those points alone, when it summarised every other file of the day and each index's new
points all come after its ``last_point`` (the case of a collector that only appends):

- each bin (a quarter-hour, an hour) carries on from its sum so far: its new values are
  added one at a time in time order (``np.add.at``), as ``np.bincount`` adds every value
  of a day read whole, so the two sums are the same to the last bit;
- counts, invalid values, the first and last point add up or take the extreme;
- the day's median sampling interval is the median of every spacing between an index's
  consecutive points: the rollup keeps each index's distinct spacings around the median
  and how often each occurs, and how many lie below and above them
  (:mod:`searchkit.history.spacings`), so the spacings of the new points, and the one
  between the old last point and the first new one, join them exactly (while the median
  stays among those kept);
- the gaps inside the day (``gaps``: steps longer than 1.5 times that median) are the old
  ones and the new steps longer than the extended day's threshold. Should the threshold
  fall below an old step judged short (an index sampled more densely), that step is a gap
  now, and as the rollup keeps no instant of it, the index's gaps are unknown (null) for
  the day: ``info()`` reads the day's points, and compaction rolls the day up again.

Otherwise (the day's first round, a file another writer added, a late point into what was
summarised, a file rewritten) the day is rolled up from its points once, as
:func:`~searchkit.history.rollups.refresh` does. A rollup is trusted only while it names
exactly the day's files as they are (:func:`~searchkit.history.rollups.current`: names,
sizes, modification times) and passes its checks (:mod:`~searchkit.history.checks`; an
extended rollup is sealed anew): a file written after it makes it stale, and readers read
the day's points until the next round extends it.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from searchkit.frames.counting import (
    DAY_NS,
    DEFAULT_SECONDS,
    HOUR_NS,
    HOURS,
    QUARTER_NS,
    QUARTERS,
    add_binned,
    bin_slots,
    clean_values,
    invalid_values,
    run_sums,
    spacings,
)
from searchkit.history import reader, rollups, text_columns
from searchkit.history.checks import seal
from searchkit.history.crossings import Crossings
from searchkit.history.dedupe import Points, unique_points
from searchkit.history.gaps import thresholds
from searchkit.history.layout import ROLLUP_SCHEMA, TIMESTAMP, Layout
from searchkit.history.spacings import Spacings, seconds_of

__all__ = ["advance", "extend"]

_LISTS = ["hourly_value_sum", "hourly_points", "quarter_value_sum", "quarter_points"]
_NAT = np.iinfo(np.int64).min

# (file name, size, modification time) of a day's throughput files, sorted.
Files = list[tuple[str, int, int]]


@dataclass(frozen=True)
class _Kept:
    """The rollup rows a round wrote for a day: they summarise exactly ``files``."""

    files: Files
    rows: pa.Table


# The rollup rows each layout's rounds wrote, by day (a collector is one long-lived
# process): the next round extends them without reading and checking them again, while the
# day's other files are still exactly those they summarise. The two newest days a layout
# wrote (the round across midnight writes both), dropped with the layout.
_KEPT: weakref.WeakKeyDictionary[Layout, dict[str, _Kept]] = weakref.WeakKeyDictionary()
_DAYS_KEPT = 2


def advance(
    layout: Layout,
    day: str,
    written: str,
    new: pa.Table,
    limits: Mapping[str, Sequence[float]] | None = None,
) -> bool:
    """Bring the rollup of ``day`` up to date after a collect wrote ``new`` (its points of
    that day) as the file ``written``: extended with them when it summarised every other
    file of the day, else rolled up from the day's points; with the crossings of each
    index's ``limits`` (:mod:`searchkit.history.crossings`). Returns whether one was
    written."""
    name = written.rpartition("/")[2]
    files = _files(layout, day)
    if name not in [listed for listed, _, _ in files]:
        return False  # gone meanwhile (a compaction of a day not open any more)
    others = [entry for entry in files if entry[0] != name]
    table = _rows_so_far(layout, day, others)
    source = rollups.signature(files)  # the written file by its size and time as stored
    extended = extend(table, new, day, source, limits=limits) if table is not None else None
    if extended is not None:
        rollups.replace(layout, day, extended, new)
        _keep(layout, day, _Kept(files, extended))
        return True
    # Rolled up from the day's points. Without the day's compaction lock, unlike
    # rollups.refresh: a rollup another writer races this one with names its own files,
    # and readers trust only the one that names the day's files as they are.
    _KEPT.get(layout, {}).pop(day, None)
    points = reader.read(layout, "throughput", days=(day, day))
    if _files(layout, day) != files:
        return False  # a writer changed the day meanwhile: its next round rolls it up
    rolled = rollups.rollup(points, day, source, limits=limits)
    rollups.replace(layout, day, rolled, points)
    _keep(layout, day, _Kept(files, rolled))
    return True


def _rows_so_far(layout: Layout, day: str, others: Files) -> pa.Table | None:
    """The day's rollup rows summarising exactly ``others`` (its files but the one just
    written, as listed now): those this layout's last round of the day wrote when they
    summarise those files, else the stored rollup when it names them and passes its checks,
    else None. A file rewritten, added or merged away by another writer (or this process's
    compaction) changes the listing, so kept rows are trusted exactly as a stored
    rollup's name is (:func:`~searchkit.history.rollups.current`)."""
    kept = _KEPT.get(layout, {}).get(day)
    if kept is not None and kept.files == others:
        return kept.rows
    # The rollup so far, when it names the other files as they are and passes its checks.
    return rollups.current_rows(layout, day, rollups.signature(others)) if others else None


def _keep(layout: Layout, day: str, kept: _Kept) -> None:
    """Keep the rows a round wrote for ``day`` (and those of the newest other day)."""
    days = _KEPT.setdefault(layout, {})
    days[day] = kept
    for old in sorted(days)[:-_DAYS_KEPT]:
        del days[old]


def _files(layout: Layout, day: str) -> Files:
    """The day's throughput files as (name, size, mtime), sorted: what a rollup names."""
    return sorted(
        (path.rpartition("/")[2], size, mtime)
        for _, path, size, mtime in layout.entries("throughput", day, day)
    )


def extend(
    table: pa.Table,
    new: pa.Table,
    day: str,
    source: str,
    *,
    limits: Mapping[str, Sequence[float]] | None = None,
) -> pa.Table | None:
    """Return the rollup of ``day`` whose rows are ``table`` (the rollup of the day's
    points so far) with the points of ``new`` added, named ``source``, with the crossings
    of ``limits``; None when it cannot be told without the day's points (see the module):
    they do not all come after what ``table`` summarised, an index has two accounts, or
    ``table`` does not add up."""
    period = pd.Timestamp(day, tz="UTC").value
    old = _Rows.of(table, period)
    points = unique_points(new)
    if old is None or not len(points.times):
        return None
    if points.times.min() < period or points.times.max() >= period + DAY_NS:
        return None
    rows = old.place(points)
    if rows is None:
        return None
    codes = rows[points.codes]
    times, values = points.times, points.values
    firsts = np.full(len(old.ids), np.iinfo(np.int64).max, np.int64)
    np.minimum.at(firsts, codes, times)
    seen = firsts != np.iinfo(np.int64).max
    if (firsts[seen] <= old.last[seen]).any():
        return None  # a point at or before one summarised: the day's points decide
    bad = invalid_values(values)
    clean = clean_values(values, bad)
    for sums, counts, width, size in (
        (old.quarter_sums, old.quarter_points, QUARTER_NS, QUARTERS),
        (old.hour_sums, old.hour_points, HOUR_NS, HOURS),
    ):
        flat = codes * size + bin_slots(times, period, width)
        add_binned(sums, flat, clean, bad, counts)  # the sums binned() gives all the points
    old.invalid += np.bincount(codes[bad], minlength=len(old.ids))
    # The spacings so far, the one from each old last point to the first new one, and
    # those between the new points.
    joined = seen & (old.last != np.iinfo(np.int64).min)
    groups, spacing = spacings(codes, times)
    old.spacing.add(
        np.concatenate([np.flatnonzero(joined), groups]),
        np.concatenate([firsts[joined] - old.last[joined], spacing]),
    )
    old.steps(np.flatnonzero(joined), old.last[joined], firsts[joined])
    order = np.lexsort((times, codes))
    ordered, instants = codes[order], times[order]
    same = ordered[1:] == ordered[:-1]
    old.steps(ordered[1:][same], instants[:-1][same], instants[1:][same])
    newest = np.full(len(old.ids), np.iinfo(np.int64).min, np.int64)
    np.maximum.at(newest, codes, times)
    old.first = np.minimum(old.first, firsts)
    old.last = np.maximum(old.last, newest)
    for code, name in zip(rows.tolist(), points.names, strict=True):
        old.names[code] = name
    try:
        old.cross(codes, times, clean, limits or {})
    except _Unknown:
        return None  # the median left the spacings kept: the day's points decide
    return old.table(period, source)


class _Unknown(Exception):
    """The median spacing is no longer among the spacings a rollup keeps."""


class _Rows:
    """A day's rollup rows as arrays, one row per index, to extend (see :func:`extend`)."""

    def __init__(self, table: pa.Table) -> None:
        self.ids: list[str] = _texts(table["index_id"])
        self.accounts: list[str] = _texts(table["account"])
        self.names: list[object] = _texts(table["name"])
        self.quarter_sums = _matrix(table["quarter_value_sum"], QUARTERS)
        self.quarter_points = _matrix(table["quarter_points"], QUARTERS)
        self.hour_sums = _matrix(table["hourly_value_sum"], HOURS)
        self.hour_points = _matrix(table["hourly_points"], HOURS)
        self.invalid = _numbers(table["invalid"], np.int64)
        self.running = _numbers(table["running_value"], np.float64)
        self.seconds = _numbers(table["interval_seconds"], np.float64)
        self.crossings = Crossings.of(table["crossing_limits"], table["crossing_times"])
        self.first = _numbers(table["first_point"], np.int64)
        self.last = _numbers(table["last_point"], np.int64)
        self.spacing = Spacings.of_table(table)
        # The gaps so far (steps longer than the threshold of the day so far) and the
        # steps added since: which are gaps is told by the extended day's threshold.
        gaps = table["gaps"].combine_chunks()
        self.gaps_known = ~np.asarray(gaps.is_null().to_numpy(zero_copy_only=False), bool)
        lengths = pc.fill_null(pc.list_value_length(gaps), 0).to_numpy()
        self.step_rows = np.repeat(np.arange(len(self.ids)), lengths)
        self.step_from = _numbers(pc.list_flatten(gaps).field("stored_until"), np.int64)
        self.step_to = _numbers(pc.list_flatten(gaps).field("listed_from"), np.int64)
        median, _ = self.spacing.medians()
        self.judged = thresholds(median, median == _NAT)  # what the old steps were judged by
        # Each old step kept (its row and length), and the rows with steps longer than
        # those kept (their lengths not known)
        self.old_steps = (self.spacing.groups.copy(), self.spacing.values.copy())
        self.longer = self.spacing.above.copy()

    @classmethod
    def of(cls, table: pa.Table, period: int) -> _Rows | None:
        """The rows of ``table``, or None when they cannot be extended: a row without the
        figures an extension needs (an older writer's), figures that do not add up, a
        point outside the day, or an index in two rows."""
        needed = ["first_point", "last_point", "spacing_values", "spacing_counts", *_LISTS]
        needed += ["spacings_below", "spacings_above", "running_value"]
        if table.num_rows == 0 or any(table[name].null_count for name in needed):
            return None
        lengths = {name: pc.list_value_length(table[name]).to_numpy() for name in _LISTS}
        if any((lengths[name] != (HOURS if "hour" in name else QUARTERS)).any() for name in _LISTS):
            return None
        if pc.list_value_length(table["spacing_values"]) != pc.list_value_length(
            table["spacing_counts"]
        ):
            return None
        rows = cls(table)
        if len(set(rows.ids)) != len(rows.ids):
            return None
        return rows if rows.add_up(table, period) else None

    def add_up(self, table: pa.Table, period: int) -> bool:
        """Whether the rows' figures agree with each other and lie in the day."""
        points = _numbers(table["points"], np.int64)
        value_sum = _numbers(table["value_sum"], np.float64)
        seconds = _numbers(table["interval_seconds"], np.float64)
        operations = _numbers(table["operations"], np.float64)
        medians, held = self.spacing.medians()
        return bool(
            (self.first >= period).all()
            and (self.last < period + DAY_NS).all()
            and (self.first <= self.last).all()
            and (self.quarter_points.sum(axis=1) == points).all()
            and (self.hour_points.sum(axis=1) == points).all()
            and (run_sums(self.quarter_sums, [0])[:, 0] == value_sum).all()
            and (self.spacing.totals() == points + self.invalid - 1).all()
            and held.all()
            and np.array_equal(seconds_of(medians), seconds, equal_nan=True)
            and np.array_equal(operations, _operations(value_sum, seconds), equal_nan=True)
        )

    def place(self, points: Points) -> np.ndarray | None:
        """The row of each index of ``points`` (new indexes get new rows); None when an
        index's points lie in two accounts, or in another than its row's."""
        account_of = np.full(len(points.ids), -1, np.int64)
        account_of[points.codes[::-1]] = points.account_codes[::-1]  # each index's first
        if (account_of[points.codes] != points.account_codes).any():
            return None
        row_of = {index_id: row for row, index_id in enumerate(self.ids)}
        rows = np.empty(len(points.ids), np.int64)
        for at, index_id in enumerate(points.ids):
            account = points.accounts[int(account_of[at])]
            row = row_of.get(index_id)
            if row is None:
                row = self._add(index_id, account)
            elif self.accounts[row] != account:
                return None
            rows[at] = row
        return rows

    def _add(self, index_id: str, account: str) -> int:
        """A row for an index with no point so far; return it."""
        self.ids.append(index_id)
        self.accounts.append(account)
        self.names.append(None)
        for name in ("quarter_sums", "quarter_points", "hour_sums", "hour_points"):
            matrix = getattr(self, name)
            setattr(self, name, np.vstack([matrix, np.zeros((1, matrix.shape[1]), matrix.dtype)]))
        self.invalid = np.append(self.invalid, 0)
        self.running = np.append(self.running, 0.0)
        self.seconds = np.append(self.seconds, np.nan)
        self.crossings.add_row()
        self.spacing.grow()
        self.judged = np.append(self.judged, np.iinfo(np.int64).max)
        self.gaps_known = np.append(self.gaps_known, True)
        self.longer = np.append(self.longer, 0)
        self.first = np.append(self.first, np.iinfo(np.int64).max)
        self.last = np.append(self.last, np.iinfo(np.int64).min)
        return len(self.ids) - 1

    def steps(self, rows: np.ndarray, froms: np.ndarray, tos: np.ndarray) -> None:
        """Note steps between consecutive points of ``rows``: gaps if longer than the
        extended day's threshold (see :meth:`table`)."""
        self.step_rows = np.concatenate([self.step_rows, rows])
        self.step_from = np.concatenate([self.step_from, froms])
        self.step_to = np.concatenate([self.step_to, tos])

    def cross(
        self,
        codes: np.ndarray,
        times: np.ndarray,
        clean: np.ndarray,
        limits: Mapping[str, Sequence[float]],
    ) -> None:
        """Add new points (rows ``codes``, each row's together and in time order) to the
        running values, and answer each index's ``limits`` from them."""
        start = self.running.copy()
        add_binned(self.running, codes, clean)  # one addition at a time, in time order
        before, self.seconds = self.seconds, self.medians()
        heads = np.flatnonzero(np.append(True, codes[1:] != codes[:-1]))
        ends = np.append(heads[1:], len(codes))
        points = {
            int(codes[low]): (times[low:high], clean[low:high])
            for low, high in zip(heads.tolist(), ends.tolist(), strict=True)
        }
        row_of = {index_id: row for row, index_id in enumerate(self.ids)}
        wanted = {row_of[i]: values for i, values in limits.items() if i in row_of}
        rows = sorted({*points, *wanted})  # new points: what was known may no longer hold
        running, seconds = (start, self.running), (before, self.seconds)
        self.crossings.update(rows, points, running, seconds, wanted)

    def medians(self) -> np.ndarray:
        """Each row's median spacing (seconds, NaN: none) from its spacings so far."""
        medians, held = self.spacing.medians()
        if not held.all():
            raise _Unknown
        return seconds_of(medians)

    def table(self, period: int, source: str) -> pa.Table:
        """The rows as a rollup named ``source``, ordered as :func:`rollups.rollup` orders
        them (by account, then index id)."""
        count = len(self.ids)
        order = np.asarray(
            sorted(range(count), key=lambda row: (self.accounts[row], self.ids[row])), np.int64
        )
        spacing = self.spacing.columns(order)
        seconds = self.seconds[order]  # cross() told them
        medians, _ = self.spacing.medians()
        allowed = thresholds(medians, medians == _NAT)
        # An old step judged short that is a gap now: only the points say when it was.
        rows, lengths = self.old_steps
        unplaced = (lengths > allowed[rows]) & (lengths <= self.judged[rows])
        self.gaps_known[rows[unplaced]] = False
        # Steps longer than those kept, judged short by a threshold that fell: the same.
        self.gaps_known[(self.longer > 0) & (allowed < self.judged)] = False
        place = np.empty(count, np.int64)
        place[order] = np.arange(count)
        value_sum = run_sums(self.quarter_sums, [0])[:, 0][order]
        listed = {
            "hourly_value_sum": self.hour_sums,
            "hourly_points": self.hour_points,
            "quarter_value_sum": self.quarter_sums,
            "quarter_points": self.quarter_points,
        }
        columns: dict[str, pa.Array] = {
            "account": text_columns.encoded(
                pa.array([self.accounts[i] for i in order], pa.string())
            ),
            "index_id": text_columns.encoded(pa.array([self.ids[i] for i in order], pa.string())),
            "name": text_columns.encoded(pa.array([self.names[i] for i in order], pa.string())),
            "period": pa.array(np.full(count, period, "datetime64[ns]"), TIMESTAMP),
            "operations": pa.array(_operations(value_sum, seconds), pa.float64()),
            "value_sum": pa.array(value_sum, pa.float64()),
            "points": pa.array(self.quarter_points.sum(axis=1)[order], pa.int64()),
            "invalid": pa.array(self.invalid[order], pa.int64()),
            "interval_seconds": pa.array(seconds, pa.float64(), from_pandas=True),
            "source": text_columns.encoded(pa.array([source] * count, pa.string())),
            "last_point": pa.array(self.last[order].view("datetime64[ns]"), TIMESTAMP),
            "first_point": pa.array(self.first[order].view("datetime64[ns]"), TIMESTAMP),
            "spacing_values": spacing[0],
            "spacing_counts": spacing[1],
            "spacings_below": spacing[2],
            "spacings_above": spacing[3],
            "digest": pa.nulls(count, pa.int64()),  # sealed below, once every figure is final
            "gaps": rollups.gap_lists(
                place[self.step_rows],
                self.step_from,
                self.step_to,
                allowed[order],
                self.gaps_known[order],
            ),
            "running_value": pa.array(self.running[order], pa.float64()),
        }
        columns["crossing_limits"], columns["crossing_times"] = self.crossings.arrays(order)
        for name, matrix in listed.items():
            size = matrix.shape[1]
            offsets = pa.array(np.arange(count + 1, dtype=np.int32) * size)
            kind = ROLLUP_SCHEMA.field(name).type.value_type
            flat = pa.array(matrix[order].reshape(-1), kind)
            columns[name] = pa.ListArray.from_arrays(offsets, flat)
        return seal(
            pa.Table.from_arrays([columns[f.name] for f in ROLLUP_SCHEMA], schema=ROLLUP_SCHEMA)
        )


def _operations(value_sum: np.ndarray, seconds: np.ndarray) -> np.ndarray:
    """A rollup's operations: the value sum times the interval (the default for a single
    point), as :func:`rollups.rollup` computes them."""
    result: np.ndarray = value_sum * np.where(np.isnan(seconds), DEFAULT_SECONDS, seconds)
    return result


def _matrix(column: pa.ChunkedArray, size: int) -> np.ndarray:
    """A list column of ``size`` figures a row as a writable [rows, size] array."""
    flat = pc.list_flatten(column.combine_chunks()).to_numpy(zero_copy_only=False)
    return np.array(flat, copy=True).reshape(-1, size)


def _texts(column: pa.ChunkedArray) -> list[Any]:
    """A text column's values (None for a null) as Python strings: decoded by Arrow first,
    as a dictionary's values one by one cost 30 times as much."""
    texts: list[Any] = column.cast(pa.string()).to_pylist()
    return texts


def _numbers(column: pa.ChunkedArray | pa.Array, dtype: type) -> np.ndarray:
    """A column (instants as epoch ns) as a writable NumPy array of ``dtype``."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_timestamp(column.type):
        column = column.cast(pa.int64())
    return np.array(column.to_numpy(zero_copy_only=False), dtype=dtype, copy=True)
