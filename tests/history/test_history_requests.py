"""The requests a History makes on S3, counted by moto's server on loopback (not a mock).

Each dataset (throughput, limits, rollups) is listed once per call with one LIST, whatever
the days it holds; a file read is a HEAD and one GET. So the LISTs of ``forecast_limits``,
``usage_frame``, ``info()`` and ``collect`` are the same on a store of 3 days and of 9, and
the README states the numbers.
"""

from __future__ import annotations

import datetime as dt
import os
import pathlib
import shutil
import time
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import searchkit as sk
from searchkit.analytics.day_forecast import forecast_day
from searchkit.history.layout import THROUGHPUT_SCHEMA, WRITE_OPTIONS
from searchkit.history.seen_history import SeenHistory
from searchkit.history.usage_history import History

# moto and boto3 (dev dependencies) are imported by the ``s3_server`` fixture, which skips
# without them: not while collecting, in every worker (tests/history/s3server.py).
from tests.history.s3server import new_bucket, options

if TYPE_CHECKING:
    from tests.history.s3server import CountingMotoServer

NOON = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)


def past_day(root, day: pd.Timestamp, ids: list[str], names: list[str], account: str) -> None:
    """A compacted past day: one point an hour per index, one file, as collect writes it."""
    times = day.value + np.arange(24, dtype=np.int64) * 3_600_000_000_000
    table = pa.table(
        {
            "account": [account] * 24 * len(ids),
            "index_id": np.repeat(ids, 24).tolist(),
            "name": np.repeat(names, 24).tolist(),
            "time": np.tile(times, len(ids)),
            "value": np.ones(24 * len(ids)),
            "collected_at": np.full(24 * len(ids), day.value + 86_400_000_000_000),
        },
        schema=THROUGHPUT_SCHEMA,
    )
    folder = root / f"throughput/day={day:%Y-%m-%d}"
    folder.mkdir(parents=True)
    pq.write_table(table, folder / f"part-{day.value}-past.parquet", **WRITE_OPTIONS)


def s3_store(tmp_path, server, emu, days: int, tag: str = "requests") -> History:
    """A store of ``days`` past days with their rollups and today's collect, on S3, in a
    bucket named by ``tag``, the days and the clock (a test of its own gives its own tag: the
    server outlives a test, and a bucket made again keeps what another test left in it)."""
    root = tmp_path / f"local-{days}"
    local = History(root)
    with emu.client() as client:
        local.collect(client, now=emu.now())
    limits = local.limits()
    account = str(local.snapshots()["account"].iloc[0])
    ids, names = [str(i) for i in limits.index], [str(n) for n in limits["name"]]
    collected = pd.Timestamp(local.days()[0], tz="UTC")  # the day the collect filled
    for back in range(days, 0, -1):
        past_day(root, collected - pd.Timedelta(days=back), ids, names, account)
    # Rollups name their files by size and modification time (in seconds). The copies on
    # S3 are stamped when uploaded, which may be the same second as the files here were
    # written: dated an hour back here (and so rolled up, today's anew), no copy keeps its
    # file's time.
    an_hour_ago = time.time() - 3600
    for path in (root / "throughput").rglob("*.parquet"):
        os.utime(path, (an_hour_ago, an_hour_ago))
    assert local.refresh_rollups(local.days()) == days + 1
    s3, bucket = new_bucket(server.endpoint, f"{tag}-{days}-{int(emu.now())}")
    # Uploaded by boto3, not pyarrow's copy_files: at pyarrow 16 (the floor) copy_files to
    # a moto server in this same process never returned (CI's lowest-versions run hung on it).
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        s3.upload_file(str(path), bucket, f"usage/{path.relative_to(root).as_posix()}")
    shutil.rmtree(root)
    hist = History(f"s3://{bucket}/usage", storage_options=options(server.endpoint))
    # A copy gives every file a new modification time, which rollups name their files by
    # (a file rewritten under its name must make its rollup stale): rewritten once, today's
    # (which the collector keeps current) too.
    assert hist.rollups().empty
    assert hist.refresh_rollups(hist.days()) == days + 1
    return hist


def counted(server: CountingMotoServer, call) -> dict[str, int]:
    server.reset()
    call()
    return server.counted()


def reads(server: CountingMotoServer, hist: History) -> dict[str, dict[str, int]]:
    """The requests of each read, each on the store just opened (as a notebook opens it:
    nothing known of it yet)."""

    def opened() -> History:
        return History(hist.root, filesystem=hist.filesystem)

    return {
        "forecast_limits": counted(server, lambda: sk.forecast_limits(opened())),
        "usage_frame": counted(server, lambda: sk.usage_frame(opened())),
        # In a zone whose days are not UTC's (+12:45, and +13:45 in its summer): the same.
        "forecast_limits Chatham": counted(
            server, lambda: sk.forecast_limits(opened(), tz="Pacific/Chatham")
        ),
        "usage_frame Chatham": counted(
            server, lambda: sk.usage_frame(opened(), tz="Pacific/Chatham")
        ),
        "info": counted(server, lambda: opened().info()),
        "throughput": counted(server, lambda: opened().throughput()),
    }


def expected_reads(days: int) -> dict[str, dict[str, int]]:
    """What :func:`reads` counts on a store of ``days`` days, today's among them: one LIST
    per dataset read, whatever the days; a HEAD and one GET per file read, each file once
    a call. Each reads every day's rollup (today's too: the collect keeps it current) and
    the newest limits file (for the limits, the names and, in ``usage_frame``, their
    changes over the days: fetched once); ``forecast_limits`` also the newest day's
    points (the newest instant); ``throughput()`` every day's points, and the names."""
    forecast = {"LIST": 3, "HEAD": days + 2, "GET": days + 2}
    usage = {"LIST": 3, "HEAD": days + 1, "GET": days + 1}
    return {
        "forecast_limits": forecast,
        "usage_frame": usage,
        "forecast_limits Chatham": forecast,
        "usage_frame Chatham": usage,
        "info": {"LIST": 1, "HEAD": days, "GET": days},
        "throughput": {"LIST": 2, "HEAD": days + 1, "GET": days + 1},
    }


@pytest.mark.parametrize("days", [3, 9])
@pytest.mark.emulator(demo=True, seed=3, clock=NOON, window_minutes=60)
def test_reads_list_each_dataset_once_whatever_the_days(tmp_path, s3_server, emulator, days):
    hist = s3_store(tmp_path, s3_server, emulator, days)

    counts = reads(s3_server, hist)
    emulator.advance(600)
    with emulator.client() as client:
        collect = counted(s3_server, lambda: hist.collect(client, now=emulator.now()))

    assert counts == expected_reads(days + 1)  # the past days and today
    # A collect within the day: the same whatever the days stored. Each file written is a
    # multipart upload (POST, PUT, POST): today's points and the record of the newest.
    # Then today's rollup, extended with the points it wrote: one LIST of the rollups, its
    # read (HEAD, GET), the new one uploaded, the old one deleted (HEAD, DELETE; S3FileSystem
    # then PUTs the folder's marker).
    assert collect == {"LIST": 4, "HEAD": 5, "GET": 5, "POST": 6, "PUT": 4, "DELETE": 1}
    # The README states these numbers, word for word.
    assert stated(counts, collect, days + 1) in " ".join(README.read_text().split())
    # The collector's next round extends the rows it wrote, and knows yesterday's rollup
    # current while its files list as they did: neither rollup is read again.
    emulator.advance(600)
    with emulator.client() as client:
        again = counted(s3_server, lambda: hist.collect(client, now=emulator.now()))
    assert again == {"LIST": 4, "HEAD": 3, "GET": 3, "POST": 6, "PUT": 4, "DELETE": 1}


MIDNIGHT = dt.datetime(2026, 11, 21, 0, 0, tzinfo=dt.timezone.utc)


@pytest.mark.emulator(demo=True, seed=3, clock=MIDNIGHT, window_minutes=60)
def test_a_forecast_at_midnight_reads_each_rollup_once(tmp_path, s3_server, emulator):
    days = 3  # the test above shows the counts do not grow but by the days
    # Collected at midnight: the newest point's minute ends at midnight, so the forecast's
    # instant is the next day's first and its window a day past the days read to find it.
    # It read every rollup again for that (65 requests on bench/s3.py's store, 22d64ca 39).
    hist = s3_store(tmp_path, s3_server, emulator, days)
    assert hist.days() == [f"2026-11-{20 - days + n:02d}" for n in range(days + 1)]
    assert set(sk.forecast_limits(hist)["period"]) == {pd.Timestamp(MIDNIGHT)}

    assert reads(s3_server, hist) == expected_reads(days + 1)  # as within the day


@pytest.mark.emulator(demo=True, seed=3, clock=NOON, window_minutes=60)
def test_a_refresh_reads_the_closed_days_from_the_rollups_written_since(
    tmp_path, s3_server, emulator
):
    """A SeenHistory (the cockpit's) first read the closed days from their points: they had
    no rollup. refresh_rollups() wrote them since. The forecast after the next collect lists
    the rollups (one LIST more than a refresh with every day summarised, the limits and the
    throughput being the others) and reads each closed day's rollup; the one after that
    lists the limits and the throughput only and reads nothing (before, each refresh read
    every closed day's points: a HEAD and a GET a day, and for ever)."""
    days = 2
    hist = s3_store(tmp_path, s3_server, emulator, days, "seen")
    closed = hist.days()[:-1]
    for day in closed:
        hist.filesystem.delete_dir(f"{hist.root}/rollups/day={day}")
    seen = SeenHistory(hist)
    forecast_day(seen)
    assert hist.refresh_rollups(closed) == days
    counts, rows = [], []
    for _ in range(2):
        emulator.advance(600)
        with emulator.client() as client:
            hist.collect(client, now=emulator.now())
        seen.newest_time()  # the collect's file read (as the cockpit asks it first)
        counts.append(counted(s3_server, lambda: rows.append(forecast_day(seen).rows)))
        fresh = sk.forecast_limits(History(hist.root, filesystem=hist.filesystem))
        pd.testing.assert_frame_equal(rows[-1], fresh, check_exact=True)

    assert counts == [{"LIST": 3, "HEAD": days, "GET": days}, {"LIST": 2}]


README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_s_bench_counts_are_the_tested_ones():
    # bench/s3.py's store holds 14 days (the newest closed at midnight, as the test above):
    # the requests the README quotes from it are what the tests count on D = 14 days.
    counts = {call: sum(kinds.values()) for call, kinds in expected_reads(14).items()}
    text = " ".join(README.read_text().split())
    assert (counts["forecast_limits"], counts["usage_frame"], counts["info"]) == (35, 33, 29)
    assert f"`forecast_limits` {counts['forecast_limits']} requests (22d64ca 39;" in text
    assert f"`usage_frame` {counts['usage_frame']} requests (37)" in text
    assert f"`info()` {counts['info']} requests (29;" in text


def stated(reads, collect, days: int) -> str:
    """The README's sentence of the counts on a store of D days (a HEAD + GET pair per
    file read; an upload is a POST, a PUT and a POST; a DELETE then PUTs the folder's
    marker)."""
    for counts in reads.values():
        assert counts["HEAD"] == counts["GET"]
    uploads, deletes = collect["POST"] // 2, collect["DELETE"]
    assert collect["PUT"] == uploads + deletes and collect["POST"] == 2 * uploads

    def pairs(counts) -> str:
        more = counts["HEAD"] - days
        return "D" if more == 0 else f"D + {more}"

    forecast, usage, info = reads["forecast_limits"], reads["usage_frame"], reads["info"]
    return (
        f"`forecast_limits` {forecast['LIST']} LISTs and {pairs(forecast)} HEAD + GET pairs, "
        f"`usage_frame` {usage['LIST']} LISTs and {pairs(usage)} pairs, `info()` "
        f"{info['LIST']} LIST and {pairs(info)} pairs, a collect within the day "
        f"{collect['LIST']} LISTs, {collect['HEAD']} HEADs, {collect['GET']} GETs, "
        f"{uploads} uploads of 3 requests each (POST, PUT, POST) and {deletes} DELETE (then a "
        "PUT of the folder's marker);"
    )
