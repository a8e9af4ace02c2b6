"""Daily rollups: per index and UTC day, what a year of usage questions need in ~365k rows.

``<location>/rollups/day=YYYY-MM-DD/part-<collected_at us>-<uuid>.parquet`` holds one row per
(account, index) of that day: ``operations`` (the sum of each point's value times the index's
median sampling interval that day, in seconds: the default ``value_unit="per_second"``
reading), ``value_sum``, ``points`` and ``invalid`` (negative or infinite values, left out of
both), ``interval_seconds`` (null for a single point), the
``name`` at the day's last point, and ``source``: the name of the one throughput file it
summarises. The raw points stay the truth: a rollup counts only while its day holds exactly
that file, so a day that received late points reads its points until compaction merges the
day and recomputes its rollup.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pyarrow as pa

from searchkit.frames.frames import median_spacing
from searchkit.history import texts
from searchkit.history.dedupe import tidy
from searchkit.history.layout import ROLLUP_SCHEMA, TIMESTAMP

__all__ = ["ROLLUP_SCHEMA", "current", "rollup"]


def rollup(points: pa.Table, day: str, source: str) -> pa.Table:
    """Return the rollup of one day's stored points (any order, duplicates allowed)."""
    frame = tidy(points, dt.timezone.utc)
    ids = frame["index_id"].array
    codes = np.asarray(ids.codes)
    count = len(ids.categories)
    raw = frame["value"].to_numpy(dtype=np.float64, na_value=np.nan)
    with np.errstate(invalid="ignore"):
        bad = np.isinf(raw) | (raw < 0)  # no usage is negative or infinite: counted apart
    values = np.where(bad, 0.0, np.nan_to_num(raw))
    value_sum = np.bincount(codes, weights=values, minlength=count)
    invalid = np.bincount(codes, weights=bad, minlength=count).astype(np.int64)
    points_per = np.bincount(codes, minlength=count).astype(np.int64) - invalid
    nanos = frame["time"].array.asi8
    spacing = median_spacing(codes, nanos, pd.Index(ids.categories))
    seconds = spacing.dt.total_seconds().to_numpy(dtype=np.float64)
    last = np.zeros(count, dtype=np.int64)
    last[codes] = np.arange(len(codes))  # later rows overwrite earlier ones
    # The texts of each index's last row, taken as codes (no text per point).
    names = pa.array(frame["name"].array[last])
    accounts = pa.array(frame["account"].array[last])
    operations = value_sum * np.where(np.isnan(seconds), 60.0, seconds)
    period = pd.Timestamp(day, tz="UTC").value
    arrays = [
        texts.encoded(accounts),
        texts.encoded(pa.array([str(c) for c in ids.categories], pa.string())),
        texts.encoded(names),
        pa.array(np.full(count, period, dtype="datetime64[ns]"), TIMESTAMP),
        pa.array(operations, pa.float64()),
        pa.array(value_sum, pa.float64()),
        pa.array(points_per, pa.int64()),
        pa.array(invalid, pa.int64()),
        pa.array(seconds, pa.float64(), from_pandas=True),
        texts.encoded(pa.array([source] * count, pa.string())),
    ]
    return pa.Table.from_arrays(arrays, schema=ROLLUP_SCHEMA)


def current(rows: pa.Table, sources: dict[str, str]) -> pa.Table:
    """Keep the rollup rows whose day holds exactly their source file.

    ``sources`` maps a day to the name of its only throughput file (days with several
    files are left out: their rollups are stale until the next compaction).
    """
    if rows.num_rows == 0:
        return rows
    days = rows["period"].combine_chunks().cast(pa.int64()).to_numpy() // 86_400_000_000_000
    day_names = np.datetime_as_string(days.astype("datetime64[D]"))
    wanted = np.array([sources.get(day, "") for day in day_names.tolist()], dtype=object)
    source_codes, source_texts = texts.codes(rows["source"])
    sources_of_rows = np.asarray([*source_texts.to_pylist(), None], dtype=object)[source_codes]
    keep = wanted == sources_of_rows
    return rows.filter(pa.array(keep))
