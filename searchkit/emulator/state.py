"""SQLite state of the emulator: accounts and indexes, one method per API action.

The store knows nothing about HTTP. In memory (``path=None``) it keeps one connection behind
a lock; with a file it uses WAL, a busy timeout and ``BEGIN IMMEDIATE`` write transactions
drawn from a small connection pool, so several threads and several processes can share one
database file. Every create is one short transaction: a row is either fully there or absent.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
import secrets
import sqlite3
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from searchkit.emulator import data, demo
from searchkit.emulator._passwords import DUMMY_HASH, check_password, hash_password
from searchkit.emulator._sqlite import (
    INSERT_INDEX,
    SCHEMA,
    SELECT_INDEXES,
    STORED_COLUMNS,
    Database,
    StoreBusyError,
    StoreClosedError,
)

__all__ = [
    "MAX_NAME_LENGTH",
    "Account",
    "Clock",
    "InvalidRequestError",
    "Store",
    "StoreBusyError",
    "StoreClosedError",
    "make_clock",
    "validate_index_fields",
]

MAX_NAME_LENGTH = 128

Clock = datetime | float | int | Callable[[], float] | None


class InvalidRequestError(ValueError):
    """A create request names a field wrongly; the message says which and why."""

    status = 400

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


@dataclass(frozen=True)
class Account:
    """An account of the management API (its password hash stays in the database).

    Attributes:
        username: The Basic-auth user name.
        customer_id: The owner id written into each of the account's indexes.
        read_only: Whether the account may only list.
    """

    username: str
    customer_id: str
    read_only: bool = False


def make_clock(clock: Clock) -> Callable[[], float]:
    """Return a zero-argument function giving the current time in epoch seconds.

    Args:
        clock: ``None`` for the real time, an aware ``datetime`` or a number of epoch
            seconds for a fixed instant, or a callable returning epoch seconds.

    Returns:
        The clock function.

    Raises:
        ValueError: For a naive datetime or a value of another kind.
    """
    if clock is None:
        return time.time
    if isinstance(clock, datetime):
        if clock.tzinfo is None or clock.utcoffset() is None:
            raise ValueError("clock datetime must be timezone-aware")
        fixed = clock.timestamp()
        return lambda: fixed
    if isinstance(clock, bool) or (not isinstance(clock, int | float) and not callable(clock)):
        raise ValueError(
            "clock must be None, an aware datetime, epoch seconds or a callable returning them"
        )
    if callable(clock):
        return clock
    fixed_seconds = float(clock)
    if not math.isfinite(fixed_seconds):
        raise ValueError("clock must be a finite number of epoch seconds")
    return lambda: fixed_seconds


def validate_index_fields(name: object, region: object, type: object) -> None:
    """Check the fields of a create request.

    Args:
        name: Must be a string with visible content, at most 128 characters, without
            control characters.
        region: Must be one of :data:`data.REGIONS`.
        type: Must be one of :data:`data.TYPES`.

    Raises:
        InvalidRequestError: Naming the first offending field.
    """
    if not isinstance(name, str):
        raise InvalidRequestError("field 'name' must be a string", "name")
    if not name.strip():
        raise InvalidRequestError("field 'name' must not be blank", "name")
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidRequestError(
            f"field 'name' must be at most {MAX_NAME_LENGTH} characters", "name"
        )
    # Cs catches lone surrogates, which JSON can smuggle in and SQLite cannot store.
    if any(unicodedata.category(ch) in ("Cc", "Cs") for ch in name):
        raise InvalidRequestError("field 'name' must not contain control characters", "name")
    for field, value, allowed in (
        ("region", region, data.REGIONS),
        ("type", type, data.TYPES),
    ):
        if not isinstance(value, str):
            raise InvalidRequestError(f"field '{field}' must be a string", field)
        if value not in allowed:
            raise InvalidRequestError(
                f"field '{field}' must be one of: {', '.join(allowed)}", field
            )


class Store:
    """Emulator state in SQLite: accounts and their search indexes.

    Args:
        path: Database file, or ``None`` for a private in-memory database.
        seed: Makes customer ids, index ids, tokens, endpoints and series repeat exactly.
        clock: Source of "now" (see :func:`make_clock`).
        zones: IANA zones assigned round-robin, by creation order, to new indexes for
            rendering their throughput timestamps. Defaults to UTC only.
        window_minutes: Number of per-minute throughput points in each index.

    Example:
        >>> store = Store(seed=1, clock=1_700_000_000)
        >>> alice = store.add_account("alice", "s3cret")
        >>> store.create_index(alice, name="docs", region="eu-west-1", type="free")["type"]
        'free'
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        seed: int | str | None = None,
        clock: Clock = None,
        zones: Sequence[str] | None = None,
        window_minutes: int = 1440,
    ) -> None:
        self._path = None if path is None else os.fspath(path)
        if self._path == ":memory:":
            # Pooled connections would each open a separate, empty in-memory database.
            self._path = None
        self._seed = seed
        self._clock = make_clock(clock)
        self._zones = tuple(zones) if zones else ("UTC",)
        for zone in self._zones:
            _check_zone(zone)
        if isinstance(window_minutes, bool) or not isinstance(window_minutes, int):
            raise ValueError("window_minutes must be an integer")
        if not 1 <= window_minutes <= 43_200:
            raise ValueError("window_minutes must be between 1 and 43200 (30 days)")
        self._window = window_minutes
        self._lock = threading.Lock()  # of the verified-credentials cache
        self._auth_key = secrets.token_bytes(32)
        self._verified: set[bytes] = set()
        self._db = Database(self._path, SCHEMA)

    @property
    def path(self) -> str | None:
        """The database file, or ``None`` when in memory."""
        return self._path

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._db.closed

    def now(self) -> float:
        """Return the store's current time in epoch seconds."""
        return self._clock()

    def add_account(self, username: str, password: str, *, read_only: bool = False) -> Account:
        """Create an account, or reset the password and role of an existing one.

        An existing account keeps its customer id, so a restarted file-backed emulator
        given the same user names still shows their indexes.

        Args:
            username: Non-empty, without ``:`` (Basic auth cannot carry one).
            password: Non-empty.
            read_only: Whether the account may only list indexes.

        Returns:
            The account.

        Raises:
            ValueError: For an empty user name or password, or a user name with ``:``.
        """
        if not isinstance(username, str) or not username or ":" in username:
            raise ValueError("username must be a non-empty string without ':'")
        if not isinstance(password, str) or not password:
            raise ValueError("password must be a non-empty string")
        # NFC, as RFC 7617 asks of Basic credentials: the HTTP layer normalises likewise.
        username = unicodedata.normalize("NFC", username)
        password = unicodedata.normalize("NFC", password)
        password_hash = hash_password(password)
        customer_id = data.new_uuid(data.rng_for(self._seed, "account", username))

        def write() -> Account:
            with self._db.write() as conn:
                row = conn.execute(
                    "SELECT customer_id FROM accounts WHERE username = ?", (username,)
                ).fetchone()
                if row is None:
                    conn.execute(
                        "INSERT INTO accounts (username, password_hash, read_only, customer_id)"
                        " VALUES (?, ?, ?, ?)",
                        (username, password_hash, int(read_only), customer_id),
                    )
                    return Account(username, customer_id, read_only)
                conn.execute(
                    "UPDATE accounts SET password_hash = ?, read_only = ? WHERE username = ?",
                    (password_hash, int(read_only), username),
                )
                return Account(username, row[0], read_only)

        return self._db.retrying(write)

    def seed_demo(self, account: Account) -> list[dict[str, Any]]:
        """Create the demo set for ``account`` unless it already owns indexes.

        The check and the inserts are one transaction, so two processes starting on the same
        database file cannot both add the set.

        Args:
            account: The account that will own the demo indexes.

        Returns:
            The created indexes, or an empty list when the account already had some.
        """
        now = int(self.now())
        specs = [
            {
                "name": name,
                "region": region,
                "type": plan,
                "zone": zone,
                "creation_time": now - age,
                "partner_email": partner_email,
                "series_seed": demo.demo_series_seed(name, plan),
            }
            for name, region, plan, zone, age, partner_email in demo.DEMO_INDEXES
        ]
        return self.create_many(account, specs, only_if_empty=True)

    def authenticate(self, username: str, password: str) -> Account | None:
        """Return the account when ``username`` and ``password`` match, else ``None``.

        Args:
            username: The Basic-auth user name.
            password: The Basic-auth password.

        Returns:
            The account, or ``None`` for an unknown user or a wrong password alike.
        """
        username = unicodedata.normalize("NFC", username)
        password = unicodedata.normalize("NFC", password)
        row = self._db.retrying(lambda: self._account_row(username))
        if row is None:
            check_password(DUMMY_HASH, password)
            return None
        stored = row[3]
        # Keyed by the stored hash too, so a changed password invalidates the entry.
        proof = hmac.new(self._auth_key, f"{stored}\0{password}".encode(), hashlib.sha256).digest()
        with self._lock:
            known = proof in self._verified
        if not known:
            if not check_password(stored, password):
                return None
            with self._lock:
                if len(self._verified) >= 4096:
                    self._verified.clear()
                self._verified.add(proof)
        return Account(row[0], row[2], bool(row[1]))

    def create_index(
        self,
        account: Account,
        *,
        name: str,
        region: str,
        type: str,
        zone: str | None = None,
        creation_time: int | None = None,
        partner_email: str = "",
    ) -> dict[str, Any]:
        """Create one search index owned by ``account``.

        Args:
            account: The owner.
            name: Index name (see :func:`validate_index_fields`); stored as given.
            region: ``eu-west-1`` or ``us-central1``.
            type: ``free``, ``payg`` or ``fixed`` (the HTTP layer decides whether ``fixed``
                is offered; the store accepts it).
            zone: Zone for the throughput timestamps; default is the round-robin choice.
            creation_time: Epoch seconds; default is the clock's now.
            partner_email: Hosting-platform e-mail; empty for ordinary indexes.

        Returns:
            The index as the API returns it.

        Raises:
            InvalidRequestError: For an invalid name, region or type.
        """
        spec = {
            "name": name,
            "region": region,
            "type": type,
            "zone": zone,
            "creation_time": creation_time,
            "partner_email": partner_email,
        }
        return self.create_many(account, [spec])[0]

    def create_many(
        self,
        account: Account,
        specs: Sequence[Mapping[str, Any]],
        *,
        only_if_empty: bool = False,
    ) -> list[dict[str, Any]]:
        """Create several indexes in one transaction.

        Args:
            account: The owner.
            specs: Mappings with the keyword arguments of :meth:`create_index`.
            only_if_empty: Create nothing when the account already owns an index; the
                check is inside the same transaction.

        Returns:
            The created indexes (empty when skipped).

        Raises:
            InvalidRequestError: For an invalid spec; nothing is created then.
        """
        for spec in specs:
            validate_index_fields(spec.get("name"), spec.get("region"), spec.get("type"))
            if spec.get("zone") is not None:
                _check_zone(spec["zone"])
        now = math.floor(self._clock())

        def write() -> list[tuple[Any, ...]]:
            with self._db.write() as conn:
                if (
                    only_if_empty
                    and conn.execute(
                        "SELECT 1 FROM indexes WHERE customer_id = ? LIMIT 1",
                        (account.customer_id,),
                    ).fetchone()
                ):
                    return []
                (last,) = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM indexes").fetchone()
                rows = []
                for offset, spec in enumerate(specs, start=1):
                    row = self._new_row(conn, last + offset, account, spec, now)
                    conn.execute(INSERT_INDEX, row)
                    rows.append(row)
                return rows

        now_for_series = self._clock()
        return [self._render(row, now_for_series) for row in self._db.retrying(write)]

    def list_indexes(self, account: Account) -> list[dict[str, Any]]:
        """Return the indexes of ``account``, oldest first (ties in creation order).

        Args:
            account: The owner.

        Returns:
            The indexes as the API returns them.
        """

        now = self._clock()
        return [self._render(row, now) for row in self._rows_of(account)]

    def list_indexes_json(self, account: Account) -> Iterator[str]:
        """Return the JSON texts of the indexes of ``account``, one per index, lazily.

        The same indexes, order and values as :meth:`list_indexes`, for answering a list
        without holding it: the rows are read now (so a closed or busy store raises here),
        each index's text, throughput included, is built only when the iterator reaches it.

        Args:
            account: The owner.

        Returns:
            An iterator of compact JSON objects, oldest index first.
        """

        now = self._clock()
        return self._render_json(self._rows_of(account), now)

    def _rows_of(self, account: Account) -> list[tuple[Any, ...]]:
        """Read the index rows of ``account``, oldest first (retried while the file is busy)."""

        def read() -> list[tuple[Any, ...]]:
            with self._db.connection() as conn:
                return conn.execute(
                    f"{SELECT_INDEXES} WHERE customer_id = ? ORDER BY creation_time, seq",
                    (account.customer_id,),
                ).fetchall()

        return self._db.retrying(read)

    def _render_json(self, rows: list[tuple[Any, ...]], now: float) -> Iterator[str]:
        # Popped as they go, so a half-sent list does not keep the rows already sent.
        rows.reverse()
        while rows:
            values = dict(zip(STORED_COLUMNS, rows.pop(), strict=True))
            head = json.dumps(
                self._head(values), ensure_ascii=False, separators=(",", ":"), allow_nan=False
            )
            vector = data.throughput_json(
                values["series_seed"],
                now=now,
                zone=values["zone"],
                window_minutes=self._window,
                plan=values["type"],
                created=values["creation_time"],
            )
            yield f'{head[:-1]},"throughput_vector":{vector}}}'

    def count_indexes(self, account: Account | None = None) -> int:
        """Return how many indexes exist, for one account or in total."""

        def read() -> int:
            with self._db.connection() as conn:
                if account is None:
                    result: int = conn.execute("SELECT COUNT(*) FROM indexes").fetchone()[0]
                    return result
                result = conn.execute(
                    "SELECT COUNT(*) FROM indexes WHERE customer_id = ?",
                    (account.customer_id,),
                ).fetchone()[0]
                return result

        return self._db.retrying(read)

    def close(self) -> None:
        """Close the database connections; later calls raise :class:`StoreClosedError`."""
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        where = "memory" if self._path is None else repr(self._path)
        state = " closed" if self._db.closed else ""
        return f"<Store {where}{state}>"

    def _new_row(
        self,
        conn: sqlite3.Connection,
        seq: int,
        account: Account,
        spec: Mapping[str, Any],
        now: int,
    ) -> tuple[Any, ...]:
        # Keyed by the global sequence number, so a seeded emulator restarted on the same
        # file, or a second process, never regenerates an existing id.
        rng = data.rng_for(self._seed, "index", seq)
        index_id = data.new_uuid(rng)
        endpoint = data.new_endpoint(rng, spec["region"])
        while conn.execute("SELECT 1 FROM indexes WHERE endpoint = ?", (endpoint,)).fetchone():
            endpoint = data.new_endpoint(rng, spec["region"])
        token = data.new_token(rng)
        read_only_token = data.new_token(rng)
        series_seed = rng.getrandbits(63)
        if spec.get("series_seed") is not None:  # the demo set's chosen traffic levels
            series_seed = spec["series_seed"]
        preset = data.PRESETS[spec["type"]]
        zone = spec.get("zone") or self._zones[(seq - 1) % len(self._zones)]
        creation_time = spec.get("creation_time")
        return (
            seq,
            index_id,
            account.customer_id,
            spec["name"],
            endpoint,
            spec["type"],
            spec["region"],
            spec.get("partner_email") or "",
            token,
            read_only_token,
            *(preset[field] for field in data.LIMIT_FIELDS),
            now if creation_time is None else int(creation_time),
            1,
            series_seed,
            zone,
        )

    def _render(self, row: Sequence[Any], now: float) -> dict[str, Any]:
        values = dict(zip(STORED_COLUMNS, row, strict=True))
        index = self._head(values)
        index["throughput_vector"] = data.throughput_vector(
            values["series_seed"],
            now=now,
            zone=values["zone"],
            window_minutes=self._window,
            plan=values["type"],
            created=values["creation_time"],
        )
        return index

    @staticmethod
    def _head(values: Mapping[str, Any]) -> dict[str, Any]:
        """Return the fields of an index before ``throughput_vector``, in the API's order."""
        index: dict[str, Any] = {
            "customer_id": values["customer_id"],
            "id": values["id"],
            "name": values["name"],
            "endpoint": values["endpoint"],
            "type": values["type"],
            "region": values["region"],
            "partner_email": values["partner_email"],
            "token": values["token"],
            "read_only_token": values["read_only_token"],
        }
        for field in data.LIMIT_FIELDS:
            index[field] = values[field]
        index["creation_time"] = values["creation_time"]
        index["input_enrichment_enabled"] = bool(values["input_enrichment_enabled"])
        return index

    def _account_row(self, username: str) -> tuple[Any, ...] | None:
        with self._db.connection() as conn:
            result: tuple[Any, ...] | None = conn.execute(
                "SELECT username, read_only, customer_id, password_hash FROM accounts"
                " WHERE username = ?",
                (username,),
            ).fetchone()
            return result


def _check_zone(zone: object) -> None:
    if not isinstance(zone, str):
        raise ValueError(f"time zone must be a string, not {type(zone).__name__}")
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise ValueError(f"unknown time zone {zone!r}") from error
