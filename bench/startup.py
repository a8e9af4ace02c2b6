"""Benchmark the start-up cost of ``import searchkit`` and ``searchkit --help``.

Each command runs in a fresh interpreter (a subprocess, as a user would start it), several
times; the median wall time is printed beside the median of ``python -c pass`` measured in
the same run, as a ratio, and as the time added on top of that bare interpreter, with the
median CPU time of each (user + system: what a machine shared with other jobs disturbs
least). Also printed: which heavy libraries each command loaded (none is the goal).

Target (issue 9.6): ``import searchkit`` and ``searchkit --help`` each under 0.25 s.

Run it with ``python bench/startup.py [--runs 15] [--src DIR]``; ``--src`` puts another copy
of the source first on the path, e.g. an export of an older commit, to compare.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from figures import emit

HEAVY = ("pandas", "pyarrow", "numpy", "matplotlib", "ipywidgets", "requests", "werkzeug")

CASES = {
    "python -c pass": "pass",
    "import searchkit": "import searchkit",
    "searchkit --help": (
        "import sys; sys.argv = ['searchkit', '--help']\n"
        "from searchkit.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass"
    ),
}

KEYS = {"python -c pass": "pass", "import searchkit": "import", "searchkit --help": "help"}

LOADED = (
    "import sys, io, contextlib\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    exec({code!r})\n"
    "print(','.join(m for m in {heavy!r} if m in sys.modules))"
)


def _env(src: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    return env


# Outside the source tree, so `python -c` does not find the checkout through the cwd.
NEUTRAL_DIR = tempfile.gettempdir()


def _once(code: str, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one fresh interpreter running ``code``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=NEUTRAL_DIR,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs per command (default 15)")
    parser.add_argument("--src", help="a source folder to import searchkit from instead")
    args = parser.parse_args(argv)
    env = _env(args.src)

    for code in CASES.values():  # warm the file cache and the .pyc files
        _once(code, env)
    samples: dict[str, list[float]] = {name: [] for name in CASES}
    cpu: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(args.runs):  # interleaved, so a slow moment hits every command alike
        for name, code in CASES.items():
            wall, used = _once(code, env)
            samples[name].append(wall)
            cpu[name].append(used)

    base = statistics.median(samples["python -c pass"])
    where = args.src or "the installed searchkit"
    print(f"start-up, median of {args.runs} runs each ({where}, {sys.executable}):")
    print(
        f"  {'command':<18} {'median':>9} {'x pass':>8} {'added':>9} {'CPU':>9}   "
        "heavy modules loaded"
    )
    for name, code in CASES.items():
        median = statistics.median(samples[name])
        loaded = subprocess.run(
            [sys.executable, "-c", LOADED.format(code=code, heavy=HEAVY)],
            env=env,
            cwd=NEUTRAL_DIR,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        used = statistics.median(cpu[name])
        print(
            f"  {name:<18} {median * 1000:7.0f} ms {median / base:7.1f}x "
            f"{(median - base) * 1000:6.0f} ms {used * 1000:6.0f} ms   {loaded or '-'}"
        )
        emit(f"startup.{KEYS[name]}", median * 1000, "ms")
        emit(f"startup.{KEYS[name]}.cpu", used * 1000, "ms")
    print("target: import searchkit and searchkit --help each under 250 ms")


if __name__ == "__main__":
    main()
