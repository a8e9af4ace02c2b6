"""Where credentials and the base URL come from, and the rules they must meet.

Sources, in order: arguments, then the environment (``SEARCHKIT_USERNAME``,
``SEARCHKIT_PASSWORD``, ``SEARCHKIT_BASE_URL``, and ``SEARCHKIT_TIMEOUT`` for the default
timeout). A source is taken whole or not at all: a
username without a password is an error, never completed from another source. Basic
credentials travel only over https, except to a loopback host (the emulator).
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from searchkit._net import is_loopback_host as is_loopback
from searchkit.errors import ConfigError, ValidationError

__all__ = [
    "DEFAULT_TIMEOUT",
    "ENV_BASE_URL",
    "ENV_PASSWORD",
    "ENV_TIMEOUT",
    "ENV_USERNAME",
    "Credentials",
    "is_loopback",
    "normalise_timeout",
    "parse_timeout",
    "positive",
    "resolve_base_url",
    "resolve_credentials",
    "validate_base_url",
]

ENV_USERNAME = "SEARCHKIT_USERNAME"
ENV_PASSWORD = "SEARCHKIT_PASSWORD"  # noqa: S105 - the variable's name, not a password
ENV_BASE_URL = "SEARCHKIT_BASE_URL"
ENV_TIMEOUT = "SEARCHKIT_TIMEOUT"
#: The path of the API under the base URL, appended to every request.
API_PATH = "/v2/search"


@dataclasses.dataclass(frozen=True, repr=False)
class Credentials:
    """An account's username and password, and which source they came from."""

    username: str
    password: str = dataclasses.field(repr=False)
    source: str = "arguments"

    def __repr__(self) -> str:
        return f"Credentials(username={self.username!r}, password='***', source={self.source!r})"


def resolve_credentials(
    username: str | None = None,
    password: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
) -> Credentials:
    """Return the credentials from the arguments, else from the environment.

    Args:
        username: Account username; given together with ``password`` or not at all.
        password: Account password.
        env: The environment to read (``os.environ`` by default).

    Returns:
        The credentials, with ``source`` naming where they came from.

    Raises:
        ConfigError: a source is half-set or empty, or no source is set; the message names
            what is missing, never the secret.
    """
    env = os.environ if env is None else env
    if username is not None or password is not None:
        missing = [n for n, v in (("username", username), ("password", password)) if not v]
        if missing:
            raise ConfigError(
                f"credentials passed as arguments are incomplete: {' and '.join(missing)} "
                "missing or empty (pass both username= and password=)"
            )
        return _checked(Credentials(str(username), str(password), "arguments"))
    env_user, env_pass = env.get(ENV_USERNAME), env.get(ENV_PASSWORD)
    if env_user is None and env_pass is None:
        raise ConfigError(
            f"no credentials: pass username= and password=, or set {ENV_USERNAME} and "
            f"{ENV_PASSWORD}"
        )
    missing = [n for n, v in ((ENV_USERNAME, env_user), (ENV_PASSWORD, env_pass)) if not v]
    if missing:
        raise ConfigError(
            f"credentials in the environment are incomplete: {' and '.join(missing)} "
            "is not set or empty (set both)"
        )
    return _checked(Credentials(str(env_user), str(env_pass), "environment"))


def _checked(credentials: Credentials) -> Credentials:
    # RFC 7617: the user-id of Basic auth cannot contain a colon.
    if ":" in credentials.username:
        raise ConfigError(
            f"username from {credentials.source} contains ':', which Basic authentication "
            "cannot carry"
        )
    if any(c in credentials.username for c in "\r\n") or any(
        c in credentials.password for c in "\r\n"
    ):
        raise ConfigError(f"credentials from {credentials.source} contain a line break")
    # Sent as UTF-8 (RFC 7617); a lone surrogate has no UTF-8 form. Python's own error
    # would quote the whole text, password included, so say it without the value.
    for field, value in (("username", credentials.username), ("password", credentials.password)):
        if any("\ud800" <= c <= "\udfff" for c in value):
            raise ConfigError(
                f"{field} from {credentials.source} contains a lone surrogate character, "
                "which cannot be sent as UTF-8"
            )
    return credentials


def parse_timeout(
    text: str | None = None, *, env: Mapping[str, str] | None = None
) -> float | tuple[float, float] | None:
    """Return the timeout written in ``text``, else in ``SEARCHKIT_TIMEOUT``, else None.

    Args:
        text: ``"10"`` (seconds for connect and read) or ``"5,30"`` (connect, read).
        env: The environment to read (``os.environ`` by default).

    Raises:
        ConfigError: the text is not one or two positive numbers of seconds.
    """
    env = os.environ if env is None else env
    source = "timeout"
    if text is None:
        text = env.get(ENV_TIMEOUT)
        source = ENV_TIMEOUT
        if text is None or not text.strip():
            return None
    parts = [p.strip() for p in text.split(",")]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if len(values) not in (1, 2) or not all(0 < v < float("inf") for v in values):
        raise ConfigError(
            f"{source} must be seconds, one number or 'connect,read' (e.g. '10' or '5,30'), "
            f"got {text!r}"
        )
    return values[0] if len(values) == 1 else (values[0], values[1])


def resolve_base_url(base_url: str | None = None, *, env: Mapping[str, str] | None = None) -> str:
    """Return the validated base URL from the argument, else ``SEARCHKIT_BASE_URL``.

    Raises:
        ConfigError: none is set, or the URL breaks a rule of :func:`validate_base_url`.
    """
    env = os.environ if env is None else env
    if base_url is None:
        base_url = env.get(ENV_BASE_URL) or None
        if base_url is None:
            raise ConfigError(
                f"no service address: pass base_url= or set {ENV_BASE_URL} "
                "(e.g. https://api.example.com), or use searchkit.connect() for the emulator"
            )
    return validate_base_url(base_url)


def validate_base_url(url: str) -> str:
    """Check a base URL and return it normalised (no trailing slash).

    Rules: scheme http or https; a host; no user or password inside the URL; no query or
    fragment; plain http only to a loopback host, since Basic credentials would otherwise
    cross the network in clear text.

    Args:
        url: e.g. ``https://api.example.com`` or ``http://127.0.0.1:8787``.

    Returns:
        The URL without a trailing slash, nor a trailing ``/v2/search`` (which is appended
        per request).

    Raises:
        ConfigError: the rule broken, named.
    """
    if not isinstance(url, str) or not url.strip():
        raise ConfigError("base URL is empty")
    url = url.strip()
    # Python's own messages here may quote the address (a password in it included).
    try:
        parts = urlsplit(url)
    except ValueError:
        raise ConfigError(f"base URL is not a valid URL: {_shown(url)!r}") from None
    try:
        port = parts.port
    except ValueError:
        raise ConfigError(
            "base URL is not a valid URL: its port is not a number from 0 to 65535"
        ) from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise ConfigError(
            f"base URL must start with https:// (or http:// for loopback): {_shown(url)!r}"
        )
    if "@" in parts.netloc:
        # Also catches http://localhost@evil.example, whose real host is evil.example.
        raise ConfigError(
            "base URL must not contain a user or password (found '@' in the address); "
            "pass credentials as username=/password= or through the environment"
        )
    host = parts.hostname
    if not host:
        raise ConfigError(f"base URL has no host: {_shown(url)!r}")
    if parts.query or parts.fragment:
        raise ConfigError("base URL must not have a query string or fragment")
    if scheme == "http" and not is_loopback(host):
        raise ConfigError(
            f"refusing to send credentials over plain http to {host!r}: use https:// "
            "(plain http is allowed only to loopback addresses such as 127.0.0.1)"
        )
    netloc = host if ":" not in host else f"[{host}]"
    if port is not None:
        netloc = f"{netloc}:{port}"
    path = parts.path.rstrip("/")
    # "https://api.example.com/v2/search" is the address people copy from the API's docs:
    # searchkit appends that path itself, so it is dropped here rather than doubled.
    if path.endswith(API_PATH):
        path = path[: -len(API_PATH)].rstrip("/")
    return urlunsplit((scheme, netloc, path, "", ""))


def _shown(url: str) -> str:
    """Return ``url`` fit for a message: whatever precedes its last '@' is masked."""
    if "@" not in url:
        return url
    scheme = re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", url)
    prefix = scheme.group() if scheme and "@" not in scheme.group() else ""
    return f"{prefix}***@{url.rpartition('@')[2]}"


#: Seconds to connect and to read, used when no timeout is given (nor SEARCHKIT_TIMEOUT).
DEFAULT_TIMEOUT: tuple[float, float] = (5.0, 30.0)


def normalise_timeout(
    timeout: float | tuple[float, float] | None, source: str = "timeout"
) -> tuple[float, float]:
    if timeout is None:
        return DEFAULT_TIMEOUT
    pair = (timeout, timeout) if isinstance(timeout, int | float) else tuple(timeout)
    if len(pair) != 2 or not all(
        isinstance(t, int | float) and not isinstance(t, bool) and math.isfinite(t) and t > 0
        for t in pair
    ):
        raise ValidationError(
            f"{source} must be a positive number of seconds or a (connect, read) pair, "
            f"got {timeout!r}"
        )
    return (float(pair[0]), float(pair[1]))


def positive(value: object, name: str, *, whole: bool = False) -> Any:
    kind = int if whole else (int, float)
    if (
        not isinstance(value, kind)
        or isinstance(value, bool)
        or not math.isfinite(value)
        or value <= 0
    ):
        what = "a whole number" if whole else "a number"
        raise ValidationError(f"{name} must be {what} above 0, got {value!r}")
    return value
