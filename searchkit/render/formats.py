"""How values read to people: limits, byte counts, short ids and creation times."""

from __future__ import annotations

import datetime as dt
import math
import numbers
from typing import TYPE_CHECKING, Any

from searchkit._units import format_bytes
from searchkit.model.index import SHORT_ID, SearchIndex
from searchkit.model.limits import UNLIMITED

if TYPE_CHECKING:
    pass

__all__ = [
    "KEY_LIMITS",
    "created_text",
    "format_bytes",
    "format_limit",
    "plain_number",
    "plain_text",
    "short_id",
]

#: The limits the index browser's table shows; the others are one click away.
KEY_LIMITS: tuple[str, ...] = (
    "max_daily_queries",
    "max_daily_updates",
    "max_query_per_second",
    "max_writes_per_second",
)


def format_limit(value: Any, field: str | None = None) -> str:
    """Return a limit as display text: "unlimited", "—" when absent, else a grouped number.

    Accepts the frame's floats (``inf`` unlimited, NaN absent) and the API's integers
    (-1 unlimited, None absent). The text is plain, not HTML-escaped, and this never raises:
    a value that is not a number is shown as it is.

    Args:
        value: One limit value.
        field: The limit's name; ``max_monthly_bandwidth`` is shown in byte units.

    Returns:
        The text to show.

    Example:
        >>> format_limit(float("inf")), format_limit(None), format_limit(1234567.0)
        ('unlimited', '—', '1,234,567')
        >>> format_limit(5e10, "max_monthly_bandwidth")
        '50 GB'
    """
    if value is None:
        return "—"
    # bool is an int, numpy's bool_ is not a Real: both are shown as they are.
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return str(value)
    try:
        number = float(value)
    except (OverflowError, ValueError):  # an integer too big for a float: show its digits
        return f"{value:,}" if isinstance(value, numbers.Integral) else str(value)
    if math.isnan(number):
        return "—"
    if number == math.inf or number == UNLIMITED:
        return "unlimited"
    if math.isinf(number):  # -inf: not something the service sends, shown as is
        return str(number)
    if field == "max_monthly_bandwidth":
        return format_bytes(number)
    return f"{number:,.0f}" if number.is_integer() else f"{number:,}"


def plain_number(value: float, _pos: object = None) -> str:
    """Return a number as people write it: "0.1", "1", "1,000", "2.5" (a tick formatter).

    No SI prefixes: a tick "100m" (0.1) reads as a hundred million. Separators group the
    thousands; small numbers keep their decimals in full ("0.001").

    Example:
        >>> [plain_number(v) for v in (0.1, 1, 1000, 2.5, 1_000_000, 0.001, 0)]
        ['0.1', '1', '1,000', '2.5', '1,000,000', '0.001', '0']
    """
    value = float(value)
    if not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    if abs(value) >= 1:
        return f"{value:,.3f}".rstrip("0").rstrip(".")
    return f"{value:.12f}".rstrip("0")


def short_id(value: Any) -> str:
    """Return the first characters of an id, enough to tell indexes apart in a table."""
    return "—" if value is None or value != value else str(value)[:SHORT_ID]


def created_text(index: SearchIndex, layout: str = "%Y-%m-%d %H:%M UTC") -> str:
    """Return when an index was created, in UTC (``layout``), or "—" when unknown."""
    try:
        created = index.created
    except (OverflowError, OSError, ValueError):
        return "—"
    return created.strftime(layout) if isinstance(created, dt.datetime) else "—"


def plain_text(value: Any) -> str:
    """Return a value as text: an enum's value, "—" for None or empty."""
    if value is None:
        return "—"
    if hasattr(value, "value"):
        value = value.value
    return str(value) if str(value) != "" else "—"
