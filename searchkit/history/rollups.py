"""Daily rollups: per index and UTC day, what a year of usage questions need in ~365k rows.

``<location>/rollups/day=YYYY-MM-DD/part-<collected_at us>-<uuid>.parquet`` holds one row per
(account, index) of that day: ``operations`` (the day's operations as
:mod:`searchkit.frames.counting` counts them, its unit assumption and all, with the default
``value_unit="per_second"``), ``value_sum``, ``points`` and ``invalid`` (the invalid values,
left out of both, by the same module's rule), ``interval_seconds`` (its median spacing; null
for a single point), the
``name`` at the day's last point, ``source``: the files it summarises (:func:`signature`:
each file's name, size and modification time), and ``digest``, the day's seal. The raw
points stay the truth: a rollup counts only while its day holds exactly those files, as
they were (a day that received late points, or whose file another tool rewrote under its
name, reads its points until its rollup is recomputed by the next collect that touches the
day, or a compaction), and while it passes the checks of :mod:`searchkit.history.checks`
(a rollup changed since written is ignored, named in a warning and rewritten).

The day's hours, for the forecast (which bins a day by UTC hour) and for usage where each
hour lies in one period (a zone a whole number of hours from UTC): ``hourly_value_sum`` (24
values: each hour's values summed by :func:`~searchkit.frames.counting.binned`, as
``forecast_limits`` and ``usage_frame`` sum a day's points), ``hourly_points`` (24 counts
of valid points, as ``points``) and ``last_point`` (the time of the index's last point that
day). The day's quarter-hours, for usage in any zone and period (every real zone's hours
and midnights fall on a UTC quarter-hour): ``quarter_value_sum`` and ``quarter_points`` (96
values each, as the hours), and ``first_point``; a day with invalid values is read from its
points where its periods split it. ``value_sum`` is
the sum of the quarters' sums (:func:`~searchkit.frames.counting.run_sums`), so a day read
whole and a day read by quarters count alike. Points dated on another day than their
folder's (no writer but a foreign one files them so) count nowhere, as every reader leaves
them out (:data:`~searchkit.history.reader.DATED`). The forecast and usage read a day's
points when a list is not 24 (96) valid figures (one missing, a negative or infinite sum).
The day's ``gaps`` (each step between two points of an index longer than its gap
threshold, :mod:`searchkit.history.gaps`) let :meth:`~searchkit.History.info` report the
day without reading its points (null where unknown: the day is read). A rollup written
by a searchkit without these columns (or without a seal) reads them as nulls and is stale
(the next collect or :meth:`~searchkit.History.refresh_rollups` rewrites it).
"""

from __future__ import annotations

import warnings
from collections.abc import Collection, Mapping, Sequence
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
    bin_slots,
    binned,
    clean_values,
    invalid_values,
    run_sums,
    spacings,
    spacings_median,
)
from searchkit.history import budget, packs, reader, text_columns
from searchkit.history.arrays import int64_values
from searchkit.history.checks import (
    CHECKED,
    DAY_FIGURES,
    changed,
    changed_any,
    figures,
    on_days,
    seal,
    stale,
    usable,
    warn_changed,
    whole_days,
)
from searchkit.history.crossings import crossed, limit_crossings
from searchkit.history.dedupe import Points, name_codes, unique_points
from searchkit.history.gaps import inner_gaps, thresholds
from searchkit.history.layout import ROLLUP_SCHEMA, TIMESTAMP, HistoryWarning, Layout
from searchkit.history.schemas import GAPS
from searchkit.history.signatures import signature, sources
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
    "current_rows",
    "day_sums",
    "gap_lists",
    "is_current",
    "packed_read",
    "read",
    "refresh",
    "renamed",
    "replace",
    "rollup",
    "signature",
    "sources",
    "sums_columns",
    "table_sums",
    "trusted",
]


def refresh(layout: Layout, day: str) -> bool:
    """Write ``day``'s rollup from its points as they are, unless it is current already.

    The day's files are not merged (that is compaction's job). Under the day's compaction
    lock; a day whose files change while it is read keeps its stale rollup (readers read
    its points). Returns whether a rollup was written.
    """
    source = sources(layout, day, day).get(day)
    if source is None or is_current(layout, day, source):
        return False
    with layout.lock("throughput", day) as held:
        source = sources(layout, day, day).get(day)
        if not held or source is None or is_current(layout, day, source):
            return False  # (current: written by the compactor the lock waited for)
        points = reader.read(layout, "throughput", days=(day, day))
        if sources(layout, day, day).get(day) != source:
            return False  # a writer, a compactor or another tool changed the day meanwhile
        replace(layout, day, rollup(points, day, source), points)
    return True


#: Days ``forecast_limits`` reads (``searchkit.analytics.forecast``; a test keeps them equal).
RECENT_DAYS = 42


def renamed(table: pa.Table, source: str) -> pa.Table:
    """The rollup rows ``table`` as the rollup of the files ``source`` names (the same
    points in other files: a day's files merged)."""
    column = text_columns.encoded(pa.array([source] * table.num_rows, pa.string()))
    return table.set_column(table.schema.get_field_index("source"), "source", column)


def replace(layout: Layout, day: str, table: pa.Table, points: pa.Table) -> None:
    """Write ``table`` as ``day``'s rollup, then delete the rollups it replaces, and the
    pack of its month (:func:`~searchkit.history.pack_writer.pack` writes it again from the
    day rollups)."""
    old = [path for _, path, _ in layout.files("rollups", day, day)]
    old += [path for month, path, _ in layout.packs() if month == day[:7]]  # same listing
    stamp = int(pc.max(points["collected_at"]).value) if points.num_rows else 0
    layout.write("rollups", day, table, layout.after(old, stamp))  # named after those
    for path in old:
        layout.remove(path)


def read(
    layout: Layout,
    days: tuple[str | None, str | None],
    columns: Sequence[str] | None = None,
    *,
    skip: Collection[str] = (),
) -> pa.Table:
    """Read the rollups of ``days`` (UTC, inclusive). A rollup that cannot be read (corrupt,
    truncated, foreign) never blocks: its day's rollups are left out and named in a
    :class:`HistoryWarning`, the day's points answer for it, and the next collect,
    compaction or :meth:`~searchkit.History.refresh_rollups` rewrites it. The days in
    ``skip`` (a month pack answers for them) are not read."""
    paths = None
    if skip:
        paths = {path for day, path, _ in layout.files("rollups", *days) if day not in skip}
    try:
        return reader.read(layout, "rollups", days=days, columns=columns, paths=paths)
    except HistoryError as exc:
        if budget.refused(exc):
            raise  # too large to hold: day by day would hold as much
        # read again day by day, leaving out the days that cannot be read
    parts, left_out = [], []
    for day in sorted({day for day, _, _ in layout.files("rollups", *days)} - set(skip)):
        try:
            parts.append(reader.read(layout, "rollups", days=(day, day), columns=columns))
        except HistoryError as exc:
            if budget.refused(exc):
                raise
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


def packed_read(
    layout: Layout,
    days: tuple[str | None, str | None],
    columns: Sequence[str],
    named: Mapping[str, str],
) -> pa.Table:
    """:func:`read`, the days a month pack answers for (:mod:`searchkit.history.packs`;
    ``named``: each day's :func:`signature` as listed) from it, the others from their day
    rollups: the same rows, in a few requests on an object store instead of two a day."""
    packed, answered = packs.read(layout, days, columns, named)
    rest = read(layout, days, columns, skip=answered)
    if packed is None:
        return rest
    return text_columns.encoded_table(pa.concat_tables([packed, rest.select(list(columns))]))


def is_current(layout: Layout, day: str, source: str) -> bool:
    """Whether ``day``'s stored rollup summarises exactly the files ``source`` names (see
    :func:`signature`), was written with its hours, quarters, seal and gaps (an older
    writer's is stale; gaps not known make the day's rollup worth rewriting) and passes
    every check of :mod:`~searchkit.history.checks`."""
    rows = current_rows(layout, day, source, ["gaps"])
    return rows is not None and rows["gaps"].null_count == 0


def current_rows(
    layout: Layout, day: str, source: str, columns: Sequence[str] | None = None
) -> pa.Table | None:
    """``day``'s rollup rows (``columns``, default all) when :func:`is_current` holds for
    them (what a writer may extend or rename), else None."""
    wanted = list(columns or ROLLUP_SCHEMA.names)
    needed = dict.fromkeys(["source", *CHECKED, *_HOURLY[:2], *_LISTS["quarter"], *wanted])
    table = read(layout, (day, day), list(needed))
    if table.num_rows == 0 or current(table, {day: source}).num_rows != table.num_rows:
        return None
    if stale(table).any():
        return None
    if changed_any(table, [_LISTS["quarter"], _LISTS["hour"]]):  # the seal computed once
        return None
    return table.select(wanted)


def rollup(
    points: pa.Table, day: str, source: str, *, limits: Mapping[str, Sequence[float]] | None = None
) -> pa.Table:
    """Return the rollup of one day's stored points (any order, duplicates allowed),
    sealed (:mod:`~searchkit.history.checks`), with the crossings of each index's
    ``limits`` (:mod:`searchkit.history.crossings`). Points dated on other days (filed in this
    day's folder by another writer) are left out, as every reader leaves them out."""
    period = pd.Timestamp(day, tz="UTC").value
    if points.num_rows and not _within(points["time"], period, period + DAY_NS):
        times = points["time"].cast(pa.int64())
        points = points.filter(
            pc.and_(pc.greater_equal(times, period), pc.less(times, period + DAY_NS))
        )
    # The day's points deduplicated and sorted as tidy() gives them (no frame built).
    found = unique_points(points)
    count = len(found.ids)
    raw = found.values
    bad = invalid_values(raw)  # counted apart (the counting rules)
    clean = clean_values(raw, bad)
    nanos = np.asarray(found.times, np.int64)
    flat = np.asarray(found.codes, np.int64)
    quarters = _bins(flat, nanos, clean, bad, period, count, QUARTER_NS, QUARTERS)
    # The sum of the quarters' sums: what a day read by quarters adds up to.
    value_sum = run_sums(quarters[0].values.to_numpy().reshape(count, QUARTERS), [0])[:, 0]
    # Each index's values summed in time order (what the open day's rollup extends).
    running, points_per, invalid = binned(flat, clean, bad, count)
    # One pass over the points' spacings for the median, the gaps and the kept spacings.
    spaced = spacings(flat, nanos)
    spacing = spacings_median(*spaced, pd.Index(found.ids))
    seconds = spacing.dt.total_seconds().to_numpy(dtype=np.float64)
    names, accounts = _last_texts(found, flat, count)
    operations = value_sum * np.where(np.isnan(seconds), DEFAULT_SECONDS, seconds)
    hours = _bins(flat, nanos, clean, bad, period, count, HOUR_NS, HOURS)
    oldest = np.full(count, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(oldest, flat, nanos)
    newest = np.full(count, np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(newest, flat, nanos)
    kept = Spacings.of_spacings(*spaced, count).columns(np.arange(count))
    arrays = [
        text_columns.encoded(accounts),
        text_columns.encoded(pa.array(found.ids, pa.string())),
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
        *kept[:2],  # what extends the open day's rollup (history/open_day.py) ...
        pa.nulls(count, pa.int64()),  # the seal, below
        _gaps(flat, nanos, spacing.to_numpy(), count),
        *kept[2:],  # ... without its points
        pa.array(running, pa.float64()),
        *limit_crossings(flat, nanos, clean, seconds, found.ids, limits),
    ]
    return seal(pa.Table.from_arrays(arrays, schema=ROLLUP_SCHEMA))


def _last_texts(found: Points, flat: np.ndarray, count: int) -> tuple[pa.Array, pa.Array]:
    """Each index's name and account at its last point, as :func:`~searchkit.history.dedupe.tidy`
    labels its points (taken as codes: no text per point)."""
    last = np.zeros(count, dtype=np.int64)
    last[flat] = np.arange(len(flat))  # later rows overwrite earlier ones
    name_of_id, name_texts = name_codes(found)
    names = pd.Categorical.from_codes(name_of_id[flat[last]], categories=name_texts)
    accounts = pd.Categorical.from_codes(
        found.account_codes[last], categories=pd.Index(found.accounts)
    )
    return pa.array(names), pa.array(accounts)


def _within(times: pa.ChunkedArray, low: int, high: int) -> bool:
    """Whether every instant of ``times`` (none null) lies in [low, high) epoch ns: one
    pass for both ends."""
    if times.null_count:
        return False
    ends = pc.min_max(times.cast(pa.int64()))
    return bool(ends["min"].as_py() >= low and ends["max"].as_py() < high)


def _gaps(codes: np.ndarray, nanos: np.ndarray, spacing: np.ndarray, count: int) -> pa.Array:
    """Each index's gaps inside the day (:func:`~searchkit.history.gaps.inner_gaps`), as
    ``info()`` finds them in the day's points, so it need not read them again; ``spacing``:
    each index's median spacing (timedelta64, NaT for a single point)."""
    allowed = thresholds(spacing.astype(np.int64), np.isnat(spacing))
    left = inner_gaps(codes, nanos, allowed)
    return gap_lists(codes[left], nanos[left], nanos[left + 1], allowed, count)


def gap_lists(
    rows: np.ndarray, froms: np.ndarray, tos: np.ndarray, allowed: np.ndarray, known: Any
) -> pa.Array:
    """The ``gaps`` column from steps between consecutive points (the row of each, and its
    two instants, epoch ns): those longer than their row's ``allowed`` step, each row's in
    time order. ``known``: the number of rows, or whether each row's gaps are known (a row
    whose are not is null)."""
    count = known if isinstance(known, int) else len(known)
    keep = (tos - froms) > allowed[rows]
    rows, froms, tos = rows[keep], froms[keep], tos[keep]
    order = np.lexsort((froms, rows))
    offsets = np.zeros(count + 1, dtype=np.int32)
    np.cumsum(np.bincount(rows, minlength=count), out=offsets[1:])
    pairs = pa.StructArray.from_arrays(
        [pa.array(np.asarray(at, np.int64)[order], TIMESTAMP) for at in (froms, tos)],
        fields=list(GAPS.value_type),
    )
    unknown = None if isinstance(known, int) else pa.array(~np.asarray(known, bool))
    return pa.ListArray.from_arrays(pa.array(offsets), pairs, type=GAPS, mask=unknown)


def _bins(
    codes: np.ndarray,
    nanos: np.ndarray,
    clean: np.ndarray,
    bad: np.ndarray,
    period: int,
    count: int,
    width: int,
    size: int,
) -> list[pa.Array]:
    """A day's ``size`` bins of ``width`` ns per index from its sorted unique points (all
    of that day; ``clean``: their :func:`~searchkit.frames.counting.clean_values`): the
    value sums and valid points (see the module)."""
    slot = bin_slots(nanos, period, width)
    types = [pa.list_(pa.float64()), pa.list_(pa.int64())]
    # Summed by np.bincount in time order: the points' bins wherever they are made.
    sums, valid, _ = binned(codes * size + slot, clean, bad, count * size)
    offsets = pa.array(np.arange(count + 1, dtype=np.int32) * size)
    return [
        pa.ListArray.from_arrays(offsets, pa.array(values, kind.value_type))
        for values, kind in zip((sums, valid), types, strict=True)
    ]


@dataclass(frozen=True, kw_only=True)
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
    day_invalid: np.ndarray  # [n] invalid points of the whole day (by any detail)
    seconds: np.ndarray  # [n] median sampling interval, NaN for a single point
    last_point: np.ndarray  # [n] epoch ns of the index's last point
    # By hour: the limits each index's crossing is known for (row, limit, the time of the
    # point that reached it or crossings.NOT_REACHED; see history/crossings.py), else None
    crossings: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def __repr__(self) -> str:
        """What the day holds, not its arrays (``hist.sums(...)`` of a month in a notebook
        printed every figure of every index)."""
        rows, bins = self.value_sums.shape
        by = {1: "day", 24: "hour", 96: "quarter-hour"}.get(bins, f"{bins} bins")
        invalid = int(self.day_invalid.sum())
        return (
            f"DaySums(day={self.day!r}, {rows:,} index{'es' if rows != 1 else ''} by {by}, "
            f"{int(self.points.sum()):,} points" + (f", {invalid:,} invalid)" if invalid else ")")
        )


_LISTS: dict[str, list[str]] = {"hour": _HOURLY[:2], "quarter": [*_QUARTERLY[:2], "invalid"]}


def day_sums(
    layout: Layout, first: str, last: str, rename: Mapping[str, str], *, detail: Detail = "day"
) -> dict[str, DaySums]:
    """Each day from ``first`` to ``last`` (UTC, inclusive) whose current rollup holds its
    sums by ``detail`` (valid figures, from a writer that keeps quarters); the days left
    out must be read from their points. ``rename`` as :meth:`~searchkit.History.points`
    gives names (an index's newest snapshot's)."""
    named = sources(layout, first, last)
    table = packed_read(layout, (first, last), sums_columns(detail), named)
    if table.num_rows == 0:
        return {}
    return table_sums(table, named, rename, detail=detail)


def sums_columns(detail: Detail) -> list[str]:
    """The rollup columns :func:`table_sums` reads by ``detail``."""
    lists = _LISTS.get(detail, DAY_FIGURES)
    keys = ["name", "source", *CHECKED]
    crossing = ["crossing_limits", "crossing_times"] if detail == "hour" else []
    return list(dict.fromkeys([*keys, *lists, *crossing]))


def table_sums(
    table: pa.Table, sources: Mapping[str, str], rename: Mapping[str, str], *, detail: Detail
) -> dict[str, DaySums]:
    """:func:`day_sums` of rollup rows at hand (at least :func:`sums_columns`), for the
    days whose throughput files ``sources`` names as the rows do (see :func:`current`)."""
    lists = _LISTS.get(detail, DAY_FIGURES)
    crossing = detail == "hour"
    table = current(table, dict(sources))
    if table.num_rows == 0:
        return {}
    days = int64_values(table["period"]) // DAY_NS
    if (np.diff(days) < 0).any():
        order = np.argsort(days, kind="stable")
        table, days = table.take(pa.array(order)), days[order]
    # A day answers only if every row of it does (see searchkit.history.checks).
    found, bad_rows = usable(table, lists, warn=True)
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
    last_point = int64_values(table["last_point"])
    day_invalid = int64_values(table["invalid"])  # sealed: a row that lost it fails the seal
    heads = np.flatnonzero(np.append(True, days[1:] != days[:-1]))
    out: dict[str, DaySums] = {}
    for head, end in zip(heads.tolist(), [*heads[1:].tolist(), len(days)], strict=True):
        part = slice(head, end)
        if bad_rows[part].any() or len(set(id_codes[part].tolist())) < end - head:
            continue  # see above; an id in two accounts: the points' rule merges them
        label = str(np.datetime64(int(days[head]), "D"))
        day_ids = ids[part].tolist()
        sums, points, *invalid = (values.rows(head, end) for values in found)
        out[label] = DaySums(
            day=label,
            ids=day_ids,
            names=names[part].tolist(),
            value_sums=sums,
            points=points,
            invalid=invalid[0] if invalid else None,
            day_invalid=day_invalid[part],
            seconds=seconds[part],
            last_point=last_point[part],
            crossings=crossed(table.slice(head, end - head)) if crossing else None,
        )
    return out


def trusted(
    layout: Layout, days: tuple[str | None, str | None], columns: Sequence[str]
) -> pa.Table:
    """The ``columns`` of the rollup rows of ``days`` (UTC, inclusive) that answer for
    their day's points: current (:func:`current`) and passing every check of
    :mod:`~searchkit.history.checks` on their day figures, and on their hours and quarters
    when ``columns`` names them (a day whose rows were changed is named in a
    :class:`HistoryWarning` and left out whole)."""
    lists = [DAY_FIGURES]
    for prefix, detail in (("hourly_", "hour"), ("quarter_", "quarter")):
        if any(str(column).startswith(prefix) for column in columns):
            lists.append(_LISTS[detail])
    needed = [*CHECKED, "source", *columns, *(name for part in lists for name in part)]
    named = sources(layout, *days)
    table = current(packed_read(layout, days, list(dict.fromkeys(needed)), named), named)
    if table.num_rows:
        bad = figures(table, DAY_FIGURES)[1] | stale(table)
        reasons: dict[str, str] = {}
        for part in reversed(lists):  # the day figures' reason first, where there are two
            reasons.update(changed(table, part))
        warn_changed(reasons)
        bad |= on_days(table, reasons)
        if bad.any():
            table = table.filter(pa.array(~whole_days(table, bad)))
    return table.select(list(columns))


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
    # pandas' hash table: numpy's unique() without an inverse takes ~1 s on a year's rows.
    if len(pd.unique(key)) == len(key):
        return kept  # one row per (day, account, index) already
    keys = pd.DataFrame({"day": days[keep], "account": account, "index_id": index_id})
    return kept.filter(pa.array(~keys.duplicated(keep="last").to_numpy()))
