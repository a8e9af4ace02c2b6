"""How much memory a read of the history may take: estimated before it starts, refused
with a way to bound it when it would not fit.

A read first takes each file's footer (the row counts of the row groups it wants), so the
rows it would hold are known before any data is read. The estimate is those rows times the
peak bytes a row takes on the way to the caller's frame (:data:`BYTES_PER_ROW`); the limit
is the machine's physical memory, or ``SEARCHKIT_READ_LIMIT`` (bytes, or with a unit:
``512MiB``, ``20GB``) when set. A read over the limit raises a
:class:`~searchkit.errors.HistoryError` saying how much it would take and how to bound it,
before it reads anything but footers.
"""

from __future__ import annotations

import os
import re

from searchkit._units import binary_size
from searchkit.errors import HistoryError, ValidationError

__all__ = ["BYTES_PER_ROW", "check", "estimate", "limit"]

#: Peak bytes a stored row takes while it is read, by dataset. Throughput: measured, the
#: peak resident memory of ``History.throughput()`` over 3.0M points (300 indexes x 7 days)
#: above the process's before it, 165 bytes a point (the Arrow columns, the deduplicated
#: copy and the frame at once); limits and rollups from their width (a limits row has 30
#: columns; a rollup row holds its day's 2 x 24 hours).
BYTES_PER_ROW = {"throughput": 165, "limits": 512, "rollups": 1024}
_ENVIRONMENT = "SEARCHKIT_READ_LIMIT"
_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 1 << 10,
    "mib": 1 << 20,
    "gib": 1 << 30,
    "tib": 1 << 40,
}


def limit() -> int:
    """The most bytes one read may take: ``SEARCHKIT_READ_LIMIT`` or the physical memory.

    Raises:
        ValidationError: ``SEARCHKIT_READ_LIMIT`` is set to something that is no size.
    """
    text = os.environ.get(_ENVIRONMENT, "").strip()
    if text:
        found = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([a-zA-Z]*)", text)
        unit = found.group(2).lower() if found else ""
        if found is None or unit not in _UNITS:
            raise ValidationError(
                f"{_ENVIRONMENT}={text!r} is no size: give bytes, e.g. 2000000000, 2GB or 512MiB"
            )
        return int(float(found.group(1)) * _UNITS[unit])
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # no sysconf: no limit known
        return 1 << 62


def estimate(kind: str, rows: int, columns: list[str]) -> int:
    """Peak bytes of reading ``rows`` rows of ``kind`` (fewer columns, fewer bytes)."""
    from searchkit.history.layout import SCHEMAS

    share = len(columns) / len(SCHEMAS[kind])
    return int(rows * BYTES_PER_ROW[kind] * max(share, 0.5))


def check(kind: str, days: tuple[str | None, str | None], rows: int, columns: list[str]) -> None:
    """Refuse a read of ``rows`` rows that would take more memory than :func:`limit`.

    Raises:
        HistoryError: Naming the estimate, the limit and how to bound the read.
    """
    need = estimate(kind, rows, columns)
    allowed = limit()
    if need <= allowed:
        return
    first, last = days
    span = f"from {first or 'the first day'} to {last or 'the last day'}"
    how = (
        "give end= as well as start= (e.g. hist.throughput(start=..., end=...)), fewer "
        "names= or index_ids=, or read a day at a time"
        if kind == "throughput"
        else "read a shorter span"
    )
    raise HistoryError(
        f"reading the {kind} history {span} would take about {binary_size(need)} of memory "
        f"({rows:,} rows), more than the {binary_size(allowed)} allowed (this machine's "
        f"memory, or {_ENVIRONMENT}); nothing was read: {how}"
    )
