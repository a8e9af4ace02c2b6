"""Compaction: a day's files merged into one, its rollup recomputed, one compactor at a time."""

from __future__ import annotations

import collections
from collections.abc import Mapping, Sequence

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs

from searchkit.history import dedupe, open_day, reader, rollups
from searchkit.history.layout import STALE, Layout, file_seconds

__all__ = ["after_collect", "compact_all", "compact_day", "current_sources"]


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
    (:mod:`searchkit.history.crossings`). Then compact the closed days it touched, and
    yesterday (which just closed), or without
    ``merge`` only bring their rollups up to date; and when a closed day's rollup was
    written (once a day), bring the rollups of the days forecasts read up to date too.
    """
    written = [] if days is None else pc.unique(days).to_pylist()
    counts: collections.Counter[str] = collections.Counter()
    for day in written:
        path = next((p for p in files if f"/throughput/day={day}/" in p), None)
        part = new.filter(pc.equal(days, day))
        if path is not None and open_day.advance(layout, day, path, part, limits):
            counts["rollups_written"] += day < today
    yesterday = f"{pd.Timestamp(today) - pd.Timedelta(days=1):%Y-%m-%d}"
    closed = sorted(d for d in {*written, yesterday} if d < today)
    if not merge:
        counts["rollups_written"] += sum(rollups.refresh(layout, day) for day in closed)
    for kind, chosen in (("throughput", closed), ("limits", [yesterday])) if merge else ():
        for day in chosen:
            compact_day(layout, kind, day, counts)
    if counts["rollups_written"]:
        rollups.refresh_recent(layout, yesterday)


def current_sources(layout: Layout, first: str | None = None) -> dict[str, str]:
    """Map each throughput day from ``first`` on to the signature of its files."""
    return rollups.sources(layout, first)


def compact_day(layout: Layout, kind: str, day: str, counts: collections.Counter[str]) -> None:
    """Merge one day's files of ``kind`` (and, for points, write its rollup); add to ``counts``.

    The merged file is written whole before the files it replaces are deleted, so a reader
    meanwhile sees every point (at worst twice, and drops the copy); a file a collector
    writes meanwhile is left alone. Another compactor at work on the day makes this one
    skip it (``counts["skipped"]``).
    """
    paths = [path for _, path, _ in layout.files(kind, day, day)]
    if not paths:
        return
    if kind != "throughput" and len(paths) < 2:
        return
    if (
        kind == "throughput"
        and len(paths) == 1
        and rollups.is_current(layout, day, rollups.sources(layout, day, day).get(day, ""))
    ):
        return
    with layout.lock(kind, day) as held:
        if not held:
            counts["skipped"] += 1
            return
        # Listed again under the lock: another compactor may have just finished the day.
        paths = [path for _, path, _ in layout.files(kind, day, day)]
        if not paths:
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
