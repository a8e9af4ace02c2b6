"""One collect round: list the indexes, store what is new, report what was seen.

:meth:`~searchkit.History.collect` is this round on its history's layout: the limits
snapshot (stored on change), the points not stored yet (a file per UTC day), the gaps
since the last round, the record of each index's newest point, then the rollups of the days
written and the closed days' compaction
(:func:`~searchkit.history.compaction.after_collect`): the day the round closes is merged
on a thread after it returns (:func:`~searchkit.history.compaction.merge_later`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from searchkit.errors import HistoryError
from searchkit.frames.limits_frames import limits_frame
from searchkit.frames.sources import Indexes
from searchkit.frames.throughput_frames import throughput_frame
from searchkit.frames.zones import Instant, utc_instant
from searchkit.history import accounts, dedupe, newest_instants, reader, refusals
from searchkit.history.collecting import (
    advance_record,
    index_changes,
    listed_points,
    points_by_index,
    unstored,
)
from searchkit.history.compaction import after_collect, settle
from searchkit.history.crossings import daily_limits
from searchkit.history.gaps import Gap
from searchkit.history.layout import Layout
from searchkit.history.reports import CollectSummary
from searchkit.history.snapshots import limits_table, unchanged

if TYPE_CHECKING:
    from searchkit.api.client import Client

__all__ = ["collect_round"]


def collect_round(
    layout: Layout,
    client: Client,
    *,
    indexes: Indexes | None = None,
    now: Instant | None = None,
    compact: bool = True,
) -> CollectSummary:
    """Collect once into ``layout`` (see :meth:`~searchkit.History.collect`)."""
    given = utc_instant(now, "now")
    earlier = settle(layout)  # the merge the round before left running, if any
    listed = client.list_indexes() if indexes is None else indexes
    collected_at = given or pd.Timestamp(time.time_ns(), unit="ns", tz="UTC")
    collected_at = collected_at.floor("us")  # as stored (see layout.WRITE_OPTIONS)
    stamp = int(collected_at.value)
    skipped = refusals.Skipped()
    limits, keys, new = _listed(
        layout, listed, str(getattr(client, "username", "") or ""), stamp, skipped
    )
    notes = skipped.notes + index_changes(layout, limits, keys)
    gaps: list[Gap] = []
    record = newest_instants.read(layout)
    listed = new
    if new.num_rows:
        new, gaps, backwards = unstored(layout, new, record)
        notes += backwards
    days = pc.strftime(new["time"], format="%Y-%m-%d", locale="C") if new.num_rows else None
    snapshot = limits_table(limits, keys, stamp)
    if unchanged(layout, snapshot):
        snapshot = snapshot.slice(0, 0)  # the stored one still says it all
    files = _write_collected(layout, new, days, snapshot, stamp)
    if listed.num_rows:
        notes += advance_record(layout, record, listed)
    today = f"{collected_at:%Y-%m-%d}"
    crossed = daily_limits(limits)  # the limits whose crossings today's rollup keeps
    after_collect(layout, today, files, new, days, merge=compact, limits=crossed)
    notes += [] if earlier is None else earlier.notes()
    return CollectSummary(
        collected_at=collected_at,
        indexes=len(limits),
        new_points=new.num_rows,
        points_by_index=points_by_index(new, limits),
        skipped_by_index=skipped.by_index,
        gaps=tuple(gaps),
        warnings=tuple(notes),
        files=tuple(files),
    )


def _write_collected(
    layout: Layout, new: pa.Table, days: pa.Array | None, snapshot: pa.Table, stamp: int
) -> list[str]:
    """Write the new points (a file per UTC day), then the limits snapshot.

    A failure says what this collect stored before it: files already written stay
    (whole), and the next collect stores the rest.
    """
    files: list[str] = []
    stored = 0
    parts = [] if days is None else pc.unique(days).to_pylist()
    try:
        for day in parts:
            part = new.filter(pc.equal(days, day))
            files.append(layout.write("throughput", day, dedupe.sorted_points(part), stamp))
            stored += part.num_rows
        if snapshot.num_rows:
            day = f"{pd.Timestamp(stamp, tz='UTC'):%Y-%m-%d}"
            files.append(layout.write("limits", day, snapshot, stamp))
    except HistoryError as exc:
        done = (
            f"this collect had stored {stored:,} new points in {len(files)} file(s) "
            f"({', '.join(p.rpartition('/')[2] for p in files)}) before that; the next "
            "collect stores the rest"
            if files
            else "nothing was stored by this collect"
        )
        raise HistoryError(f"{exc.message}; {done}") from exc.__cause__
    return files


def _listed(
    layout: Layout, listed: Any, username: str, stamp: int, skipped: refusals.Skipped
) -> tuple[pd.DataFrame, list[str], pa.Table]:
    """Return the limits, account keys and points of a list that can be stored.

    One bad index or point never costs the others: it is left out, counted and named
    in ``skipped``.
    """
    items = refusals.indexes_with_ids(listed, skipped)
    limits = limits_frame(items)
    keys = accounts.keys_for(items, username, _stored_accounts(layout))
    frame = refusals.storable_points(throughput_frame(items, errors="coerce"), skipped)
    return limits, keys, listed_points(frame, dict(zip(limits.index, keys, strict=True)), stamp)


def _stored_accounts(layout: Layout) -> dict[str, str]:
    """Map index ids to the account they are stored under (newest limits day only)."""
    files = layout.files("limits")
    if not files:
        return {}
    newest = files[-1][0]
    table = reader.read(
        layout, "limits", days=(newest, newest), columns=["account", "id", "collected_at"]
    )
    latest = accounts.canonical(table).to_pandas().drop_duplicates("id", keep="last")
    return {
        str(i): str(a)
        for i, a in zip(latest["id"], latest["account"], strict=True)
        if accounts.usable(a)
    }
