"""Month packs: a closed month's daily rollups in one file, so that a read of many days on
an object store makes a few requests, not a HEAD and a GET a day (a year of rollups: 27
requests instead of 730; moto spends ~2.5 ms of its CPU a request, whatever its bytes).

``<location>/rollups/_months/month=YYYY-MM/part-<stamp>-<uuid>.parquet`` holds the rows of
the month's day rollups as they were written: a container of the same sealed rows, not a
figure of its own (each row keeps its day's ``source``, the signature of the day's
throughput files, and its seal). The folder's ``_`` keeps it out of the rollups dataset that
Spark or DuckDB read (and out of the day listing). The day rollups stay where they are.

A packed day answers for its day exactly as its day rollup would: only while its rows'
``source`` names the day's throughput files as listed now (then the day's rollup files are
not read), and through the same checks (:mod:`searchkit.history.checks`) after; a day whose
packed rows do not match (late points compacted since, a pack of another writer) is read
from its day rollup files as before, or from its points. A month has one pack; a newer one
(named to sort after it) replaces it (:mod:`searchkit.history.pack_writer`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pyarrow as pa

from searchkit.errors import HistoryError
from searchkit.frames.counting import DAY_NS
from searchkit.history import budget, reader, text_columns
from searchkit.history.arrays import int64_values
from searchkit.history.layout import PACKS, Layout

__all__ = ["PACKS", "newest", "read"]

# Packs fetched and decoded at once: each is held whole (some 20 MB a month of a thousand
# indexes) until its columns are decoded, then let go (but the two used last, which the next
# batch of a year's read asks for again: Layout.fetch's ``recent``). Two keep the requests
# and the decoding overlapping on a machine of two cores.
_IN_FLIGHT = 2


def newest(layout: Layout, first: str | None, last: str | None) -> list[tuple[str, str, int]]:
    """The newest pack of each month overlapping ``first`` .. ``last`` (UTC days,
    inclusive): ``(month, path, size)``."""
    by_month: dict[str, tuple[str, str, int]] = {}
    for month, path, size in layout.packs():
        if (first is None or month >= first[:7]) and (last is None or month <= last[:7]):
            by_month[month] = max(by_month.get(month, (month, path, size)), (month, path, size))
    return [by_month[month] for month in sorted(by_month)]


def read(
    layout: Layout,
    days: tuple[str | None, str | None],
    columns: Sequence[str],
    sources: Mapping[str, str],
) -> tuple[pa.Table | None, set[str]]:
    """The packed rows (``columns``) of the days in ``days`` whose packed rows all name the
    day's throughput files as ``sources`` gives them (see the module), and those days.

    Returns ``(None, set())`` when no pack covers the days. A pack that cannot be read is
    left out (its days are read from their day rollups, which say why if they cannot be).
    """
    found = newest(layout, *days)
    if not found:
        return None, set()
    needed = list(dict.fromkeys([*columns, "period", "source"]))
    tables = _tables(layout, found, needed, days)
    if not tables:
        return None, set()
    table = pa.concat_tables(reader.conformed(tables, "rollups", needed))
    day_of = int64_values(table["period"]) // DAY_NS
    labels = np.datetime_as_string(np.unique(day_of).astype("datetime64[D]"))
    first, last = days
    inside = [
        str(d) for d in labels if (first is None or d >= first) and (last is None or d <= last)
    ]
    source_codes, source_texts = text_columns.codes(table["source"])
    stored = np.asarray([*source_texts.to_pylist(), None], dtype=object)[source_codes]
    answered = set()
    for label in inside:
        rows = day_of == np.datetime64(label, "D").astype(np.int64)
        wanted = sources.get(label)
        if wanted is not None and bool((stored[rows] == wanted).all()):
            answered.add(label)
    if not answered:
        return None, set()
    keep = np.isin(day_of, [np.datetime64(d, "D").astype(np.int64) for d in sorted(answered)])
    return _rows(table.select(list(columns)), keep), answered


def _rows(table: pa.Table, keep: np.ndarray) -> pa.Table:
    """The rows of ``table`` where ``keep`` holds, as slices of it (no copy): a pack's rows
    lie in day order, so the kept ones are a few runs, and ``Table.filter`` would copy every
    column (a month's quarter-hour lists are some 100 MB), which cost a year's read in a
    quarter-hour zone 0.3 s of CPU and as many MiB again."""
    if keep.all():
        return table
    edges = np.flatnonzero(np.diff(np.concatenate(([0], keep.view(np.int8), [0]))))
    starts, stops = edges[::2], edges[1::2]
    runs = [table.slice(start, stop - start) for start, stop in zip(starts, stops, strict=True)]
    return pa.concat_tables(runs) if runs else table.slice(0, 0)


def _groups(planned: reader.Planned, days: tuple[str | None, str | None]) -> list[int]:
    """The row groups of a pack whose periods can lie in ``days`` (by their statistics)."""
    metadata = planned.metadata
    column = metadata.schema.to_arrow_schema().get_field_index("period")
    low = None if days[0] is None else pd.Timestamp(days[0], tz="UTC")
    high = None if days[1] is None else pd.Timestamp(days[1], tz="UTC")
    kept = []
    for group in planned.groups:
        stats = metadata.row_group(group).column(column).statistics
        if stats is None or not stats.has_min_max:
            kept.append(group)
            continue
        first, last = (_utc(stats.min), _utc(stats.max))
        if (high is None or first <= high) and (low is None or last >= low):
            kept.append(group)
    return kept


def _utc(value: object) -> pd.Timestamp:
    stamp = pd.Timestamp(value)  # type: ignore[arg-type]
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def _tables(
    layout: Layout,
    found: list[tuple[str, str, int]],
    needed: list[str],
    days: tuple[str | None, str | None],
) -> list[pa.Table]:
    """The ``needed`` columns of each pack in ``found`` (fetched whole on an object store:
    a HEAD and a GET each, :data:`_IN_FLIGHT` at a time), those that cannot be read left
    out."""

    def one(entry: tuple[str, str, int]) -> pa.Table | None:
        _, path, size = entry
        try:
            planned = reader.plan_file(layout, "rollups", path, size, None, not layout.local)
            planned = dataclasses.replace(planned, groups=_groups(planned, days))
            budget.check("rollups", (None, None), planned.rows, needed)
            return reader.read_planned(layout, "rollups", planned, needed, None)
        except FileNotFoundError:
            return None  # replaced by a newer pack meanwhile: the days read their rollups
        except HistoryError as exc:
            if budget.refused(exc):
                raise
            return None  # unreadable: its days are read from their day rollups

    with ThreadPoolExecutor(max_workers=max(1, min(_IN_FLIGHT, len(found)))) as pool:
        return [table for table in pool.map(one, found) if table is not None]
