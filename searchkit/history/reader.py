"""Reading the history's files: day ranges, the row groups a read's bounds need, retries
around compactions, and a read refused before it starts when it would not fit in memory."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from searchkit.errors import HistoryError
from searchkit.frames.counting import DAY_NS
from searchkit.history import budget
from searchkit.history.bounds import Bounds
from searchkit.history.layout import ATTEMPTS, PACKS, SCHEMAS, Layout
from searchkit.history.text_columns import TEXT, encoded, encoded_table

__all__ = ["DATED", "Planned", "conformed", "own_day", "plan_file", "read", "read_planned"]

#: The column that dates a row of each kind. A row counts only in its own UTC day's folder:
#: searchkit files a point by its time and a rollup by its period, so a row dated on
#: another day was put there by another writer; every reader leaves it out (one rule for
#: ``throughput()``, the points, usage, the forecast and the rollups), and says so.
DATED = {"throughput": "time", "rollups": "period"}

# Files are read in parallel: pyarrow decodes without holding the GIL, and on an object store
# the requests overlap. Locally two readers match a small machine and keep memory low (each
# reader thread holds its own allocator arenas). On an object store a reader mostly waits for
# an answer, so 32 (with 50 ms a request, `bench/s3.py --latency 50`, 200 indexes x 90 days,
# two rounds at load 13: usage_frame 1.87-2.18 s against 3.00-3.20 s with 8, info() 1.20-1.43
# s against 1.88-2.28 s).
_READERS = 32
_LOCAL_READERS = 2
# On an object store a request costs tens of milliseconds and money, bytes in the same
# region almost nothing: a read of files up to this size in all is done by fetching each
# file whole (a HEAD and one GET: pyarrow's open asks for the size) and reading its footer
# and row groups from memory. A larger read takes each file's footer first (so a read that
# would not fit is refused before its data is fetched), then its row groups by ranges.
_WHOLE = 256 << 20
_FORMAT = ds.ParquetFileFormat()
#: Nanoseconds per unit of an Arrow timestamp.
_NANOS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}


@dataclass(frozen=True)
class Planned:
    """One file's footer read: the row groups a read wants from it, and their rows."""

    path: str
    metadata: pq.FileMetaData
    groups: list[int]
    data: pa.Buffer | None  # the whole file, when fetched so

    @property
    def rows(self) -> int:
        return sum(self.metadata.row_group(group).num_rows for group in self.groups)


def plan_file(
    layout: Layout, kind: str, path: str, size: int, prune: Bounds | None, whole: bool
) -> Planned:
    """Read one file's footer (``whole``: the whole file), check its columns, and keep the
    row groups whose statistics can hold rows within ``prune`` (:meth:`Bounds.row_groups`).

    On an object store this is one GET of the footer (the size comes from the listing), or
    a HEAD and one GET of the whole file.
    """
    data = None
    try:
        if whole:
            # A limits file is small and each call reads it for several things. A month
            # pack is read again by the next batch of days of a year's read: fetched once.
            data = layout.fetch(path, keep=kind == "limits", recent=f"/{PACKS}/" in path)
            fragment = _FORMAT.make_fragment(pa.BufferReader(data))
        else:
            fragment = _FORMAT.make_fragment(path, layout.fs, file_size=size or None)
        metadata = fragment.metadata  # reads the footer
        schema = metadata.schema.to_arrow_schema()
        layout.check(kind, path, schema)
        groups = _chosen(fragment, schema, prune)
    except (FileNotFoundError, HistoryError):
        raise
    except (pa.ArrowException, OSError) as exc:
        raise _unreadable(layout, path, exc) from exc
    return Planned(path, metadata, groups, data)


def _chosen(fragment: ds.ParquetFileFragment, schema: pa.Schema, prune: Bounds | None) -> list[int]:
    """The row groups of a file (its footer read) that ``prune`` needs."""
    if prune is None:
        return list(range(fragment.metadata.num_row_groups))
    return prune.row_groups(fragment.metadata, schema)


def read_planned(
    layout: Layout,
    kind: str,
    planned: Planned,
    columns: list[str],
    filter: ds.Expression | None,
) -> pa.Table | None:
    """Read the row groups ``planned`` keeps, then filter their rows.

    Text columns are decoded as dictionaries (each distinct text once, from the file's
    dictionary pages), whatever type their writer gave them. Without ``filter`` the columns
    keep the types the file gives them (:func:`conformed` gives the dataset's: :func:`read`
    does it once for all its files).
    """
    if not planned.groups:
        return None
    expected = SCHEMAS[kind]
    texts = [f.name for f in expected if f.type == TEXT]
    try:
        with (
            pa.BufferReader(planned.data)
            if planned.data is not None
            else layout.fs.open_input_file(planned.path)
        ) as source:
            parquet = pq.ParquetFile(
                source,
                metadata=planned.metadata,
                read_dictionary=texts,
                # Pre-buffering coalesces an object store's range requests; on a local
                # disk or a file in memory it only copies each column chunk into fresh
                # memory first (twice the CPU of a year's rollup read, bench/history.py).
                pre_buffer=not layout.local and planned.data is None,
            )
            stored = set(parquet.schema_arrow.names)
            present = [name for name in columns if name in stored]
            table = parquet.read_row_groups(planned.groups, columns=present, use_threads=False)
        for name in columns:
            if name not in present:  # an OPTIONAL column an older writer did not write
                field = expected.field(name)
                table = table.append_column(field, pa.nulls(table.num_rows, field.type))
        table = table.select(columns)
    except FileNotFoundError:
        raise
    except (pa.ArrowException, OSError) as exc:
        raise _unreadable(layout, planned.path, exc) from exc
    if filter is None:
        return table
    return conformed([table], kind, columns)[0].filter(filter)


def conformed(tables: list[pa.Table], kind: str, columns: list[str]) -> list[pa.Table]:
    """``tables`` (of one dataset's ``columns``) with the dataset's types: a compatible
    writer's (large strings, instants in microseconds as every file stores them) cast, the
    tables of one schema (a dataset's files, mostly) in one table, cast once."""
    wanted = pa.schema([SCHEMAS[kind].field(name) for name in columns])
    if tables and all(table.schema.equals(tables[0].schema) for table in tables[1:]):
        tables = [pa.concat_tables(tables)]
    return [table if table.schema == wanted else _conform(table, wanted) for table in tables]


def _unreadable(layout: Layout, path: str, exc: Exception) -> Exception:
    if _gone(layout, path):
        # An object store says so in its own words: a compaction deleted the file.
        return FileNotFoundError(path)
    return HistoryError(
        f"{path} is not a readable Parquet file ({exc}); it may be truncated or "
        "corrupt: move it out of the history to continue (nothing else is affected)"
    )


def _conform(table: pa.Table, wanted: pa.Schema) -> pa.Table:
    """Cast ``table`` to ``wanted``, text columns to dictionaries without a text per row."""
    columns = []
    for field in wanted:
        column = table.column(field.name)
        if column.type != field.type:
            column = encoded(column) if field.type == TEXT else column.cast(field.type)
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=wanted)


def read(
    layout: Layout,
    kind: str,
    *,
    days: tuple[str | None, str | None] = (None, None),
    columns: Sequence[str] | None = None,
    filter: Bounds | None = None,
    prune: Bounds | None = None,
    encode: bool = True,
    strays: bool = False,
    paths: Collection[str] | None = None,
    read_paths: list[str] | None = None,
) -> pa.Table:
    """Read the files of ``kind`` for the UTC days in ``days`` (inclusive); with ``paths``,
    only those of them (files written since a reader read the others): those still there
    (one replaced by a compaction since is left out), named in ``read_paths`` when given.

    Only the files of the days in range are read, and inside each file only the row groups
    whose statistics can hold rows within ``prune`` (by default ``filter``) are decoded;
    ``filter`` then selects rows. Text columns come as one sorted
    dictionary each (``encode=False``: as read, a dictionary per row group, for a caller
    that numbers texts itself). Rows dated outside their folder's day are left out (see
    :data:`DATED`; ``strays``: kept, for a compaction that must not lose them).

    Raises:
        HistoryError: A file is foreign or corrupt, the history kept changing, or the read
            would take more memory than :func:`~searchkit.history.budget.limit` allows
            (before anything but the files' footers is read).
    """
    schema = SCHEMAS[kind]
    wanted = list(columns or schema.names)
    needed = wanted if filter is None else list(schema.names)
    dated = None if strays else DATED.get(kind)
    if dated is not None and dated not in needed:
        needed = [*needed, dated]
    prune = filter if prune is None else prune
    rows = None if filter is None else filter.expression()
    files = _listed(layout, kind, days, paths)
    for attempt in range(ATTEMPTS):
        plans: list[Planned] = []
        parts: list[pa.Table | None] = []
        readers = _LOCAL_READERS if layout.local else _READERS
        try:
            if files:  # (an empty listing is checked like any other: see _relisted)
                with ThreadPoolExecutor(max_workers=min(readers, len(files))) as pool:
                    plans = _plans(pool, layout, kind, files, prune)
                    budget.check(kind, days, sum(p.rows for p in plans), needed)
                    parts = list(
                        pool.map(lambda p: read_planned(layout, kind, p, needed, rows), plans)
                    )
        except FileNotFoundError as exc:
            # A compaction deleted a file after we listed it: its rows are in a newer
            # file, so list again.
            if attempt == ATTEMPTS - 1:
                raise _changing(layout, kind, exc) from exc
            files = _listed(layout, kind, days, paths, fresh=True)
            continue
        except pa.ArrowException as exc:
            raise HistoryError(f"cannot read the {kind} history: {exc}") from exc
        again = _relisted(layout, kind, days, paths, files, last=attempt == ATTEMPTS - 1)
        if again is not None:
            files = again
            continue
        if read_paths is not None:
            read_paths[:] = [path for _, path, _ in files]
        if dated is not None:
            pairs = zip(plans, parts, strict=True)
            parts = [own_day(layout, kind, plan.path, part) for plan, part in pairs]
        tables = [part for part in parts if part is not None and part.num_rows]
        if not tables:
            return schema.empty_table().select(wanted)
        if rows is None:
            tables = conformed(tables, kind, needed)
        # One dictionary per text column across the files: keys group, sort and join.
        table = pa.concat_tables(tables).select(wanted)
        return encoded_table(table) if encode else table
    raise AssertionError("unreachable")  # pragma: no cover


def _listed(
    layout: Layout,
    kind: str,
    days: tuple[str | None, str | None],
    paths: Collection[str] | None,
    *,
    fresh: bool = False,
) -> list[tuple[str, str, int]]:
    """The files of ``kind`` of ``days`` as listed (``fresh``: listed again), those of
    ``paths`` alone when given."""
    found = layout.files(kind, days[0], days[1], fresh=fresh)
    return found if paths is None else [entry for entry in found if entry[1] in paths]


def _relisted(
    layout: Layout,
    kind: str,
    days: tuple[str | None, str | None],
    paths: Collection[str] | None,
    files: list[tuple[str, str, int]],
    *,
    last: bool,
) -> list[tuple[str, str, int]] | None:
    """The files to read again when ``files`` (just read) may not be all there is: the
    listing taken again, else None (the read stands).

    A local folder read while a compaction renames its merged file in and deletes the old
    ones may list neither (a folder of several ``readdir`` reads:
    :mod:`~searchkit.history.folders`): the same listing after the read proves it did not,
    an empty one too (the whole day missed, not a day without points). An object store
    lists keys in name order and a compaction uploads the merged file, named after every
    file it replaces, before it deletes them (see Layout.files): one listing is enough
    there, and it costs no request more.

    Raises:
        HistoryError: On the ``last`` attempt, the listing again shows a file the read did
            not read (it cannot tell a new file from one it missed: never fewer points).
    """
    if not layout.local:
        return None
    again = _listed(layout, kind, days, paths, fresh=True)
    if set(again) == set(files):
        return None
    if not last:
        return again
    unread = sorted(set(again) - set(files))
    if unread:
        raise _changing(layout, kind, f"{unread[0][1]} was listed after the read")
    return None  # only files since replaced: what they held was read


def _changing(layout: Layout, kind: str, what: object) -> HistoryError:
    return HistoryError(
        f"the {kind} history at {layout.location!r} kept changing while it was "
        f"read ({what}); nothing is lost: try again"
    )


def own_day(layout: Layout, kind: str, path: str, table: pa.Table | None) -> pa.Table | None:
    """``table`` (the rows read from ``path``) without the rows dated outside the file's
    folder's day (see :data:`DATED`), named in a warning once per file."""
    column = DATED[kind]
    if table is None or table.num_rows == 0:
        return table
    folder, _, base = path.rpartition("/")
    day = folder.rpartition("/day=")[2]
    # In the column's own unit (a file's instants are read as stored: microseconds).
    per_day = DAY_NS // _NANOS[table.schema.field(column).type.unit]
    begin = (dt.date.fromisoformat(day) - dt.date(1970, 1, 1)).days * per_day
    times = table[column].cast(pa.int64())
    bounds = pc.min_max(times).as_py()
    if bounds["min"] is None or (bounds["min"] >= begin and bounds["max"] < begin + per_day):
        return table
    inside = pc.and_(pc.greater_equal(times, begin), pc.less(times, begin + per_day))
    outside = table.filter(pc.invert(inside))[column]
    what = "point" if kind == "throughput" else "rollup row"
    count = len(outside)
    layout.warn_once(
        f"stray {path}",
        f"{count} {what}{'s' if count != 1 else ''} in {kind}/day={day}/{base} dated on another "
        f"day (the first: {pc.min(outside).as_py():%Y-%m-%d %H:%M:%S} UTC) left out: a {what} "
        "counts only in its own UTC day's folder, where searchkit files it (another writer put "
        "it there); move it to its day's folder to count it",
        stacklevel=5,
    )
    return table.filter(inside)


def _plans(
    pool: ThreadPoolExecutor,
    layout: Layout,
    kind: str,
    files: list[tuple[str, str, int]],
    prune: Bounds | None,
) -> list[Planned]:
    """Plan each file's read (see :data:`_WHOLE` for when a file is fetched whole)."""
    whole = not layout.local and sum(size for _, _, size in files) <= _WHOLE
    return list(pool.map(lambda f: plan_file(layout, kind, f[1], f[2], prune, whole), files))


def _gone(layout: Layout, path: str) -> bool:
    try:
        return bool(layout.fs.get_file_info(path).type == pafs.FileType.NotFound)
    except OSError:
        return False
