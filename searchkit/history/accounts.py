"""One account key per index, whatever the service omits.

The service may send ``customer_id`` in one list and omit it in the next, or never send it;
two collectors of one account may log in with different usernames. A key taken from
whatever each list happens to hold would store every point twice. So a collect keys an
index, in this order, by:

1. the account it is already stored under (the newest limits snapshot that holds it), so
   a key once written never changes;
2. its ``customer_id``;
3. the ``customer_id`` another index of the same list carries (one list is one account);
4. the collector's username (the configured identity).

Readers do not trust the key alone either: a store written before this rule, or by two
collectors racing on a fresh store, may hold one index under two keys (or none: a null or
``"nan"`` account). :func:`canonical` relabels every row of an index with the account of
its newest row that has one, so each point reads once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from searchkit.history.text_columns import TEXT, codes

__all__ = ["canonical", "keys_for", "usable"]

# What older writers stored when they had no account: null, "", or a stringified NaN/None.
_NO_ACCOUNT = ("", "nan", "None", "NaN", "<NA>")


def usable(account: object) -> bool:
    """Whether ``account`` is a real key (not empty, not a stringified missing value)."""
    return isinstance(account, str) and account.strip() not in _NO_ACCOUNT


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def keys_for(items: Sequence[Any], username: str, stored: Mapping[str, str]) -> list[str]:
    """Return the account key of each index of one list (see the module's order)."""
    listed = next(
        (str(c) for c in (_field(i, "customer_id") for i in items) if usable(c)),
        None,
    )
    keys = []
    for item in items:
        own = _field(item, "customer_id")
        before = stored.get(str(_field(item, "id")))
        if usable(before):
            keys.append(str(before))
        elif usable(own):
            keys.append(str(own))
        else:
            keys.append(listed or username)
    return keys


def canonical(table: pa.Table) -> pa.Table:
    """Relabel each row's ``account`` with that of its index's newest row that has one.

    Needs the ``account`` and ``index_id`` columns (``id`` for limits); ``collected_at``
    decides which row is newest (without it, the last row). Rows of an index that has no
    usable account anywhere keep what they hold.
    """
    id_column = "index_id" if "index_id" in table.column_names else "id"
    if table.num_rows == 0 or "account" not in table.column_names:
        return table
    account_codes, labels = codes(table["account"])
    if len(labels) == 1 and account_codes.min() >= 0 and usable(labels[0].as_py()):
        return table  # one account throughout (the usual store): nothing to relabel
    # Only the distinct labels are looked at; a null account (code -1) is not usable.
    usable_label = np.array([*(usable(label) for label in labels.to_pylist()), False])
    good = usable_label[account_codes]
    id_codes, id_texts = codes(table[id_column])
    if "collected_at" in table.column_names:
        stamps = table["collected_at"].combine_chunks().cast(pa.int64())
        when = pc.fill_null(stamps, 0).to_numpy()
    else:
        when = np.arange(table.num_rows)
    # Per index the last row in (has an account, collected_at) order is its newest usable.
    order = np.lexsort((when, good, id_codes))
    ends = order[np.append(id_codes[order][1:] != id_codes[order][:-1], True)]
    source = np.arange(table.num_rows)
    chosen = np.full(len(id_texts) + 1, -1, dtype=np.int64)  # the last slot: a null id
    chosen[id_codes[ends]] = np.where(good[ends], ends, -1)
    pick = chosen[id_codes]
    pick = np.where(pick >= 0, pick, source)
    if np.array_equal(pick, source):
        return table
    # Codes are taken, not texts: the relabelled column is a dictionary of the same labels
    # (a null account that stays reads as the empty text, as it always did).
    relabelled_codes = np.append(np.arange(len(labels)), len(labels))[account_codes[pick]]
    relabelled = pa.DictionaryArray.from_arrays(
        pa.array(relabelled_codes.astype(np.int32)), pa.concat_arrays([labels, pa.array([""])])
    )
    position = table.column_names.index("account")
    return table.set_column(position, pa.field("account", TEXT), relabelled)
