"""Byte counts for people: the one place sizes are written, in SI or in binary units."""

from __future__ import annotations

import math

__all__ = ["binary_size", "format_bytes"]


def format_bytes(value: float) -> str:
    """Return a byte count in decimal (SI) units with at most one decimal: ``50 GB``.

    The one way searchkit writes bytes: tables, cards, the CLI and plot axes all use it.

    Example:
        >>> format_bytes(5e10), format_bytes(1.5e9), format_bytes(999)
        ('50 GB', '1.5 GB', '999 B')
    """
    size = float(value)
    if not math.isfinite(size):
        return str(size)
    units = ("B", "kB", "MB", "GB", "TB", "PB")
    step = 0
    while step < len(units) - 1 and abs(round(size, 1)) >= 1000:
        size /= 1000
        step += 1
    unit = units[step]
    text = f"{size:,.0f}" if unit == "B" else f"{size:,.1f}".removesuffix(".0")
    return f"{text} {unit}"


def binary_size(count: int) -> str:
    """Return a size in binary units, as caps and files on disk are thought of: ``16 MiB``.

    Example:
        >>> binary_size(16 << 20), binary_size(1536), binary_size(50)
        ('16 MiB', '1.5 KiB', '50 bytes')
    """
    for unit, factor in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= factor:
            return f"{count / factor:.1f}".removesuffix(".0") + f" {unit}"
    return f"{count} bytes"
