"""A day's sums show what they hold, not their arrays (the README's hist.sums(...) cell)."""

from __future__ import annotations

import numpy as np

from searchkit.history.rollups import DaySums


def day(rows: int, bins: int, *, invalid: int = 0) -> DaySums:
    return DaySums(
        day="2026-11-13",
        ids=[f"id-{i}" for i in range(rows)],
        names=[f"index-{i}" for i in range(rows)],
        value_sums=np.full((rows, bins), 0.5),
        points=np.full((rows, bins), 15, dtype=np.int64),
        invalid=None,
        day_invalid=np.array([invalid] + [0] * (rows - 1), dtype=np.int64),
        seconds=np.full(rows, 60.0),
        last_point=np.zeros(rows, dtype=np.int64),
    )


def test_a_day_s_sums_repr_says_the_day_the_indexes_the_detail_and_the_points():
    assert repr(day(6, 96)) == "DaySums(day='2026-11-13', 6 indexes by quarter-hour, 8,640 points)"
    assert repr(day(1, 24)) == "DaySums(day='2026-11-13', 1 index by hour, 360 points)"
    assert repr(day(1_000, 1, invalid=3)) == (
        "DaySums(day='2026-11-13', 1,000 indexes by day, 15,000 points, 3 invalid)"
    )
