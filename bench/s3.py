"""Benchmark the history on S3 (moto's server over loopback) against a local disk: time and
the requests each call makes, counted by the server.

A store of ``--indexes`` indexes x ``--days`` compacted days with their rollups and one
limits snapshot (as collect leaves it; written by bench/history.py's writer) is read from
a local folder and from a bucket on moto's S3 server (tests/history/s3server.py, which
counts the requests it answers). For ``forecast_limits``, ``usage_frame`` and ``info()``
it prints the best of ``--repeat`` times on each, their ratio, and the requests of one call
by kind (LIST, HEAD, GET). With ``--baseline SRC`` (a source tree, e.g. ``git archive
ebb8985 searchkit | tar -x -C SRC``) the same is measured for that code in the same run.

Usage: .venv/bin/python bench/s3.py [--indexes 200] [--days 14] [--baseline SRC]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
sys.path.append(str(ROOT))  # tests.history.s3server; a --baseline tree goes first

OPERATIONS = ("forecast_limits", "usage_frame", "info")


def call(operation: str, hist: Any) -> Any:
    import searchkit as sk

    if operation == "forecast_limits":
        return sk.forecast_limits(hist)
    if operation == "usage_frame":
        return sk.usage_frame(hist)
    return hist.info()


def measure(store: Path, repeat: int) -> dict[str, Any]:
    """In this process: serve ``store`` (its points and limits) from moto and time each
    operation on both, after this code has written each copy's rollups (a rollup names its
    day's files as its own code reads them: by name, size and modification time now, and an
    upload changes the time, so each copy gets the rollups its files would have)."""
    import shutil
    import tempfile
    import warnings

    import boto3
    import pyarrow.fs as pafs

    from searchkit import History  # the public name: a --baseline tree's too
    from tests.history.s3server import CountingMotoServer, options

    server = CountingMotoServer()
    server.start()
    local = None
    try:
        s3 = boto3.client(
            "s3",
            endpoint_url=server.endpoint,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            region_name="us-east-1",
        )
        s3.create_bucket(Bucket="bench")
        fs = pafs.S3FileSystem(**options(server.endpoint))
        pafs.copy_files(str(store), "bench/usage", destination_filesystem=fs)
        local = Path(tempfile.mkdtemp(prefix="searchkit-s3-local-"))
        shutil.copytree(store, local / "usage")
        remote = History("s3://bench/usage", storage_options=options(server.endpoint))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for hist in (History(local / "usage"), remote):
                hist.refresh_rollups(hist.days())
        store = local / "usage"
        results: dict[str, Any] = {}
        for operation in OPERATIONS:
            row: dict[str, Any] = {}
            for where in ("local", "s3"):
                best = float("inf")
                for attempt in range(repeat):
                    hist = (
                        History(store)
                        if where == "local"
                        else History("s3://bench/usage", storage_options=options(server.endpoint))
                    )
                    server.reset()
                    started = time.perf_counter()
                    call(operation, hist)
                    best = min(best, time.perf_counter() - started)
                    if attempt == 0 and where == "s3":
                        row["requests"] = server.counted()
                row[where] = best
            results[operation] = row
        return results
    finally:
        server.stop()
        if local is not None:
            shutil.rmtree(local, ignore_errors=True)


def run(store: Path, repeat: int, source: str | None) -> dict[str, Any]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [source, str(ROOT)]))
    out = subprocess.run(
        [sys.executable, __file__, "--measure", str(store), "--repeat", str(repeat)],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def shown(requests: dict[str, int]) -> str:
    total = sum(requests.values())
    kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(requests.items()))
    return f"{total} requests ({kinds})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--indexes", type=int, default=200)
    parser.add_argument("--days", type=int, default=14)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", help="a source tree to measure beside this code")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.measure:
        print(json.dumps(measure(Path(args.measure), args.repeat)))
        return
    from figures import emit
    from history import write_dataset

    with tempfile.TemporaryDirectory(prefix="searchkit-requests-") as folder:
        store = Path(folder) / "usage"
        write_dataset(store, args.indexes, args.days)  # each code writes its rollups
        print(
            f"{args.indexes} indexes x {args.days} days, compacted with rollups; moto's S3 "
            f"server over loopback vs a local disk, best of {args.repeat}"
        )
        runs = {"this code": run(store, args.repeat, None)}
        if args.baseline:
            runs[f"baseline {args.baseline}"] = run(store, args.repeat, args.baseline)
        for operation in OPERATIONS:
            for label, results in runs.items():
                row = results[operation]
                print(
                    f"{operation:16} {label:28} local {row['local']:.2f} s, S3 {row['s3']:.2f} s "
                    f"= {row['s3'] / row['local']:.2f}x; {shown(row['requests'])}"
                )
                side = "" if label == "this code" else ".baseline"
                emit(f"s3.{operation}{side}.local", row["local"])
                emit(f"s3.{operation}{side}.s3", row["s3"])
                emit(f"s3.{operation}{side}.requests", sum(row["requests"].values()), "")
                emit(f"s3.{operation}{side}.lists", row["requests"].get("LIST", 0), "")


if __name__ == "__main__":
    main()
