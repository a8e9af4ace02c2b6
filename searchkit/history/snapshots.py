"""Limits snapshots: an IndexList's limits to the stored table, and stored rows back.

A collect stores a snapshot only when it differs from the latest stored one of its account
(an index's limits or name changed, an index appeared or went): the limits in force at any
instant are the same as if every collect had stored one, and ``collected_at`` says since
when they were.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from searchkit.frames.limits_frames import LIMITS_COLUMNS
from searchkit.history import reader
from searchkit.history.layout import LIMITS_SCHEMA, Layout
from searchkit.history.text_columns import joint_codes
from searchkit.model.index import SHORT_ID
from searchkit.model.limits import REGIONS, TYPES

__all__ = ["limits_table", "snapshot_frame", "unchanged"]


def snapshot_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Shape stored snapshot rows (one per index) like :func:`~searchkit.limits_frame`.

    The files keep the API's name, ``id``; the frame calls it ``index_id``, as every frame.
    """
    out = pd.DataFrame(index=pd.Index(frame["id"].astype("str"), dtype="str", name="index_id"))
    for name in LIMITS_COLUMNS:
        if name == "short_id":  # derived from the id, not stored
            out[name] = pd.array(out.index.str[:SHORT_ID].to_numpy(), dtype="str")
            continue
        values = frame[name].to_numpy()
        if name in ("type", "region"):
            known = TYPES if name == "type" else REGIONS
            seen = [v for v in dict.fromkeys(frame[name].dropna()) if v not in known]
            out[name] = pd.Categorical(values, categories=[*known, *seen])
        elif name == "input_enrichment_enabled":
            out[name] = pd.array(frame[name].tolist(), dtype="boolean")
        elif name == "created":  # aware nanoseconds, also when empty
            out[name] = pd.DatetimeIndex(pd.to_datetime(frame[name], utc=True)).as_unit("ns")
        elif name in ("name", "endpoint", "partner_email"):
            out[name] = pd.array(values, dtype="str")
        else:
            out[name] = values
    out["account"] = pd.array(frame["account"].to_numpy(), dtype="str")
    out["collected_at"] = pd.to_datetime(frame["collected_at"].to_numpy(), utc=True).as_unit(
        "ns"
    )  # also when empty
    return out


def limits_table(limits: pd.DataFrame, accounts: list[str], stamp: int) -> pa.Table:
    """Return the stored snapshot of ``limits``, one row per index, taken at ``stamp``."""
    ids = limits.index.astype(str).tolist()
    frame = limits.reset_index(drop=True)
    columns: dict[str, Any] = {"account": accounts, "id": ids}
    for name in LIMITS_COLUMNS:
        if name == "short_id":  # derived from the id on reading
            continue
        column = frame[name]
        if name in ("type", "region", "name", "endpoint", "partner_email"):
            columns[name] = [None if pd.isna(v) else str(v) for v in column]
        elif name == "input_enrichment_enabled":
            columns[name] = [None if pd.isna(v) else bool(v) for v in column]
        elif name == "created":
            columns[name] = column.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy()
        else:
            columns[name] = column.to_numpy(dtype=np.float64)
    columns["collected_at"] = np.full(len(frame), stamp, dtype="datetime64[ns]")
    arrays = [pa.array(columns[f.name], f.type, from_pandas=True) for f in LIMITS_SCHEMA]
    return pa.Table.from_arrays(arrays, schema=LIMITS_SCHEMA)


def unchanged(layout: Layout, snapshot: pa.Table) -> bool:
    """Whether the latest stored snapshot of each account in ``snapshot`` holds its rows.

    Only the newest day of snapshots is read (a changed collect always writes there).
    """
    newest = layout.newest_day("limits")
    if newest is None or snapshot.num_rows == 0:
        return False
    stored = reader.read(layout, "limits", days=(newest, newest))
    # Accounts as codes both tables share: no text per stored row.
    ours_account, stored_account = joint_codes([snapshot["account"], stored["account"]])
    accounts = np.unique(ours_account)
    rows = np.flatnonzero(np.isin(stored_account, accounts))
    if len(rows) == 0:
        return False
    stamps = stored["collected_at"].combine_chunks().cast(pa.int64()).to_numpy()[rows]
    keys = pd.DataFrame({"account": stored_account[rows], "stamp": stamps})
    last = keys.groupby("account")["stamp"].transform("max").to_numpy()
    rows = rows[stamps == last]
    if len(np.unique(stored_account[rows])) != len(accounts):
        return False  # an account without a snapshot that day
    stored = stored.take(pa.array(rows))
    values = [name for name in LIMITS_SCHEMA.names if name != "collected_at"]
    order = [("account", "ascending"), ("id", "ascending")]
    # One row per index on each side: compared as plain rows.
    ours = _plain(snapshot.select(values)).sort_by(order)
    try:
        theirs = _plain(stored.select(values)).sort_by(order).cast(ours.schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return False
    # Stored instants are microseconds: compare the new snapshot as it would be stored.
    created = [pc.divide(t["created"].cast(pa.int64()), 1000) for t in (ours, theirs)]
    rest = [name for name in values if name != "created"]
    return bool(created[0].equals(created[1]) and ours.select(rest).equals(theirs.select(rest)))


def _plain(table: pa.Table) -> pa.Table:
    """``table`` with its dictionary columns as plain ones (for a few rows: one per index)."""
    fields = [
        pa.field(f.name, f.type.value_type) if pa.types.is_dictionary(f.type) else f
        for f in table.schema
    ]
    return table.cast(pa.schema(fields))
