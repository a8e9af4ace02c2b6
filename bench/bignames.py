"""What a huge index name costs the history: a 1 MiB name x 1,440 points (issue 18, item 4).

A name is stored once per index and file (Parquet's dictionary), so collecting and reading
an index with a 1 MiB name should cost about what a 10-character name costs, not a copy of
the name per point. Each step runs in a fresh subprocess (its peak RSS is its own):

- collect: ``History.collect`` from a real HTTP server on 127.0.0.1 listing one index with
  1,440 points of one UTC day, at that day's last second (still open: no rollup yet);
- throughput: ``History.throughput()``;
- usage: ``usage_frame(history)`` (from the points: the day has no rollup yet);
- compact: ``History.compact()`` (the day's rollup);
- usage-rolled: ``usage_frame(history)`` again (from the rollup).

For each step it prints seconds and peak RSS growth (``ru_maxrss`` after, less the resident
set before the step) for the 1 MiB name and for a 10-character baseline in the same run,
and the ratio. To measure another version of the package, put it first on PYTHONPATH.

The name repeats ``big-name-`` (a file holding it per point still compresses well, as in
the issue's report); ``--random`` makes it random letters, which zstd cannot shrink, so the
file sizes show how many copies a file holds.

Usage: .venv/bin/python bench/bignames.py [--name-bytes 1048576] [--points 1440] [--random]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STEPS = ("collect", "throughput", "usage", "compact", "usage-rolled")
DAY = "2026-11-20"


def _rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _name(size: int, random_letters: bool) -> str:
    if random_letters:
        import random
        import string

        return "".join(random.Random(18).choices(string.ascii_letters, k=size))
    return ("big-name-" * (size // 9 + 1))[:size]


def _body(name: str, points: int) -> bytes:
    sys.path.append(str(ROOT))
    from tests.index_json import index_json

    vector = [
        {"x": f"{DAY} {m // 60:02d}:{m % 60:02d}:00 +0000 UTC", "y": 1.0 + (m % 7)}
        for m in range(points)
    ]
    item = index_json(name, id="0f0e0d0c-0000-4000-8000-000000000001", throughput_vector=vector)
    return json.dumps([item]).encode()


def _step(step: str, store: str, name: str, points: int) -> dict[str, object]:
    sys.path.append(str(ROOT))
    import pandas as pd

    import searchkit as sk

    hist = sk.History(store)
    if step == "collect":
        from tests.faults.harness import FaultServer, reply

        body = _body(name, points)
        with FaultServer() as server:
            server.script("GET", then=reply(200, body))
            with sk.Client(
                username="u", password="p", base_url=server.url, max_retries=0
            ) as client:
                before = _rss_mib()
                started = time.monotonic()
                now = pd.Timestamp(DAY, tz="UTC") + pd.Timedelta("23h59min59s")  # the day open
                summary = hist.collect(client, now=now)
                elapsed = time.monotonic() - started
        rows = summary.new_points
    else:
        before = _rss_mib()
        started = time.monotonic()
        if step == "throughput":
            rows = len(hist.throughput())
        elif step == "compact":
            rows = hist.compact()["rollups_written"]
        else:
            rows = len(sk.usage_frame(hist))
        elapsed = time.monotonic() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": elapsed, "peak_growth_mib": max(peak - before, 0.0), "rows": rows}


def _run(step: str, store: str, name: str, points: int) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, __file__, "--one", step, store, name, str(points)],
        capture_output=True,
        text=True,
        env=os.environ,
        timeout=900,
        check=False,
    )
    lines = out.stdout.strip().splitlines()
    if out.returncode or not lines:
        raise SystemExit(f"{step} failed: {out.stderr.strip()[-400:]}")
    result: dict[str, object] = json.loads(lines[-1])
    return result


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*.parquet"))


def main() -> None:
    if len(sys.argv) == 6 and sys.argv[1] == "--one":
        step, store, name, points = sys.argv[2:]
        size, _, kind = name.partition(":")
        print(json.dumps(_step(step, store, _name(int(size), kind == "random"), int(points))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name-bytes", type=int, default=1 << 20)
    parser.add_argument("--points", type=int, default=1440)
    parser.add_argument("--random", action="store_true", help="a name of random letters")
    args = parser.parse_args()
    import searchkit

    print(f"searchkit from {Path(searchkit.__file__).parent}")
    kind = "random" if args.random else "repeat"
    print(f"{args.points:,} points; names of 10 and {args.name_bytes:,} bytes ({kind})")
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for label, size in (("baseline", 10), ("big", args.name_bytes)):
            store = str(Path(tmp) / label)
            name = f"{size}:{kind}"  # the child process makes the name itself
            results[label] = {step: _run(step, store, name, args.points) for step in STEPS}
            results[label]["bytes"] = _size(Path(store))  # type: ignore[assignment]
    base, big = results["baseline"], results["big"]
    print(
        f"{'step':<11} {'10-char s':>10} {'big s':>8} {'ratio':>7}   "
        f"{'10-char MiB':>11} {'big MiB':>9} {'ratio':>7}"
    )
    for step in STEPS:
        b, g = base[step], big[step]
        print(
            f"{step:<11} {b['seconds']:>10.2f} {g['seconds']:>8.2f} "
            f"{g['seconds'] / max(b['seconds'], 1e-9):>6.1f}x   "
            f"{b['peak_growth_mib']:>11.0f} {g['peak_growth_mib']:>9.0f} "
            f"{g['peak_growth_mib'] / max(b['peak_growth_mib'], 1.0):>6.1f}x"
        )
    print(f"files on disk: {base['bytes']:,} bytes (10-char) vs {big['bytes']:,} bytes (big)")


if __name__ == "__main__":
    main()
