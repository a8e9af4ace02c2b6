"""Exceptions raised by searchkit.

The hierarchy::

    SearchKitError
    ├── ConfigError                 bad or half-set credentials / base URL
    ├── ValidationError             (also ValueError) bad input, 400, 422
    │   ├── IndexExistsError        create_index: the name is taken (if_exists="raise")
    │   └── UnknownIndexError       (also KeyError) no index has that name or id
    ├── TimestampError              (also ValueError) a throughput text that does not parse
    ├── AuthenticationError         401
    ├── PermissionDeniedError       403, e.g. a read-only account creating
    ├── NotFoundError               404
    ├── RateLimitError              429, carries ``retry_after``
    ├── ServerError                 5xx
    ├── TransportError              connect/read failures, timeouts
    ├── InvalidResponseError        not JSON, wrong shape, truncated
    ├── AmbiguousCreateError        a create whose outcome cannot be known
    ├── AmbiguousNameError          (also LookupError) a name that several indexes have
    └── HistoryError                the history cannot be read or written

Every error raised for an HTTP exchange carries ``status``, ``method``, ``path`` and the
server's ``server_message``; its text never contains a token or a password.

Warnings (``UserWarning``): ``IndexMismatchWarning`` (``if_exists="return"`` found an index
of another region or type), ``DuplicateIndexWarning`` (another caller created an index
of the same name while this create ran) and ``HistoryWarning`` (something in the history
that is not its layout was skipped).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "AmbiguousCreateError",
    "AmbiguousNameError",
    "AuthenticationError",
    "ConfigError",
    "DuplicateIndexWarning",
    "HistoryError",
    "HistoryWarning",
    "IndexExistsError",
    "IndexMismatchWarning",
    "InvalidResponseError",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "SearchKitError",
    "ServerError",
    "TimestampError",
    "TransportError",
    "UnknownIndexError",
    "ValidationError",
    "describe_failure",
    "error_for_status",
    "mask_url",
    "redact",
    "server_message",
]

#: Longest server message kept in an exception, so a huge error page cannot flood a notebook.
MAX_MESSAGE_CHARS = 300

# Values of these keys are masked wherever they show up in text we did not write ourselves.
_SECRET_PAIR = re.compile(
    r"""(?ix)
    (["']?(?:read_only_token|aws_secret_access_key|secret_access_key|secret_key|session_token
    |token|password|secret|authorization)["']?\s*[:=]\s*)
    (["']?)(?:Basic\s+)?[^"',\s}]+(["']?)
    """
)
_BASIC = re.compile(r"\bBasic(\s+)([A-Za-z0-9+/]+={0,2})(?![A-Za-z0-9+/=])", re.IGNORECASE)
# A URL's user information: ``s3://KEY:SECRET@bucket`` (the secret may hold a ``/`` or an
# ``@``, so it runs to the last ``@`` of the word) or a user part alone (``s3://TOKEN@bkt``).
_USERINFO = re.compile(r"""(?i)\b([a-z][a-z0-9+.\-]*://)(?:[^\s/@:'"]*:[^\s'"]*|[^\s/@:'"]+)@""")
# Query parameters that carry credentials (``?secret_key=...``, a presigned ``Signature``).
_QUERY_SECRET = re.compile(
    r"(?i)([?&][a-z0-9_\-]*(?:secret|token|password|passwd|signature|credential|access_key)"
    r"[a-z0-9_\-]*=)[^&#\s]*"
)
# A known secret at least this long is masked wherever it occurs; one of _WORD_MIN or more
# characters wherever it stands as a whole word. A shorter one is masked only where it
# stands as a value (after ``password=`` or ``token``, as a URL's password): masking every
# "a" of a text for a one-letter password would show where it is not, and so the password.
_BARE_MIN = 8
_WORD_MIN = 4
_VALUE_BEFORE = (
    r"(?i)((?<![A-Za-z0-9])(?:read_only_token|token|password|passwd|pwd|secret|key"
    r"|authorization|bearer)(?:[\"']?\s*[:=]\s*[\"']?|\s+)|://[^\s/@:]*:)"
)


def mask_url(text: str) -> str:
    """Return ``text`` with the credentials of every URL in it masked.

    A URL's user information (``s3://KEY:SECRET@bucket`` becomes ``s3://***@bucket``; a
    secret holding ``/`` or ``@`` and a user part alone, ``s3://TOKEN@bucket``, too) and
    query parameters that carry credentials (``secret_key``, ``session_token``,
    ``Signature``...) are replaced by ``***``; the rest (scheme, host, path) stays, so the
    text still says where.

    Example:
        >>> mask_url("s3://AKIA:se/cret@bucket/prefix?region=eu")
        's3://***@bucket/prefix?region=eu'
    """
    text = _USERINFO.sub(r"\1***@", text)
    return _QUERY_SECRET.sub(r"\1***", text)


def _is_credential(encoded: str) -> bool:
    """Whether ``encoded`` is Basic credentials: base64 of ``user:pass`` text."""
    try:
        raw = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return False
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    return ":" in text and text.isprintable()


def _mask_basic(match: re.Match[str]) -> str:
    if _is_credential(match.group(2)):
        return f"Basic{match.group(1)}***"
    return match.group(0)


def redact(text: str, secrets: Iterable[object] = ()) -> str:
    """Return ``text`` with known secret values and secret-looking pairs masked.

    A known secret of 8 characters or more is masked wherever it occurs, longest first
    (so a secret inside another leaves no piece); one of 4 to 7 wherever it stands as a
    whole word. A shorter one is masked only where it stands as a value: after
    ``password=``, ``token:`` or ``token``, or as a URL's password; elsewhere its letters
    are ordinary text (masking every ``a`` for a one-letter password would reveal it).
    Values of secret-looking pairs (``"token": "..."``, ``password=...``), URL
    credentials (see :func:`mask_url`) and ``Basic <value>`` are masked whatever they
    hold; ``Basic`` only when the value really is Basic credentials (base64 of
    ``user:pass``), so ordinary words after it stay.

    Args:
        text: Any text that may echo a request or a response.
        secrets: Exact values to mask (tokens, the password); a ``Secret`` object is read
            through its ``get_secret_value()``.

    Returns:
        The text with each secret replaced by ``***`` (never a hint of its length).
    """
    values = {_secret_text(s) for s in secrets}
    for secret in sorted((v for v in values if v), key=len, reverse=True):
        escaped = re.escape(secret)
        if len(secret) >= _BARE_MIN:
            text = text.replace(secret, "***")
        elif len(secret) >= _WORD_MIN:
            text = re.sub(rf"(?<![A-Za-z0-9]){escaped}(?![A-Za-z0-9])", "***", text)
        else:
            pattern = _VALUE_BEFORE + escaped + r"(?![A-Za-z0-9])"
            text = re.sub(pattern, lambda m: f"{m.group(1)}***", text)
            text = re.sub(rf"(?<=:){escaped}(?=@)", "***", text)  # user:SECRET@host
    text = mask_url(text)
    text = _BASIC.sub(_mask_basic, text)
    return _SECRET_PAIR.sub(r"\1\2***\3", text)


def _secret_text(secret: object) -> str:
    if secret is None:
        return ""
    value = getattr(secret, "get_secret_value", None)
    return str(value() if callable(value) else secret)


class SearchKitError(Exception):
    """Base class of every error searchkit raises.

    The fields are structured so that nobody has to parse the text: ``message`` is the
    reason alone; ``operation`` is what the user asked for ("list indexes", "create index
    'docs'"); ``method``, ``path`` and ``status`` describe the HTTP exchange that failed
    (which may be a list made on behalf of a create); ``url`` is the service's address;
    ``retries`` counts the retries actually made; ``server_message`` is the service's own
    words. ``str()`` composes them; :meth:`describe` says it in one plain sentence.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        method: str | None = None,
        path: str | None = None,
        server_message: str | None = None,
        operation: str | None = None,
        url: str | None = None,
        retries: int = 0,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.method = method
        self.path = path
        self.server_message = server_message
        self.operation = operation
        self.url = url
        self.retries = retries

    def __str__(self) -> str:
        exchange = ""
        if self.method and self.path:
            exchange = f"{self.method} {self.path}"
            if self.status is not None:
                exchange += f" -> {self.status}"
            elif self.url:
                exchange += f" to {self.url}"
        if self.operation and exchange:
            prefix = f"{self.operation} ({exchange})"
        else:
            prefix = self.operation or exchange
        text = f"{self.message}{self._after_retries()}"
        return f"{prefix}: {text}" if prefix else text

    @property
    def reason(self) -> str:
        """The service's words when it gave some, else the message, on one line."""
        return " ".join((self.server_message or self.message or type(self).__name__).split())

    @property
    def creating(self) -> bool:
        """Whether the failed operation was a create (so nothing was created, unless said)."""
        return (self.operation or "").startswith("create") or (
            self.operation is None and self.method == "POST"
        )

    def describe(self) -> str:
        """Say in one plain sentence what failed and what to do; see :func:`describe_failure`."""
        return _sentence(f"Could not {self._what()}: {self.reason}{self._nothing()}")

    def _what(self) -> str:
        if self.operation:
            return self.operation
        return "create the index" if self.creating else "complete the request"

    def _nothing(self) -> str:
        return "; nothing was created" if self.creating else ""

    def _after_retries(self) -> str:
        if self.retries <= 0:
            return ""
        return f" after {self.retries} {'retry' if self.retries == 1 else 'retries'}"


class ConfigError(SearchKitError):
    """Credentials or the base URL are missing, half-set or unsafe."""

    def describe(self) -> str:
        return _sentence(self.message)


class ValidationError(SearchKitError, ValueError):
    """A field was refused, by the client's own checks or by the service (400/422)."""

    def describe(self) -> str:
        if self.status is None:
            return _sentence(self.message)  # the client's own check: nothing was sent
        return _sentence(f"The service refused to {self._what()}: {self.reason}")


class IndexExistsError(ValidationError):
    """An index of that name exists, so ``create_index(if_exists="raise")`` made nothing.

    ``existing`` holds the indexes of that name (SearchIndex objects).
    """

    def __init__(self, name: str, existing: Sequence[Any], *, choosing: bool = False) -> None:
        described = "; ".join(
            f"id {getattr(i, 'id', None)}, region {_text(getattr(i, 'region', None))}, "
            f"type {_text(getattr(i, 'type', None))}"
            for i in existing
        )
        if choosing:
            message = (
                f"{len(existing)} indexes named {name!r} exist ({described}), so "
                "if_exists='return' cannot choose one; pick one by id from list_indexes()"
            )
        else:
            message = (
                f"an index named {name!r} already exists ({described}); nothing was created. "
                "Pass if_exists='return' to get it, or if_exists='create' to make another"
            )
        super().__init__(message)
        self.name = name
        self.existing = tuple(existing)


class UnknownIndexError(ValidationError, KeyError):
    """No index has the name (or id) asked for; the message lists the ones there are.

    Raised alike by ``indexes["name"]``, ``IndexList.by_name``/``by_id`` and every
    ``names=``/``index_ids=`` option, so one ``except`` catches them all; it is a
    ``KeyError`` too (a mapping's miss) and a ``ValueError`` (bad input).
    """

    def __str__(self) -> str:
        # KeyError would quote the message; this is a sentence, not a key.
        return SearchKitError.__str__(self)


class IndexMismatchWarning(UserWarning):
    """``create_index(if_exists="return")`` returned an index of another region or type.

    The existing index of that name was returned as asked, but it is not what the call
    described. Make it an error with ``warnings.simplefilter("error", IndexMismatchWarning)``.
    """


class DuplicateIndexWarning(UserWarning):
    """Another index of the same name appeared while ``create_index`` created one.

    ``create_index`` (``if_exists="raise"`` or ``"return"``) refuses a name in use, and
    creates of one name in one process wait for each other; but two processes (overlapping
    cron jobs) can both find the name free and both create. The client lists once more after
    creating, and when an index of that name that it did not create is listed, it warns with
    both ids: two indexes now share the name and one of them is probably unwanted (a paid
    index). Make it an error with ``warnings.simplefilter("error", DuplicateIndexWarning)``.

    Attributes:
        created: The index this call created (returned by ``create_index``).
        others: The other indexes of that name listed after it.
    """

    def __init__(self, message: str, created: object = None, others: Sequence[object] = ()):
        super().__init__(message)
        self.created = created
        self.others = tuple(others)


def _text(value: object) -> str:
    return str(getattr(value, "value", value))


class TimestampError(SearchKitError, ValueError):
    """A throughput timestamp text does not parse."""

    def describe(self) -> str:
        return _sentence(self.message)


class AuthenticationError(SearchKitError):
    """The service refused the credentials (401)."""

    def describe(self) -> str:
        return _sentence(
            f"The service did not accept the username and password: {self.message}{self._nothing()}"
        )


class PermissionDeniedError(SearchKitError):
    """The account may not do this (403), e.g. a read-only account creating."""

    def describe(self) -> str:
        return _sentence(f"The service refused to {self._what()}: {self.reason}")


class NotFoundError(SearchKitError):
    """The service does not know the path (404)."""


class RateLimitError(SearchKitError):
    """The service asks us to slow down (429); ``retry_after`` is in seconds when known."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after

    def describe(self) -> str:
        when = f"in {self.retry_after:.0f} s" if self.retry_after is not None else "shortly"
        return _sentence(
            f"The service is limiting the rate of requests{self._after_retries()}; "
            f"try again {when}{self._nothing()}"
        )


class ServerError(SearchKitError):
    """The service failed (5xx)."""

    def describe(self) -> str:
        status = f"HTTP {self.status}: " if self.status else ""
        return _sentence(
            f"The service failed to {self._what()}{self._after_retries()} "
            f"({status}{self.reason}){self._nothing()}"
        )


class TransportError(SearchKitError):
    """The request did not complete: refused, reset, timed out.

    ``sent`` is False when the request surely never reached the service (connection
    refused, connect timeout), so repeating it is safe.
    """

    def __init__(self, message: str, *, sent: bool = True, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.sent = sent

    def describe(self) -> str:
        where = f" at {self.url}" if self.url else ""
        return _sentence(
            f"Could not reach the service{where} to {self._what()} "
            f"({self.message}{self._after_retries()}){self._nothing()}"
        )


class InvalidResponseError(SearchKitError):
    """The response is not JSON of the expected shape, or was cut short."""

    def describe(self) -> str:
        return _sentence(
            f"The service sent an answer that could not be read ({self.message}){self._nothing()}"
        )


class AmbiguousCreateError(SearchKitError):
    """A create may or may not have happened, and listing could not tell which."""

    def describe(self) -> str:
        cause = self.__cause__
        why = f" ({cause.reason})" if isinstance(cause, SearchKitError) else ""
        operation = self.operation or ""
        if operation.startswith("create index "):
            what = f"index {operation.removeprefix('create index ')} was created"
        else:
            what = f"{operation or 'the create'} succeeded"
        return _sentence(
            f"The service did not confirm whether {what}{why}: refresh the list "
            "of indexes before trying again"
        )


class AmbiguousNameError(SearchKitError, LookupError):
    """More than one index has the name asked for; the message lists their ids."""


class HistoryWarning(UserWarning):
    """The history holds something that is not its layout; it was skipped."""


class HistoryError(SearchKitError):
    """The history cannot be read or written: an unwritable location, a foreign file."""

    def describe(self) -> str:
        return self.message if self.message.endswith(".") else f"{self.message}."


def _sentence(text: str) -> str:
    text = " ".join(text.split()).rstrip(". ")
    return f"{text[:1].upper()}{text[1:]}."


def describe_failure(exc: BaseException) -> str:
    """Say in one plain sentence why an operation failed, for people rather than logs.

    The CLI and the widgets show this; ``str(exc)`` keeps the technical detail (method,
    path, status) for logs and tracebacks. Errors that are not searchkit's are named by
    their class, with any secret-looking text masked.

    Args:
        exc: The exception to describe.

    Returns:
        One sentence ending in a full stop.

    Example:
        >>> describe_failure(RateLimitError("slow down", retry_after=30, status=429))
        'The service is limiting the rate of requests; try again in 30 s.'
    """
    if isinstance(exc, SearchKitError):
        return exc.describe()
    detail = redact(" ".join(str(exc).split()))
    return _sentence(f"Unexpected {type(exc).__name__}" + (f": {detail}" if detail else ""))


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
        message = _html_page(text) or text
    one_line = " ".join(str(message).split())
    if secrets is not None:
        one_line = redact(one_line, secrets)
    if len(one_line) > limit:
        one_line = one_line[: limit - 1].rstrip() + "…"
    return one_line


def _html_page(text: str) -> str | None:
    """Say "an HTML page" for a web page's body (a Jupyter port, a proxy's page), naming its
    title, instead of pasting its markup into the error; None for any other text."""
    import re

    if not re.match(r"\s*<(!doctype\s+html|html)\b", text, re.IGNORECASE):
        return None
    title = re.search(r"<title[^>]*>(.*?)</title>", text, re.IGNORECASE | re.DOTALL)
    named = f" titled {' '.join(title[1].split())[:80]!r}" if title and title[1].strip() else ""
    return f"an HTML page{named}, not the API's JSON: is the address that of the service?"
