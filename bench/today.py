"""Benchmark the open day: reads at 23:50 and the collect round that crosses midnight.

Prints, each measured in this run (the machine may be shared: quote the ranges):

- ``usage_frame`` and ``forecast_limits`` at 23:50 on 1,000 indexes (14 compacted days with
  their rollups, and today as a collector every 10 minutes leaves it: 143 files of 10
  minutes each), today from its rollup (kept current by each collect round) against today
  from its points (the same store without today's rollup: what every call read before),
  best of 3 fresh processes each, and whether the two frames are identical;
- what keeping today's rollup current costs a round (extending it with the round's
  points), the median over the day's 143 rounds;
- with ``--midnight``: collect rounds every 10 minutes from 23:10 to 00:30 against the
  emulator (1,000 indexes, a day's window), each against one plain list of the same indexes
  measured just before it, in wall and CPU time (the emulator serves from this process: a
  list's CPU is the server's and the client's). The round at midnight closes the day (its
  rollup extended with its last points) and leaves the merge of its files to a thread
  (before, it merged them before it returned); the bench waits for that thread before the
  next list, as a collector's ten minutes would, and prints what it took. With
  ``--baseline SRC`` (a source tree: ``git archive 732bb4b searchkit | tar -x -C SRC``)
  the rounds of that code too, alternated with this code's (``--repeat`` times each).

Usage: .venv/bin/python bench/today.py [--indexes 1000] [--days 14] [--midnight]
           [--only-midnight] [--baseline SRC] [--repeat 2] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

import numpy as np
import pandas as pd
import pyarrow as pa

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from figures import emit  # noqa: E402
from history import END, MINUTES, write_dataset  # noqa: E402

AT = END + pd.Timedelta(hours=23, minutes=50)  # the reads' instant, on the open day END


def write_today(root: pathlib.Path, indexes: int) -> list[float]:
    """Write the open day as 10-minute collects leave it, each round's file followed by
    what the collector does to today's rollup; return each round's rollup seconds."""
    import pyarrow.fs as pafs

    import searchkit as sk
    from searchkit.history import open_day
    from searchkit.history.crossings import daily_limits
    from searchkit.history.layout import THROUGHPUT_SCHEMA, Layout, stored

    layout = Layout(str(root), pafs.LocalFileSystem(), str(root))
    limits = daily_limits(sk.History(root).limits())  # as collect passes them
    ids = [str(uuid.UUID(int=i + 1, version=4)) for i in range(indexes)]
    names = [f"index-{i:04d}" for i in range(indexes)]
    rng = np.random.default_rng(11)
    level = 10 ** rng.uniform(0, 3, indexes)
    day = f"{END:%Y-%m-%d}"
    spent = []
    for tick in range(MINUTES // 10 - 1):  # up to 23:50
        minute = np.arange(tick * 10, tick * 10 + 10, dtype=np.int64)
        stamp = END.value + (tick + 1) * 600_000_000_000
        times = np.tile(END.value + minute * 60_000_000_000, indexes)
        shape = 1 + 0.6 * np.cos(2 * np.pi * minute / MINUTES)
        values = np.round(np.outer(level, shape) * rng.uniform(0.9, 1.1, (indexes, 10)), 2)
        table = pa.Table.from_arrays(
            [
                pa.array(["bench-account"] * times.size, pa.string()),
                pa.array(np.repeat(ids, 10), pa.string()),
                pa.array(np.repeat(names, 10), pa.string()),
                pa.array(times, pa.timestamp("ns", tz="UTC")),
                pa.array(values.ravel()),
                pa.array(np.full(times.size, stamp), pa.timestamp("ns", tz="UTC")),
            ],
            schema=THROUGHPUT_SCHEMA,
        )
        path = layout.write("throughput", day, stored(table), stamp)
        started = time.perf_counter()
        open_day.advance(layout, day, path, table, limits)
        spent.append(time.perf_counter() - started)
    return spent


def measure(root: str, what: str) -> dict[str, float]:
    """One read in this (fresh) process: seconds and peak memory; the frame saved."""
    import searchkit as sk

    hist = sk.History(root)
    started = time.perf_counter()
    frame = sk.usage_frame(hist) if what == "usage" else sk.forecast_limits(hist, now=AT)
    seconds = time.perf_counter() - started
    frame.to_pickle(f"{root}.{what}.pkl")
    return {"seconds": seconds, "rows": len(frame)}


def run_measure(root: pathlib.Path, what: str, repeat: int = 3) -> float:
    best = np.inf
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, __file__, "--measure", str(root), what],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        best = min(best, json.loads(out)["seconds"])
    return float(best)


def bench_reads(root: pathlib.Path, indexes: int, days: int) -> None:
    write_dataset(root / "rolled", indexes, days, rollups=True)
    spent = write_today(root / "rolled", indexes)
    shutil.copytree(root / "rolled", root / "points", ignore=shutil.ignore_patterns("*.pkl"))
    shutil.rmtree(root / "points" / "rollups" / f"day={END:%Y-%m-%d}")
    print(
        f"{indexes:,} indexes, {days} compacted days with rollups and today's 143 files "
        f"({indexes * 1430:,} points) to 23:50; keeping today's rollup current took "
        f"{np.median(spent) * 1000:.0f} ms a round (median; max {max(spent) * 1000:.0f} ms, "
        "the day's first round rolls its one file up)"
    )
    emit("today.round_rollup.median", float(np.median(spent)))
    for what, label in (("usage", "usage_frame(hist)"), ("forecast", "forecast_limits(hist)")):
        before = run_measure(root / "points", what)
        after = run_measure(root / "rolled", what)
        same = pd.read_pickle(f"{root}/points.{what}.pkl").equals(
            pd.read_pickle(f"{root}/rolled.{what}.pkl")
        )
        extra = ""
        if what == "forecast":
            frame = pd.read_pickle(f"{root}/rolled.{what}.pkl")
            crossed = int((frame["hit_at"] <= frame["as_of"]).sum())
            extra = f"; {crossed:,} indexes past their limit"
        print(
            f"{label} at 23:50: today from its points {before:.2f} s, from its rollup "
            f"{after:.2f} s = {after / before:.2f}x (target < 0.5 s); frames identical: "
            f"{same}{extra}"
        )
        emit(f"today.{what}.points", before)
        emit(f"today.{what}.rollup", after)
        emit(f"today.{what}.identical", same, "")


def rounds(indexes: int) -> dict[str, list]:
    """Collect rounds from 23:10 to 00:30 against one plain list each (this process's
    searchkit), wall and CPU seconds: {"round": [...], "list": [...], "round_cpu": [...],
    "list_cpu": [...], "at": [...]}."""
    from searchkit.emulator import Emulator

    try:
        from searchkit.history.usage_history import History
    except ImportError:  # a baseline from before the rename
        from searchkit.history.store import History  # type: ignore[no-redef]

    start = END - pd.Timedelta(minutes=60)
    try:
        from searchkit.history.compaction import settle_all
    except ImportError:  # a baseline that merges within the round
        settle_all = None  # type: ignore[assignment]

    keys = ("round", "list", "round_cpu", "list_cpu", "at", "after", "after_cpu")
    out: dict[str, list] = {key: [] for key in keys}

    def timed(call) -> tuple[float, float]:
        wall, cpu = time.perf_counter(), time.process_time()
        call()
        return time.perf_counter() - wall, time.process_time() - cpu

    with tempfile.TemporaryDirectory() as tmp, Emulator(seed=1, clock=start.timestamp()) as emu:
        specs = [
            {"name": f"live-{i:04d}", "region": "eu-west-1", "type": "payg"} for i in range(indexes)
        ]
        emu.store.create_many(emu.account, specs)
        hist = History(pathlib.Path(tmp) / "store")
        with emu.client(timeout=300) as client:
            hist.collect(client, now=emu.now())  # 23:00: a day's window
            for _ in range(9):  # 23:10 .. 00:30
                emu.advance(600)
                wall, cpu = timed(client.list_indexes)
                out["list"].append(wall)
                out["list_cpu"].append(cpu)
                wall, cpu = timed(lambda: hist.collect(client, now=emu.now()))
                out["round"].append(wall)
                out["round_cpu"].append(cpu)
                out["at"].append(f"{pd.Timestamp(emu.now(), unit='s'):%H:%M}")
                # What the round left running (the closed day's merge), before the next list.
                wall, cpu = timed(settle_all) if settle_all else (0.0, 0.0)
                out["after"].append(wall)
                out["after_cpu"].append(cpu)
    return out


def bench_midnight(indexes: int, baseline: str | None, repeat: int) -> None:
    codes = [("this code", None)] + ([("baseline", baseline)] if baseline else [])
    load = os.getloadavg()[0]
    print(
        f"collect rounds vs one plain list of the same {indexes:,} indexes (load average "
        f"{load:.1f} on {os.cpu_count()} cores at the start; ratios wall, CPU in brackets):"
    )
    for turn in range(repeat):
        for label, source in codes:  # alternated: A B A B
            env = dict(os.environ)
            if source:
                env["PYTHONPATH"] = source
            out = subprocess.run(
                [sys.executable, __file__, "--rounds", str(indexes)],
                check=True,
                capture_output=True,
                text=True,
                env=env,
            ).stdout
            found = json.loads(out)
            print(f"{label} (run {turn + 1}): " + _ratios(found))
            _emit_rounds("today.rounds" if source is None else "today.rounds.baseline", found)


def _emit_rounds(key: str, found: dict[str, list]) -> None:
    """The midnight round's ratios to its list (wall, CPU) and the other rounds' median."""
    at = found["at"]
    midnight = at.index("00:00")
    others = [i for i, when in enumerate(at) if when not in ("00:00", "00:10")]
    wall = [r / li for r, li in zip(found["round"], found["list"], strict=True)]
    cpu = [r / li for r, li in zip(found["round_cpu"], found["list_cpu"], strict=True)]
    emit(f"{key}.midnight", wall[midnight], "x")
    emit(f"{key}.midnight_cpu", cpu[midnight], "x")
    emit(f"{key}.others_median", float(np.median([wall[i] for i in others])), "x")
    emit(f"{key}.merge_cpu", found["after_cpu"][midnight])


def _ratios(found: dict[str, list]) -> str:
    """One line: the midnight round's and the next round's ratios, the others' range."""
    at = found["at"]
    wall = [r / li for r, li in zip(found["round"], found["list"], strict=True)]
    cpu = [r / li for r, li in zip(found["round_cpu"], found["list_cpu"], strict=True)]
    others = [i for i, when in enumerate(at) if when not in ("00:00", "00:10")]

    def one(i: int) -> str:
        return f"{wall[i]:.2f}x ({cpu[i]:.2f}x)"

    midnight, after = at.index("00:00"), at.index("00:10")
    return (
        f"the midnight round {found['round'][midnight]:.2f} s vs list "
        f"{found['list'][midnight]:.2f} s = {one(midnight)} (target <= 1.5x), then its "
        f"merge on a thread {found['after'][midnight]:.2f} s ({found['after_cpu'][midnight]:.2f}"
        f" s CPU); the next round {one(after)}; the others {min(wall[i] for i in others):.2f}-"
        f"{max(wall[i] for i in others):.2f}x (median {np.median([wall[i] for i in others]):.2f}x; "
        f"CPU {min(cpu[i] for i in others):.2f}-{max(cpu[i] for i in others):.2f}x); rounds "
        + ", ".join(f"{when} {one(i)}" for i, when in enumerate(at))
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--indexes", type=int, default=1000)
    parser.add_argument("--days", type=int, default=14)
    parser.add_argument("--midnight", action="store_true", help="the collect rounds too")
    parser.add_argument("--only-midnight", action="store_true", help="only the rounds")
    parser.add_argument("--baseline", help="a source tree whose rounds to measure too")
    parser.add_argument("--repeat", type=int, default=2, help="runs of the rounds, each code")
    parser.add_argument("--keep", help="write the stores here and keep them")
    parser.add_argument("--measure", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(*args.measure)))
        return
    if args.rounds:
        print(json.dumps(rounds(args.rounds)))
        return
    if not args.only_midnight:
        root = pathlib.Path(args.keep or tempfile.mkdtemp(prefix="searchkit-today-bench-"))
        try:
            bench_reads(root, args.indexes, args.days)
        finally:
            if not args.keep:
                shutil.rmtree(root, ignore_errors=True)
    if args.midnight or args.only_midnight:
        bench_midnight(args.indexes, args.baseline, args.repeat)


if __name__ == "__main__":
    main()
