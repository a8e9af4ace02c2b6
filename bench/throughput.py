"""Benchmark throughput_frame against json.loads and against a naive pandas path.

For 10k, 100k and 1M throughput points (indexes of one day per minute, in five zones with
Go's variable fraction widths), it builds the list response's JSON and prints:

* ``json.loads`` time on those bytes;
* ``throughput_frame`` time on the decoded JSON, and its ratio to ``json.loads``;
* the naive pandas path (``pd.json_normalize`` + ``pd.to_datetime(format="ISO8601",
  utc=True)`` after cutting the zone name off) measured in the same run, up to 100k points,
  and the speed-up over it;
* peak memory of one ``throughput_frame`` call (and of the naive path), from a separate
  untimed run: tracemalloc (Python objects and NumPy buffers) plus the peak of a fresh
  Arrow memory pool.

Times are the best of several runs. Targets: at 1M points ``throughput_frame`` takes at most
half the time of ``json.loads``, and its cost per point stays flat from 10k to 1M.

Run it with ``make bench`` or ``python bench/throughput.py [--sizes 10000 100000 ...]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import random
import sys
import time
import tracemalloc
import zoneinfo
from collections.abc import Callable
from functools import partial
from typing import Any

import pandas as pd
import pyarrow as pa
from figures import emit

from searchkit import throughput_frame  # the public name: older trees measure too

ZONES = ("UTC", "Europe/Berlin", "Asia/Kathmandu", "America/St_Johns", "America/Sao_Paulo")
POINTS_PER_INDEX = 1440  # one day per minute
NAIVE_LIMIT = 100_000
START = dt.datetime(2026, 3, 28, 12, 0, tzinfo=dt.timezone.utc)  # spans the EU DST change
MiB = 1024 * 1024


def go_text(instant: dt.datetime, nanos: int) -> str:
    """Render like Go's time.Time.String(): trimmed fraction, numeric offset, zone name."""
    offset = instant.utcoffset() or dt.timedelta(0)
    minutes = int(offset.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    hh, mm = divmod(abs(minutes), 60)
    digits = f"{nanos:09d}".rstrip("0")
    fraction = f".{digits}" if digits else ""
    return f"{instant:%Y-%m-%d %H:%M:%S}{fraction} {sign}{hh:02d}{mm:02d} {instant.tzname()}"


def build_json(points: int, seed: int = 1) -> tuple[bytes, int]:
    """Return the list response with ``points`` throughput points, and its index count."""
    rng = random.Random(seed)
    shift_span = 600  # each index starts up to 10 hours later than the first
    minutes = POINTS_PER_INDEX + shift_span
    # Sampling delays of 0, 3, 6 or 9 digits, as a real collector's clock would give.
    delays = [
        rng.choice(
            [0, rng.randrange(1000) * 1_000_000, rng.randrange(10**6) * 1000, rng.randrange(10**9)]
        )
        for _ in range(minutes)
    ]
    timelines = {
        zone: [
            go_text((START + dt.timedelta(minutes=m)).astimezone(zoneinfo.ZoneInfo(zone)), d)
            for m, d in enumerate(delays)
        ]
        for zone in ZONES
    }
    indexes: list[dict[str, Any]] = []
    left = points
    while left > 0:
        number = len(indexes)
        count = min(POINTS_PER_INDEX, left)
        shift = (number * 37) % shift_span
        texts = timelines[ZONES[number % len(ZONES)]][shift : shift + count]
        values = [round(rng.uniform(0, 500), 2) if rng.random() > 0.02 else 0 for _ in texts]
        indexes.append(
            {
                "customer_id": "bench@example.com",
                "id": f"00000000-0000-4000-8000-{number:012d}",
                "name": f"index-{number:04d}",
                "endpoint": f"bench-{number:05d}-eu1",
                "type": "payg",
                "region": "eu-west-1",
                "partner_email": "",
                "token": "t" * 40,
                "read_only_token": "r" * 40,
                "max_daily_queries": -1,
                "creation_time": 1_767_225_600,
                "input_enrichment_enabled": True,
                "throughput_vector": [{"x": x, "y": y} for x, y in zip(texts, values, strict=True)],
            }
        )
        left -= count
    return json.dumps(indexes).encode(), len(indexes)


def naive_frame(data: list[dict[str, Any]]) -> pd.DataFrame:
    """The pandas path a notebook user would write first."""
    frame = pd.json_normalize(data, record_path="throughput_vector", meta=["id", "name"])
    # pandas cannot read the zone label (it may be "-03" or "+0545"): cut it off.
    texts = frame["x"].str.rsplit(" ", n=1).str[0]
    frame["time"] = pd.to_datetime(texts, format="ISO8601", utc=True)
    frame = frame.rename(columns={"id": "index_id", "y": "value"})
    return frame[["index_id", "name", "time", "value"]].sort_values(["index_id", "time"])


def best_time(function: Callable[[], Any], repeat: int, cpu: list[float] | None = None) -> float:
    """The least wall time of ``repeat`` runs; with ``cpu``, the least CPU time of the
    process (all threads) is appended to it (a shared machine disturbs it less)."""
    best = best_cpu = float("inf")
    for _ in range(repeat):
        gc.collect()
        started, used = time.perf_counter(), time.process_time()
        result = function()
        best = min(best, time.perf_counter() - started)
        best_cpu = min(best_cpu, time.process_time() - used)
        del result
    if cpu is not None:
        cpu.append(best_cpu)
    return best


def peak_mib(function: Callable[[], Any]) -> float:
    """Peak memory of one call: tracemalloc (Python, NumPy) plus a fresh Arrow pool's peak."""
    gc.collect()
    previous = pa.default_memory_pool()
    pool = pa.proxy_memory_pool(previous)
    pa.set_memory_pool(pool)
    tracemalloc.start()
    try:
        result = function()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        pa.set_memory_pool(previous)
    del result
    return (peak + pool.max_memory()) / MiB


def check_same_instants(data: list[dict[str, Any]]) -> None:
    ours = throughput_frame(data)
    naive = naive_frame(data)
    if not (ours["time"].to_numpy() == naive["time"].to_numpy()).all():
        raise SystemExit("throughput_frame and the naive path disagree on instants")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=5, help="runs per timing (best kept)")
    args = parser.parse_args(argv)

    header = (
        f"{'points':>9} {'indexes':>7} {'JSON MB':>8} {'loads s':>8} {'frame s':>8} "
        f"{'frame/loads':>11} {'ns/point':>8} {'naive s':>8} {'speed-up':>8} "
        f"{'peak MB':>8} {'naive MB':>8}"
    )
    print(f"Python {sys.version.split()[0]}, pandas {pd.__version__}, pyarrow {pa.__version__}")
    print(header)
    print("-" * len(header))
    for size in args.sizes:
        raw, count = build_json(size)
        repeat = max(2, args.repeat if size <= 100_000 else args.repeat // 2)
        cpu: list[float] = []
        loads = best_time(partial(json.loads, raw), repeat, cpu)
        data = json.loads(raw)
        frame = best_time(partial(throughput_frame, data), repeat, cpu)
        peak = peak_mib(partial(throughput_frame, data))
        naive = naive_peak = None
        if size <= NAIVE_LIMIT:
            check_same_instants(data)
            naive = best_time(partial(naive_frame, data), max(2, repeat // 2))
            naive_peak = peak_mib(partial(naive_frame, data))
        print(
            f"{size:>9,} {count:>7,} {len(raw) / 1e6:>8.1f} {loads:>8.3f} {frame:>8.3f} "
            f"{frame / loads:>11.2f} {frame / size * 1e9:>8.0f} "
            f"{'—' if naive is None else f'{naive:.3f}':>8} "
            f"{'—' if naive is None else f'{naive / frame:.1f}x':>8} "
            f"{peak:>8.0f} {'—' if naive_peak is None else f'{naive_peak:.0f}':>8}"
        )
        print(
            f"{'':>9} CPU time: json.loads {cpu[0]:.3f} s, throughput_frame {cpu[1]:.3f} s = "
            f"{cpu[1] / cpu[0]:.2f}"
        )
        emit(f"throughput.loads.{size}.cpu", cpu[0])
        emit(f"throughput.frame.{size}.cpu", cpu[1])
        emit(f"throughput.loads.{size}", loads)
        emit(f"throughput.frame.{size}", frame)
        emit(f"throughput.ratio.{size}", frame / loads, "x")
        if naive is not None:
            emit(f"throughput.naive.{size}", naive)
            emit(f"throughput.speedup.{size}", naive / frame, "x")
        del data, raw
    print(
        "\nframe/loads: target <= 0.50 at 1M points. naive path: json_normalize + to_datetime("
        "ISO8601, utc=True), same instants checked, measured up to 100k points."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
