"""A pytest plugin for bench/suite.py: each test's wall and CPU time, one JSON line per test.

Loaded into the controller and every xdist worker (``-p suite_timing``, bench/ on the path);
each process appends to ``$SUITE_TIMING_DIR/<worker>.jsonl``: a line per test (its setup,
call and teardown together) with the wall time and the CPU time of the process (all its
threads) and of the child processes it waited for, then one line when collection ends and
one when the session ends.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Iterator
from typing import IO, Any

import pytest

_STARTED = (time.perf_counter(), time.process_time())
_out: IO[str] | None = None


def _cpu() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _write(record: dict[str, Any]) -> None:
    global _out
    if _out is None:
        folder = os.environ["SUITE_TIMING_DIR"]
        worker = os.environ.get("PYTEST_XDIST_WORKER", "controller")
        _out = open(os.path.join(folder, f"{worker}.jsonl"), "a", encoding="utf-8")  # noqa: SIM115
    _out.write(json.dumps(record) + "\n")
    _out.flush()


def _since_start(event: str) -> dict[str, Any]:
    return {
        "event": event,
        "wall": time.perf_counter() - _STARTED[0],
        "cpu": time.process_time() - _STARTED[1],
    }


def pytest_collection_finish(session: pytest.Session) -> None:
    _write(_since_start("collected"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    wall, cpu = time.perf_counter(), _cpu()
    try:
        return (yield)
    finally:
        _write({"test": item.nodeid, "wall": time.perf_counter() - wall, "cpu": _cpu() - cpu})


def pytest_unconfigure(config: pytest.Config) -> None:
    global _out
    _write(_since_start("end"))
    if _out is not None:
        _out.close()
        _out = None
