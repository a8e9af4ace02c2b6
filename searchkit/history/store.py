"""Usage history: throughput and limits kept past the service's window, as a Parquet dataset.

Layout (readable without searchkit by DuckDB, Polars, Spark or Dask)::

    <location>/throughput/day=YYYY-MM-DD/part-<collected_at ns>-<uuid>.parquet
    <location>/limits/day=YYYY-MM-DD/part-<collected_at ns>-<uuid>.parquet

``throughput`` holds ``account, index_id, name, time, value, collected_at`` (``day`` is the
UTC day of ``time``); ``limits`` holds one row per index per collect: ``account, id`` and the
columns of :func:`~searchkit.frames.frames.limits_frame`, plus ``collected_at`` (``day`` is its UTC
day). Files are only ever added, each written whole (a temporary name, then a rename; on an
object store one PUT, which is atomic) and never changed. Two collectors may write the same
points; readers keep one row per ``(account, index_id, time)``, the one with the latest
``collected_at``, so nothing is lost and nothing shows twice. :meth:`History.compact` merges
a day's files into one, writing the new file before deleting the old ones, so a reader
running meanwhile sees every point (at worst twice, and drops the copy).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import html
import os
import time
import uuid
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from searchkit.errors import HistoryError
from searchkit.frames.frames import LIMITS_COLUMNS, limits_frame, median_spacing, throughput_frame
from searchkit.model.index import LIMIT_FIELDS, REGIONS, TYPES
from searchkit.model.timestamps import TimeZone, resolve_zone, utc_instant

if TYPE_CHECKING:
    from searchkit.api.client import Client

__all__ = ["CollectSummary", "Gap", "History", "HistoryInfo"]

_TS = pa.timestamp("ns", tz="UTC")
THROUGHPUT_SCHEMA = pa.schema(
    [
        ("account", pa.string()),
        ("index_id", pa.string()),
        ("name", pa.string()),
        ("time", _TS),
        ("value", pa.float64()),
        ("collected_at", _TS),
    ]
)
LIMITS_SCHEMA = pa.schema(
    [
        ("account", pa.string()),
        ("id", pa.string()),
        ("name", pa.string()),
        ("type", pa.string()),
        ("region", pa.string()),
        ("endpoint", pa.string()),
        ("created", _TS),
        ("input_enrichment_enabled", pa.bool_()),
        ("partner_email", pa.string()),
        *[(field, pa.float64()) for field in LIMIT_FIELDS],
        ("collected_at", _TS),
    ]
)
_SCHEMAS = {"throughput": THROUGHPUT_SCHEMA, "limits": LIMITS_SCHEMA}
_KEY = ("account", "index_id", "time")
# Sorted by index then time inside a file, row groups this size let a reader of one index
# skip the others' groups from the statistics alone.
_ROW_GROUP = 16_384
# Files are read in parallel: pyarrow decodes without holding the GIL, and on an object store
# the requests overlap. Locally two readers match a small machine and keep memory low (each
# reader thread holds its own allocator arenas).
_READERS = 8
_LOCAL_READERS = 2
_DAY_NS = 86_400 * 1_000_000_000
_GAP_FACTOR = 1.5
# Listings and reads that race a writer or a compaction are retried this many times.
_ATTEMPTS = 5
# A temporary file this old belongs to a writer that died mid-write (a write takes seconds).
_STALE = dt.timedelta(hours=1)


@dataclasses.dataclass(frozen=True)
class Gap:
    """Points the service no longer returns: collected too rarely, never interpolated."""

    account: str
    index_id: str
    name: str
    stored_until: pd.Timestamp
    listed_from: pd.Timestamp

    @property
    def missing(self) -> pd.Timedelta:
        """How long the hole lasts."""
        return self.listed_from - self.stored_until

    def __str__(self) -> str:
        return (
            f"gap in {self.name!r}: nothing between {self.stored_until:%Y-%m-%d %H:%M:%S} and "
            f"{self.listed_from:%Y-%m-%d %H:%M:%S} UTC ({_duration(self.missing)}); "
            "collect more often than the service's window"
        )


@dataclasses.dataclass(frozen=True)
class CollectSummary:
    """What one :meth:`History.collect` stored and noticed."""

    collected_at: pd.Timestamp
    indexes: int
    new_points: int
    points_by_index: dict[str, int]
    gaps: tuple[Gap, ...] = ()
    warnings: tuple[str, ...] = ()
    files: tuple[str, ...] = ()

    @property
    def problems(self) -> list[str]:
        """Gaps and warnings as sentences."""
        return [str(gap) for gap in self.gaps] + list(self.warnings)

    def __repr__(self) -> str:
        head = (
            f"CollectSummary({self.collected_at:%Y-%m-%d %H:%M:%S} UTC: {self.indexes} indexes, "
            f"{self.new_points:,} new points, {len(self.gaps)} gaps, "
            f"{len(self.warnings)} warnings)"
        )
        return "\n".join([head, *(f"  - {line}" for line in self.problems)])

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{html.escape(name)}</td><td style='text-align:right'>{count:,}</td></tr>"
            for name, count in self.points_by_index.items()
        )
        problems = "".join(f"<li>{html.escape(line)}</li>" for line in self.problems)
        return (
            f"<div><strong>Collected</strong> {self.collected_at:%Y-%m-%d %H:%M:%S} UTC: "
            f"{self.indexes} indexes, <strong>{self.new_points:,}</strong> new points"
            f"<table><thead><tr><th>index</th><th>new points</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
            + (f"<ul style='color:#a33'>{problems}</ul>" if problems else "")
            + "</div>"
        )


@dataclasses.dataclass(frozen=True)
class HistoryInfo:
    """A summary of what a history holds (``searchkit history`` prints it)."""

    location: str
    indexes: int
    points: int
    first: pd.Timestamp | None
    last: pd.Timestamp | None
    files: int
    bytes: int
    gaps: tuple[Gap, ...]

    def __str__(self) -> str:
        span = (
            f"{self.first:%Y-%m-%d %H:%M} .. {self.last:%Y-%m-%d %H:%M} UTC"
            if self.first is not None and self.last is not None
            else "empty"
        )
        lines = [
            f"history at {self.location}",
            f"  indexes   {self.indexes}",
            f"  time span {span}",
            f"  points    {self.points:,}",
            f"  on disk   {_size(self.bytes)} in {self.files} files",
            f"  gaps      {len(self.gaps)}",
        ]
        lines += [f"    - {gap}" for gap in self.gaps]
        return "\n".join(lines)


def _duration(delta: pd.Timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    days, minutes = divmod(minutes, 1440)
    hours, minutes = divmod(minutes, 60)
    parts = [f"{days} d"] * bool(days) + [f"{hours} h"] * bool(hours) + [f"{minutes} min"]
    return " ".join(parts)


def _size(count: int) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{count} B"  # pragma: no cover


class History:
    """A usage history at a local folder or an object store, as a Parquet dataset.

    Args:
        location: A folder (created on the first collect), or a URL pyarrow understands,
            e.g. ``"s3://bucket/prefix"``.
        filesystem: A ``pyarrow.fs.FileSystem`` to use instead of deriving one from
            ``location`` (then ``location`` is the path inside it).
        storage_options: Keyword arguments for ``pyarrow.fs.S3FileSystem`` when
            ``location`` is an ``s3://`` URL, e.g. ``endpoint_override``, ``access_key``,
            ``secret_key``, ``region``, ``scheme``.

    Example:
        >>> hist = History("usage-history")  # doctest: +SKIP
        >>> hist.collect(client)  # doctest: +SKIP
        >>> hist.throughput(start="2026-11-01", names=["docs"])  # doctest: +SKIP
    """

    def __init__(
        self,
        location: str | os.PathLike[str],
        *,
        filesystem: pafs.FileSystem | None = None,
        storage_options: dict[str, Any] | None = None,
    ) -> None:
        text = os.fspath(location)
        self._location = text
        if filesystem is not None:
            self._fs, self._root = filesystem, text.rstrip("/")
        elif "://" in text:
            scheme, _, rest = text.partition("://")
            if scheme == "s3" and storage_options is not None:
                self._fs, self._root = pafs.S3FileSystem(**storage_options), rest.rstrip("/")
            else:
                try:
                    self._fs, self._root = pafs.FileSystem.from_uri(text)
                except (pa.ArrowInvalid, OSError) as exc:
                    raise HistoryError(f"cannot open history location {text!r}: {exc}") from exc
                self._root = self._root.rstrip("/")
        else:
            self._fs, self._root = pafs.LocalFileSystem(), os.path.abspath(text)
        self._local = isinstance(self._fs, pafs.LocalFileSystem)
        self._checked: set[str] = set()

    @property
    def location(self) -> str:
        """Where the history lives, as given."""
        return self._location

    @property
    def filesystem(self) -> pafs.FileSystem:
        """The pyarrow filesystem holding the dataset."""
        return self._fs

    @property
    def root(self) -> str:
        """The dataset's path inside :attr:`filesystem`."""
        return self._root

    def __repr__(self) -> str:
        return f"History({self._location!r})"

    # --- files -------------------------------------------------------------------------

    def _files(self, kind: str) -> list[tuple[str, str, int]]:
        """Return ``(day, path, size)`` of every finished data file of ``kind``, by day."""
        selector = pafs.FileSelector(f"{self._root}/{kind}", recursive=True, allow_not_found=True)
        for attempt in range(_ATTEMPTS):
            try:
                infos = self._fs.get_file_info(selector)
                break
            except FileNotFoundError:
                # A writer renamed a temporary file, or created the folder, while we walked.
                if attempt == _ATTEMPTS - 1:
                    raise
            except OSError as exc:
                raise HistoryError(f"cannot list the history at {self._location!r}: {exc}") from exc
        found = []
        for info in infos:
            if info.type != pafs.FileType.File:
                continue
            parent, _, base = info.path.rpartition("/")
            folder = parent.rpartition("/")[2]
            if base.startswith((".", "_")) or not base.endswith(".parquet"):
                continue  # a temporary file of a writer still at work, or not ours
            if not folder.startswith("day="):
                continue
            found.append((folder[4:], info.path, int(info.size or 0)))
        found.sort()
        return found

    def _remove_stale_temporaries(self, older_than: dt.timedelta) -> int:
        """Delete temporary files a writer killed mid-write left behind (never read)."""
        if not self._local:
            return 0  # object stores have no temporary names: an upload shows whole or not
        removed = 0
        cutoff = dt.datetime.now(dt.timezone.utc) - older_than
        for kind in _SCHEMAS:
            selector = pafs.FileSelector(
                f"{self._root}/{kind}", recursive=True, allow_not_found=True
            )
            for info in self._fs.get_file_info(selector):
                base = info.path.rpartition("/")[2]
                if not (base.startswith(".part-") and base.endswith(".parquet.tmp")):
                    continue
                mtime = info.mtime
                if mtime is not None and mtime.astimezone(dt.timezone.utc) < cutoff:
                    _remove_quietly(self._fs, info.path)
                    removed += 1
        return removed

    def _check(self, kind: str, path: str, schema: pa.Schema) -> None:
        """Refuse a file whose columns are not this layout's, naming it."""
        if path in self._checked:
            return
        expected = _SCHEMAS[kind]
        missing = [f.name for f in expected if f.name not in schema.names]
        wrong = [
            f"{f.name} is {schema.field(f.name).type}, expected {f.type}"
            for f in expected
            if f.name in schema.names and not _compatible(schema.field(f.name).type, f.type)
        ]
        if missing or wrong:
            what = "; ".join(
                ([f"missing column(s) {', '.join(missing)}"] if missing else []) + wrong
            )
            raise HistoryError(
                f"{path} was not written by searchkit's history ({what}); move it out of "
                f"the {kind} folder to continue"
            )
        self._checked.add(path)

    def _read_file(
        self,
        kind: str,
        path: str,
        columns: list[str],
        filter: ds.Expression | None,
        prune: dict[str, Any],
    ) -> pa.Table | None:
        """Read one file's row groups that the statistics allow, then filter its rows."""
        expected = _SCHEMAS[kind]
        try:
            with self._fs.open_input_file(path) as handle:
                parquet = pq.ParquetFile(handle)
                self._check(kind, path, parquet.schema_arrow)
                groups = _row_groups(parquet, prune)
                if not groups:
                    return None
                table = parquet.read_row_groups(groups, columns=columns, use_threads=False)
        except (FileNotFoundError, HistoryError):
            raise
        except (pa.ArrowException, OSError) as exc:
            raise HistoryError(
                f"{path} is not a readable Parquet file ({exc}); it may be truncated or "
                "corrupt: move it out of the history to continue (nothing else is affected)"
            ) from exc
        wanted = pa.schema([expected.field(name) for name in columns])
        if table.schema != wanted:
            table = table.cast(wanted)  # a compatible writer's types (large strings, us times)
        return table.filter(filter) if filter is not None else table

    def _read(
        self,
        kind: str,
        *,
        days: tuple[str | None, str | None] = (None, None),
        columns: Sequence[str] | None = None,
        filter: ds.Expression | None = None,
        prune: dict[str, Any] | None = None,
    ) -> pa.Table:
        """Read the files of ``kind`` for the UTC days in ``days`` (inclusive).

        Only the day folders in range are listed as candidates, and inside each file only
        the row groups whose statistics can match ``prune`` (``{column: values}`` for text,
        ``{"time": (first_ns, last_ns)}``) are decoded; ``filter`` then selects rows.
        """
        schema = _SCHEMAS[kind]
        wanted = list(columns or schema.names)
        needed = wanted if filter is None else list(schema.names)
        first, last = days

        def listed() -> list[str]:
            return [
                path
                for day, path, _ in self._files(kind)
                if (first is None or day >= first) and (last is None or day <= last)
            ]

        paths = listed()
        for attempt in range(_ATTEMPTS):
            if not paths:
                return schema.empty_table().select(wanted)
            try:
                readers = _LOCAL_READERS if self._local else _READERS
                with ThreadPoolExecutor(max_workers=min(readers, len(paths))) as pool:
                    parts = list(
                        pool.map(
                            lambda path: self._read_file(kind, path, needed, filter, prune or {}),
                            paths,
                        )
                    )
            except FileNotFoundError:
                # A compaction deleted a file after we listed it: its rows are in a newer
                # file, so list again.
                if attempt == _ATTEMPTS - 1:
                    raise
                paths = listed()
                continue
            except pa.ArrowException as exc:
                raise HistoryError(f"cannot read the {kind} history: {exc}") from exc
            # A directory listing taken while a compaction renames its file in and deletes
            # the old ones may miss both; the same listing after the read proves it did not.
            again = listed()
            if set(again) != set(paths) and attempt < _ATTEMPTS - 1:
                paths = again
                continue
            tables = [part for part in parts if part is not None and part.num_rows]
            if not tables:
                return schema.empty_table().select(wanted)
            return pa.concat_tables(tables).select(wanted)
        raise AssertionError("unreachable")  # pragma: no cover

    def _write(self, kind: str, day: str, table: pa.Table, stamp: int) -> str:
        """Write one file whole under ``kind/day=<day>/``; return its path."""
        folder = f"{self._root}/{kind}/day={day}"
        name = f"part-{stamp}-{uuid.uuid4().hex}.parquet"
        final = f"{folder}/{name}"
        try:
            if not self._local:
                # An object store makes an object visible only once its upload completed.
                pq.write_table(
                    table, final, filesystem=self._fs, compression="zstd", row_group_size=_ROW_GROUP
                )
                return final
            self._fs.create_dir(folder, recursive=True)
            temporary = f"{folder}/.{name}.tmp"
            try:
                pq.write_table(
                    table,
                    temporary,
                    filesystem=self._fs,
                    compression="zstd",
                    row_group_size=_ROW_GROUP,
                )
                self._fs.move(temporary, final)
            except BaseException:
                _remove_quietly(self._fs, temporary)
                raise
        except (OSError, pa.ArrowException) as exc:
            raise HistoryError(
                f"cannot write to the history at {self._location!r}: {exc}; nothing was stored "
                "by this call and what was stored before is untouched"
            ) from exc
        return final

    # --- collect -----------------------------------------------------------------------

    def collect(self, client: Client, *, indexes: Any = None, now: Any = None) -> CollectSummary:
        """Take one snapshot: every index's limits and the throughput points not stored yet.

        Collecting twice in a row stores nothing new the second time (but a limits row
        per index, so plan changes show with their time). Points missing between what is
        stored and what the service still returns are reported as gaps, never filled in.

        Args:
            client: A :class:`~searchkit.Client` (its account's indexes are listed).
            indexes: Use this list instead of calling ``client.list_indexes()`` (e.g. one
                you already have); ``client`` still names the account.
            now: The collect's own time (``collected_at``); the machine's clock by default.
                Give the emulator's when its clock is advanced (notebooks, tests).

        Returns:
            A :class:`CollectSummary`.

        Raises:
            HistoryError: The location cannot be written, or a stored file is foreign or
                corrupt; nothing was stored by the call then.
        """
        listed = client.list_indexes() if indexes is None else indexes
        collected_at = utc_instant(now) or pd.Timestamp(time.time_ns(), unit="ns", tz="UTC")
        stamp = int(collected_at.value)
        fallback_account = str(getattr(client, "username", "") or "")
        limits = limits_frame(listed)
        accounts = [str(_customer(i) or fallback_account) for i in _items(listed)]
        frame = throughput_frame(listed)
        account_of = dict(zip(limits.index, accounts, strict=True))
        new = pa.Table.from_pandas(
            pd.DataFrame(
                {
                    "account": frame["index_id"].map(account_of).astype(str).to_numpy(),
                    "index_id": frame["index_id"].astype(str).to_numpy(),
                    "name": frame["name"].astype(str).to_numpy(),
                    "time": frame["time"].dt.tz_convert("UTC").array,
                    "value": frame["value"].to_numpy(),
                    "collected_at": np.full(len(frame), stamp, dtype="datetime64[ns]"),
                }
            ),
            schema=THROUGHPUT_SCHEMA,
            preserve_index=False,
        )
        notes = self._index_changes(limits, accounts)
        gaps: list[Gap] = []
        if new.num_rows:
            new, gaps, backwards = self._unstored(new)
            notes += backwards
        files = []
        days = pc.strftime(new["time"], format="%Y-%m-%d", locale="C") if new.num_rows else None
        if days is not None:
            for day in pc.unique(days).to_pylist():
                part = new.filter(pc.equal(days, day))
                files.append(self._write("throughput", day, _sorted(part), stamp))
        snapshot = _limits_table(limits, accounts, stamp)
        if snapshot.num_rows:
            files.append(self._write("limits", f"{collected_at:%Y-%m-%d}", snapshot, stamp))
        counts = (
            pd.Series(new["name"].to_numpy(zero_copy_only=False)).value_counts(sort=False)
            if new.num_rows
            else pd.Series(dtype=int)
        )
        by_index = {str(name): int(counts.get(name, 0)) for name in limits["name"]}
        return CollectSummary(
            collected_at=collected_at,
            indexes=len(limits),
            new_points=new.num_rows,
            points_by_index=by_index,
            gaps=tuple(gaps),
            warnings=tuple(notes),
            files=tuple(files),
        )

    def _unstored(self, new: pa.Table) -> tuple[pa.Table, list[Gap], list[str]]:
        """Drop points already stored; find gaps and clocks gone backwards."""
        listed_from = new.group_by(["account", "index_id", "name"]).aggregate(
            [("time", "min"), ("time", "max")]
        )
        first_day = pc.strftime(pc.min(new["time"]), format="%Y-%m-%d").as_py()
        stored = self._read("throughput", days=(first_day, None), columns=list(_KEY))
        fresh = new.filter(pa.array(~_stored_mask(new, stored)))
        newest = stored.group_by(["account", "index_id"]).aggregate([("time", "max")])
        known = {
            (a, i): t
            for a, i, t in zip(
                newest["account"].to_pylist(),
                newest["index_id"].to_pylist(),
                newest["time_max"].to_pylist(),
                strict=True,
            )
        }
        missing = [
            (a, i)
            for a, i in zip(
                listed_from["account"].to_pylist(), listed_from["index_id"].to_pylist(), strict=True
            )
            if (a, i) not in known
        ]
        if missing:
            known.update(self._newest_before(first_day, missing))
        gaps, notes = [], []
        step = pd.Timedelta(minutes=1) * _GAP_FACTOR
        for account, index_id, name, oldest, latest in zip(
            *(listed_from[c].to_pylist() for c in ("account", "index_id", "name")),
            listed_from["time_min"].to_pylist(),
            listed_from["time_max"].to_pylist(),
            strict=True,
        ):
            stored_until = known.get((account, index_id))
            if stored_until is None:
                continue
            stored_until, oldest, latest = (pd.Timestamp(t) for t in (stored_until, oldest, latest))
            if latest < stored_until:
                notes.append(
                    f"clock went backwards for {name!r}: the service's newest point "
                    f"{latest:%Y-%m-%d %H:%M:%S} is older than the stored "
                    f"{stored_until:%Y-%m-%d %H:%M:%S} UTC; stored points are kept"
                )
            elif oldest - stored_until > step:
                gaps.append(Gap(account, index_id, name, stored_until, oldest))
        return fresh, gaps, notes

    def _newest_before(
        self, day: str, wanted: list[tuple[str, str]]
    ) -> dict[tuple[str, str], pd.Timestamp]:
        """Find the newest stored point of indexes with nothing on or after ``day``."""
        found: dict[tuple[str, str], pd.Timestamp] = {}
        earlier = sorted({d for d, _, _ in self._files("throughput") if d < day}, reverse=True)
        ids = pa.array(sorted({i for _, i in wanted}), pa.string())
        for previous in earlier:
            if len(found) == len(wanted):
                break
            part = self._read(
                "throughput",
                days=(previous, previous),
                columns=["account", "index_id", "time"],
                filter=ds.field("index_id").isin(ids),
            )
            newest = part.group_by(["account", "index_id"]).aggregate([("time", "max")])
            for a, i, t in zip(
                newest["account"].to_pylist(),
                newest["index_id"].to_pylist(),
                newest["time_max"].to_pylist(),
                strict=True,
            ):
                if (a, i) in wanted and (a, i) not in found:
                    found[(a, i)] = t
        return found

    def _index_changes(self, limits: pd.DataFrame, accounts: list[str]) -> list[str]:
        """Warn about indexes renamed or no longer listed since the previous collect.

        Only the newest day of limits snapshots is read, and in it the latest snapshot of
        each account, so the cost does not grow with the history.
        """
        files = self._files("limits")
        if not files:
            return []
        newest = files[-1][0]
        table = self._read(
            "limits", days=(newest, newest), columns=["account", "id", "name", "collected_at"]
        )
        before = table.to_pandas()
        last = before.groupby("account")["collected_at"].transform("max")
        before = before[before["collected_at"] == last].drop_duplicates(
            ["account", "id"], keep="last"
        )
        notes = []
        listed_accounts = set(accounts)
        current = dict(zip(limits.index, limits["name"], strict=True))
        for row in before.itertuples(index=False):
            index_id = row.id
            if row.account not in listed_accounts and listed_accounts:
                continue
            if index_id not in current:
                notes.append(
                    f"index {row.name!r} ({index_id}) is no longer listed; its history is kept"
                )
            elif current[index_id] != row.name:
                notes.append(
                    f"index {index_id} was renamed from {row.name!r} to "
                    f"{current[index_id]!r}; its history shows it under the new name"
                )
        return notes

    # --- read --------------------------------------------------------------------------

    def throughput(
        self,
        start: Any = None,
        end: Any = None,
        names: Iterable[str] | str | None = None,
        tz: TimeZone = "UTC",
        *,
        index_ids: Iterable[str] | None = None,
    ) -> pd.DataFrame:
        """Return stored throughput in the columns of :func:`~searchkit.throughput_frame`.

        Only the day partitions between ``start`` and ``end`` are opened, and the name
        filter is pushed down to the Parquet row groups.

        Args:
            start: First instant (inclusive): anything ``pd.Timestamp`` reads; a naive one
                is UTC. None is the beginning.
            end: Last instant (exclusive); None is the end.
            names: Only these index names (one name or several).
            tz: Time zone of the ``time`` column.
            index_ids: Only these index ids.

        Returns:
            Columns ``index_id``, ``name`` (categoricals; the name an index has at its
            newest point, so a renamed index stays one line), ``time``
            (``datetime64[ns, tz]``), ``value`` (``float64``) and ``account``
            (categorical), one row per (account, index, time), sorted by index then time.
            No ``attrs`` (it saves to Parquet as is); :func:`~searchkit.throughput_intervals`
            gives each index's sampling interval.

        Raises:
            HistoryError: A stored file is foreign or corrupt.
            ValidationError: ``tz`` is unknown.
        """
        zone = resolve_zone(tz, default=dt.timezone.utc) or dt.timezone.utc
        lo, hi = utc_instant(start), utc_instant(end)
        condition = None
        if lo is not None:
            condition = _and(condition, ds.field("time") >= pa.scalar(lo.value, _TS))
        if hi is not None:
            condition = _and(condition, ds.field("time") < pa.scalar(hi.value, _TS))
        if names is not None:
            wanted = [names] if isinstance(names, str) else list(names)
            condition = _and(condition, ds.field("name").isin(pa.array(wanted, pa.string())))
        if index_ids is not None:
            ids = pa.array(list(index_ids), pa.string())
            condition = _and(condition, ds.field("index_id").isin(ids))
        days = (
            None if lo is None else f"{lo:%Y-%m-%d}",
            None if hi is None else f"{(hi - pd.Timedelta(1, 'ns')):%Y-%m-%d}",
        )
        prune: dict[str, Any] = {
            "time": (None if lo is None else lo.value, None if hi is None else hi.value - 1)
        }
        if names is not None:
            prune["name"] = wanted
        if index_ids is not None:
            prune["index_id"] = ids.to_pylist()
        table = self._read("throughput", days=days, filter=condition, prune=prune)
        return _tidy(table, zone, self._current_names())

    def _days(self, kind: str) -> list[str]:
        """Return the UTC days (``YYYY-MM-DD``) holding files of ``kind``, oldest first."""
        return sorted({day for day, _, _ in self._files(kind)})

    def _newest_time(self) -> pd.Timestamp | None:
        """Return the newest stored point's time (reading only the newest day)."""
        files = self._files("throughput")
        if not files:
            return None
        newest = files[-1][0]
        table = self._read("throughput", days=(newest, newest), columns=["time"])
        if table.num_rows == 0:
            return None
        return pd.Timestamp(pc.max(table["time"]).value, unit="ns", tz="UTC")

    def _current_names(self) -> dict[str, str]:
        """Map index ids to their names in the newest limits snapshot (so renames show)."""
        files = self._files("limits")
        if not files:
            return {}
        newest = files[-1][0]
        table = self._read("limits", days=(newest, newest), columns=["id", "name", "collected_at"])
        latest = (
            table.to_pandas()
            .sort_values("collected_at", kind="stable")
            .drop_duplicates("id", keep="last")
        )
        return {
            str(i): str(n)
            for i, n in zip(latest["id"], latest["name"], strict=True)
            if n is not None
        }

    def limits(self, at: Any = None) -> pd.DataFrame:
        """Return the limits as of an instant: each index's latest snapshot up to ``at``.

        Args:
            at: The instant (a naive one is UTC); None is now (the latest snapshot).

        Returns:
            The columns of :func:`~searchkit.limits_frame` indexed by ``id``, plus
            ``account`` and ``collected_at`` (when that snapshot was taken). Indexes no
            longer listed keep their last snapshot.
        """
        when = utc_instant(at)
        condition = None
        days: tuple[str | None, str | None] = (None, None)
        if when is not None:
            condition = ds.field("collected_at") <= pa.scalar(when.value, _TS)
            days = (None, f"{when:%Y-%m-%d}")
        table = self._read("limits", days=days, filter=condition)
        frame = table.to_pandas()
        frame = frame.sort_values("collected_at", kind="stable").drop_duplicates(
            ["account", "id"], keep="last"
        )
        frame = frame.sort_values(["created", "id"], kind="stable")
        out = pd.DataFrame(index=pd.Index(frame["id"].astype("str"), dtype="str", name="id"))
        for name in LIMITS_COLUMNS:
            if name == "short_id":  # derived from the id, not stored
                out[name] = pd.array(out.index.str[:8].to_numpy(), dtype="str")
                continue
            values = frame[name].to_numpy()
            if name in ("type", "region"):
                known = TYPES if name == "type" else REGIONS
                seen = [v for v in dict.fromkeys(frame[name].dropna()) if v not in known]
                out[name] = pd.Categorical(values, categories=[*known, *seen])
            elif name == "input_enrichment_enabled":
                out[name] = pd.array(frame[name].tolist(), dtype="boolean")
            elif name == "created":  # aware nanoseconds, also when empty
                out[name] = pd.DatetimeIndex(pd.to_datetime(frame[name], utc=True)).as_unit("ns")
            elif name in ("name", "endpoint", "partner_email"):
                out[name] = pd.array(values, dtype="str")
            else:
                out[name] = values
        out["account"] = pd.array(frame["account"].to_numpy(), dtype="str")
        out["collected_at"] = pd.to_datetime(frame["collected_at"].to_numpy(), utc=True).as_unit(
            "ns"
        )  # also when empty
        return out

    # --- maintenance ---------------------------------------------------------------------

    def compact(self) -> dict[str, int]:
        """Merge each day's files into one, dropping duplicate points (the latest wins).

        Limits snapshots that repeat the one before and after them (no plan change) are
        dropped too, keeping the first and last of each unchanged run, so ``limits(at=)``
        answers the same and a month of 10-minute collects stays small.

        Safe while readers read and collectors write: the merged file is written whole
        before the files it replaces are deleted, and a file written meanwhile is left
        alone. Temporary files older than an hour (a writer killed mid-write) are deleted.

        Returns:
            ``{"partitions": merged days, "files_removed": n, "duplicates_dropped": n,
            "snapshots_thinned": n, "stale_temporaries_removed": n}``.
        """
        merged = removed = dropped = thinned = 0
        for kind in ("throughput", "limits"):
            by_day: dict[str, list[str]] = {}
            for day, path, _ in self._files(kind):
                by_day.setdefault(day, []).append(path)
            for day, paths in by_day.items():
                if len(paths) < 2:
                    continue
                table = self._read(kind, days=(day, day))
                if kind == "throughput":
                    kept = _latest(table)
                    dropped += table.num_rows - kept.num_rows
                    table = _sorted(kept)
                else:
                    kept = _thin_snapshots(table)
                    thinned += table.num_rows - kept.num_rows
                    table = kept
                stamp = int(pc.max(table["collected_at"]).value)
                self._write(kind, day, table, stamp)
                for path in paths:
                    _remove_quietly(self._fs, path)
                    self._checked.discard(path)
                merged += 1
                removed += len(paths)
        return {
            "partitions": merged,
            "files_removed": removed,
            "duplicates_dropped": dropped,
            "snapshots_thinned": thinned,
            "stale_temporaries_removed": self._remove_stale_temporaries(_STALE),
        }

    def info(self) -> HistoryInfo:
        """Summarise the history: indexes, time span, points, size on disk, gaps.

        Reads one day at a time (the time column and the keys), so memory stays that of a
        day whatever the history's length. A gap is a step between two stored points of an
        index longer than 1.5 times its usual sampling interval.
        """
        files = self._files("throughput") + self._files("limits")
        days = sorted({day for day, _, _ in self._files("throughput")})
        points = 0
        first: pd.Timestamp | None = None
        last: pd.Timestamp | None = None
        gaps: list[Gap] = []
        previous: dict[tuple[str, str], pd.Timestamp] = {}
        for day in days:
            table = self._read(
                "throughput", days=(day, day), columns=["account", "index_id", "name", "time"]
            )
            frame = _tidy(
                table.append_column("value", pa.nulls(table.num_rows, pa.float64())),
                dt.timezone.utc,
            )
            if frame.empty:
                continue
            points += len(frame)
            first = frame["time"].iloc[0] if first is None else min(first, frame["time"].min())
            last = frame["time"].max() if last is None else max(last, frame["time"].max())
            gaps += _day_gaps(frame, previous)  # also records every index seen
        return HistoryInfo(
            location=self._location,
            indexes=len(previous),
            points=points,
            first=first,
            last=last,
            files=len(files),
            bytes=sum(size for _, _, size in files),
            gaps=tuple(gaps),
        )


def _day_gaps(frame: pd.DataFrame, previous: dict[tuple[str, str], pd.Timestamp]) -> list[Gap]:
    """Find gaps in one day's tidy points (and since the day before, via ``previous``).

    An index's usual interval is the median spacing of its points in this day.
    """
    stamps = frame["time"].array
    times = stamps.asi8
    index_ids = frame["index_id"].array
    codes = index_ids.codes
    ids = index_ids.categories
    steps = median_spacing(codes, times, pd.Index(ids)).to_numpy()
    one_minute = np.timedelta64(pd.Timedelta(minutes=1).value, "ns")
    allowed = np.where(np.isnat(steps), one_minute, steps).astype(np.int64) * _GAP_FACTOR
    starts = np.flatnonzero(np.append(True, codes[1:] != codes[:-1]))
    ends = np.append(starts[1:] - 1, len(codes) - 1)
    accounts = frame["account"].array
    names = frame["name"].array
    found = []
    for start, end in zip(starts, ends, strict=True):
        key = (str(accounts[start]), str(ids[codes[start]]))
        before = previous.get(key)
        if before is not None and times[start] - before.value > allowed[codes[start]]:
            found.append(Gap(key[0], key[1], str(names[end]), before, stamps[start]))
        previous[key] = stamps[end]
    jump = np.flatnonzero((codes[1:] == codes[:-1]) & (np.diff(times) > allowed[codes[1:]]))
    for left in jump.tolist():
        found.append(
            Gap(
                str(accounts[left]),
                str(ids[codes[left]]),
                str(names[left]),
                stamps[left],
                stamps[left + 1],
            )
        )
    return found


def _items(indexes: Any) -> list[Any]:
    if isinstance(indexes, dict) or hasattr(indexes, "throughput_vector"):
        return [indexes]
    return list(indexes)


def _customer(item: Any) -> str | None:
    if isinstance(item, dict):
        return item.get("customer_id")
    return getattr(item, "customer_id", None)


def _compatible(found: pa.DataType, expected: pa.DataType) -> bool:
    if found == expected:
        return True
    if pa.types.is_timestamp(expected):
        return pa.types.is_timestamp(found)
    if pa.types.is_string(expected):
        return (
            pa.types.is_string(found)
            or pa.types.is_large_string(found)
            or (pa.types.is_dictionary(found) and pa.types.is_string(found.value_type))
        )
    return False


def _row_groups(parquet: pq.ParquetFile, prune: dict[str, Any]) -> list[int]:
    """Return the row groups whose min/max statistics can hold the wanted values."""
    metadata = parquet.metadata
    count = metadata.num_row_groups
    if not prune:
        return list(range(count))
    position = {metadata.schema.column(i).name: i for i in range(metadata.num_columns)}
    arrow = parquet.schema_arrow
    checks: list[tuple[int, str, Any]] = []
    for column, wanted in prune.items():
        if column not in position:
            continue
        if column == "time":
            kind = arrow.field("time").type
            if pa.types.is_timestamp(kind) and kind.unit == "ns":
                checks.append((position[column], "range", wanted))
        else:
            checks.append((position[column], "values", sorted(wanted)))
    keep = []
    for group in range(count):
        row_group = metadata.row_group(group)
        ok = True
        for place, how, allowed in checks:
            stats = row_group.column(place).statistics
            if stats is None or not stats.has_min_max:
                continue
            if how == "range":
                lo, hi = allowed
                low, high = stats.min_raw, stats.max_raw
                ok = (lo is None or high >= lo) and (hi is None or low <= hi)
            else:
                low, high = stats.min, stats.max
                ok = any(low <= value <= high for value in allowed)
            if not ok:
                break
        if ok:
            keep.append(group)
    return keep


def _remove_quietly(fs: pafs.FileSystem, path: str) -> None:
    with contextlib.suppress(OSError):
        fs.delete_file(path)


def _and(left: ds.Expression | None, right: ds.Expression) -> ds.Expression:
    return right if left is None else left & right


def _thin_snapshots(table: pa.Table) -> pa.Table:
    """Drop limits rows equal to both neighbours of the same index (keep runs' ends)."""
    if table.num_rows < 3:
        return table
    frame = table.to_pandas()
    frame = frame.sort_values(["account", "id", "collected_at"], kind="stable")
    values = [c for c in frame.columns if c != "collected_at"]
    digest = pd.util.hash_pandas_object(frame[values], index=False).to_numpy()
    same_prev = np.append(False, digest[1:] == digest[:-1])
    same_next = np.append(digest[:-1] == digest[1:], False)
    kept = frame[~(same_prev & same_next)]
    return pa.Table.from_pandas(kept, schema=LIMITS_SCHEMA, preserve_index=False)


def _stored_mask(new: pa.Table, stored: pa.Table) -> np.ndarray:
    """Return, for each row of ``new``, whether its (account, index_id, time) is stored."""
    if stored.num_rows == 0:
        return np.zeros(new.num_rows, dtype=bool)
    levels = []
    for column in ("account", "index_id"):
        both = pa.chunked_array(new[column].chunks + stored[column].chunks, pa.string())
        levels.append(pc.dictionary_encode(both.combine_chunks()).indices.to_numpy())
    times = [t["time"].combine_chunks().cast(pa.int64()).to_numpy() for t in (new, stored)]
    split = new.num_rows
    wanted = pd.MultiIndex.from_arrays([levels[0][:split], levels[1][:split], times[0]])
    have = pd.MultiIndex.from_arrays([levels[0][split:], levels[1][split:], times[1]])
    return np.asarray(wanted.isin(have))


def _sorted(table: pa.Table) -> pa.Table:
    return table.sort_by(
        [("account", "ascending"), ("index_id", "ascending"), ("time", "ascending")]
    )


def _latest(table: pa.Table) -> pa.Table:
    """Keep one row per (account, index_id, time): the one collected last."""
    if table.num_rows < 2:
        return table
    order = table.sort_by(
        [
            ("account", "ascending"),
            ("index_id", "ascending"),
            ("time", "ascending"),
            ("collected_at", "ascending"),
        ]
    )
    return _drop_repeats(order)


def _drop_repeats(order: pa.Table) -> pa.Table:
    """Given rows sorted by key then collected_at, keep the last row of each key."""
    same = np.ones(order.num_rows - 1, dtype=bool)
    for column in _KEY:
        values = order[column]
        if pa.types.is_timestamp(values.type):
            array = values.combine_chunks().cast(pa.int64()).to_numpy()
        else:
            array = pc.dictionary_encode(values.combine_chunks()).indices.to_numpy()
        same &= array[1:] == array[:-1]
    if not same.any():
        return order
    keep = np.append(~same, True)
    return order.filter(pa.array(keep))


def _tidy(table: pa.Table, zone: dt.tzinfo, rename: dict[str, str] | None = None) -> pd.DataFrame:
    """Deduplicate and sort stored points into the throughput frame's shape."""
    if table.num_rows == 0:
        none = pd.Categorical([], categories=pd.Index([], dtype="str"))  # as when not empty
        empty = pd.DataFrame(
            {
                "index_id": none,
                "name": none,
                "time": pd.DatetimeIndex([], tz=zone).as_unit("ns"),
                "value": np.array([], dtype=np.float64),
                "account": none,
            }
        )
        return empty
    account = pc.dictionary_encode(table["account"].combine_chunks())
    index_id = pc.dictionary_encode(table["index_id"].combine_chunks())
    times = table["time"].combine_chunks().cast(pa.int64()).to_numpy()
    has_collected = "collected_at" in table.column_names
    keys = [times, index_id.indices.to_numpy(), account.indices.to_numpy()]
    if has_collected:
        keys.insert(0, table["collected_at"].combine_chunks().cast(pa.int64()).to_numpy())
    order = np.lexsort(keys)
    a_codes = keys[-1][order]
    i_codes = keys[-2][order]
    t_sorted = times[order]
    same = (
        (a_codes[1:] == a_codes[:-1])
        & (i_codes[1:] == i_codes[:-1])
        & (t_sorted[1:] == t_sorted[:-1])
    )
    if same.any():
        keep = np.append(~same, True)
        order, a_codes, i_codes, t_sorted = (
            order[keep],
            a_codes[keep],
            i_codes[keep],
            t_sorted[keep],
        )
    values = table["value"].combine_chunks().take(pa.array(order)).to_numpy(zero_copy_only=False)
    ids = np.asarray(index_id.dictionary.to_pylist(), dtype=object)
    # The name an index has at its newest point labels all of its points (or, when given,
    # its name in the newest limits snapshot). Only those few names become Python strings.
    last = np.append(i_codes[1:] != i_codes[:-1], True)
    last_codes = i_codes[last]
    last_names = table["name"].combine_chunks().take(pa.array(order[last])).to_pylist()
    rename = rename or {}
    latest_name = {
        int(c): rename.get(str(ids[c]), n) for c, n in zip(last_codes, last_names, strict=True)
    }
    used = list(dict.fromkeys(last_codes.tolist()))
    position = np.full(len(ids), -1, dtype=np.int64)
    position[used] = np.arange(len(used))
    id_codes = position[i_codes]
    id_cat = pd.Categorical.from_codes(id_codes, categories=pd.Index(ids[used].tolist()))
    name_values = [latest_name[c] for c in used]
    name_categories = list(dict.fromkeys(name_values))
    name_of_id = pd.Index(name_categories).get_indexer(name_values)
    name_cat = pd.Categorical.from_codes(name_of_id[id_codes], categories=pd.Index(name_categories))
    accounts = np.asarray(account.dictionary.to_pylist(), dtype=object)
    account_used = sorted(set(a_codes[last].tolist()))
    account_position = np.full(len(accounts), -1, dtype=np.int64)
    account_position[account_used] = np.arange(len(account_used))
    account_cat = pd.Categorical.from_codes(
        account_position[a_codes], categories=pd.Index(accounts[account_used].tolist())
    )
    frame = pd.DataFrame(
        {
            "index_id": id_cat,
            "name": name_cat,
            "time": pd.DatetimeIndex(t_sorted.view("datetime64[ns]"), tz="UTC").tz_convert(zone),
            "value": values.astype(np.float64),
            "account": account_cat,
        }
    )
    return frame


def _limits_table(limits: pd.DataFrame, accounts: list[str], stamp: int) -> pa.Table:
    frame = limits.reset_index()
    columns: dict[str, Any] = {"account": accounts, "id": frame["id"].astype(str).tolist()}
    for name in LIMITS_COLUMNS:
        if name == "short_id":  # derived from the id on reading
            continue
        column = frame[name]
        if name in ("type", "region", "name", "endpoint", "partner_email"):
            columns[name] = [None if pd.isna(v) else str(v) for v in column]
        elif name == "input_enrichment_enabled":
            columns[name] = [None if pd.isna(v) else bool(v) for v in column]
        elif name == "created":
            columns[name] = column.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy()
        else:
            columns[name] = column.to_numpy(dtype=np.float64)
    columns["collected_at"] = np.full(len(frame), stamp, dtype="datetime64[ns]")
    arrays = [pa.array(columns[f.name], f.type, from_pandas=True) for f in LIMITS_SCHEMA]
    return pa.Table.from_arrays(arrays, schema=LIMITS_SCHEMA)
