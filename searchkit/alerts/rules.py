"""When to warn: :class:`AlertRule`, the default rule, and rules files (TOML).

A rule watches one daily limit of the indexes whose names match a glob and fires when
either the forecast (``basis="forecast"``: the projected total at the reset, or an end of
its band) or what was used so far (``basis="used"``: the vendors' classic "80% used"
e-mail) reaches ``at`` times the limit. :func:`~searchkit.backtest_alerts` replays rules on
a stored history so that a user sees, on their own indexes, what each would have said.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import fnmatch
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd
import tomllib

from searchkit.errors import ValidationError

__all__ = [
    "BANDS",
    "BASES",
    "DEFAULT_RULE",
    "FIELDS",
    "THRESHOLD_RULES",
    "AlertRule",
    "TableLines",
    "check_indexes",
    "load_rules",
    "table_lines",
]

#: What a rule compares with its threshold.
BASES: tuple[str, ...] = ("forecast", "used")
#: The forecast's figures a ``basis="forecast"`` rule may compare (its centre or an end).
BANDS: tuple[str, ...] = ("projected", "projected_high", "projected_low")
#: The limits a rule may watch: None is their sum, as :func:`~searchkit.forecast_limits`.
FIELDS: tuple[str | None, ...] = (None, "max_daily_queries", "max_daily_updates")
_NO_WAIT = pd.Timedelta(0)
_HOLD = pd.Timedelta(hours=4)
_MAX_AT = 10.0  # ten times the limit: anything above is a typo (a percentage?)


def _duration(value: Any, what: str) -> pd.Timedelta:
    try:
        delta = pd.Timedelta(value)
    except (ValueError, TypeError, OverflowError) as exc:
        raise ValidationError(f'{what} must be a duration such as "2h", got {value!r}') from exc
    if pd.isna(delta) or delta < pd.Timedelta(0) or delta > pd.Timedelta(days=1):
        raise ValidationError(f"{what} must be a duration from 0 to 1 day, got {value!r}")
    return delta


@dataclass(frozen=True, kw_only=True)
class AlertRule:
    """When to warn that a daily limit will be (or is being) used up.

    Args:
        name: Names the rule in incidents and messages; unique among the rules watched
            together (an incident's key is made from it). Default: made from the others,
            e.g. ``"projected low >= 100%"`` or ``"used >= 80%"``.
        basis: ``"forecast"``: fire when the forecast of the day's total (``band``)
            reaches ``at`` x the limit before the reset; ``"used"``: when what was used
            so far does.
        at: The threshold as a share of the limit (0.8 is 80%), above 0 and at most 10.
        band: For ``basis="forecast"``, which figure of the forecast is compared:
            ``"projected_low"`` (the band's low end: the default's), ``"projected"``
            (its centre: earlier, more false alarms) or ``"projected_high"`` (earlier
            still, more still).
        field: ``"max_daily_queries"``, ``"max_daily_updates"``, or None (their sum, as
            :func:`~searchkit.forecast_limits` takes it).
        indexes: A glob (``fnmatch``) of the index names watched; ``"*"`` is all.
        pending: How long the condition must hold before the incident fires (Grafana's
            "for"); 0 fires at the first evaluation that sees it.
        hold: How long a firing incident must stay back under before it resolves
            (default 4 hours): a forecast that wobbles around the threshold does not
            fire, resolve and fire again.
        clear: For ``basis="forecast"``, the figure of the forecast that must stay
            under ``at`` x the limit for ``hold`` to resolve (hysteresis); default: the
            same as ``band`` when ``band`` is given, else ``"projected_high"`` (the
            default rule's).
        channels: The names of the channels its notifications go to; empty (default):
            every channel.
        source: Where the rule was read from (file and line), for error messages; not
            compared.

    Raises:
        ValidationError: A value is out of range or not one of the choices.

    Example:
        >>> sk.AlertRule(basis="used", at=0.8)  # doctest: +SKIP
    """

    name: str = ""
    basis: str = "forecast"
    at: float = 1.0
    band: str = ""
    field: str | None = None
    indexes: str = "*"
    pending: pd.Timedelta | dt.timedelta | str = _NO_WAIT
    hold: pd.Timedelta | dt.timedelta | str = _HOLD
    clear: str = ""
    channels: tuple[str, ...] = ()
    source: str = dataclasses.field(default="", compare=False, repr=False)

    def __post_init__(self) -> None:
        where = f"{self.source}: " if self.source else ""
        try:
            self._check()
        except ValidationError as exc:
            raise ValidationError(f"{where}{exc}") from None

    def _check(self) -> None:
        if self.basis not in BASES:
            raise ValidationError(f"basis must be one of {list(BASES)}, got {self.basis!r}")
        if self.band and self.band not in BANDS:
            raise ValidationError(f"band must be one of {list(BANDS)}, got {self.band!r}")
        if self.clear and self.clear not in BANDS:
            raise ValidationError(f"clear must be one of {list(BANDS)}, got {self.clear!r}")
        if self.basis == "used":
            for name in ("band", "clear"):
                if getattr(self, name) not in ("", "projected"):
                    value = getattr(self, name)
                    raise ValidationError(f'{name}={value!r} needs basis="forecast"')
            object.__setattr__(self, "band", "projected")
            object.__setattr__(self, "clear", "projected")
        elif not self.band:  # the default rule's pair
            object.__setattr__(self, "band", "projected_low")
            object.__setattr__(self, "clear", self.clear or "projected_high")
        else:
            object.__setattr__(self, "clear", self.clear or self.band)
        if self.field not in FIELDS:
            raise ValidationError(
                f"field must be None (queries and updates together), 'max_daily_queries' or "
                f"'max_daily_updates', got {self.field!r}: only daily operation limits can "
                "be used up by throughput"
            )
        at = self.at
        if isinstance(at, bool) or not isinstance(at, int | float):
            raise ValidationError(f"at must be a number (a share of the limit), got {at!r}")
        if not math.isfinite(at) or not 0 < at <= _MAX_AT:
            raise ValidationError(
                f"at must be a share of the limit above 0 and at most {_MAX_AT:g} "
                f"(0.8 is 80%), got {at!r}"
            )
        if not isinstance(self.indexes, str) or not self.indexes:
            raise ValidationError(f"indexes must be a glob of index names, got {self.indexes!r}")
        channels = (self.channels,) if isinstance(self.channels, str) else self.channels
        if not all(isinstance(c, str) and c for c in channels):
            raise ValidationError(f"channels must be channel names, got {self.channels!r}")
        object.__setattr__(self, "channels", tuple(channels))
        if not isinstance(self.name, str):
            raise ValidationError(f"name must be text, got {self.name!r}")
        object.__setattr__(self, "at", float(at))
        object.__setattr__(self, "pending", _duration(self.pending, "pending"))
        object.__setattr__(self, "hold", _duration(self.hold, "hold"))
        if not self.name:
            what = "used" if self.basis == "used" else self.band.replace("_", " ")
            object.__setattr__(self, "name", f"{what} >= {self.at:.0%}")

    @property
    def pending_ns(self) -> int:
        """``pending`` in nanoseconds."""
        return int(pd.Timedelta(self.pending).value)

    @property
    def hold_ns(self) -> int:
        """``hold`` in nanoseconds."""
        return int(pd.Timedelta(self.hold).value)

    @property
    def label(self) -> str:
        """The limit's label as :func:`~searchkit.forecast_limits` writes it (``field``)."""
        return self.field or "max_daily_queries+max_daily_updates"

    def matches(self, names: Iterable[str]) -> list[bool]:
        """Whether each index name is watched by this rule."""
        return [fnmatch.fnmatchcase(str(n), self.indexes) for n in names]


DEFAULT_RULE = AlertRule(
    name="forecast",
    basis="forecast",
    band="projected_low",
    clear="projected_high",
    at=1.0,
    hold="4h",
)
"""The default rule: warn when even the low end of the forecast's band reaches the limit;
call it off when even the high end has stayed under the limit for 4 hours.

Why (``bench/alerts.py`` replays it every 10 minutes beside the vendors' "X% used" rules
on six real request-count traces of five families and on 24 synthetic ones, each day's
limit at the trace's median daily total, then at its 80th percentile): the low end of the
band lies under the day's real total about 9 times in 10, so a day it calls is nearly
always a day that breaches. On the real traces, limit at the median, it warned of all 218
breaches before they happened ("90% used", the quietest threshold rule: 217) with a
median lead of 13.9 hours (1.5 for "90% used", 8.5 for "50% used") at 0.23 false alerts
per index-week (1.6 for "90% used", 3.3 for "50% used"), and fired no incident twice; at
the 80th percentile 85 of 85, 12.2 hours, 0.21 (85, 1.5 hours, 2.4 for "90% used"). The
centre of the forecast fires about 8 hours earlier at five times the false alerts (1.2
per index-week); firing and resolving on the same end of the band flaps (fires, resolves,
fires again: 36 repeats in 433 index-days with a 2-hour hold); resolving on the other
end, after 4 hours, repeated nothing on the real traces and nothing on the synthetic.
What it misses: a day that crosses its limit in its last minutes while the low end of its
forecast stays just under (5 of 423 breaches of the synthetic traces, none of the real
ones), which "X% used" rules catch; a burst no forecast sees coming is warned of late.
"""

#: The vendors' classic rules, replayed beside the default by backtest_alerts.
THRESHOLD_RULES: tuple[AlertRule, ...] = tuple(
    AlertRule(name=f"used >= {pct}%", basis="used", at=pct / 100) for pct in (50, 70, 80, 90)
)


def check_indexes(rules: Iterable[AlertRule], names: Iterable[str]) -> None:
    """Refuse a rule whose glob matches none of the indexes' ``names``.

    Raises:
        ValidationError: Naming the rule, where it was read from, and the glob.
    """
    known = [str(n) for n in names]
    for rule in rules:
        if rule.indexes != "*" and not any(rule.matches(known)):
            where = f"{rule.source}: " if rule.source else ""
            shown = ", ".join(sorted(known)[:5]) + (", ..." if len(known) > 5 else "")
            raise ValidationError(
                f"{where}rule {rule.name!r}: indexes={rule.indexes!r} matches none of the "
                f"{len(known)} indexes ({shown or 'none stored'})"
            )


# --------------------------------------------------------------------------------------
# Rules files

_KEY = re.compile(r'^\s*(?:"([^"]*)"|\'([^\']*)\'|([A-Za-z0-9_-]+))\s*=')
_HEADER = re.compile(r"^\s*\[")
_NAMED = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_.-]+)\s*\]\]?")
_TOP_KEYS = ("stalled_after",)


class TableLines(NamedTuple):
    """Where things are in a TOML text, for error messages that name the line (1-based)."""

    #: The header line of each ``[[table]]`` (or ``[table]``), in order.
    starts: list[int]
    #: The line of each key of those tables, by (table number from 0, key).
    keys: dict[tuple[int, str], int]
    #: The lines of the top-level keys (before any table).
    top: dict[str, int]


def table_lines(text: str, table: str) -> TableLines:
    """Find the lines of ``table``'s headers and keys, and of the top-level keys, in a
    TOML text: the one line finder of every alerts file error (rules, channels, delivery)."""
    starts: list[int] = []
    keys: dict[tuple[int, str], int] = {}
    top: dict[str, int] = {}
    section: str | None = ""  # "": the top level, before any table
    for number, line in enumerate(text.splitlines(), start=1):
        if _HEADER.match(line):
            named = _NAMED.match(line)
            section = table if named is not None and named.group(1) == table else None
            if section is not None:
                starts.append(number)
            continue
        found = _KEY.match(line)
        if found is None:
            continue
        key = next(g for g in found.groups() if g is not None)
        if section == "":
            top.setdefault(key, number)
        elif section is not None:
            keys.setdefault((len(starts) - 1, key), number)
    return TableLines(starts, keys, top)


def load_rules(
    path: str | Path, *, others: Iterable[str] = ("channel",)
) -> tuple[tuple[AlertRule, ...], pd.Timedelta | None]:
    """Read alert rules from a TOML file: one ``[[rule]]`` table per rule.

    Each table takes :class:`AlertRule`'s arguments (durations as text, ``"2h"``); a
    top-level ``stalled_after = "30min"`` sets when a collector that stored nothing
    raises its own incident. Tables named in ``others`` (``[[channel]]``: where to send)
    are left to their own reader.

    Example file::

        stalled_after = "30min"

        [[rule]]
        name = "forecast"
        basis = "forecast"
        at = 1.0

        [[rule]]
        name = "80% used"
        basis = "used"
        at = 0.8
        indexes = "prod-*"

    Returns:
        The rules (in the file's order) and ``stalled_after`` (None when not set).

    Raises:
        ValidationError: The file is not TOML, a table or a field is unknown, a value is
            out of range (``at = -1`` or ``1e309``), or two rules share a name; the
            message names the file and the line.
    """
    location = Path(path)
    try:
        text = location.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationError(f"cannot read the rules file {str(location)!r}: {exc}") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValidationError(f"{location}: not a TOML file: {exc}") from exc
    starts, keys, top = table_lines(text, "rule")
    allowed = {"rule", *_TOP_KEYS, *others}
    for key in data:
        if key not in allowed:
            line = top.get(key) or next(iter(table_lines(text, key).starts), "?")
            raise ValidationError(
                f"{location}, line {line}: unknown table or key {key!r} (a rules file holds "
                f"[[rule]] tables{', ' if others else ''}"
                f"{', '.join(f'[[{o}]]' for o in others)} and {', '.join(_TOP_KEYS)})"
            )
    stalled = None
    if "stalled_after" in data:
        where = f"{location}, line {top.get('stalled_after', '?')}"
        try:
            stalled = _duration(data["stalled_after"], "stalled_after")
        except ValidationError as exc:
            raise ValidationError(f"{where}: {exc}") from None
        if stalled <= pd.Timedelta(0):
            raise ValidationError(f"{where}: stalled_after must be above 0")
    tables = data.get("rule", [])
    if not isinstance(tables, list):
        line = top.get("rule") or next(iter(starts), "?")
        raise ValidationError(f"{location}, line {line}: write each rule as a [[rule]] table")
    rules = [_rule(location, number, table, starts, keys) for number, table in enumerate(tables)]
    seen: dict[str, AlertRule] = {}
    for rule in rules:
        if rule.name in seen:
            raise ValidationError(
                f"{rule.source}: a second rule named {rule.name!r} (the first: "
                f"{seen[rule.name].source}); names must be unique"
            )
        seen[rule.name] = rule
    return tuple(rules), stalled


def _rule(
    location: Path,
    number: int,
    table: Any,
    starts: list[int],
    keys: dict[tuple[int, str], int],
) -> AlertRule:
    """One ``[[rule]]`` table as an AlertRule; errors name the line of the bad key."""
    start = starts[number] if number < len(starts) else "?"
    if not isinstance(table, dict):
        raise ValidationError(f"{location}, line {start}: a rule must be a table")
    known = [f.name for f in fields(AlertRule) if f.name != "source"]
    for key in table:
        if key not in known:
            raise ValidationError(
                f"{location}, line {keys.get((number, key), start)}: rule {number + 1}: "
                f"unknown field {key!r} (a rule takes {', '.join(known)})"
            )
    source = f"{location}, line {start}"
    try:
        return AlertRule(**table, source=source)
    except ValidationError as exc:
        bad = _bad_key(str(exc), table)
        line = keys.get((number, bad), start) if bad else start
        message = str(exc).removeprefix(f"{source}: ")
        raise ValidationError(f"{location}, line {line}: rule {number + 1}: {message}") from None


def _bad_key(message: str, table: dict[str, Any]) -> str | None:
    """The field an AlertRule error is about (its message starts with the field's name)."""
    text = message.split(": ", 1)[-1]
    for key in table:
        if text.startswith(f"{key} ") or text.startswith(f"{key}="):
            return str(key)
    return None
