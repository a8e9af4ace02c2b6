"""The one "latest write wins" rule: one row per point, one snapshot per index and instant.

Two collectors may write the same point; a reader keeps one row per ``(account, index_id,
time)``: the one with the latest ``collected_at``, and between rows collected at the same
instant the one with the larger ``value`` (so the answer never depends on file names or
the order files are listed). In SQL::

    QUALIFY row_number() OVER (PARTITION BY account, index_id, time
                               ORDER BY collected_at DESC, value DESC) = 1

Limits snapshots are kept per ``(account, id)``, the one collected last.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from searchkit.frames.counting import tie_key
from searchkit.history.accounts import canonical, usable
from searchkit.history.layout import KEY, LIMITS_SCHEMA
from searchkit.history.text_columns import codes, encoded_table, joint_codes

__all__ = [
    "Points",
    "drop_repeats",
    "latest",
    "latest_snapshots",
    "name_codes",
    "sorted_points",
    "stored_mask",
    "thin_snapshots",
    "tidy",
    "unique_points",
]


def latest_snapshots(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Keep each ``by`` key's snapshot collected last (rows in the order of collection)."""
    return frame.sort_values("collected_at", kind="stable").drop_duplicates(by, keep="last")


def thin_snapshots(table: pa.Table) -> pa.Table:
    """Drop limits rows equal to both neighbours of the same index (keep runs' ends)."""
    if table.num_rows < 3:
        return table
    frame = table.to_pandas()
    frame = frame.sort_values(["account", "id", "collected_at"], kind="stable")
    values = [c for c in frame.columns if c != "collected_at"]
    digest = pd.util.hash_pandas_object(frame[values], index=False).to_numpy()
    same_prev = np.append(False, digest[1:] == digest[:-1])
    same_next = np.append(digest[:-1] == digest[1:], False)
    kept = frame[~(same_prev & same_next)]
    return pa.Table.from_pandas(kept, schema=LIMITS_SCHEMA, preserve_index=False)


def stored_mask(new: pa.Table, stored: pa.Table) -> np.ndarray:
    """Return, for each row of ``new``, whether its (account, index_id, time) is stored."""
    if stored.num_rows == 0:
        return np.zeros(new.num_rows, dtype=bool)
    accounts = joint_codes([new["account"], stored["account"]])
    ids = joint_codes([new["index_id"], stored["index_id"]])
    times = [_int64(t["time"]) for t in (new, stored)]
    wanted = pd.MultiIndex.from_arrays([accounts[0], ids[0], times[0]])
    have = pd.MultiIndex.from_arrays([accounts[1], ids[1], times[1]])
    return np.asarray(wanted.isin(have))


def _int64(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Instants (or any integers) as int64 NumPy values."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    return np.asarray(column.cast(pa.int64()).to_numpy())


def sorted_points(table: pa.Table) -> pa.Table:
    """Sort points as files store them: by account, index, then time.

    Text columns are sorted by their codes (text order): Arrow's own sort refuses
    dictionaries, and a take of codes copies no text.
    """
    table = encoded_table(table)
    keys = (_int64(table["time"]), codes(table["index_id"])[0], codes(table["account"])[0])
    if _in_order(*keys):
        return table  # sorted so already (compaction's latest() leaves it so)
    return table.take(pa.array(np.lexsort(keys)))


def _in_order(times: np.ndarray, ids: np.ndarray, accounts: np.ndarray) -> bool:
    """Whether rows are in (account, index, time) order (repeats allowed)."""
    if len(times) < 2:
        return True
    up = accounts[1:] > accounts[:-1]
    same = accounts[1:] == accounts[:-1]
    up |= same & (ids[1:] > ids[:-1])
    same &= ids[1:] == ids[:-1]
    return bool(np.all(up | (same & (times[1:] >= times[:-1]))))


def latest(table: pa.Table) -> pa.Table:
    """Keep one row per (account, index_id, time): the one collected last (larger value on
    a tie)."""
    if table.num_rows < 2:
        return table
    table = canonical(table)  # one index, one account, whatever older writers keyed it by
    table = encoded_table(table)  # one dictionary per text column: a take copies codes only
    times = _int64(table["time"])
    ids, accounts = codes(table["index_id"])[0], codes(table["account"])[0]
    # Files a collector wrote hold each key once, sorted, and later files later points:
    # sorted by (account, index) alone (a stable sort: runs of sorted files merge), the
    # rows are then in key order with no key twice, and nothing is dropped.
    key = accounts.astype(np.int64) * (int(ids.max(initial=0)) + 2) + ids
    order = np.argsort(key, kind="stable")
    if _strictly_after(times[order], key[order]):
        return table.take(pa.array(order))
    keys = [_nan_first(table["value"]), _int64(table["collected_at"]), times, ids, accounts]
    return drop_repeats(table.take(pa.array(np.lexsort(keys))))


def _strictly_after(times: np.ndarray, key: np.ndarray) -> bool:
    """Whether each row of a key (rows sorted by key) comes strictly after the one before."""
    same = key[1:] == key[:-1]
    return bool(np.all(~same | (times[1:] > times[:-1])))


def drop_repeats(order: pa.Table) -> pa.Table:
    """Given rows sorted by key then collected_at, keep the last row of each key."""
    same = np.ones(order.num_rows - 1, dtype=bool)
    for column in KEY:
        values = order[column]
        array = _int64(values) if pa.types.is_timestamp(values.type) else codes(values)[0]
        same &= array[1:] == array[:-1]
    if not same.any():
        return order
    keep = np.append(~same, True)
    return order.filter(pa.array(keep))


@dataclass(frozen=True)
class Points:
    """Stored points as arrays, one per (account, index_id, time), sorted by account,
    index, then time: what :func:`tidy` makes a frame of, without a text per row."""

    ids: list[str]  # index ids, in the order of the points
    names: list[Any]  # per id: its name at its newest point (or the name it was given)
    codes: np.ndarray  # [n] integer, the position of each point's index in ids
    times: np.ndarray  # [n] epoch nanoseconds (UTC)
    values: np.ndarray  # [n] float64
    accounts: list[str]  # account keys, in the order of the points
    account_codes: np.ndarray  # [n] integer, the position of each point's account

    def __repr__(self) -> str:
        # A summary: the dataclass's own repr lists every id and name (1,000 at 1,000
        # indexes) and three arrays.
        if not len(self.times):
            return "Points(0 points)"
        span = pd.to_datetime([self.times.min(), self.times.max()], utc=True)
        return (
            f"Points({len(self.times):,} points of {len(self.ids):,} indexes in "
            f"{len(self.accounts):,} account(s), {span[0]:%Y-%m-%d %H:%M} .. "
            f"{span[1]:%Y-%m-%d %H:%M} UTC)"
        )


def unique_points(
    table: pa.Table,
    rename: Mapping[str, str] | None = None,
    full: Callable[[], pa.Table] | None = None,
) -> Points:
    """Deduplicate and sort stored points (see the module's rule) into :class:`Points`.

    ``table`` holds the throughput columns (``collected_at`` optional); ``rename`` maps
    index ids to the names to show (their newest limits snapshot's) instead of the name at
    their newest point. A null text reads as the empty text. ``full``, when given, returns
    the same rows with ``collected_at``: a ``table`` without it is then replaced by
    ``full()`` only where the rule needs it (accounts to relabel, rows to sort or drop).
    """
    if table.num_rows == 0:
        none = np.zeros(0, dtype=np.int64)
        return Points([], [], none, none, np.zeros(0), [], none)
    if "collected_at" in table.column_names:
        full = None  # nothing to read again
    elif full is not None and not _one_usable_account(table):
        return unique_points(full(), rename)
    table = canonical(table)  # one index, one account, whatever older writers keyed it by
    a_codes, account_texts = codes(table["account"])
    i_codes, id_texts = codes(table["index_id"])
    times = _int64(table["time"])
    order, t_sorted = np.arange(len(times)), times
    # Files store points sorted and unique per key: then nothing to sort or drop.
    one_account = len(account_texts) == 1 and a_codes.min() >= 0
    moved = not _strictly_sorted(None if one_account else a_codes, i_codes, times)
    if moved:
        keys = [times, i_codes, a_codes]
        order, a_codes, i_codes, t_sorted = _key_order(
            table, keys, "collected_at" in table.column_names
        )
        same = (
            (a_codes[1:] == a_codes[:-1])
            & (i_codes[1:] == i_codes[:-1])
            & (t_sorted[1:] == t_sorted[:-1])
        )
        if full is not None and same.any():
            # A point stored twice: which row wins needs collected_at. Points only out of
            # order (a day's collect files, each sorted, read one after another) do not:
            # sorted by key they are the rows the rule keeps, without reading them again.
            return unique_points(full(), rename)
        keep = np.append(~same, True)
        order, a_codes, i_codes, t_sorted = (
            order[keep],
            a_codes[keep],
            i_codes[keep],
            t_sorted[keep],
        )
    value_column = table["value"].combine_chunks()
    if moved:
        value_column = value_column.take(pa.array(order))
    values = value_column.to_numpy(zero_copy_only=False).astype(np.float64)
    # A null text (code -1) reads as the empty text appended last.
    ids = np.asarray([*id_texts.to_pylist(), ""], dtype=object)
    # The name an index has at its newest point labels all of its points (or, when given,
    # its name in the newest limits snapshot). Only those few names become Python strings.
    last = np.append(i_codes[1:] != i_codes[:-1], True)
    last_codes = i_codes[last]
    last_names = table["name"].take(pa.array(order[last])).to_pylist()  # a few rows only
    rename = rename or {}
    latest_name = {
        int(c): rename.get(str(ids[c]), n) for c, n in zip(last_codes, last_names, strict=True)
    }
    used = list(dict.fromkeys(last_codes.tolist()))
    accounts = np.asarray([*account_texts.to_pylist(), ""], dtype=object)
    account_used = sorted(set(a_codes[last].tolist()))
    return Points(
        ids=ids[used].tolist(),
        names=[latest_name[c] for c in used],
        codes=_renumbered(i_codes, used, len(ids)),
        times=t_sorted,
        values=values,
        accounts=accounts[account_used].tolist(),
        account_codes=_renumbered(a_codes, account_used, len(accounts)),
    )


def _one_usable_account(table: pa.Table) -> bool:
    """Whether every row holds the same usable account (canonical() leaves it as is)."""
    account_codes, labels = codes(table["account"])
    return len(labels) == 1 and account_codes.min() >= 0 and usable(labels[0].as_py())


def _renumbered(rows: np.ndarray, used: list[int], count: int) -> np.ndarray:
    """Each row's code as its position in ``used`` (codes of ``count``, -1 the last)."""
    if used == list(range(len(used))) and (not len(rows) or rows.min() >= 0):
        return rows  # numbered so already
    position = np.full(count, -1, dtype=np.int64)
    position[used] = np.arange(len(used))
    renumbered: np.ndarray = position[rows]
    return renumbered


def tidy(table: pa.Table, zone: dt.tzinfo, rename: dict[str, str] | None = None) -> pd.DataFrame:
    """Deduplicate and sort stored points into the throughput frame's shape."""
    if table.num_rows == 0:
        none = pd.Categorical([], categories=pd.Index([], dtype="str"))  # as when not empty
        empty = pd.DataFrame(
            {
                "index_id": none,
                "name": none,
                "time": pd.DatetimeIndex([], tz=zone).as_unit("ns"),
                "value": np.array([], dtype=np.float64),
                "account": none,
            }
        )
        return empty
    points = unique_points(table, rename)
    id_cat = pd.Categorical.from_codes(points.codes, categories=pd.Index(points.ids))
    name_of_id, name_categories = name_codes(points)
    name_cat = pd.Categorical.from_codes(name_of_id[points.codes], categories=name_categories)
    account_cat = pd.Categorical.from_codes(
        points.account_codes, categories=pd.Index(points.accounts)
    )
    frame = pd.DataFrame(
        {
            "index_id": id_cat,
            "name": name_cat,
            "time": pd.DatetimeIndex(points.times.view("datetime64[ns]"), tz="UTC").tz_convert(
                zone
            ),
            "value": points.values,
            "account": account_cat,
        }
    )
    return frame


def name_codes(points: Points) -> tuple[np.ndarray, pd.Index]:
    """Each index's name (:attr:`Points.names`) as a code into the distinct names, in the
    order they first come: how :func:`tidy` labels every point of an index."""
    categories = pd.Index(list(dict.fromkeys(points.names)))
    return categories.get_indexer(points.names), categories


def _strictly_sorted(a_codes: np.ndarray | None, i_codes: np.ndarray, times: np.ndarray) -> bool:
    """Whether rows are in strictly increasing (account, index, time) order: no repeats
    (``a_codes`` None: one account throughout)."""
    if len(times) < 2:
        return True
    i_up, i_same = i_codes[1:] > i_codes[:-1], i_codes[1:] == i_codes[:-1]
    within = i_up | (i_same & (times[1:] > times[:-1]))
    if a_codes is None:
        return bool(np.all(within))
    a_up = a_codes[1:] > a_codes[:-1]
    return bool(np.all(a_up | ((a_codes[1:] == a_codes[:-1]) & within)))


def _key_order(
    table: pa.Table, keys: list[np.ndarray], has_collected: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows sorted by (account, index, time), sorted so the last row of a key wins."""
    times = keys[0]
    if has_collected:
        # Least significant first: value, then collected_at; the last row of a key wins.
        keys = [
            _nan_first(table["value"]),
            _int64(table["collected_at"]),
            *keys,
        ]
    order = np.lexsort(keys)
    return order, keys[-1][order], keys[-2][order], times[order]


def _nan_first(values: pa.ChunkedArray) -> np.ndarray:
    """Values as a sort key where a missing value loses to any number (as SQL's DESC)."""
    array = values.combine_chunks().to_numpy(zero_copy_only=False).astype(np.float64)
    return tie_key(array)
