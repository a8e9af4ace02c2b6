"""Where the history's files live: the partition folders, listing and writing (the columns
of each dataset are :mod:`searchkit.history.schemas`', named here too).

Layout (readable without searchkit by DuckDB, Polars, Spark or Dask)::

    <location>/throughput/day=YYYY-MM-DD/part-<collected_at ns>-<uuid>.parquet
    <location>/limits/day=YYYY-MM-DD/part-<collected_at ns>-<uuid>.parquet

Files are only ever added, each written whole (a temporary name, then a rename; on an object
store one PUT, which is atomic) and never changed.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import os
import re
import threading
import uuid
import warnings
from collections.abc import Callable, Iterator
from typing import ParamSpec, Protocol, TypeVar

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from searchkit.errors import HistoryError, HistoryWarning
from searchkit.history import folders, locks, recent_bytes
from searchkit.history.encoding import WRITE_OPTIONS, write_options
from searchkit.history.schemas import (
    KEY,
    LIMITS_SCHEMA,
    OPTIONAL,
    ROLLUP_SCHEMA,
    SCHEMAS,
    THROUGHPUT_SCHEMA,
    TIMESTAMP,
    compatible,
    shown,
)
from searchkit.history.text_columns import encoded_table

__all__ = [
    "ATTEMPTS",
    "KEY",
    "LIMITS_SCHEMA",
    "OPTIONAL",
    "PACKS",
    "ROLLUP_SCHEMA",
    "SCHEMAS",
    "STALE",
    "THROUGHPUT_SCHEMA",
    "TIMESTAMP",
    "WRITE_OPTIONS",
    "HistoryWarning",
    "Layout",
    "file_seconds",
    "one_listing",
    "remove_quietly",
]

#: Listings and reads that race a writer or a compaction are retried this many times.
ATTEMPTS = 5
#: A temporary file this old belongs to a writer that died mid-write (a write takes seconds).
STALE = dt.timedelta(hours=1)


class Layout:
    """The files of one history: list them by kind and day, write one whole.

    Args:
        location: The location as the user gave it (shown in messages).
        fs: The filesystem holding the dataset.
        root: The dataset's path inside ``fs``.
    """

    def __init__(self, location: str, fs: pafs.FileSystem, root: str) -> None:
        self.location = location
        self.fs = fs
        self.root = root
        self.local = isinstance(fs, pafs.LocalFileSystem)
        #: Paths whose schema was checked already (files never change once written).
        self.checked: set[str] = set()
        # The schemas found good, by kind: a year of files written by one writer has one
        # (each file's is compared, not checked column by column again).
        self._good: dict[str, list[pa.Schema]] = {}
        self._warned: set[str] = set()
        # The listings of the current listing() scope, by dataset ("" the whole store).
        self._listings: dict[str, object] | None = None
        self._depth = 0
        self._scope_lock = threading.Lock()

    @contextlib.contextmanager
    def listing(self) -> Iterator[None]:
        """Share one listing of each dataset among every read inside (a public call).

        On an object store each dataset (``throughput``, ``limits``, ``rollups``) is then
        listed with one recursive LIST for the whole call, whatever the days it reads;
        this layout's own writes and deletes drop what they change. Nested scopes, and the
        threads a call reads with, share the outermost one. Local folders are listed as
        asked (that costs no request).
        """
        with self._scope_lock:
            self._depth += 1
            if self._depth == 1:
                self._listings = {}
        try:
            yield
        finally:
            with self._scope_lock:
                self._depth -= 1
                if self._depth == 0:
                    self._listings = None

    def everything(self) -> list[pafs.FileInfo]:
        """Every entry under the root, from one recursive LIST (an object store only),
        kept for the :meth:`listing` scope: the datasets' listings are taken from it."""
        listings = self._listings
        if listings is not None and "" in listings:
            return listings[""]  # type: ignore[return-value]
        found = self._list(self.root, recursive=True)
        if listings is not None:
            listings[""] = found
        return found

    def days(self, kind: str) -> list[str]:
        """Return the UTC days (``YYYY-MM-DD``) with a folder of ``kind``, oldest first.

        One listing of the ``kind`` folder alone. Folders that are not the layout's
        (``day=notadate``, a link out of the store) are skipped and named in a warning.
        """
        if not self.local:
            return self._listed(kind)[0]
        days, stray = [], []
        # A folder that is no link lies where its parent does: one resolution per listing.
        outside = self._leaves_store(f"{self.root}/{kind}", link=False)
        for folder, link in self._folders(f"{self.root}/{kind}"):
            if folder.startswith((".", "_")):
                continue  # a lock or an engine's marker, not data
            day = folder[4:] if folder.startswith("day=") else ""
            if not _is_day(day) or outside or link:
                stray.append(f"{kind}/{folder}")
                continue
            days.append(day)
        self._warn_stray(stray)
        return sorted(days)

    def files(
        self, kind: str, first: str | None = None, last: str | None = None, *, fresh: bool = False
    ) -> list[tuple[str, str, int]]:
        """Return ``(day, path, size)`` of every finished data file of ``kind``, by day.

        Locally only the day folders between ``first`` and ``last`` (inclusive) are listed,
        so the cost follows the files asked for. On an object store the whole dataset is
        one LIST request (a page per 1,000 files), taken once per :meth:`listing` scope
        (``fresh``: taken again). One listing is enough for a reader there: S3 lists keys
        in name order, and a compaction uploads its merged file, named after every file it
        replaces (:meth:`after`), before it deletes any of them; so a listing that misses
        a replaced file (deleted before the listing passed its name, hence after the
        upload completed) lists the merged file, which it reaches later.
        """
        return [entry[:3] for entry in self.entries(kind, first, last, fresh=fresh)]

    def entries(
        self, kind: str, first: str | None = None, last: str | None = None, *, fresh: bool = False
    ) -> list[tuple[str, str, int, int]]:
        """As :meth:`files`, with each file's modification time (epoch seconds, -1 when the
        filesystem gives none): ``(day, path, size, mtime)``. A file rewritten under its
        name (by another tool) changes its size or time; the same listing, no request more.
        """
        if not self.local:
            return [
                entry
                for entry in self._listed(kind, fresh)[1]
                if (first is None or entry[0] >= first) and (last is None or entry[0] <= last)
            ]
        found = []
        for day in self.days(kind):
            if (first is not None and day < first) or (last is not None and day > last):
                continue
            # Never pyarrow's listing: it leaves out a file replaced while it lists.
            folder = f"{kind}/day={day}"
            infos, links = folders.day_files(
                self.fs, f"{self.root}/{folder}", attempts=ATTEMPTS, location=self.location
            )
            self._warn_stray([f"{folder}/{base}" for base in links])
            found += [(day, i.path, int(i.size or 0), file_seconds(i)) for i in infos]
        found.sort()
        return found

    def _listed(
        self, kind: str, fresh: bool = False
    ) -> tuple[list[str], list[tuple[str, str, int, int]]]:
        """The days and files of ``kind`` on an object store: one recursive listing, kept
        for the :meth:`listing` scope this call runs in."""
        cache = self._listings
        if cache is not None and not fresh and kind in cache:
            return cache[kind]  # type: ignore[return-value]
        folder = f"{self.root}/{kind}"
        days: set[str] = set()
        files, stray, packed = [], [], []
        if cache is not None and not fresh and "" in cache:  # the whole store, listed once
            infos = [i for i in self.everything() if i.path.startswith(folder + "/")]
        else:
            infos = self._list(folder, recursive=True)
        for info in infos:
            inside, _, base = info.path[len(folder) + 1 :].partition("/")
            if inside == PACKS and kind == "rollups":
                packed.extend(_pack_entry(info))
                continue
            if inside.startswith((".", "_")) or (not base and info.type != pafs.FileType.Directory):
                continue  # a marker, a lock, or a file beside the day folders: not data
            day = inside[4:] if inside.startswith("day=") else ""
            if not _is_day(day):
                stray.append(f"{kind}/{inside}")
                continue
            days.add(day)
            if (
                base
                and "/" not in base
                and info.type == pafs.FileType.File
                and base.endswith(".parquet")
                and not base.startswith((".", "_"))
            ):
                files.append((day, info.path, int(info.size or 0), file_seconds(info)))
        self._warn_stray(sorted(set(stray)))
        listed = (sorted(days), sorted(files))
        if cache is not None:
            cache[kind] = listed
            cache[f"{kind} {PACKS}"] = sorted(packed)
        return listed

    def packs(self) -> list[tuple[str, str, int]]:
        """``(month, path, size)`` of each month pack of the rollups
        (:mod:`searchkit.history.packs`), by month: on an object store from the rollups'
        own listing (no request more), locally one folder read a month."""
        if not self.local:
            cache = self._listings
            key = f"rollups {PACKS}"
            if cache is not None:
                if key not in cache:
                    cache.pop("rollups", None)
                    self._listed("rollups")  # keeps the packs it meets
                return cache[key]  # type: ignore[return-value]
            folder = f"{self.root}/rollups/{PACKS}"
            return sorted(e for i in self._list(folder, recursive=True) for e in _pack_entry(i))
        found = []
        for month, _ in self._folders(f"{self.root}/rollups/{PACKS}"):
            for info in self._list(f"{self.root}/rollups/{PACKS}/{month}"):
                found.extend(_pack_entry(info))
        return sorted(found)

    @staticmethod
    def after(paths: list[str], stamp: int) -> int:
        """A stamp for a file that replaces ``paths``: ``stamp``, or more so that its name
        (``part-<stamp>-...``) sorts after each of theirs (see :meth:`files`)."""
        for path in paths:
            found = re.match(r"part-(\d+)-", path.rpartition("/")[2])
            if found:
                stamp = max(stamp, int(found.group(1)) + 1)
        return stamp

    def _forget(self, path: str) -> None:
        """Drop the scope's listings that hold ``path`` (this layout changed it)."""
        cache = self._listings
        if cache is not None:
            kind = path[len(self.root) + 1 :].partition("/")[0]
            cache.pop(kind, None)
            cache.pop(f"{kind} {PACKS}", None)
            cache.pop("", None)
            cache.pop(f"bytes of {path}", None)

    def fetch(self, path: str, *, keep: bool = False, recent: bool = False) -> pa.Buffer:
        """The bytes of the file at ``path``, fetched whole (on an object store a HEAD and
        one GET); with ``keep``, kept for the :meth:`listing` scope, so the reads of one
        call fetch it once (the newest limits file: the limits, the names and the
        snapshots of one ``usage_frame`` each read it). With ``recent`` (a month pack),
        kept only while it is among the few such files used last in the scope
        (:mod:`searchkit.history.recent_bytes`)."""
        cache = self._listings
        key = f"bytes of {path}"
        if cache is not None and (keep or recent) and key in cache:
            data: pa.Buffer = cache[key]
            if recent:
                recent_bytes.used(cache, key, data, self._scope_lock)
            return data
        with self.fs.open_input_file(path) as handle:
            data = handle.read_buffer()
        if cache is not None and keep:
            cache[key] = data
        elif cache is not None and recent:
            recent_bytes.used(cache, key, data, self._scope_lock)
        return data

    def newest_day(self, kind: str) -> str | None:
        """The newest UTC day holding a file of ``kind`` (listing only the newest folders)."""
        for day in reversed(self.days(kind)):
            if self.files(kind, day, day):
                return day
        return None

    def _list(self, folder: str, recursive: bool = False) -> list[pafs.FileInfo]:
        """List one folder (not its subfolders, unless ``recursive``); a missing folder
        lists as empty."""
        selector = pafs.FileSelector(folder, recursive=recursive, allow_not_found=True)
        for attempt in range(ATTEMPTS):
            try:
                return list(self.fs.get_file_info(selector))
            except FileNotFoundError as exc:
                # A compaction removed the folder, or a writer created it, while we listed.
                if attempt == ATTEMPTS - 1:
                    raise HistoryError(
                        f"the history at {self.location!r} kept changing while it was "
                        f"listed ({exc}); try again"
                    ) from exc
            except OSError as exc:
                raise HistoryError(f"cannot list the history at {self.location!r}: {exc}") from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _folders(self, folder: str) -> list[tuple[str, bool]]:
        """The folders in a local ``folder`` (links to folders too), each with whether it
        is a link: one directory read, no call per entry (the entries' types come with
        it), so listing a year of day folders stays cheap however often it is asked."""
        try:
            with os.scandir(folder) as entries:
                return [(entry.name, entry.is_symlink()) for entry in entries if entry.is_dir()]
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as exc:
            raise HistoryError(f"cannot list the history at {self.location!r}: {exc}") from exc

    def _leaves_store(self, path: str, *, link: bool = True) -> bool:
        """Whether a local folder is a link (``link``: counted as leaving), or resolves
        outside the store."""
        if not self.local:
            return False
        if link and os.path.islink(path):
            return True
        real_root = os.path.realpath(self.root)
        return not os.path.realpath(path).startswith(real_root + os.sep)

    def _warn_stray(self, stray: list[str]) -> None:
        new = [name for name in stray if name not in self._warned]
        if not new:
            return
        self._warned.update(new)
        warnings.warn(
            f"skipped {len(new)} entr{'y' if len(new) == 1 else 'ies'} in the history at "
            f"{self.location!r} that are not its layout (day=YYYY-MM-DD folders of files, "
            f"no links out of the store): {', '.join(new)}",
            HistoryWarning,
            stacklevel=4,
        )

    def warn_once(self, key: str, message: str, stacklevel: int = 3) -> bool:
        """Warn ``message`` as a :class:`HistoryWarning` the first time ``key`` is seen by
        this layout (a file's problem is said once, not at every read); return whether it
        warned."""
        if key in self._warned:
            return False
        self._warned.add(key)
        warnings.warn(message, HistoryWarning, stacklevel=stacklevel)
        return True

    def remove_stale_temporaries(self, older_than: dt.timedelta) -> int:
        """Delete temporary files a writer killed mid-write left behind (never read)."""
        if not self.local:
            return 0  # object stores have no temporary names: an upload shows whole or not
        removed = 0
        cutoff = dt.datetime.now(dt.timezone.utc) - older_than
        for kind in SCHEMAS:
            selector = pafs.FileSelector(
                f"{self.root}/{kind}", recursive=True, allow_not_found=True
            )
            for info in self.fs.get_file_info(selector):
                base = info.path.rpartition("/")[2]
                if not (base.startswith(".part-") and base.endswith(".parquet.tmp")):
                    continue
                mtime = info.mtime
                if mtime is not None and mtime.astimezone(dt.timezone.utc) < cutoff:
                    remove_quietly(self.fs, info.path)
                    removed += 1
        return removed

    def check(self, kind: str, path: str, schema: pa.Schema) -> None:
        """Refuse a file whose columns are not this layout's, naming it."""
        if path in self.checked:
            return
        good = self._good.setdefault(kind, [])
        if any(schema.equals(known) for known in good):
            self.checked.add(path)
            return
        expected = SCHEMAS[kind]
        optional = OPTIONAL.get(kind, ())
        missing = [f.name for f in expected if f.name not in (*schema.names, *optional)]
        wrong = [
            f"{f.name} is {schema.field(f.name).type}, expected {shown(f.type)}"
            for f in expected
            if f.name in schema.names and not compatible(schema.field(f.name).type, f.type)
        ]
        if missing or wrong:
            what = "; ".join(
                ([f"missing column(s) {', '.join(missing)}"] if missing else []) + wrong
            )
            raise HistoryError(
                f"{path} was not written by searchkit's history ({what}); move it out of "
                f"the {kind} folder to continue"
            )
        self.checked.add(path)
        if len(good) < 8:  # a few writers' schemas; more are checked column by column
            good.append(schema)

    def write(
        self,
        kind: str,
        day: str,
        table: pa.Table,
        stamp: int,
        *,
        folder: str | None = None,
        row_group_size: int | None = None,
    ) -> str:
        """Write one file whole under ``kind/day=<day>/`` (or the ``folder`` under the
        root given; in row groups of ``row_group_size`` rows); return its path."""
        folder = f"{self.root}/{folder or f'{kind}/day={day}'}"
        name = f"part-{stamp}-{uuid.uuid4().hex}.parquet"
        final = f"{folder}/{name}"
        table = stored(table)
        options = write_options(kind, table.schema)
        if row_group_size is not None:
            options = {**options, "row_group_size": row_group_size}
        self._forget(final)
        try:
            if not self.local:
                # An object store makes an object visible only once its upload completed.
                pq.write_table(table, final, filesystem=self.fs, **options)
                return final
            self.fs.create_dir(folder, recursive=True)
            temporary = f"{folder}/.{name}.tmp"
            try:
                pq.write_table(table, temporary, filesystem=self.fs, **options)
                self.fs.move(temporary, final)
            except BaseException:
                remove_quietly(self.fs, temporary)
                raise
        except (OSError, pa.ArrowException) as exc:
            raise HistoryError(
                f"cannot write to the history at {self.location!r}: {exc}; this file was not "
                "stored and what was stored before is untouched"
            ) from exc
        return final

    def remove(self, path: str) -> bool:
        """Delete one file; return whether this call deleted it (gone or kept: False)."""
        self.checked.discard(path)
        self._forget(path)
        try:
            self.fs.delete_file(path)
        except OSError:
            return False
        return True

    @contextlib.contextmanager
    def lock(self, kind: str, day: str) -> Iterator[bool]:
        """Hold a day's compaction lock; yield False when another process's compactor
        holds it (one of this process is waited for: :func:`~searchkit.history.locks.in_process`).

        Local folders only (an exclusive create, holding this process's pid and host); on
        an object store nothing is locked and two compactions may both merge a day, which
        costs a duplicate file that readers and the next compaction drop. A lock whose
        holder is gone (same host, no such pid) or older than :data:`STALE` (the only
        rule for a holder on another host) is taken over; a day skipped is named in a
        :class:`HistoryWarning` saying who holds it (see :mod:`searchkit.history.locks`).
        """
        if not self.local:
            yield True
            return
        path = f"{self.root}/{kind}/day={day}/_compacting.lock"
        with locks.day_lock(path, f"{kind} day {day}", STALE) as held:
            yield held


class _HasLayout(Protocol):
    _layout: Layout


_P = ParamSpec("_P")
_R = TypeVar("_R")


def one_listing(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run a History method in one :meth:`Layout.listing` scope (its first argument's)."""

    @functools.wraps(method)
    def scoped(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        owner: _HasLayout = args[0]  # type: ignore[assignment]
        with owner._layout.listing():
            return method(*args, **kwargs)

    return scoped


_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
#: The folder of the rollups' month packs (:mod:`searchkit.history.packs`): named ``_...``
#: so that engines reading the rollups dataset (Spark, DuckDB) skip it, as the day listing does.
PACKS = "_months"
_MONTH = re.compile(r"month=(\d{4}-\d{2})")


def _pack_entry(info: pafs.FileInfo) -> list[tuple[str, str, int]]:
    """``[(month, path, size)]`` when ``info`` is a finished month pack, else ``[]``."""
    month_folder, _, base = info.path.rpartition("/")
    found = _MONTH.fullmatch(month_folder.rpartition("/")[2])
    if found is None or info.type != pafs.FileType.File or not base.endswith(".parquet"):
        return []
    if base.startswith((".", "_")):
        return []  # a writer's temporary file
    return [(found.group(1), info.path, int(info.size or 0))]


def file_seconds(info: pafs.FileInfo) -> int:
    """A listed file's modification time in whole seconds (what every store keeps: S3's
    listing and its HEAD differ below the second), -1 when there is none."""
    nanos = info.mtime_ns
    return -1 if nanos is None else int(nanos) // 1_000_000_000


def _is_day(text: str) -> bool:
    if not _DAY.fullmatch(text):
        return False
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def stored(table: pa.Table) -> pa.Table:
    """Return ``table`` as it is written: one dictionary per text column, no metadata.

    One dictionary of the texts the rows use is what Parquet writes as the column's
    dictionary page directly; chunks with different dictionaries would make the writer
    copy the text per row (and fail past 2 GiB of copies).
    """
    return encoded_table(table).replace_schema_metadata(None)


def remove_quietly(fs: pafs.FileSystem, path: str) -> None:
    """Delete ``path``; a file already gone (or undeletable) is left to the next call."""
    with contextlib.suppress(OSError):
        fs.delete_file(path)
