"""The emulator's SQLite: its tables, a pool of connections, write transactions, retries."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from searchkit.emulator import data

__all__ = [
    "INSERT_INDEX",
    "SCHEMA",
    "SELECT_INDEXES",
    "STORED_COLUMNS",
    "Database",
    "StoreBusyError",
    "StoreClosedError",
]

#: The tables: accounts, and indexes with what their answers are rebuilt from.
SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (
    username TEXT PRIMARY KEY,
    password_hash TEXT NOT NULL,
    read_only INTEGER NOT NULL,
    customer_id TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS indexes (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    customer_id TEXT NOT NULL,
    name TEXT NOT NULL,
    endpoint TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    region TEXT NOT NULL,
    partner_email TEXT NOT NULL,
    token TEXT NOT NULL,
    read_only_token TEXT NOT NULL,
    max_vector_count INTEGER NOT NULL,
    max_monthly_reranks INTEGER NOT NULL,
    max_daily_updates INTEGER NOT NULL,
    max_daily_queries INTEGER NOT NULL,
    max_monthly_bandwidth INTEGER NOT NULL,
    max_writes_per_second INTEGER NOT NULL,
    max_query_per_second INTEGER NOT NULL,
    max_reads_per_request INTEGER NOT NULL,
    max_writes_per_request INTEGER NOT NULL,
    creation_time INTEGER NOT NULL,
    input_enrichment_enabled INTEGER NOT NULL,
    series_seed INTEGER NOT NULL,
    zone TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS indexes_by_owner ON indexes (customer_id, creation_time, seq);
"""

STORED_COLUMNS = (
    "seq",
    "id",
    "customer_id",
    "name",
    "endpoint",
    "type",
    "region",
    "partner_email",
    "token",
    "read_only_token",
    *data.LIMIT_FIELDS,
    "creation_time",
    "input_enrichment_enabled",
    "series_seed",
    "zone",
)
SELECT_INDEXES = f"SELECT {', '.join(STORED_COLUMNS)} FROM indexes"  # noqa: S608
INSERT_INDEX = (
    f"INSERT INTO indexes ({', '.join(STORED_COLUMNS)}) "  # noqa: S608
    f"VALUES ({', '.join('?' * len(STORED_COLUMNS))})"
)

_BUSY_TIMEOUT_S = 10.0
_RETRY_DEADLINE_S = 30.0
T = TypeVar("T")


class StoreClosedError(RuntimeError):
    """The store was used after :meth:`Store.close`."""


class StoreBusyError(RuntimeError):
    """The database stayed locked by other writers for longer than the store waits."""


def _is_transient(error: sqlite3.OperationalError) -> bool:
    text = str(error).lower()
    return "locked" in text or "busy" in text


class Database:
    """A SQLite database that threads share: a file with a pool of connections, or memory.

    Args:
        path: Database file, or ``None`` for a private in-memory database (one connection
            that threads take turns on).
        schema: SQL statements, separated by ``;``, run once at opening.
    """

    def __init__(self, path: str | None, schema: str) -> None:
        self.path = path
        self.closed = False
        self._schema = schema
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._idle: list[sqlite3.Connection] = []
        self._memory: sqlite3.Connection | None = None
        if path is None:
            self._memory = sqlite3.connect(
                ":memory:", isolation_level=None, check_same_thread=False
            )
        self.retrying(self._init_schema)

    def close(self) -> None:
        """Close the connections; later uses raise :class:`StoreClosedError`."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            idle, self._idle = self._idle, []
            memory, self._memory = self._memory, None
        for conn in idle:
            conn.close()
        if memory is not None:
            memory.close()

    def _init_schema(self) -> None:
        with self.write() as conn:
            for statement in self._schema.split(";"):
                if statement.strip():
                    conn.execute(statement)

    def _open(self) -> sqlite3.Connection:
        assert self.path is not None
        conn = sqlite3.connect(
            self.path,
            timeout=_BUSY_TIMEOUT_S,
            isolation_level=None,
            check_same_thread=False,
        )
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
        except BaseException:
            conn.close()
            raise
        return conn

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        """Lend a connection of the pool (the one connection of an in-memory database)."""
        if self.path is None:
            with self._lock:
                if self._memory is None:
                    raise StoreClosedError("the store is closed")
                # The in-memory database lives in this one connection, so all threads
                # take turns on it.
                yield self._memory
            return
        with self._lock:
            if self.closed:
                raise StoreClosedError("the store is closed")
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = self._open()
        try:
            yield conn
        finally:
            with self._lock:
                keep = not self.closed and len(self._idle) < 32
                if keep:
                    self._idle.append(conn)
            if not keep:
                conn.close()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """Lend a connection inside a write transaction, committed when the block ends."""
        # Threads of one process queue here, in order, rather than in SQLite's busy handler,
        # which sleeps and retries unfairly; only one per process then contends for the
        # file's write lock with other processes.
        with self._write_lock, self.connection() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            try:
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def retrying(self, operation: Callable[[], T]) -> T:
        """Run ``operation``, again while SQLite reports the database busy (up to 30 s)."""
        # The busy timeout covers nearly all contention; this covers the cases SQLite
        # reports as busy without waiting (e.g. WAL recovery by another process).
        deadline = time.monotonic() + _RETRY_DEADLINE_S
        delay = 0.005
        while True:
            try:
                return operation()
            except sqlite3.OperationalError as error:
                if not _is_transient(error):
                    raise
                if time.monotonic() + delay > deadline:
                    raise StoreBusyError("the database stayed locked; try again") from error
            time.sleep(delay)
            delay = min(delay * 2, 0.25)
