"""Benchmark the list path: bytes on a loopback socket -> IndexList -> throughput_frame.

A loopback HTTP server serves pre-built list answers (indexes of one day per minute, built
as in bench/throughput.py: five zones, Go's variable fraction widths). In the same run it
measures, best of several runs:

* the baseline ``requests.get(url).json()`` on the same answer;
* ``client.list_indexes()`` followed by ``throughput_frame(indexes)``, and the ratio (wall
  time); then the same ratio in CPU time (all threads), each in a fresh process where the
  two run in turn (A B A B), for this code and for each ``--baseline`` tree in turn, so
  the code before a change is measured in the same run under the same load;
* the same data path after reading the body in 1 MiB chunks (``1MiB-read``), which
  separates decoding from the cost of requests' 10 KiB reads;
* decoding alone, the same bytes already in memory: ``json.loads``, ``orjson.loads``,
  ``msgspec.json.decode`` (what a list becomes without our reading) and
  ``IndexList.from_json_bytes`` (the client's decoder);
* memory, from separate untimed runs (tracemalloc, which sees Python objects and NumPy
  buffers, plus Arrow's allocations for what is held): bytes held per point by the
  IndexList, and the peak while listing as a multiple of the body's size.

Targets (issue 10): at 1,000 x 1,440 points the list + frame takes at most 0.5x the baseline
and grows linearly with the size; an IndexList holds at most 40 bytes per point; the peak
while listing stays under 3x the body.

Run: ``python bench/list.py [--indexes 10 100 1000] [--memory-indexes 1000] [--baseline SRC
...] [--lean-above N]`` (``--memory-indexes 6945`` measures an IndexList of 10M points;
``--lean-above 1000`` measures only the ratios for more indexes than 1,000).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pyarrow as pa
import requests

sys.path.insert(0, str(Path(__file__).parent))
from figures import emit
from throughput import POINTS_PER_INDEX, build_json

import searchkit as sk
from searchkit.model.index import IndexList

MiB = 1024 * 1024
_TEMPLATE_INDEXES = 100


def build_body(indexes: int) -> bytes:
    """Return a list answer of ``indexes`` indexes x 1,440 points.

    Large answers repeat the index objects of a 100-index answer under new ids and names,
    which keeps building them fast and their bytes realistic.
    """
    template, _ = build_json(min(indexes, _TEMPLATE_INDEXES) * POINTS_PER_INDEX)
    objects = [json.dumps(o).encode() for o in json.loads(template)]
    out = []
    for number in range(indexes):
        text = objects[number % len(objects)]
        original = number % len(objects)
        text = text.replace(
            f"00000000-0000-4000-8000-{original:012d}".encode(),
            f"00000000-0000-4000-8000-{number:012d}".encode(),
        ).replace(f'"index-{original:04d}"'.encode(), f'"index-{number:04d}"'.encode())
        out.append(text)
    return b"[" + b", ".join(out) + b"]"


class Server:
    """A loopback HTTP server answering every GET with the body it is given."""

    def __init__(self) -> None:
        self.body = b"[]"
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(owner.body)))
                self.end_headers()
                self.wfile.write(owner.body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def best_time(function: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - started)
        del result
    return best


# The CPU figure, run in a fresh process with PYTHONPATH=SRC (this tree, or a --baseline
# one): list + frame against the same server through the public names every version has,
# in turn with requests.get().json() in the same process (A B A B ...).
_BASELINE = """
import gc, json, sys, time
import requests
import searchkit as sk
client = sk.Client(username="bench", password="bench", base_url=sys.argv[1], timeout=120,
                   max_retries=0)
session = requests.Session()
def run():
    return sk.throughput_frame(client.list_indexes())
def plain():
    return session.get(sys.argv[1], auth=("bench", "bench")).json()
for _ in range(int(sys.argv[3])):  # warm-ups: a fresh process's first calls cost more
    run()
best = {"wall": float("inf"), "cpu": float("inf"), "plain_cpu": float("inf")}
for _ in range(int(sys.argv[2])):
    for name, function in (("plain_cpu", plain), ("cpu", run)):
        gc.collect()
        w, c = time.perf_counter(), time.process_time()
        function()
        best[name] = min(best[name], time.process_time() - c)
        if name == "cpu":
            best["wall"] = min(best["wall"], time.perf_counter() - w)
print(json.dumps(best))
"""


def baseline_code(source: str, url: str, repeat: int, warm: int = 1) -> dict[str, float]:
    """Time the list + frame of the code in ``source`` (a source tree) on ``url``, and
    requests.get().json() beside it: least wall and CPU seconds of list + frame, least CPU
    seconds of the plain get (``plain_cpu``)."""
    import os
    import subprocess

    out = subprocess.run(
        [sys.executable, "-c", _BASELINE, url, str(repeat), str(warm)],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": source},
    ).stdout
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def compare_cpu(trees: list[str] | None, url: str, count: int, repeat: int) -> None:
    """Print and emit the CPU ratio of list + frame to requests.get().json(), for this code
    and each baseline tree: each measured in a fresh process of its own (the server's work
    is in none of them) after warm-up calls, the trees in turn, the least of each kept.
    One call after one warm-up, the least of three processes, put this code 7-23% above
    22d64ca; after two warm-ups, three calls each, the two were level."""
    here = str(Path(__file__).resolve().parent.parent)
    codes = {"this code": here} | {Path(tree).name: tree for tree in trees or []}
    best: dict[str, dict[str, float]] = {}
    small = count <= 1000
    for _ in range(2 if small else 1):
        for name, tree in codes.items():
            got = baseline_code(tree, url, 3 if small else 2, 2 if small else 1)
            kept = best.setdefault(name, got)
            for field, value in got.items():
                kept[field] = min(kept[field], value)
    parts = []
    for name, got in best.items():
        ratio = got["cpu"] / got["plain_cpu"]
        parts.append(f"{name} {got['cpu']:.3f} s against {got['plain_cpu']:.3f} s = {ratio:.2f}x")
        # A commit's worktree is .bench/trees/SHA: its figures are named by the commit.
        key = "" if name == "this code" else f"{name}."
        emit(f"list.cpu.{key}ours.{count}", got["cpu"])
        emit(f"list.cpu.{key}get_json.{count}", got["plain_cpu"])
    print(f"{'':>7} CPU time (all threads) of list + frame against requests.get().json():")
    print("".join(f"{'':>9}{part}\n" for part in parts), end="")


def traced(function: Callable[[], Any]) -> tuple[Any, float, float]:
    """Run once; return the result, the peak and the memory still held (bytes).

    tracemalloc sees Python objects and NumPy buffers; Arrow's default pool adds what is
    held in Arrow buffers (its peak is not resettable, and Arrow buffers are only
    temporaries of one 2 MiB group while decoding, so the peak counts tracemalloc's).
    A proxy pool is not used: the result may hold buffers that must outlive it.
    """
    gc.collect()
    arrow_before = pa.total_allocated_bytes()
    tracemalloc.start()
    try:
        result = function()
        gc.collect()
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak, held + pa.total_allocated_bytes() - arrow_before


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--indexes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--memory-indexes", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--baseline",
        nargs="+",
        help="source trees (e.g. git archive ebb8985 searchkit | tar -x -C SRC) whose list + "
        "frame is timed on the same answers, beside this code's (CPU time)",
    )
    parser.add_argument(
        "--lean-above",
        type=int,
        help="for more indexes than this, only the list + frame against requests.get().json() "
        "(not the decoders alone, nor the 1 MiB reads)",
    )
    args = parser.parse_args(argv)

    server = Server()
    auth = ("bench", "bench")
    client = sk.Client(
        username="bench", password="bench", base_url=server.url, timeout=120, max_retries=0
    )
    session = requests.Session()
    print(
        f"Python {sys.version.split()[0]}, msgspec {msgspec.__version__}, orjson "
        f"{orjson.__version__}, pyarrow {pa.__version__}"
    )
    header = (
        f"{'indexes':>7} {'points':>10} {'body MB':>8} {'get.json s':>10} {'list+frame s':>12} "
        f"{'ratio':>6} {'ns/point':>8} {'1MiB-read':>9} {'ratio':>6} | {'loads':>6} "
        f"{'orjson':>6} {'msgspec':>7} {'ours':>6} {'ours/loads':>10}"
    )
    print(header)
    print("-" * len(header))
    for count in args.indexes:
        server.body = body = build_body(count)
        points = count * POINTS_PER_INDEX
        repeat = args.repeat if count <= 100 else max(3, args.repeat // 2)
        baseline = best_time(lambda: session.get(server.url, auth=auth).json(), repeat)

        def ours() -> Any:
            return sk.throughput_frame(client.list_indexes())

        frame = ours()
        if len(frame) != points:
            raise SystemExit(f"expected {points} rows, got {len(frame)}")
        del frame
        listed = best_time(ours, repeat)
        if args.lean_above is not None and count > args.lean_above:
            print(
                f"{count:>7,} {points:>10,} {len(body) / 1e6:>8.1f} {baseline:>10.3f} "
                f"{listed:>12.3f} {listed / baseline:>6.2f} {listed / points * 1e9:>8.0f}"
            )
            compare_cpu(args.baseline, server.url, count, repeat)
            continue

        def streamed() -> Any:
            # The data path given a body read in 1 MiB chunks (what a streamed, capped
            # read in the client can do), to separate decoding from requests' 10 KiB reads.
            with session.get(server.url, auth=auth, stream=True) as response:
                body = b"".join(iter(lambda: response.raw.read(1 << 20), b""))
            return sk.throughput_frame(IndexList.from_json_bytes(body))

        fast_read = best_time(streamed, repeat)
        loads = best_time(partial(json.loads, body), repeat)
        fast = best_time(partial(orjson.loads, body), repeat)
        spec = best_time(partial(msgspec.json.decode, body), repeat)
        decode = best_time(partial(IndexList.from_json_bytes, body), repeat)
        print(
            f"{count:>7,} {points:>10,} {len(body) / 1e6:>8.1f} {baseline:>10.3f} "
            f"{listed:>12.3f} {listed / baseline:>6.2f} {listed / points * 1e9:>8.0f} "
            f"{fast_read:>9.3f} {fast_read / baseline:>6.2f} | "
            f"{loads:>6.3f} {fast:>6.3f} {spec:>7.3f} {decode:>6.3f} {decode / loads:>10.2f}"
        )
        emit(f"list.wall_ratio.{count}", listed / baseline, "x")
        compare_cpu(args.baseline, server.url, count, repeat)

    server.body = body = build_body(args.memory_indexes)
    points = args.memory_indexes * POINTS_PER_INDEX
    session.close()
    indexes, peak, held = traced(client.list_indexes)
    assert len(indexes) == args.memory_indexes
    print(
        f"\nmemory at {args.memory_indexes:,} indexes ({points:,} points, body "
        f"{len(body) / MiB:.0f} MiB): IndexList holds {held / points:.1f} bytes/point "
        f"(target <= 40); peak while listing {peak / MiB:.0f} MiB = "
        f"{peak / len(body):.2f}x the body (target < 3), the body itself included"
    )
    emit("list.bytes_per_point", held / points, "B")
    emit("list.peak_x_body", peak / len(body), "x")
    del indexes
    _, peak_json, held_json = traced(lambda: requests.get(server.url, auth=auth).json())
    print(
        f"for comparison, requests.get().json(): holds {held_json / points:.0f} bytes/point, "
        f"peak {peak_json / len(body):.2f}x the body"
    )
    client.close()
    server.close()
    print(
        "\nratio = (list_indexes + throughput_frame) / requests.get().json(): target <= 0.50 "
        "at 1,000 indexes. 1MiB-read = the same after reading the body in 1 MiB chunks "
        "(requests' .content reads 10 KiB at a time). ours/loads = IndexList.from_json_bytes / "
        "json.loads on bytes in memory."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
