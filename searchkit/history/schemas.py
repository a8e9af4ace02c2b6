"""The columns of the history's datasets (throughput, limits, rollups), and which a reader
takes from a file written by another or an older writer."""

from __future__ import annotations

import pyarrow as pa

from searchkit.history.text_columns import TEXT, is_text
from searchkit.model.limits import LIMIT_FIELDS

__all__ = [
    "GAPS",
    "KEY",
    "LIMITS_SCHEMA",
    "OPTIONAL",
    "ROLLUP_SCHEMA",
    "SCHEMAS",
    "THROUGHPUT_SCHEMA",
    "TIMESTAMP",
    "compatible",
    "shown",
]

TIMESTAMP = pa.timestamp("ns", tz="UTC")
# Text columns are dictionaries in memory (each distinct text once, see
# :mod:`searchkit.history.text_columns`) and plain strings in the files.
THROUGHPUT_SCHEMA = pa.schema(
    [
        ("account", TEXT),
        ("index_id", TEXT),
        ("name", TEXT),
        ("time", TIMESTAMP),
        ("value", pa.float64()),
        ("collected_at", TIMESTAMP),
    ]
)
LIMITS_SCHEMA = pa.schema(
    [
        ("account", TEXT),
        ("id", TEXT),
        ("name", TEXT),
        ("type", TEXT),
        ("region", TEXT),
        ("endpoint", TEXT),
        ("created", TIMESTAMP),
        ("input_enrichment_enabled", pa.bool_()),
        ("partner_email", TEXT),
        *[(field, pa.float64()) for field in LIMIT_FIELDS],
        ("collected_at", TIMESTAMP),
    ]
)
#: A rollup's gaps inside its day (see :mod:`searchkit.history.gaps`): each step between
#: two points of the index longer than its day's gap threshold, as the two points' times.
GAPS = pa.list_(pa.struct([("stored_until", TIMESTAMP), ("listed_from", TIMESTAMP)]))
ROLLUP_SCHEMA = pa.schema(
    [
        ("account", TEXT),
        ("index_id", TEXT),
        ("name", TEXT),
        ("period", TIMESTAMP),
        ("operations", pa.float64()),
        ("value_sum", pa.float64()),
        ("points", pa.int64()),
        ("invalid", pa.int64()),
        ("interval_seconds", pa.float64()),
        ("source", TEXT),
        ("hourly_value_sum", pa.list_(pa.float64())),
        ("hourly_points", pa.list_(pa.int64())),
        ("last_point", TIMESTAMP),
        ("quarter_value_sum", pa.list_(pa.float64())),
        ("quarter_points", pa.list_(pa.int64())),
        ("first_point", TIMESTAMP),
        ("spacing_values", pa.list_(pa.int64())),
        ("spacing_counts", pa.list_(pa.int64())),
        ("digest", pa.int64()),
        ("gaps", GAPS),
    ]
)
SCHEMAS = {"throughput": THROUGHPUT_SCHEMA, "limits": LIMITS_SCHEMA, "rollups": ROLLUP_SCHEMA}
#: Columns a file written by an older searchkit may lack: they read as nulls.
OPTIONAL = {
    "rollups": (
        "hourly_value_sum",
        "hourly_points",
        "last_point",
        "quarter_value_sum",
        "quarter_points",
        "first_point",
        "spacing_values",
        "spacing_counts",
        "digest",
        "gaps",
    )
}
#: A point's identity: one row per key is kept (see :mod:`searchkit.history.dedupe`).
KEY = ("account", "index_id", "time")


def compatible(found: pa.DataType, expected: pa.DataType) -> bool:
    """Whether a column of type ``found`` reads as ``expected`` (a compatible writer's).

    A text column may be plain, large or dictionary strings (files written before text
    columns were dictionaries hold plain ones); instants may have any unit.
    """
    if found == expected:
        return True
    if pa.types.is_timestamp(expected):
        return bool(pa.types.is_timestamp(found))
    if is_text(expected):
        return is_text(found)
    if pa.types.is_list(expected):  # Parquet names a list's items "element", Arrow "item"
        return bool(pa.types.is_list(found) and compatible(found.value_type, expected.value_type))
    if pa.types.is_struct(expected):
        return bool(
            pa.types.is_struct(found)
            and [f.name for f in found] == [f.name for f in expected]
            and all(compatible(f.type, e.type) for f, e in zip(found, expected, strict=True))
        )
    return False


def shown(kind: pa.DataType) -> str:
    """A type as a message names it: a text column is ``string`` whatever its encoding."""
    return "string" if is_text(kind) else str(kind)
