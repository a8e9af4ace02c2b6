"""Text columns held once per distinct text: Arrow dictionaries from the list to the file.

An index's name, id and account repeat on every one of its points. As plain Arrow strings
each row holds its own copy, so a 1 MiB name costs 1 MiB per point in every table, sort and
take (1,440 points: 1.4 GiB a copy). The history keeps such columns as
``dictionary<int32, string>`` (:data:`TEXT`) instead: each distinct text once, an int32
code per row, from the listed points through writing, reading, deduplicating and
compacting. Parquet stores a column's distinct texts once in a dictionary page whatever
the Arrow type, so the files are the same for every other engine (plain strings).

:func:`codes` gives any text column (plain, large or dictionary, one chunk or many, with
repeated or unused dictionary entries) in one canonical form: the distinct texts sorted,
and per row the position of its text (-1 for a null). Equal codes mean equal texts and
code order is text order, so keys compare, sort and group as numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["TEXT", "codes", "encoded", "encoded_table", "is_text", "joint_codes"]

#: How the history holds a text column in memory.
TEXT = pa.dictionary(pa.int32(), pa.string())

#: A column as Arrow holds it: one array, or chunks of arrays.
Column: TypeAlias = "pa.Array | pa.ChunkedArray"


def is_text(kind: pa.DataType) -> bool:
    """Whether ``kind`` is a text type: plain, large, or a dictionary of either."""
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))


def _dictionary(column: Column) -> pa.DictionaryArray:
    """One dictionary array of ``column`` (its texts not necessarily distinct or used)."""
    if isinstance(column, pa.ChunkedArray):
        if column.num_chunks == 1:
            column = column.chunk(0)
        elif pa.types.is_dictionary(column.type):
            # Chunks read from different files or row groups have their own dictionaries:
            # one shared dictionary first, then only the codes are concatenated.
            shared = pa.table({"c": column}).unify_dictionaries().column("c")
            column = shared.combine_chunks()
        else:
            column = column.combine_chunks()
    if not pa.types.is_dictionary(column.type):
        column = pc.dictionary_encode(column)
    return column


def codes(column: Column) -> tuple[np.ndarray, pa.Array]:
    """Return per-row codes (int64, -1 for a null) and the distinct texts they point to.

    The texts are sorted and each is used by some row, so equal codes mean equal texts
    and code order is text order. Only the distinct texts are hashed and sorted; rows
    are mapped with one NumPy take.
    """
    array = _dictionary(column)
    values = array.dictionary
    if not pa.types.is_string(values.type):
        values = values.cast(pa.string())
    indices = array.indices if not array.null_count else pc.fill_null(array.indices, -1)
    rows = indices.to_numpy(zero_copy_only=False).astype(np.int64)
    if _sorted_distinct(values):  # as encoded() leaves it, and a sorted file's dictionary
        distinct, mapped = values, rows
    else:
        distinct = pc.drop_null(pc.unique(values))
        distinct = distinct.take(pc.array_sort_indices(distinct))
        position = pc.fill_null(pc.index_in(values, value_set=distinct), -1)
        # A null row (-1) picks the appended -1.
        mapped = np.append(position.to_numpy(zero_copy_only=False).astype(np.int64), -1)[rows]
    used = np.zeros(len(distinct) + 1, dtype=bool)
    used[mapped] = True
    used = used[:-1]  # the slot -1 wrote to
    if used.all():
        return mapped, distinct
    renumber = np.append(np.cumsum(used) - 1, -1)
    return renumber[mapped], distinct.filter(pa.array(used))


def _sorted_distinct(texts: pa.Array) -> bool:
    """Whether ``texts`` (no null) are in strictly increasing order: distinct and sorted."""
    if texts.null_count:
        return False
    if len(texts) < 2:
        return True
    return bool(pc.all(pc.less(texts.slice(0, len(texts) - 1), texts.slice(1))).as_py())


def encoded(column: Column) -> pa.DictionaryArray:
    """Return ``column`` as one :data:`TEXT` array of distinct, sorted, used texts."""
    array = _dictionary(column)
    if array.type == TEXT and _sorted_distinct(array.dictionary):
        used = np.zeros(len(array.dictionary), dtype=bool)
        indices = pc.drop_null(array.indices) if array.null_count else array.indices
        used[indices.to_numpy()] = True
        if used.all():
            return array  # so already: nothing to map
    rows, texts = codes(array)
    indices = pa.array(rows.astype(np.int32), pa.int32(), mask=rows < 0)
    return pa.DictionaryArray.from_arrays(indices, texts)


def encoded_table(table: pa.Table) -> pa.Table:
    """Return ``table`` with each text column :func:`encoded` (other columns as they are).

    One chunk and one dictionary per text column: what Parquet writes directly as the
    column's dictionary page, and what Arrow can group and join by.
    """
    for position, field in enumerate(table.schema):
        if is_text(field.type):
            column = encoded(table.column(position))
            table = table.set_column(position, pa.field(field.name, TEXT, field.nullable), column)
    return table


def joint_codes(columns: Sequence[Column]) -> list[np.ndarray]:
    """Codes of several text columns in one numbering: equal texts, equal codes."""
    each = [codes(column) for column in columns]
    if not each:
        return []
    union = pc.unique(pa.concat_arrays([texts for _, texts in each]))
    union = union.take(pc.array_sort_indices(union))
    joint = []
    for rows, texts in each:
        position = pc.index_in(texts, value_set=union).to_numpy(zero_copy_only=False)
        joint.append(np.append(position.astype(np.int64), -1)[rows])
    return joint
