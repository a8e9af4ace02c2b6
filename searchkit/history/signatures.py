"""What a daily rollup names its day's points by: the signature of the day's throughput
files (each file's name, size and modification time), as a listing gives them now. A rollup
(:mod:`searchkit.history.rollups`) or a month pack's day (:mod:`searchkit.history.packs`)
answers for its day only while its ``source`` is the day's signature."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Sequence

from searchkit.history.layout import Layout

__all__ = ["signature", "sources"]


def signature(files: Sequence[tuple[str, int, int]]) -> str:
    """Name a day's set of throughput files by ``(name, size, mtime)`` each (see
    :meth:`~searchkit.history.layout.Layout.entries`): the file's name, size and
    modification time, or a digest of those of several files. A file rewritten under its
    name changes its size or time, so a rollup of its old points is no longer current."""
    if len(files) == 1:
        name, size, mtime = files[0]
        return f"{name} ({size} bytes, modified {_stamp(mtime)})"
    lines = sorted(f"{name}\t{size}\t{mtime}" for name, size, mtime in files)
    digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()
    return f"{len(files)} files sha256:{digest}"


def _stamp(mtime: int) -> str:
    if mtime < 0:
        return "at an unknown time"
    return f"{dt.datetime.fromtimestamp(mtime, dt.timezone.utc):%Y-%m-%d %H:%M:%S} UTC"


def sources(layout: Layout, first: str | None = None, last: str | None = None) -> dict[str, str]:
    """Map each throughput day from ``first`` to ``last`` (inclusive) to the
    :func:`signature` of its files as listed now."""
    by_day: dict[str, list[tuple[str, int, int]]] = {}
    for day, path, size, mtime in layout.entries("throughput", first, last):
        by_day.setdefault(day, []).append((path.rpartition("/")[2], size, mtime))
    return {day: signature(files) for day, files in by_day.items()}
