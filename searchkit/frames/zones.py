"""Times and zones people give: an IANA name or tzinfo, an instant as text, number or datetime.

The one place where searchkit turns a user's time zone (:func:`resolve_zone`) or a user's
instant (:func:`utc_instant`) into an object: frames, plots, widgets, analytics and the
history all call these, so they accept and refuse the same things.
"""

from __future__ import annotations

import datetime as dt
import difflib
import functools
import zoneinfo

import numpy as np
import pandas as pd

from searchkit.errors import ValidationError

__all__ = ["Instant", "TimeZone", "resolve_zone", "utc_instant", "zone_name"]

#: A time zone: an IANA name such as ``"Europe/Berlin"`` or a ``tzinfo``; None for the default.
TimeZone = str | dt.tzinfo | None
#: An instant a person gives: epoch seconds, a text pandas reads, a datetime or Timestamp.
Instant = int | float | str | dt.datetime | dt.date | np.datetime64 | pd.Timestamp


@functools.lru_cache(maxsize=1)
def _zone_names() -> tuple[str, ...]:
    return tuple(sorted(zoneinfo.available_timezones()))


def _zone_suggestion(name: str) -> str:
    """Return a hint naming the IANA zones ``name`` probably meant ("" when none)."""
    names = _zone_names()
    folded = name.strip().lower().replace(" ", "_")
    # "Berlin" -> "Europe/Berlin": a city typed without its region.
    exact = [z for z in names if z.lower().rsplit("/", 1)[-1] == folded]
    close = exact or [
        z
        for z in difflib.get_close_matches(folded, [z.lower() for z in names], n=3, cutoff=0.75)
        for z in [next(n for n in names if n.lower() == z)]
    ]
    if not close:
        return ""
    return "; did you mean " + " or ".join(repr(z) for z in close[:3]) + "?"


def resolve_zone(tz: TimeZone, *, default: dt.tzinfo | None = None) -> dt.tzinfo | None:
    """Return the ``tzinfo`` for a zone given as an IANA name or a ``tzinfo``.

    The one place where searchkit turns a user's time zone into an object: frames, plots,
    widgets and the history all call it, so they accept and refuse the same things.

    Args:
        tz: An IANA name (``"Europe/Berlin"``, ``"UTC"``), a ``tzinfo``, or None.
        default: What None gives.

    Returns:
        The zone (``datetime.timezone.utc`` for ``"UTC"``), or ``default`` for None.

    Raises:
        ValidationError: ``tz`` is not a known zone; the message suggests close names
            (``"Berlin"`` suggests ``"Europe/Berlin"``).

    Example:
        >>> resolve_zone("Europe/Berlin")
        zoneinfo.ZoneInfo(key='Europe/Berlin')
    """
    if tz is None:
        return default
    if isinstance(tz, dt.tzinfo):
        return tz
    if not isinstance(tz, str):
        raise ValidationError(
            f"a time zone is an IANA name such as 'Europe/Berlin' or a tzinfo, "
            f"got {type(tz).__name__}"
        )
    if tz.upper() in ("UTC", "Z"):
        return dt.timezone.utc
    try:
        return zoneinfo.ZoneInfo(tz)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise ValidationError(f"unknown time zone {tz!r}{_zone_suggestion(tz)}") from exc


def zone_name(tz: TimeZone) -> str:
    """Return the IANA name of a zone given as :func:`resolve_zone` takes it ("UTC" for
    None): what a widget's zone menu shows and reads back.

    Raises:
        ValidationError: ``tz`` is not a known zone, or a ``tzinfo`` without an IANA name
            (a fixed offset): a menu of zones cannot show it.
    """
    zone = resolve_zone(tz, default=dt.timezone.utc)
    if zone is dt.timezone.utc:
        return "UTC"
    if isinstance(zone, zoneinfo.ZoneInfo):
        return zone.key
    raise ValidationError(
        f"a widget's time zone is an IANA name such as 'Europe/Berlin' (or its ZoneInfo), "
        f"got {tz!r}, which has none"
    )


def utc_instant(value: Instant | None, name: str = "instant") -> pd.Timestamp | None:
    """Return a time a user gave as an aware UTC Timestamp (None stays None).

    Numbers are epoch seconds; texts, datetimes and Timestamps without a zone are read as
    UTC, the toolkit's convention; aware ones are converted.

    Args:
        value: The time as given.
        name: The argument's name, for the error.

    Raises:
        ValidationError: ``value`` is no time (unreadable text, NaT, NaN, a bool), or lies
            outside the instants a nanosecond timestamp holds (1677-09-21 to 2262-04-11),
            e.g. ``"1600"`` or epoch milliseconds taken as seconds; the message names
            ``name``.

    Example:
        >>> utc_instant("2026-11-20 06:00")
        Timestamp('2026-11-20 06:00:00+0000', tz='UTC')
        >>> utc_instant(0)
        Timestamp('1970-01-01 00:00:00+0000', tz='UTC')
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValidationError(f"{name} must be a time, got {value!r}")
    try:
        if isinstance(value, int | float):
            if not np.isfinite(value):
                raise ValueError("not a finite number")
            stamp = pd.Timestamp(round(value * 1e9), unit="ns", tz="UTC")  # epoch seconds
        else:
            stamp = pd.Timestamp(value)
        if pd.isna(stamp):
            raise ValueError("NaT")
        stamp = stamp.as_unit("ns")  # out of range raises here, not later in arithmetic
    except (ValueError, TypeError, OverflowError) as exc:
        hint = (
            " (a number this large is not epoch seconds: milliseconds?)"
            if isinstance(value, int | float) and abs(value) >= 1e11
            else ""
        )
        raise ValidationError(
            f"{name} must be a time from 1677-09-21 to 2262-04-11, got {value!r}{hint}"
        ) from exc
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
