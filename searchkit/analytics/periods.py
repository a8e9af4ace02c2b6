"""Usage per index and period, one UTC day at a time, from a rollup's sums or the points.

Every source is counted the same way (:mod:`searchkit.frames.counting`): a UTC day's points
are summed by hour where each of the day's hours lies in one period (a zone a whole number
of hours from UTC that day: New York, London; periods of hours or longer), else by
quarter-hour (Kolkata, Chatham, ``freq="30min"``), each bin in time order, and a period of
the day is the sum of its bins, in order (:func:`~searchkit.frames.counting.run_sums`); a
day that lies whole in one period is the sum of its quarters (the rollup's ``value_sum``);
a period spanning days adds its days. :func:`plan` decides which, per day, for every
source. A rollup keeps each day's hour and quarter sums, so a day its rollup answers and
the same day read from its points give the same figures to the last bit, in every zone and
for every period whose boundaries fall on quarter-hours (every real zone's hours, days,
weeks and months). A day with a boundary inside a quarter (``freq="7min"``, a zone offset
by minutes) is counted from its points, each labelled by its period. (By hour a year of
1,000 indexes is a quarter of the figures to read and add up.)
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from searchkit.analytics.days import PointsReader, read_days
from searchkit.frames.counting import (
    DAY_NS,
    HOURS,
    QUARTERS,
    bin_slots,
    binned,
    clean_values,
    index_codes,
    index_intervals,
    interval_seconds,
    invalid_values,
    median_spacing,
    period_starts,
    quarter_periods,
    run_sums,
    unit_scales,
)

if TYPE_CHECKING:
    from searchkit.history.dedupe import Points
    from searchkit.history.rollups import DaySums, Detail
    from searchkit.history.usage_history import History

__all__ = [
    "DayPlan",
    "Tally",
    "day_sums",
    "frame_tally",
    "history_tally",
    "plan",
    "runs",
]


#: Quarter-hours in an hour (a day's 96 quarters are its 24 hours' quarters, in order).
QUARTERS_PER_HOUR = QUARTERS // HOURS


@dataclass(frozen=True)
class DayPlan:
    """How each UTC day is cut into periods: the period of each quarter-hour, which days
    a rollup answers (every quarter in one period) and by what (``"day"``: the whole day
    is one period; ``"hour"``: every hour lies in one period, its hours' sums;
    ``"quarter"``: its quarters' sums). A day's points are summed by the same bins."""

    days: np.ndarray  # [D] midnights, epoch ns
    labels: np.ndarray  # [D, 96] period start of each quarter
    whole: np.ndarray  # [D] every quarter lies in one period
    single: np.ndarray  # [D] the whole day lies in one period
    hourly: np.ndarray  # [D] every hour lies in one period

    def detail(self, at: int) -> Detail | None:
        """What a rollup answers day ``at`` by, or None: the day is read from its points."""
        if not self.whole[at]:
            return None
        if self.single[at]:
            return "day"
        return "hour" if self.hourly[at] else "quarter"

    def bins(self, at: int) -> np.ndarray | None:
        """The period start of each bin day ``at`` is summed by: its 24 hours' by
        ``"hour"``, else its 96 quarters' (a whole day's quarters add up to its rollup's
        ``value_sum``); None: a boundary falls inside a quarter (each point is labelled
        by its period)."""
        if not self.whole[at]:
            return None
        quarters: np.ndarray = self.labels[at]
        return quarters[::QUARTERS_PER_HOUR] if self.detail(at) == "hour" else quarters


def plan(days: np.ndarray, zone: dt.tzinfo, freq: str) -> DayPlan:
    """The :class:`DayPlan` of UTC days (midnights, epoch ns) for periods ``freq`` in
    ``zone``: the one place that decides whether a rollup can answer a day's periods."""
    labels, whole = quarter_periods(days, zone, freq)
    single = whole & (labels == labels[:, :1]).all(axis=1)
    hours = labels.reshape(len(labels), HOURS, QUARTERS_PER_HOUR)
    hourly = whole & (hours == hours[:, :, :1]).all(axis=(1, 2))
    return DayPlan(np.asarray(days, np.int64), labels, whole, single, hourly)


@dataclass
class Tally:
    """Usage rows (index, period) gathered day by day, with what each day says of its
    indexes (names, sampling intervals), in day order."""

    ids: dict[str, int] = field(default_factory=dict)
    parts: list[tuple[np.ndarray, ...]] = field(default_factory=list)
    names: dict[str, object] = field(default_factory=dict)  # newest day's
    steps: dict[str, float] = field(default_factory=dict)  # newest day with two points
    # The last ids coded and their codes: a history's days mostly list the same indexes.
    _coded: tuple[list[str], np.ndarray] = field(default=([], np.zeros(0, np.int64)))
    # The last names and intervals noted (see _note), by the ids they were noted for.
    _noted: tuple[list[str], list[object], np.ndarray] = field(
        default=([], [], np.zeros(0, np.float64))
    )

    def code(self, ids: list[str]) -> np.ndarray:
        if ids == self._coded[0]:
            return self._coded[1]
        for index_id in ids:
            self.ids.setdefault(index_id, len(self.ids))
        codes = np.asarray([self.ids[i] for i in ids], np.int64)
        self._coded = (ids, codes)
        return codes

    def add(
        self,
        ids: list[str],
        periods: np.ndarray,
        sums: tuple[np.ndarray, np.ndarray, np.ndarray],
        scales: np.ndarray,
    ) -> None:
        """Add a day's sums [indexes of ``ids``, ``periods``] (values, valid, invalid
        points), the values times each index's ``scales``."""
        values, valid, invalid = sums
        rows, cols = np.nonzero((valid > 0) | (invalid > 0))
        codes = self.code(ids)[rows]
        operations = values[rows, cols] * scales[rows]
        self.parts.append(
            (codes, periods[cols], operations, valid[rows, cols], invalid[rows, cols])
        )

    def per_index(self, values: Mapping[str, object], default: object) -> np.ndarray:
        """``values`` (by index id) for each code, in code order (``default`` if absent):
        what :meth:`frame`'s ``code`` column indexes."""
        return np.asarray([values.get(i, default) for i in self.ids], dtype=object)

    def frame(self, zone: dt.tzinfo) -> pd.DataFrame:
        """One row per (index_id, period), days added up in day order (pandas' sum), with
        each index's ``code`` (see :meth:`per_index`)."""
        if not self.parts:
            return pd.DataFrame(
                columns=["index_id", "period", "operations", "points", "invalid", "code"]
            )
        codes, periods, operations, valid, invalid = (
            np.concatenate(column) for column in zip(*self.parts, strict=True)
        )
        # One key per (code, period): pandas groups one integer column much faster than
        # two, with the same groups in the same order and the same sums.
        period_codes, distinct = pd.factorize(periods)
        width = max(len(distinct), 1)
        rows = pd.DataFrame(
            {"key": codes * width + period_codes, "operations": operations,
             "points": valid, "invalid": invalid}
        )  # fmt: skip
        out = rows.groupby("key", sort=False).sum()
        key = out.index.to_numpy(np.int64)
        code = key // width
        when = pd.DatetimeIndex(np.asarray(distinct, np.int64)[key % width].view("M8[ns]"))
        return pd.DataFrame(
            {
                "index_id": pd.array(list(self.ids), dtype="str").take(code),
                "period": when.tz_localize("UTC").tz_convert(zone),
                "operations": out["operations"].to_numpy(np.float64),
                "points": out["points"].to_numpy(np.int64),
                "invalid": out["invalid"].to_numpy(np.int64),
                "code": code,
            }
        )


def day_sums(
    codes: np.ndarray,
    nanos: np.ndarray,
    values: np.ndarray,
    count: int,
    day: int,
    labels: np.ndarray | None,
    zone: dt.tzinfo,
    freq: str,
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """A UTC day's points (``codes`` of ``count`` indexes, in time order per index) summed
    per index and period: the periods, and the values, valid and invalid points [count,
    periods]. ``labels``: the period of each bin the day is summed by (24 hours or 96
    quarters: :meth:`DayPlan.bins`), or None when a boundary falls inside a quarter (then
    each point is labelled by its period)."""
    invalid = invalid_values(values)
    clean = clean_values(values, invalid)
    if labels is not None:
        size = len(labels)
        slot = bin_slots(nanos, day, DAY_NS // size)
        flat = codes * size + slot
        sums = binned(flat, clean, invalid, count * size)
        values, valid, invalid = (part.reshape(count, size) for part in sums)
        return runs((values, valid, invalid), labels)
    periods, at = np.unique(period_starts(nanos, zone, freq), return_inverse=True)
    size = len(periods)
    sums = binned(codes * size + at, clean, invalid, count * size)
    return periods, tuple(s.reshape(count, size) for s in sums)  # type: ignore[return-value]


def runs(
    bins: tuple[np.ndarray, np.ndarray, np.ndarray | None], labels: np.ndarray
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Bin sums [indexes, bins] (values, valid, invalid points; None: none invalid) as
    sums per period (``labels``: each bin's): the periods and the sums [indexes, periods],
    each period's bins added left to right."""
    starts = np.flatnonzero(np.append(True, labels[1:] != labels[:-1]))
    values, valid, invalid = bins
    counted = np.add.reduceat(valid, starts, axis=1)
    summed = (
        run_sums(values, starts),
        counted,
        np.zeros_like(counted) if invalid is None else np.add.reduceat(invalid, starts, axis=1),
    )
    return labels[starts], summed


#: Days whose quarter (or hour) sums :func:`history_tally` reads at once: memory stays that
#: of a month's quarters (about 25 MB for 1,000 indexes), whatever the history's length.
BATCH_DAYS = 32


def history_tally(
    source: History, zone: dt.tzinfo, freq: str, value_unit: str, *, reader: PointsReader
) -> Tally:
    """Usage of a History per index and period (see the module), one UTC day at a time:
    the days a current rollup answers from its sums, the others from their points; the
    rollups are read :data:`BATCH_DAYS` days at a time."""
    tally = Tally()
    stored = source.days("throughput")
    if not stored:
        return tally
    days = np.asarray([pd.Timestamp(d, tz="UTC").value for d in stored], np.int64)
    cut = plan(days, zone, freq)
    details = [cut.detail(at) for at in range(len(days))]
    # Whole days are a few figures a row: read at once; hours or quarters a month at a time.
    size = BATCH_DAYS if {"hour", "quarter"} & set(details) else len(stored)
    for low in range(0, len(stored), size):
        batch = range(low, min(low + size, len(stored)))
        first, last = stored[batch[0]], stored[batch[-1]]
        answered: dict[str, dict[str, DaySums]] = {
            detail: source.sums(first, last, detail=detail)
            for detail in ("day", "hour", "quarter")
            if detail in details[batch.start : batch.stop]
        }
        spans = []
        for at in batch:
            start = pd.Timestamp(days[at], unit="ns", tz="UTC")
            detail = details[at]
            sums = None if detail is None else answered[detail].get(stored[at])
            if detail == "hour" and sums is not None and sums.day_invalid.any():
                sums = None  # the hours keep no invalid counts: read where periods split it
            spans.append((start, start + pd.Timedelta(DAY_NS, "ns"), sums))
        for at, day in zip(batch, read_days(reader, spans), strict=True):
            labels = cut.bins(at)
            if day.sums is not None:
                assert labels is not None  # a rollup answers only a day of whole bins
                _add_sums(tally, day.sums, labels, value_unit)
            elif day.points is not None and len(day.points.codes):
                _add_points(tally, day.points, int(days[at]), labels, zone, freq, value_unit)
    return tally


def _add_sums(tally: Tally, sums: DaySums, labels: np.ndarray, value_unit: str) -> None:
    if sums.value_sums.shape[1] == 1:  # the whole day, one period
        periods = labels[:1]
        assert sums.invalid is not None
        bins = (sums.value_sums, sums.points, sums.invalid)
    else:  # by hour or quarter (``labels``' bins): a day without invalid points
        periods, bins = runs((sums.value_sums, sums.points, None), labels)
    _note(tally, sums.ids, sums.names, sums.seconds)
    tally.add(sums.ids, periods, bins, unit_scales(value_unit, interval_seconds(sums.seconds)))


def _add_points(
    tally: Tally,
    points: Points,
    day: int,
    labels: np.ndarray | None,
    zone: dt.tzinfo,
    freq: str,
    value_unit: str,
) -> None:
    count = len(points.ids)
    codes = np.asarray(points.codes, np.int64)
    seconds = median_spacing(codes, points.times, pd.Index(points.ids))
    steps = seconds.dt.total_seconds().to_numpy(np.float64)
    periods, sums = day_sums(codes, points.times, points.values, count, day, labels, zone, freq)
    _note(tally, points.ids, points.names, steps)
    tally.add(points.ids, periods, sums, unit_scales(value_unit, interval_seconds(steps)))


def _note(tally: Tally, ids: list[str], names: list[object], seconds: np.ndarray) -> None:
    """Keep each index's name of the newest day, and its interval of the newest day with
    two points."""
    last_ids, last_names, last_seconds = tally._noted
    if ids == last_ids and names == last_names and np.array_equal(seconds, last_seconds, True):
        return  # the same as the day before (most days of a history): nothing changes
    tally._noted = (ids, names, seconds)
    tally.names.update(zip(ids, names, strict=True))
    known = ~np.isnan(seconds)
    if known.all():
        tally.steps.update(zip(ids, seconds.tolist(), strict=True))
    else:
        tally.steps.update(
            zip(np.asarray(ids, dtype=object)[known].tolist(), seconds[known].tolist(), strict=True)
        )


def frame_tally(tp: pd.DataFrame, zone: dt.tzinfo, freq: str, value_unit: str) -> Tally:
    """Usage of a throughput frame per index and period, counted as a History's (see the
    module) with each index's interval over the whole frame."""
    tally = Tally()
    if tp.empty:
        return tally
    codes, ids = index_codes(tp["index_id"])
    codes = np.asarray(codes, np.int64)
    intervals = index_intervals(tp).reindex(pd.Index(ids, name="index_id"))
    scales = unit_scales(value_unit, interval_seconds(intervals))
    nanos = np.asarray(pd.DatetimeIndex(tp["time"]).as_unit("ns").asi8, np.int64)
    values = tp["value"].to_numpy(dtype=np.float64, na_value=np.nan)
    day_of = nanos - nanos % DAY_NS
    days = np.sort(pd.unique(day_of))  # numpy's unique() hashes slowly (numpy 2.4)
    cut = plan(days, zone, freq)
    for at, day in enumerate(days.tolist()):
        keep = day_of == day
        periods, sums = day_sums(
            codes[keep], nanos[keep], values[keep], len(ids), day, cut.bins(at), zone, freq
        )
        tally.add(ids, periods, sums, scales)
    # The name at each index's last point (a History already labels renamed indexes so).
    name_codes, name_labels = index_codes(tp["name"])
    last = np.zeros(len(ids), dtype=np.int64)
    last[codes] = np.arange(len(codes))  # later rows overwrite earlier ones
    # Code -1 (no name) picks the None appended at the end.
    names = np.asarray([*name_labels, None], dtype=object)[name_codes[last]]
    tally.names.update(zip(ids, names.tolist(), strict=True))
    steps = intervals.dt.total_seconds().to_numpy(np.float64)
    _note(tally, ids, names.tolist(), steps)
    return tally
