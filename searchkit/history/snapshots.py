"""Limits snapshots: an IndexList's limits to the stored table, and stored rows back."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from searchkit.frames.frames import LIMITS_COLUMNS
from searchkit.history.layout import LIMITS_SCHEMA
from searchkit.model.index import SHORT_ID
from searchkit.model.limits import REGIONS, TYPES

__all__ = ["limits_table", "snapshot_frame"]


def snapshot_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Shape stored snapshot rows (one per index) like :func:`~searchkit.limits_frame`."""
    out = pd.DataFrame(index=pd.Index(frame["id"].astype("str"), dtype="str", name="id"))
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
    frame = limits.reset_index()
    columns: dict[str, Any] = {"account": accounts, "id": frame["id"].astype(str).tolist()}
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
