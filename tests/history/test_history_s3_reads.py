"""How a read on S3 decodes the files it fetches whole (moto's server on loopback): from
memory, as each arrives, by two threads at most (as on a local disk), and never more than
the read's memory limit allows."""

from __future__ import annotations

import threading
import time

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from searchkit.errors import HistoryError
from searchkit.history import budget, reader
from searchkit.history.layout import THROUGHPUT_SCHEMA, WRITE_OPTIONS
from searchkit.history.usage_history import History

# moto and boto3 (dev dependencies) are imported by the ``s3_endpoint`` fixture, which
# skips without them: not while collecting, in every worker (tests/history/s3server.py).
from tests.history.s3server import new_bucket, options

DAYS = [f"2026-11-{day:02d}" for day in range(10, 18)]  # 8 days, a file each
PER_DAY = 24 * 3  # three indexes, a point an hour


def day_points(day: str) -> pa.Table:
    start = pd.Timestamp(day, tz="UTC").value
    times = start + np.arange(24, dtype=np.int64) * 3_600_000_000_000
    return pa.table(
        {
            "account": ["acct"] * PER_DAY,
            "index_id": np.repeat(["a", "b", "c"], 24).tolist(),
            "name": np.repeat(["alpha", "beta", "gamma"], 24).tolist(),
            "time": np.tile(times, 3),
            "value": np.arange(PER_DAY, dtype=np.float64),
            "collected_at": np.full(PER_DAY, start + 86_400_000_000_000),
        },
        schema=THROUGHPUT_SCHEMA,
    )


@pytest.fixture
def on_s3(s3_endpoint, request) -> History:
    """A history of 8 days of points on S3, a file a day (small: each fetched whole)."""
    _, name = new_bucket(s3_endpoint, request.node.name)
    fs = pafs.S3FileSystem(**options(s3_endpoint))
    for day in DAYS:
        path = f"{name}/usage/throughput/day={day}/part-1-{day}.parquet"
        pq.write_table(day_points(day), path, filesystem=fs, **WRITE_OPTIONS)
    return History(f"s3://{name}/usage", storage_options=options(s3_endpoint))


def test_files_fetched_whole_are_decoded_by_two_threads_at_most(on_s3, monkeypatch):
    # 32 threads fetch (each waits for an answer); decoding from memory waits for nothing,
    # and 32 threads decoding at once on a small machine took up to twice the CPU (bench/s3.py
    # on the year's rollups): the decoders are as many as on a local disk.
    decoding, most = 0, 0
    lock = threading.Lock()
    decode = reader.read_planned

    def counted(*args, **kwargs):
        nonlocal decoding, most
        with lock:
            decoding += 1
            most = max(most, decoding)
        try:
            time.sleep(0.05)  # long enough for any other decoder to start meanwhile
            return decode(*args, **kwargs)
        finally:
            with lock:
                decoding -= 1

    monkeypatch.setattr(reader, "read_planned", counted)
    points = on_s3.throughput()

    assert most == 2
    assert len(points) == len(DAYS) * PER_DAY
    stored = pa.concat_tables([day_points(day) for day in DAYS]).to_pandas()
    expected = stored.sort_values(["index_id", "time"], kind="stable")
    assert points["index_id"].tolist() == expected["index_id"].tolist()
    assert points["value"].tolist() == expected["value"].tolist()
    assert points["time"].tolist() == expected["time"].tolist()


def test_a_read_over_its_limit_on_s3_is_refused_having_decoded_only_what_fits(on_s3, monkeypatch):
    # Files are decoded as they arrive, each only while the rows fetched so far fit: the
    # read is refused once every footer is in, naming all its rows, having decoded no more
    # than the limit allows (three days' rows here).
    columns = THROUGHPUT_SCHEMA.names
    monkeypatch.setenv(
        "SEARCHKIT_READ_LIMIT", str(budget.estimate("throughput", 3 * PER_DAY, columns))
    )
    decoded = []
    decode = reader.read_planned

    def counted(layout, kind, planned, *args, **kwargs):
        decoded.append(planned.rows)
        return decode(layout, kind, planned, *args, **kwargs)

    monkeypatch.setattr(reader, "read_planned", counted)
    with pytest.raises(HistoryError) as caught:
        on_s3.throughput()

    assert f"({len(DAYS) * PER_DAY:,} rows)" in str(caught.value)
    assert str(caught.value).endswith(
        "nothing was read: give end= as well as start= (e.g. hist.throughput(start=..., "
        "end=...)), fewer names= or index_ids=, or read a day at a time"
    )
    assert sum(decoded) <= 3 * PER_DAY
