"""Compaction: a day's files merged into one, its rollup recomputed, one compactor at a time.

The day a collect round closes (the round across midnight brings its last points) is
merged after the round returns, on a thread (:func:`merge_later`): the merge reads and
writes the whole day (about 0.5 s of CPU for 1.44M points, as long as a round's other
work), so the round costs what the others do, and the merge runs while the collector waits
for its next round. The day's rollup is current already (each round extends it: see
:mod:`~searchkit.history.open_day`), so readers answer it from the rollup meanwhile; they
are safe beside a merge as beside any compactor (the merged file is written whole before
the files it replaces are deleted). The next round, :meth:`~searchkit.History.compact` and
:meth:`~searchkit.History.refresh_rollups` first wait for it (:func:`settle`), and so does
the interpreter before it exits (the thread is not a daemon).
"""

from __future__ import annotations

import collections
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs

from searchkit.errors import HistoryError
from searchkit.history import dedupe, open_day, pack_writer, reader, rollups
from searchkit.history.layout import STALE, Layout, file_seconds

__all__ = [
    "CLOSED_DAYS",
    "Merging",
    "after_collect",
    "compact_all",
    "compact_day",
    "current_sources",
    "merge_later",
    "settle",
    "settle_all",
]

#: The closed days before a round that it merges when they hold more than one file: a
#: collector stopped for up to this many days leaves none unmerged (``hist.compact()``
#: merges older ones).
CLOSED_DAYS = 7


@dataclass
class Merging:
    """A merge a round left running: its thread, and the error that stopped it."""

    thread: threading.Thread
    error: BaseException | None = None

    def notes(self) -> list[str]:
        """The next round's warning when the merge met a file it cannot read (a foreign or
        corrupt file in a closed day: nothing is lost); any other error is raised."""
        if self.error is None:
            return []
        if not isinstance(self.error, HistoryError):
            raise self.error
        return [
            f"the closed days were not all merged ({self.error.message}); nothing is lost, "
            "and the next collect tries again"
        ]


_MERGING: dict[str, Merging] = {}  # by store (see _key), in this process
_MERGING_LOCK = threading.Lock()

# The closed day of one file each layout last found with a current rollup (a collector
# checks yesterday every round): the day, the signature of its throughput files and its
# rollup files as listed (path, size, modification time). Listed the same again, the
# answer is the same, without reading and checking the rollup again.
_CURRENT: weakref.WeakKeyDictionary[Layout, tuple[str, str, list[tuple[str, int, int]]]] = (
    weakref.WeakKeyDictionary()
)


def _key(layout: Layout) -> str:
    return f"{layout.fs.type_name}:{layout.root}"


def settle(layout: Layout) -> Merging | None:
    """Wait for the merge a round left running on this store (in this process); return
    it (its :meth:`Merging.notes`), or None when there was none."""
    with _MERGING_LOCK:
        merging = _MERGING.pop(_key(layout), None)
    if merging is not None and merging.thread is not threading.current_thread():
        merging.thread.join()
    return merging


def settle_all() -> None:
    """Wait for every merge the rounds of this process left running."""
    with _MERGING_LOCK:
        running = list(_MERGING.values())
        _MERGING.clear()
    for merging in running:
        merging.thread.join()


def merge_later(layout: Layout, today: str) -> Merging | None:
    """Merge, on a thread, each of the :data:`CLOSED_DAYS` before ``today`` that holds more
    than one file of points (yesterday, when the round just closed it); then bring the
    rollups of the days forecasts read up to date. None when no day needs it.

    The thread works on a layout of its own (the round's listings are not shared).
    """
    yesterday = _day_before(today)
    first = f"{pd.Timestamp(today) - pd.Timedelta(days=CLOSED_DAYS):%Y-%m-%d}"
    held = collections.Counter(day for day, _, _ in layout.files("throughput", first, yesterday))
    days = sorted(day for day, files in held.items() if files > 1)
    if not days:
        return None
    own = Layout(layout.location, layout.fs, layout.root)

    def run() -> None:
        counts: collections.Counter[str] = collections.Counter()
        try:
            for day in days:
                compact_day(own, "throughput", day, counts)
            if counts["rollups_written"]:
                pack_writer.refresh_recent(own, yesterday)
        except BaseException as exc:  # the next round reports it (Merging.notes)
            merging.error = exc

    merging = Merging(threading.Thread(target=run, name="searchkit-compaction"))
    while True:  # one merge at a time per store: wait for the one before, if any
        settle(layout)
        with _MERGING_LOCK:
            if _key(layout) not in _MERGING:  # (another round's may have come meanwhile)
                _MERGING[_key(layout)] = merging
                # Started before the lock is let go: a concurrent round's settle() then finds
                # a thread it can join (joining one not yet started raises RuntimeError).
                merging.thread.start()
                return merging


def after_collect(
    layout: Layout,
    today: str,
    files: list[str],
    new: pa.Table,
    days: pa.Array | None,
    *,
    merge: bool,
    limits: Mapping[str, Sequence[float]] | None = None,
) -> None:
    """What a collect round does after writing ``files`` (``new`` points, of UTC ``days``):

    bring the rollup of each day it wrote to up to date, extended with the points it wrote
    (:mod:`searchkit.history.open_day`: the open day's sums without reading it again);
    ``limits``: each index's limits whose crossings the rollup keeps
    (:mod:`searchkit.history.crossings`). With ``merge``: compact an older closed day it
    wrote (late points) and yesterday's limits at once, and leave the days of the week
    before with more than one file of points (yesterday, at the round across midnight) to
    :func:`merge_later`; without, bring the rollups of the closed days it wrote and of
    yesterday up to date. When a closed day's rollup was written (once a day), so are the
    rollups of the days forecasts read.
    """
    written = [] if days is None else pc.unique(days).to_pylist()
    counts: collections.Counter[str] = collections.Counter()
    for day in written:
        path = next((p for p in files if f"/throughput/day={day}/" in p), None)
        part = new.filter(pc.equal(days, day))
        if path is not None and open_day.advance(layout, day, path, part, limits):
            counts["rollups_written"] += day < today
    yesterday = _day_before(today)
    if merge:
        # A day of one file: its rollup made current if it is not (cheap when it is).
        single = len(layout.files("throughput", yesterday, yesterday)) == 1
        for day in sorted(d for d in written if d < yesterday) + [yesterday] * single:
            compact_day(layout, "throughput", day, counts)
        compact_day(layout, "limits", yesterday, counts)
    else:
        closed = sorted(d for d in {*written, yesterday} if d < today)
        counts["rollups_written"] += sum(rollups.refresh(layout, day) for day in closed)
    if counts["rollups_written"]:
        pack_writer.refresh_recent(layout, yesterday)
    if merge:
        merge_later(layout, today)


def _day_before(day: str) -> str:
    return f"{pd.Timestamp(day) - pd.Timedelta(days=1):%Y-%m-%d}"


def current_sources(layout: Layout, first: str | None = None) -> dict[str, str]:
    """Map each throughput day from ``first`` on to the signature of its files."""
    return rollups.sources(layout, first)


def compact_day(layout: Layout, kind: str, day: str, counts: collections.Counter[str]) -> None:
    """Merge one day's files of ``kind`` (and, for points, write its rollup); add to ``counts``.

    The merged file is written whole before the files it replaces are deleted, so a reader
    meanwhile sees every point (at worst twice, and drops the copy); a file a collector
    writes meanwhile is left alone. Another process's compactor at work on the day makes
    this one skip it (``counts["skipped"]``); one of this process is waited for, and the
    day then found merged.
    """
    paths = [path for _, path, _ in layout.files(kind, day, day)]
    if not paths:
        return
    if kind != "throughput" and len(paths) < 2:
        return
    if kind == "throughput" and len(paths) == 1 and _is_current(layout, day):
        return
    with layout.lock(kind, day) as held:
        if not held:
            counts["skipped"] += 1
            return
        # Listed again under the lock: another compactor may have just finished the day
        # (one of this process, which the lock waited for).
        paths = [path for _, path, _ in layout.files(kind, day, day)]
        if not paths or (kind != "throughput" and len(paths) < 2):
            return
        if kind == "throughput" and len(paths) == 1 and _is_current(layout, day):
            return
        # The rollup of the files as they are, when current and sound (the collector
        # extends it each round): the merged file holds the same points (a file written
        # meanwhile is not merged away, so a rollup named after the merged file alone is
        # stale beside it), so it is that file's rollup too.
        summary = _current_rollup(layout, day) if kind == "throughput" else None
        # Points dated on other days stay in the day's file (readers leave them out).
        table = reader.read(layout, kind, days=(day, day), strays=True)
        if kind == "throughput":
            kept = dedupe.latest(table)
            counts["duplicates_dropped"] += table.num_rows - kept.num_rows
            table = dedupe.sorted_points(kept)
        else:
            kept = dedupe.thin_snapshots(table)
            counts["snapshots_thinned"] += table.num_rows - kept.num_rows
            table = kept
        if len(paths) > 1:
            # Named after the files it replaces: a reader's one listing of an object
            # store then sees them or it (Layout.files).
            stamp = layout.after(paths, int(pc.max(table["collected_at"]).value))
            merged = layout.write(kind, day, table, stamp)
            counts["partitions"] += 1
            counts["files_removed"] += sum(layout.remove(path) for path in paths)
        else:
            merged = paths[0]
        if kind == "throughput":
            _write_rollup(layout, day, table, merged, counts, summary)


def _is_current(layout: Layout, day: str) -> bool:
    """Whether ``day``'s rollup is current (:func:`~searchkit.history.rollups.is_current`),
    told again without a read while its files and rollup files list as they did."""
    source = rollups.sources(layout, day, day).get(day, "")
    held = [(path, size, mtime) for _, path, size, mtime in layout.entries("rollups", day, day)]
    if _CURRENT.get(layout) == (day, source, held):
        return True
    if not rollups.is_current(layout, day, source):
        return False
    _CURRENT[layout] = (day, source, held)  # what was read, unless it changed meanwhile
    return True


def _current_rollup(layout: Layout, day: str) -> pa.Table | None:
    """The day's rollup rows when they summarise exactly its files as listed now and pass
    their checks, else None."""
    source = rollups.sources(layout, day, day).get(day)
    return None if source is None else rollups.current_rows(layout, day, source)


def _write_rollup(
    layout: Layout,
    day: str,
    table: pa.Table,
    merged: str,
    counts: collections.Counter[str],
    summary: pa.Table | None,
) -> None:
    """Replace the day's rollup by the one of ``table``, the points of file ``merged``
    (named by its size and time as stored: one stat, or one HEAD request): ``summary``
    renamed so when given (the same points' rollup), else rolled up from ``table``."""
    info = layout.fs.get_file_info(merged)
    if info.type != pafs.FileType.File:
        return  # gone already: another compactor merged the day again
    source = rollups.signature([(merged.rpartition("/")[2], int(info.size), file_seconds(info))])
    if summary is not None and summary.num_rows:
        rollup = rollups.renamed(summary, source)
    else:
        rollup = rollups.rollup(table, day, source)
    rollups.replace(layout, day, rollup, table)
    counts["rollups_written"] += 1


def compact_all(layout: Layout) -> dict[str, int]:
    """Compact every day of ``layout`` (see :meth:`~searchkit.History.compact`) and delete
    temporary files older than :data:`~searchkit.history.layout.STALE`."""
    counts: collections.Counter[str] = collections.Counter()
    for kind in ("throughput", "limits"):
        for day in layout.days(kind):
            compact_day(layout, kind, day, counts)
    return {
        "partitions": counts["partitions"],
        "files_removed": counts["files_removed"],
        "duplicates_dropped": counts["duplicates_dropped"],
        "snapshots_thinned": counts["snapshots_thinned"],
        "rollups_written": counts["rollups_written"],
        "days_skipped": counts["skipped"],
        "stale_temporaries_removed": layout.remove_stale_temporaries(STALE),
    }
