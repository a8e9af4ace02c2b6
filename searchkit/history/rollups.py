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
and midnights fall on a UTC quarter-hour): ``quarter_value_sum`` and ``quarter_points`` (96
values each, as the hours), and ``first_point``; a day with invalid values is read from its
points where its periods split it. ``value_sum`` is
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
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from searchkit.errors import HistoryError
from searchkit.frames.counting import (
    DAY_NS,
    DEFAULT_SECONDS,
    HOUR_NS,
    HOURS,
    QUARTER_NS,
    QUARTERS,
    binned,
    clean_values,
    interval_seconds,
    invalid_values,
    median_spacing,
    run_sums,
)
from searchkit.history import reader, text_columns
from searchkit.history.crossings import NOT_REACHED, crossing_columns
from searchkit.history.dedupe import tidy
from searchkit.history.layout import ROLLUP_SCHEMA, TIMESTAMP, HistoryWarning, Layout
from searchkit.history.spacings import Spacings

_HOURLY = ["hourly_value_sum", "hourly_points", "last_point"]
_QUARTERLY = ["quarter_value_sum", "quarter_points", "first_point"]
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
    "read",
    "refresh",
    "refresh_recent",
    "renamed",
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


def renamed(table: pa.Table, source: str) -> pa.Table:
    """The rollup rows ``table`` as the rollup of the files ``source`` names (the same
    points in other files: a day's files merged)."""
    column = text_columns.encoded(pa.array([source] * table.num_rows, pa.string()))
    return table.set_column(table.schema.get_field_index("source"), "source", column)


def replace(layout: Layout, day: str, table: pa.Table, points: pa.Table) -> None:
    """Write ``table`` as ``day``'s rollup, then delete the rollups it replaces."""
    old = [path for _, path, _ in layout.files("rollups", day, day)]
    stamp = int(pc.max(points["collected_at"]).value) if points.num_rows else 0
    layout.write("rollups", day, table, layout.after(old, stamp))  # named after those
    for path in old:
        layout.remove(path)


def read(
    layout: Layout, days: tuple[str | None, str | None], columns: Sequence[str] | None = None
) -> pa.Table:
    """Read the rollups of ``days`` (UTC, inclusive). A rollup that cannot be read (corrupt,
    truncated, foreign) never blocks: its day's rollups are left out and named in a
    :class:`HistoryWarning`, the day's points answer for it, and the next collect,
    compaction or :meth:`~searchkit.History.refresh_rollups` rewrites it."""
    try:
        return reader.read(layout, "rollups", days=days, columns=columns)
    except HistoryError:
        pass  # read again day by day, leaving out the days that cannot be read
    parts, left_out = [], []
    for day in sorted({day for day, _, _ in layout.files("rollups", *days)}):
        try:
            parts.append(reader.read(layout, "rollups", days=(day, day), columns=columns))
        except HistoryError as exc:
            left_out.append(f"{day} ({exc})")
    if left_out:
        warnings.warn(
            HistoryWarning(
                f"rollups ignored in the history at {layout.location!r}: "
                f"{'; '.join(left_out)}; their days are read from their points, and the "
                "next collect or refresh_rollups() rewrites them"
            ),
            stacklevel=2,
        )
    if not parts:
        return ROLLUP_SCHEMA.empty_table().select(list(columns or ROLLUP_SCHEMA.names))
    return pa.concat_tables(parts)


def _names(layout: Layout, day: str) -> list[str]:
    return sorted(path.rpartition("/")[2] for _, path, _ in layout.files("throughput", day, day))


def is_current(layout: Layout, day: str, source: str) -> bool:
    """Whether ``day``'s stored rollup summarises exactly the files ``source`` names (and
    was written with its hours and quarters: an older writer's is stale)."""
    columns = ["period", "source", "last_point", "first_point", *_CHECKED, *_LISTS["quarter"]]
    table = read(layout, (day, day), columns)
    if table.num_rows == 0 or table["last_point"].null_count or table["first_point"].null_count:
        return False
    if current(table, {day: source}).num_rows != table.num_rows:
        return False
    figures, bad = _figures(table, _LISTS["quarter"])
    return not _inconsistent(table, figures, ~bad, warn=False).any()


def rollup(
    points: pa.Table, day: str, source: str, *, limits: Mapping[str, Sequence[float]] | None = None
) -> pa.Table:
    """Return the rollup of one day's stored points (any order, duplicates allowed), with
    the crossings of each index's ``limits`` (:mod:`searchkit.history.crossings`)."""
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
    hours = _bins(flat, nanos, raw, bad, period, count, HOUR_NS, HOURS)
    oldest = np.full(count, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(oldest, flat, nanos)
    newest = np.full(count, np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(newest, flat, nanos)
    arrays = [
        text_columns.encoded(accounts),
        text_columns.encoded(pa.array([str(c) for c in ids.categories], pa.string())),
        text_columns.encoded(names),
        pa.array(np.full(count, period, dtype="datetime64[ns]"), TIMESTAMP),
        pa.array(operations, pa.float64()),
        pa.array(value_sum, pa.float64()),
        pa.array(points_per, pa.int64()),
        pa.array(invalid, pa.int64()),
        pa.array(seconds, pa.float64(), from_pandas=True),
        text_columns.encoded(pa.array([source] * count, pa.string())),
        *hours,
        pa.array(newest.view("datetime64[ns]"), TIMESTAMP),
        *quarters,
        pa.array(oldest.view("datetime64[ns]"), TIMESTAMP),
        # What extends the open day's rollup without its points (history/open_day.py).
        *Spacings.of_points(codes, nanos, count).columns(np.arange(count)),
        pa.array(np.bincount(flat, clean_values(raw, bad), minlength=count), pa.float64()),
        *_crossings(flat, nanos, clean_values(raw, bad), seconds, ids.categories, limits),
    ]
    return pa.Table.from_arrays(arrays, schema=ROLLUP_SCHEMA)


def _crossings(
    codes: np.ndarray,
    nanos: np.ndarray,
    clean: np.ndarray,
    seconds: np.ndarray,
    ids: pd.Index,
    limits: Mapping[str, Sequence[float]] | None,
) -> tuple[pa.Array, pa.Array]:
    """The crossing columns of the rows (ids) with ``limits``."""
    row_of = {str(index_id): row for row, index_id in enumerate(ids)}
    wanted = {row_of[i]: values for i, values in (limits or {}).items() if i in row_of}
    return crossing_columns(codes, nanos, clean, seconds, wanted)


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
    value sums and valid points (see the module); nulls for points of other days."""
    slot = (nanos - period) // width
    types = [pa.list_(pa.float64()), pa.list_(pa.int64())]
    if len(slot) and (slot.min() < 0 or slot.max() >= size):  # points of other days
        return [pa.nulls(count, kind) for kind in types]
    # Summed by np.bincount in time order: the points' bins wherever they are made.
    sums, valid, _ = binned(codes * size + slot, clean_values(raw, bad), bad, count * size)
    offsets = pa.array(np.arange(count + 1, dtype=np.int32) * size)
    return [
        pa.ListArray.from_arrays(offsets, pa.array(values, kind.value_type))
        for values, kind in zip((sums, valid), types, strict=True)
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
    # [n, bins] invalid points per bin; None by hour and by quarter (not kept: a day with
    # invalid points is read from its points where its periods split it)
    invalid: np.ndarray | None
    seconds: np.ndarray  # [n] median sampling interval, NaN for a single point
    last_point: np.ndarray  # [n] epoch ns of the index's last point
    # By hour: the limits each index's crossing is known for (row, limit, the time of the
    # point that reached it or crossings.NOT_REACHED; see history/crossings.py), else None
    crossings: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None


_LISTS: dict[str, list[str]] = {"hour": _HOURLY[:2], "quarter": [*_QUARTERLY[:2], "invalid"]}
_DAY = ["value_sum", "points", "invalid"]
#: What a rollup is checked by before use (see :func:`_inconsistent`).
_CHECKED = ["value_sum", "points", "operations", "interval_seconds"]


def day_sums(
    layout: Layout, first: str, last: str, rename: Mapping[str, str], *, detail: Detail = "day"
) -> dict[str, DaySums]:
    """Each day from ``first`` to ``last`` (UTC, inclusive) whose current rollup holds its
    sums by ``detail`` (valid figures, from a writer that keeps quarters); the days left
    out must be read from their points. ``rename`` as :meth:`~searchkit.History.points`
    gives names (an index's newest snapshot's)."""
    lists = _LISTS.get(detail, _DAY)
    keys = ["account", "index_id", "name", "period", "source", *_CHECKED]
    crossing = ["crossing_limits", "crossing_times"] if detail == "hour" else []
    columns = list(dict.fromkeys([*keys, "last_point", "first_point", *lists, *crossing]))
    table = read(layout, (first, last), columns)
    if table.num_rows == 0:
        return {}
    by_day: dict[str, list[str]] = {}
    for day, path, _ in layout.files("throughput", first, last):
        by_day.setdefault(day, []).append(path.rpartition("/")[2])
    table = current(table, {day: signature(names) for day, names in by_day.items()})
    if table.num_rows == 0:
        return {}
    days = _int64(table["period"]) // DAY_NS
    if (np.diff(days) < 0).any():
        order = np.argsort(days, kind="stable")
        table, days = table.take(pa.array(order)), days[order]
    figures, bad_rows = _figures(table, lists)
    # A day answers only if every row of it does: written by a searchkit that keeps quarters
    # (first_point), with bins (no points of other days), valid figures, one row per id.
    bad_rows |= _null(table["first_point"]) | _null(table["last_point"])
    # Points of other days (a foreign writer's): the day totals count them, the points' rule
    # does not; the day is read from its points.
    begin = days * DAY_NS
    bad_rows |= (_int64(table["first_point"]) < begin) | (
        _int64(table["last_point"]) >= begin + DAY_NS
    )
    bad_rows |= _inconsistent(table, figures, ~bad_rows, warn=True)
    id_codes, id_texts = text_columns.codes(table["index_id"])
    ids = np.asarray([*id_texts.to_pylist(), ""], dtype=object)[id_codes]
    name_codes, name_texts = text_columns.codes(table["name"])
    names = np.asarray([*name_texts.to_pylist(), None], dtype=object)[name_codes]
    # The names ``rename`` gives, per distinct id, then per row (no lookup per row).
    distinct = [*id_texts.to_pylist(), ""]
    renamed = np.asarray([text in rename for text in distinct])[id_codes]
    given = np.asarray([rename.get(text) for text in distinct], dtype=object)[id_codes]
    names = np.where(renamed, given, names)
    seconds = table["interval_seconds"].to_numpy().astype(np.float64)
    last_point = _int64(table["last_point"])
    heads = np.flatnonzero(np.append(True, days[1:] != days[:-1]))
    out: dict[str, DaySums] = {}
    for head, end in zip(heads.tolist(), [*heads[1:].tolist(), len(days)], strict=True):
        part = slice(head, end)
        if bad_rows[part].any() or len(set(id_codes[part].tolist())) < end - head:
            continue  # see above; an id in two accounts: the points' rule merges them
        label = str(np.datetime64(int(days[head]), "D"))
        day_ids = ids[part].tolist()
        sums, points, *invalid = (values[part] for values in figures)
        out[label] = DaySums(
            day=label,
            ids=day_ids,
            names=names[part].tolist(),
            value_sums=sums,
            points=points,
            invalid=invalid[0] if invalid else None,
            seconds=seconds[part],
            last_point=last_point[part],
            crossings=_crossed(table.slice(head, end - head)) if crossing else None,
        )
    return out


def _crossed(rows: pa.Table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The crossings of a day's rollup rows as (row, limit, time ns) arrays."""
    limits, times = rows["crossing_limits"], rows["crossing_times"]
    lengths = pc.fill_null(pc.list_value_length(limits), 0).to_numpy()
    flat_times = pc.list_flatten(times.combine_chunks()).cast(pa.int64())
    return (
        np.repeat(np.arange(rows.num_rows), lengths),
        pc.list_flatten(limits.combine_chunks()).to_numpy(zero_copy_only=False),
        pc.fill_null(flat_times, NOT_REACHED).to_numpy(),
    )


def _figures(table: pa.Table, lists: list[str]) -> tuple[list[np.ndarray], np.ndarray]:
    """The figures of ``lists`` per row [rows, bins] (views of the column where it can),
    and which rows have none or figures no sum of valid values has."""
    bad = np.zeros(table.num_rows, dtype=bool)
    figures: list[np.ndarray] = []
    for name in lists:
        column = table[name].combine_chunks()
        if name == "invalid" and lists is not _DAY:  # by quarter: days without any only
            bad |= pc.fill_null(column, 1).to_numpy() != 0
            continue
        if lists is _DAY:
            bad |= _null(column)
            figures.append(pc.fill_null(column, 0).to_numpy()[:, None])
            continue
        size = HOURS if name.startswith("hourly") else QUARTERS
        lengths = pc.fill_null(pc.list_value_length(column), 0).to_numpy()
        whole = lengths == size
        bad |= ~whole  # none (points of other days), or not a day's bins
        flat = pc.list_flatten(column)
        if flat.null_count:  # a bin without a figure: its row has none
            holder = np.repeat(np.arange(len(lengths)), lengths)
            bad[holder[_null(flat)]] = True
            flat = pc.fill_null(flat, 0)
        numbers = flat.to_numpy()
        if whole.all():
            figures.append(numbers.reshape(-1, size))  # a view: no copy
            continue
        values = np.zeros((table.num_rows, size), dtype=numbers.dtype)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])[whole]
        values[whole] = numbers[(starts[:, None] + np.arange(size)).ravel()].reshape(-1, size)
        figures.append(values)  # rows of other lengths: zeros, and bad
    # No sum of valid values is negative, infinite or NaN, no count negative: checked on
    # each row's extremes (no array of a flag per figure).
    sums, points, *invalid = figures
    with np.errstate(invalid="ignore"):
        bad |= ~(sums.min(axis=1) >= 0) | ~np.isfinite(sums.max(axis=1))
    bad |= points.min(axis=1) < 0
    if invalid:
        bad |= invalid[0].min(axis=1) < 0
    return figures, bad


def _inconsistent(
    table: pa.Table, figures: list[np.ndarray], held: np.ndarray, *, warn: bool
) -> np.ndarray:
    """Which rows do not add up (changed by hand or by another tool since written): the
    operations are not the value sum times the interval, or the bins' ``figures`` (value
    sums and points by quarter, or points by hour; of the rows ``held`` bins) do not give
    the day's. With ``warn``,
    the days of such rows are named in a :class:`HistoryWarning`: their points answer for
    them, and :func:`is_current` calls them stale, so they are rewritten."""
    value_sum = pc.fill_null(table["value_sum"].combine_chunks(), np.nan).to_numpy()
    points = pc.fill_null(table["points"].combine_chunks(), -1).to_numpy()
    seconds = interval_seconds(table["interval_seconds"].to_numpy().astype(np.float64))
    operations = pc.fill_null(table["operations"].combine_chunks(), np.nan).to_numpy()
    wrong = operations != value_sum * seconds
    if len(figures) >= 2 and figures[0].shape[1] in (HOURS, QUARTERS):
        bins, counted = figures[0], figures[1]
        wrong |= held & (counted.sum(axis=1) != points)
        if bins.shape[1] == QUARTERS:
            wrong |= held & (run_sums(bins, [0])[:, 0] != value_sum)
    if warn and wrong.any():
        days = _int64(table["period"])[wrong] // DAY_NS
        named = ", ".join(str(np.datetime64(int(d), "D")) for d in np.unique(days))
        warnings.warn(
            HistoryWarning(
                f"rollups that do not add up ignored: {named} (their figures disagree with "
                "each other: changed since they were written); "
                "their days are read from their points, and the next collect or "
                "refresh_rollups() rewrites them"
            ),
            stacklevel=3,
        )
    return np.asarray(wrong, dtype=bool)


def _null(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Which entries of ``column`` are null."""
    return np.asarray(pc.is_null(column).to_numpy(zero_copy_only=False), dtype=bool)


def _int64(column: pa.ChunkedArray) -> np.ndarray:
    """Instants (or integers) as int64 NumPy values, nulls as 0."""
    values: np.ndarray = pc.fill_null(column.combine_chunks().cast(pa.int64()), 0).to_numpy()
    return values


def current(rows: pa.Table, sources: dict[str, str]) -> pa.Table:
    """Keep the rollup rows whose day holds exactly their source files, one row per index.

    ``sources`` maps a day to the :func:`signature` of its throughput files. Two rollups of
    the same files (two writers racing) hold the same rows: one is kept.
    """
    if rows.num_rows == 0:
        return rows
    days = rows["period"].combine_chunks().cast(pa.int64()).to_numpy() // DAY_NS
    distinct, day_of = np.unique(days, return_inverse=True)
    labels = np.datetime_as_string(distinct.astype("datetime64[D]"))
    wanted = np.asarray([sources.get(str(label), "") for label in labels], dtype=object)
    source_codes, source_texts = text_columns.codes(rows["source"])
    stored = np.asarray([*source_texts.to_pylist(), None], dtype=object)  # -1: None
    # Compared per (day, source) pair, not per row: a few texts whatever the rows.
    width = len(stored)
    pairs, pair_of = np.unique(day_of * width + (source_codes % width), return_inverse=True)
    same = wanted[pairs // width] == stored[pairs % width]
    keep = same[pair_of]
    kept = rows if keep.all() else rows.filter(pa.array(keep))
    if "index_id" not in kept.column_names or kept.num_rows < 2:
        return kept
    account = text_columns.codes(kept["account"])[0] + 1
    index_id = text_columns.codes(kept["index_id"])[0] + 1
    key = (day_of[keep] * (account.max() + 1) + account) * (index_id.max() + 1) + index_id
    if len(np.unique(key)) == len(key):
        return kept  # one row per (day, account, index) already
    keys = pd.DataFrame({"day": days[keep], "account": account, "index_id": index_id})
    return kept.filter(pa.array(~keys.duplicated(keep="last").to_numpy()))
