"""The arguments of History's day and column methods, checked: a wrong one names itself.

``hourly("2026-13-01", ...)`` found no day and returned ``{}``, ``refresh_rollups("2026-11-20")``
iterated the characters of the text and ``rollups(columns=["nope"])`` raised a bare
``KeyError``: each is a :class:`~searchkit.errors.ValidationError` naming the argument and
the value here.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence

from searchkit.errors import ValidationError

__all__ = ["check_columns", "check_day", "check_days"]

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def check_day(value: object, name: str) -> str:
    """Return ``value`` as a UTC day text ``YYYY-MM-DD``: such a text, or a date.

    Raises:
        ValidationError: ``value`` is neither, or names no calendar day (2026-13-01).
    """
    if isinstance(value, dt.date):  # a datetime and a pandas Timestamp too
        return f"{value:%Y-%m-%d}"
    if isinstance(value, str) and _DAY.fullmatch(value):
        try:
            dt.date.fromisoformat(value)
        except ValueError:
            pass
        else:
            return value
    raise ValidationError(
        f"{name}: {value!r} is not a UTC day: give a 'YYYY-MM-DD' text (e.g. '2026-11-20') "
        "or a date"
    )


def check_days(days: Iterable[object], name: str) -> list[str]:
    """Return each of ``days`` as a day text (see :func:`check_day`).

    Raises:
        ValidationError: ``days`` is a single text or not iterable, or one of its items is
            not a day.
    """
    if isinstance(days, str | bytes) or not isinstance(days, Iterable):
        raise ValidationError(
            f"{name}: give a list of UTC days (e.g. ['2026-11-20']), not {days!r}"
        )
    return [check_day(day, f"{name}[{n}]") for n, day in enumerate(days)]


def check_columns(columns: object, known: Sequence[str], name: str) -> list[str]:
    """Return ``columns`` as a list of names, each one of ``known``.

    Raises:
        ValidationError: ``columns`` is a single text, or names a column ``known`` has not.
    """
    if isinstance(columns, str) or not isinstance(columns, Iterable):
        raise ValidationError(f"{name}: give a list of column names, not {columns!r}")
    wanted = list(columns)
    unknown = [c for c in wanted if c not in known]
    if unknown:
        raise ValidationError(
            f"{name}: no such column {', '.join(map(repr, unknown))}; the columns are "
            f"{', '.join(known)}"
        )
    return wanted
