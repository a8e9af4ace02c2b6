"""The :class:`Emulator`: a threaded HTTP server of the API on a background thread."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from searchkit._deprecation import legacy_arguments
from searchkit._net import is_loopback_host
from searchkit.emulator import data
from searchkit.emulator._serving import (
    DEFAULT_BODY_TIMEOUT_S,
    DEFAULT_HEADER_TIMEOUT_S,
    DEFAULT_IDLE_TIMEOUT_S,
    BindError,
    EmulatorServer,
    check_seconds,
    default_max_connections,
    poke,
)
from searchkit.emulator.app import EmulatorApp
from searchkit.emulator.state import Account, Clock, Store, make_clock

if TYPE_CHECKING:
    from types import TracebackType

    from searchkit.api.client import Client

__all__ = ["DEFAULT_USERNAME", "Emulator"]

logger = logging.getLogger("searchkit.emulator")

DEFAULT_USERNAME = "demo"
_START_TIMEOUT_S = 10.0


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
            "header_timeout": check_seconds("header_timeout", header_timeout),
            "body_timeout": check_seconds("body_timeout", body_timeout),
            "idle_timeout": check_seconds("idle_timeout", idle_timeout),
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
        self._server: EmulatorServer | None = None
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

    @legacy_arguments(positional=("read_only",), first=3)
    def add_user(self, name: str, password: str, *, read_only: bool = False) -> Account:
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
            server = EmulatorServer(
                self._host,
                self._requested_port,
                self._app,
                max_connections=self._max_connections,
                **self._timeouts,
            )
        except BindError as exc:
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
                poke(server)
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
