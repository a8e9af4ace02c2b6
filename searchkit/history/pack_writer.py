"""Writing month packs (:mod:`searchkit.history.packs`): each closed month's current day
rollups copied into one file, by compaction (:func:`refresh_recent`) and by
:meth:`~searchkit.History.refresh_rollups` (:func:`pack_closed`).

A month is packed from those of its day rollups that are current (they name their day's
throughput files as listed now) and not stale (an older writer's); a day without one is
left out of the pack and read from its day rollup or its points. A month none of whose
days has such a rollup (each missing, stale, or naming files its day no longer holds: late
points not yet summed) cannot be packed. Compaction tries the closed months of the days it
keeps current every day; trying means reading the month's day rollups (a month of a
thousand indexes is some 20 MB), to find that nothing changed since the day before. So a
month that could not be packed is remembered with the listing it was tried on (its days'
throughput and rollup files: names, sizes and modification times, no request more), and
not read again while its days list the same; a rollup written or replaced there, or points
added, change the listing, and the month is tried again at once. The memory is this
process's (a collector runs for days); a process that starts anew tries once.
"""

from __future__ import annotations

import threading
from collections.abc import Collection

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from searchkit.history import packs
from searchkit.history.arrays import int64_values
from searchkit.history.checks import stale, whole_days
from searchkit.history.layout import Layout
from searchkit.history.rollups import RECENT_DAYS, current, read, refresh
from searchkit.history.signatures import sources

__all__ = ["pack", "pack_closed", "refresh_recent"]

# Each month that could not be packed, by store and month: the listing it was tried on.
_TRIED: dict[tuple[str, str], object] = {}
_TRIED_LOCK = threading.Lock()


def refresh_recent(layout: Layout, day: str) -> int:
    """Refresh the rollups of the stored days in the :data:`RECENT_DAYS` before ``day``
    that are missing or stale (written before rollups held hours, or before late points);
    return how many were written. One small read per current day."""
    first = f"{pd.Timestamp(day) - pd.Timedelta(days=RECENT_DAYS):%Y-%m-%d}"
    days = sorted({stored for stored, _, _ in layout.files("throughput", first, day)})
    written = sum(refresh(layout, stored) for stored in days if stored < day)
    pack_closed(layout, days, day)  # a month that closed: its days in one file
    return written


def pack(layout: Layout, month: str) -> bool:
    """Write ``month``'s (``YYYY-MM``) pack (:mod:`searchkit.history.packs`) from its day
    rollups that are current and not stale, unless it has one (a day rollup written in a
    month deletes its pack: :func:`~searchkit.history.rollups.replace`), or it could not be
    packed on the same listing before (see the module). Returns whether a pack was written."""
    if any(packed == month for packed, _, _ in layout.packs()):
        return False
    first = f"{month}-01"
    last = f"{pd.Timestamp(first) + pd.offsets.MonthEnd(0):%Y-%m-%d}"
    named = sources(layout, first, last)
    key = (f"{layout.fs.type_name}:{layout.root}", month)
    listed = (sorted(named.items()), layout.entries("rollups", first, last))
    with _TRIED_LOCK:
        if _TRIED.get(key) == listed:
            return False  # nothing changed since it could not be packed
    table = current(read(layout, (first, last)), named)
    if table.num_rows:
        table = table.filter(pa.array(~whole_days(table, stale(table))))
    with _TRIED_LOCK:
        if table.num_rows == 0:
            _TRIED[key] = listed
            return False
        _TRIED.pop(key, None)
    folder = f"rollups/{packs.PACKS}/month={month}"
    stamp = int(pc.max(table["period"]).value)
    per_day = int(np.unique(int64_values(table["period"]), return_counts=True)[1].max())
    # A row group a day or so: a read of a few of its days decodes only theirs.
    layout.write("rollups", first, table, stamp, folder=folder, row_group_size=per_day)
    return True


def pack_closed(layout: Layout, days: Collection[str], today: str) -> int:
    """:func:`pack` each month of ``days`` that closed before ``today``'s; return how many
    packs were written. One listing of each dataset for all of them (an object store)."""
    closed = sorted({d[:7] for d in days if d[:7] < today[:7]})
    with layout.listing():
        return sum(pack(layout, month) for month in closed)
