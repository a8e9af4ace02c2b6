"""How the client talks HTTP: retries, deadlines that cut sockets, bounded body reads.

The machinery under :class:`~searchkit.api.client.Client`: urllib3's ``Retry`` with the
guards it lacks (:class:`Retry`), connection pools that note the connections a call uses so
a watchdog can cut them at the call's deadline, a session that never follows redirects nor
proxies loopback traffic, and readers that stop a body at a byte cap, inflate it in bounded
steps and give up at the deadline. Nothing here knows the API's paths or objects.
"""

from __future__ import annotations

import base64
import contextlib
import socket
import threading
import time
import zlib
from collections.abc import Callable, Generator, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter
from requests.auth import AuthBase
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import HTTPError as Urllib3Error
from urllib3.exceptions import (
    IncompleteRead,
    MaxRetryError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
    ResponseError,
)
from urllib3.util.retry import Retry

from searchkit._units import binary_size
from searchkit.api.config import is_loopback
from searchkit.errors import InvalidResponseError, SearchKitError

if TYPE_CHECKING:
    from searchkit.api._failures import Failures

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


class Tally:
    """The retries one request actually made, shared by every state of its Retry."""

    def __init__(self) -> None:
        self.retries = 0


class CallRetry(Retry):
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
        tally: Tally | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.retry_after_cap = retry_after_cap
        self.retry_budget = retry_budget
        self.first_failure = first_failure
        self.deadline = deadline
        self.tally = tally if tally is not None else Tally()

    def new(self, **kw: Any) -> CallRetry:
        kw.setdefault("retry_after_cap", self.retry_after_cap)
        kw.setdefault("retry_budget", self.retry_budget)
        kw.setdefault("first_failure", self.first_failure)
        kw.setdefault("deadline", self.deadline)
        kw.setdefault("tally", self.tally)
        return super().new(**kw)

    def for_call(self, deadline: float) -> CallRetry:
        """Return a fresh state of this policy for one request of a call ending at ``deadline``."""
        return self.new(deadline=deadline, tally=Tally(), first_failure=None)

    def parse_retry_after(self, retry_after: str) -> float:
        seconds = retry_after_seconds(retry_after)
        return 0.0 if seconds is None else seconds  # falsy: sleep() uses backoff instead

    def increment(
        self, method: str | None = None, url: str | None = None, *args: Any, **kwargs: Any
    ) -> CallRetry:
        response = kwargs.get("response")
        error = kwargs.get("error")
        pool: Any = kwargs.get("_pool")
        now = time.monotonic()
        first = self.first_failure if self.first_failure is not None else now
        if response is not None:
            header = response.headers.get("Retry-After")
            if header is not None and (retry_after_seconds(header) or 0.0) > self.retry_after_cap:
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


def retry_after_seconds(header: str | None) -> float | None:
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
def cut_at(deadline: float) -> Iterator[None]:
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


class Adapter(HTTPAdapter):
    """An HTTPAdapter whose Retry state can be set per thread, and whose sockets can be cut.

    requests takes one Retry per adapter; a call that retries a body read itself must
    hand urllib3 the state it reached, so both kinds of retry spend one budget. Its
    connections note themselves when used, for :func:`cut_at`.
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


class Session(requests.Session):
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


class BasicAuth(AuthBase):
    """HTTP Basic credentials encoded as UTF-8 (RFC 7617's charset), built once, never shown."""

    def __init__(self, username: str, password: str) -> None:
        self.encoded = base64.b64encode(f"{username}:{password}".encode()).decode("ascii")

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = f"Basic {self.encoded}"
        return request

    def __repr__(self) -> str:
        return "BasicAuth(***)"


class Call:
    """One public call: what the user asked for and when it must be over."""

    def __init__(self, operation: str, seconds: float) -> None:
        self.operation = operation
        self.seconds = seconds
        self.ends = time.monotonic() + seconds

    def remaining(self) -> float:
        return self.ends - time.monotonic()


class Late(Exception):
    """The call's deadline passed while its body was being read."""


class TooLarge(Exception):
    """The body grew past the cap."""


@contextlib.contextmanager
def shutdown_at(sock: socket.socket | None, deadline: float) -> Iterator[None]:
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


class BodyFault(Exception):
    """Reading a body failed; ``error`` is what to raise, ``cause`` urllib3's error."""

    def __init__(self, error: SearchKitError, cause: Exception | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.cause = cause  # None when repeating the request cannot help


def failure_reason(exc: BaseException) -> object:
    """Return urllib3's own error behind a requests exception (inside MaxRetryError)."""
    reason = exc.args[0] if exc.args else None
    if isinstance(reason, MaxRetryError):
        reason = reason.reason
    return reason


def was_sent(exc: requests.RequestException) -> bool:
    """Return whether a failed request may have reached the service."""
    if isinstance(exc, requests.ConnectTimeout):
        return False
    if isinstance(exc, requests.ConnectionError):
        return not isinstance(failure_reason(exc), NewConnectionError)
    return True


def socket_of(response: requests.Response) -> socket.socket | None:
    """The socket under a streamed response, to bound each read by the deadline."""
    fp = getattr(getattr(response.raw, "_fp", None), "fp", None)
    sock = getattr(getattr(fp, "raw", None), "_sock", None)
    return sock if isinstance(sock, socket.socket) else None


class Inflater:
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


def read_whole(
    call: Call, raw: Any, sock: socket.socket, length: int, read_timeout: float
) -> bytes:
    """Read a body of announced ``length`` (under the cap) in one read into one buffer.

    Each socket read inside waits at most the read timeout, and shutdown_at ends the
    read at the deadline; a body shorter than announced raises urllib3's
    ProtocolError(IncompleteRead), as a read in pieces would.
    """
    remaining = call.remaining()
    if remaining <= 0:
        raise Late
    with contextlib.suppress(OSError):  # closed under us: nothing left to wait for
        sock.settimeout(min(read_timeout, remaining))
    data: bytes = raw.read(length, decode_content=False) if length else b""
    if call.remaining() <= 0:
        raise Late  # the end may be the deadline's cut, not the body's
    if len(data) < length:  # urllib3 without enforce_content_length
        raise ProtocolError("body cut short", IncompleteRead(len(data), length - len(data)))
    return data


def read_chunks(
    call: Call,
    read: Callable[..., bytes],
    sock: socket.socket | None,
    inflater: Inflater,
    chunks: list[bytes],
    cap: int,
    error_answer: bool,
    step: int,
    read_timeout: float,
) -> None:
    """Append the inflated body to ``chunks``; an error answer is cut at ``cap``."""
    size = 0
    while True:
        remaining = call.remaining()
        if remaining <= 0:
            raise Late
        if sock is not None:
            # One read waits at most the read timeout (and shutdown_at ends any read
            # still waiting at the deadline).
            try:
                sock.settimeout(min(read_timeout, remaining))
            except OSError:
                sock = None  # closed under us: the body has been read in full
        data = read(step, decode_content=False)
        if not data:
            if call.remaining() <= 0:
                raise Late  # the end may be the deadline's cut, not the body's
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
                raise TooLarge
            chunks.append(piece)


def read_body(
    call: Call,
    method: str,
    path: str,
    response: requests.Response,
    *,
    fail: Failures,
    read_timeout: float,
) -> bytes:
    """Read the body as it streams in: capped, decompressed here, within the deadline."""
    status = response.status_code
    if 300 <= status < 400:
        return b""
    error_answer = status >= 400
    cap = ERROR_BODY_LIMIT if error_answer else fail.max_response_bytes
    encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
    if encoding not in ("identity", "", "gzip", "x-gzip", "deflate"):
        raise BodyFault(
            fail.invalid(
                method, status, f"the body has an unknown encoding {fail.masked(encoding)!r}"
            )
        )
    announced = response.headers.get("Content-Length", "")
    identity = encoding in ("identity", "")
    if not error_answer and identity and announced.isdigit() and int(announced) > cap:
        raise BodyFault(
            fail.too_large(method, status, f"announces {announced} bytes", int(announced))
        )
    step = CHUNK if error_answer else LARGE_CHUNK
    inflater = Inflater(encoding, step)
    raw = response.raw
    read = getattr(raw, "read1", None) or raw.read  # read1: urllib3 >= 2.3
    sock = socket_of(response)
    chunks: list[bytes] = []
    whole = (
        not error_answer
        and identity
        and sock is not None
        and announced.isdigit()
        and int(announced) <= min(cap, WHOLE_READ_LIMIT)
    )
    try:
        with shutdown_at(sock, call.ends):
            if whole and sock is not None:
                return read_whole(call, raw, sock, int(announced), read_timeout)
            read_chunks(call, read, sock, inflater, chunks, cap, error_answer, step, read_timeout)
    except zlib.error:
        raise BodyFault(
            fail.invalid(method, status, f"the body is not valid {encoding} data")
        ) from None
    except TooLarge:
        raise BodyFault(
            fail.too_large(method, status, f"is larger than {binary_size(cap)}")
        ) from None
    except Late:
        raise BodyFault(fail.deadline_error(call, method, path, 0)) from None
    except ReadTimeoutError as exc:
        if call.remaining() <= 0:
            raise BodyFault(fail.deadline_error(call, method, path, 0)) from None
        what = f"the answer stopped coming for {read_timeout:g} s"
        raise BodyFault(fail.body_transport_error(method, path, what), exc) from None
    except ProtocolError as exc:
        if call.remaining() <= 0:  # cut at the deadline by shutdown_at
            raise BodyFault(fail.deadline_error(call, method, path, 0)) from None
        if any(isinstance(a, IncompleteRead) for a in (*exc.args, exc.__context__)):
            cut = InvalidResponseError(
                "the response was cut short (fewer bytes than announced)",
                method=method,
                path=path,
                status=status,
            )
            raise BodyFault(cut, exc) from None
        what = "the connection was reset while the answer was being read"
        raise BodyFault(fail.body_transport_error(method, path, what), exc) from None
    except (Urllib3Error, OSError) as exc:
        if call.remaining() <= 0:
            raise BodyFault(fail.deadline_error(call, method, path, 0)) from None
        what = f"reading the answer failed ({type(exc).__name__})"
        raise BodyFault(fail.body_transport_error(method, path, what), exc) from None
    return b"".join(chunks)
