"""Benchmark the emulator's list answer for big accounts: time against json.dumps, memory.

Speed (in this process, over HTTP on loopback): an account of 640 indexes x 1,440 points is
listed with ``requests`` (body read in full), cold (the emulator's per-minute caches cleared
first) and warm, and compared with ``json.dumps`` of the same list, parsed from the answer and
encoded again in the same run. Target: within 2x of ``json.dumps``.

Memory (a separate emulator process holding 1,542 indexes x 1,440 points, the account of
issue 11.11): the growth of the server's resident memory while answering one list, then eight
concurrent lists, each read in full by a client thread here. The peak comes from the kernel's
high-water mark (reset before each phase through /proc/PID/clear_refs), with a sampler as a
fallback. Also the tracemalloc peak of one list produced in this process through the WSGI app.

Only the public emulator (``Emulator``, its store and app) and HTTP are used, so the same file
measures an older checkout for before/after figures.

Run: ``python bench/emulator.py [--indexes 640] [--big 1542] [--runs 3] [--skip-memory]``.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import gc
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import requests

from searchkit.emulator import Emulator, data

USER = ("bench", "bench-pw-51c0")
NOW = dt.datetime(2026, 3, 28, 12, 0, 30, tzinfo=dt.timezone.utc)
ZONES = ("UTC", "Europe/Berlin", "Asia/Kathmandu", "America/St_Johns")
MiB = 1024 * 1024


def fill(emu: Emulator, count: int) -> None:
    """Create ``count`` indexes in batches (create_many returns each rendered index)."""
    for start in range(0, count, 50):
        emu.store.create_many(
            emu.account,
            [
                {"name": f"bench-{n:05d}", "region": "eu-west-1", "type": data.TYPES[n % 2]}
                for n in range(start, min(count, start + 50))
            ],
        )


def clear_caches() -> None:
    """Empty the emulator's per-minute caches (whichever exist in this checkout)."""
    for name in dir(data):
        cached = getattr(data, name)
        if callable(getattr(cached, "cache_clear", None)):
            cached.cache_clear()
    gc.collect()


def fetch(url: str) -> bytes:
    with requests.get(url, auth=USER, timeout=600, stream=True) as response:
        response.raise_for_status()
        return b"".join(response.iter_content(1 << 20))


def drain(url: str) -> int:
    with requests.get(url, auth=USER, timeout=600, stream=True) as response:
        response.raise_for_status()
        return sum(len(piece) for piece in response.iter_content(1 << 20))


def timed(function: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = function()
    return time.perf_counter() - started, result


def bench_speed(indexes: int, runs: int) -> None:
    print(f"== list of {indexes} indexes x 1,440 points, over HTTP (median of {runs})")
    with Emulator(users=[USER], seed=1, clock=NOW, zones=ZONES, window_minutes=1440) as emu:
        fill(emu, indexes)
        url = f"{emu.url}/v2/search"
        cold, warm, dumps = [], [], []
        body = b""
        for _ in range(runs):
            clear_caches()
            seconds, body = timed(lambda: fetch(url))
            cold.append(seconds)
            seconds, body = timed(lambda: fetch(url))
            warm.append(seconds)
            parsed = json.loads(body)
            seconds, _ = timed(
                lambda parsed=parsed: json.dumps(
                    parsed, ensure_ascii=False, separators=(",", ":")
                ).encode()
            )
            dumps.append(seconds)
            del parsed
    baseline = statistics.median(dumps)
    print(f"body: {len(body) / MiB:.1f} MiB")
    print(f"json.dumps of the same list (baseline): {baseline:.3f} s")
    for label, values in (("emulator list, cold caches", cold), ("emulator list, warm", warm)):
        median = statistics.median(values)
        print(f"{label}: {median:.3f} s = {median / baseline:.2f}x json.dumps (target <= 2x)")
    generating = statistics.median(cold) - statistics.median(warm)
    print(
        f"cold minus warm, i.e. generating the per-minute values in data.py: {generating:.3f} s "
        f"= {generating / baseline:.2f}x json.dumps"
    )


def serve_child(count: int) -> None:
    """In the child: an emulator holding ``count`` indexes; print its URL, wait on stdin."""
    with Emulator(users=[USER], seed=1, clock=NOW, zones=ZONES, window_minutes=1440) as emu:
        fill(emu, count)
        # Warm the per-minute caches the way a running emulator has them.
        drain(f"{emu.url}/v2/search")
        gc.collect()
        print(emu.url, flush=True)
        sys.stdin.read()


class ResidentMemory:
    """Peak resident memory of a process, from the kernel's high-water mark or sampling."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._peak = 0
        self._stop = threading.Event()
        self._sampler: threading.Thread | None = None

    def _field(self, name: str) -> int:
        with open(f"/proc/{self.pid}/status") as status:
            for line in status:
                if line.startswith(name + ":"):
                    return int(line.split()[1]) * 1024
        raise RuntimeError(f"{name} missing from /proc/{self.pid}/status")

    def current(self) -> int:
        return self._field("VmRSS")

    def start(self) -> None:
        try:
            with open(f"/proc/{self.pid}/clear_refs", "w") as refs:
                refs.write("5")  # reset VmHWM to the current resident size
        except OSError:
            pass
        self._peak = self.current()
        self._stop.clear()
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.005):
            self._peak = max(self._peak, self.current())

    def stop(self) -> int:
        self._stop.set()
        assert self._sampler is not None
        self._sampler.join()
        return max(self._peak, self._field("VmHWM"))


def bench_memory(count: int) -> None:
    print(f"== memory of lists of {count} indexes x 1,440 points (separate server process)")
    here = os.path.dirname(os.path.abspath(__file__))
    process = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--serve", str(count)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=here,
    )
    try:
        url = process.stdout.readline().strip() + "/v2/search"
        memory = ResidentMemory(process.pid)
        for clients in (1, 8):
            time.sleep(0.5)
            before = memory.current()
            memory.start()
            sizes: list[int] = []
            threads = [
                threading.Thread(target=lambda sizes=sizes: sizes.append(drain(url)))
                for _ in range(clients)
            ]
            started = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            seconds = time.perf_counter() - started
            peak = memory.stop()
            grown = peak - before
            body = sizes[0]
            print(
                f"{clients} concurrent list(s): body {body / MiB:.1f} MiB each, "
                f"{seconds:.1f} s; server RSS {before / MiB:.0f} MiB before, peak "
                f"{peak / MiB:.0f} MiB: +{grown / MiB:.0f} MiB = {grown / body:.2f}x one body "
                f"({grown / clients / MiB:.1f} MiB per list)"
            )
    finally:
        process.stdin.close()
        process.wait(60)


def bench_tracemalloc(count: int) -> None:
    print(f"== tracemalloc peak of one list of {count} indexes through the WSGI app")
    with Emulator(users=[USER], seed=1, clock=NOW, zones=ZONES, window_minutes=1440) as emu:
        fill(emu, count)
        token = base64.b64encode(f"{USER[0]}:{USER[1]}".encode()).decode()

        def list_once() -> int:
            from werkzeug.test import EnvironBuilder

            environ = EnvironBuilder(
                path="/v2/search", headers={"Authorization": f"Basic {token}"}
            ).get_environ()
            answer = emu.app(environ, lambda status, headers: None)
            try:
                return sum(len(piece) for piece in answer)
            finally:
                getattr(answer, "close", lambda: None)()

        list_once()
        gc.collect()
        tracemalloc.start()
        size = list_once()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    print(
        f"body {size / MiB:.1f} MiB, Python allocations peak {peak / MiB:.1f} MiB "
        f"= {peak / size:.3f}x the body"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--indexes", type=int, default=640, help="indexes for the speed test")
    parser.add_argument("--big", type=int, default=1542, help="indexes for the memory test")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve_child(args.serve)
        return
    bench_speed(args.indexes, args.runs)
    if not args.skip_memory:
        bench_memory(args.big)
        bench_tracemalloc(args.big)


if __name__ == "__main__":
    main()
