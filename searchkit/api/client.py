"""The HTTP client of the Search Index Management API.

One ``requests.Session`` per client, Basic auth (UTF-8), timeouts on every read and a
deadline on every call. Listing is safe to repeat, so GET is retried (urllib3's ``Retry``:
connection errors, 429, 502, 503, 504, and a body cut short or reset, with exponential
backoff, jitter and ``Retry-After``). Creating is not: a POST is never re-sent once it may
have reached the service. After an ambiguous failure the client lists the indexes and
returns the one its request created, or raises ``AmbiguousCreateError``.

Bodies are streamed and capped (``max_response_bytes``, counted after decompression), so a
hostile or broken server cannot take the process's memory. Loopback traffic (the emulator)
never goes through a proxy; https traffic honours ``HTTPS_PROXY``/``ALL_PROXY``/``NO_PROXY``.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import math
import socket
import threading
import time
import warnings
import zlib
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter
from requests.auth import AuthBase
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import (
    HTTPError as Urllib3Error,
)
from urllib3.exceptions import (
    IncompleteRead,
    MaxRetryError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
    ResponseError,
)
from urllib3.util.retry import Retry

from searchkit._version import __version__
from searchkit.api.config import (
    ENV_TIMEOUT,
    Credentials,
    is_loopback,
    parse_timeout,
    resolve_base_url,
    resolve_credentials,
)
from searchkit.errors import (
    AmbiguousCreateError,
    AuthenticationError,
    IndexExistsError,
    IndexMismatchWarning,
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
from searchkit.model.index import REGIONS, TYPES, IndexList, SearchIndex

__all__ = ["DEFAULT_MAX_RESPONSE_BYTES", "DEFAULT_TIMEOUT", "Client", "mismatch"]

log = logging.getLogger("searchkit")

#: Seconds to connect and to read, used when no timeout is given (nor SEARCHKIT_TIMEOUT).
DEFAULT_TIMEOUT: tuple[float, float] = (5.0, 30.0)
#: Largest answer read, after decompression: 512 MiB, over four times the largest list
#: seen on a real account (1,542 indexes, 117.6 MB).
DEFAULT_MAX_RESPONSE_BYTES = 512 * 1024 * 1024
PATH = "/v2/search"
# How far the service's clock may lag ours when matching a lost create by creation_time.
CLOCK_SKEW_SECONDS = 300
# Bytes read per socket read of an error answer (cut at ERROR_BODY_LIMIT anyway).
CHUNK = 64 * 1024
# Bytes read per read of a success answer, and most bytes inflated per step: few large
# reads, each into one new buffer (a list of 1,000 indexes is about 80 MB).
LARGE_CHUNK = 1024 * 1024
# An announced length up to this is read in one read into one buffer, which is the body:
# no list of pieces to join, so no second copy of it.
WHOLE_READ_LIMIT = 1024 * 1024 * 1024
# Error answers are read only this far: their message is cut to 300 characters anyway.
ERROR_BODY_LIMIT = 1024 * 1024

IfExists = Literal["raise", "return", "create"]


class _Tally:
    """The retries one request actually made, shared by every state of its Retry."""

    def __init__(self) -> None:
        self.retries = 0


class _Retry(Retry):
    """urllib3's Retry with the guards it lacks.

    A garbled ``Retry-After`` falls back to backoff instead of raising; a ``Retry-After``
    beyond ``retry_after_cap`` is not slept but handed back as a 429 (a RateLimitError
    with ``retry_after``); all retrying of one request ends within ``retry_budget``
    seconds of its first failure, and no retry is begun whose wait would pass the call's
    ``deadline`` (a ``time.monotonic()`` instant). ``tally`` counts the retries made.
    """

    def __init__(
        self,
        *args: Any,
        retry_after_cap: float = 60.0,
        retry_budget: float = 60.0,
        first_failure: float | None = None,
        deadline: float | None = None,
        tally: _Tally | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.retry_after_cap = retry_after_cap
        self.retry_budget = retry_budget
        self.first_failure = first_failure
        self.deadline = deadline
        self.tally = tally if tally is not None else _Tally()

    def new(self, **kw: Any) -> _Retry:
        kw.setdefault("retry_after_cap", self.retry_after_cap)
        kw.setdefault("retry_budget", self.retry_budget)
        kw.setdefault("first_failure", self.first_failure)
        kw.setdefault("deadline", self.deadline)
        kw.setdefault("tally", self.tally)
        return super().new(**kw)

    def for_call(self, deadline: float) -> _Retry:
        """Return a fresh state of this policy for one request of a call ending at ``deadline``."""
        return self.new(deadline=deadline, tally=_Tally(), first_failure=None)

    def parse_retry_after(self, retry_after: str) -> float:
        seconds = _retry_after_seconds(retry_after)
        return 0.0 if seconds is None else seconds  # falsy: sleep() uses backoff instead

    def increment(
        self, method: str | None = None, url: str | None = None, *args: Any, **kwargs: Any
    ) -> _Retry:
        response = kwargs.get("response")
        error = kwargs.get("error")
        pool: Any = kwargs.get("_pool")
        now = time.monotonic()
        first = self.first_failure if self.first_failure is not None else now
        if response is not None:
            header = response.headers.get("Retry-After")
            if header is not None and (_retry_after_seconds(header) or 0.0) > self.retry_after_cap:
                raise MaxRetryError(pool, url or "", ResponseError("Retry-After beyond cap"))
        new = super().increment(method, url, *args, **kwargs)
        new.first_failure = first
        # The coming wait is the server's Retry-After when it gives a usable one (that is
        # what sleep() honours), else the backoff; either way it counts against the budget.
        wait = (new.get_retry_after(response) if response is not None else None) or (
            new.get_backoff_time()
        )
        spent = now - first + wait > self.retry_budget
        late = self.deadline is not None and now + wait >= self.deadline
        if spent or late:
            why = "retry time budget spent" if spent else "no time left before the deadline"
            reason = error if error is not None else ResponseError(why)
            raise MaxRetryError(pool, url or "", reason) from error
        self.tally.retries += 1
        if response is not None:
            # urllib3 next reads the whole body to reuse the connection, unbounded: an
            # endless (or gzip-bomb) 503 would hold the call. Closing costs a reconnect.
            response.close()
        return new


def _retry_after_seconds(header: str | None) -> float | None:
    """Return a Retry-After header in seconds, uncapped (a day-long wait is seen as one).

    urllib3's own parser caps the value from 2.7 on (``retry_after_max``); this one works
    the same on every urllib3 2.x.
    """
    if header is None:
        return None
    text = header.strip()
    if text.isdigit():
        return float(text)
    import email.utils

    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())


# The connections a request of this thread is using, so a watchdog can cut them at the
# call's deadline (a read timeout applies per socket read: a server dripping its status
# line and headers a byte at a time never trips it).
_in_use = threading.local()


def _note_in_use(conn: HTTPConnection) -> None:
    watched = getattr(_in_use, "connections", None)
    if watched is not None:
        watched.append(conn)


class _WatchedHTTPConnection(HTTPConnection):
    def request(self, *args: Any, **kwargs: Any) -> None:
        _note_in_use(self)
        super().request(*args, **kwargs)


class _WatchedHTTPSConnection(HTTPSConnection):
    def request(self, *args: Any, **kwargs: Any) -> None:
        _note_in_use(self)
        super().request(*args, **kwargs)


class _WatchedHTTPConnectionPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _WatchedHTTPSConnectionPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


_WATCHED_POOLS = {"http": _WatchedHTTPConnectionPool, "https": _WatchedHTTPSConnectionPool}


@contextlib.contextmanager
def _cut_at(deadline: float) -> Iterator[None]:
    """Shut down the connections this thread's request uses once ``deadline`` passes."""
    watched: list[HTTPConnection] = []

    def cut() -> None:
        for conn in watched:
            sock = getattr(conn, "sock", None)
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    timer = threading.Timer(max(0.0, deadline - time.monotonic()), cut)
    timer.daemon = True
    _in_use.connections = watched
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        _in_use.connections = None


class _Adapter(HTTPAdapter):
    """An HTTPAdapter whose Retry state can be set per thread, and whose sockets can be cut.

    requests takes one Retry per adapter; a call that retries a body read itself must
    hand urllib3 the state it reached, so both kinds of retry spend one budget. Its
    connections note themselves when used, for :func:`_cut_at`.
    """

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _WATCHED_POOLS

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if type(manager) is urllib3.ProxyManager:  # not SOCKS, whose pools differ
            manager.pool_classes_by_scheme = _WATCHED_POOLS
        return manager

    def __init__(self, max_retries: Retry) -> None:
        self._per_thread = threading.local()
        super().__init__(max_retries=max_retries)

    @property
    def max_retries(self) -> Retry:
        return getattr(self._per_thread, "retry", None) or self._policy

    @max_retries.setter
    def max_retries(self, value: Retry) -> None:
        self._policy = value

    @contextlib.contextmanager
    def retrying(self, retry: Retry) -> Iterator[None]:
        self._per_thread.retry = retry
        try:
            yield
        finally:
            self._per_thread.retry = None


class _Session(requests.Session):
    """A Session that never follows a redirect, and never proxies loopback traffic.

    ``allow_redirects=False`` alone still makes requests build the next request of a 3xx
    (reading ``~/.netrc`` for the new host), and with ``max_redirects=0`` that building
    raises TooManyRedirects instead of handing back the 3xx. Proxy variables are meant
    for the way out of a network: a request to this machine (the emulator) going to a
    proxy would hand it the Basic credentials in clear text and trust its answer.
    """

    def resolve_redirects(
        self, resp: requests.Response, req: requests.PreparedRequest, *args: Any, **kwargs: Any
    ) -> Generator[requests.Response, None, None]:
        yield from ()

    def merge_environment_settings(
        self, url: str, proxies: Any, stream: Any, verify: Any, cert: Any
    ) -> dict[str, Any]:
        settings = super().merge_environment_settings(url, proxies, stream, verify, cert)
        if is_loopback(urlsplit(str(url or "")).hostname or ""):
            settings["proxies"] = {}
        return settings


class _BasicAuth(AuthBase):
    """HTTP Basic credentials encoded as UTF-8 (RFC 7617's charset), built once, never shown."""

    def __init__(self, username: str, password: str) -> None:
        self.encoded = base64.b64encode(f"{username}:{password}".encode()).decode("ascii")

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = f"Basic {self.encoded}"
        return request

    def __repr__(self) -> str:
        return "_BasicAuth(***)"


class _Call:
    """One public call: what the user asked for and when it must be over."""

    def __init__(self, operation: str, seconds: float) -> None:
        self.operation = operation
        self.seconds = seconds
        self.ends = time.monotonic() + seconds

    def remaining(self) -> float:
        return self.ends - time.monotonic()


class _Late(Exception):
    """The call's deadline passed while its body was being read."""


class _TooLarge(Exception):
    """The body grew past the cap."""


@contextlib.contextmanager
def _shutdown_at(sock: socket.socket | None, deadline: float) -> Iterator[None]:
    """Shut ``sock`` down once ``deadline`` passes, ending any read blocked on it."""
    if sock is None:
        yield
        return

    def cut() -> None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)

    timer = threading.Timer(max(0.0, deadline - time.monotonic()), cut)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


class _BodyFault(Exception):
    """Reading a body failed; ``error`` is what to raise, ``cause`` urllib3's error."""

    def __init__(self, error: SearchKitError, cause: Exception | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.cause = cause  # None when repeating the request cannot help


def _normalise_timeout(
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


def _positive(value: object, name: str, *, whole: bool = False) -> Any:
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


def _reason(exc: BaseException) -> object:
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


def _decode_json(body: bytes) -> Any:
    """Decode a JSON body; ValueError (or RecursionError) when it is not JSON."""
    return json.loads(body)


def _socket_of(response: requests.Response) -> socket.socket | None:
    """The socket under a streamed response, to bound each read by the deadline."""
    fp = getattr(getattr(response.raw, "_fp", None), "fp", None)
    sock = getattr(getattr(fp, "raw", None), "_sock", None)
    return sock if isinstance(sock, socket.socket) else None


class _Inflater:
    """Undo a Content-Encoding step by step, never more than ``step`` bytes at a time."""

    def __init__(self, encoding: str, step: int = CHUNK) -> None:
        self.encoding = encoding
        self.step = step
        self._obj: Any = None
        if encoding in ("gzip", "x-gzip"):
            self._obj = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._obj = zlib.decompressobj(zlib.MAX_WBITS)
            self._raw_deflate_tried = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self._obj is None:
            yield data
            return
        while data:
            try:
                out = self._obj.decompress(data, self.step)
            except zlib.error:
                # Some servers send raw deflate without the zlib wrapper.
                if self.encoding != "deflate" or self._raw_deflate_tried:
                    raise
                self._raw_deflate_tried = True
                self._obj = zlib.decompressobj(-zlib.MAX_WBITS)
                continue
            if out:
                yield out
            data = self._obj.unconsumed_tail
            if self._obj.eof and self._obj.unused_data:
                # A gzip body may hold several members, one after the other.
                data = self._obj.unused_data
                self._obj = zlib.decompressobj(16 + zlib.MAX_WBITS)

    def finish(self) -> bytes:
        return self._obj.flush() if self._obj is not None else b""


class Client:
    """A client of the Search Index Management API.

    Args:
        username: Account username; with ``password``, else both from the environment.
        password: Account password. Never shown in reprs, logs or errors.
        base_url: Service address, e.g. ``https://api.example.com``; else
            ``SEARCHKIT_BASE_URL``. Plain http is refused except to loopback.
        timeout: Seconds, one number for connect and read, or a ``(connect, read)`` pair;
            else ``SEARCHKIT_TIMEOUT`` (``"10"`` or ``"5,30"``); else 5 s and 30 s.
        max_retries: Retries of a list call after connection errors, 429, 502, 503, 504,
            or an answer cut short.
        backoff_factor: First backoff in seconds; doubles per retry, plus jitter.
        retry_after_cap: Longest ``Retry-After`` honoured by sleeping; a longer one
            raises ``RateLimitError`` at once.
        retry_budget: Seconds one list request may spend retrying after its first failure.
        deadline: Seconds one call (``list_indexes()``, or ``create_index()`` with its
            lists) may take in all, retries included, however slowly a server answers.
            Default: twice connect plus read timeout (70 s with the default timeouts).
        max_response_bytes: Largest answer read, counted after decompression; a larger
            one raises InvalidResponseError. Default 512 MiB.
        on_close: Called once by :meth:`close`, e.g. to stop an emulator started for
            this client (see :func:`searchkit.connect`).

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
        deadline: float | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        on_close: Callable[[], object] | None = None,
    ) -> None:
        self._credentials: Credentials = resolve_credentials(username, password)
        self.base_url: str = resolve_base_url(base_url)
        if timeout is None:
            env_timeout = parse_timeout()
            self.timeout: tuple[float, float] = (
                DEFAULT_TIMEOUT
                if env_timeout is None
                else _normalise_timeout(env_timeout, ENV_TIMEOUT)
            )
        else:
            self.timeout = _normalise_timeout(timeout)
        if not isinstance(max_retries, int) or isinstance(max_retries, bool) or max_retries < 0:
            raise ValidationError(f"max_retries must be a whole number >= 0, got {max_retries!r}")
        self.max_retries = max_retries
        self.deadline: float = (
            2 * (self.timeout[0] + self.timeout[1])
            if deadline is None
            else float(_positive(deadline, "deadline"))
        )
        self.max_response_bytes: int = _positive(
            max_response_bytes, "max_response_bytes", whole=True
        )
        self._on_close = on_close
        self._auth = _BasicAuth(self._credentials.username, self._credentials.password)
        # Index tokens this client has received, masked in any later error text.
        self._known_tokens: set[str] = set()
        self._policy = self._retry_policy(backoff_factor, retry_after_cap, retry_budget)
        self._adapter = _Adapter(self._policy)
        self._session = self._make_session()

    def _retry_policy(
        self, backoff_factor: float, retry_after_cap: float, retry_budget: float
    ) -> _Retry:
        # Every parameter here exists from urllib3 2.0 on.
        return _Retry(
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

    def _make_session(self) -> requests.Session:
        session = _Session()
        # Explicit auth on the session means requests never falls back to ~/.netrc.
        session.auth = self._auth
        session.headers["User-Agent"] = (
            f"searchkit/{__version__} python-requests/{requests.__version__}"
        )
        session.headers["Accept"] = "application/json"
        # Only what _Inflater undoes (requests would also offer br/zstd when installed).
        session.headers["Accept-Encoding"] = "gzip, deflate"
        session.max_redirects = 0
        session.mount("http://", self._adapter)
        session.mount("https://", self._adapter)
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
            TransportError, InvalidResponseError: see :mod:`searchkit.errors`. Each names
            the operation, ``"list indexes"``.
        """
        call = _Call("list indexes", self.deadline)
        with self._naming(call):
            return self._list(call)

    def create_index(
        self,
        name: str,
        *,
        region: str,
        type: str,
        if_exists: IfExists = "raise",
        reconcile: bool = True,
    ) -> SearchIndex:
        """Create a search index and return it.

        By default the indexes are listed first and a name already in use is refused, so
        re-running a notebook cell does not make a second, paid index. The POST is sent
        once. If it fails after it may have reached the service (timeout, connection
        reset, 5xx, unreadable answer), the client lists the indexes and returns the one
        this call created: same name, not there before, created since the call began.

        Args:
            name: Index name, sent exactly as given; must not be blank.
            region: One of ``eu-west-1``, ``us-central1``.
            type: One of ``free``, ``payg``, ``fixed`` (fixed may be refused by the service).
            if_exists: What to do when an index of that name exists: ``"raise"``
                (IndexExistsError naming it), ``"return"`` (return it and create nothing;
                an ``IndexMismatchWarning`` says so when its region or type differ from
                the ones asked for; two of that name raise IndexExistsError) or
                ``"create"`` (make another on purpose; then nothing is listed first, and a
                create that meets no failure costs one request).
            reconcile: After an ambiguous failure, list to find the index; with False,
                such a failure raises AmbiguousCreateError at once.

        Returns:
            The created (or, with ``if_exists="return"``, the existing) index.

        Raises:
            ValidationError: a bad field, before anything is sent, or the service's 400.
            IndexExistsError: the name is taken and ``if_exists="raise"``.
            AmbiguousCreateError: the outcome cannot be known; list before retrying.
        """
        body = self._validated_create_body(name, region, type)
        if if_exists not in ("raise", "return", "create"):
            raise ValidationError(
                f"if_exists must be 'raise', 'return' or 'create', got {if_exists!r}"
            )
        call = _Call(f"create index {body['name']!r}", self.deadline)
        with self._naming(call):
            return self._create(call, body, if_exists, reconcile)

    def close(self) -> None:
        """Close the HTTP session, then run the ``on_close`` hook (once)."""
        self._session.close()
        hook, self._on_close = self._on_close, None
        if hook is not None:
            hook()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"Client(base_url={self.base_url!r}, username={self.username!r}, "
            f"credentials from {self.credentials_source})"
        )

    # -- operations --------------------------------------------------------------------

    @contextlib.contextmanager
    def _naming(self, call: _Call) -> Iterator[None]:
        """Make every searchkit error of the call name the operation the user asked for."""
        try:
            yield
        except SearchKitError as exc:
            if exc.operation is None:
                exc.operation = call.operation
            raise

    def _list(self, call: _Call) -> IndexList:
        data = self._request(call, "GET", PATH, raw=True)
        indexes: IndexList = self._adapt("GET", IndexList.from_json_bytes, data)
        self._remember_tokens(indexes)
        return indexes

    def _create(
        self, call: _Call, body: dict[str, str], if_exists: IfExists, reconcile: bool
    ) -> SearchIndex:
        name = body["name"]
        before: set[str | None] | None = None
        if if_exists != "create":
            same = [i for i in self._list(call) if i.name == name]
            if same and if_exists == "return" and len(same) == 1:
                differs = mismatch(same[0], region=body["region"], type=body["type"])
                if differs is not None:
                    # stacklevel: this frame, create_index, then the caller's line.
                    warnings.warn(differs, IndexMismatchWarning, stacklevel=3)
                return same[0]
            if same:
                raise IndexExistsError(name, same, choosing=if_exists == "return")
            before = set()
        started = time.time()
        try:
            data = self._request(call, "POST", PATH, json_body=body, raw=True)
            index: SearchIndex = self._adapt("POST", SearchIndex.from_json_bytes, data)
            self._remember_tokens([index])
            return index
        except (TransportError, ServerError, InvalidResponseError) as exc:
            if isinstance(exc, TransportError) and not exc.sent:
                raise  # never reached the service: nothing to reconcile, safe to retry
            if not reconcile:
                raise AmbiguousCreateError(
                    f"the request was sent, then failed ({exc}); the index may or may not "
                    "exist: list the indexes before trying again",
                    method="POST",
                    path=PATH,
                    status=exc.status,
                ) from exc
            return self._reconcile(call, name, before, started, exc)

    def _reconcile(
        self,
        call: _Call,
        name: str,
        before: set[str | None] | None,
        started: float,
        cause: SearchKitError,
    ) -> SearchIndex:
        log.warning("create of %r failed ambiguously (%s); listing to reconcile", name, cause)
        try:
            after = self._list(call)
        except SearchKitError as exc:
            raise AmbiguousCreateError(
                f"the request was sent, then failed ({cause}), and listing to check also "
                f"failed ({exc}); the index may or may not exist: list the indexes before "
                "trying again",
                method="POST",
                path=PATH,
                status=cause.status,
            ) from cause
        floor = started - CLOCK_SKEW_SECONDS
        ceiling = time.time() + CLOCK_SKEW_SECONDS if before is None else math.inf
        named = [i for i in after if i.name == name]
        # With a list made first, "new" is exact; without one (if_exists="create"), any
        # index of that name may be this call's, and only its creation time can tell.
        new = named if before is None else [i for i in named if i.id not in before]
        found = [i for i in new if i.creation_time is None or floor <= i.creation_time <= ceiling]
        if len(found) == 1:
            log.warning("the lost create of %r did happen: found index %s", name, found[0].id)
            return found[0]
        if not new and isinstance(cause, ServerError):
            # The service answered with an error and the list shows nothing new: not created.
            raise cause
        if found and before is None:
            what = (
                f"{len(found)} indexes of that name created within {CLOCK_SKEW_SECONDS} s "
                "of this call are listed"
            )
        elif found:
            what = f"{len(found)} new indexes of that name are listed"
        elif new:
            # Only when the service's clock is far from ours (e.g. an emulator on a fixed
            # clock): the index may well be this call's, but that cannot be checked.
            what = (
                f"{len(new)} {'' if before is None else 'new '}index(es) of that name are "
                f"listed, but none with a creation_time within {CLOCK_SKEW_SECONDS} s of this "
                "call (do the clocks differ?)"
            )
        else:
            what = "no new index of that name is listed yet"
        raise AmbiguousCreateError(
            f"the request was sent, then failed ({cause}); {what}, so it cannot be told "
            "whether this call created one: list the indexes before trying again",
            method="POST",
            path=PATH,
            status=cause.status,
        ) from cause

    # -- internals ---------------------------------------------------------------------

    @staticmethod
    def _validated_create_body(name: object, region: object, type: object) -> dict[str, str]:
        # The spec allows "any string naming the index": only a blank one is refused here,
        # and the name is sent as typed (" docs" stays " docs"). The service may refuse
        # more; its 400 comes back as a ValidationError with its words.
        if not isinstance(name, str):
            raise ValidationError(f"name must be a string, got {_kind(name)}")
        if not name.strip():
            raise ValidationError("name must not be empty or blank")
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
        return {"name": name, "region": str(region_text), "type": str(type_text)}

    def _url(self, path: str) -> str:
        return self.base_url + path

    def _secrets(self) -> tuple[str, ...]:
        return (self._credentials.password, self._auth.encoded, *self._known_tokens)

    def _remember_tokens(self, indexes: Iterable[SearchIndex]) -> None:
        for index in indexes:
            for value in (index.token, index.read_only_token):
                # A token may be a Secret object (its real value read explicitly).
                real = getattr(value, "get_secret_value", lambda v=value: v)()
                if real:
                    self._known_tokens.add(str(real))

    def _request(
        self,
        call: _Call,
        method: str,
        path: str,
        *,
        json_body: Mapping[str, Any] | None = None,
        raw: bool = False,
    ) -> Any:
        """Send one request (retrying a GET as the policy allows); return its decoded JSON.

        With ``raw`` the body's bytes are returned for the models to decode in one pass.
        """
        response, content = self._exchange(call, method, path, json_body)
        status = response.status_code
        if status >= 400:
            raise self._status_error(method, path, response, content)
        if not content.strip():
            raise self._invalid(method, status, "the body is empty")
        if raw:  # decoded by the models, straight from the bytes
            return content
        try:
            return _decode_json(content)
        except (ValueError, RecursionError):
            # Masked before it is cut, so no secret straddling the cut shows a prefix.
            snippet = self._masked(content[:2048].decode("utf-8", "replace"))[:120]
            raise self._invalid(
                method, status, f"the body is not JSON (starts with {snippet!r})"
            ) from None

    def _exchange(
        self, call: _Call, method: str, path: str, json_body: Mapping[str, Any] | None
    ) -> tuple[requests.Response, bytes]:
        """Send a request and read its whole body, within the call's deadline."""
        url = self._url(path)
        retry = self._policy.for_call(call.ends)
        while True:
            remaining = call.remaining()
            if remaining <= 0:
                raise self._deadline_error(call, method, path, retry.tally.retries)
            timeout = (min(self.timeout[0], remaining), min(self.timeout[1], remaining))
            started = time.monotonic()
            try:
                with self._adapter.retrying(retry), _cut_at(call.ends):
                    response = self._session.request(
                        method,
                        url,
                        json=json_body,
                        timeout=timeout,
                        allow_redirects=False,
                        stream=True,
                    )
            except requests.RequestException as exc:
                elapsed = time.monotonic() - started
                log.debug(
                    "%s %s -> failed (%s) in %.3fs", method, path, type(exc).__name__, elapsed
                )
                if call.remaining() <= 0 and _was_sent(exc):
                    raise self._deadline_error(call, method, path, retry.tally.retries) from None
                raise self._transport_error(method, path, exc, retry.tally.retries) from None
            try:
                content = self._read_body(call, method, path, response)
            except _BodyFault as fault:
                response.close()
                fault.error.retries = retry.tally.retries
                if method != "GET" or fault.cause is None:
                    raise fault.error from None
                state = getattr(response.raw, "retries", None)
                state = state if isinstance(state, _Retry) else retry
                try:
                    retry = state.increment(method, url, error=fault.cause)
                except MaxRetryError:
                    raise fault.error from None
                log.debug("%s %s -> body failed (%s); retrying", method, path, fault.error.message)
                retry.sleep()
                continue
            finally:
                response.close()
            elapsed = time.monotonic() - started
            log.debug("%s %s -> %s in %.3fs", method, path, response.status_code, elapsed)
            if 300 <= response.status_code < 400:
                location = redact(response.headers.get("Location", "?"), self._secrets())
                raise SearchKitError(
                    f"the service redirects to {location}; "
                    "redirects are not followed so credentials stay with the configured host "
                    "(set base_url to the final address)",
                    status=response.status_code,
                    method=method,
                    path=path,
                )
            return response, content

    def _read_body(self, call: _Call, method: str, path: str, response: requests.Response) -> bytes:
        """Read the body as it streams in: capped, decompressed here, within the deadline."""
        status = response.status_code
        if 300 <= status < 400:
            return b""
        error_answer = status >= 400
        cap = ERROR_BODY_LIMIT if error_answer else self.max_response_bytes
        encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
        if encoding not in ("identity", "", "gzip", "x-gzip", "deflate"):
            raise _BodyFault(
                self._invalid(
                    method, status, f"the body has an unknown encoding {self._masked(encoding)!r}"
                )
            )
        announced = response.headers.get("Content-Length", "")
        identity = encoding in ("identity", "")
        if not error_answer and identity and announced.isdigit() and int(announced) > cap:
            raise _BodyFault(self._too_large(method, status, f"announces {announced} bytes"))
        step = CHUNK if error_answer else LARGE_CHUNK
        inflater = _Inflater(encoding, step)
        raw = response.raw
        read = getattr(raw, "read1", None) or raw.read  # read1: urllib3 >= 2.3
        sock = _socket_of(response)
        chunks: list[bytes] = []
        whole = (
            not error_answer
            and identity
            and sock is not None
            and announced.isdigit()
            and int(announced) <= min(cap, WHOLE_READ_LIMIT)
        )
        try:
            with _shutdown_at(sock, call.ends):
                if whole and sock is not None:
                    return self._read_whole(call, raw, sock, int(announced))
                self._read_chunks(call, read, sock, inflater, chunks, cap, error_answer, step)
        except zlib.error:
            raise _BodyFault(
                self._invalid(method, status, f"the body is not valid {encoding} data")
            ) from None
        except _TooLarge:
            raise _BodyFault(
                self._too_large(method, status, f"is larger than {_size(cap)}")
            ) from None
        except _Late:
            raise _BodyFault(self._deadline_error(call, method, path, 0)) from None
        except ReadTimeoutError as exc:
            if call.remaining() <= 0:
                raise _BodyFault(self._deadline_error(call, method, path, 0)) from None
            what = f"the answer stopped coming for {self.timeout[1]:g} s"
            raise _BodyFault(self._body_transport_error(method, path, what), exc) from None
        except ProtocolError as exc:
            if call.remaining() <= 0:  # cut at the deadline by _shutdown_at
                raise _BodyFault(self._deadline_error(call, method, path, 0)) from None
            if any(isinstance(a, IncompleteRead) for a in (*exc.args, exc.__context__)):
                cut = InvalidResponseError(
                    "the response was cut short (fewer bytes than announced)",
                    method=method,
                    path=path,
                    status=status,
                )
                raise _BodyFault(cut, exc) from None
            what = "the connection was reset while the answer was being read"
            raise _BodyFault(self._body_transport_error(method, path, what), exc) from None
        except (Urllib3Error, OSError) as exc:
            if call.remaining() <= 0:
                raise _BodyFault(self._deadline_error(call, method, path, 0)) from None
            what = f"reading the answer failed ({type(exc).__name__})"
            raise _BodyFault(self._body_transport_error(method, path, what), exc) from None
        return b"".join(chunks)

    def _read_whole(self, call: _Call, raw: Any, sock: socket.socket, length: int) -> bytes:
        """Read a body of announced ``length`` (under the cap) in one read into one buffer.

        Each socket read inside waits at most the read timeout, and _shutdown_at ends the
        read at the deadline; a body shorter than announced raises urllib3's
        ProtocolError(IncompleteRead), as a read in pieces would.
        """
        remaining = call.remaining()
        if remaining <= 0:
            raise _Late
        with contextlib.suppress(OSError):  # closed under us: nothing left to wait for
            sock.settimeout(min(self.timeout[1], remaining))
        data: bytes = raw.read(length, decode_content=False) if length else b""
        if call.remaining() <= 0:
            raise _Late  # the end may be the deadline's cut, not the body's
        if len(data) < length:  # urllib3 without enforce_content_length
            raise ProtocolError("body cut short", IncompleteRead(len(data), length - len(data)))
        return data

    def _read_chunks(
        self,
        call: _Call,
        read: Callable[..., bytes],
        sock: socket.socket | None,
        inflater: _Inflater,
        chunks: list[bytes],
        cap: int,
        error_answer: bool,
        step: int = CHUNK,
    ) -> None:
        """Append the inflated body to ``chunks``; an error answer is cut at ``cap``."""
        size = 0
        while True:
            remaining = call.remaining()
            if remaining <= 0:
                raise _Late
            if sock is not None:
                # One read waits at most the read timeout (and _shutdown_at ends any read
                # still waiting at the deadline).
                try:
                    sock.settimeout(min(self.timeout[1], remaining))
                except OSError:
                    sock = None  # closed under us: the body has been read in full
            data = read(step, decode_content=False)
            if not data:
                if call.remaining() <= 0:
                    raise _Late  # the end may be the deadline's cut, not the body's
                tail = inflater.finish()
                if tail:
                    chunks.append(tail)
                    size += len(tail)
                break
            for piece in inflater.feed(data):
                size += len(piece)
                if size > cap:
                    if error_answer:
                        chunks.append(piece[: cap - (size - len(piece))])
                        return
                    raise _TooLarge
                chunks.append(piece)

    def _too_large(self, method: str, status: int, what: str) -> InvalidResponseError:
        return self._invalid(
            method,
            status,
            f"the answer {what}, over the limit of max_response_bytes="
            f"{self.max_response_bytes} ({_size(self.max_response_bytes)})",
        )

    def _deadline_error(self, call: _Call, method: str, path: str, retries: int) -> TransportError:
        return TransportError(
            f"the call did not finish within its deadline of {call.seconds:g} s",
            url=self.base_url,
            method=method,
            path=path,
            sent=True,
            retries=retries,
        )

    def _body_transport_error(self, method: str, path: str, what: str) -> TransportError:
        return TransportError(what, url=self.base_url, method=method, path=path, sent=True)

    def _adapt(self, method: str, convert: Any, data: Any) -> Any:
        try:
            return convert(data)
        except InvalidResponseError as exc:
            what = self._masked(exc.message)
            if isinstance(data, bytes) and what.startswith("the body is not JSON"):
                # Masked before it is cut, so no secret straddling the cut shows a prefix.
                snippet = self._masked(data[:2048].decode("utf-8", "replace"))[:120]
                what += f"; it starts with {snippet!r}"
            raise self._invalid(method, 200, what) from None

    def _invalid(self, method: str, status: int, what: str) -> InvalidResponseError:
        # ``what`` is the client's own words; any text from the service in it is masked by
        # the caller (masking here would also hit our words when a secret is very short).
        return InvalidResponseError(
            f"unexpected response from the service: {what}",
            status=status,
            method=method,
            path=PATH,
        )

    def _masked(self, text: str) -> str:
        return redact(text, self._secrets())

    def _status_error(
        self, method: str, path: str, response: requests.Response, content: bytes
    ) -> SearchKitError:
        status = response.status_code
        message = server_message(content, secrets=self._secrets()) or f"HTTP {status}"
        cls = error_for_status(status)
        text = message
        retries = getattr(getattr(response.raw, "retries", None), "tally", _Tally()).retries
        kwargs: dict[str, Any] = {
            "status": status,
            "method": method,
            "path": path,
            "server_message": message,
            "retries": retries,
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
        self, method: str, path: str, exc: requests.RequestException, retries: int
    ) -> TransportError:
        if isinstance(exc, requests.ConnectTimeout):
            what = f"could not connect within {self.timeout[0]:g} s"
        elif isinstance(exc, requests.ReadTimeout) or isinstance(_reason(exc), ReadTimeoutError):
            # After the last retry requests reports a read timeout as a ConnectionError.
            what = f"no answer within {self.timeout[1]:g} s"
        elif isinstance(exc, requests.exceptions.ProxyError):
            what = "the proxy refused or failed the connection"
        elif isinstance(exc, requests.ConnectionError) and not _was_sent(exc):
            what = "connection refused or host unreachable"
        elif isinstance(exc, requests.ConnectionError):
            what = "the connection was reset or closed before an answer"
        else:
            what = type(exc).__name__
        return TransportError(
            what,
            url=self.base_url,
            method=method,
            path=path,
            sent=_was_sent(exc),
            retries=retries,
        )


def mismatch(index: SearchIndex, *, region: str, type: str) -> str | None:
    """Say how an existing index differs from the region and type asked for (None if not).

    Example:
        "an index named 'docs' exists in us-central1 on the free plan, not in eu-west-1 on
        the payg plan as asked; it was returned as it is (if_exists='return')"
    """
    have = (
        str(getattr(index.region, "value", index.region)),
        str(getattr(index.type, "value", index.type)),
    )
    if have == (region, type):
        return None
    return (
        f"an index named {index.name!r} exists in {have[0]} on the {have[1]} plan, not in "
        f"{region} on the {type} plan as asked; it was returned as it is (if_exists='return')"
    )


def _size(n: int) -> str:
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= factor:
            return f"{n / factor:g} {unit}"
    return f"{n} bytes"


def _kind(value: object) -> str:
    names: dict[type, str] = {dict: "a JSON object", list: "a JSON array", str: "a string"}
    return names.get(type(value), type(value).__name__)
