"""How long `make test-fast` takes, and where the time goes (issue 26 item 7: under 2 minutes
on 2 cores).

Runs `make test-fast` as a developer does and prints its wall time; a timing plugin
(bench/suite_timing.py) loaded into the controller and each xdist worker gives each worker's
sum of test durations (setup, call and teardown) and of CPU time (its threads, and the
processes it waited for), the time each took to start and collect, and the files that took
longest. Only the wall time is the figure; on a shared machine it says how busy the machine
was, so quote the load (printed) beside it.

    python bench/suite.py           # the edit loop: bytecode already cached by a run before
    python bench/suite.py --cold    # a fresh clone's first run: caches removed first
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parent.parent


def records(folder: pathlib.Path) -> dict[str, list[dict[str, Any]]]:
    """The timing plugin's lines, by process (controller, gw0, gw1)."""
    return {
        path.stem: [json.loads(line) for line in path.read_text().splitlines()]
        for path in sorted(folder.glob("*.jsonl"))
    }


def report(by_process: dict[str, list[dict[str, Any]]], slowest: int) -> None:
    files: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
    total = 0.0  # every process's CPU: tests (with their child processes), start-up, controller
    for process, lines in by_process.items():
        tests = [line for line in lines if "test" in line]
        events = {line["event"]: line for line in lines if "event" in line}
        wall = sum(t["wall"] for t in tests)
        cpu = sum(t["cpu"] for t in tests)
        if not tests and "end" in events:  # xdist's controller: it hands out the files
            end = events["end"]
            print(f"{process:>10}: ran {end['wall']:.1f} s ({end['cpu']:.1f} s CPU)")
            total += end["cpu"]
            continue
        collected = events.get("collected")
        total += cpu + (collected["cpu"] if collected else 0.0)
        start = (
            f"started and collected in {collected['wall']:.1f} s ({collected['cpu']:.1f} s CPU)"
            if collected
            else "collected nothing"
        )
        print(f"{process:>10}: {len(tests):5d} tests, durations {wall:6.1f} s, CPU {cpu:6.1f} s;")
        print(f"{'':>10}  {start}")
        for t in tests:
            name = t["test"].split("::")[0]
            files[name][0] += t["wall"]
            files[name][1] += t["cpu"]
            files[name][2] += 1
    what = "tests with their child processes, start-ups, controller"
    print(f"{'all':>10}: {total:.1f} s CPU ({what})")
    print(f"\nthe {slowest} files that took longest (durations, CPU, tests):")
    for name, (wall, cpu, count) in sorted(files.items(), key=lambda kv: -kv[1][0])[:slowest]:
        print(f"  {wall:6.1f} s {cpu:6.1f} s CPU {int(count):4d}  {name}")


def main() -> int:
    parser = argparse.ArgumentParser(description="Time `make test-fast`; say where the time goes.")
    parser.add_argument("--cold", action="store_true", help="remove the bytecode caches first")
    parser.add_argument("--slowest", type=int, default=15, help="files to list (default 15)")
    args = parser.parse_args()
    if args.cold:
        for cache in [*ROOT.glob("searchkit/**/__pycache__"), *ROOT.glob("tests/**/__pycache__")]:
            shutil.rmtree(cache, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="suite-timing-") as folder:
        env = {
            **os.environ,
            "SUITE_TIMING_DIR": folder,
            "PYTHONPATH": os.pathsep.join(
                p for p in (str(ROOT / "bench"), os.environ.get("PYTHONPATH", "")) if p
            ),
            "PYTEST_ADDOPTS": f"{os.environ.get('PYTEST_ADDOPTS', '')} -p suite_timing -q".strip(),
        }
        load = os.getloadavg()
        started = time.perf_counter()
        done = subprocess.run(["make", "-s", "test-fast"], cwd=ROOT, env=env, check=False)
        took = time.perf_counter() - started
        print(
            f"\nmake test-fast ({'cold' if args.cold else 'warm'}): {took:.1f} s wall, exit "
            f"{done.returncode}; load average {load[0]:.2f} before, "
            f"{os.getloadavg()[0]:.2f} after, on {os.cpu_count()} cores"
        )
        report(records(pathlib.Path(folder)), args.slowest)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
