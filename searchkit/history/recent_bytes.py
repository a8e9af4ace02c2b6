"""The files a :meth:`~searchkit.history.layout.Layout.listing` scope keeps among those
fetched with ``recent`` (month packs): only the :data:`RECENT_FETCHES` used last.

A year's read asks for its days in batches going forward; each batch asks for the packs of
its months, the next batch again for the month the one before ended in (and a batch read
by whole days and by hours asks for its months twice), never for an older one. Keeping a
pack for the whole call held a year's packs (225 MB) to its end; keeping the two used last
fetches each once all the same.
"""

from __future__ import annotations

import threading

import pyarrow as pa

__all__ = ["RECENT_FETCHES", "used"]

#: Files kept: a batch of 32 days spans two months (a February three), and the next batch
#: starts in the month the one before ended in.
RECENT_FETCHES = 2
_ORDER = "recent fetches"  # the scope's key of the kept files' keys, least recent first


def used(cache: dict[str, object], key: str, data: pa.Buffer, lock: threading.Lock) -> None:
    """Keep ``data`` in ``cache`` (a scope's) under ``key`` as the file used last, dropping
    the one used least recently beyond :data:`RECENT_FETCHES`."""
    with lock:
        order: list[str] = cache.setdefault(_ORDER, [])  # type: ignore[assignment]
        if key in order:
            order.remove(key)
        order.append(key)
        cache[key] = data
        while len(order) > RECENT_FETCHES:
            cache.pop(order.pop(0), None)
