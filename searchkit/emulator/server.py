"""The :class:`Emulator`: a threaded HTTP server of the API on a background thread."""

from __future__ import annotations

import errno
import io
import ipaddress
import json
import logging
import math
import os
import selectors
import socket
import threading
import time
from collections.abc import Sequence
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, cast

from werkzeug.serving import BaseWSGIServer, ThreadedWSGIServer, WSGIRequestHandler

from searchkit._net import is_loopback_host
from searchkit.emulator import data
from searchkit.emulator.app import EmulatorApp, MalformedChunkError
from searchkit.emulator.store import Account, Clock, Store, make_clock

if TYPE_CHECKING:
    from types import TracebackType

    from searchkit.api.client import Client

__all__ = ["DEFAULT_USERNAME", "Emulator"]

logger = logging.getLogger("searchkit.emulator")

DEFAULT_USERNAME = "demo"
_START_TIMEOUT_S = 10.0


# Connection limits. The header and body deadlines cover the whole phase, not each read, so
# a client dripping one byte a second cannot hold a thread past them either.
DEFAULT_HEADER_TIMEOUT_S = 10.0
DEFAULT_BODY_TIMEOUT_S = 30.0
DEFAULT_IDLE_TIMEOUT_S = 10.0
_MAX_CONNECTIONS_CAP = 512
# File descriptors kept free for the listening socket, SQLite, refusals and the process.
_RESERVED_FDS = 128
# A refused connection gets this long to send its request head and to read the 503.
_REFUSAL_GRACE_S = 1.0
# Stopping lets answers in flight finish for this long before cutting their connections.
_STOP_GRACE_S = 1.0

_IDLE, _HEADER, _BODY = "idle", "header", "body"


def default_max_connections() -> int:
    """Return the connection cap used when none is given: half the free descriptors.

    Each connection holds one file descriptor and one thread; the cap stays below the
    process's open-files limit, so a crowd of idle clients gets 503s instead of starving
    ``accept()`` (which would leave every new client hanging).
    """
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):  # pragma: no cover - not POSIX
        return 256
    if soft == resource.RLIM_INFINITY:
        return _MAX_CONNECTIONS_CAP
    return max(4, min(_MAX_CONNECTIONS_CAP, (soft - _RESERVED_FDS) // 2))


def _check_seconds(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number of seconds")
    seconds = float(value)
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"{name} must be a finite number of seconds > 0")
    return seconds


def _error_bytes(status: int, message: str, headers: dict[str, str] | None = None) -> bytes:
    """Return a whole ``Connection: close`` JSON error answer, written outside the WSGI app."""
    if len(message) > 200:
        # The HTTP layer quotes the request line, which can be 64 KiB of anything.
        message = message[:200] + "…"
    body = json.dumps({"error": message}, ensure_ascii=False, separators=(",", ":")).encode()
    lines = [
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        "Cache-Control: no-store",
        *(f"{key}: {value}" for key, value in (headers or {}).items()),
        "Connection: close",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


class _DeadlineReader(io.RawIOBase):
    """Socket reads bounded by the deadline of the handler's current phase.

    The first byte of a request moves the handler from the idle phase to the header phase,
    whose deadline then runs from that byte.
    """

    def __init__(self, sock: socket.socket, handler: _RequestHandler) -> None:
        self._sock = sock
        self._handler = handler

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        handler = self._handler
        remaining = handler.deadline - time.monotonic()
        if remaining <= 0:
            handler.timed_out = handler.phase
            raise TimeoutError(f"no complete request {handler.phase} in time")
        self._sock.settimeout(remaining)
        try:
            count = self._sock.recv_into(buffer)
        except TimeoutError:
            handler.timed_out = handler.phase
            raise
        if count and handler.phase == _IDLE:
            handler.enter(_HEADER)
        return count


class _DeadlineWriter(io.BufferedIOBase):
    """Unbuffered socket writes, each given ``timeout`` seconds to be taken by the client."""

    def __init__(self, sock: socket.socket, timeout: float) -> None:
        self._sock = sock
        self._timeout = timeout

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._sock.settimeout(self._timeout)
        self._sock.sendall(data)
        return len(data)


class _ChunkedBody(io.RawIOBase):
    """A strict reader of a chunked request body (RFC 9112, section 7.1).

    Chunk sizes are hexadecimal digits only (at most 16), extensions after ``;`` and
    trailer fields are skipped, and every line must end in CRLF; anything else raises
    :class:`MalformedChunkError`, as does the connection ending before the last chunk.
    """

    _MAX_LINE = 4096

    def __init__(self, rfile: Any) -> None:
        self._rfile = rfile
        self._left = 0
        self._done = False

    def readable(self) -> bool:
        return True

    def _line(self, what: str) -> bytes:
        line = self._rfile.readline(self._MAX_LINE + 1)
        if not line.endswith(b"\r\n"):
            if not line:
                raise MalformedChunkError(f"the body ended before the {what}")
            if len(line) > self._MAX_LINE:
                raise MalformedChunkError(f"the {what} is too long")
            raise MalformedChunkError(f"the {what} does not end in CRLF")
        result: bytes = line[:-2]
        return result

    def _next_size(self) -> int:
        size = self._line("chunk size line").split(b";", 1)[0].strip(b" \t")
        if not size or len(size) > 16 or size.strip(b"0123456789abcdefABCDEF"):
            shown = size[:20].decode("latin-1")
            raise MalformedChunkError(f"invalid chunk size {shown!r}")
        return int(size, 16)

    def readinto(self, buffer: Any) -> int:
        if self._done or not len(buffer):
            return 0
        if self._left == 0:
            self._left = self._next_size()
            if self._left == 0:
                while self._line("trailer section"):
                    pass
                self._done = True
                return 0
        data = self._rfile.read(min(len(buffer), self._left))
        if not data:
            raise MalformedChunkError("the body ended inside a chunk")
        buffer[: len(data)] = data
        self._left -= len(data)
        if self._left == 0 and self._rfile.read(2) != b"\r\n":
            raise MalformedChunkError("a chunk's data does not end in CRLF")
        return len(data)


class _RequestHandler(WSGIRequestHandler):
    """werkzeug's handler with phase deadlines, JSON errors and logging at DEBUG.

    Phases: idle (connected, no byte yet) ends the connection silently at its deadline;
    header (request line and fields) answers 408; body (from the end of the header on,
    covering the body, the app and each write) lets the app answer 408 for a slow body.
    """

    server: _EmulatorServer
    phase = _IDLE
    deadline = 0.0
    timed_out: str | None = None

    def setup(self) -> None:
        self.connection = self.request
        self.rfile = io.BufferedReader(_DeadlineReader(self.connection, self))
        self.wfile = _DeadlineWriter(self.connection, self.server.body_timeout)

    def enter(self, phase: str) -> None:
        limits = {
            _IDLE: self.server.idle_timeout,
            _HEADER: self.server.header_timeout,
            _BODY: self.server.body_timeout,
        }
        self.phase = phase
        self.deadline = time.monotonic() + limits[phase]

    def handle_one_request(self) -> None:
        self.enter(_IDLE)
        self.timed_out = None
        super().handle_one_request()
        if self.timed_out == _HEADER:
            self.close_connection = True
            limit = f"{self.server.header_timeout:g}"
            self._write_quietly(
                _error_bytes(408, f"the request header was not received within {limit} s")
            )

    def parse_request(self) -> bool:
        parsed = super().parse_request()
        if parsed and self.server.closing:
            # Stopping cut the header short: answering it would act on half a request.
            self.close_connection = True
            self._write_quietly(_error_bytes(503, "the emulator is shutting down"))
            return False
        if parsed:
            self.enter(_BODY)
        return parsed

    def make_environ(self) -> dict[str, Any]:
        environ = super().make_environ()
        if environ.get("wsgi.input_terminated"):
            # werkzeug's own dechunker accepts sizes like "+5" or "0x5" and reports every
            # syntax error as a bare OSError; this one is strict and says what was wrong.
            environ["wsgi.input"] = _ChunkedBody(self.rfile)
        return environ

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Answer a request the HTTP layer could not parse with a JSON error, then close."""
        self.close_connection = True
        text = message or HTTPStatus(code).phrase
        self.log_error("code %d, message %s", code, text)
        self._write_quietly(_error_bytes(code, text.rstrip(".")))

    def _write_quietly(self, data: bytes) -> None:
        try:
            self.wfile.write(data)
        except OSError:
            return

    def log_error(self, format: str, *args: Any) -> None:
        # Malformed requests and slow clients are the client's problem, not the server's.
        logger.debug(format, *args)

    def log(self, type: str, message: str, *args: Any) -> None:
        level = logging.WARNING if type == "error" else logging.DEBUG
        logger.log(level, message, *args)


class _BindError(Exception):
    """An OSError from bind, wrapped so that werkzeug's sys.exit(1) handler lets it pass."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error)
        self.error = error


class _EmulatorServer(ThreadedWSGIServer):
    """A thread per connection, at most ``max_connections`` of them; the rest get a 503.

    Open connections are tracked so that closing the server ends them promptly: those in
    the middle of an answer get a short grace, stalled ones are cut.
    """

    daemon_threads = True
    block_on_close = False

    def __init__(
        self,
        host: str,
        port: int,
        app: Any,
        *,
        max_connections: int,
        header_timeout: float,
        body_timeout: float,
        idle_timeout: float,
    ) -> None:
        self.max_connections = max_connections
        self.header_timeout = header_timeout
        self.body_timeout = body_timeout
        self.idle_timeout = idle_timeout
        self._lock = threading.Lock()
        self._connections: dict[socket.socket, threading.Thread] = {}
        self._closing = False
        self._closed = threading.Event()
        self._refuser = _Refuser(
            _error_bytes(
                503,
                f"the emulator has {max_connections} open connections, its limit; "
                "try again shortly",
                {"Retry-After": "1"},
            ),
            # Refused sockets are held briefly, but they hold descriptors too.
            limit=max(16, max_connections // 2),
        )
        super().__init__(host, port, app, handler=_RequestHandler)

    def server_bind(self) -> None:
        # werkzeug answers an OSError from bind by printing advice and calling sys.exit(1),
        # which would end a notebook's kernel; carry it past werkzeug and raise it in start().
        try:
            super().server_bind()
        except OSError as exc:
            raise _BindError(exc) from exc

    @property
    def refused(self) -> int:
        """How many connections were answered 503 for being past the cap."""
        return self._refuser.refused

    @property
    def closing(self) -> bool:
        """Whether :meth:`server_close` has begun."""
        return self._closing

    @property
    def open_connections(self) -> int:
        """How many connections hold a handler thread now."""
        with self._lock:
            return len(self._connections)

    def get_request(self) -> tuple[socket.socket, Any]:
        try:
            return super().get_request()
        except OSError as error:
            if error.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                # The listening socket stays readable: back off instead of spinning.
                logger.debug("accept() failed: %s", error)
                time.sleep(0.05)
            raise

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(
            target=self.process_request_thread,
            args=(request, client_address),
            name=f"searchkit-emulator-conn-{client_address[1] if client_address else '?'}",
            daemon=True,
        )
        with self._lock:
            closing = self._closing
            full = len(self._connections) >= self.max_connections
            if not closing and not full:
                self._connections[request] = thread
        if closing:
            self.shutdown_request(request)
        elif full:
            self._refuser.refuse(request)
        else:
            thread.start()

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)
            with self._lock:
                self._connections.pop(request, None)

    def handle_error(self, request: Any, client_address: Any) -> None:
        logger.warning("unexpected error on a connection from %s", client_address, exc_info=True)

    def server_close(self) -> None:
        """Close the listening socket, then every connection (bounded in time)."""
        with self._lock:
            first = not self._closing
            self._closing = True
        if not first:
            self._closed.wait(_STOP_GRACE_S + 2.0)
            return
        try:
            super().server_close()
            self._refuser.close()
            with self._lock:
                threads = dict(self._connections)
            # Stop reading: idle and stalled connections see the end of input at once,
            # answers being written may finish within the grace period.
            for sock in threads:
                _shutdown(sock, socket.SHUT_RD)
            deadline = time.monotonic() + _STOP_GRACE_S
            for thread in threads.values():
                thread.join(max(0.0, deadline - time.monotonic()))
            with self._lock:
                left = dict(self._connections)
            for sock in left:
                _shutdown(sock, socket.SHUT_RDWR)
            for thread in left.values():
                thread.join(0.5)
        finally:
            self._closed.set()


def _shutdown(sock: socket.socket, how: int) -> None:
    try:
        sock.shutdown(how)
    except OSError:
        return


def _poke(server: BaseWSGIServer) -> None:
    host, port = str(server.server_address[0]), int(server.server_address[1])
    address = ipaddress.ip_address(host)
    if address.is_unspecified:
        # Bound to every interface: reach it through loopback of the same family.
        host = "::1" if address.version == 6 else "127.0.0.1"
    try:
        socket.create_connection((host, port), timeout=0.2).close()
    except OSError:
        # Nothing listens any more: the loop has already stopped.
        return


class Emulator:
    """Run the Search Index Management API locally, like moto does for AWS.

    With no arguments the emulator is in memory, on 127.0.0.1 and a free port, with one
    generated account exposed as :attr:`username` and :attr:`password`.

    Args:
        demo: Give the first account the demo index set (skipped if it owns indexes).
        db: SQLite file to keep state in across restarts; ``None`` keeps it in memory.
        host: Address to bind; anything but loopback needs ``allow_remote=True``.
        port: Port to bind; 0 picks a free one.
        users: ``(name, password)`` pairs of read-write accounts.
        read_only_users: ``(name, password)`` pairs of accounts that may only list.
        seed: Makes generated credentials, ids, tokens, endpoints and throughput repeat.
        clock: Fixed aware ``datetime``, epoch seconds, or a callable returning them;
            ``None`` is the real time. :meth:`advance` moves any of them forward.
        allow_fixed: Accept ``type: "fixed"`` on create.
        delay: Seconds to wait before answering each API request; settable later (lowering
            it releases the requests already waiting).
        zones: IANA zones assigned round-robin to created indexes' throughput timestamps.
        window_minutes: Number of per-minute throughput points per index.
        allow_remote: Permit binding an address other than loopback.
        max_connections: Most connections served at once; more get an immediate 503 with
            ``Retry-After``. Default: half the free file descriptors, at most 512.
        header_timeout: Seconds a client has, from its first byte, to send the request line
            and header fields; later it gets 408 and the connection ends.
        body_timeout: Seconds a client has, from the end of the header, to send the body
            (slower gets 408); it also bounds each write of the answer to a client that
            stops reading.
        idle_timeout: Seconds a connection may stay open before its first byte.

    Raises:
        ValueError: For a non-loopback host without ``allow_remote``, duplicate user names,
            an unknown zone, an invalid clock, or a limit that is not a positive number.

    Example:
        >>> with Emulator(demo=True, seed=7) as emu:
        ...     client = emu.client()
    """

    def __init__(
        self,
        *,
        demo: bool = False,
        db: str | os.PathLike[str] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        users: Sequence[tuple[str, str]] | None = None,
        read_only_users: Sequence[tuple[str, str]] | None = None,
        seed: int | str | None = None,
        clock: Clock = None,
        allow_fixed: bool = False,
        delay: float = 0.0,
        zones: Sequence[str] | None = None,
        window_minutes: int = 1440,
        allow_remote: bool = False,
        max_connections: int | None = None,
        header_timeout: float = DEFAULT_HEADER_TIMEOUT_S,
        body_timeout: float = DEFAULT_BODY_TIMEOUT_S,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT_S,
    ) -> None:
        if max_connections is None:
            max_connections = default_max_connections()
        if (
            isinstance(max_connections, bool)
            or not isinstance(max_connections, int)
            or max_connections < 1
        ):
            raise ValueError("max_connections must be an integer >= 1")
        self._max_connections = max_connections
        self._timeouts = {
            "header_timeout": _check_seconds("header_timeout", header_timeout),
            "body_timeout": _check_seconds("body_timeout", body_timeout),
            "idle_timeout": _check_seconds("idle_timeout", idle_timeout),
        }
        if not allow_remote and not is_loopback_host(host):
            raise ValueError(
                f"refusing to bind non-loopback address {host!r}: the emulator has no TLS "
                "and demo credentials; pass allow_remote=True to expose it"
            )
        accounts = [(name, password, False) for name, password in users or ()]
        accounts += [(name, password, True) for name, password in read_only_users or ()]
        names = [name for name, _, _ in accounts]
        if len(set(names)) != len(names):
            raise ValueError("user names must be unique across users and read_only_users")
        if not accounts:
            password = data.new_password(data.rng_for(seed, "default-password"))
            accounts = [(DEFAULT_USERNAME, password, False)]
        self._host = host
        self._requested_port = port
        base_clock = make_clock(clock)
        self._clock_offset = 0.0
        self._store = Store(
            db,
            seed=seed,
            clock=lambda: base_clock() + self._clock_offset,
            zones=zones,
            window_minutes=window_minutes,
        )
        try:
            created = [
                self._store.add_account(name, password, read_only=read_only)
                for name, password, read_only in accounts
            ]
            self._account: Account = created[0]
            self._password: str = accounts[0][1]
            if demo:
                self._store.seed_demo(self._account)
            self._app = EmulatorApp(self._store, allow_fixed=allow_fixed, delay=delay)
        except BaseException:
            self._store.close()
            raise
        self._server: _EmulatorServer | None = None
        self._thread: threading.Thread | None = None
        self._stopped = False

    @property
    def url(self) -> str:
        """Base address, e.g. ``http://127.0.0.1:54321`` (the API is under ``/v2/search``)."""
        if self._server is None:
            raise RuntimeError("the emulator is not running; call start() first")
        host = self._host
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        return f"http://{host}:{self._server.server_port}"

    @property
    def host(self) -> str:
        """The bound address."""
        return self._host

    @property
    def port(self) -> int:
        """The bound port (the requested one before :meth:`start`)."""
        return self._server.server_port if self._server is not None else self._requested_port

    @property
    def store(self) -> Store:
        """The state behind the server, for direct inspection in tests."""
        return self._store

    @property
    def app(self) -> EmulatorApp:
        """The WSGI application (usable without a server, e.g. with werkzeug's test client)."""
        return self._app

    @property
    def username(self) -> str:
        """User name of the first account."""
        return self._account.username

    @property
    def password(self) -> str:
        """Password of the first account."""
        return self._password

    @property
    def account(self) -> Account:
        """The first account."""
        return self._account

    @property
    def delay(self) -> float:
        """Seconds waited before answering each API request; assign to change it live."""
        return self._app.delay

    @delay.setter
    def delay(self, seconds: float) -> None:
        self._app.delay = seconds

    @property
    def allow_fixed(self) -> bool:
        """Whether creating ``type: "fixed"`` indexes is accepted; assign to change it."""
        return self._app.allow_fixed

    @allow_fixed.setter
    def allow_fixed(self, allowed: bool) -> None:
        self._app.allow_fixed = bool(allowed)

    def now(self) -> float:
        """Return the emulator's current time in epoch seconds (its clock plus any advance)."""
        return self._store.now()

    def advance(self, seconds: float) -> float:
        """Move the emulator's clock forward, e.g. a day between two collects in a test.

        Works with a fixed clock and with the real one alike; throughput windows move with
        it, and a minute's value stays the same whenever it is listed.

        Args:
            seconds: How far to move, non-negative (a clock never runs backwards here).

        Returns:
            The new current time in epoch seconds.

        Raises:
            ValueError: For a negative or non-finite amount.
        """
        if not 0 <= seconds < float("inf"):
            raise ValueError(
                f"advance() needs a finite, non-negative number of seconds, got {seconds!r}"
            )
        self._clock_offset += seconds
        return self.now()

    @property
    def running(self) -> bool:
        """Whether the server thread is serving."""
        return self._thread is not None and self._thread.is_alive()

    def add_user(self, name: str, password: str, read_only: bool = False) -> Account:
        """Add an account (or reset an existing one's password and role).

        Args:
            name: User name, without ``:``.
            password: Password.
            read_only: Whether the account may only list indexes.

        Returns:
            The account.
        """
        return self._store.add_account(name, password, read_only=read_only)

    def start(self) -> Emulator:
        """Bind the port and serve on a daemon thread; return once ready.

        Returns:
            The emulator itself, so ``emu = Emulator().start()`` works.

        Raises:
            RuntimeError: When already stopped (create a new emulator instead).
            OSError: When the address cannot be bound.
        """
        if self._stopped:
            raise RuntimeError("this emulator was stopped; create a new one")
        if self._server is not None:
            return self
        try:
            server = _EmulatorServer(
                self._host,
                self._requested_port,
                self._app,
                max_connections=self._max_connections,
                **self._timeouts,
            )
        except _BindError as exc:
            self.stop()
            error = exc.error
            raise OSError(
                error.errno,
                f"cannot listen on {self._host}:{self._requested_port}: {error.strerror or error}",
            ) from None
        except BaseException:
            # A failed __enter__ never reaches __exit__; release the store here.
            self.stop()
            raise
        ready = threading.Event()

        def serve() -> None:
            ready.set()
            server.serve_forever(poll_interval=0.5)

        self._server = server
        self._thread = threading.Thread(
            target=serve, name=f"searchkit-emulator-{server.server_port}", daemon=True
        )
        self._thread.start()
        if not ready.wait(_START_TIMEOUT_S):
            self.stop()
            raise RuntimeError("the emulator did not start in time")
        logger.info("searchkit emulator serving on %s", self.url)
        return self

    @property
    def max_connections(self) -> int:
        """Most connections served at once; more are answered 503 at once."""
        return self._max_connections

    @property
    def open_connections(self) -> int:
        """How many client connections are being served right now."""
        return self._server.open_connections if self._server is not None else 0

    def stop(self) -> None:
        """Stop serving, release the port and close the store. Safe to call twice.

        Open connections end promptly: answers being written get about a second to finish,
        idle or stalled clients are disconnected at once.
        """
        if self._stopped:
            return
        self._stopped = True
        server, thread = self._server, self._thread
        if server is not None:
            stopper = threading.Thread(target=server.shutdown, daemon=True)
            stopper.start()
            # serve_forever only notices shutdown between select() calls; a throwaway
            # connection ends the wait now instead of after the poll interval.
            while stopper.is_alive():
                _poke(server)
                stopper.join(0.01)
            # Also ends the open connections, each handler thread joined with a deadline.
            server.server_close()
        if thread is not None:
            thread.join(_START_TIMEOUT_S)
        self._store.close()

    def client(self, **kwargs: Any) -> Client:
        """Return a :class:`searchkit.Client` for the first account of this emulator.

        Args:
            **kwargs: Extra ``Client`` arguments, e.g. ``timeout`` or ``max_retries``.

        Returns:
            The client.
        """
        from searchkit.api.client import Client

        return Client(username=self.username, password=self.password, base_url=self.url, **kwargs)

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.url if self._server is not None and not self._stopped else "not running"
        return f"<Emulator {where} username={self.username!r}>"


class _Refuser:
    """Answers connections past the cap with a 503, all on one thread, without blocking.

    Each refused socket gets a short grace to send its request head, then the 503, then a
    short grace to read it and hang up: closing a socket with unread input sends a reset,
    which can destroy the answer before the client reads it. Past ``limit`` sockets in
    hand, new ones get the 503 and are closed at once.
    """

    def __init__(self, answer: bytes, *, limit: int) -> None:
        self._answer = answer
        self._limit = limit
        self._lock = threading.Lock()
        self._incoming: list[socket.socket] = []
        self._held: dict[socket.socket, tuple[float, bool]] = {}  # deadline, answered
        self._selector = selectors.DefaultSelector()
        self._wake_read, self._wake_write = socket.socketpair()
        self._wake_read.setblocking(False)
        self._selector.register(self._wake_read, selectors.EVENT_READ)
        self._thread: threading.Thread | None = None
        self._closed = False
        self.refused = 0

    def refuse(self, sock: socket.socket) -> None:
        with self._lock:
            self.refused += 1
            if self._closed or len(self._held) + len(self._incoming) >= self._limit:
                crowded = True
            else:
                crowded = False
                self._incoming.append(sock)
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._run, name="searchkit-emulator-503", daemon=True
                    )
                    self._thread.start()
        if crowded:
            sock.setblocking(False)
            self._answer_now(sock)
            sock.close()
            return
        self._wake()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            thread = self._thread
        self._wake()
        if thread is not None:
            thread.join(2.0)
        with self._lock:
            left, self._incoming = [*self._incoming, *self._held], []
        for sock in left:
            sock.close()
        self._held.clear()
        self._selector.close()
        self._wake_read.close()
        self._wake_write.close()

    def _wake(self) -> None:
        try:
            self._wake_write.send(b"\0")
        except OSError:
            return

    def _answer_now(self, sock: socket.socket) -> None:
        try:
            # A fresh socket's send buffer takes a few hundred bytes at once.
            sock.send(self._answer)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            return

    def _run(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    return
                incoming, self._incoming = self._incoming, []
            now = time.monotonic()
            for sock in incoming:
                sock.setblocking(False)
                self._held[sock] = (now + _REFUSAL_GRACE_S, False)
                self._selector.register(sock, selectors.EVENT_READ)
            next_deadline = min((d for d, _ in self._held.values()), default=now + 60)
            for key, _ in self._selector.select(max(0.0, next_deadline - now)):
                sock = cast(socket.socket, key.fileobj)
                if sock is self._wake_read:
                    try:
                        while self._wake_read.recv(4096):
                            pass
                    except OSError:
                        pass
                    continue
                try:
                    data = sock.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                deadline, answered = self._held[sock]
                if not data:
                    if not answered:
                        self._answer_now(sock)
                    self._drop(sock)
                elif not answered and b"\r\n\r\n" in data:
                    # The head is in (reading only the last read is enough for a client
                    # that sends it at once; a slow one meets the deadline instead).
                    self._answer_now(sock)
                    self._held[sock] = (time.monotonic() + _REFUSAL_GRACE_S, True)
            now = time.monotonic()
            for sock, (deadline, answered) in list(self._held.items()):
                if deadline > now:
                    continue
                if answered:
                    self._drop(sock)
                else:
                    self._answer_now(sock)
                    self._held[sock] = (now + _REFUSAL_GRACE_S, True)

    def _drop(self, sock: socket.socket) -> None:
        self._selector.unregister(sock)
        del self._held[sock]
        sock.close()
