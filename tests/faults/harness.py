"""A real HTTP server on 127.0.0.1 that misbehaves on purpose, for fault tests.

It speaks HTTP/1.1 over raw sockets (``socketserver``), one request per connection, so it
can do what a well-behaved framework will not: accept and never answer, answer slowly,
reset the connection before or after reading the body, announce more bytes than it sends,
redirect elsewhere, or forward a request to an upstream (the emulator) and then lose the
answer, so a create really happens while the client hears nothing.

Each HTTP method has a queue of actions, taken one per request; when the queue is empty
the ``then`` action answers every further request. Every request is recorded before its
action runs, so tests can count what reached the server. Nothing waits unbounded: a hung
answer ends when the server stops or after ``max_hang`` seconds.

Example::

    with FaultServer(upstream=emulator.url) as server:
        server.script("POST", forward(then=drop()))
        ...
        assert server.count("POST") == 1
"""

from __future__ import annotations

import array
import contextlib
import dataclasses
import email.utils
import fcntl
import functools
import http.client
import json
import socket
import socketserver
import struct
import termios
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "Action",
    "FaultServer",
    "Seen",
    "cut_mid_body",
    "drip",
    "drip_head",
    "drop",
    "endless",
    "forward",
    "gzip_bomb",
    "hang",
    "http_date",
    "refused_port",
    "reply",
    "reset",
    "slow",
    "stall_mid_body",
    "truncated",
]

HEAD_LIMIT = 64 * 1024
READ_TIMEOUT = 5.0  # seconds the server waits for a client's request bytes


@dataclasses.dataclass(frozen=True)
class Seen:
    """One request as it reached the server."""

    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: bytes
    at: float  # time.monotonic() when its head was read

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


class _Exchange:
    """The connection and request an action works on."""

    def __init__(self, server: FaultServer, sock: socket.socket, rfile: Any, seen: Seen):
        self.server = server
        self.sock = sock
        self.rfile = rfile
        self.seen = seen

    def send(
        self, status: int, body: bytes, headers: dict[str, str], *, length: int | None = None
    ) -> None:
        reason = http.client.responses.get(status, "Unknown")
        lines = [f"HTTP/1.1 {status} {reason}"]
        head = {
            "Content-Length": str(len(body) if length is None else length),
            "Connection": "close",
            **headers,
        }
        lines += [f"{k}: {v}" for k, v in head.items()]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)

    def send_head(self, status: int, headers: dict[str, str]) -> None:
        """Send only the status line and headers; the action writes the body itself."""
        reason = http.client.responses.get(status, "Unknown")
        lines = [f"HTTP/1.1 {status} {reason}", "Connection: close"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

    def delivered(self) -> None:
        """Wait until the client's end has acknowledged every byte sent so far.

        A reset (SO_LINGER 0) throws away what is still in the send queue; bytes the
        client's kernel has acknowledged are read by the client before it sees the reset.
        Waited for as the send queue's own count (SIOCOUTQ), not as a guessed time; bounded
        by ``max_hang``.
        """
        deadline = time.monotonic() + self.server.max_hang
        unsent = array.array("i", [0])
        while time.monotonic() < deadline and not self.stopping:
            fcntl.ioctl(self.sock.fileno(), termios.TIOCOUTQ, unsent)
            if unsent[0] == 0:
                return
            self.server._stopping.wait(0.001)

    def rst(self) -> None:
        """Reset the connection (RST instead of a clean FIN)."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.rfile.close()
        self.sock.close()

    @property
    def stopping(self) -> bool:
        return self.server._stopping.is_set()

    def wait(self, seconds: float) -> None:
        """Sleep up to ``seconds``, less if the server is stopping."""
        self.server._stopping.wait(min(seconds, self.server.max_hang))


Action = Callable[[_Exchange], None]


def _encode(body: object) -> tuple[bytes, str]:
    if isinstance(body, bytes):
        return body, "application/json"
    if isinstance(body, str):
        return body.encode("utf-8"), "text/plain; charset=utf-8"
    return json.dumps(body).encode("utf-8"), "application/json"


def reply(status: int, body: object = b"", headers: dict[str, str] | None = None) -> Action:
    """Answer with ``status``; a dict or list body is sent as JSON, a str as text."""
    data, content_type = _encode(body)

    def action(ex: _Exchange) -> None:
        ex.send(status, data, {"Content-Type": content_type, **(headers or {})})

    action.__name__ = f"reply({status})"
    return action


def truncated(status: int, body: object, *, missing: int = 50) -> Action:
    """Announce ``missing`` more bytes than the body has, send the body, then close."""
    data, content_type = _encode(body)

    def action(ex: _Exchange) -> None:
        ex.send(status, data, {"Content-Type": content_type}, length=len(data) + missing)

    action.__name__ = f"truncated({status})"
    return action


def hang() -> Action:
    """Accept the request and never answer (until the server stops or ``max_hang``)."""

    def action(ex: _Exchange) -> None:
        ex.wait(ex.server.max_hang)

    action.__name__ = "hang()"
    return action


def slow(seconds: float, then: Action) -> Action:
    """Wait ``seconds``, then run ``then``."""

    def action(ex: _Exchange) -> None:
        ex.wait(seconds)
        then(ex)

    action.__name__ = f"slow({seconds}, {then.__name__})"
    return action


def drop() -> Action:
    """Close the connection without a word (a clean FIN)."""

    def action(ex: _Exchange) -> None:
        ex.sock.shutdown(socket.SHUT_RDWR)

    action.__name__ = "drop()"
    return action


def reset(*, before_body: bool = False) -> Action:
    """Reset the connection (RST), by default after reading the request body.

    With ``before_body`` the body is left unread: the request is abandoned half-way. Only
    the head is recorded then, so ``Seen.body`` is empty.
    """

    def action(ex: _Exchange) -> None:
        ex.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        ex.rfile.close()  # the file holds a reference; the descriptor closes with the last
        ex.sock.close()

    action.__name__ = f"reset(before_body={before_body})"
    action.reads_body = not before_body  # type: ignore[attr-defined]
    return action


def endless(piece: bytes = b"[" + b" " * 65535, *, status: int = 200) -> Action:
    """Answer ``status`` with a chunked body that never ends (until the client hangs up).

    Every piece after the first is whitespace, so the body is the start of valid JSON
    however much of it is read. Bounded by ``max_hang`` seconds.
    """

    def action(ex: _Exchange) -> None:
        ex.send_head(status, {"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
        filler = b" " * len(piece)
        ends = time.monotonic() + ex.server.max_hang
        first = True
        while not ex.stopping and time.monotonic() < ends:
            data = piece if first else filler
            first = False
            ex.sock.sendall(b"%x\r\n%s\r\n" % (len(data), data))

    action.__name__ = f"endless(status={status})"
    return action


@functools.lru_cache(maxsize=4)
def _gzip_of_json_spaces(inflated: int) -> bytes:
    """gzip of ``[`` + spaces + ``]``, ``inflated`` bytes in all: valid JSON, tiny on the wire.

    Built from one compressed MiB of spaces repeated as gzip members (RFC 1952 allows a
    file of several members), so even 1 GiB costs no time to make: about 1 MiB is sent.
    """

    def member(data: bytes) -> bytes:
        packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        return packer.compress(data) + packer.flush()

    block = 1 << 20
    whole, rest = divmod(inflated - 2, block)
    parts = [member(b"["), member(b" " * block) * whole]
    if rest:
        parts.append(member(b" " * rest))
    parts.append(member(b"]"))
    return b"".join(parts)


def gzip_bomb(inflated: int = 1 << 30) -> Action:
    """Answer 200 with a gzip body that inflates to ``inflated`` bytes (1 GiB: ~1 MiB sent)."""

    def action(ex: _Exchange) -> None:
        body = _gzip_of_json_spaces(inflated)
        ex.send(200, body, {"Content-Type": "application/json", "Content-Encoding": "gzip"})

    action.__name__ = f"gzip_bomb({inflated})"
    return action


def drip(body: bytes, *, every: float) -> Action:
    """Announce ``body`` whole, then send it one byte every ``every`` seconds."""

    def action(ex: _Exchange) -> None:
        ex.send_head(200, {"Content-Type": "application/json", "Content-Length": str(len(body))})
        for i in range(len(body)):
            if ex.stopping:
                return
            ex.sock.sendall(body[i : i + 1])
            ex.wait(every)

    action.__name__ = f"drip(every={every})"
    return action


def drip_head(*, every: float) -> Action:
    """Send the status line, then a header one byte every ``every`` seconds (up to max_hang)."""

    def action(ex: _Exchange) -> None:
        ex.sock.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
        ends = time.monotonic() + ex.server.max_hang
        while not ex.stopping and time.monotonic() < ends:
            ex.sock.sendall(b"z")
            ex.wait(every)

    action.__name__ = f"drip_head(every={every})"
    return action


def cut_mid_body(body: object, *, after: int = 10) -> Action:
    """Announce the whole body, send its first ``after`` bytes, then reset the connection."""
    data, content_type = _encode(body)

    def action(ex: _Exchange) -> None:
        ex.send_head(200, {"Content-Type": content_type, "Content-Length": str(len(data))})
        ex.sock.sendall(data[:after])
        ex.delivered()  # the head and the first bytes reach the client before the reset
        ex.rst()

    action.__name__ = f"cut_mid_body(after={after})"
    return action


def stall_mid_body(body: object, *, after: int = 10) -> Action:
    """Announce the whole body, send its first ``after`` bytes, then send nothing more."""
    data, content_type = _encode(body)

    def action(ex: _Exchange) -> None:
        ex.send_head(200, {"Content-Type": content_type, "Content-Length": str(len(data))})
        ex.sock.sendall(data[:after])
        ex.wait(ex.server.max_hang)

    action.__name__ = f"stall_mid_body(after={after})"
    return action


def forward(*, then: Action | None = None, to: str | None = None) -> Action:
    """Send the request on to the upstream and pass its answer back.

    With ``then``, the upstream's answer is read in full and thrown away, and ``then``
    runs instead: the upstream acted (an index was created) but the client never hears.
    """

    def action(ex: _Exchange) -> None:
        status, body, headers = _upstream(to or ex.server.upstream, ex.seen)
        if then is not None:
            then(ex)
            return
        ex.send(status, body, headers)

    action.__name__ = "forward()" if then is None else f"forward(then={then.__name__})"
    return action


def _upstream(url: str | None, seen: Seen) -> tuple[int, bytes, dict[str, str]]:
    if url is None:
        raise RuntimeError("forward() needs FaultServer(upstream=...) or forward(to=...)")
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        skip = {"host", "connection", "content-length", "accept-encoding"}
        headers = {k: v for k, v in seen.headers.items() if k not in skip}
        conn.request(seen.method, seen.path, body=seen.body or None, headers=headers)
        response = conn.getresponse()
        body = response.read()
        keep = {"content-type", "retry-after", "www-authenticate"}
        return response.status, body, {k: v for k, v in response.getheaders() if k.lower() in keep}
    finally:
        conn.close()


def http_date(seconds_from_now: float) -> str:
    """An HTTP date (RFC 7231) ``seconds_from_now`` in the future."""
    return email.utils.formatdate(time.time() + seconds_from_now, usegmt=True)


class _Handler(socketserver.BaseRequestHandler):
    server: _TCPServer

    def handle(self) -> None:
        owner = self.server.owner
        sock: socket.socket = self.request
        sock.settimeout(READ_TIMEOUT)
        rfile = sock.makefile("rb")
        try:
            head = _read_head(rfile)
            if head is None:
                return
            method, path, headers = head
            action = owner._next_action(method)
            body = b""
            if getattr(action, "reads_body", True):
                length = int(headers.get("content-length", "0") or 0)
                body = rfile.read(length) if length else b""
            seen = Seen(method, path, headers, body, time.monotonic())
            owner._record(seen)
            action(_Exchange(owner, sock, rfile, seen))
        except OSError:
            pass  # the client gave up first; nothing to answer
        finally:
            with contextlib.suppress(OSError):
                rfile.close()


def _read_head(rfile: Any) -> tuple[str, str, dict[str, str]] | None:
    line = rfile.readline(HEAD_LIMIT)
    if not line.strip():
        return None
    method, path, _version = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while True:
        raw = rfile.readline(HEAD_LIMIT)
        if raw in (b"\r\n", b"\n", b""):
            break
        name, _, value = raw.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return method, path, headers


class _TCPServer(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True
    block_on_close = False
    owner: FaultServer


class FaultServer:
    """The misbehaving server; use as a context manager.

    Args:
        upstream: Base URL that :func:`forward` sends requests to (e.g. the emulator's).
        port: Port to bind on 127.0.0.1; 0 picks a free one.
        max_hang: Longest any action waits, in seconds.
    """

    def __init__(self, *, upstream: str | None = None, port: int = 0, max_hang: float = 10.0):
        self.upstream = upstream
        self.max_hang = max_hang
        self.requests: list[Seen] = []
        self._scripts: dict[str, list[Action]] = {}
        self._then: dict[str, Action] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._tcp = _TCPServer(("127.0.0.1", port), _Handler, bind_and_activate=True)
        self._tcp.owner = self
        self._thread = threading.Thread(
            # stop() waits for the loop to notice: a short poll keeps that wait short.
            target=self._tcp.serve_forever,
            kwargs={"poll_interval": 0.01},
            daemon=True,
        )

    @property
    def port(self) -> int:
        return self._tcp.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def script(self, method: str, *actions: Action, then: Action | None = None) -> FaultServer:
        """Answer the next requests of ``method`` with ``actions``, later ones with ``then``.

        Without ``then``, later requests are forwarded when there is an upstream, else
        answered 500.
        """
        with self._lock:
            self._scripts[method] = list(actions)
            if then is not None:
                self._then[method] = then
        return self

    def count(self, method: str | None = None) -> int:
        """How many requests (of ``method``) reached the server."""
        with self._lock:
            return sum(1 for r in self.requests if method is None or r.method == method)

    def seen(self, method: str | None = None) -> list[Seen]:
        with self._lock:
            return [r for r in self.requests if method is None or r.method == method]

    def start(self) -> FaultServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._tcp.shutdown()
        self._tcp.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _next_action(self, method: str) -> Action:
        with self._lock:
            queue = self._scripts.get(method)
            if queue:
                return queue.pop(0)
            if method in self._then:
                return self._then[method]
        if self.upstream is not None:
            return forward()
        return reply(500, {"error": f"fault harness: nothing scripted for {method}"})

    def _record(self, seen: Seen) -> None:
        with self._lock:
            self.requests.append(seen)


@contextlib.contextmanager
def refused_port() -> Iterator[int]:
    """A loopback port that refuses connections for as long as the block runs.

    The port is bound but never listened on, so no other process can take it meanwhile
    and every connect gets ECONNREFUSED at once.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]
