"""Byte counts for people: the one place sizes are written, in SI or in binary units."""

from __future__ import annotations

import math

__all__ = ["binary_size", "format_bytes", "format_duration"]


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


#: A duration's units, largest first: (seconds in one, the unit's name).
_DURATION_UNITS = ((86_400, "d"), (3_600, "h"), (60, "min"), (1, "s"))


def format_duration(seconds: float) -> str:
    """Return how long ``seconds`` last in at most two units, for people: ``2 h 5 min``.

    The one way searchkit writes a duration (gaps, forecast notes, collect intervals,
    alert holds): whole units, the largest two that are not zero, rounded down.

    Example:
        >>> format_duration(45), format_duration(600), format_duration(7_500)
        ('45 s', '10 min', '2 h 5 min')
        >>> format_duration(6 * 86_400 + 14 * 3_600 + 59), format_duration(0.5)
        ('6 d 14 h', '0 s')
    """
    left = int(max(float(seconds), 0.0))
    parts: list[tuple[int, str]] = []
    for size, unit in _DURATION_UNITS:
        count, left = divmod(left, size)
        if count or parts:
            parts.append((count, unit))
    shown = [f"{count} {unit}" for count, unit in parts[:2] if count]
    return " ".join(shown) or "0 s"
