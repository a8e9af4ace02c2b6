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
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from searchkit.history.layout import TIMESTAMP, WRITE_OPTIONS, Layout, remove_quietly

__all__ = ["NEWEST_SCHEMA", "merge", "read", "unseen", "write"]

NEWEST_SCHEMA = pa.schema(
    [("account", pa.string()), ("index_id", pa.string()), ("time", TIMESTAMP)]
)
_NAME = "_newest.parquet"


def read(layout: Layout) -> pa.Table | None:
    """Return the record, or None when there is none (or it cannot be read)."""
    path = f"{layout.root}/{_NAME}"
    try:
        with layout.fs.open_input_file(path) as handle:
            table = pq.read_table(handle)
        return table.select(NEWEST_SCHEMA.names).cast(NEWEST_SCHEMA)
    except (OSError, pa.ArrowException, KeyError):
        return None


def write(layout: Layout, record: pa.Table) -> None:
    """Replace the record whole; a failure leaves the previous one (it only lags)."""
    path = f"{layout.root}/{_NAME}"
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
    parts = [points.select(NEWEST_SCHEMA.names).cast(NEWEST_SCHEMA)]
    if record is not None:
        parts.append(record)
    both = pa.concat_tables(parts)
    newest = both.group_by(["account", "index_id"]).aggregate([("time", "max")])
    newest = newest.rename_columns(["account", "index_id", "time"]).select(NEWEST_SCHEMA.names)
    return newest.cast(NEWEST_SCHEMA)


def unseen(points: pa.Table, record: pa.Table) -> tuple[pa.Table, pa.Table]:
    """Split ``points`` by the record: (after each index's newest, joined newest per row).

    The second table has the rows' ``account, index_id`` and ``newest`` (null for an index
    the record does not know), aligned with ``points``.
    """
    keyed = points.append_column("_row", pa.array(np.arange(points.num_rows)))
    known = record.rename_columns(["account", "index_id", "newest"])
    joined = keyed.select(["account", "index_id", "_row"]).join(
        known, keys=["account", "index_id"], join_type="left outer"
    )
    joined = joined.sort_by("_row")
    newest = joined["newest"]
    after = pc.or_kleene(pc.is_null(newest), pc.greater(points["time"], newest))
    return points.filter(pc.fill_null(after, True)), joined
