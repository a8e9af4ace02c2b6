"""Every benchmark figure the README quotes, re-measured in one run beside its baselines.

Runs the bench scripts (each prints its figures beside the baseline it measures in the same
run, and hands them to ``bench/figures.py``'s ``emit``), then prints one table: README
section, figure, what the README says, measured now, the baseline of the same run, their
ratio, and whether it lies within the range the README states (a single figure: within
10% of it; "better" is outside on the good side). The README figures no script produces are
listed after it, with the reason.

``--base COMMIT`` measures the same figures for another commit in the same run: a
``git worktree`` of it (under .bench/trees/, its own venv when its runtime dependencies
differ from this tree's) runs the same bench scripts (this tree's, copied over its
``bench/``) with its code first on ``PYTHONPATH``, each script alternately for this code
and that one (A B A B with ``--rounds 2``), so that a busy moment hits both alike. The
table then adds that commit's figure, now / base, and whether now is within 10% of it or
better (issue 26). A script that cannot run on that commit's code says so in the table
rather than give a number. The year's and S3's comparisons use the scripts' own
``--baseline`` (fresh processes, the base's own store for the year: ``--year-base-store``).

The wire path (``bench/list.py``) is always measured beside ``ebb8985``, the code before the
layered redesign, in the same run (issue 30).

``--differ DIR`` lists, from an earlier run's folder, only the README figures the run did
not reproduce (outside the README's range, on either side), with the README's words and the
run's figure: the sentences to edit after a quiet run.

Usage: .venv/bin/python bench/readme_figures.py [--quick] [--base COMMIT] [--rounds N]
           [--only JOB,...] [--year-store DIR] [--year-base-store DIR] [--table DIR]
           [--differ DIR]
(``make bench``, ``make bench QUICK=1``, ``make bench BASE=22d64ca``.)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomllib
from readme_catalogue import FIGURES, NOT_PRODUCED, Figure, job_of

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TREES = ROOT / ".bench" / "trees"
WIRE_BASE = "ebb8985"  # the code before the layered redesign (issue 30 item 7)


@dataclass(frozen=True)
class Job:
    script: str
    args: tuple[str, ...] = ()
    quick: bool = True  # part of `make bench QUICK=1`
    own_baseline: bool = False  # compares with --base itself (--baseline SRC)


_YEAR = ("--year", "--days", "365", "--indexes", "1000")
_TWICE = ("--repeat", "2")
JOBS: dict[str, Job] = {
    "throughput": Job("throughput.py"),
    "startup": Job("startup.py"),
    "list": Job(
        "list.py",
        ("--indexes", "1000", "5000", "--memory-indexes", "1000", "--lean-above", "1000"),
        own_baseline=True,
    ),
    "history": Job("history.py"),
    "forecast": Job("forecast.py", ("--speed",)),
    "s3": Job("s3.py", own_baseline=True),
    "pruning": Job("pruning.py"),
    "today": Job("today.py"),
    # The collect rounds across midnight, beside --base in turn (bench/today.py --midnight).
    "midnight": Job(
        "today.py", ("--only-midnight", "--repeat", "2"), quick=False, own_baseline=True
    ),
    "alerts": Job("alerts.py", ("--speed",)),
    "accuracy": Job("forecast.py", ("--accuracy",), quick=False),
    "alerts-accuracy": Job("alerts.py", ("--accuracy",), quick=False),
    "layouts": Job("history.py", ("--layouts", "--indexes", "1000", "--days", "30"), quick=False),
    "collect": Job("history.py", ("--collect", "--rounds", "7"), quick=False),
    # The README's steady collect round: 3 pairs of 5 rounds, beside --base (about 3 min).
    "steady": Job("collect_steady.py", (), quick=False, own_baseline=True),
    "year": Job("history.py", _YEAR, False, own_baseline=True),
    # The year in parts of a few minutes each (a quiet re-run between other work):
    "year-usage": Job("history.py", (*_YEAR, "--only", "usage", *_TWICE), False, True),
    "year-drawn": Job("history.py", (*_YEAR, "--only", "plot,cockpit", *_TWICE), False, True),
    "year-info": Job("history.py", (*_YEAR, "--only", "info"), False, own_baseline=True),
    # The year's store (--year-store) uploaded to moto's server: 2.1 GiB in /tmp, ~6 minutes.
    "s3year": Job(
        "s3.py",
        (
            *("--zones", "UTC,America/New_York,Asia/Kolkata,Pacific/Chatham"),
            *("--only", "usage_frame,forecast_limits,info", "--repeat", "2"),
        ),
        quick=False,
        own_baseline=True,
    ),
}


def git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()


def dependencies(tree: Path) -> list[str]:
    with open(tree / "pyproject.toml", "rb") as file:
        return sorted(tomllib.load(file)["project"]["dependencies"])


def tree_of(commit: str, own_venv: bool = True) -> tuple[Path, str]:
    """A worktree of ``commit`` holding this tree's bench scripts, and the Python to run
    them with: this venv's when the runtime dependencies are the same, else its own."""
    sha = git("rev-parse", "--short=7", f"{commit}^{{commit}}")
    tree = TREES / sha
    if not tree.exists():
        TREES.mkdir(parents=True, exist_ok=True)
        git("worktree", "add", "--detach", str(tree), sha)
    for script in HERE.glob("*.py"):  # the same measurements, of that commit's code
        shutil.copy2(script, tree / "bench" / script.name)
    python = sys.executable
    if own_venv and dependencies(tree) != dependencies(ROOT):
        subprocess.run(["make", ".venv/.installed"], cwd=tree, check=True)
        python = str(tree / ".venv" / "bin" / "python")
    found = subprocess.run(
        [python, "-c", "import searchkit; print(searchkit.__file__)"],
        env={**os.environ, "PYTHONPATH": str(tree)},
        cwd=tree,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if not found.startswith(str(tree)):
        raise SystemExit(f"{commit}: import searchkit found {found}, not {tree}")
    return tree, python


def load() -> str:
    return "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def run_job(
    name: str, side: str, tree: Path, python: str, args: list[str], out: Path, label: str
) -> None:
    """Run one bench script on ``tree``'s code; its figures go to ``out/side.jsonl``."""
    job = JOBS[name]
    env = {
        **os.environ,
        "PYTHONPATH": str(tree),
        "SEARCHKIT_BENCH_FIGURES": str(out / f"{side}.jsonl"),
        "PYTHONUNBUFFERED": "1",
    }
    command = [python, str(tree / "bench" / job.script), *job.args, *args]
    print(f"\n===== {name}: {' '.join(command[1:])} ({label}; load {load()}) =====", flush=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started, load_before = time.perf_counter(), load()
    with open(out / f"{side}-{name}.log", "a", encoding="utf-8") as log:
        process = subprocess.Popen(
            command, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        assert process.stdout is not None
        tail: list[str] = []
        for line in process.stdout:
            sys.stdout.write(line)
            log.write(line)
            tail = [*tail, line.rstrip()][-3:]
        code = process.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    record = {
        "job": name,
        "side": side,
        "code": code,
        "wall": time.perf_counter() - started,
        "cpu": cpu,
        "load": f"{load_before} -> {load()}",
        "tail": tail,
    }
    with open(out / "runs.jsonl", "a", encoding="utf-8") as runs:
        runs.write(json.dumps(record) + "\n")
    print(f"----- {name} ({label}): exit {code}, {record['wall']:.0f} s, {cpu:.0f} s CPU")


def measure(args: argparse.Namespace, out: Path) -> None:
    chosen = (
        args.only.split(",")
        if args.only
        else [n for n, j in JOBS.items() if j.quick or not args.quick]
    )
    unknown = set(chosen) - set(JOBS)
    if unknown:
        raise SystemExit(f"unknown jobs {sorted(unknown)}; known: {', '.join(JOBS)}")
    wire, _ = tree_of(WIRE_BASE, own_venv=False)  # list.py runs it with this Python
    base = tree_of(args.base) if args.base else None
    (out / "meta.json").write_text(
        json.dumps(
            {
                "now": git("rev-parse", "--short=7", "HEAD"),
                "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
                "base": git("rev-parse", "--short=7", args.base) if args.base else None,
                "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "cores": os.cpu_count(),
                "jobs": chosen,
            }
        )
    )
    for name in chosen:
        job = JOBS[name]
        extra = ["--baseline", str(wire)] if name == "list" else []
        if name == "list" and base:
            extra.append(str(base[0]))
        if name.startswith("year"):
            extra += ["--keep", args.year_store] if args.year_store else []
            if base and args.year_base_store:
                extra += ["--baseline", str(base[0]), "--baseline-store", args.year_base_store]
            elif base:  # another code's rollups are not taken: it would read 525M points
                print(
                    f"the year: {args.base} not measured (give --year-base-store, a store it wrote)"
                )
        elif name in ("s3", "steady", "midnight") and base:
            extra += ["--baseline", str(base[0])]
        elif name == "s3year":  # this code only: another code's rollups are not taken
            if not args.year_store:
                print("the year on S3: not measured (give --year-store, this code's year)")
                continue
            extra += ["--store", args.year_store]
        for round_ in range(1, args.rounds + 1):
            label = f"round {round_}/{args.rounds}"
            run_job(name, "now", ROOT, sys.executable, extra, out, f"this code, {label}")
            if base and not job.own_baseline:
                run_job(name, "base", base[0], base[1], extra, out, f"{args.base}, {label}")


# ---- the table ---------------------------------------------------------------------------

Found = dict[tuple[str, str], list[float]]


def read_lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def values(out: Path, base: str | None) -> Found:
    """Every figure of the run: (side, key) -> the values of its rounds."""
    found: Found = {}
    for side in ("now", "base"):
        for row in read_lines(out / f"{side}.jsonl"):
            if row["value"] is not None:
                found.setdefault((side, row["key"]), []).append(row["value"])
    # What the scripts measured of the base themselves (--baseline: the year and S3 say
    # "baseline", the wire path names the commit) are the base's figures.
    marks = [".baseline."] + ([f".{base}."] if base else [])
    for (side, key), got in list(found.items()):
        for mark in marks:
            if side == "now" and mark in key:
                found.setdefault(("base", key.replace(mark, ".")), []).extend(got)
    return found


def pick(found: Found, side: str, key: str | None) -> list[float]:
    if key is None:
        return []
    if "*" not in key:
        return found.get((side, key), [])
    head, tail = key.split("*")
    return [
        value
        for (where, name), got in found.items()
        if where == side and name.startswith(head) and name.endswith(tail)
        for value in got
    ]


def best(figure: Figure, got: list[float]) -> float:
    return max(got) if figure.better == "higher" else min(got)


def shown(figure: Figure, got: list[float], unit: str | None = None) -> str:
    if not got:
        return ""
    unit = figure.unit if unit is None else unit
    low, high = min(got), max(got)
    if low == high:
        return f"{low:{figure.fmt}}{unit}"
    return f"{low:{figure.fmt}}-{high:{figure.fmt}}{unit}"


def checked(figure: Figure, found: Found, side: str) -> float | None:
    """What the README's range applies to: the figure, or its ratio to its baseline."""
    got = pick(found, side, figure.key)
    if not got:
        return None
    if not figure.on_ratio:
        return best(figure, got)
    against = pick(found, side, figure.baseline)
    return best(figure, got) / min(against) if against else None


def verdict(figure: Figure, value: float) -> str:
    if figure.range is None:
        return ""
    low, high = figure.range
    if low <= value <= high:
        return "in range"
    if figure.better in ("same", "none"):
        return "DIFFERS"
    good = value < low if figure.better == "lower" else value > high
    return "better" if good else "OUTSIDE"


def against_base(figure: Figure, now: float, then: float) -> list[str]:
    change = now / then if then else float("nan")
    if figure.better == "higher":
        ok = "yes" if change >= 1 / 1.10 else "NO"
    elif figure.better == "lower":
        ok = "yes" if change <= 1.10 else "NO"
    elif figure.better == "same":
        ok = "same" if abs(change - 1) <= 1e-9 else "DIFFERS"
    else:
        ok = "(a baseline)"
    then_shown = f"{then:.2f}x" if figure.on_ratio else f"{then:{figure.fmt}}{figure.unit}"
    return [then_shown, f"{change:.2f}", ok]


def missing(job: str, side: str, runs: list[dict[str, Any]]) -> str:
    """Why a figure has no value on ``side``: the job failed (its last line), or did not
    run, or ran without producing it."""
    if JOBS[job].own_baseline and side == "base":
        side = "now"  # measured by the script itself, beside this code
    mine = [r for r in runs if r["job"] == job and r["side"] == side]
    if not mine:
        return "not run"
    failed = [r for r in mine if r["code"] != 0]
    if failed:
        last = failed[-1]["tail"][-1] if failed[-1]["tail"] else ""
        return f"failed: {last[:70]}"
    return "not produced"


def row_of(figure: Figure, found: Found, runs: list[dict[str, Any]], base: bool) -> list[str]:
    job = job_of(figure.key)
    row = [figure.section, figure.what, figure.readme]
    got = pick(found, "now", figure.key)
    if not got:
        return row + [missing(job, "now", runs), "", "", ""] + (["", "", ""] if base else [])
    against = pick(found, "now", figure.baseline)
    value = checked(figure, found, "now")
    ratio = best(figure, got) / min(against) if against else None
    row += [
        shown(figure, got),
        shown(figure, against),
        "" if ratio is None else f"{ratio:.2f}x",
        "" if value is None else verdict(figure, value),
    ]
    if base:
        then = checked(figure, found, "base")
        if then is None or value is None:
            row += [missing(job, "base", runs), "", ""]
        else:
            row += against_base(figure, value, then)
    return row


def table(out: Path) -> None:
    """Print the summary table of the run in ``out``."""
    meta = json.loads((out / "meta.json").read_text()) if (out / "meta.json").exists() else {}
    runs = read_lines(out / "runs.jsonl")
    base = meta.get("base")
    found = values(out, base)
    header = ["README section", "figure", "README says", "now", "baseline (same run)"]
    header += ["ratio", "README range"]
    if base:
        header += [base, f"now/{base}", "within 10%"]
    rows = [row_of(figure, found, runs, bool(base)) for figure in FIGURES]
    for above, row in zip(FIGURES, rows[1:], strict=False):
        if row[0] == above.section:  # each section named once
            row[0] = ""
    widths = [min(48, max(len(r[i]) for r in [header, *rows])) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c[:w].ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    dirty = " (with uncommitted changes)" if meta.get("dirty") else ""
    print(
        f"\n===== README figures: this code {meta.get('now', '?')}{dirty}"
        + (f" beside {base}" if base else "")
        + f"; started {meta.get('started', '?')} on {meta.get('cores', '?')} cores ====="
    )
    for run in runs:
        print(
            f"  {run['job']:<16} {run['side']:<4} exit {run['code']}  {run['wall']:5.0f} s wall"
            f"  {run['cpu']:5.0f} s CPU  load {run['load']}"
        )
    print(line(header))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print(line(row))
    print("\nREADME figures `make bench` does not produce:")
    for what, why in NOT_PRODUCED:
        print(f"  - {what}: {why}")


def differ(out: Path) -> int:
    """Print the README figures the run in ``out`` measured outside the README's range
    (README section, figure, what the README says, what the run gave and the verdict) and
    how many it reproduced; return how many differ."""
    meta = json.loads((out / "meta.json").read_text()) if (out / "meta.json").exists() else {}
    found = values(out, meta.get("base"))
    loads = sorted({run["load"] for run in read_lines(out / "runs.jsonl")})
    differing, kept = [], 0
    for figure in FIGURES:
        value = checked(figure, found, "now")
        if value is None or figure.range is None:
            continue
        said = verdict(figure, value)
        if said == "in range":
            kept += 1
            continue
        got = shown(figure, pick(found, "now", figure.key))
        if figure.on_ratio:
            got += f" (ratio {value:.2f}x)"
        differing.append(f"  [{said}] {figure.section} / {figure.what}: README {figure.readme!r}, "
                         f"this run {got}")  # fmt: skip
    print(
        f"README figures of {out} (this code {meta.get('now', '?')}, load {', '.join(loads)}): "
        f"{kept} reproduced, {len(differing)} differ"
    )
    print("\n".join(differing))
    return len(differing)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="skip the slow jobs: the accuracy tables, the 30-day layouts, the collect rounds "
        "and the year",
    )
    parser.add_argument("--base", help="a commit to measure beside this code (e.g. 22d64ca)")
    parser.add_argument("--rounds", type=int, default=1, help="A B rounds per script")
    parser.add_argument("--only", help=f"comma-separated jobs: {', '.join(JOBS)}")
    parser.add_argument("--year-store", help="the year's store (reused if written)")
    parser.add_argument("--year-base-store", help="the store --base's code wrote, for the year")
    parser.add_argument("--out", help="where the figures go (default .bench/run-TIME)")
    parser.add_argument("--table", help="only print the table of an earlier run's folder")
    parser.add_argument("--differ", help="only the figures an earlier run did not reproduce")
    args = parser.parse_args()
    if args.table:
        table(Path(args.table))
        return
    if args.differ:
        differ(Path(args.differ))
        return
    out = Path(args.out or ROOT / ".bench" / time.strftime("run-%Y%m%d-%H%M%S", time.gmtime()))
    out.mkdir(parents=True, exist_ok=True)
    measure(args, out)
    table(out)
    print(
        f"\nfigures and logs: {out} (print the table again: bench/readme_figures.py --table {out})"
    )


if __name__ == "__main__":
    main()
