"""The HTTP client of the Search Index Management API.

One ``requests.Session`` per client, Basic auth, timeouts on every call. Listing is safe to
repeat, so GET is retried (urllib3's ``Retry``: connection errors, 429, 502, 503, 504, with
exponential backoff, jitter and ``Retry-After``). Creating is not: a POST is never re-sent
once it may have reached the service. After an ambiguous failure the client lists the
indexes and returns the one its request created, or raises ``AmbiguousCreateError``.
"""

from __future__ import annotations

import json
import logging
import math
import time
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import (
    InvalidHeader,
    MaxRetryError,
    NewConnectionError,
    ReadTimeoutError,
    ResponseError,
)
from urllib3.util.retry import Retry

from searchkit._version import __version__
from searchkit.config import Credentials, resolve_base_url, resolve_credentials
from searchkit.errors import (
    AmbiguousCreateError,
    AuthenticationError,
    InvalidResponseError,
    RateLimitError,
    SearchKitError,
    ServerError,
    TransportError,
    ValidationError,
    error_for_status,
    redact,
    server_message,
)
from searchkit.models import REGIONS, TYPES, IndexList, SearchIndex

__all__ = ["DEFAULT_TIMEOUT", "Client", "connect"]

log = logging.getLogger("searchkit")

#: Seconds to connect and to read, used when no timeout is given.
DEFAULT_TIMEOUT: tuple[float, float] = (5.0, 30.0)
PATH = "/v2/search"
MAX_NAME_LENGTH = 128
# How far the service's clock may lag ours when matching a lost create by creation_time.
CLOCK_SKEW_SECONDS = 300


class _Retry(Retry):
    """urllib3's Retry with three guards it lacks.

    A garbled ``Retry-After`` falls back to backoff instead of raising; a ``Retry-After``
    beyond ``retry_after_cap`` is not slept but handed back as a 429 (a RateLimitError
    with ``retry_after``); and all retrying of one request ends within ``retry_budget``
    seconds of its first failure.
    """

    def __init__(
        self,
        *args: Any,
        retry_after_cap: float = 60.0,
        retry_budget: float = 60.0,
        first_failure: float | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.retry_after_cap = retry_after_cap
        self.retry_budget = retry_budget
        self.first_failure = first_failure

    def new(self, **kw: Any) -> _Retry:
        kw.setdefault("retry_after_cap", self.retry_after_cap)
        kw.setdefault("retry_budget", self.retry_budget)
        kw.setdefault("first_failure", self.first_failure)
        return super().new(**kw)  # type: ignore[return-value]

    def parse_retry_after(self, retry_after: str) -> float:
        try:
            return super().parse_retry_after(retry_after)
        except InvalidHeader:
            return 0.0  # falsy: sleep() uses exponential backoff instead

    def increment(
        self, method: str | None = None, url: str | None = None, *args: Any, **kwargs: Any
    ) -> _Retry:
        response = kwargs.get("response")
        error = kwargs.get("error")
        pool = kwargs.get("_pool")
        now = time.monotonic()
        first = self.first_failure if self.first_failure is not None else now
        if response is not None:
            header = response.headers.get("Retry-After")
            if header is not None and self._raw_retry_after(header) > self.retry_after_cap:
                raise MaxRetryError(pool, url or "", ResponseError("Retry-After beyond cap"))
        new = super().increment(method, url, *args, **kwargs)
        new.first_failure = first
        # The coming wait is the server's Retry-After when it gives a usable one (that is
        # what sleep() honours), else the backoff; either way it counts against the budget.
        wait = (new.get_retry_after(response) if response is not None else None) or (
            new.get_backoff_time()
        )
        if now - first + wait > self.retry_budget:
            reason = error if error is not None else ResponseError("retry time budget spent")
            raise MaxRetryError(pool, url or "", reason) from error
        return new

    @staticmethod
    def _raw_retry_after(header: str) -> float:
        return _retry_after_seconds(header) or 0.0


class _Session(requests.Session):
    """A Session that never follows a redirect, nor prepares one.

    ``allow_redirects=False`` alone still makes requests build the next request of a 3xx
    (reading ``~/.netrc`` for the new host), and with ``max_redirects=0`` that building
    raises TooManyRedirects instead of handing back the 3xx.
    """

    def resolve_redirects(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        return iter(())


def _retry_after_seconds(header: str | None) -> float | None:
    """Return a Retry-After header in seconds, uncapped (a day-long wait is seen as one)."""
    if header is None:
        return None
    try:
        return Retry(retry_after_max=2**31).parse_retry_after(header)
    except InvalidHeader:
        return None


def _normalise_timeout(timeout: float | tuple[float, float] | None) -> tuple[float, float]:
    if timeout is None:
        return DEFAULT_TIMEOUT
    pair = (timeout, timeout) if isinstance(timeout, int | float) else tuple(timeout)
    if len(pair) != 2 or not all(
        isinstance(t, int | float) and not isinstance(t, bool) and math.isfinite(t) and t > 0
        for t in pair
    ):
        raise ValidationError(
            f"timeout must be a positive number of seconds or a (connect, read) pair, "
            f"got {timeout!r}"
        )
    return (float(pair[0]), float(pair[1]))


def _reason(exc: requests.RequestException) -> object:
    """Return urllib3's own error behind a requests exception (inside MaxRetryError)."""
    reason = exc.args[0] if exc.args else None
    if isinstance(reason, MaxRetryError):
        reason = reason.reason
    return reason


def _was_sent(exc: requests.RequestException) -> bool:
    """Return whether a failed request may have reached the service."""
    if isinstance(exc, requests.ConnectTimeout):
        return False
    if isinstance(exc, requests.ConnectionError):
        return not isinstance(_reason(exc), NewConnectionError)
    return True


class Client:
    """A client of the Search Index Management API.

    Args:
        username: Account username; with ``password``, else both from the environment.
        password: Account password. Never shown in reprs, logs or errors.
        base_url: Service address, e.g. ``https://api.example.com``; else
            ``SEARCHKIT_BASE_URL``. Plain http is refused except to loopback.
        timeout: Seconds, one number for connect and read, or a ``(connect, read)`` pair.
        max_retries: Retries of a list call after connection errors, 429, 502, 503, 504.
        backoff_factor: First backoff in seconds; doubles per retry, plus jitter.
        retry_after_cap: Longest ``Retry-After`` honoured by sleeping; a longer one
            raises ``RateLimitError`` at once.
        retry_budget: Seconds one list call may spend retrying after its first failure.

    Example:
        >>> with sk.Emulator(demo=True) as emu, emu.client() as client:
        ...     indexes = client.list_indexes()
    """

    def __init__(
        self,
        *,
        username: str | None = None,
        password: str | None = None,
        base_url: str | None = None,
        timeout: float | tuple[float, float] | None = None,
        max_retries: int = 3,
        backoff_factor: float = 0.5,
        retry_after_cap: float = 60.0,
        retry_budget: float = 60.0,
    ) -> None:
        self._credentials: Credentials = resolve_credentials(username, password)
        self.base_url: str = resolve_base_url(base_url)
        self.timeout: tuple[float, float] = _normalise_timeout(timeout)
        if not isinstance(max_retries, int) or isinstance(max_retries, bool) or max_retries < 0:
            raise ValidationError(f"max_retries must be a whole number >= 0, got {max_retries!r}")
        self.max_retries = max_retries
        self._owned: list[Any] = []  # things closed with the client, e.g. an emulator
        # Index tokens this client has received, masked in any later error text.
        self._known_tokens: set[str] = set()
        self._session = self._make_session(backoff_factor, retry_after_cap, retry_budget)

    def _make_session(
        self, backoff_factor: float, retry_after_cap: float, retry_budget: float
    ) -> requests.Session:
        session = _Session()
        # Explicit auth on the session means requests never falls back to ~/.netrc.
        session.auth = (self._credentials.username, self._credentials.password)
        session.headers["User-Agent"] = (
            f"searchkit/{__version__} python-requests/{requests.__version__}"
        )
        session.headers["Accept"] = "application/json"
        session.max_redirects = 0
        retry = _Retry(
            total=self.max_retries,
            connect=self.max_retries,
            read=self.max_retries,
            status=self.max_retries,
            other=0,
            redirect=0,
            allowed_methods=frozenset({"GET"}),
            status_forcelist=frozenset({429, 502, 503, 504}),
            backoff_factor=backoff_factor,
            backoff_jitter=backoff_factor,
            backoff_max=max(backoff_factor, 10.0),
            respect_retry_after_header=True,
            raise_on_status=False,
            raise_on_redirect=False,
            retry_after_cap=retry_after_cap,
            retry_budget=retry_budget,
        )
        adapter = HTTPAdapter(max_retries=retry)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        return session

    # -- public API --------------------------------------------------------------------

    @property
    def username(self) -> str:
        """The account's username (not a secret)."""
        return self._credentials.username

    @property
    def credentials_source(self) -> str:
        """Where the credentials came from: ``"arguments"`` or ``"environment"``."""
        return self._credentials.source

    def list_indexes(self) -> IndexList:
        """List the search indexes of the account.

        Returns:
            An IndexList, in the order the service sent.

        Raises:
            AuthenticationError, PermissionDeniedError, RateLimitError, ServerError,
            TransportError, InvalidResponseError: see :mod:`searchkit.errors`.
        """
        body = self._request("GET", PATH, raw=True)
        indexes: IndexList = self._adapt("GET", IndexList.from_json_bytes, body)
        self._remember_tokens(indexes)
        return indexes

    def create_index(
        self, name: str, *, region: str, type: str, reconcile: bool = True
    ) -> SearchIndex:
        """Create a search index and return it.

        The request is sent once. If it fails after it may have reached the service
        (timeout, connection reset, 5xx, unreadable answer), the client lists the indexes
        and returns the one this call created: same name, not there before, created since
        the call began.

        Args:
            name: Index name; not blank, at most 128 characters.
            region: One of ``eu-west-1``, ``us-central1``.
            type: One of ``free``, ``payg``, ``fixed`` (fixed may be refused by the service).
            reconcile: List before and after an ambiguous failure to find the index; with
                False, such a failure raises AmbiguousCreateError at once.

        Returns:
            The created index, as the service describes it.

        Raises:
            ValidationError: a bad field, before anything is sent, or the service's 400.
            AmbiguousCreateError: the outcome cannot be known; list before retrying.
        """
        body = self._validated_create_body(name, region, type)
        before: set[str | None] | None = None
        if reconcile:
            before = {i.id for i in self.list_indexes() if i.name == body["name"]}
        started = time.time()
        try:
            data = self._request("POST", PATH, json_body=body, raw=True)
            index: SearchIndex = self._adapt("POST", SearchIndex.from_json_bytes, data)
            self._remember_tokens([index])
            return index
        except (TransportError, ServerError, InvalidResponseError) as exc:
            if isinstance(exc, TransportError) and not exc.sent:
                raise  # never reached the service: nothing to reconcile, safe to retry
            if before is None:
                raise AmbiguousCreateError(
                    f"creating index {body['name']!r} failed after the request was sent "
                    f"({exc}); it may or may not exist: list the indexes before "
                    "trying again",
                    method="POST",
                    path=PATH,
                    status=exc.status,
                ) from exc
            return self._reconcile(body["name"], before, started, exc)

    def close(self) -> None:
        """Close the HTTP session (and an emulator this client started)."""
        self._session.close()
        for thing in reversed(self._owned):
            thing.stop()
        self._owned.clear()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"Client(base_url={self.base_url!r}, username={self.username!r}, "
            f"credentials from {self.credentials_source})"
        )

    # -- internals ---------------------------------------------------------------------

    @staticmethod
    def _validated_create_body(name: object, region: object, type: object) -> dict[str, str]:
        if not isinstance(name, str):
            raise ValidationError(f"name must be a string, got {_kind(name)}")
        clean = name.strip()
        if not clean:
            raise ValidationError("name must not be empty or blank")
        if len(clean) > MAX_NAME_LENGTH:
            raise ValidationError(
                f"name is {len(clean)} characters long; at most {MAX_NAME_LENGTH} are allowed"
            )
        # Category Cc covers C0, DEL and C1 controls alike, as the service's check does.
        if any(unicodedata.category(c) == "Cc" for c in clean):
            raise ValidationError("name must not contain control characters")
        region_text = getattr(region, "value", region)
        type_text = getattr(type, "value", type)
        if region_text not in REGIONS:
            raise ValidationError(
                f"region {region_text!r} is not one of the allowed values: {', '.join(REGIONS)}"
            )
        if type_text not in TYPES:
            raise ValidationError(
                f"type {type_text!r} is not one of the allowed values: {', '.join(TYPES)}"
            )
        return {"name": clean, "region": str(region_text), "type": str(type_text)}

    def _reconcile(
        self, name: str, before: set[str | None], started: float, cause: SearchKitError
    ) -> SearchIndex:
        log.warning("create of %r failed ambiguously (%s); listing to reconcile", name, cause)
        try:
            after = self.list_indexes()
        except SearchKitError as exc:
            raise AmbiguousCreateError(
                f"creating index {name!r} failed after the request was sent ({cause}), "
                f"and listing to check also failed ({exc}); it may or may not exist: "
                "list the indexes before trying again",
                method="POST",
                path=PATH,
                status=cause.status,
            ) from cause
        floor = started - CLOCK_SKEW_SECONDS
        new = [i for i in after if i.name == name and i.id not in before]
        found = [i for i in new if i.creation_time is None or i.creation_time >= floor]
        if len(found) == 1:
            log.warning("the lost create of %r did happen: found index %s", name, found[0].id)
            return found[0]
        if not new and isinstance(cause, ServerError):
            # The service answered with an error and the list shows nothing new: not created.
            raise cause
        if found:
            what = f"{len(found)} new indexes of that name are listed"
        elif new:
            # Only when the service's clock is far from ours (e.g. an emulator on a fixed
            # clock): the index may well be this call's, but that cannot be checked.
            what = (
                f"{len(new)} new index(es) of that name are listed, but with a creation_time "
                f"more than {CLOCK_SKEW_SECONDS} s before this call (do the clocks differ?)"
            )
        else:
            what = "no new index of that name is listed yet"
        raise AmbiguousCreateError(
            f"creating index {name!r} failed after the request was sent ({cause}); "
            f"{what}, so it cannot be told whether this call created one: list the indexes "
            "before trying again",
            method="POST",
            path=PATH,
            status=cause.status,
        ) from cause

    def _url(self, path: str) -> str:
        return self.base_url + path

    def _secrets(self) -> tuple[str, ...]:
        return (self._credentials.password, *self._known_tokens)

    def _remember_tokens(self, indexes: Iterable[SearchIndex]) -> None:
        for index in indexes:
            tokens = (index.token, index.read_only_token)
            self._known_tokens.update(t.get_secret_value() for t in tokens if t)

    def _request(
        self,
        method: str,
        path: str,
        *,
        json_body: Mapping[str, Any] | None = None,
        raw: bool = False,
    ) -> Any:
        started = time.monotonic()
        try:
            response = self._session.request(
                method,
                self._url(path),
                json=json_body,
                timeout=self.timeout,
                allow_redirects=False,
            )
            content = response.content  # read here so a cut-short body is caught below
        except requests.exceptions.ChunkedEncodingError:
            log.debug("%s %s -> cut short in %.3fs", method, path, time.monotonic() - started)
            raise InvalidResponseError(
                "the response was cut short (fewer bytes than announced)",
                method=method,
                path=path,
            ) from None
        except requests.RequestException as exc:
            elapsed = time.monotonic() - started
            log.debug("%s %s -> failed (%s) in %.3fs", method, path, type(exc).__name__, elapsed)
            raise self._transport_error(method, path, exc) from None
        elapsed = time.monotonic() - started
        log.debug("%s %s -> %s in %.3fs", method, path, response.status_code, elapsed)
        status = response.status_code
        if 300 <= status < 400:
            location = redact(response.headers.get("Location", "?"), self._secrets())
            raise SearchKitError(
                f"the service redirects to {location}; "
                "redirects are not followed so credentials stay with the configured host "
                "(set base_url to the final address)",
                status=status,
                method=method,
                path=path,
            )
        if status >= 400:
            raise self._status_error(method, path, response, content)
        if not content.strip():
            raise self._invalid(method, status, "the body is empty")
        if raw:  # decoded by the models, straight from the bytes
            return content
        try:
            return json.loads(content)
        except (ValueError, RecursionError):
            # Masked before it is cut, so no secret straddling the cut shows a prefix.
            snippet = redact(content[:2048].decode("utf-8", "replace"), self._secrets())[:120]
            raise self._invalid(
                method, status, f"the body is not JSON (starts with {snippet!r})"
            ) from None

    def _adapt(self, method: str, convert: Any, data: Any) -> Any:
        try:
            return convert(data)
        except InvalidResponseError as exc:
            raise self._invalid(method, 200, exc.message) from None

    def _invalid(self, method: str, status: int, what: str) -> InvalidResponseError:
        return InvalidResponseError(
            f"unexpected response from the service: {redact(what, self._secrets())}",
            status=status,
            method=method,
            path=PATH,
        )

    def _status_error(
        self, method: str, path: str, response: requests.Response, content: bytes
    ) -> SearchKitError:
        status = response.status_code
        message = server_message(content, secrets=self._secrets()) or f"HTTP {status}"
        cls = error_for_status(status)
        text = message
        kwargs: dict[str, Any] = {
            "status": status,
            "method": method,
            "path": path,
            "server_message": message,
        }
        if cls is AuthenticationError:
            text += (
                f" (the service refused user {self.username!r}; credentials from "
                f"{self._credential_origin()})"
            )
        if cls is RateLimitError:
            retry_after = _retry_after_seconds(response.headers.get("Retry-After"))
            if retry_after is not None:
                text += f" (retry after {retry_after:.0f} s)"
            return RateLimitError(text, retry_after=retry_after, **kwargs)
        return cls(text, **kwargs)

    def _credential_origin(self) -> str:
        if self._credentials.source == "environment":
            return "the environment (SEARCHKIT_USERNAME / SEARCHKIT_PASSWORD)"
        return "the username=/password= arguments"

    def _transport_error(
        self, method: str, path: str, exc: requests.RequestException
    ) -> TransportError:
        if isinstance(exc, requests.ConnectTimeout):
            what = f"could not connect within {self.timeout[0]:g} s"
        elif isinstance(exc, requests.ReadTimeout) or isinstance(_reason(exc), ReadTimeoutError):
            # After the last retry requests reports a read timeout as a ConnectionError.
            what = f"no answer within {self.timeout[1]:g} s"
        elif isinstance(exc, requests.ConnectionError) and not _was_sent(exc):
            what = "connection refused or host unreachable"
        elif isinstance(exc, requests.ConnectionError):
            what = "the connection was reset or closed before an answer"
        else:
            what = type(exc).__name__
        attempts = (
            ""
            if method != "GET" or not self.max_retries
            else (f" after {self.max_retries} retries")
        )
        return TransportError(
            f"{what}{attempts}",
            url=self.base_url,
            method=method,
            path=path,
            sent=_was_sent(exc),
        )


def _kind(value: object) -> str:
    return {dict: "a JSON object", list: "a JSON array", str: "a string"}.get(
        type(value), type(value).__name__
    )


def connect(**emulator_options: Any) -> Client:
    """Return a client of the configured service, or of a demo emulator started here.

    With ``SEARCHKIT_BASE_URL`` set, this is ``Client()`` from the environment. Without it,
    a demo emulator starts in this process on 127.0.0.1 (it says so) and stops when the
    client is closed.

    Args:
        **emulator_options: Passed to :class:`searchkit.Emulator` when one is started,
            e.g. ``seed=7`` and ``clock=...`` for repeatable notebooks.
    """
    import os
    import sys

    from searchkit.config import ENV_BASE_URL

    if os.environ.get(ENV_BASE_URL):
        return Client()
    from searchkit.emulator import Emulator

    emulator_options.setdefault("demo", True)
    emulator = Emulator(**emulator_options)
    emulator.start()
    client = emulator.client()
    client._owned.append(emulator)
    print(
        f"searchkit: {ENV_BASE_URL} is not set, so a demo emulator was started at "
        f"{emulator.url} (synthetic data, nothing leaves this machine)",
        file=sys.stderr,
    )
    return client
