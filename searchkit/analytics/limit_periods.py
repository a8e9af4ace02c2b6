"""Which limit a period of usage may be compared with, and the comparison itself.

A limit counts what the service allows in *its* period: ``max_daily_*`` per UTC day (they
reset at UTC midnight), ``max_monthly_*`` per UTC calendar month. A period of usage is
compared with a limit only when it is that period: a week beside a daily limit, an hour
beside it, or a New York day beside a limit that resets at UTC midnight would be a number
that misleads, so such rows keep no limit (NaN) and no utilization, and ``reason`` says
why. An unlimited index (limit ``inf``) has no share of a limit used: its utilization is
NaN with the reason ``"unlimited"``, never 0%.

Periods themselves (their starts, the one labelling rule) are
:func:`searchkit.frames.counting.period_starts`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pandas as pd

from searchkit.errors import ValidationError
from searchkit.model.limits import LIMIT_FIELDS, LIMIT_INFO

__all__ = [
    "DAILY_FIELDS",
    "NOT_REPORTED_REASON",
    "UNLIMITED_REASON",
    "compare_with_limits",
    "field_label",
    "limit_period",
    "period_mismatch",
    "share_of_limit",
]

#: The default comparison: throughput counts queries and updates together.
DAILY_FIELDS: tuple[str, str] = ("max_daily_queries", "max_daily_updates")
#: The reason of a row whose index has no limit.
UNLIMITED_REASON = "unlimited"
#: The reason of a row whose index's limit the service did not report.
NOT_REPORTED_REASON = "limit not reported"


def field_label(field: str | None) -> str:
    """The ``field`` column's text: ``field``, or the two daily fields joined by ``+``.

    Raises:
        ValidationError: ``field`` is not one of the nine limits.
    """
    if field is None:
        return "+".join(DAILY_FIELDS)
    if field not in LIMIT_FIELDS:
        raise ValidationError(
            f"field must be a limit field, one of {', '.join(LIMIT_FIELDS)}; got {field!r}"
        )
    return field


def limit_period(field: str | None) -> str | None:
    """The period a limit counts over: ``"day"``, ``"month"``, or None (not a count of
    operations over a period: a size, a rate, a per-request cap)."""
    if field is None:
        return "day"
    period = LIMIT_INFO[field].period
    return period if period in ("day", "month") else None


def _offset(freq: Any) -> pd.DateOffset:
    offset: pd.DateOffset = pd.tseries.frequencies.to_offset(freq)
    return offset


def _length(offset: pd.DateOffset) -> pd.Timedelta | None:
    """The fixed length of ``offset`` ("D", "24h"), or None for a calendar period."""
    if isinstance(offset, pd.offsets.Day):  # not a Tick since pandas 3: a calendar day
        return pd.Timedelta(days=offset.n)
    if isinstance(offset, pd.offsets.Tick):
        return pd.Timedelta(offset.nanos, "ns")
    return None


def _is_utc(zone: dt.tzinfo) -> bool:
    """Whether days in ``zone`` are UTC days (no offset in winter or summer)."""
    return all(not pd.Timestamp(f"2026-{month}-01", tz=zone).utcoffset() for month in ("01", "07"))


def period_mismatch(field: str | None, freq: Any, zone: dt.tzinfo) -> str | None:
    """Why periods of ``freq`` in ``zone`` cannot be compared with ``field``, or None.

    Example:
        >>> period_mismatch(None, "W", dt.timezone.utc)
        'max_daily_queries+max_daily_updates is a limit per UTC day; these periods are W-SUN'
    """
    label, period = field_label(field), limit_period(field)
    offset = _offset(freq)
    if period is None:
        return f"{label} is not a number of operations per period"
    if period == "day":
        same = _length(offset) == pd.Timedelta(days=1)
    else:
        same = isinstance(offset, pd.offsets.MonthBegin) and offset.n == 1
    if not same:
        return f"{label} is a limit per UTC {period}; these periods are {offset.freqstr}"
    if not _is_utc(zone):
        return f"{label} resets at UTC midnight; these {period}s start at midnight in {zone}"
    return None


def share_of_limit(used: Any, limit: Any) -> np.ndarray:
    """``used / limit``: NaN for an unlimited or unreported limit, ``inf`` for a limit of 0
    that is used, 0 for one that is not."""
    used = np.asarray(used, dtype=np.float64)
    limit = np.asarray(limit, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = used / limit
    ratio[np.isinf(limit)] = np.nan  # unlimited: no share of a limit is used
    zero = limit == 0
    ratio[zero] = np.where(used[zero] > 0, np.inf, 0.0)
    result: np.ndarray = ratio
    return result


def compare_with_limits(
    usage: pd.DataFrame, limit: Any, field: str | None, freq: Any, zone: dt.tzinfo
) -> pd.DataFrame:
    """Add ``limit``, ``utilization``, ``breached``, ``field`` and ``reason`` to usage rows.

    Args:
        usage: Rows with ``operations``.
        limit: Each row's limit in force (``inf`` unlimited, NaN not reported).
        field: The limit compared with (None: the two daily fields' sum).
        freq: The periods' frequency; ``zone``: the zone they are cut in.

    Returns:
        ``usage`` with the columns added: ``limit`` NaN and ``utilization`` NaN where the
        periods are not the limit's (``reason`` says why, the same on every row), NaN
        utilization for unlimited (``"unlimited"``) and unreported limits; ``breached``
        only where a limit was compared and exceeded.
    """
    label = field_label(field)
    limit = np.asarray(limit, dtype=np.float64)
    mismatch = period_mismatch(field, freq, zone)
    if mismatch is not None:
        limit = np.full(len(usage), np.nan)
    operations = usage["operations"].to_numpy(dtype=np.float64)
    usage["limit"] = limit
    usage["utilization"] = share_of_limit(operations, limit)
    usage["breached"] = operations > limit
    # Texts built from their few values, not a text per row.
    usage["field"] = pd.array([label], dtype="str").take(np.zeros(len(usage), np.int64))
    why = np.zeros(len(usage), dtype=np.int64)
    why[np.isnan(limit)] = 1
    why[np.isposinf(limit)] = 2
    if mismatch is not None:
        why[:] = 3
    texts = ["", NOT_REPORTED_REASON, UNLIMITED_REASON, mismatch or ""]
    usage["reason"] = pd.array(texts, dtype="str").take(why)
    return usage
