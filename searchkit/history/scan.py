"""The scan behind :meth:`~searchkit.History.info`: what a history holds, day by day."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pyarrow as pa

from searchkit.history import dedupe, reader
from searchkit.history.footprint import footprint
from searchkit.history.gaps import Gap, day_gaps
from searchkit.history.layout import Layout
from searchkit.history.reports import HistoryInfo

__all__ = ["history_info"]


def history_info(layout: Layout, location: str) -> HistoryInfo:
    """Summarise the history at ``layout`` (see :meth:`~searchkit.History.info`).

    Reads one day at a time (the time column and the keys), so memory stays that of a day
    whatever the history's length.
    """
    by_kind, others = footprint(layout)
    days = sorted({day for day, _, _ in layout.files("throughput")})
    points = 0
    first: pd.Timestamp | None = None
    last: pd.Timestamp | None = None
    gaps: list[Gap] = []
    previous: dict[tuple[str, str], pd.Timestamp] = {}
    for day in days:
        table = reader.read(
            layout, "throughput", days=(day, day), columns=["account", "index_id", "name", "time"]
        )
        frame = dedupe.tidy(
            table.append_column("value", pa.nulls(table.num_rows, pa.float64())),
            dt.timezone.utc,
        )
        if frame.empty:
            continue
        points += len(frame)
        first = frame["time"].iloc[0] if first is None else min(first, frame["time"].min())
        last = frame["time"].max() if last is None else max(last, frame["time"].max())
        gaps += day_gaps(frame, previous)  # also records every index seen
    return HistoryInfo(
        location=location,
        indexes=len(previous),
        points=points,
        first=first,
        last=last,
        files=sum(stored.files for stored in by_kind.values()),
        bytes=sum(stored.bytes for stored in by_kind.values()),
        gaps=tuple(gaps),
        by_kind=by_kind,
        other_files=others,
    )
