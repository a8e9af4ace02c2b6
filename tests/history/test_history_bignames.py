"""A huge index name is stored once per index and file, and memory follows the points, not
the name's length times the points (issue 18, item 4): a day of the emulator's points under a
1 MiB name, collected into real files and read back."""

from __future__ import annotations

import pathlib
import random
import string

import pandas as pd
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

import searchkit as sk
from searchkit.emulator import Emulator
from searchkit.history import reader
from searchkit.history.layout import Layout
from searchkit.history.usage_history import History
from tests.history.conftest import NOON, data_files

MIB = 1 << 20
# Random letters: zstd cannot shrink a copy per point, so the file sizes below show how many
# copies a file holds (one copy compresses to about 0.75 MiB).
NAME = "".join(random.Random(18).choices(string.ascii_letters, k=MIB))
TEXT = pa.dictionary(pa.int32(), pa.string())


@pytest.fixture
def day_of_points():
    """The emulator's first demo index with a day of points (1,440), named with 1 MiB."""
    with (
        Emulator(demo=True, seed=3, clock=NOON, window_minutes=1440) as emu,
        emu.client(max_retries=0) as client,
    ):
        raw = client.list_indexes().to_dicts()[:1]
        raw[0]["name"] = NAME
        yield emu, client, raw


def layout_of(root: pathlib.Path) -> Layout:
    return Layout(str(root), pafs.LocalFileSystem(), str(root))


def test_a_huge_name_is_stored_once_per_file(tmp_path, day_of_points):
    emu, client, raw = day_of_points
    hist = History(tmp_path / "h")

    summary = hist.collect(client, indexes=raw, now=emu.now())

    assert summary.new_points == 1440
    assert summary.points_by_index == {NAME: 1440}
    # Noon to noon: two UTC days; the closed one was compacted, and each got its rollup.
    points = data_files(tmp_path / "h")
    assert [p.parent.name for p in points] == ["day=2026-11-19", "day=2026-11-20"]
    assert len(data_files(tmp_path / "h", "rollups")) == 2
    written = [*points, *data_files(tmp_path / "h", "rollups")]
    written += data_files(tmp_path / "h", "limits")
    sizes = [path.stat().st_size for path in written]
    assert all(0.5 * MIB < size < MIB for size in sizes), sizes  # the name once in each


def test_a_huge_name_reads_back_as_one_dictionary_entry(tmp_path, day_of_points):
    emu, client, raw = day_of_points
    hist = History(tmp_path / "h")
    hist.collect(client, indexes=raw, now=emu.now())

    table = reader.read(layout_of(tmp_path / "h"), "throughput")

    assert table.num_rows == 1440
    assert table.get_total_buffer_size() < 8 * MIB  # a copy per point would be 1,440 MiB
    assert table.schema.field("name").type == TEXT
    assert table["name"].num_chunks == 1
    assert table["name"].chunk(0).dictionary.to_pylist() == [NAME]
    frame = hist.throughput()
    listed = sk.throughput_frame(raw)
    assert frame["name"].cat.categories.tolist() == [NAME]
    assert frame["time"].tolist() == listed["time"].dt.floor("us").tolist()  # as stored
    assert frame["value"].tolist() == listed["value"].tolist()
    assert frame.memory_usage(deep=True).sum() < 8 * MIB


def test_usage_of_a_huge_name_matches_the_list_from_points_and_from_the_rollup(
    tmp_path, day_of_points
):
    emu, client, raw = day_of_points
    hist = History(tmp_path / "h")
    hist.collect(client, indexes=raw, now=emu.now())
    days = [pd.Timestamp("2026-11-19", tz="UTC"), pd.Timestamp("2026-11-20", tz="UTC")]
    assert hist.rollups()["period"].tolist() == days

    usage = sk.usage_frame(hist)  # both days from their rollups (today's kept current)

    columns = ["name", "period", "operations", "points", "invalid", "limit"]
    expected = sk.usage_frame(raw)[columns]
    assert usage["points"].tolist() == [720, 720]
    pd.testing.assert_frame_equal(
        usage[columns].astype({"name": str}), expected.astype({"name": str})
    )


def test_other_engines_read_the_huge_name_as_plain_text_once_per_point(tmp_path, day_of_points):
    emu, client, raw = day_of_points
    # An hour of the day's points: each engine copies the name into every row it reads
    # (1,440 rows would be 1.4 GiB of text to read twice, to say the same).
    raw[0]["throughput_vector"] = raw[0]["throughput_vector"][-60:]
    hist = History(tmp_path / "h")
    hist.collect(client, indexes=raw, now=emu.now())
    [path] = data_files(tmp_path / "h")

    assert pq.read_schema(path).field("name").type == pa.string()
    assert pd.read_parquet(path)["name"].dtype == "str"
    duckdb = pytest.importorskip("duckdb")
    row = duckdb.execute(
        "SELECT count(*), count(DISTINCT name), min(name) = max(name), max(length(name)), "
        "typeof(any_value(name)) FROM read_parquet(?)",
        [f"{tmp_path}/h/throughput/*/*.parquet"],
    ).fetchone()
    assert row == (60, 1, True, MIB, "VARCHAR")


def write_plain(path: pathlib.Path, name: str, minutes: range, value: float) -> None:
    """A points file as searchkit wrote them before texts were dictionaries."""
    path.parent.mkdir(parents=True, exist_ok=True)
    times = [pd.Timestamp("2026-11-20 10:00", tz="UTC") + pd.Timedelta(minutes=m) for m in minutes]
    table = pa.table(
        {
            "account": pa.array(["acct"] * len(times), pa.string()),
            "index_id": pa.array(["id-1"] * len(times), pa.string()),
            "name": pa.array([name] * len(times), pa.string()),
            "time": pa.array([t.value for t in times], pa.timestamp("ns", tz="UTC")),
            "value": pa.array([value] * len(times), pa.float64()),
            "collected_at": pa.array([1] * len(times), pa.timestamp("ns", tz="UTC")),
        }
    )
    pq.write_table(table, path, coerce_timestamps="us", allow_truncated_timestamps=True)


def test_files_with_plain_text_columns_read_and_compact_beside_new_ones(tmp_path):
    day = tmp_path / "h/throughput/day=2026-11-20"
    write_plain(day / "part-1-old.parquet", "docs", range(0, 3), 1.0)
    hist = History(tmp_path / "h")
    layout = layout_of(tmp_path / "h")
    new = reader.read(layout, "throughput").take(pa.array([0, 1, 2]))
    later = pa.array(
        [pd.Timestamp("2026-11-20 10:03", tz="UTC").value + 60_000_000_000 * m for m in range(3)],
        pa.timestamp("ns", tz="UTC"),
    )
    layout.write("throughput", "2026-11-20", new.set_column(3, "time", later), 2)

    table = reader.read(layout, "throughput")
    assert table.schema.field("name").type == TEXT
    assert table["name"].chunk(0).dictionary.to_pylist() == ["docs"]
    assert hist.throughput()["time"].dt.strftime("%H:%M").tolist() == [
        "10:00",
        "10:01",
        "10:02",
        "10:03",
        "10:04",
        "10:05",
    ]
    assert hist.compact()["files_removed"] == 2

    (merged,) = data_files(tmp_path / "h")
    assert pq.read_schema(merged).field("name").type == pa.string()
    assert hist.throughput()["name"].astype(str).tolist() == ["docs"] * 6
