"""Benchmark the history on S3 (moto's server over loopback) against a local disk: time and
the requests each call makes, counted by the server.

A store of ``--indexes`` indexes x ``--days`` compacted days with their rollups and one
limits snapshot (as collect leaves it; written by bench/history.py's writer), or the store
``--store`` names (a year, say: its points are never written), is read from a local folder
and from a bucket on moto's S3 server (tests/history/s3server.py, which counts the requests
it answers). For ``forecast_limits``, ``usage_frame`` and ``info()`` it prints the best of
``--repeat`` calls on each, in wall and CPU time (the measured process's: moto's server
runs in a process of its own), their ratio, and the requests of one call by kind
(LIST, HEAD, GET). ``--zones`` measures ``usage_frame`` and ``forecast_limits`` in each zone
given (``info()`` has none). With ``--baseline SRC`` (a source tree, e.g. ``git archive
22d64ca searchkit | tar -x -C SRC``; given twice, two trees) the same is measured for that
code in the same run, each code in a fresh process, in turn (A B A B ...) for ``--rounds``
rounds; the figures are then the range over the rounds, each with the load average when its
process started. Each call's peak resident memory is printed too (the process's high-water
mark, reset before the call: what the process held before it, and what the call added);
``--alone`` measures each operation and zone in a process of its own, the S3 call first, so
that its peak is the call's alone (with the imports), not what earlier calls left.
With ``--store`` the store is uploaded once (minutes for a year) and the one server
serves it to every code and round; the server's CPU time (moto's, per call) is printed
beside the measured process's. ``--latency MS`` makes the server wait that long before
each answer, as a real bucket's round trip does (loopback answers in well under a
millisecond).

Usage: .venv/bin/python bench/s3.py [--indexes 200] [--days 14] [--baseline SRC]
       [--rounds 2] [--zones UTC,America/New_York,Asia/Kolkata,Pacific/Chatham]
       [--store PATH] [--only usage_frame,forecast_limits] [--latency 50]
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import types
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
sys.path.append(str(ROOT))  # tests.history.s3server; a --baseline tree goes first


@functools.cache
def _s3server() -> types.ModuleType:
    """This tree's tests/history/s3server.py, whichever tree is first on the path: a
    --baseline worktree (make bench BASE=...) goes first for ``searchkit`` and holds an
    older ``tests`` package of its own (22d64ca's has no ``new_bucket``)."""
    path = ROOT / "tests" / "history" / "s3server.py"
    spec = importlib.util.spec_from_file_location("searchkit_bench_s3server", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


OPERATIONS = ("forecast_limits", "usage_frame", "info")
# Also measured when asked (--only plot_utilization): the picture drawn, as bench/history.py's
# year-drawn job draws it on a local disk.
EXTRA = ("plot_utilization", "quota_cockpit")
LATENCY = "SEARCHKIT_BENCH_S3_LATENCY_MS"  # --latency, for the server's process
ZONED = ("forecast_limits", "usage_frame", "plot_utilization", "quota_cockpit")
# The cockpit's instant (--now): the same for the local and the S3 copy, so their rows compare.
NOW = "SEARCHKIT_BENCH_S3_NOW"


def call(operation: str, hist: Any, zone: str) -> Any:
    import searchkit as sk

    # In UTC no tz is given: the call as 22d64ca took it (its forecast_limits had no tz).
    tz = {} if zone == "UTC" else {"tz": zone}
    if operation == "forecast_limits":
        return sk.forecast_limits(hist, **tz)
    if operation == "usage_frame":
        return sk.usage_frame(hist, **tz)
    if operation == "plot_utilization":
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        ax = sk.plot_utilization(hist, **tz)
        ax.figure.canvas.draw()
        # What it shows: its cells and the rows' names (the title names no location).
        drawn = Drawn(
            [image.get_array() for image in ax.images],
            [label.get_text() for label in ax.get_yticklabels()],
        )
        plt.close(ax.figure)
        return drawn
    if operation == "quota_cockpit":
        return _cockpit_rows(hist, zone)
    return hist.info()


def _cockpit_rows(hist: Any, zone: str) -> Any:
    """``quota_cockpit(hist, tz=zone)`` until its table and first picture show, as
    bench/history.py's year-drawn job waits for it; its rows (what it shows)."""
    import pandas as pd

    import searchkit as sk

    now = os.environ.get(NOW)
    cockpit = sk.quota_cockpit(
        hist, tz=None if zone == "UTC" else zone, now=pd.Timestamp(now) if now else None
    )
    deadline = time.perf_counter() + 300
    while cockpit.picture_png is None or not cockpit.page_lines:
        if time.perf_counter() > deadline:
            raise TimeoutError("the cockpit did not show its table and picture in 300 s")
        time.sleep(0.002)
    rows = cockpit.rows.copy()
    cockpit.wait()
    cockpit.close()
    return rows


class Drawn:
    """A drawn ``plot_utilization``: its cells (masked arrays) and row labels."""

    def __init__(self, cells: list[Any], rows: list[str]) -> None:
        self.cells, self.rows = cells, rows

    def __eq__(self, other: object) -> bool:
        import numpy as np

        return (
            isinstance(other, Drawn)
            and self.rows == other.rows
            and len(self.cells) == len(other.cells) > 0
            and all(
                np.array_equal(np.ma.getmaskarray(a), np.ma.getmaskarray(b))
                and np.array_equal(np.ma.filled(a, 0), np.ma.filled(b, 0))
                for a, b in zip(self.cells, other.cells, strict=True)
            )
        )

    __hash__ = None  # type: ignore[assignment]


def _bucket_rollups(local: Path, remote: Any) -> None:
    """Give the bucket the local copy's rollups, each renamed after its day's files as the
    bucket lists them (an upload changes their modification time, which a rollup names):
    the same points, so the same figures, as a compaction renames a merged day's rollup.
    Writing them anew from the points would read the whole store back through the server."""
    import pyarrow.parquet as pq

    from searchkit.history.encoding import write_options
    from searchkit.history.rollups import renamed, sources

    layout = remote._layout
    named = sources(layout)
    for path in sorted((local / "rollups").glob("day=*/*.parquet")):
        day = path.parent.name[4:]
        table = renamed(pq.read_table(path), named[day])
        target = f"{layout.root}/rollups/{path.parent.name}/{path.name}"
        with layout.fs.open_output_stream(target) as out:
            pq.write_table(table, out, **write_options("rollups", table.schema))


def _stores(store: Path, server: Any, given: bool) -> Path:
    """Copy ``store`` to a local folder (hard links when ``given``: its files are never
    written, only rollups replaced) and to the bucket ``bench``; give each copy the rollups
    this code reads. Returns the local copy's folder."""
    import pyarrow.fs as pafs

    from searchkit import History  # the public name: a --baseline tree's too

    new_bucket, options = _s3server().new_bucket, _s3server().options
    new_bucket(server.endpoint, "bench")  # pyarrow writes the copy; boto3 only creates it
    fs = pafs.S3FileSystem(**options(server.endpoint))
    local = Path(tempfile.mkdtemp(prefix="searchkit-s3-local-")) / "usage"
    if given:
        subprocess.run(["cp", "-al", str(store), str(local)], check=True)
        for kind in ("throughput", "limits"):
            pafs.copy_files(str(store / kind), f"bench/usage/{kind}", destination_filesystem=fs)
    else:
        shutil.copytree(store, local)
        pafs.copy_files(str(store), "bench/usage", destination_filesystem=fs)
    remote = History("s3://bench/usage", storage_options=options(server.endpoint))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        History(local).refresh_rollups(History(local).days())
        if given:
            _bucket_rollups(local, remote)
        # A rollup names its day's files as its own code reads them (by name, size and
        # modification time now), so each copy gets the rollups its files would have.
        written = remote.refresh_rollups(remote.days())
    print(f"rollups written anew on the bucket: {written}", file=sys.stderr)
    return local


class ServerProcess:
    """moto's counting S3 server (tests/history/s3server.py) in a process of its own, so
    that the measured process's CPU time is searchkit's alone and its threads never wait
    for the server's on the GIL; its counts are read over HTTP (``/__counts__``), its CPU
    time from /proc. ``attach``: the server another process started (``endpoint`` and
    ``pid``), not stopped here."""

    def __init__(self, attach: tuple[str, int] | None = None) -> None:
        self.process: subprocess.Popen[str] | None = None
        if attach is not None:
            self.endpoint, self.pid = attach
            return
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},  # tests.history.s3server
        )
        assert self.process.stdout is not None
        self.endpoint = self.process.stdout.readline().strip()
        self.pid = self.process.pid

    def cpu(self) -> float:
        """The server process's CPU time so far (user + system, seconds)."""
        with open(f"/proc/{self.pid}/stat") as stat:
            fields = stat.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def counted(self) -> dict[str, int]:
        """The requests answered since the last call (or :meth:`reset`), by kind."""
        import urllib.request

        with urllib.request.urlopen(f"{self.endpoint}/__counts__") as answer:
            return json.loads(answer.read())  # type: ignore[no-any-return]

    def reset(self) -> None:
        self.counted()

    def stop(self) -> None:
        if self.process is None:
            return  # attached: its owner stops it
        assert self.process.stdin is not None
        self.process.stdin.close()  # the server stops when its input ends
        self.process.wait(timeout=60)


def serve() -> None:
    """``--serve``: run the counting server until this process's input ends, its URL the
    first line written; ``GET /__counts__`` answers the counts (and starts them anew)."""
    import logging

    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server

    from tests.history.s3server import CountingMotoServer

    class Served(CountingMotoServer):  # type: ignore[misc]
        def _server_entry(self) -> None:
            app = DomainDispatcherApplication(create_backend_app)

            def counting(environ: dict[str, Any], start: Any) -> Any:
                if latency:  # a real bucket's round trip (threads: the waits overlap)
                    time.sleep(latency)
                if environ.get("PATH_INFO") == "/__counts__":
                    with self._lock:
                        body = json.dumps(dict(self.counts)).encode()
                        self.counts.clear()
                    start("200 OK", [("Content-Type", "application/json")])
                    return [body]
                self._count(environ)
                return app(environ, start)

            self._server = make_server(
                self._ip_address, self._port, counting, True, request_handler=MotoRequestHandler
            )
            self._server_ready_event.set()
            self._server.serve_forever(poll_interval=0.01)

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's line per request
    latency = float(os.environ.get(LATENCY, "0")) / 1000
    server = Served()
    server.start()
    try:
        print(server.endpoint, flush=True)
        sys.stdin.read()
    finally:
        server.stop()


def measure(
    store: Path,
    repeat: int,
    zones: list[str],
    operations: list[str],
    given: bool,
    attach: tuple[str, int, str] | None = None,
    alone: bool = False,
) -> dict[str, Any]:
    """In this process: serve ``store`` (its points and limits) from moto and time each
    operation in each zone on both copies. ``attach``: a server already serving the store
    (endpoint, pid) and its local copy, set up by the calling process (``--store``)."""
    import logging
    import resource

    from searchkit import History

    def peak_mib() -> float:
        """This process's resident high-water mark since :func:`reset_peak` (Linux)."""
        with open("/proc/self/status") as status:
            line = next(line for line in status if line.startswith("VmHWM:"))
        return int(line.split()[1]) / 1024

    def reset_peak() -> None:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")  # the high-water mark starts again from what is resident now

    options = _s3server().options
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's line per request
    server = ServerProcess(None if attach is None else attach[:2])
    local = None if attach is None else Path(attach[2])
    try:
        if local is None:
            local = _stores(store, server, given)
        results: dict[str, Any] = {"load": os.getloadavg()[0]}
        for operation in operations:
            for zone in zones if operation in ZONED else ["UTC"]:
                row: dict[str, Any] = {}
                answers = []
                for where in ("s3", "local") if alone else ("local", "s3"):
                    best = cpu = served = float("inf")
                    peak = 0.0
                    for attempt in range(repeat):
                        hist = (
                            History(local)
                            if where == "local"
                            else History(
                                "s3://bench/usage", storage_options=options(server.endpoint)
                            )
                        )
                        server.reset()
                        reset_peak()
                        started, used = time.perf_counter(), time.process_time()
                        serving = server.cpu()
                        try:
                            answer = call(operation, hist, zone)
                        except TypeError as exc:  # an older code without the argument
                            row["failed"] = f"{type(exc).__name__}: {exc}"
                            break
                        if attempt == 0:
                            answers.append(answer)
                        best = min(best, time.perf_counter() - started)
                        peak = max(peak, peak_mib())
                        cpu = min(cpu, time.process_time() - used)
                        served = min(served, server.cpu() - serving)
                        if attempt == 0 and where == "s3":
                            row["requests"] = server.counted()
                    row[where], row[f"{where}_cpu"] = best, cpu
                    row[f"{where}_peak"] = peak
                    if where == "s3":
                        row["server_cpu"] = served
                if alone:
                    answers.reverse()  # (local, S3), as _same takes them
                row["identical"] = len(answers) == 2 and _same(*answers)
                results[f"{operation} {zone}"] = row
        results["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return results
    finally:
        server.stop()
        if local is not None and attach is None:
            shutil.rmtree(local.parent, ignore_errors=True)


def _same(local: Any, remote: Any) -> bool:
    """Whether the local and the S3 copy gave the same answer, to the last bit."""
    import pandas as pd

    if isinstance(local, Drawn):
        return local == remote
    if isinstance(local, pd.DataFrame):
        try:
            pd.testing.assert_frame_equal(local, remote, check_exact=True)
        except AssertionError:
            return False
        return True
    # info(): where it is and its files' bytes differ; what it says of the points may not.
    said = ("indexes", "points", "first", "last", "gaps")
    return all(getattr(local, k, None) == getattr(remote, k, None) for k in said)


def run(
    store: Path,
    repeat: int,
    source: str | None,
    zones: list[str],
    operations: list[str],
    given: bool,
    attach: str | None = None,
    alone: bool = False,
) -> dict[str, Any]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [source, str(ROOT)]))
    # moto keeps each object above this size in a temporary file, not in its memory.
    env.setdefault("MOTO_S3_DEFAULT_KEY_BUFFER_SIZE", str(1 << 20))
    command = [sys.executable, __file__, "--measure", str(store), "--repeat", str(repeat)]
    command += ["--zones", ",".join(zones), "--only", ",".join(operations)]
    command += ["--given"] if given else []
    command += ["--alone"] if alone else []
    command += ["--attach", attach] if attach else []
    out = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _round(
    store: Path,
    args: argparse.Namespace,
    source: str | None,
    zones: list[str],
    operations: list[str],
    given: bool,
    attach: str | None,
) -> dict[str, Any]:
    """One round of one code: one process, or with ``--alone`` one per operation and zone
    (the load is the first's, the process's peak the highest)."""
    if not args.alone:
        return run(store, args.repeat, source, zones, operations, given, attach)
    merged: dict[str, Any] = {}
    for operation in operations:
        for zone in zones if operation in ZONED else ["UTC"]:
            one = run(store, args.repeat, source, [zone], [operation], given, attach, alone=True)
            merged.setdefault("load", one["load"])
            merged["peak_mib"] = max(merged.get("peak_mib", 0), one["peak_mib"])
            merged[f"{operation} {zone}"] = one[f"{operation} {zone}"]
    return merged


def shown(requests: dict[str, int]) -> str:
    total = sum(requests.values())
    kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(requests.items()))
    return f"{total} requests ({kinds})"


def span(values: list[float], fmt: str = ".2f") -> str:
    low, high = min(values), max(values)
    return f"{low:{fmt}}" if f"{low:{fmt}}" == f"{high:{fmt}}" else f"{low:{fmt}}-{high:{fmt}}"


def report(runs: dict[str, list[dict[str, Any]]], keys: list[str], family: str) -> None:
    """Print each operation's figures for each code (ranges over the rounds) and emit the
    README's (the best round's) as ``family``'s (``s3``, or ``s3year`` for ``--store``)."""
    from figures import emit

    first_baseline = next((label for label in runs if label != "this code"), None)
    for label, rounds in runs.items():
        loads = ", ".join(f"{r['load']:.1f}" for r in rounds)
        peaks = ", ".join(f"{r['peak_mib']:.0f}" for r in rounds)
        print(f"{label}: load at each round's start {loads}; peak RSS {peaks} MiB")
    for key in keys:
        operation, zone = key.split(" ")
        for label, rounds in runs.items():
            rows = [r[key] for r in rounds]
            if any("failed" in row for row in rows):
                print(f"{key:36} {label:28} not measured: {rows[0].get('failed')}")
                continue
            ratios = [row["s3"] / row["local"] for row in rows]
            print(
                f"{key:36} {label:28} wall local {span([r['local'] for r in rows])} s, "
                f"S3 {span([r['s3'] for r in rows])} s = {span(ratios)}x; CPU local "
                f"{span([r['local_cpu'] for r in rows])} s, S3 {span([r['s3_cpu'] for r in rows])}"
                f" s, server {span([r.get('server_cpu', float('nan')) for r in rows])} s;"
                f" peak RSS local {span([r.get('local_peak', 0) for r in rows], '.0f')} MiB,"
                f" S3 {span([r.get('s3_peak', 0) for r in rows], '.0f')} MiB;"
                f" {shown(rows[0]['requests'])}"
                + ("" if all(row["identical"] for row in rows) else "; S3 DIFFERS from local")
            )
            if label not in ("this code", first_baseline):
                continue  # the figures file keeps this code's and the first baseline's
            side = "" if label == "this code" else ".baseline"
            name = operation if zone == "UTC" else f"{operation}.{zone}"
            best = min(rows, key=lambda row: row["s3"])
            emit(f"{family}.{name}{side}.local", min(r["local"] for r in rows))
            emit(f"{family}.{name}{side}.s3", best["s3"])
            emit(f"{family}.{name}{side}.s3_cpu", min(r["s3_cpu"] for r in rows))
            emit(f"{family}.{name}{side}.local_cpu", min(r["local_cpu"] for r in rows))
            emit(f"{family}.{name}{side}.server_cpu", min(r["server_cpu"] for r in rows))
            emit(f"{family}.{name}{side}.requests", sum(best["requests"].values()), "")
            emit(f"{family}.{name}{side}.lists", best["requests"].get("LIST", 0), "")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--indexes", type=int, default=200)
    parser.add_argument("--days", type=int, default=14)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=1, help="A B rounds with --baseline")
    parser.add_argument(
        "--baseline", action="append", default=[], help="a source tree to measure beside this code"
    )
    parser.add_argument("--zones", default="UTC", help="zones, comma-separated")
    parser.add_argument(
        "--only",
        default=",".join(OPERATIONS),
        help=f"operations to measure, of {', '.join(OPERATIONS + EXTRA)}",
    )
    parser.add_argument("--store", help="an existing store (this code's rollups) to serve")
    parser.add_argument(
        "--latency", type=float, default=0, help="ms the server waits before each answer"
    )
    parser.add_argument(
        "--alone",
        action="store_true",
        help="each operation and zone in a process of its own, the S3 call first",
    )
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--given", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--attach", help=argparse.SUPPRESS)  # endpoint,pid,local copy
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.serve:
        serve()
        return
    zones, operations = args.zones.split(","), args.only.split(",")
    if args.latency:
        os.environ[LATENCY] = str(args.latency)  # inherited by the server's process
    if args.measure:
        attach = None
        if args.attach:
            endpoint, pid, local = args.attach.split(",", 2)
            attach = (endpoint, int(pid), local)
        result = measure(
            Path(args.measure), args.repeat, zones, operations, args.given, attach, args.alone
        )
        print(json.dumps(result))
        return
    from history import write_dataset

    keys = [
        f"{operation} {zone}"
        for operation in operations
        for zone in (zones if operation in ZONED else ["UTC"])
    ]
    with tempfile.TemporaryDirectory(prefix="searchkit-requests-") as folder:
        if args.store:
            store, given = Path(args.store), True
            what = f"the store {store}"
        else:
            store, given = Path(folder) / "usage", False
            write_dataset(store, args.indexes, args.days)  # each code writes its rollups
            what = f"{args.indexes} indexes x {args.days} days, compacted with rollups"
        print(
            f"{what}; moto's S3 server over loopback vs a local disk, best of {args.repeat} "
            f"calls in each process, {args.rounds} round(s); load {os.getloadavg()[0]:.1f}"
        )
        codes: dict[str, str | None] = {"this code": None}
        for baseline in args.baseline:
            codes[f"baseline {baseline}"] = baseline
        runs: dict[str, list[dict[str, Any]]] = {label: [] for label in codes}
        server, attach, local = None, None, None
        try:
            if given:  # one upload (minutes for a year) for every code and round
                server = ServerProcess()
                local = _stores(store, server, given)
                attach = f"{server.endpoint},{server.pid},{local}"
            for _ in range(args.rounds if args.baseline else 1):
                for label, source in codes.items():
                    runs[label].append(
                        _round(store, args, source, zones, operations, given, attach)
                    )
        finally:
            if server is not None:
                server.stop()
            if local is not None:
                shutil.rmtree(local.parent, ignore_errors=True)
        report(runs, keys, "s3year" if args.store else "s3")


if __name__ == "__main__":
    main()
