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
    """How a file of ``kind`` is written: :data:`WRITE_OPTIONS`, but a rollup.

    A year of rollups is 365 files of 27 columns, read whole by every usage question on a
    long history (35M quarter sums a year of 1,000 indexes), so a rollup's figures are
    written to decode fast: LZ4 (``LZ4_RAW``, which Spark, DuckDB and Polars read) instead
    of zstd (whose decoder costs more to set up, for each of a year's ten thousand column
    chunks, than a rollup's small columns take to decode: bench/history.py --year), and the
    lists' sums without a dictionary (they hardly repeat: the writer's attempt only adds a
    page to decode). Its texts stay zstd (a name of a megabyte compresses). A rollup is
    about 2% larger so. Same columns, same values: only the encoding differs, so files
    written either way read alike.
    """
    if kind != "rollups":
        return WRITE_OPTIONS
    codecs: dict[str, str] = {}
    dictionaries = []
    for field in schema:
        for path, kind_of in _leaves(field.name, field.type):
            codecs[path] = str(WRITE_OPTIONS["compression"]) if _is_text(kind_of) else "lz4"
            if not (".list." in path and pa.types.is_floating(kind_of)):
                dictionaries.append(path)
    return {**WRITE_OPTIONS, "compression": codecs, "use_dictionary": dictionaries}


def _is_text(kind: pa.DataType) -> bool:
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))


def _leaves(path: str, kind: pa.DataType) -> list[tuple[str, pa.DataType]]:
    """The Parquet column paths a field is stored as, with their types: a list's values
    are ``<name>.list.element``, a struct's fields ``<name>.<field>``."""
    if pa.types.is_list(kind):
        return _leaves(f"{path}.list.element", kind.value_type)
    if pa.types.is_struct(kind):
        return [leaf for field in kind for leaf in _leaves(f"{path}.{field.name}", field.type)]
    return [(path, kind)]
