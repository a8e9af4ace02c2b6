"""Writing a day's rollup (``refresh_rollups``), this code beside another, in turn.

The README's "writing a day's rollup" (bench/forecast.py --speed: one wall time over 13 days,
in the same process as the forecast) moves with the load of a shared machine. This times
only the write: 1,000 indexes x ``--days`` days per minute (bench/history.py's layout), each
code writing its own store once; then each round copies a store and runs
``refresh_rollups`` over every day in a fresh process, this code then the baseline (A B A B),
and prints the CPU seconds a day (all threads) and the wall time, with the load.

    .venv/bin/python bench/rollup_write.py --baseline /tmp/base-22d64ca --rounds 4

``--baseline`` is a source tree (``git archive <sha> searchkit | tar -x -C DIR``) or a
``make bench BASE=`` tree. The ratio of the medians is the figure (target <= 1.10).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent

_WRITE = """
import sys
sys.path.insert(0, {bench!r})
from history import write_dataset
write_dataset(__import__("pathlib").Path({root!r}), {indexes}, {days})
"""

_REFRESH = """
import json, pathlib, shutil, tempfile, time, warnings
warnings.simplefilter("ignore")
import searchkit as sk
with tempfile.TemporaryDirectory() as tmp:
    root = pathlib.Path(tmp) / "store"
    shutil.copytree({root!r}, root)
    hist = sk.History(str(root))
    days = hist.days()
    wall, cpu = time.perf_counter(), time.process_time()
    written = hist.refresh_rollups(days)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
print(json.dumps({{"days": written, "wall": wall / written, "cpu": cpu / written}}))
"""


def run(tree: pathlib.Path, code: str) -> str:
    """Run ``code`` with ``tree``'s searchkit first on the path; return its output."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONWARNINGS": "ignore"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=tempfile.gettempdir(),
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="the other code's source tree")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--indexes", type=int, default=1000)
    parser.add_argument("--days", type=int, default=5)
    args = parser.parse_args()
    trees = {"this code": ROOT, "baseline": pathlib.Path(args.baseline).resolve()}
    found: dict[str, list[dict[str, float]]] = {side: [] for side in trees}
    with tempfile.TemporaryDirectory() as tmp:
        stores = {side: pathlib.Path(tmp) / side.replace(" ", "-") for side in trees}
        for side, tree in trees.items():  # each code writes the points it reads
            run(
                tree,
                _WRITE.format(
                    bench=str(HERE), root=str(stores[side]), indexes=args.indexes, days=args.days
                ),
            )
        print(
            f"refresh_rollups of {args.days} days x {args.indexes:,} indexes (per minute), "
            f"per day; this code then the baseline ({args.baseline}), in turn"
        )
        for round_ in range(1, args.rounds + 1):
            for side, tree in trees.items():
                before = load()
                got = json.loads(run(tree, _REFRESH.format(root=str(stores[side]))))
                found[side].append(got)
                print(
                    f"  round {round_} {side:9}: {got['cpu']:.3f} s CPU, {got['wall']:.3f} s "
                    f"wall a day (load {before} -> {load()})",
                    flush=True,
                )
    medians = {side: statistics.median(r["cpu"] for r in rows) for side, rows in found.items()}
    ratios = [a["cpu"] / b["cpu"] for a, b in zip(*found.values(), strict=True)]
    for side, rows in found.items():
        cpus = [r["cpu"] for r in rows]
        print(f"{side}: CPU a day {min(cpus):.3f}-{max(cpus):.3f} s, median {medians[side]:.3f} s")
    print(
        f"this code / baseline: {medians['this code'] / medians['baseline']:.2f}x "
        f"(medians); round by round {min(ratios):.2f}x-{max(ratios):.2f}x (target <= 1.10)"
    )


if __name__ == "__main__":
    main()
