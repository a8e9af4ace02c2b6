"""Stored points as arrays: the same points, order and names whatever the columns' types."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from searchkit.errors import ValidationError
from searchkit.history.dedupe import tidy, unique_points
from searchkit.history.layout import THROUGHPUT_SCHEMA
from searchkit.history.usage_history import History

UTC = pd.Timestamp(0, tz="UTC").tz


def as_dictionary(column: pa.ChunkedArray, labels: list[str]) -> pa.ChunkedArray:
    """A text column as chunks of dictionaries listing ``labels`` first, in that order."""
    chunks = []
    for chunk in column.chunks:
        texts = chunk.to_pylist()
        dictionary = [*labels, *sorted(set(texts) - set(labels))]
        codes = pa.array([dictionary.index(t) for t in texts], pa.int32())
        chunks.append(pa.DictionaryArray.from_arrays(codes, pa.array(dictionary)))
    return pa.chunked_array(chunks)


def messy_table() -> pa.Table:
    """Two accounts, three indexes, repeated keys, rows out of order, in three chunks."""
    rng = np.random.default_rng(4)
    rows = []
    for n in range(60):
        account = "acct-2" if n % 3 == 0 else "acct-1"
        index_id = ["id-a", "id-z", "id-m"][n % 3]  # acct-2 holds id-a: ids out of text order
        minute = int(rng.integers(0, 12))
        rows.append(
            {
                "account": account,
                "index_id": index_id,
                "name": f"name-{index_id}-{n % 2}",
                "time": pd.Timestamp("2026-11-20", tz="UTC") + pd.Timedelta(minutes=minute),
                "value": float(rng.integers(0, 5)),
                "collected_at": pd.Timestamp("2026-11-21", tz="UTC")
                + pd.Timedelta(seconds=int(rng.integers(0, 3))),
            }
        )
    table = pa.Table.from_pylist(rows, schema=THROUGHPUT_SCHEMA)
    return pa.concat_tables([table.slice(0, 20), table.slice(20, 25), table.slice(45)])


def dictionary_typed(table: pa.Table) -> pa.Table:
    for name, labels in (("account", ["acct-2"]), ("index_id", ["id-m", "unused", "id-a"])):
        position = table.column_names.index(name)
        column = as_dictionary(table[name], labels)
        table = table.set_column(position, name, column)
    name_labels = sorted(set(table["name"].to_pylist()), reverse=True)
    position = table.column_names.index("name")
    return table.set_column(position, "name", as_dictionary(table["name"], name_labels))


def test_dictionary_typed_points_dedupe_and_order_as_text_ones():
    plain, typed = messy_table(), dictionary_typed(messy_table())
    a, b = unique_points(plain), unique_points(typed)
    assert a.ids == b.ids == ["id-m", "id-z", "id-a"]
    assert a.accounts == b.accounts == ["acct-1", "acct-2"]
    assert a.names == b.names
    for field in ("codes", "times", "values", "account_codes"):
        assert getattr(a, field).tolist() == getattr(b, field).tolist()
    pd.testing.assert_frame_equal(tidy(plain, UTC), tidy(typed, UTC))
    # The rule, the slow way: sorted by key then collected_at and value, the last row kept.
    frame = plain.to_pandas().astype({"account": str, "index_id": str})
    frame = frame.sort_values(
        ["account", "index_id", "time", "collected_at", "value"], kind="stable"
    )
    frame = frame.drop_duplicates(["account", "index_id", "time"], keep="last")
    rows = list(
        zip(
            [a.accounts[c] for c in a.account_codes],
            [a.ids[c] for c in a.codes],
            a.times.tolist(),
            a.values.tolist(),
            strict=True,
        )
    )
    assert rows == list(
        zip(
            frame["account"],
            frame["index_id"],
            frame["time"].array.asi8.tolist(),
            frame["value"],
            strict=True,
        )
    )
    assert len(a.times) == len(tidy(plain, UTC))


def test_the_kept_point_is_the_latest_collected_then_the_larger():
    times = [pd.Timestamp("2026-11-20 00:01", tz="UTC")] * 4
    collected = [
        pd.Timestamp(t, tz="UTC")
        for t in ("2026-11-21 00:00", "2026-11-21 00:05", "2026-11-21 00:05", "2026-11-21 00:01")
    ]
    table = pa.Table.from_pydict(
        {
            "account": ["a"] * 4,
            "index_id": ["i"] * 4,
            "name": ["n"] * 4,
            "time": times,
            "value": [9.0, 2.0, 3.0, 8.0],
            "collected_at": collected,
        },
        schema=THROUGHPUT_SCHEMA,
    )
    assert unique_points(dictionary_typed(table)).values.tolist() == [3.0]
    assert unique_points(table).values.tolist() == [3.0]


def test_points_of_an_empty_span_are_empty_and_a_reversed_span_is_refused(tmp_path):
    hist = History(tmp_path / "h")
    points = hist.points(start="2026-11-20", end="2026-11-21")
    assert (points.ids, points.codes.tolist(), points.values.tolist()) == ([], [], [])
    message = "end (2026-11-20 00:00:00+00:00) is before start (2026-11-21 00:00:00+00:00)"
    with pytest.raises(ValidationError, match=re.escape(message)):
        hist.points(start="2026-11-21", end="2026-11-20")


def test_points_repr_is_a_summary_not_every_id_and_array():
    points = unique_points(messy_table())  # 26 distinct (account, index, minute) keys
    assert repr(points) == (
        "Points(26 points of 3 indexes in 2 account(s), 2026-11-20 00:00 .. 2026-11-20 00:11 UTC)"
    )
    assert repr(unique_points(messy_table().slice(0, 0))) == "Points(0 points)"


def points_tuple(points):
    return (
        points.ids,
        points.names,
        points.codes.tolist(),
        points.times.tolist(),
        points.values.tolist(),
        points.accounts,
        points.account_codes.tolist(),
    )


def test_points_read_without_collected_at_read_it_again_only_where_the_rule_needs_it():
    at = pd.Timestamp("2026-11-20 00:01", tz="UTC")
    stamp = pd.Timestamp("2026-11-21", tz="UTC")

    def table(accounts, minutes, values, collected):
        return pa.Table.from_pydict(
            {
                "account": accounts,
                "index_id": ["i"] * len(values),
                "name": ["n"] * len(values),
                "time": [at + pd.Timedelta(minutes=m) for m in minutes],
                "value": values,
                "collected_at": [stamp + pd.Timedelta(minutes=c) for c in collected],
            },
            schema=THROUGHPUT_SCHEMA,
        )

    calls = []

    def lean_and_full(full):
        def again():
            calls.append(1)
            return full

        return unique_points(full.drop_columns(["collected_at"]), full=again)

    # One account, sorted and unique (as files are written): collected_at is not needed.
    steady = table(["a"] * 3, [0, 1, 2], [1.0, 2.0, 3.0], [0, 0, 0])
    assert points_tuple(lean_and_full(steady)) == points_tuple(unique_points(steady))
    assert calls == []
    # Out of order but unique (a day's collect files, each sorted, read one after another:
    # minutes 2-3, then 0-1): sorted by key, with no read of collected_at.
    files = table(["a"] * 4, [2, 3, 0, 1], [3.0, 4.0, 1.0, 2.0], [9, 9, 5, 5])
    points = lean_and_full(files)
    assert points.values.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert points_tuple(points) == points_tuple(unique_points(files))
    assert calls == []
    # A repeated minute: the later collected 2.0 wins over the larger 9.0.
    repeated = table(["a"] * 2, [0, 0], [2.0, 9.0], [5, 1])
    assert lean_and_full(repeated).values.tolist() == [2.0]
    assert calls == [1]
    # Two accounts: the newest collected row's ("a"), not the last row's, labels the index.
    accounts = table(["a", "b"], [0, 1], [1.0, 2.0], [9, 0])
    points = lean_and_full(accounts)
    assert (points.accounts, points.account_codes.tolist()) == (["a"], [0, 0])
    assert points_tuple(points) == points_tuple(unique_points(accounts))
    assert calls == [1, 1]
