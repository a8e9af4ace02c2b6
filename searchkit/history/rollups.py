"""Daily rollups: per index and UTC day, what a year of usage questions need in ~365k rows.

``<location>/rollups/day=YYYY-MM-DD/part-<collected_at us>-<uuid>.parquet`` holds one row per
(account, index) of that day: ``operations`` (the sum of each point's value times the index's
median sampling interval that day, in seconds: the default ``value_unit="per_second"``
reading), ``value_sum``, ``points`` and ``invalid`` (negative or infinite values, left out of
both), ``interval_seconds`` (null for a single point), the
``name`` at the day's last point, and ``source``: the files it summarises (the file's name
when the day holds one, else :func:`signature` of their names). The raw points stay the
truth: a rollup counts only while its day holds exactly those files, so a day that received
late points reads its points until its rollup is recomputed (by the next collect that
touches the day, or a compaction).

The day's hours, for the forecast (which bins a day by UTC hour): ``hourly_value_sum`` (24
values: the sum of each hour's values, invalid and missing ones counted as 0, in time
order, as ``forecast_limits`` sums a day's points), ``hourly_points`` (24 counts, invalid
values left out, as ``points``) and ``last_point`` (the time of the index's last point that
day). The day's quarter-hours, for usage in any zone and period (every real zone's hours
and midnights fall on a UTC quarter-hour): ``quarter_value_sum``, ``quarter_points`` and
``quarter_invalid`` (96 values each, as the hours), and ``first_point``. ``value_sum`` is
the sum of the quarters' sums (:func:`~searchkit.frames.counting.run_sums`), so a day read
whole and a day read by quarters count alike. The lists are null when the day's files hold
points dated on other days (no writer but a foreign one puts them there): the forecast and
usage then read that day's points, as they do when a list is not 24 (96) valid figures (one
missing, a negative or infinite sum). A rollup written by a searchkit without these columns
reads them as nulls and is stale (the next collect or
:meth:`~searchkit.History.refresh_rollups` rewrites it).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from searchkit.frames.counting import (
    DAY_NS,
    DEFAULT_SECONDS,
    HOUR_NS,
    HOURS,
    QUARTER_NS,
    QUARTERS,
    binned,
    clean_values,
    invalid_values,
    median_spacing,
    run_sums,
)
from searchkit.history import reader, texts
from searchkit.history.dedupe import tidy
from searchkit.history.layout import ROLLUP_SCHEMA, TIMESTAMP, Layout

_HOURLY = ["hourly_value_sum", "hourly_points", "last_point"]
_QUARTERLY = ["quarter_value_sum", "quarter_points", "quarter_invalid", "first_point"]
#: What :func:`day_sums` gives a day's sums by: the whole day, its hours or its quarters.
Detail = Literal["day", "hour", "quarter"]

__all__ = [
    "RECENT_DAYS",
    "ROLLUP_SCHEMA",
    "DaySums",
    "Detail",
    "current",
    "day_sums",
    "is_current",
    "refresh",
    "refresh_recent",
    "replace",
    "rollup",
    "signature",
]


def signature(names: Sequence[str]) -> str:
    """Name a day's set of throughput files: the file's name, or a digest of several names."""
    if len(names) == 1:
        return names[0]
    digest = hashlib.sha256("\n".join(sorted(names)).encode()).hexdigest()
    return f"{len(names)} files sha256:{digest}"


def refresh(layout: Layout, day: str) -> bool:
    """Write ``day``'s rollup from its points as they are, unless it is current already.

    The day's files are not merged (that is compaction's job). Under the day's compaction
    lock; a day whose files change while it is read keeps its stale rollup (readers read
    its points). Returns whether a rollup was written.
    """
    names = _names(layout, day)
    if not names or is_current(layout, day, signature(names)):
        return False
    with layout.lock("throughput", day) as held:
        names = _names(layout, day)
        if not held or not names:
            return False
        points = reader.read(layout, "throughput", days=(day, day))
        if _names(layout, day) != names:
            return False  # a writer or a compactor changed the day meanwhile
        replace(layout, day, rollup(points, day, signature(names)), points)
    return True


#: Days ``forecast_limits`` reads (``searchkit.analytics.forecast``; a test keeps them equal).
RECENT_DAYS = 42


def refresh_recent(layout: Layout, day: str) -> int:
    """Refresh the rollups of the stored days in the :data:`RECENT_DAYS` before ``day``
    that are missing or stale (written before rollups held hours, or before late points);
    return how many were written. One small read per current day."""
    first = f"{pd.Timestamp(day) - pd.Timedelta(days=RECENT_DAYS):%Y-%m-%d}"
    days = sorted({stored for stored, _, _ in layout.files("throughput", first, day)})
    return sum(refresh(layout, stored) for stored in days if stored < day)


def replace(layout: Layout, day: str, table: pa.Table, points: pa.Table) -> None:
    """Write ``table`` as ``day``'s rollup, then delete the rollups it replaces."""
    old = [path for _, path, _ in layout.files("rollups", day, day)]
    stamp = int(pc.max(points["collected_at"]).value) if points.num_rows else 0
    layout.write("rollups", day, table, layout.after(old, stamp))  # named after those
    for path in old:
        layout.remove(path)


def _names(layout: Layout, day: str) -> list[str]:
    return sorted(path.rpartition("/")[2] for _, path, _ in layout.files("throughput", day, day))


def is_current(layout: Layout, day: str, source: str) -> bool:
    """Whether ``day``'s stored rollup summarises exactly the files ``source`` names (and
    was written with its hours and quarters: an older writer's is stale)."""
    columns = ["period", "source", "last_point", "first_point"]
    table = reader.read(layout, "rollups", days=(day, day), columns=columns)
    if table.num_rows == 0 or table["last_point"].null_count or table["first_point"].null_count:
        return False
    return bool(current(table, {day: source}).num_rows == table.num_rows)


def rollup(points: pa.Table, day: str, source: str) -> pa.Table:
    """Return the rollup of one day's stored points (any order, duplicates allowed)."""
    frame = tidy(points, dt.timezone.utc)
    ids = frame["index_id"].array
    codes = np.asarray(ids.codes)
    count = len(ids.categories)
    raw = frame["value"].to_numpy(dtype=np.float64, na_value=np.nan)
    bad = invalid_values(raw)  # counted apart (the counting rules)
    nanos = np.asarray(frame["time"].array.asi8, np.int64)
    period = pd.Timestamp(day, tz="UTC").value
    flat = codes.astype(np.int64)
    quarters = _bins(flat, nanos, raw, bad, period, count, QUARTER_NS, QUARTERS)
    if quarters[0].null_count:  # points of other days: the day summed whole
        value_sum, points_per, invalid = binned(flat, clean_values(raw, bad), bad, count)
    else:  # the sum of the quarters' sums: what a day read by quarters adds up to
        sums = quarters[0].values.to_numpy().reshape(count, QUARTERS)
        value_sum = run_sums(sums, [0])[:, 0]
        invalid = np.bincount(flat[bad], minlength=count).astype(np.int64)
        points_per = np.bincount(flat[~bad], minlength=count).astype(np.int64)
    spacing = median_spacing(codes, nanos, pd.Index(ids.categories))
    seconds = spacing.dt.total_seconds().to_numpy(dtype=np.float64)
    last = np.zeros(count, dtype=np.int64)
    last[codes] = np.arange(len(codes))  # later rows overwrite earlier ones
    # The texts of each index's last row, taken as codes (no text per point).
    names = pa.array(frame["name"].array[last])
    accounts = pa.array(frame["account"].array[last])
    operations = value_sum * np.where(np.isnan(seconds), DEFAULT_SECONDS, seconds)
    hours = _bins(flat, nanos, raw, bad, period, count, HOUR_NS, HOURS)[:2]
    oldest = np.full(count, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(oldest, flat, nanos)
    newest = np.full(count, np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(newest, flat, nanos)
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
        *hours,
        pa.array(newest.view("datetime64[ns]"), TIMESTAMP),
        *quarters,
        pa.array(oldest.view("datetime64[ns]"), TIMESTAMP),
    ]
    return pa.Table.from_arrays(arrays, schema=ROLLUP_SCHEMA)


def _bins(
    codes: np.ndarray,
    nanos: np.ndarray,
    raw: np.ndarray,
    bad: np.ndarray,
    period: int,
    count: int,
    width: int,
    size: int,
) -> list[pa.Array]:
    """A day's ``size`` bins of ``width`` ns per index from its sorted unique points: the
    value sums, valid and invalid points (see the module); nulls for points of other days."""
    slot = (nanos - period) // width
    types = [pa.list_(pa.float64()), pa.list_(pa.int64()), pa.list_(pa.int64())]
    if len(slot) and (slot.min() < 0 or slot.max() >= size):  # points of other days
        return [pa.nulls(count, kind) for kind in types]
    # Summed by np.bincount in time order: the points' bins wherever they are made.
    sums, valid, invalid = binned(codes * size + slot, clean_values(raw, bad), bad, count * size)
    offsets = pa.array(np.arange(count + 1, dtype=np.int32) * size)
    return [
        pa.ListArray.from_arrays(offsets, pa.array(values, kind.value_type))
        for values, kind in zip((sums, valid, invalid), types, strict=True)
    ]


@dataclass(frozen=True)
class DaySums:
    """One UTC day from its current rollup, one row per index (the order of the day's
    points): what its points sum to by the whole day, by hour or by quarter-hour, the same
    figures to the last bit (:mod:`searchkit.frames.counting`), without reading them."""

    day: str  # YYYY-MM-DD
    ids: list[str]
    names: list[Any]  # at the day's last point, or the name ``rename`` gives
    value_sums: np.ndarray  # [n, bins] the bin's values summed; bins: 1, 24 or 96
    points: np.ndarray  # [n, bins] valid points per bin
    invalid: np.ndarray | None  # [n, bins] invalid points per bin (None by hour: not kept)
    seconds: np.ndarray  # [n] median sampling interval, NaN for a single point
    last_point: np.ndarray  # [n] epoch ns of the index's last point


_LISTS: dict[str, list[str]] = {"hour": _HOURLY[:2], "quarter": _QUARTERLY[:3]}
_DAY = ["value_sum", "points", "invalid"]


def day_sums(
    layout: Layout, first: str, last: str, rename: Mapping[str, str], *, detail: Detail = "day"
) -> dict[str, DaySums]:
    """Each day from ``first`` to ``last`` (UTC, inclusive) whose current rollup holds its
    sums by ``detail`` (valid figures, from a writer that keeps quarters); the days left
    out must be read from their points. ``rename`` as :meth:`~searchkit.History.points`
    gives names (an index's newest snapshot's)."""
    lists = _LISTS.get(detail, _DAY)
    keys = ["account", "index_id", "name", "period", "interval_seconds", "source"]
    columns = list(dict.fromkeys([*keys, "last_point", "first_point", *lists]))
    table = reader.read(layout, "rollups", days=(first, last), columns=columns)
    if table.num_rows == 0:
        return {}
    by_day: dict[str, list[str]] = {}
    for day, path, _ in layout.files("throughput", first, last):
        by_day.setdefault(day, []).append(path.rpartition("/")[2])
    table = current(table, {day: signature(names) for day, names in by_day.items()})
    if table.num_rows == 0:
        return {}
    days = table["period"].combine_chunks().cast(pa.int64()).to_numpy() // DAY_NS
    if (np.diff(days) < 0).any():
        order = np.argsort(days, kind="stable")
        table, days = table.take(pa.array(order)), days[order]
    heads = np.flatnonzero(np.append(True, days[1:] != days[:-1]))
    out: dict[str, DaySums] = {}
    for head, end in zip(heads.tolist(), [*heads[1:].tolist(), len(days)], strict=True):
        sums = _one_day(table.slice(head, end - head), lists, rename)
        if sums is not None:
            out[sums.day] = sums
    return out


def _one_day(rows: pa.Table, lists: list[str], rename: Mapping[str, str]) -> DaySums | None:
    """A day's :class:`DaySums` from its current rollup rows, or None where they cannot
    answer for its points (an older writer's, a foreign writer's, figures no sum has)."""
    if rows["first_point"].null_count or rows["last_point"].null_count:
        return None  # an older writer's: stale
    ids = [str(i) for i in rows["index_id"].to_pylist()]
    if len(set(ids)) < len(ids):
        return None  # an id in two accounts (the points' rule merges them)
    columns = [rows[name].combine_chunks() for name in lists]
    if any(column.null_count for column in columns):
        return None  # no bins: points of other days
    if lists is _DAY:
        figures = [column.to_numpy(zero_copy_only=False)[:, None] for column in columns]
    else:
        size = HOURS if lists == _HOURLY[:2] else QUARTERS
        if any((pc.list_value_length(c).to_numpy() != size).any() for c in columns):
            return None  # not a day's bins: a foreign writer's
        flat = [pc.list_flatten(c) for c in columns]
        if any(values.null_count for values in flat):
            return None  # a bin without a figure: the same
        figures = [values.to_numpy().reshape(-1, size) for values in flat]
    sums, points, *bad = figures
    if not np.isfinite(sums).all() or (sums < 0).any() or (points < 0).any():
        return None  # no sum of valid values is negative or infinite: the same
    if bad and (bad[0] < 0).any():
        return None
    names = [rename.get(i, n) for i, n in zip(ids, rows["name"].to_pylist(), strict=True)]
    return DaySums(
        day=str(np.datetime64(int(rows["period"][0].value), "ns").astype("datetime64[D]")),
        ids=ids,
        names=names,
        value_sums=np.asarray(sums, np.float64),
        points=np.asarray(points, np.int64),
        invalid=np.asarray(bad[0], np.int64) if bad else None,
        seconds=rows["interval_seconds"].to_numpy().astype(np.float64),
        last_point=rows["last_point"].combine_chunks().cast(pa.int64()).to_numpy(),
    )


def current(rows: pa.Table, sources: dict[str, str]) -> pa.Table:
    """Keep the rollup rows whose day holds exactly their source files, one row per index.

    ``sources`` maps a day to the :func:`signature` of its throughput files. Two rollups of
    the same files (two writers racing) hold the same rows: one is kept.
    """
    if rows.num_rows == 0:
        return rows
    days = rows["period"].combine_chunks().cast(pa.int64()).to_numpy() // DAY_NS
    day_names = np.datetime_as_string(days.astype("datetime64[D]"))
    wanted = pd.Series(day_names, dtype=object).map(sources).fillna("").to_numpy()
    source_codes, source_texts = texts.codes(rows["source"])
    keep = wanted == np.asarray([*source_texts.to_pylist(), None], dtype=object)[source_codes]
    kept = rows.filter(pa.array(keep))
    if "index_id" not in kept.column_names or kept.num_rows < 2:
        return kept
    keys = pd.DataFrame(
        {
            "day": days[keep],
            "account": texts.codes(kept["account"])[0],
            "index_id": texts.codes(kept["index_id"])[0],
        }
    )
    return kept.filter(pa.array(~keys.duplicated(keep="last").to_numpy()))
