"""Points to operations per (index, UTC day, hour): the forecaster's input.

A throughput frame is binned at once; a History one day at a time, each day from its
rollup's hours where it has current ones (:meth:`~searchkit.History.hourly`: the same
bins, to the last bit, without reading its points) and from its points otherwise, the
next days read while one is binned.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from searchkit.analytics.days import PointsReader, answers_before, read_days
from searchkit.frames.counting import (
    DAY_NS,
    HOUR_NS,
    HOURS,
    bin_slots,
    binned,
    check_value_unit,
    clean_values,
    index_codes,
    index_intervals,
    interval_seconds,
    invalid_values,
    median_spacing,
    unit_scales,
)

if TYPE_CHECKING:
    from searchkit.history.dedupe import Points
    from searchkit.history.rollups import DaySums
    from searchkit.history.usage_history import History

__all__ = [
    "DAY",
    "NO_TIME",
    "Bins",
    "bins_from_frame",
    "bins_from_history",
    "last_day_points",
]

DAY = pd.Timedelta(days=1)
NO_TIME = np.iinfo(np.int64).min


@dataclass
class Bins:
    """Operations and coverage per index, UTC day and hour, and what the points say."""

    ids: list[str]
    names: dict[str, Any]
    first_day: pd.Timestamp
    ops: np.ndarray  # [I, D, 24] operations
    cov: np.ndarray  # [I, D, 24] share of the hour the points cover (0..1)
    step: np.ndarray  # [I] sampling interval, seconds
    newest: np.ndarray  # [I] newest point's time (ns), NO_TIME where none
    future: np.ndarray  # [I] points left out for being at or after the cut
    last_points: tuple[np.ndarray, np.ndarray, np.ndarray]  # rows, ns, ops of the last day
    # [I] operations a unit of value stands for on the last day (NaN: no point that day),
    # and whether the last day came from its rollup (then ``last_points`` holds none of
    # its points: :func:`last_day_points` reads those of the indexes that need them)
    last_scales: np.ndarray | None = None
    last_from_sums: bool = False
    # The last day's rollup's known crossings: rows, limits, the point's time (ns;
    # crossings.NOT_REACHED: none), and the operations a unit stood for when told
    last_crossings: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
    # Rows whose crossing (hours after midnight, NaN: not reached) the rollup told
    known_crossings: dict[int, float] = field(default_factory=dict)
    # [points of last_points] their values as summed (invalid ones as 0)
    last_values: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def days(self) -> int:
        return int(self.ops.shape[1])


def _points(tp: pd.DataFrame) -> tuple[list[str], Any, Any, Any, Any]:
    """Index ids, codes, epoch ns, values and each index's step (s) of a frame."""
    codes, ids = index_codes(tp["index_id"])
    seconds = interval_seconds(index_intervals(tp).reindex(pd.Index(ids, name="index_id")))
    times = pd.DatetimeIndex(tp["time"].array).tz_convert("UTC").as_unit("ns").asi8
    values = tp["value"].to_numpy(dtype=np.float64, na_value=np.nan)
    return ids, np.asarray(codes, np.int64), np.asarray(times, np.int64), values, seconds


def _names(tp: pd.DataFrame) -> dict[str, Any]:
    last = tp.drop_duplicates("index_id", keep="last")
    return dict(zip(last["index_id"].astype(str), last["name"], strict=True))


class _Accumulator:
    """Bins built from parts (a History's days), each index mapped to one row.

    Each part is binned as it comes (hours x the indexes known so far): an hour's values
    are summed in time order (invalid and missing ones as 0), then times the operations a
    unit stands for at the part's sampling interval, so a day binned from its points and
    from its rollup's hours (:meth:`add_hours`) are the same to the last bit. Only the
    points of the last day are kept, for :attr:`Bins.last_points`.
    """

    def __init__(
        self, first_day: pd.Timestamp, days: int, cut: int | None, value_unit: str
    ) -> None:
        self.first, self.days, self.cut, self.unit = first_day, days, cut, value_unit
        check_value_unit(value_unit)  # a unit it does not know is refused at once
        self.ids: list[str] = []
        self.row: dict[str, int] = {}
        self.names: dict[str, Any] = {}
        self.steps: dict[str, float] = {}
        # (first hour since first_day, operations [hours, indexes], points [hours, indexes])
        self.blocks: list[tuple[int, np.ndarray, np.ndarray]] = []
        self.newest: list[np.ndarray] = []  # per part and index known then
        self.future: list[np.ndarray] = []
        self.last: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self.last_scales: dict[str, float] = {}  # per index, of the last day's part
        self.last_from_sums = False
        self.crossed: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

    def add(self, tp: pd.DataFrame) -> None:
        """Add a throughput frame's points."""
        if not tp.empty:
            self._add(*_points(tp), _names(tp))

    def add_points(self, points: Points) -> None:
        """Add a History's :class:`~searchkit.history.dedupe.Points`."""
        if len(points.codes):
            labels = pd.Index(points.ids, name="index_id")
            seconds = interval_seconds(median_spacing(points.codes, points.times, labels))
            names = dict(zip(points.ids, points.names, strict=True))
            codes = np.asarray(points.codes, np.int64)
            self._add(points.ids, codes, points.times, points.values, seconds, names)

    def add_hours(self, day: int, hours: DaySums) -> None:
        """Add day ``day`` (since the first) from a History's hourly
        :class:`~searchkit.history.rollups.DaySums`: its points' bins, without them."""
        seconds = interval_seconds(hours.seconds)
        names = dict(zip(hours.ids, hours.names, strict=True))
        row_of = self._register(hours.ids, seconds, names)
        if day == self.days - 1:  # the last day: its points are not read
            self.last_from_sums = True
            scales = unit_scales(self.unit, seconds)
            self.last_scales.update(zip(hours.ids, scales.tolist(), strict=True))
            if hours.crossings is not None:
                rows, limits, times = hours.crossings
                self.crossed = (row_of[rows], limits, times, seconds[rows])
        count = len(self.ids)
        summed = np.zeros((HOURS, count))
        summed[:, row_of] = hours.value_sums.T
        points = np.zeros((HOURS, count), np.int64)
        points[:, row_of] = hours.points.T
        self._block(day * HOURS, summed, points, row_of, seconds)
        newest = np.full(count, NO_TIME, np.int64)
        newest[row_of] = hours.last_point
        self.newest.append(newest)

    def _register(self, ids: list[str], seconds: np.ndarray, names: dict[str, Any]) -> Any:
        """Give each new index a row; return the rows of ``ids``."""
        for index_id, step in zip(ids, seconds, strict=True):
            if index_id not in self.row:
                self.row[index_id] = len(self.ids)
                self.ids.append(index_id)
            self.steps[index_id] = float(step)
        self.names.update(names)
        return np.asarray([self.row[i] for i in ids], np.int64)

    def _block(
        self, low: int, summed: np.ndarray, points: np.ndarray, row_of: Any, seconds: Any
    ) -> None:
        """Keep hours ``low``.. of values summed per hour [hours, indexes], as operations."""
        scale = np.zeros(summed.shape[1])
        scale[row_of] = unit_scales(self.unit, seconds)
        self.blocks.append((low, summed * scale, points))

    def _add(
        self,
        ids: list[str],
        codes: np.ndarray,
        times: np.ndarray,
        values: np.ndarray,
        seconds: np.ndarray,
        names: dict[str, Any],
    ) -> None:
        row_of = self._register(ids, seconds, names)
        same = np.array_equal(row_of, np.arange(len(ids)))
        rows = codes if same else row_of[codes]
        invalid = invalid_values(values)  # counted apart, as usage_frame counts them
        clean = clean_values(values, invalid)
        first, last = int(times.min()), int(times.max())
        scales = np.zeros(len(self.ids))
        scales[row_of] = unit_scales(self.unit, seconds)
        self._keep_last_day(rows, times, clean, scales, first, last)
        count = len(self.ids)
        if self.cut is not None and last >= self.cut:
            late = times >= self.cut
            if late.any():
                self.future.append(np.bincount(rows[late], minlength=count))
                rows, times, clean = rows[~late], times[~late], clean[~late]
                invalid = invalid[~late]
        if not len(rows):
            return
        # The newest of each run of one index's points, then of the runs.
        heads = np.append(0, np.flatnonzero(rows[1:] != rows[:-1]) + 1)
        newest = np.full(count, NO_TIME, np.int64)
        np.maximum.at(newest, rows[heads], np.maximum.reduceat(times, heads))
        self.newest.append(newest)
        hours = bin_slots(times, self.first.value, HOUR_NS)  # since the first day: day, hour
        if hours.min() < 0 or hours.max() >= self.days * HOURS:
            keep = (hours >= 0) & (hours < self.days * HOURS)
            hours, rows, clean, invalid = hours[keep], rows[keep], clean[keep], invalid[keep]
        if len(hours):
            low = int(hours.min())
            flat = (hours - low) * count + rows
            size = (int(hours.max()) - low + 1) * count
            summed, points, _ = binned(flat, clean, invalid, size)
            self._block(low, summed.reshape(-1, count), points.reshape(-1, count), row_of, seconds)

    def _keep_last_day(
        self,
        rows: np.ndarray,
        times: np.ndarray,
        clean: np.ndarray,
        scales: np.ndarray,
        first: int,
        last: int,
    ) -> None:
        """Keep the points of the last day (before the cut) and the operations of each;
        ``first``/``last``: the times' range."""
        begin = self.first.value + (self.days - 1) * DAY_NS
        end = begin + DAY_NS if self.cut is None else min(begin + DAY_NS, self.cut)
        if last < begin or first >= end:
            return
        keep = (times >= begin) & (times < end)
        if keep.any():
            kept = rows[keep]
            self.last.append((kept, times[keep], clean[keep] * scales[kept], clean[keep]))
            for row in np.unique(rows[keep]).tolist():
                self.last_scales[self.ids[row]] = float(scales[row])

    def bins(self) -> Bins:
        count = len(self.ids)
        # Laid out [index, hour] from the start: the same additions as [hour, index] then a
        # transposed copy, without the copy of two arrays of every index's 42 days.
        by_hour = np.zeros((count, self.days * HOURS)), np.zeros((count, self.days * HOURS))
        for low, summed, counted in self.blocks:
            hours, known = summed.shape
            by_hour[0][:known, low : low + hours] += summed.T
            by_hour[1][:known, low : low + hours] += counted.T
        ops, points = (part.reshape(count, self.days, HOURS) for part in by_hour)
        newest = np.full(count, NO_TIME, np.int64)
        for part in self.newest:
            np.maximum(newest[: len(part)], part, out=newest[: len(part)])
        future = np.zeros(count, np.int64)
        for part in self.future:
            future[: len(part)] += part
        seconds = np.asarray([self.steps[i] for i in self.ids], np.float64)
        cov = np.minimum(points * seconds[:, None, None] / 3600.0, 1.0)
        last, values = self._last_day()
        last_scales = np.asarray([self.last_scales.get(i, np.nan) for i in self.ids], np.float64)
        return Bins(
            self.ids,
            self.names,
            self.first,
            ops,
            cov,
            seconds,
            newest,
            future,
            last,
            last_scales,
            self.last_from_sums,
            self.crossed,
            last_values=values,
        )

    def _last_day(self) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
        """The points of the last day (before the cut), sorted by index then time: rows,
        times and operations, and their values as summed."""
        if not self.last:
            return (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)), np.zeros(0)
        rows, times, ops, values = (np.concatenate(c) for c in zip(*self.last, strict=True))
        step = rows[1:] > rows[:-1]
        if not np.all(step | ((rows[1:] == rows[:-1]) & (times[1:] >= times[:-1]))):
            order = np.lexsort((times, rows))  # else in order already (a stable sort keeps it)
            rows, times, ops, values = rows[order], times[order], ops[order], values[order]
        return (rows, times, ops), values


def bins_from_frame(
    tp: pd.DataFrame,
    value_unit: str,
    first_day: pd.Timestamp | None = None,
    days: int | None = None,
    cut: int | None = None,
) -> Bins:
    """Bin a throughput frame (days from its first point's by default); points at or
    after ``cut`` (epoch ns) are left out and counted in ``Bins.future``."""
    if first_day is None or days is None:
        if tp.empty:
            first_day, days = pd.Timestamp(0, tz="UTC"), 0
        else:
            times = pd.DatetimeIndex(tp["time"].array).tz_convert("UTC")
            first_day = times.min().normalize()
            days = (times.max().normalize() - first_day).days + 1
    acc = _Accumulator(first_day, days, cut, value_unit)
    acc.add(tp)
    return acc.bins()


def bins_from_history(
    source: History,
    value_unit: str,
    first_day: pd.Timestamp | None = None,
    days: int | None = None,
    cut: int | None = None,
    beyond: bool = False,
    *,
    reader: PointsReader | None = None,
    last_points: bool = True,
) -> Bins:
    """Bin a History one day at a time, so memory stays that of a day's points.

    A day that ends before the cut, other than the last, is binned from its current
    rollup's hours where it has them (:meth:`~searchkit.History.sums`): the same bins,
    without its points. So is the last day (the open day, whose rollup each collect
    round extends) without ``last_points``, when its rollup is current and holds no
    point at or after the cut: then :attr:`Bins.last_points` holds none of its points.
    The other days (a day whose rollup is stale) are read, with ``reader`` when given (it
    keeps what it read for the next call).
    """
    stored = source.days("throughput")
    if first_day is None or days is None:
        if not stored:
            return bins_from_frame(pd.DataFrame(), value_unit)
        first_day = pd.Timestamp(stored[0], tz="UTC")
        days = (pd.Timestamp(stored[-1], tz="UTC") - first_day).days + 1
    acc = _Accumulator(first_day, days, cut, value_unit)
    reader = reader or PointsReader(source)
    # Whole days before the cut, not the last: their rollups' hours where current.
    last = first_day + (days - 1) * DAY
    whole = last if cut is None else min(last, pd.Timestamp(cut, tz="UTC").floor("D"))
    end = whole - DAY if last_points else last
    hours = reader.sums(f"{first_day:%Y-%m-%d}", f"{end:%Y-%m-%d}") if end >= first_day else {}
    open_day = None if last_points else hours.get(f"{last:%Y-%m-%d}")
    if not answers_before(open_day, cut):
        open_day = None  # points at or after the cut: the day is read, and they left out
    held = set(stored)
    spans: list[tuple[pd.Timestamp, pd.Timestamp | None, DaySums | None]] = [
        (
            start,
            start + DAY,
            hours.get(f"{start:%Y-%m-%d}")
            if start < whole
            else (open_day if start == last else None),
        )
        for start in (first_day + offset * DAY for offset in range(days))
        if f"{start:%Y-%m-%d}" in held  # a day not stored has no points to read
    ]
    if beyond:  # points dated after the last day, only to count them
        spans.append((first_day + days * DAY, None, None))
    for day in read_days(reader, spans):
        if day.sums is not None:
            acc.add_hours((day.start - first_day).days, day.sums)
        elif day.points is not None:
            acc.add_points(day.points)
    return acc.bins()


def last_day_points(source: History, bins: Bins, rows: np.ndarray, cut: int | None) -> None:
    """Read the last day's points (before ``cut``) of the indexes at ``rows`` of ``bins``
    whose last day came from its rollup, into :attr:`Bins.last_points`, as binning its
    points would have kept them."""
    if not bins.last_from_sums or not len(rows):
        return
    start = bins.first_day + (bins.days - 1) * DAY
    end = start + DAY if cut is None else min(start + DAY, pd.Timestamp(cut, tz="UTC"))
    ids = [bins.ids[row] for row in rows.tolist()]
    frame = source.throughput(start=start, end=end, index_ids=ids)
    if frame.empty:
        return
    row_of = {index_id: row for row, index_id in enumerate(bins.ids)}
    codes, labels = index_codes(frame["index_id"])
    times = np.asarray(pd.DatetimeIndex(frame["time"]).as_unit("ns").asi8, np.int64)
    values = frame["value"].to_numpy(dtype=np.float64, na_value=np.nan)
    point_rows = np.asarray([row_of[label] for label in labels], np.int64)[codes]
    clean = clean_values(values, invalid_values(values))
    order = np.lexsort((times, point_rows))
    point_rows, times, clean = point_rows[order], times[order], clean[order]
    assert bins.last_scales is not None
    bins.last_points = (point_rows, times, clean * bins.last_scales[point_rows])
    bins.last_values = clean
