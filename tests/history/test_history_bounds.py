"""Row groups a read needs: the walk over the footer's statistics chooses exactly the groups
pyarrow's ``ParquetFileFragment.subset`` chooses for the same condition, and the rows kept
are the condition's.

The file is written as collect writes (times in microseconds, texts from dictionaries),
with 10-row groups: index ``a``'s minutes 0-9 are group 0, ``b``'s group 1, and so on.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from searchkit.history.bounds import Bounds
from searchkit.history.layout import THROUGHPUT_SCHEMA, WRITE_OPTIONS, stored

MINUTE = 60_000_000_000
T0 = 1_763_596_800_000_000_000  # 2026-11-20 00:00 UTC
IDS = ["a", "b", "c", "d"]


def points(ids: list[str] = IDS, minutes: int = 10) -> pa.Table:
    rows = [(i, m) for i in ids for m in range(minutes)]
    return pa.table(
        {
            "account": ["acct"] * len(rows),
            "index_id": [i for i, _ in rows],
            "name": [f"name-{i}" for i, _ in rows],
            "time": pa.array([T0 + m * MINUTE for _, m in rows], pa.timestamp("ns", tz="UTC")),
            "value": [float(m) for _, m in rows],
            "collected_at": pa.array([T0 + 10**12] * len(rows), pa.timestamp("ns", tz="UTC")),
        }
    ).cast(THROUGHPUT_SCHEMA)


def written(path, table: pa.Table, **options) -> ds.ParquetFileFragment:
    pq.write_table(stored(table), path, **{**WRITE_OPTIONS, "row_group_size": 10, **options})
    fragment = ds.ParquetFileFormat().make_fragment(str(path), pafs.LocalFileSystem())
    fragment.ensure_complete_metadata()
    return fragment


def walked(fragment: ds.ParquetFileFragment, bounds: Bounds) -> list[int]:
    return bounds.row_groups(fragment.metadata, fragment.metadata.schema.to_arrow_schema())


def pyarrows(fragment: ds.ParquetFileFragment, bounds: Bounds) -> list[int]:
    return [group.id for group in fragment.subset(bounds.expression()).row_groups]


def times(low: int | None, high: int | None) -> Bounds:
    low = None if low is None else T0 + low * MINUTE
    high = None if high is None else T0 + high * MINUTE
    return Bounds(ranges=(("time", low, high),))


@pytest.mark.parametrize(
    ("bounds", "groups"),
    [
        (Bounds(texts=(("index_id", ("b",)),)), [1]),
        (Bounds(texts=(("index_id", ("a", "d")),)), [0, 3]),
        (Bounds(texts=(("index_id", ("bb", "zz")),)), []),  # between and past the ids
        (Bounds(texts=(("index_id", ()),)), []),
        (Bounds(texts=(("name", ("name-c",)),)), [2]),
        (Bounds.of(texts=[("name", ["name-c", "name-a"])]), [0, 2]),
        # every group holds minutes 0-9: a range inside, at the edges, or outside them
        (times(3, 4), [0, 1, 2, 3]),
        (times(9, None), [0, 1, 2, 3]),  # the last minute, inclusive
        (times(10, None), []),
        (times(None, 0), []),  # end is exclusive
        (times(None, 1), [0, 1, 2, 3]),
        (times(-5, 0), []),
        (
            Bounds(ranges=(("time", T0, T0 + MINUTE),), texts=(("index_id", ("c",)),)),
            [2],
        ),
        (Bounds(ranges=(("collected_at", None, T0 + 10**12),)), []),
        (Bounds(ranges=(("collected_at", None, T0 + 10**12 + 1),)), [0, 1, 2, 3]),
    ],
)
def test_the_walk_chooses_the_row_groups_pyarrow_chooses(tmp_path, bounds, groups):
    fragment = written(tmp_path / "part.parquet", points())
    assert fragment.metadata.num_row_groups == 4
    assert walked(fragment, bounds) == groups
    assert pyarrows(fragment, bounds) == groups


def test_rows_kept_are_the_condition_s(tmp_path):
    written(tmp_path / "part.parquet", points())
    bounds = Bounds.of(
        ranges=[("time", T0 + 2 * MINUTE, T0 + 4 * MINUTE)], texts=[("index_id", ["d", "b"])]
    )
    rows = ds.dataset(tmp_path / "part.parquet").to_table(filter=bounds.expression())
    assert rows["index_id"].to_pylist() == ["b", "b", "d", "d"]
    assert rows["value"].to_pylist() == [2.0, 3.0, 2.0, 3.0]


def test_no_bounds_is_none_and_keeps_every_row():
    assert Bounds.of() is None
    assert Bounds.of(ranges=[("time", None, None)], texts=[("name", None)]) is None
    assert Bounds().expression().equals(ds.scalar(True))


def test_a_group_without_statistics_or_a_file_without_the_column_is_kept(tmp_path):
    bare = written(tmp_path / "bare.parquet", points(), write_statistics=False)
    assert walked(bare, Bounds(texts=(("index_id", ("b",)),))) == [0, 1, 2, 3]
    assert walked(bare, times(20, 30)) == [0, 1, 2, 3]
    older = written(tmp_path / "older.parquet", points().drop_columns(["name"]))
    assert walked(older, Bounds(texts=(("name", ("name-b",)),))) == [0, 1, 2, 3]
    assert walked(older, Bounds(texts=(("index_id", ("b",)),))) == [1]


def test_texts_past_ascii_are_ordered_as_parquet_orders_them(tmp_path):
    # Parquet compares texts as unsigned bytes (UTF-8): "z" < "é" < "日".
    fragment = written(tmp_path / "part.parquet", points(["z", "é", "日"]))
    for wanted, groups in (("é", [1]), ("日", [2]), ("z", [0]), ("ü", [])):
        bounds = Bounds(texts=(("index_id", (wanted,)),))
        assert walked(fragment, bounds) == groups == pyarrows(fragment, bounds), wanted
