"""What a collect stores: the listed points after each index's newest, gaps, index changes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from searchkit.history import dedupe, newest_instants, reader
from searchkit.history.bounds import Bounds
from searchkit.history.gaps import Gap, listing_gap
from searchkit.history.layout import KEY, THROUGHPUT_SCHEMA, Layout
from searchkit.history.text_columns import codes, encoded

__all__ = [
    "advance_record",
    "behind_record",
    "index_changes",
    "listed_points",
    "listing_notes",
    "newest_before",
    "points_by_index",
    "unstored",
]


def listed_points(frame: pd.DataFrame, account_of: dict[str, str], stamp: int) -> pa.Table:
    """The listed points as stored rows (instants floored to the stored microseconds).

    Text columns go through their categories: each distinct id, name and account becomes a
    string once, and stays once: the columns are Arrow dictionaries (codes per point).
    """
    ids = frame["index_id"]
    accounts = (
        _text(ids, [str(account_of.get(str(c))) for c in ids.cat.categories])
        if isinstance(ids.dtype, pd.CategoricalDtype)
        else _text(ids.map(account_of))
    )
    times = frame["time"].dt.tz_convert("UTC").dt.floor("us").array
    arrays = [
        accounts,
        _text(ids),
        _text(frame["name"]),
        pa.array(times.asi8, pa.int64()).cast(THROUGHPUT_SCHEMA.field("time").type),
        pa.array(frame["value"].to_numpy(dtype=np.float64, na_value=np.nan), from_pandas=True),
        pa.array(
            np.full(len(frame), stamp, dtype="datetime64[ns]"),
            THROUGHPUT_SCHEMA.field("collected_at").type,
        ),
    ]
    return pa.Table.from_arrays(arrays, schema=THROUGHPUT_SCHEMA)


def _text(values: pd.Series, labels: list[str] | None = None) -> pa.DictionaryArray:
    """A column as an Arrow dictionary, converting each distinct value once (or its
    ``labels``)."""
    if not isinstance(values.dtype, pd.CategoricalDtype):
        return encoded(pa.array(values.astype(str).to_numpy(), pa.string()))
    labels = [str(c) for c in values.cat.categories] if labels is None else list(labels)
    codes = values.cat.codes.to_numpy()
    if (codes < 0).any():  # a missing label reads as the text pandas gives it
        labels.append("nan")
        codes = np.where(codes < 0, len(labels) - 1, codes)
    dictionary = pa.DictionaryArray.from_arrays(
        pa.array(codes.astype(np.int32)), pa.array(labels, pa.string())
    )
    return encoded(dictionary)  # labels may repeat (two indexes of one account)


def advance_record(layout: Layout, record: pa.Table | None, listed: pa.Table) -> list[str]:
    """Move the newest-instant record past what is now stored; say so if it cannot."""
    try:
        newest_instants.write(layout, newest_instants.merge(record, listed))
    except (OSError, pa.ArrowException) as exc:
        return [
            f"the record of each index's newest point could not be updated ({exc}); the "
            "next collect checks the stored points instead"
        ]
    return []


def unstored(
    layout: Layout, new: pa.Table, record: pa.Table | None
) -> tuple[pa.Table, list[Gap], list[str]]:
    """Drop points already stored; find gaps and clocks gone backwards.

    With the newest-instant record, only the record is read: what is new is what is
    after each index's newest stored point. Without it (a store older than the record,
    or one it could not be read from), the stored points from the first listed day on.
    """
    listed_from = new.group_by(["account", "index_id", "name"]).aggregate(
        [("time", "min"), ("time", "max")]
    )
    if record is not None:
        fresh, _ = newest_instants.unseen(new, record)
        known = {
            (a, i): t
            for a, i, t in zip(
                record["account"].to_pylist(),
                record["index_id"].to_pylist(),
                record["time"].to_pylist(),
                strict=True,
            )
        }
        gaps, notes = listing_notes(listed_from, known)
        return behind_record(layout, new, fresh, listed_from, known), gaps, notes
    first_day = pc.strftime(pc.min(new["time"]), format="%Y-%m-%d").as_py()
    stored = reader.read(layout, "throughput", days=(first_day, None), columns=list(KEY))
    fresh = new.filter(pa.array(~dedupe.stored_mask(new, stored)))
    newest = stored.group_by(["account", "index_id"]).aggregate([("time", "max")])
    known = {
        (a, i): t
        for a, i, t in zip(
            newest["account"].to_pylist(),
            newest["index_id"].to_pylist(),
            newest["time_max"].to_pylist(),
            strict=True,
        )
    }
    missing = [
        (a, i)
        for a, i in zip(
            listed_from["account"].to_pylist(), listed_from["index_id"].to_pylist(), strict=True
        )
        if (a, i) not in known
    ]
    if missing:
        known.update(newest_before(layout, first_day, missing))
    gaps, notes = listing_notes(listed_from, known)
    return fresh, gaps, notes


def behind_record(
    layout: Layout,
    new: pa.Table,
    fresh: pa.Table,
    listed_from: pa.Table,
    known: dict[tuple[str, str], Any],
) -> pa.Table:
    """Add the unstored points of indexes listed as of before their newest stored point.

    A list whose newest point is older than the stored one (a clock gone backwards, a
    stale list) may hold points never stored: those indexes' points are checked against
    the stored ones of the days the list covers, and only those.
    """
    behind = [
        i
        for a, i, t in zip(
            listed_from["account"].to_pylist(),
            listed_from["index_id"].to_pylist(),
            listed_from["time_max"].to_pylist(),
            strict=True,
        )
        if (a, i) in known and pd.Timestamp(t) < pd.Timestamp(known[(a, i)])
    ]
    if not behind:
        return fresh
    ids = pa.array(sorted(set(behind)), pa.string())
    older = new.filter(pc.is_in(new["index_id"], value_set=ids))
    first_day = pc.strftime(pc.min(older["time"]), format="%Y-%m-%d").as_py()
    stored = reader.read(
        layout,
        "throughput",
        days=(first_day, None),
        columns=list(KEY),
        filter=Bounds(texts=(("index_id", tuple(ids.to_pylist())),)),
    )
    unstored = older.filter(pa.array(~dedupe.stored_mask(older, stored)))
    return pa.concat_tables([fresh, unstored])


def newest_before(
    layout: Layout, day: str, wanted: list[tuple[str, str]]
) -> dict[tuple[str, str], pd.Timestamp]:
    """Find the newest stored point of indexes with nothing on or after ``day``."""
    found: dict[tuple[str, str], pd.Timestamp] = {}
    earlier = [d for d in reversed(layout.days("throughput")) if d < day]
    ids = Bounds(texts=(("index_id", tuple(sorted({i for _, i in wanted}))),))
    for previous in earlier:
        if len(found) == len(wanted):
            break
        part = reader.read(
            layout,
            "throughput",
            days=(previous, previous),
            columns=["account", "index_id", "time"],
            filter=ids,
        )
        newest = part.group_by(["account", "index_id"]).aggregate([("time", "max")])
        for a, i, t in zip(
            newest["account"].to_pylist(),
            newest["index_id"].to_pylist(),
            newest["time_max"].to_pylist(),
            strict=True,
        ):
            if (a, i) in wanted and (a, i) not in found:
                found[(a, i)] = t
    return found


def index_changes(layout: Layout, limits: pd.DataFrame, accounts: list[str]) -> list[str]:
    """Warn about indexes renamed or no longer listed since the previous collect.

    Only the newest day of limits snapshots is read, and in it the latest snapshot of
    each account, so the cost does not grow with the history.
    """
    newest = layout.newest_day("limits")
    if newest is None:
        return []
    table = reader.read(
        layout, "limits", days=(newest, newest), columns=["account", "id", "name", "collected_at"]
    )
    before = table.to_pandas()
    last = before.groupby("account")["collected_at"].transform("max")
    before = before[before["collected_at"] == last].drop_duplicates(["account", "id"], keep="last")
    notes = []
    listed_accounts = set(accounts)
    current = dict(zip(limits.index, limits["name"], strict=True))
    for row in before.itertuples(index=False):
        index_id = row.id
        if row.account not in listed_accounts and listed_accounts:
            continue
        if index_id not in current:
            notes.append(
                f"index {row.name!r} ({index_id}) is no longer listed; its history is kept"
            )
        elif current[index_id] != row.name:
            notes.append(
                f"index {index_id} was renamed from {row.name!r} to "
                f"{current[index_id]!r}; its history shows it under the new name"
            )
    return notes


def listing_notes(
    listed_from: pa.Table, known: dict[tuple[str, str], Any]
) -> tuple[list[Gap], list[str]]:
    """Gaps and clocks gone backwards between each index's newest stored point and the list."""
    gaps: list[Gap] = []
    notes: list[str] = []
    for account, index_id, name, oldest, latest in zip(
        *(listed_from[c].to_pylist() for c in ("account", "index_id", "name")),
        listed_from["time_min"].to_pylist(),
        listed_from["time_max"].to_pylist(),
        strict=True,
    ):
        stored_until = known.get((account, index_id))
        if stored_until is None:
            continue
        stored_until, oldest, latest = (pd.Timestamp(t) for t in (stored_until, oldest, latest))
        if latest < stored_until:
            notes.append(
                f"clock went backwards for {name!r}: the service's newest point "
                f"{latest:%Y-%m-%d %H:%M:%S} is older than the stored "
                f"{stored_until:%Y-%m-%d %H:%M:%S} UTC; stored points are kept"
            )
        elif listing_gap(stored_until, oldest):
            gaps.append(Gap(account, index_id, name, stored_until, oldest))
    return gaps, notes


def points_by_index(new: pa.Table, limits: pd.DataFrame) -> dict[str, int]:
    """Count the new points of each listed index, by name (0 for an index without any)."""
    rows, names = codes(new["name"])
    counts = np.bincount(rows[rows >= 0], minlength=len(names))  # per distinct name
    by_name = dict(zip(names.to_pylist(), counts.tolist(), strict=True))
    return {str(name): int(by_name.get(name, 0)) for name in limits["name"]}
