"""Compaction: a day's files merged into one, its rollup recomputed, one compactor at a time."""

from __future__ import annotations

import collections

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs

from searchkit.history import dedupe, reader, rollups
from searchkit.history.layout import Layout, file_seconds

__all__ = ["compact_day", "current_sources"]


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
            _write_rollup(layout, day, table, merged, counts)


def _write_rollup(
    layout: Layout, day: str, table: pa.Table, merged: str, counts: collections.Counter[str]
) -> None:
    """Replace the day's rollup by the one of ``table``, the points of file ``merged``
    (named by its size and time as stored: one stat, or one HEAD request)."""
    info = layout.fs.get_file_info(merged)
    if info.type != pafs.FileType.File:
        return  # gone already: another compactor merged the day again
    source = rollups.signature([(merged.rpartition("/")[2], int(info.size), file_seconds(info))])
    rollups.replace(layout, day, rollups.rollup(table, day, source), table)
    counts["rollups_written"] += 1
