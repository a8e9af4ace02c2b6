"""A History as the last read left it: a refresh reads only what was written since.

:class:`SeenHistory` is a :class:`~searchkit.History` of the same store that keeps what
the forecast asked of it: the limits (while their files stay as listed), each closed day's
rollup sums (while the day's throughput files stay as they were) and the open day's rollup
rows (the newest day, the one a collector writes). Asked again, it lists the store and
reads only the files written since: the open day's new collect files, whose points it adds
to the day's rollup rows as the collector does (:func:`~searchkit.history.open_day.extend`:
the same figures to the last bit as rolling the day up from all its points). So a forecast
made on it is the one :func:`~searchkit.forecast_limits` makes on the store read afresh,
while a refresh reads a collect's new file and lists the rest.

What it cannot tell from what it kept it reads as the History does: a file of the open day
changed or gone (a compaction), new points at or before those summarised (another writer),
an index in two accounts, a new day; the points of a day without a current rollup.

A closed day read from its points (no current rollup then: written by a collector that kept
none, read while a compaction replaced its files) is asked again of the store once its
rollup files or its month's pack list otherwise (``refresh_rollups()``, the merge's rollup
landing): from then on its sums come from the summaries, not from every point each time.
Only while such a day is among those asked does a refresh list the rollups (one LIST on an
object store, beside the reads of that day's points it saves).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from searchkit.frames.counting import DAY_NS, clean_values, index_codes, invalid_values
from searchkit.history import open_day, reader, rollups
from searchkit.history.arguments import check_day
from searchkit.history.arrays import int64_values
from searchkit.history.checks import seal
from searchkit.history.crossings import Crossings, crossing_columns, daily_limits
from searchkit.history.layout import one_listing
from searchkit.history.usage_history import History

if TYPE_CHECKING:
    from searchkit.frames.zones import Instant, TimeZone
    from searchkit.history.rollups import DaySums, Detail

__all__ = ["SeenHistory"]

# (file name, size, modification time) of a day's throughput files, sorted.
Files = list[tuple[str, int, int]]
# What could answer a day besides its points: its rollup files (path, size, modification
# time) and its month's packs (path, size), as listed.
Summaries = tuple[tuple[tuple[str, int, int], ...], tuple[tuple[str, int], ...]]


@dataclass(frozen=True)
class _Closed:
    """A closed day's sums as read for its throughput files ``source``; None when they were
    read from its points, while the day's rollups and packs listed as ``summaries``."""

    source: str
    sums: DaySums | None
    summaries: Summaries | None


@dataclass(frozen=True)
class _OpenDay:
    """The open day's rollup rows (every column) summarising exactly ``files``."""

    day: str
    files: Files
    paths: frozenset[str]
    rows: pa.Table


class SeenHistory(History):
    """The store of ``history``, answering the forecast from what it read before and the
    files written since (see the module).

    Args:
        history: The History to read; its location shows in texts, its credentials masked.
    """

    def __init__(self, history: History) -> None:
        super().__init__(history.root, filesystem=history.filesystem)
        self._location = history.location
        self._limits: tuple[tuple[object, ...], pd.DataFrame] | None = None
        self._closed: dict[tuple[str, str], _Closed] = {}
        self._names: dict[str, str] | None = None
        self._open: _OpenDay | None = None

    def __repr__(self) -> str:
        return f"SeenHistory({self.location!r})"

    def limits(self, *, at: Instant | None = None) -> pd.DataFrame:
        """:meth:`History.limits`, read again only when the limits files changed."""
        if at is not None:
            return super().limits(at=at)
        listed = tuple(self._layout.entries("limits"))
        if self._limits is None or self._limits[0] != listed:
            self._limits = (listed, super().limits())
        return self._limits[1].copy()

    @one_listing
    def newest_time(self) -> pd.Timestamp | None:
        """:meth:`History.newest_time`, from the open day's rollup rows when they are
        current (extended with the files written since)."""
        newest = self._layout.newest_day("throughput")
        if newest is None:
            return None
        rows = self._open_rows(newest, self._day_files(newest, newest).get(newest, ([], [])))
        if rows is None or rows.num_rows == 0:
            return super().newest_time()
        return pd.Timestamp(pc.max(rows["last_point"]).value, unit="ns", tz="UTC")

    def throughput(
        self,
        *,
        start: Instant | None = None,
        end: Instant | None = None,
        names: Iterable[str] | str | None = None,
        tz: TimeZone = None,
        index_ids: Iterable[str] | str | None = None,
    ) -> pd.DataFrame:
        """:meth:`History.throughput`. The open day's points of indexes read whole (the
        forecast reads those past their limit for the instant they reached it, when the
        rollup does not know it) teach the kept rows those instants, as a rollup of the
        day's points holds them: the next forecast reads them no more."""
        frame = super().throughput(start=start, end=end, names=names, tz=tz, index_ids=index_ids)
        kept = self._open
        if kept is not None and names is None and index_ids is not None and len(frame):
            self._learn(kept, frame, start, end)
        return frame

    def _learn(self, kept: _OpenDay, frame: pd.DataFrame, start: object, end: object) -> None:
        """Add the crossings of the indexes of ``frame`` (their points of the open day from
        ``start`` to ``end``) to ``kept``'s rows, when they are every point the rows sum."""
        period = pd.Timestamp(kept.day, tz="UTC")
        if start is None or pd.Timestamp(start) != period:  # type: ignore[arg-type]
            return
        upto = period.value + DAY_NS if end is None else pd.Timestamp(end).value  # type: ignore[arg-type]
        codes, ids = index_codes(frame["index_id"])
        row_of = {index_id: row for row, index_id in enumerate(kept.rows["index_id"].to_pylist())}
        if any(str(index_id) not in row_of for index_id in ids):
            return
        rows = np.asarray([row_of[str(index_id)] for index_id in ids], np.int64)
        summed = kept.rows.take(pa.array(rows))
        counts = int64_values(summed["points"]) + int64_values(summed["invalid"])
        read = np.bincount(codes, minlength=len(rows))
        if (int64_values(summed["last_point"]) >= upto).any() or (read != counts).any():
            return  # not the points the rows sum (some left out, or a collect since)
        limits = daily_limits(self.limits())
        wanted = {at: limits[str(i)] for at, i in enumerate(ids) if str(i) in limits}
        values = frame["value"].to_numpy(dtype=np.float64, na_value=np.nan)
        nanos = np.asarray(pd.DatetimeIndex(frame["time"]).as_unit("ns").asi8, np.int64)
        seconds = summed["interval_seconds"].to_numpy(zero_copy_only=False).astype(np.float64)
        clean = clean_values(values, invalid_values(values))
        found = crossing_columns(np.asarray(codes, np.int64), nanos, clean, seconds, wanted)
        told = Crossings.of(kept.rows["crossing_limits"], kept.rows["crossing_times"])
        for at, pairs in enumerate(Crossings.of(*found).pairs):
            told.pairs[int(rows[at])] = pairs | told.pairs[int(rows[at])]
        table = kept.rows
        for name, column in zip(
            ("crossing_limits", "crossing_times"),
            told.arrays(np.arange(table.num_rows)),
            strict=True,
        ):
            table = table.set_column(table.schema.get_field_index(name), name, column)
        self._open = replace(kept, rows=seal(table))

    @one_listing
    def sums(self, first: str, last: str, *, detail: Detail = "day") -> dict[str, DaySums]:
        """:meth:`History.sums`: each closed day's as read before while its files stay as
        they were (and, for a day read from its points, while its rollups and packs list
        as they did), the open day's from its rollup rows extended with the files since."""
        first, last = check_day(first, "first"), check_day(last, "last")
        names = self._current_names()
        if names != self._names:  # a rename: the names the sums give changed
            self._closed.clear()
            self._names = names
        newest = self._layout.newest_day("throughput")
        out: dict[str, DaySums] = {}
        missing: dict[str, str] = {}
        from_points: list[str] = []
        for day, (files, paths) in self._day_files(first, last).items():
            source = rollups.signature(files)
            if day == newest:
                rows = self._open_rows(day, (files, paths))
                if rows is not None:
                    columns = rows.select(rollups.sums_columns(detail))
                    out |= rollups.table_sums(columns, {day: source}, names, detail=detail)
                continue
            kept = self._closed.get((day, detail))
            if kept is None or kept.source != source:
                missing[day] = source
            elif kept.sums is not None:
                out[day] = kept.sums
            else:
                from_points.append(day)
        if from_points:  # summaries written since they were read from their points?
            listed = self._summaries(from_points)
            for day in from_points:
                if listed[day] != self._closed[day, detail].summaries:
                    missing[day] = self._closed[day, detail].source
        if missing:
            # Listed before the read: a summary written after it shows as new next time.
            listed = self._summaries(list(missing))
            read = super().sums(min(missing), max(missing), detail=detail)
            for day, source in missing.items():
                found = read.get(day)
                self._closed[day, detail] = _Closed(
                    source, found, None if found is not None else listed[day]
                )
                if found is not None:
                    out[day] = found
        return dict(sorted(out.items()))

    def _summaries(self, days: list[str]) -> dict[str, Summaries]:
        """What could answer each of ``days`` besides its points, as listed now: its rollup
        files and its month's packs (on an object store the rollups' one listing of the
        call, which the read of them shares)."""
        files: dict[str, list[tuple[str, int, int]]] = {day: [] for day in days}
        for day, path, size, mtime in self._layout.entries("rollups", min(days), max(days)):
            if day in files:
                files[day].append((path, size, mtime))
        months: dict[str, list[tuple[str, int]]] = {day[:7]: [] for day in days}
        for month, path, size in self._layout.packs():
            if month in months:
                months[month].append((path, size))
        return {day: (tuple(sorted(files[day])), tuple(sorted(months[day[:7]]))) for day in days}

    def _day_files(self, first: str, last: str) -> dict[str, tuple[Files, list[str]]]:
        """Each day's throughput files as listed now: (name, size, mtime) and paths."""
        found: dict[str, tuple[Files, list[str]]] = {}
        for day, path, size, mtime in sorted(self._layout.entries("throughput", first, last)):
            files, paths = found.setdefault(day, ([], []))
            files.append((path.rpartition("/")[2], size, mtime))
            paths.append(path)
        return {day: (sorted(files), paths) for day, (files, paths) in found.items()}

    def _open_rows(self, day: str, listed: tuple[Files, list[str]]) -> pa.Table | None:
        """The open day's rollup rows for its files as listed: those kept, extended with the
        points of the files written since; else the stored rollup when current; else None
        (the day is read from its points)."""
        files, paths = listed
        kept = self._open
        if kept is not None and kept.day == day:
            if kept.files == files:
                return kept.rows
            if set(kept.files) <= set(files):
                rows = self._extended(kept, day, files, frozenset(paths) - kept.paths)
                if rows is not None:
                    self._open = _OpenDay(day, files, frozenset(paths), rows)
                    return rows
        stored = None
        if files:
            stored = rollups.current_rows(self._layout, day, rollups.signature(files))
        self._open = None if stored is None else _OpenDay(day, files, frozenset(paths), stored)
        return stored

    def _extended(
        self, kept: _OpenDay, day: str, files: Files, new: frozenset[str]
    ) -> pa.Table | None:
        """``kept``'s rows with the points of the ``new`` files added, as the collector
        extends the day's rollup (with the crossings of the limits it keeps); None when
        the points cannot be added so (see open_day.extend), or a new file was replaced
        (merged into one not listed) before it was read: its points are not all there."""
        read: list[str] = []
        points = reader.read(
            self._layout, "throughput", days=(day, day), paths=new, read_paths=read
        )
        if points.num_rows == 0 or set(read) != new:
            return None
        limits = daily_limits(self.limits())
        return open_day.extend(kept.rows, points, day, rollups.signature(files), limits=limits)
