"""The alerts file: rules (``[[rule]]``), where to send (``[[channel]]``), delivery limits.

One TOML file says everything the collector needs to warn::

    stalled_after = "30min"

    [[rule]]                       # when to warn: searchkit.alerts.rules
    name = "forecast"
    basis = "forecast"

    [[channel]]                    # where to send
    name = "ops"
    type = "webhook"               # webhook | email | log
    url_env = "OPS_WEBHOOK_URL"    # the URL from the environment (it carries a token)
    format = "slack"               # or "alertmanager" (the default)

    [[channel]]
    name = "mail"
    type = "email"
    host = "smtp.example.com"      # STARTTLS unless the server is this machine
    port = 587
    sender = "searchkit@example.com"
    to = ["ops@example.com"]
    username_env = "SEARCHKIT_SMTP_USERNAME"   # the defaults
    password_env = "SEARCHKIT_SMTP_PASSWORD"

    [delivery]
    budget = "10s"                 # most time sending may add to a collect round
    lease = "2min"                 # when another collector's unrecorded claim is taken over

Secrets come from the environment: an SMTP password only so (``password_env``), a webhook
URL preferably so (``url_env``; ``url`` in the file is accepted and kept as a secret).
Every error names the file and the line, and never shows a secret.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import tomllib

from searchkit.alerts.channels import Channel, EmailChannel, LogChannel, WebhookChannel
from searchkit.alerts.delivery import DEFAULT_BUDGET, DEFAULT_LEASE
from searchkit.alerts.incidents import STALLED_AFTER
from searchkit.alerts.rules import AlertRule, load_rules, table_lines
from searchkit.errors import ValidationError

__all__ = [
    "ENV_SMTP_PASSWORD",
    "ENV_SMTP_USERNAME",
    "AlertsConfig",
    "load_alerts",
]

ENV_SMTP_USERNAME = "SEARCHKIT_SMTP_USERNAME"
ENV_SMTP_PASSWORD = "SEARCHKIT_SMTP_PASSWORD"  # noqa: S105 - a variable name

_COMMON = ("name", "type", "timeout", "send_resolved")
_KEYS: dict[str, tuple[str, ...]] = {
    "webhook": (*_COMMON, "url", "url_env", "format", "receiver", "external_url", "allow_http"),
    "email": (
        *_COMMON,
        "host",
        "port",
        "sender",
        "to",
        "username",
        "username_env",
        "password_env",
        "starttls",
    ),
    "log": ("name", "type", "level", "send_resolved"),
}
_DELIVERY_KEYS = ("budget", "lease")


@dataclasses.dataclass(frozen=True, kw_only=True)
class AlertsConfig:
    """What an alerts file says.

    Attributes:
        rules: The rules, in the file's order.
        channels: Where messages go, in the file's order.
        stalled_after: When a collector that stored nothing raises its own incident.
        budget: Most seconds sending may add to a collect round.
        lease: Seconds after which an unrecorded claim of another collector is taken over.
        path: The file read.
    """

    rules: tuple[AlertRule, ...]
    channels: tuple[Channel, ...]
    stalled_after: pd.Timedelta = STALLED_AFTER
    budget: float = DEFAULT_BUDGET
    lease: float = DEFAULT_LEASE
    path: str = ""


def load_alerts(path: str | Path, *, environ: Mapping[str, str] | None = None) -> AlertsConfig:
    """Read an alerts file: its rules, channels and delivery limits.

    Args:
        path: The TOML file.
        environ: Where ``url_env``, ``username_env`` and ``password_env`` are looked up
            (default ``os.environ``).

    Raises:
        ValidationError: The file cannot be read or is not TOML, a table or key is
            unknown, a value is wrong, an environment variable it names is not set, or
            two channels share a name; the message names the file and the line.
    """
    location = Path(path)
    rules, stalled = load_rules(location, others=("channel", "delivery"))
    text = location.read_text(encoding="utf-8")  # load_rules read it: it is TOML
    data = tomllib.loads(text)
    env = os.environ if environ is None else environ
    channels = _channels(location, text, data.get("channel", []), env)
    budget, lease = _delivery(location, text, data.get("delivery", {}))
    names = [channel.name for channel in channels]
    for rule in rules:
        unknown = [name for name in rule.channels if name not in names]
        if unknown:
            raise ValidationError(
                f"{rule.source}: rule {rule.name!r}: channels {unknown} are not among the "
                f"[[channel]] tables ({', '.join(names) or 'none'})"
            )
    return AlertsConfig(
        rules=rules,
        channels=channels,
        stalled_after=STALLED_AFTER if stalled is None else stalled,
        budget=budget,
        lease=lease,
        path=str(location),
    )


def _channels(
    location: Path, text: str, tables: Any, env: Mapping[str, str]
) -> tuple[Channel, ...]:
    starts, keys, _ = table_lines(text, "channel")
    if not isinstance(tables, list):
        line = starts[0] if starts else "?"
        raise ValidationError(f"{location}, line {line}: write each channel as a [[channel]] table")
    channels: list[Channel] = []
    for number, table in enumerate(tables):
        start = starts[number] if number < len(starts) else "?"
        where = _Where(location, number, start, keys)
        if not isinstance(table, dict):
            raise ValidationError(f"{location}, line {start}: a channel must be a table")
        channel = _channel(where, table, env)
        for other in channels:
            if other.name == channel.name:
                raise ValidationError(
                    f"{where.at('name')}: a second channel named {channel.name!r}; names "
                    "must be unique (deliveries are recorded by it)"
                )
        channels.append(channel)
    return tuple(channels)


@dataclasses.dataclass(frozen=True)
class _Where:
    """Names the line of a channel's key in errors."""

    location: Path
    number: int
    start: int | str
    keys: dict[tuple[int, str], int]

    def at(self, key: str | None = None) -> str:
        line = self.keys.get((self.number, key), self.start) if key else self.start
        return f"{self.location}, line {line}: channel {self.number + 1}"

    def fail(self, key: str | None, message: str) -> ValidationError:
        return ValidationError(f"{self.at(key)}: {message}")


def _channel(where: _Where, table: dict[str, Any], env: Mapping[str, str]) -> Channel:
    kind = table.get("type")
    if kind not in _KEYS:
        raise where.fail("type", f"type must be 'webhook', 'email' or 'log', got {kind!r}")
    for key in table:
        if key == "password":
            raise where.fail(
                key,
                "a password is not written in the file: put it in an environment variable "
                f"and name that with password_env (default {ENV_SMTP_PASSWORD})",
            )
        if key not in _KEYS[kind]:
            raise where.fail(
                key, f"unknown field {key!r} (a {kind} channel takes {', '.join(_KEYS[kind])})"
            )
    name = _text(where, table, "name", f"{kind}-{where.number + 1}")
    options: dict[str, Any] = {"name": name}
    if "send_resolved" in table:
        options["send_resolved"] = _flag(where, table, "send_resolved")
    if "timeout" in table:
        options["timeout"] = _seconds(where, table, "timeout", upper=300.0)
    if kind == "webhook":
        return _webhook(where, table, env, options)
    if kind == "email":
        return _email(where, table, env, options)
    options.pop("timeout", None)
    level = _text(where, table, "level", "WARNING").upper()
    try:
        return LogChannel(level=level, **options)
    except ValidationError as exc:
        raise where.fail("level", exc.message) from None


def _webhook(
    where: _Where, table: dict[str, Any], env: Mapping[str, str], options: dict[str, Any]
) -> Channel:
    if ("url" in table) == ("url_env" in table):
        raise where.fail(None, "a webhook takes url_env (recommended) or url, exactly one")
    if "url_env" in table:
        url = _from_env(where, table, "url_env", env, required=True)
    else:
        url = _text(where, table, "url", "")
    fmt = _text(where, table, "format", "alertmanager")
    try:
        return WebhookChannel(
            url,
            format=fmt,
            receiver=_text(where, table, "receiver", "") or None,
            external_url=_text(where, table, "external_url", ""),
            allow_http=_flag(where, table, "allow_http") if "allow_http" in table else False,
            **options,
        )
    except ValidationError as exc:
        key = "format" if "format" in exc.message else "url_env" if "url_env" in table else "url"
        raise where.fail(key, exc.message) from None


def _email(
    where: _Where, table: dict[str, Any], env: Mapping[str, str], options: dict[str, Any]
) -> Channel:
    to = table.get("to")
    if isinstance(to, str):
        to = [to]
    if not isinstance(to, list) or not all(isinstance(a, str) for a in to):
        raise where.fail("to", "to must be an address or a list of addresses")
    port = table.get("port")
    if port is not None and (
        not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536
    ):
        raise where.fail("port", f"port must be a number from 1 to 65535, got {port!r}")
    username = table.get("username")
    if username is None:
        username = _from_env(
            where, {"username_env": ENV_SMTP_USERNAME, **table}, "username_env", env
        )
    password = _from_env(where, {"password_env": ENV_SMTP_PASSWORD, **table}, "password_env", env)
    if username and not password:
        variable = table.get("password_env", ENV_SMTP_PASSWORD)
        raise where.fail(
            "password_env",
            f"a login ({username!r}) without a password: set the environment variable {variable}",
        )
    try:
        return EmailChannel(
            _text(where, table, "host", ""),
            port=port,
            sender=_text(where, table, "sender", ""),
            to=list(to),
            username=username or None,
            password=password or None,
            starttls=_flag(where, table, "starttls") if "starttls" in table else None,
            **options,
        )
    except ValidationError as exc:
        words = exc.message
        key = next((k for k in ("host", "sender", "to", "starttls") if f" {k} " in words), None)
        raise where.fail(key, words) from None


def _from_env(
    where: _Where, table: dict[str, Any], key: str, env: Mapping[str, str], required: bool = False
) -> str:
    variable = _text(where, table, key, "")
    value = env.get(variable, "") if variable else ""
    if required and not value.strip():
        raise where.fail(key, f"the environment variable {variable} ({key}) is not set")
    return value


def _text(where: _Where, table: dict[str, Any], key: str, default: str) -> str:
    value = table.get(key, default)
    if not isinstance(value, str):
        raise where.fail(key, f"{key} must be text, got {value!r}")
    return value


def _flag(where: _Where, table: dict[str, Any], key: str) -> bool:
    value = table[key]
    if not isinstance(value, bool):
        raise where.fail(key, f"{key} must be true or false, got {value!r}")
    return value


def _seconds(where: _Where, table: dict[str, Any], key: str, *, upper: float) -> float:
    value = table[key]
    seconds = _duration_seconds(value)
    if seconds is None or not 0 < seconds <= upper:
        raise where.fail(
            key,
            f'{key} must be a duration above 0 and at most {upper:g} s ("10s", "2min" or '
            f"seconds), got {value!r}",
        )
    return seconds


def _duration_seconds(value: Any) -> float | None:
    """Seconds of a number or a duration text; None when it is neither (or not finite)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        try:
            delta = pd.Timedelta(value)
        except (ValueError, TypeError, OverflowError):
            return None
        if pd.isna(delta):
            return None
        seconds = delta.total_seconds()
    else:
        return None
    return seconds if math.isfinite(seconds) else None


def _delivery(location: Path, text: str, table: Any) -> tuple[float, float]:
    starts, keys, _ = table_lines(text, "delivery")
    start = starts[0] if starts else "?"
    if not isinstance(table, dict):
        raise ValidationError(f"{location}, line {start}: [delivery] must be one table")
    for key in table:
        if key not in _DELIVERY_KEYS:
            raise ValidationError(
                f"{location}, line {keys.get((0, key), start)}: [delivery]: unknown field "
                f"{key!r} (it takes {', '.join(_DELIVERY_KEYS)})"
            )
    out = []
    for key, default, upper in (
        ("budget", DEFAULT_BUDGET, 300.0),
        ("lease", DEFAULT_LEASE, 86400.0),
    ):
        if key not in table:
            out.append(default)
            continue
        seconds = _duration_seconds(table[key])
        if seconds is None or not 0 < seconds <= upper:
            raise ValidationError(
                f"{location}, line {keys.get((0, key), start)}: [delivery]: {key} must be a "
                f'duration above 0 and at most {upper:g} s ("10s", "2min" or seconds), got '
                f"{table[key]!r}"
            )
        out.append(seconds)
    return out[0], out[1]
