"""How the emulator serves HTTP: werkzeug's threaded server with deadlines and a connection cap.

A request's head and body each have a deadline for the whole phase (a client dripping a byte
a second cannot hold a thread past it), idle keep-alive connections are closed, chunked
bodies are read within limits, and connections past the cap get a 503 from one thread
(:class:`Refuser`) instead of a thread each. :class:`~searchkit.emulator.server.Emulator`
runs it on a background thread.
"""

from __future__ import annotations

import errno
import io
import ipaddress
import json
import logging
import math
import selectors
import socket
import threading
import time
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, cast

from werkzeug.serving import BaseWSGIServer, ThreadedWSGIServer, WSGIRequestHandler

from searchkit.emulator._fields import field_problem
from searchkit.emulator.app import MalformedChunkError

if TYPE_CHECKING:
    pass

__all__ = [
    "BODY",
    "DEFAULT_BODY_TIMEOUT_S",
    "DEFAULT_HEADER_TIMEOUT_S",
    "DEFAULT_IDLE_TIMEOUT_S",
    "HEADER",
    "IDLE",
    "MAX_CONNECTIONS_CAP",
    "REFUSAL_GRACE_S",
    "RESERVED_FDS",
    "STOP_GRACE_S",
    "BindError",
    "ChunkedBody",
    "DeadlineReader",
    "DeadlineWriter",
    "EmulatorServer",
    "Refuser",
    "RequestHandler",
    "check_seconds",
    "default_max_connections",
    "error_bytes",
    "poke",
    "shutdown",
]

logger = logging.getLogger("searchkit.emulator")

# Connection limits. The header and body deadlines cover the whole phase, not each read, so
# a client dripping one byte a second cannot hold a thread past them either.
DEFAULT_HEADER_TIMEOUT_S = 10.0
DEFAULT_BODY_TIMEOUT_S = 30.0
DEFAULT_IDLE_TIMEOUT_S = 10.0
MAX_CONNECTIONS_CAP = 512
# File descriptors kept free for the listening socket, SQLite, refusals and the process.
RESERVED_FDS = 128
# A refused connection gets this long to send its request head and to read the 503.
REFUSAL_GRACE_S = 1.0
# Stopping lets answers in flight finish for this long before cutting their connections.
STOP_GRACE_S = 1.0

IDLE, HEADER, BODY = "idle", "header", "body"


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
        return MAX_CONNECTIONS_CAP
    return max(4, min(MAX_CONNECTIONS_CAP, (soft - RESERVED_FDS) // 2))


def check_seconds(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number of seconds")
    seconds = float(value)
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"{name} must be a finite number of seconds > 0")
    return seconds


def error_bytes(status: int, message: str, headers: dict[str, str] | None = None) -> bytes:
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


class DeadlineReader(io.RawIOBase):
    """Socket reads bounded by the deadline of the handler's current phase.

    The first byte of a request moves the handler from the idle phase to the header phase,
    whose deadline then runs from that byte.
    """

    def __init__(self, sock: socket.socket, handler: RequestHandler) -> None:
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
        if count and handler.phase == IDLE:
            handler.enter(HEADER)
        return count


class DeadlineWriter(io.BufferedIOBase):
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


class ChunkedBody(io.RawIOBase):
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


class RequestHandler(WSGIRequestHandler):
    """werkzeug's handler with phase deadlines, JSON errors and logging at DEBUG.

    Phases: idle (connected, no byte yet) ends the connection silently at its deadline;
    header (request line and fields) answers 408; body (from the end of the header on,
    covering the body, the app and each write) lets the app answer 408 for a slow body.
    """

    server: EmulatorServer
    phase = IDLE
    deadline = 0.0
    timed_out: str | None = None

    def setup(self) -> None:
        self.connection = self.request
        self.rfile = io.BufferedReader(DeadlineReader(self.connection, self))
        self.wfile = DeadlineWriter(self.connection, self.server.body_timeout)

    def enter(self, phase: str) -> None:
        limits = {
            IDLE: self.server.idle_timeout,
            HEADER: self.server.header_timeout,
            BODY: self.server.body_timeout,
        }
        self.phase = phase
        self.deadline = time.monotonic() + limits[phase]

    def handle_one_request(self) -> None:
        self.enter(IDLE)
        self.timed_out = None
        super().handle_one_request()
        if self.timed_out == HEADER:
            self.close_connection = True
            limit = f"{self.server.header_timeout:g}"
            self._write_quietly(
                error_bytes(408, f"the request header was not received within {limit} s")
            )

    def parse_request(self) -> bool:
        parsed = super().parse_request()
        if parsed and self.server.closing:
            # Stopping cut the header short: answering it would act on half a request.
            self.close_connection = True
            self._write_quietly(error_bytes(503, "the emulator is shutting down"))
            return False
        if parsed and (problem := field_problem(self.headers)) is not None:
            self.send_error(400, problem)  # RFC 9112: never guess which field is meant
            return False
        if parsed:
            self.enter(BODY)
        return parsed

    def make_environ(self) -> dict[str, Any]:
        environ = super().make_environ()
        if environ.get("wsgi.input_terminated"):
            # werkzeug's own dechunker accepts sizes like "+5" or "0x5" and reports every
            # syntax error as a bare OSError; this one is strict and says what was wrong.
            environ["wsgi.input"] = ChunkedBody(self.rfile)
        return environ

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Answer a request the HTTP layer could not parse with a JSON error, then close."""
        self.close_connection = True
        text = message or HTTPStatus(code).phrase
        self.log_error("code %d, message %s", code, text)
        self._write_quietly(error_bytes(code, text.rstrip(".")))

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


class BindError(Exception):
    """An OSError from bind, wrapped so that werkzeug's sys.exit(1) handler lets it pass."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error)
        self.error = error


class EmulatorServer(ThreadedWSGIServer):
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
        self._refuser = Refuser(
            error_bytes(
                503,
                f"the emulator has {max_connections} open connections, its limit; "
                "try again shortly",
                {"Retry-After": "1"},
            ),
            # Refused sockets are held briefly, but they hold descriptors too.
            limit=max(16, max_connections // 2),
        )
        super().__init__(host, port, app, handler=RequestHandler)

    def server_bind(self) -> None:
        # werkzeug answers an OSError from bind by printing advice and calling sys.exit(1),
        # which would end a notebook's kernel; carry it past werkzeug and raise it in start().
        try:
            super().server_bind()
        except OSError as exc:
            raise BindError(exc) from exc

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
            self._closed.wait(STOP_GRACE_S + 2.0)
            return
        try:
            super().server_close()
            self._refuser.close()
            with self._lock:
                threads = dict(self._connections)
            # Stop reading: idle and stalled connections see the end of input at once,
            # answers being written may finish within the grace period.
            for sock in threads:
                shutdown(sock, socket.SHUT_RD)
            deadline = time.monotonic() + STOP_GRACE_S
            for thread in threads.values():
                thread.join(max(0.0, deadline - time.monotonic()))
            with self._lock:
                left = dict(self._connections)
            for sock in left:
                shutdown(sock, socket.SHUT_RDWR)
            for thread in left.values():
                thread.join(0.5)
        finally:
            self._closed.set()


def shutdown(sock: socket.socket, how: int) -> None:
    try:
        sock.shutdown(how)
    except OSError:
        return


def poke(server: BaseWSGIServer) -> None:
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


class Refuser:
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
                self._held[sock] = (now + REFUSAL_GRACE_S, False)
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
                    self._held[sock] = (time.monotonic() + REFUSAL_GRACE_S, True)
            now = time.monotonic()
            for sock, (deadline, answered) in list(self._held.items()):
                if deadline > now:
                    continue
                if answered:
                    self._drop(sock)
                else:
                    self._answer_now(sock)
                    self._held[sock] = (now + REFUSAL_GRACE_S, True)

    def _drop(self, sock: socket.socket) -> None:
        self._selector.unregister(sock)
        del self._held[sock]
        sock.close()
