"""Where the history's files live: the schemas, the partition folders, listing and writing.

Layout (readable without searchkit by DuckDB, Polars, Spark or Dask)::

    <location>/throughput/day=YYYY-MM-DD/part-<collected_at ns>-<uuid>.parquet
    <location>/limits/day=YYYY-MM-DD/part-<collected_at ns>-<uuid>.parquet

Files are only ever added, each written whole (a temporary name, then a rename; on an object
store one PUT, which is atomic) and never changed.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import uuid
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from searchkit.errors import HistoryError, ValidationError, mask_url
from searchkit.model.limits import LIMIT_FIELDS

__all__ = [
    "ATTEMPTS",
    "KEY",
    "LIMITS_SCHEMA",
    "SCHEMAS",
    "STALE",
    "THROUGHPUT_SCHEMA",
    "TIMESTAMP",
    "Layout",
    "remove_quietly",
]

TIMESTAMP = pa.timestamp("ns", tz="UTC")
THROUGHPUT_SCHEMA = pa.schema(
    [
        ("account", pa.string()),
        ("index_id", pa.string()),
        ("name", pa.string()),
        ("time", TIMESTAMP),
        ("value", pa.float64()),
        ("collected_at", TIMESTAMP),
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
        ("created", TIMESTAMP),
        ("input_enrichment_enabled", pa.bool_()),
        ("partner_email", pa.string()),
        *[(field, pa.float64()) for field in LIMIT_FIELDS],
        ("collected_at", TIMESTAMP),
    ]
)
SCHEMAS = {"throughput": THROUGHPUT_SCHEMA, "limits": LIMITS_SCHEMA}
#: A point's identity: one row per key is kept (see :mod:`searchkit.history.dedupe`).
KEY = ("account", "index_id", "time")
# Sorted by index then time inside a file, row groups this size let a reader of one index
# skip the others' groups from the statistics alone.
ROW_GROUP = 16_384
#: Listings and reads that race a writer or a compaction are retried this many times.
ATTEMPTS = 5
#: A temporary file this old belongs to a writer that died mid-write (a write takes seconds).
STALE = dt.timedelta(hours=1)


#: Schemes a location may name; anything else is refused at once (pyarrow would try, and
#: e.g. gs:// waits a minute for cloud credentials): pass ``filesystem=`` for those.
SCHEMES = ("file", "s3")


def open_location(
    location: str,
    filesystem: pafs.FileSystem | None,
    storage_options: dict[str, Any] | None,
) -> tuple[pafs.FileSystem, str]:
    """Return the filesystem and root path a history location names.

    Raises:
        ValidationError: The location is empty, names an unsupported scheme, or an
            ``s3://`` location names no bucket.
        HistoryError: pyarrow cannot open it. Credentials written in the location are
            masked in every message (:func:`~searchkit.errors.mask_url`).
    """
    if filesystem is not None:
        return filesystem, location.rstrip("/")
    if not location.strip():
        raise ValidationError(
            "location is empty: give a folder, or an s3://BUCKET/PREFIX URL (an empty "
            "location would write into the current folder)"
        )
    if "://" not in location:
        return pafs.LocalFileSystem(), os.path.abspath(location)
    shown = mask_url(location)
    scheme, _, rest = location.partition("://")
    if scheme.lower() not in SCHEMES:
        raise ValidationError(
            f"location {shown!r}: the scheme {scheme + '://'!r} is not supported; give a "
            "folder, file:// or s3://BUCKET/PREFIX, or pass filesystem= (a pyarrow "
            "FileSystem) for another store"
        )
    bucket = rest.rpartition("@")[2] if "@" in rest.partition("/")[0] else rest
    if scheme.lower() == "s3" and not bucket.partition("/")[0].partition("?")[0]:
        raise ValidationError(f"location {shown!r} names no bucket: use s3://BUCKET/PREFIX")
    if scheme == "s3" and storage_options is not None:
        return pafs.S3FileSystem(**storage_options), rest.rstrip("/")
    try:
        fs, root = pafs.FileSystem.from_uri(location)
    except (pa.ArrowInvalid, OSError) as exc:
        if shown == location:
            raise HistoryError(f"cannot open history location {location!r}: {exc}") from exc
        # pyarrow's text repeats the location, credentials and all, or where they break it.
        raise HistoryError(
            f"cannot open history location {shown!r} ({type(exc).__name__}); pass "
            "credentials as storage_options={'access_key': ..., 'secret_key': ...} or in "
            "the AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY environment variables, not in "
            "the location"
        ) from None
    return fs, root.rstrip("/")


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

    def files(self, kind: str) -> list[tuple[str, str, int]]:
        """Return ``(day, path, size)`` of every finished data file of ``kind``, by day."""
        selector = pafs.FileSelector(f"{self.root}/{kind}", recursive=True, allow_not_found=True)
        for attempt in range(ATTEMPTS):
            try:
                infos = self.fs.get_file_info(selector)
                break
            except FileNotFoundError:
                # A writer renamed a temporary file, or created the folder, while we walked.
                if attempt == ATTEMPTS - 1:
                    raise
            except OSError as exc:
                raise HistoryError(f"cannot list the history at {self.location!r}: {exc}") from exc
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
        expected = SCHEMAS[kind]
        missing = [f.name for f in expected if f.name not in schema.names]
        wrong = [
            f"{f.name} is {schema.field(f.name).type}, expected {f.type}"
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

    def write(self, kind: str, day: str, table: pa.Table, stamp: int) -> str:
        """Write one file whole under ``kind/day=<day>/``; return its path."""
        folder = f"{self.root}/{kind}/day={day}"
        name = f"part-{stamp}-{uuid.uuid4().hex}.parquet"
        final = f"{folder}/{name}"
        try:
            if not self.local:
                # An object store makes an object visible only once its upload completed.
                pq.write_table(
                    table, final, filesystem=self.fs, compression="zstd", row_group_size=ROW_GROUP
                )
                return final
            self.fs.create_dir(folder, recursive=True)
            temporary = f"{folder}/.{name}.tmp"
            try:
                pq.write_table(
                    table,
                    temporary,
                    filesystem=self.fs,
                    compression="zstd",
                    row_group_size=ROW_GROUP,
                )
                self.fs.move(temporary, final)
            except BaseException:
                remove_quietly(self.fs, temporary)
                raise
        except (OSError, pa.ArrowException) as exc:
            raise HistoryError(
                f"cannot write to the history at {self.location!r}: {exc}; nothing was stored "
                "by this call and what was stored before is untouched"
            ) from exc
        return final

    def remove(self, path: str) -> None:
        """Delete one file, quietly if it is gone already."""
        remove_quietly(self.fs, path)
        self.checked.discard(path)


def compatible(found: pa.DataType, expected: pa.DataType) -> bool:
    """Whether a column of type ``found`` reads as ``expected`` (a compatible writer's)."""
    if found == expected:
        return True
    if pa.types.is_timestamp(expected):
        return bool(pa.types.is_timestamp(found))
    if pa.types.is_string(expected):
        return bool(
            pa.types.is_string(found)
            or pa.types.is_large_string(found)
            or (pa.types.is_dictionary(found) and pa.types.is_string(found.value_type))
        )
    return False


def remove_quietly(fs: pafs.FileSystem, path: str) -> None:
    """Delete ``path``; a file already gone (or undeletable) is left to the next call."""
    with contextlib.suppress(OSError):
        fs.delete_file(path)
