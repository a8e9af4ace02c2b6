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

import numpy as np
import pandas as pd
import pyarrow as pa

from searchkit.history.accounts import canonical
from searchkit.history.layout import KEY, LIMITS_SCHEMA
from searchkit.history.texts import codes, encoded_table, joint_codes

__all__ = [
    "drop_repeats",
    "latest",
    "latest_snapshots",
    "one_per_instant",
    "sorted_points",
    "stored_mask",
    "thin_snapshots",
    "tidy",
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
    order = np.lexsort(
        (_int64(table["time"]), codes(table["index_id"])[0], codes(table["account"])[0])
    )
    return table.take(pa.array(order))


def latest(table: pa.Table) -> pa.Table:
    """Keep one row per (account, index_id, time): the one collected last (larger value on
    a tie)."""
    if table.num_rows < 2:
        return table
    table = canonical(table)  # one index, one account, whatever older writers keyed it by
    table = encoded_table(table)  # one dictionary per text column: a take copies codes only
    keys = [
        _nan_first(table["value"]),
        _int64(table["collected_at"]),
        _int64(table["time"]),
        codes(table["index_id"])[0],
        codes(table["account"])[0],
    ]
    order = table.take(pa.array(np.lexsort(keys)))
    return drop_repeats(order)


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
    table = canonical(table)  # one index, one account, whatever older writers keyed it by
    account_codes, account_texts = codes(table["account"])
    id_codes, id_texts = codes(table["index_id"])
    times = _int64(table["time"])
    has_collected = "collected_at" in table.column_names
    keys = [times, id_codes, account_codes]
    if _strictly_sorted(keys[2], keys[1], times):
        # Files store points sorted and unique per key: nothing to sort or drop.
        order = np.arange(len(times))
        a_codes, i_codes, t_sorted = keys[2], keys[1], times
    else:
        order, a_codes, i_codes, t_sorted = _key_order(table, keys, has_collected)
    same = (
        (a_codes[1:] == a_codes[:-1])
        & (i_codes[1:] == i_codes[:-1])
        & (t_sorted[1:] == t_sorted[:-1])
    )
    if same.any():
        keep = np.append(~same, True)
        order, a_codes, i_codes, t_sorted = (
            order[keep],
            a_codes[keep],
            i_codes[keep],
            t_sorted[keep],
        )
    values = table["value"].combine_chunks().take(pa.array(order)).to_numpy(zero_copy_only=False)
    # A null text (code -1) reads as the empty text appended last.
    ids = np.asarray([*id_texts.to_pylist(), ""], dtype=object)
    # The name an index has at its newest point labels all of its points (or, when given,
    # its name in the newest limits snapshot). Only those few names become Python strings.
    last = np.append(i_codes[1:] != i_codes[:-1], True)
    last_codes = i_codes[last]
    name_codes, name_texts = codes(table["name"])
    picked = name_codes[order[last]]
    last_names = name_texts.take(pa.array(picked, mask=picked < 0)).to_pylist()
    rename = rename or {}
    latest_name = {
        int(c): rename.get(str(ids[c]), n) for c, n in zip(last_codes, last_names, strict=True)
    }
    used = list(dict.fromkeys(last_codes.tolist()))
    position = np.full(len(ids), -1, dtype=np.int64)
    position[used] = np.arange(len(used))
    id_codes = position[i_codes]
    id_cat = pd.Categorical.from_codes(id_codes, categories=pd.Index(ids[used].tolist()))
    name_values = [latest_name[c] for c in used]
    name_categories = list(dict.fromkeys(name_values))
    name_of_id = pd.Index(name_categories).get_indexer(name_values)
    name_cat = pd.Categorical.from_codes(name_of_id[id_codes], categories=pd.Index(name_categories))
    accounts = np.asarray([*account_texts.to_pylist(), ""], dtype=object)
    account_used = sorted(set(a_codes[last].tolist()))
    account_position = np.full(len(accounts), -1, dtype=np.int64)
    account_position[account_used] = np.arange(len(account_used))
    account_cat = pd.Categorical.from_codes(
        account_position[a_codes], categories=pd.Index(accounts[account_used].tolist())
    )
    frame = pd.DataFrame(
        {
            "index_id": id_cat,
            "name": name_cat,
            "time": pd.DatetimeIndex(t_sorted.view("datetime64[ns]"), tz="UTC").tz_convert(zone),
            "value": values.astype(np.float64),
            "account": account_cat,
        }
    )
    return frame


def _strictly_sorted(a_codes: np.ndarray, i_codes: np.ndarray, times: np.ndarray) -> bool:
    """Whether rows are in strictly increasing (account, index, time) order: no repeats."""
    if len(times) < 2:
        return True
    a_up, i_up = a_codes[1:] > a_codes[:-1], i_codes[1:] > i_codes[:-1]
    a_same, i_same = a_codes[1:] == a_codes[:-1], i_codes[1:] == i_codes[:-1]
    t_up = times[1:] > times[:-1]
    return bool(np.all(a_up | (a_same & (i_up | (i_same & t_up)))))


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
    return np.where(np.isnan(array), -np.inf, array)


def one_per_instant(frame: pd.DataFrame) -> pd.DataFrame:
    """Keep one point per ``(index_id, time)`` of a throughput frame, the larger value.

    A list that repeats a minute is the same as two writes collected at the same instant,
    so it gets the same tie-break as the stored points (see the module's rule); the frame
    keeps its order and is returned as is when nothing repeats.
    """
    if len(frame) < 2:
        return frame
    ids = frame["index_id"]
    codes = (
        np.asarray(ids.array.codes)
        if isinstance(ids.dtype, pd.CategoricalDtype)
        else pd.factorize(ids)[0]
    )
    times = pd.DatetimeIndex(frame["time"]).asi8
    values = frame["value"].to_numpy(dtype=np.float64, na_value=np.nan)
    order = np.lexsort((np.where(np.isnan(values), -np.inf, values), times, codes))
    same = (codes[order][1:] == codes[order][:-1]) & (times[order][1:] == times[order][:-1])
    if not same.any():
        return frame
    keep = np.sort(order[np.append(~same, True)])
    return frame.iloc[keep].reset_index(drop=True)
