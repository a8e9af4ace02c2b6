"""The newest stored instant of each index, kept so a collect need not re-read its points.

``<location>/_newest.parquet`` holds ``account, index_id, time``: the newest point stored for
each index. A collect stores only the listed points after it, then rewrites the record
(whole, by rename or one PUT) after its points are written. A record that lags the data
(a collector killed between the two writes, two collectors racing) only makes the next
collect store some points again, which readers drop as duplicates; a missing or unreadable
record is rebuilt from the stored points the service's window covers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from searchkit.history.layout import TIMESTAMP, WRITE_OPTIONS, Layout, remove_quietly, stored
from searchkit.history.text_columns import TEXT, codes, encoded, encoded_table, joint_codes

__all__ = ["NEWEST_SCHEMA", "merge", "read", "unseen", "write"]

NEWEST_SCHEMA = pa.schema([("account", TEXT), ("index_id", TEXT), ("time", TIMESTAMP)])
_NAME = "_newest.parquet"


def read(layout: Layout) -> pa.Table | None:
    """Return the record, or None when there is none (or it cannot be read)."""
    path = f"{layout.root}/{_NAME}"
    try:
        with layout.fs.open_input_file(path) as handle:
            table = pq.read_table(handle, read_dictionary=["account", "index_id"])
        return _as_record(table)
    except (OSError, pa.ArrowException, KeyError):
        return None


def write(layout: Layout, record: pa.Table) -> None:
    """Replace the record whole; a failure leaves the previous one (it only lags)."""
    path = f"{layout.root}/{_NAME}"
    record = stored(record)
    if not layout.local:
        pq.write_table(record, path, filesystem=layout.fs, **WRITE_OPTIONS)
        return
    temporary = f"{layout.root}/.{_NAME}.{np.random.default_rng().integers(1 << 62)}.tmp"
    try:
        pq.write_table(record, temporary, filesystem=layout.fs, **WRITE_OPTIONS)
        layout.fs.move(temporary, path)
    except BaseException:
        remove_quietly(layout.fs, temporary)
        raise


def merge(record: pa.Table | None, points: pa.Table) -> pa.Table:
    """Return ``record`` moved forward by the newest of ``points`` (per account and index)."""
    parts = [_as_record(points)]
    if record is not None:
        parts.append(_as_record(record))
    # One dictionary per key column: Arrow groups by dictionaries only when they agree.
    both = encoded_table(pa.concat_tables(parts))
    newest = both.group_by(["account", "index_id"]).aggregate([("time", "max")])
    newest = newest.rename_columns(["account", "index_id", "time"]).select(NEWEST_SCHEMA.names)
    return _as_record(newest)


def _unique_keys(record: pa.Table) -> bool:
    keys = [codes(record["account"])[0], codes(record["index_id"])[0]]
    return bool(pd.MultiIndex.from_arrays(keys).is_unique)


def _as_record(table: pa.Table) -> pa.Table:
    """The record's columns of ``table`` in its types (texts as dictionaries, no copies)."""
    columns = [
        encoded(table[f.name]) if f.type == TEXT else table[f.name].cast(f.type)
        for f in NEWEST_SCHEMA
    ]
    return pa.Table.from_arrays(columns, schema=NEWEST_SCHEMA)


def unseen(points: pa.Table, record: pa.Table) -> tuple[pa.Table, pa.Table]:
    """Split ``points`` by the record: (after each index's newest, joined newest per row).

    The second table has the rows' ``account, index_id`` and ``newest`` (null for an index
    the record does not know), aligned with ``points``.
    """
    if record.num_rows and not _unique_keys(record):
        record = merge(None, record)  # a record written by hand: its newest per index
    # Keys as numbers shared by both sides: no text is hashed or copied per point.
    accounts = joint_codes([points["account"], record["account"]])
    ids = joint_codes([points["index_id"], record["index_id"]])
    width = int(max(ids[0].max(initial=0), ids[1].max(initial=0))) + 2
    wanted = accounts[0] * width + (ids[0] + 1)
    known = pd.Index(accounts[1] * width + (ids[1] + 1))
    where = known.get_indexer(wanted)
    found = where >= 0
    times = record["time"].combine_chunks().take(pa.array(where, mask=~found))
    newest = pa.chunked_array([times], TIMESTAMP)
    after = pc.or_kleene(pc.is_null(newest), pc.greater(points["time"], newest))
    joined = pa.table(
        {"account": points["account"], "index_id": points["index_id"], "newest": newest}
    )
    return points.filter(pc.fill_null(after, True)), joined
