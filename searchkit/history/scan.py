"""The scan behind :meth:`~searchkit.History.info`: what a history holds, day by day.

A closed day whose rollup answers for its points (current and checked: see
:mod:`~searchkit.history.rollups`) is summarised from it: its indexes, their first and last
points, how many points, their sampling intervals and the gaps inside the day, as the
rollup's writer found them in those very points. Any other day (the open one, a day that
got late points, one without a rollup or with one an older searchkit wrote) is read: its
keys and times. Either way the same figures, the same gaps, in the same order.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from searchkit.frames.counting import DAY_NS
from searchkit.history import dedupe, reader, text_columns
from searchkit.history.arrays import int64_values, null_mask
from searchkit.history.footprint import footprint
from searchkit.history.gaps import Gap, day_gaps, thresholds
from searchkit.history.layout import Layout
from searchkit.history.reports import HistoryInfo
from searchkit.history.rollups import trusted

__all__ = ["DaySummary", "history_info", "summaries"]

#: The rollup columns a day's summary is made of.
_COLUMNS = [
    "account",
    "index_id",
    "name",
    "period",
    "points",
    "invalid",
    "interval_seconds",
    "first_point",
    "last_point",
    "gaps",
]


@dataclass(frozen=True)
class DaySummary:
    """One UTC day's points as :meth:`~searchkit.History.info` counts them, from its
    rollup: a row per index, in the order of the day's points."""

    accounts: list[str]
    ids: list[str]
    names: list[str]
    points: int  # the day's points (valid or not)
    first: np.ndarray  # [n] epoch ns of each index's first point
    last: np.ndarray  # [n] epoch ns of each index's last point
    allowed: np.ndarray  # [n] the step (ns) past which a step is a gap
    gap_rows: np.ndarray  # [g] the row of each gap inside the day, in row then time order
    gap_from: np.ndarray  # [g] epoch ns of the point before the gap
    gap_to: np.ndarray  # [g] epoch ns of the point after it


def summaries(layout: Layout, days: list[str]) -> dict[str, DaySummary]:
    """The :class:`DaySummary` of each of ``days`` whose rollup answers for its points."""
    if not days:
        return {}
    # Current and checked (a changed rollup is named in a warning, its day read).
    table = trusted(layout, (days[0], days[-1]), _COLUMNS)
    if table.num_rows == 0:
        return {}
    day_of = int64_values(table["period"]) // DAY_NS
    if (np.diff(day_of) < 0).any():
        order = np.argsort(day_of, kind="stable")
        table, day_of = table.take(pa.array(order)), day_of[order]
    first, last = int64_values(table["first_point"]), int64_values(table["last_point"])
    seconds = table["interval_seconds"].to_numpy().astype(np.float64)
    begin = day_of * DAY_NS
    usable = ~(
        null_mask(table["first_point"]) | null_mask(table["last_point"]) | null_mask(table["gaps"])
    )
    usable &= ~(null_mask(table["points"]) | null_mask(table["invalid"]))
    usable &= (first >= begin) & (last < begin + DAY_NS) & (first <= last)
    spacing = np.round(np.nan_to_num(seconds, nan=0.0) * 1e9).astype(np.int64)
    allowed = thresholds(spacing, np.isnan(seconds))
    counted = (
        pc.fill_null(table["points"], 0).to_numpy() + pc.fill_null(table["invalid"], 0).to_numpy()
    )
    gaps = table["gaps"].combine_chunks()
    lengths = pc.fill_null(pc.list_value_length(gaps), 0).to_numpy()
    holder = np.repeat(np.arange(table.num_rows), lengths)
    pairs = pc.list_flatten(gaps)
    gap_from = int64_values(pairs.field("stored_until"))
    gap_to = int64_values(pairs.field("listed_from"))
    id_codes, id_texts = text_columns.codes(table["index_id"])
    ids = np.asarray([*id_texts.to_pylist(), ""], dtype=object)[id_codes]
    accounts = _texts(table["account"])
    names = _texts(table["name"])
    heads = np.flatnonzero(np.append(True, day_of[1:] != day_of[:-1]))
    out: dict[str, DaySummary] = {}
    for head, end in zip(heads.tolist(), [*heads[1:].tolist(), len(day_of)], strict=True):
        if not usable[head:end].all() or len(set(id_codes[head:end].tolist())) < end - head:
            continue  # an id in two accounts: the points' rule merges them; read the day
        label = str(np.datetime64(int(day_of[head]), "D"))
        inside = (holder >= head) & (holder < end)
        out[label] = DaySummary(
            accounts=accounts[head:end].tolist(),
            ids=ids[head:end].tolist(),
            names=names[head:end].tolist(),
            points=int(counted[head:end].sum()),
            first=first[head:end],
            last=last[head:end],
            allowed=allowed[head:end],
            gap_rows=holder[inside] - head,
            gap_from=gap_from[inside],
            gap_to=gap_to[inside],
        )
    return out


class _Scan:
    """What :func:`history_info` gathers, day after day."""

    def __init__(self) -> None:
        self.points = 0
        self.first: int | None = None
        self.last: int | None = None
        self.gaps: list[Gap] = []
        #: Each (account, index)'s last point so far (epoch ns): every index seen.
        self.previous: dict[tuple[str, str], int] = {}

    def span(self, first: int, last: int) -> None:
        self.first = first if self.first is None else min(self.first, first)
        self.last = last if self.last is None else max(self.last, last)

    def add_points(self, frame: pd.DataFrame) -> None:
        """A day read from its points (tidy, UTC)."""
        if frame.empty:
            return
        self.points += len(frame)
        times = frame["time"].array.asi8
        self.span(int(times.min()), int(times.max()))
        self.gaps += day_gaps(frame, self.previous)

    def add_summary(self, day: DaySummary) -> None:
        """A day from its rollup: the same figures and gaps as :meth:`add_points`."""
        self.points += day.points
        self.span(int(day.first.min()), int(day.last.max()))
        keys = list(zip(day.accounts, day.ids, strict=True))
        before = np.asarray([self.previous.get(key, -1) for key in keys], dtype=np.int64)
        known = np.asarray([key in self.previous for key in keys])
        across = np.flatnonzero(known & (day.first - before > day.allowed))
        gaps = [(row, before[row], day.first[row]) for row in across.tolist()]
        self.previous.update(zip(keys, day.last.tolist(), strict=True))
        gaps += zip(day.gap_rows.tolist(), day.gap_from.tolist(), day.gap_to.tolist(), strict=True)
        for row, start, end in gaps:
            account, index_id = keys[row]
            self.gaps.append(Gap(account, index_id, day.names[row], _utc(start), _utc(end)))


def history_info(layout: Layout, location: str) -> HistoryInfo:
    """Summarise the history at ``layout`` (see :meth:`~searchkit.History.info`).

    The days a rollup answers for come from their rollups (see the module); each other
    day is read on its own (the time column and the keys), so memory stays that of a day
    whatever the history's length.
    """
    by_kind, others = footprint(layout)
    days = sorted({day for day, _, _ in layout.files("throughput")})
    summarised = summaries(layout, days)
    scan = _Scan()
    for day in days:
        if day in summarised:
            scan.add_summary(summarised[day])
            continue
        table = reader.read(
            layout, "throughput", days=(day, day), columns=["account", "index_id", "name", "time"]
        )
        scan.add_points(
            dedupe.tidy(
                table.append_column("value", pa.nulls(table.num_rows, pa.float64())),
                dt.timezone.utc,
            )
        )
    return HistoryInfo(
        location=location,
        indexes=len(scan.previous),
        points=scan.points,
        first=None if scan.first is None else _utc(scan.first),
        last=None if scan.last is None else _utc(scan.last),
        files=sum(stored.files for stored in by_kind.values()),
        bytes=sum(stored.bytes for stored in by_kind.values()),
        gaps=tuple(scan.gaps),
        by_kind=by_kind,
        other_files=others,
    )


def _utc(nanos: int) -> pd.Timestamp:
    return pd.Timestamp(int(nanos), unit="ns", tz="UTC")


def _texts(column: pa.ChunkedArray) -> np.ndarray:
    """A text column's values per row (null as the empty text, as the points read)."""
    codes, distinct = text_columns.codes(column)
    values: np.ndarray = np.asarray([*distinct.to_pylist(), ""], dtype=object)[codes]
    return values
