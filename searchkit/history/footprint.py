"""What a history takes on disk: every file under its location, counted by kind.

The kinds are the layout's data folders (``throughput``, ``limits``, ``rollups``: the files
readers read) and ``other``: everything else stored there, such as the record of each
index's newest point (``_newest.parquet``), a writer's temporary file, a compaction lock or
a file that is not the layout's. Links are never followed, so nothing outside the location
is counted, and a file removed while the location is listed (a compaction at work) is
simply not counted.
"""

from __future__ import annotations

import os
import stat

import pyarrow.fs as pafs

from searchkit.errors import HistoryError
from searchkit.history.layout import SCHEMAS, Layout
from searchkit.history.reports import StoredFiles

__all__ = ["OTHER", "footprint"]

#: The kind of every file that is not one of the layout's data files.
OTHER = "other"


def footprint(layout: Layout) -> tuple[dict[str, StoredFiles], tuple[str, ...]]:
    """Count the files under a history's location and their bytes, by kind.

    Returns:
        ``{kind: StoredFiles(files, bytes)}`` for ``throughput``, ``limits``, ``rollups``
        and ``other`` (in that order, zeros included), and the paths of the ``other``
        files inside the location, sorted.

    Raises:
        HistoryError: The location cannot be listed (a permission, the store unreachable).
    """
    # Listed first: on an object store the datasets' listings below are taken from it.
    every = _every_file(layout)
    # What readers read, by the layout's one rule (which also warns about strays).
    kind_of = {path: kind for kind in SCHEMAS for _, path, _ in layout.files(kind)}
    kind_of.update((path, "rollups") for _, path, _ in layout.packs())  # a month's rollups
    counts = {kind: [0, 0] for kind in (*SCHEMAS, OTHER)}
    others = []
    for path, size in every:
        kind = kind_of.get(path, OTHER)
        counts[kind][0] += 1
        counts[kind][1] += size
        if kind == OTHER:
            others.append(path[len(layout.root) + 1 :])
    by_kind = {kind: StoredFiles(files, size) for kind, (files, size) in counts.items()}
    return by_kind, tuple(sorted(others))


def _every_file(layout: Layout) -> list[tuple[str, int]]:
    """Return ``(path, size)`` of every regular file under the root, links not followed."""
    if not layout.local:  # an object store has no links and lists a prefix in one call
        infos = layout.everything()
        return [
            (info.path, int(info.size or 0)) for info in infos if info.type == pafs.FileType.File
        ]

    def refuse(exc: OSError) -> None:
        if not isinstance(exc, FileNotFoundError):  # a folder a compaction just removed
            raise HistoryError(f"cannot list the history at {layout.location!r}: {exc}") from exc

    found = []
    # pyarrow's recursive listing follows links to folders (and loops on a link to a parent);
    # os.walk does not.
    for folder, _, names in os.walk(layout.root, onerror=refuse):
        for name in names:
            path = f"{folder}/{name}"
            try:
                status = os.lstat(path)
            except FileNotFoundError:
                continue  # removed meanwhile
            if stat.S_ISREG(status.st_mode):
                found.append((path, status.st_size))
    return found
