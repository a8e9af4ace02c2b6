"""Writing a day's rollup in one pass over its points (issue 26's "every figure within 10%"):
the points deduplicated once without a frame, their clean values and spacings computed once
and shared, no crossing lists built for a day without limits. The figures are those of the
points, value for value: what each shared step gives is checked against its own rule here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from searchkit.frames.counting import (
    binned,
    median_spacing,
    spacings,
    spacings_median,
)
from searchkit.history.crossings import crossing_columns
from searchkit.history.rollups import rollup
from searchkit.history.spacings import Spacings
from tests.history.test_open_day import DAY, MIDNIGHT, points

MINUTE = 60 * 10**9


def test_an_index_s_name_and_account_are_those_of_its_last_point():
    # "a" renamed at 00:02, its newest row in another account; "b" one point.
    table = pa.table(
        {
            "account": ["acct", "acct", "other", "acct"],
            "index_id": ["a", "a", "a", "b"],
            "name": ["old", "old", "new", "bee"],
            "time": pd.to_datetime(
                [MIDNIGHT, MIDNIGHT + MINUTE, MIDNIGHT + 2 * MINUTE, MIDNIGHT + 5 * MINUTE],
                utc=True,
            ),
            "value": [1.0, 2.0, 4.0, 8.0],
            "collected_at": pd.to_datetime([MIDNIGHT + 3 * MINUTE] * 4, utc=True),
        }
    )
    rows = rollup(table, DAY, "src").select(["account", "index_id", "name", "points"])
    # Rows in (account, index) order: every point of "a" is relabelled to its newest account.
    assert rows.to_pylist() == [
        {"account": "acct", "index_id": "b", "name": "bee", "points": 1},
        {"account": "other", "index_id": "a", "name": "new", "points": 3},
    ]


def test_a_day_without_limits_has_an_empty_crossing_list_per_index_never_a_null():
    ids = np.repeat(["id-0", "id-1", "id-2"], 4)
    times = MIDNIGHT + np.tile(np.arange(4), 3) * MINUTE
    table = points(ids, times, np.arange(12.0), 1)
    plain = rollup(table, DAY, "src")
    assert plain["crossing_limits"].to_pylist() == [[], [], []]
    assert plain["crossing_times"].to_pylist() == [[], [], []]
    assert plain["crossing_limits"].null_count == plain["crossing_times"].null_count == 0
    # Limits of indexes the day does not hold, or none, give the same rollup.
    assert rollup(table, DAY, "src", limits={"elsewhere": [5.0]}).equals(plain)
    assert rollup(table, DAY, "src", limits={"id-1": []}).equals(plain)
    limited = rollup(table, DAY, "src", limits={"id-1": [500.0, 10**9]})
    assert limited["crossing_limits"].to_pylist() == [[], [500.0, 1e9], []]
    # id-1 sums 4 + 5 = 9 by its second point: 9 x 60 s = 540 operations >= 500.
    assert limited["crossing_times"].to_pylist()[1] == [
        pd.Timestamp(MIDNIGHT + MINUTE, tz="UTC"),
        None,
    ]


def test_crossing_columns_without_limits_are_empty_lists_of_their_types():
    limits, times = crossing_columns(
        np.array([0, 0, 1]), np.array([1, 2, 3]), np.ones(3), np.array([60.0, 60.0]), {}
    )
    assert limits.type == pa.list_(pa.float64())
    assert times.type == pa.list_(pa.timestamp("ns", tz="UTC"))
    assert limits.to_pylist() == times.to_pylist() == [[], []]


def test_binned_counts_the_same_with_and_without_invalid_values():
    flat = np.array([0, 2, 2, 1, 2])
    clean = np.array([1.0, 2.0, 0.0, 4.0, 8.0])
    sums, valid, bad = binned(flat, clean, np.zeros(5, bool), 4)
    assert sums.tolist() == [1.0, 4.0, 10.0, 0.0]
    assert valid.tolist() == [1, 1, 3, 0] and bad.tolist() == [0, 0, 0, 0]
    assert valid.dtype == bad.dtype == np.int64
    sums, valid, bad = binned(flat, clean, np.array([False, False, True, False, False]), 4)
    assert sums.tolist() == [1.0, 4.0, 10.0, 0.0]
    assert valid.tolist() == [1, 1, 2, 0] and bad.tolist() == [0, 0, 1, 0]


def test_the_median_and_the_kept_spacings_from_one_pass_are_those_of_the_points():
    rng = np.random.default_rng(5)
    codes = np.sort(rng.integers(0, 30, 2_000))
    nanos = np.concatenate(
        [np.sort(rng.choice(10**12, size=n, replace=False)) for n in np.bincount(codes)]
    ).astype(np.int64)
    labels = pd.Index([f"id-{i}" for i in range(31)])  # the last has no point: NaT
    spaced = spacings(codes, nanos)
    pd.testing.assert_series_equal(
        spacings_median(*spaced, labels), median_spacing(codes, nanos, labels)
    )
    assert pd.isna(spacings_median(*spaced, labels).iloc[-1])
    one_pass = Spacings.of_spacings(*spaced, 31).columns(np.arange(31))
    again = Spacings.of_points(codes, nanos, 31).columns(np.arange(31))
    assert all(a.equals(b) for a, b in zip(one_pass, again, strict=True))


def test_a_rollup_read_to_be_extended_checks_its_seal_once(across_midnight, monkeypatch):
    # Each collect round reads today's rollup (and yesterday's) through current_rows: its
    # hours and its quarters are checked, the seal over every row only once.
    from searchkit.history import checks, rollups

    layout = across_midnight(compact=False)._layout
    closed = "2026-11-20"  # the day the collects closed (tests/history/conftest.py)
    source = rollups.sources(layout, closed, closed)[closed]
    digests = []
    sealed = checks.day_digests
    monkeypatch.setattr(checks, "day_digests", lambda table: digests.append(1) or sealed(table))
    rows = rollups.current_rows(layout, closed, source)
    assert rows is not None and rows.num_rows == 6
    assert len(digests) == 1
    # A day whose rows were changed is still refused: the seal is checked, once.
    assert not checks.changed_any(rows, [["quarter_value_sum", "quarter_points", "invalid"]])
    wrong = pa.array([int(rows["digest"][0].as_py()) + 1] * rows.num_rows, pa.int64())
    tampered = rows.set_column(rows.schema.get_field_index("digest"), "digest", wrong)
    assert checks.changed_any(tampered, [["hourly_value_sum", "hourly_points"]])
