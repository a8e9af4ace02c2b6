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
    python bench/suite.py --baseline 85831fe --rounds 2
        # that commit's test-fast (a git worktree under .bench/trees, this venv) and this
        # tree's in turn, baseline first, each ROUNDS times: the first pair warms the
        # bytecode; a line per run and the ratio of the wall and CPU times per pair
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import pathlib
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent


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


def fast_command(tree: pathlib.Path) -> list[str]:
    """``tree``'s own `make test-fast` command line (``make -n``), run with this Python."""
    shown = (
        subprocess.run(
            ["make", "-n", "-s", "test-fast"], cwd=tree, check=True, capture_output=True, text=True
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    words = shlex.split(shown)
    assert words[0] == "PYTHONDONTWRITEBYTECODE=" and words[1].endswith("bin/python"), shown
    return [sys.executable, *words[2:]]


def run_once(tree: pathlib.Path, label: str, slowest: int) -> tuple[float, float, int]:
    """Time ``tree``'s test-fast once, print the report; return (wall, all CPU, exit)."""
    with tempfile.TemporaryDirectory(prefix="suite-timing-") as folder:
        env = {
            **os.environ,
            "PYTHONDONTWRITEBYTECODE": "",  # as the Makefile: bytecode cached
            "SUITE_TIMING_DIR": folder,
            "PYTHONPATH": os.pathsep.join(
                p for p in (str(tree), str(HERE), os.environ.get("PYTHONPATH", "")) if p
            ),
            "PYTEST_ADDOPTS": f"{os.environ.get('PYTEST_ADDOPTS', '')} -p suite_timing -q".strip(),
        }
        load = os.getloadavg()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(fast_command(tree), cwd=tree, env=env, check=False)
        took = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        print(
            f"\n{label}: make test-fast: {took:.1f} s wall, {cpu:.1f} s CPU (every process), "
            f"exit {done.returncode}; load average {load[0]:.2f} before, "
            f"{os.getloadavg()[0]:.2f} after, on {os.cpu_count()} cores"
        )
        report(records(pathlib.Path(folder)), slowest)
    return took, cpu, done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description="Time `make test-fast`; say where the time goes.")
    parser.add_argument("--cold", action="store_true", help="remove the bytecode caches first")
    parser.add_argument("--slowest", type=int, default=15, help="files to list (default 15)")
    parser.add_argument("--baseline", metavar="COMMIT", help="time that commit's test-fast too")
    parser.add_argument("--rounds", type=int, default=1, help="pairs with --baseline (default 1)")
    args = parser.parse_args()
    if args.cold:
        for cache in [*ROOT.glob("searchkit/**/__pycache__"), *ROOT.glob("tests/**/__pycache__")]:
            shutil.rmtree(cache, ignore_errors=True)
    if not args.baseline:
        return run_once(ROOT, "this tree", args.slowest)[2]
    from readme_figures import git, tree_of

    base, _ = tree_of(args.baseline, own_venv=False)
    now = git("rev-parse", "--short=7", "HEAD")
    pairs, failed = [], 0
    for round_ in range(1, args.rounds + 1):
        then = run_once(base, f"round {round_}, baseline {base.name}", args.slowest)
        this = run_once(ROOT, f"round {round_}, this tree {now}", args.slowest)
        pairs.append((then, this))
        failed |= then[2] | this[2]
    print(f"\ntest-fast, this tree {now} against {base.name} (the machine's load above):")
    for round_, (then, this) in enumerate(pairs, start=1):
        wall, cpu = this[0] / then[0], this[1] / then[1]
        print(
            f"  round {round_}: {this[0]:.1f} s vs {then[0]:.1f} s wall ({wall:.2f}x), "
            f"{this[1]:.1f} s vs {then[1]:.1f} s CPU ({cpu:.2f}x)"
        )
    return failed


if __name__ == "__main__":
    sys.exit(main())
