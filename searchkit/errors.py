"""Exceptions raised by searchkit.

The hierarchy::

    SearchKitError
    ├── ConfigError                 bad or half-set credentials / base URL
    ├── ValidationError             (also ValueError) bad input, 400, 422
    ├── TimestampError              (also ValueError) a throughput text that does not parse
    ├── AuthenticationError         401
    ├── PermissionDeniedError       403, e.g. a read-only account creating
    ├── NotFoundError               404
    ├── RateLimitError              429, carries ``retry_after``
    ├── ServerError                 5xx
    ├── TransportError              connect/read failures, timeouts
    ├── InvalidResponseError        not JSON, wrong shape, truncated
    └── AmbiguousCreateError        a create whose outcome cannot be known

Every error raised for an HTTP exchange carries ``status``, ``method``, ``path`` and the
server's ``server_message``; its text never contains a token or a password.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "AmbiguousCreateError",
    "AuthenticationError",
    "ConfigError",
    "InvalidResponseError",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "SearchKitError",
    "ServerError",
    "TimestampError",
    "TransportError",
    "ValidationError",
    "error_for_status",
    "redact",
    "server_message",
]

#: Longest server message kept in an exception, so a huge error page cannot flood a notebook.
MAX_MESSAGE_CHARS = 300

# Values of these keys are masked wherever they show up in text we did not write ourselves.
_SECRET_KEYS = ("token", "read_only_token", "password", "authorization")
_SECRET_PAIR = re.compile(
    r"""(?ix)
    (["']?(?:read_only_token|token|password|secret|authorization)["']?\s*[:=]\s*)
    (["']?)(?:Basic\s+)?[^"',\s}]+(["']?)
    """
)
_BASIC = re.compile(r"(?i)\bBasic\s+[A-Za-z0-9+/=]{8,}")


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Return ``text`` with known secret values and secret-looking pairs masked.

    Args:
        text: Any text that may echo a request or a response.
        secrets: Exact values to mask wherever they occur (tokens, the password).

    Returns:
        The text with each secret replaced by ``***``.
    """
    for secret in secrets:
        # Very short values would mask ordinary words; real secrets are long.
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    text = _BASIC.sub("Basic ***", text)
    return _SECRET_PAIR.sub(r"\1\2***\3", text)


class SearchKitError(Exception):
    """Base class of every error searchkit raises."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        method: str | None = None,
        path: str | None = None,
        server_message: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.method = method
        self.path = path
        self.server_message = server_message


class ConfigError(SearchKitError):
    """Credentials or the base URL are missing, half-set or unsafe."""


class ValidationError(SearchKitError, ValueError):
    """A field was refused, by the client's own checks or by the service (400/422)."""


class TimestampError(SearchKitError, ValueError):
    """A throughput timestamp text does not parse."""


class AuthenticationError(SearchKitError):
    """The service refused the credentials (401)."""


class PermissionDeniedError(SearchKitError):
    """The account may not do this (403), e.g. a read-only account creating."""


class NotFoundError(SearchKitError):
    """The service does not know the path (404)."""


class RateLimitError(SearchKitError):
    """The service asks us to slow down (429); ``retry_after`` is in seconds when known."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: object) -> None:
        super().__init__(message, **kwargs)  # type: ignore[arg-type]
        self.retry_after = retry_after


class ServerError(SearchKitError):
    """The service failed (5xx)."""


class TransportError(SearchKitError):
    """The request did not complete: refused, reset, timed out.

    ``sent`` is False when the request surely never reached the service (connection
    refused, connect timeout), so repeating it is safe.
    """

    def __init__(self, message: str, *, sent: bool = True, **kwargs: object) -> None:
        super().__init__(message, **kwargs)  # type: ignore[arg-type]
        self.sent = sent


class InvalidResponseError(SearchKitError):
    """The response is not JSON of the expected shape, or was cut short."""


class AmbiguousCreateError(SearchKitError):
    """A create may or may not have happened, and listing could not tell which."""


_BY_STATUS: dict[int, type[SearchKitError]] = {
    400: ValidationError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    422: ValidationError,
    429: RateLimitError,
}


def error_for_status(status: int) -> type[SearchKitError]:
    """Return the exception class for an HTTP error status.

    Args:
        status: An HTTP status code of 400 or above.

    Returns:
        The most specific class: 5xx map to ServerError, other 4xx to SearchKitError.
    """
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    if status >= 500:
        return ServerError
    return SearchKitError


def server_message(
    body: bytes | str | None,
    *,
    limit: int = MAX_MESSAGE_CHARS,
    secrets: Iterable[str | None] | None = None,
) -> str | None:
    """Extract the service's message from an error body.

    Takes ``error``, else ``message`` from a JSON object (``{"code", "message"}`` included),
    else the body text cut short; ``None`` for an empty body.

    Args:
        body: The raw response body.
        limit: Longest message kept; longer ones end in an ellipsis.
        secrets: When given, the message goes through :func:`redact` with these values
            before it is cut, so a secret straddling the cut leaves no readable prefix.

    Returns:
        A one-line message, or None when the body says nothing.
    """
    import json

    if body is None:
        return None
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    text = text.strip()
    if not text:
        return None
    message: object = None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict):
        for key in ("error", "message", "detail"):
            value = data.get(key)
            if isinstance(value, dict):
                value = value.get("message") or value.get("error")
            if isinstance(value, str | int | float) and str(value).strip():
                message = str(value)
                break
    elif isinstance(data, str) and data.strip():
        message = data
    if message is None:
        message = text
    one_line = " ".join(str(message).split())
    if secrets is not None:
        one_line = redact(one_line, secrets)
    if len(one_line) > limit:
        one_line = one_line[: limit - 1].rstrip() + "…"
    return one_line
