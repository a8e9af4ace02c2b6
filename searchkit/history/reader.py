"""Reading the history's files: day ranges, row-group pruning, retries around compactions."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from searchkit.errors import HistoryError
from searchkit.history.layout import ATTEMPTS, SCHEMAS, Layout
from searchkit.history.texts import TEXT, encoded, encoded_table

__all__ = ["read", "read_file", "row_groups"]

# Files are read in parallel: pyarrow decodes without holding the GIL, and on an object store
# the requests overlap. Locally two readers match a small machine and keep memory low (each
# reader thread holds its own allocator arenas).
_READERS = 8
_LOCAL_READERS = 2
# Nanoseconds per unit of a stored timestamp (files store microseconds; older ones nanos).
_PER_UNIT = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def read_file(
    layout: Layout,
    kind: str,
    path: str,
    columns: list[str],
    filter: ds.Expression | None,
    prune: dict[str, Any],
) -> pa.Table | None:
    """Read one file's row groups that the statistics allow, then filter its rows.

    Text columns are decoded as dictionaries (each distinct text once, from the file's
    dictionary pages), whatever type their writer gave them.
    """
    expected = SCHEMAS[kind]
    texts = [f.name for f in expected if f.type == TEXT]
    try:
        with layout.fs.open_input_file(path) as handle:
            parquet = pq.ParquetFile(handle)
            layout.check(kind, path, parquet.schema_arrow)
            parquet = pq.ParquetFile(handle, metadata=parquet.metadata, read_dictionary=texts)
            groups = row_groups(parquet, prune)
            if not groups:
                return None
            present = [name for name in columns if name in parquet.schema_arrow.names]
            table = parquet.read_row_groups(groups, columns=present, use_threads=False)
            for name in columns:
                if name not in present:  # an OPTIONAL column an older writer did not write
                    field = expected.field(name)
                    table = table.append_column(field, pa.nulls(table.num_rows, field.type))
            table = table.select(columns)
    except (FileNotFoundError, HistoryError):
        raise
    except (pa.ArrowException, OSError) as exc:
        if _gone(layout, path):
            # An object store says so in its own words: a compaction deleted the file.
            raise FileNotFoundError(path) from exc
        raise HistoryError(
            f"{path} is not a readable Parquet file ({exc}); it may be truncated or "
            "corrupt: move it out of the history to continue (nothing else is affected)"
        ) from exc
    wanted = pa.schema([expected.field(name) for name in columns])
    if table.schema != wanted:
        table = _conform(table, wanted)  # a compatible writer's types (large strings, us times)
    return table.filter(filter) if filter is not None else table


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
    filter: ds.Expression | None = None,
    prune: dict[str, Any] | None = None,
    encode: bool = True,
) -> pa.Table:
    """Read the files of ``kind`` for the UTC days in ``days`` (inclusive).

    Only the day folders in range are listed as candidates, and inside each file only
    the row groups whose statistics can match ``prune`` (``{column: values}`` for text,
    ``{"time": (first_ns, last_ns)}``) are decoded; ``filter`` then selects rows. Text
    columns come as one sorted dictionary each (``encode=False``: as read, a dictionary
    per row group, for a caller that numbers texts itself).
    """
    schema = SCHEMAS[kind]
    wanted = list(columns or schema.names)
    needed = wanted if filter is None else list(schema.names)
    first, last = days

    def listed() -> list[str]:
        return [path for _, path, _ in layout.files(kind, first, last)]

    paths = listed()
    for attempt in range(ATTEMPTS):
        if not paths:
            return schema.empty_table().select(wanted)
        try:
            readers = _LOCAL_READERS if layout.local else _READERS
            with ThreadPoolExecutor(max_workers=min(readers, len(paths))) as pool:
                parts = list(
                    pool.map(
                        lambda path: read_file(layout, kind, path, needed, filter, prune or {}),
                        paths,
                    )
                )
        except FileNotFoundError as exc:
            # A compaction deleted a file after we listed it: its rows are in a newer
            # file, so list again.
            if attempt == ATTEMPTS - 1:
                raise HistoryError(
                    f"the {kind} history at {layout.location!r} kept changing while it was "
                    f"read ({exc}); nothing is lost: try again"
                ) from exc
            paths = listed()
            continue
        except pa.ArrowException as exc:
            raise HistoryError(f"cannot read the {kind} history: {exc}") from exc
        # A directory listing taken while a compaction renames its file in and deletes
        # the old ones may miss both; the same listing after the read proves it did not.
        again = listed()
        if set(again) != set(paths) and attempt < ATTEMPTS - 1:
            paths = again
            continue
        tables = [part for part in parts if part is not None and part.num_rows]
        if not tables:
            return schema.empty_table().select(wanted)
        # One dictionary per text column across the files: keys group, sort and join.
        table = pa.concat_tables(tables).select(wanted)
        return encoded_table(table) if encode else table
    raise AssertionError("unreachable")  # pragma: no cover


def _gone(layout: Layout, path: str) -> bool:
    try:
        return bool(layout.fs.get_file_info(path).type == pafs.FileType.NotFound)
    except OSError:
        return False


def row_groups(parquet: pq.ParquetFile, prune: dict[str, Any]) -> list[int]:
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
            scale = _PER_UNIT.get(kind.unit) if pa.types.is_timestamp(kind) else None
            if scale is not None:
                lo, hi = wanted  # nanoseconds, compared in the file's unit
                checks.append(
                    (
                        position[column],
                        "range",
                        (None if lo is None else lo // scale, None if hi is None else hi // scale),
                    )
                )
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
