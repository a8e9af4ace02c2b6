"""The analytics' reader of a History asks the History for each day's sums once, however the
ranges it is asked overlap (a forecast asks the days up to its instant, then its window)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from searchkit.analytics.days import PointsReader
from searchkit.history.layout import THROUGHPUT_SCHEMA, WRITE_OPTIONS
from searchkit.history.usage_history import History

DAYS = [f"2026-11-0{n}" for n in range(1, 7)]  # six stored days, each with its rollup


def write_store(root) -> None:
    """Two indexes, a point every ten minutes, on each of DAYS."""
    for number, day in enumerate(DAYS):
        start = pd.Timestamp(day, tz="UTC").value
        times = start + np.arange(144, dtype=np.int64) * 600_000_000_000
        table = pa.table(
            {
                "account": ["acct"] * 288,
                "index_id": ["a"] * 144 + ["b"] * 144,
                "name": ["alpha"] * 144 + ["beta"] * 144,
                "time": np.tile(times, 2),
                "value": np.arange(288, dtype=np.float64) + number,
                "collected_at": np.full(288, start + 86_400_000_000_000),
            },
            schema=THROUGHPUT_SCHEMA,
        )
        folder = root / "throughput" / f"day={day}"
        folder.mkdir(parents=True)
        pq.write_table(table, folder / f"part-{start}-x.parquet", **WRITE_OPTIONS)


class Asked(History):
    """A History that notes the day ranges its sums are asked for."""

    def __init__(self, root) -> None:
        super().__init__(root)
        self.asked: list[tuple[str, str]] = []

    def sums(self, first, last, *, detail="day"):
        self.asked.append((first, last))
        return super().sums(first, last, detail=detail)


def test_each_day_s_sums_are_asked_once_however_the_ranges_overlap(tmp_path):
    write_store(tmp_path)
    assert History(tmp_path).refresh_rollups(DAYS) == 6
    source = Asked(tmp_path)
    reader = PointsReader(source)

    first = reader.sums("2026-11-01", "2026-11-04")
    # The forecast's window a day past the days read to find its instant (the 7th is not
    # stored): only the days not asked yet are read. It read all five again before.
    later = reader.sums("2026-11-03", "2026-11-07")
    earlier = reader.sums("2026-10-30", "2026-11-02")
    inside = reader.sums("2026-11-02", "2026-11-05")

    assert source.asked == [
        ("2026-11-01", "2026-11-04"),
        ("2026-11-05", "2026-11-07"),
        ("2026-10-30", "2026-10-31"),
    ]
    assert list(first) == DAYS[:4]
    assert list(later) == DAYS[2:]
    assert list(earlier) == DAYS[:2]
    assert list(inside) == DAYS[1:5]
    # What each gives is what a fresh read of the range gives.
    fresh = History(tmp_path).sums("2026-11-03", "2026-11-07", detail="hour")
    for day, sums in fresh.items():
        assert later[day].ids == sums.ids == ["a", "b"]
        np.testing.assert_array_equal(later[day].value_sums, sums.value_sums)
        np.testing.assert_array_equal(later[day].points, sums.points)
    assert later["2026-11-06"].value_sums.shape == (2, 24)
    assert float(later["2026-11-06"].value_sums.sum()) == float(np.arange(288).sum() + 5 * 288)
