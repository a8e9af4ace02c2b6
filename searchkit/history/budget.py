"""How much memory a read of the history may take: estimated before it starts, refused
with a way to bound it when it would not fit.

A read first takes each file's footer (the row counts of the row groups it wants), so the
rows it would hold are known before any data is read. The estimate is those rows times the
peak bytes a row takes on the way to the caller's frame (:data:`BYTES_PER_ROW`); the limit
is the machine's physical memory, or ``SEARCHKIT_READ_LIMIT`` (bytes, or with a unit:
``512MiB``, ``20GB``) when set. A read over the limit raises a
:class:`~searchkit.errors.HistoryError` saying how much it would take and how to bound it,
before it reads anything but footers.

A caller that holds several reads at once (the analytics read days ahead of the one they
count) runs them inside :func:`shared`: each may then take only its share of the limit, so
all of them together fit, and a refusal says how that caller is bounded.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
from collections.abc import Iterator

from searchkit._units import binary_size
from searchkit.errors import HistoryError, ValidationError

__all__ = [
    "BYTES_PER_ROW",
    "LIST_ITEM_BYTES",
    "ROLLUP_LIST_ITEMS",
    "check",
    "estimate",
    "fits",
    "limit",
    "refused",
    "shared",
]

#: Peak bytes a stored row takes while it is read, by dataset. Throughput: measured, the
#: peak resident memory of ``History.throughput()`` over 3.0M points (300 indexes x 7 days)
#: above the process's before it, 165 bytes a point (the Arrow columns, the deduplicated
#: copy and the frame at once); limits and rollups from their width (a limits row has 30
#: columns; a rollup row holds its day's 2 x 24 hours).
BYTES_PER_ROW = {"throughput": 165, "limits": 512, "rollups": 1024}
#: A rollup row's peak bytes by column instead (its lists dominate): a list's items at
#: :data:`LIST_ITEM_BYTES` each (24 hours, 96 quarters; a day's few gaps, spacings and
#: crossings), any other column 32 bytes. Measured, the peak resident memory of
#: ``History.sums`` over 30,000 rows above that of 10,000: 3.95 KB a row by quarter, 1.33
#: KB by hour, 0.49 KB by day (and ``History.rollups()``); these give 4.5, 1.6 and 0.66 KB.
LIST_ITEM_BYTES = 20
ROLLUP_LIST_ITEMS = {
    "hourly_value_sum": 24,
    "hourly_points": 24,
    "quarter_value_sum": 96,
    "quarter_points": 96,
    "spacing_values": 16,
    "spacing_counts": 16,
    "gaps": 4,
    "crossing_limits": 4,
    "crossing_times": 4,
}
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


class _Share:
    """Reads held at once by the caller of :func:`shared`, and how it is bounded."""

    def __init__(self, parts: int, what: str, how: str) -> None:
        self.parts, self.what, self.how = parts, what, how


_SHARE: contextvars.ContextVar[_Share | None] = contextvars.ContextVar("_SHARE", default=None)
_PARTS = {2: "half", 3: "a third", 4: "a quarter"}


@contextlib.contextmanager
def shared(parts: int, what: str, how: str) -> Iterator[None]:
    """Reads made inside (and on threads started with :func:`contextvars.copy_context`)
    are held ``parts`` at a time by the caller (``what``: "4 days"): each may take a
    ``parts``-th of :func:`limit`, and a refusal says ``how`` that caller is bounded."""
    token = _SHARE.set(_Share(parts, what, how))
    try:
        yield
    finally:
        _SHARE.reset(token)


def refused(exc: BaseException) -> bool:
    """Whether ``exc`` is :func:`check`'s refusal (a read that would not fit)."""
    return isinstance(exc, HistoryError) and isinstance(exc.__cause__, MemoryError)


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

    if kind == "rollups":
        widths = [LIST_ITEM_BYTES * ROLLUP_LIST_ITEMS.get(name, 0) or 32 for name in columns]
        return rows * sum(widths)
    share = len(columns) / len(SCHEMAS[kind])
    return int(rows * BYTES_PER_ROW[kind] * max(share, 0.5))


def _allowed() -> int:
    """The bytes one read may take here: :func:`limit`, or its share inside :func:`shared`."""
    share = _SHARE.get()
    return limit() // (1 if share is None else share.parts)


def fits(kind: str, rows: int, columns: list[str]) -> bool:
    """Whether a read of ``rows`` rows fits: what :func:`check` refuses when it does not."""
    return estimate(kind, rows, columns) <= _allowed()


def check(kind: str, days: tuple[str | None, str | None], rows: int, columns: list[str]) -> None:
    """Refuse a read of ``rows`` rows that would take more memory than :func:`limit`
    (inside :func:`shared`: than its share of it).

    Raises:
        HistoryError: Naming the estimate, the limit and how to bound the read.
    """
    need = estimate(kind, rows, columns)
    share = _SHARE.get()
    parts = 1 if share is None else share.parts
    allowed = _allowed()
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
    whose = f"this machine's memory, or {_ENVIRONMENT}"
    if share is not None:
        part = _PARTS.get(parts, f"1/{parts}")
        whose = (
            f"{part} of this machine's memory, or of {_ENVIRONMENT}: {share.what} are held at once"
        )
        how = share.how
    # Caused by a MemoryError: a caller that reads again in parts on a HistoryError (a
    # corrupt rollup) must not, since its parts would be held at once all the same.
    raise HistoryError(
        f"reading the {kind} history {span} would take about {binary_size(need)} of memory "
        f"({rows:,} rows), more than the {binary_size(allowed)} allowed ({whose}); nothing "
        f"was read: {how}"
    ) from MemoryError(f"{binary_size(need)} > {binary_size(allowed)}")
