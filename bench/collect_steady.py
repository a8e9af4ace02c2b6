"""Steady collect rounds on a store that already holds history, beside a baseline's code.

What the README's "collect, steady round, 1,000 indexes" measures, in CPU time and against
another code in the same run: a store of ``--days`` days of ``--indexes`` indexes (the
dataset of ``bench/history.py``, points written once and shared), each code with the
rollups of the closed days it wrote itself (a rollup is named and checked by the code that
reads it). Then, per run, in a fresh process of that code on a copy of its store (the
points hard-linked: no file is ever changed in place): an in-process emulator with the
indexes live, the first round (every point of the day's window new), the merge it leaves
running waited for, then ``--rounds`` steady rounds ten minutes apart, each after one plain
``list_indexes()`` of the same indexes. CPU is ``time.process_time`` of the whole process
(the emulator's serving thread included, as in the README's wall-time figure), wall time
beside it. The codes run in turn, A B A B (``--pairs`` times), so the machine's load falls
on both alike; the ratio is of the medians of each code's steady rounds, given with the
range of the per-run ratios and the load.

Usage: .venv/bin/python bench/collect_steady.py --baseline /tmp/base-22d64ca
           [--pairs 3] [--rounds 5] [--indexes 1000] [--days 28] [--keep DIR]
(``--baseline`` is a source tree: ``mkdir -p /tmp/base-SHA && git archive SHA searchkit |
tar -x -C /tmp/base-SHA``.) About 3 minutes on 2 cores with the defaults.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from figures import emit  # noqa: E402

END_DAY = "2026-11-20"  # bench/history.py's dataset ends the day before
#: Where a code's figures go (bench/readme_figures.py reads ".baseline." as the base's).
MARK = {"this code": "", "baseline": ".baseline"}


def linked_copy(source: Path, target: Path) -> None:
    """A copy of the store whose files are hard links (a store's files are never changed
    in place: written whole, then deleted)."""
    shutil.copytree(source, target, copy_function=os.link)


def measure(store: str, indexes: int, rounds: int) -> dict[str, object]:
    """One run in this process (``import searchkit`` finds the code measured)."""
    warnings.simplefilter("ignore")
    import pandas as pd

    from searchkit import History
    from searchkit.emulator import Emulator
    from searchkit.history import compaction

    end = pd.Timestamp(END_DAY, tz="UTC")
    with tempfile.TemporaryDirectory(prefix="searchkit-steady-") as tmp:
        root = Path(tmp) / "store"
        linked_copy(Path(store), root)
        with Emulator(seed=1, clock=end.timestamp() - 3600) as emu:
            specs = [
                {"name": f"live-{i:04d}", "region": "eu-west-1", "type": "payg"}
                for i in range(indexes)
            ]
            emu.store.create_many(emu.account, specs)
            hist = History(str(root))
            with emu.client(timeout=120) as client:
                cpu = time.process_time()
                hist.collect(client, now=emu.now())
                first = time.process_time() - cpu
                # The merge the first round leaves on a thread (this code) must not fall
                # into the first steady round's CPU.
                getattr(compaction, "settle_all", lambda: None)()
                steady, own, wall, lists = [], [], [], []
                for _ in range(rounds):
                    emu.advance(600)
                    cpu = time.process_time()
                    client.list_indexes()
                    lists.append(time.process_time() - cpu)
                    cpu, mine = time.process_time(), time.thread_time()
                    started = time.perf_counter()
                    hist.collect(client, now=emu.now())
                    steady.append(time.process_time() - cpu)
                    own.append(time.thread_time() - mine)
                    wall.append(time.perf_counter() - started)
    return {"first": first, "steady": steady, "own": own, "wall": wall, "lists": lists}


def run(tree: Path, store: Path, indexes: int, rounds: int) -> dict[str, object]:
    """One run of ``tree``'s code in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, __file__, "--measure", str(store), str(indexes), str(rounds)],
        env=env,
        cwd=tempfile.gettempdir(),  # not this tree: its searchkit would come first
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result: dict[str, object] = json.loads(out.splitlines()[-1])
    return result


def prepare(tree: Path, store: Path) -> None:
    """Write the rollups of ``store``'s closed days with ``tree``'s code."""
    code = (
        "import sys, warnings; warnings.simplefilter('ignore'); import searchkit as sk; "
        "h = sk.History(sys.argv[1]); h.refresh_rollups(h.days()[:-1])"
    )
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cwd = tempfile.gettempdir()
    subprocess.run([sys.executable, "-c", code, str(store)], env=env, cwd=cwd, check=True)


def load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=False, help="a source tree to measure beside")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--indexes", type=int, default=1000)
    parser.add_argument("--days", type=int, default=28)
    parser.add_argument(
        "--keep", help="write the stores here and keep them (a later run with it reuses them)"
    )
    parser.add_argument("--measure", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        store, indexes, rounds = args.measure
        print(json.dumps(measure(store, int(indexes), int(rounds))))
        return
    from history import write_dataset

    codes = {"this code": ROOT}
    if args.baseline:
        codes["baseline"] = Path(args.baseline).resolve()
    print(f"load before: {load()}")
    with tempfile.TemporaryDirectory(prefix="searchkit-steady-bench-") as tmp:
        folder = Path(args.keep or tmp)
        points = folder / "points"
        if not points.exists():
            write_dataset(points, args.indexes, args.days)
        stores = {}
        for label, tree in codes.items():
            stores[label] = folder / label.replace(" ", "-")
            if not stores[label].exists():
                linked_copy(points, stores[label])
                prepare(tree, stores[label])
        found: dict[str, list[dict[str, object]]] = {label: [] for label in codes}
        for pair in range(args.pairs):
            for label, tree in codes.items():
                got = run(tree, stores[label], args.indexes, args.rounds)
                found[label].append(got)
                steady = got["steady"]
                assert isinstance(steady, list)
                # The README's wall range: each run's median (the baseline's as "baseline").
                emit(f"steady{MARK[label]}.wall", statistics.median(got["wall"]))  # type: ignore[arg-type]
                print(
                    f"{label:>9}, run {pair + 1}: steady rounds CPU "
                    f"{', '.join(f'{s:.2f}' for s in steady)} s (median "
                    f"{statistics.median(steady):.2f} s, the collector's thread "
                    f"{statistics.median(got['own']):.3f} s; wall "  # type: ignore[arg-type]
                    f"{statistics.median(got['wall']):.2f} s); plain list "  # type: ignore[arg-type]
                    f"{statistics.median(got['lists']):.2f} s; first round {got['first']:.2f} s",  # type: ignore[arg-type]
                    flush=True,
                )
    medians = {
        label: [statistics.median(r["steady"]) for r in runs]  # type: ignore[arg-type]
        for label, runs in found.items()
    }
    lists = {
        label: [statistics.median(r["lists"]) for r in runs]  # type: ignore[arg-type]
        for label, runs in found.items()
    }
    for label in codes:
        every = [s for r in found[label] for s in r["steady"]]  # type: ignore[attr-defined]
        print(
            f"{label}: steady round CPU median {statistics.median(every):.3f} s (runs "
            f"{min(medians[label]):.2f}-{max(medians[label]):.2f} s), "
            f"{statistics.median(every) / statistics.median(lists[label]):.2f}x one plain list"
        )
        emit(f"steady{MARK[label]}.cpu", statistics.median(every))
        vs_list = statistics.median(every) / statistics.median(lists[label])
        emit(f"steady{MARK[label]}.vs_list", vs_list, "x")
    ours = [s for r in found["this code"] for s in r["steady"]]  # type: ignore[attr-defined]
    emit("history.collect.steady_cpu", statistics.median(ours))
    if args.baseline:
        theirs = [s for r in found["baseline"] for s in r["steady"]]  # type: ignore[attr-defined]
        ratio = statistics.median(ours) / statistics.median(theirs)
        runs = [a / b for a, b in zip(medians["this code"], medians["baseline"], strict=True)]
        print(
            f"steady round CPU, this code / baseline: {ratio:.3f}x by the medians of all "
            f"rounds (per pair {min(runs):.2f}x-{max(runs):.2f}x)"
        )
        # The collector's own thread: without the emulator's serving (the same code in
        # both, about half the process's CPU) and Arrow's threads.
        mine, base = (
            [s for r in found[label] for s in r["own"]]  # type: ignore[attr-defined]
            for label in ("this code", "baseline")
        )
        print(
            f"the collector's thread alone: {statistics.median(mine):.3f} s vs "
            f"{statistics.median(base):.3f} s = "
            f"{statistics.median(mine) / statistics.median(base):.3f}x; load after: {load()}"
        )
        emit("history.collect.steady_cpu.vs_baseline", ratio, "x")
        emit("steady.vs_baseline", ratio, "x")


if __name__ == "__main__":
    main()
