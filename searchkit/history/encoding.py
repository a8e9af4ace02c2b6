"""How the history's files are encoded: the options each kind of file is written with."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

__all__ = ["ROW_GROUP", "WRITE_OPTIONS", "write_options"]

# Sorted by index then time inside a file, row groups this size let a reader of one index
# skip the others' groups from the statistics alone.
ROW_GROUP = 16_384
#: How every file is written. Instants are stored as Parquet TIMESTAMP(MICROS, UTC): Spark,
#: DuckDB, Polars and Dask read that natively (Spark has no nanoseconds), and the service's
#: texts carry milliseconds, so nothing it says is lost; sub-microsecond digits of a
#: ``collected_at`` taken from the clock are dropped. Text columns are written from Arrow
#: dictionaries, so each distinct text is stored once (the column's dictionary page), and
#: without Arrow's own schema, so every engine (pandas and Polars too) reads plain strings.
WRITE_OPTIONS: dict[str, Any] = {
    "compression": "zstd",
    "row_group_size": ROW_GROUP,
    "coerce_timestamps": "us",
    "allow_truncated_timestamps": True,
    "store_schema": False,
}


def write_options(kind: str, schema: pa.Schema) -> dict[str, Any]:
    """How a file of ``kind`` is written: :data:`WRITE_OPTIONS`, but a rollup's lists.

    A rollup's hours and quarters (48 and 192 figures a row: 35M quarter sums a year of
    1,000 indexes) are read whole by every usage question on a long history, so they are
    written to decode fast: LZ4 (``LZ4_RAW``, which Spark, DuckDB and Polars read) instead
    of zstd, and the sums without a dictionary (they hardly repeat: the writer's attempt
    only adds a page to decode). The other columns stay as every file's (zstd: a long
    name compresses). Same columns, same values: only the encoding differs, so files
    written either way read alike.
    """
    if kind != "rollups":
        return WRITE_OPTIONS
    codecs: dict[str, str] = {}
    dictionaries = []
    for field in schema:
        for path, kind_of in _leaves(field.name, field.type):
            listed = ".list." in path
            codecs[path] = "lz4" if listed else str(WRITE_OPTIONS["compression"])
            if not (listed and pa.types.is_floating(kind_of)):
                dictionaries.append(path)
    return {**WRITE_OPTIONS, "compression": codecs, "use_dictionary": dictionaries}


def _leaves(path: str, kind: pa.DataType) -> list[tuple[str, pa.DataType]]:
    """The Parquet column paths a field is stored as, with their types: a list's values
    are ``<name>.list.element``, a struct's fields ``<name>.<field>``."""
    if pa.types.is_list(kind):
        return _leaves(f"{path}.list.element", kind.value_type)
    if pa.types.is_struct(kind):
        return [leaf for field in kind for leaf in _leaves(f"{path}.{field.name}", field.type)]
    return [(path, kind)]
