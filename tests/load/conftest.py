"""Helpers of the load tests: emulator server processes and a bounded create/list workload."""

from __future__ import annotations

import contextlib
import dataclasses
import re
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence

import searchkit as sk
from tests.wall import HANG_S

USER, PASSWORD = "loader", "load-pw-Vb62-secret"
THREADS, CREATES_PER_THREAD = 32, 20


@dataclasses.dataclass
class ServeProcess:
    """A ``searchkit serve`` process and the address it said it listens on."""

    process: subprocess.Popen
    url: str
    banner: list[str]


@contextlib.contextmanager
def serve(*args: str, ready_within: float = HANG_S) -> Iterator[ServeProcess]:
    """Run ``python -m searchkit serve ARGS`` until the block ends (then SIGINT, wait)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "searchkit", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        banner = _read_until_listening(process, ready_within)
        url = re.search(r"listening on (http://\S+)", banner[-1]).group(1)
        yield ServeProcess(process, url, banner)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)


def _read_until_listening(process: subprocess.Popen, within: float) -> list[str]:
    deadline = time.monotonic() + within
    lines: list[str] = []
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.2)
        if ready:
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip("\n"))
            if "listening on" in line:
                return lines
        elif process.poll() is not None:
            break
    raise AssertionError(
        f"searchkit serve did not say it was listening: {lines!r} {process.poll()=}"
    )


@dataclasses.dataclass
class Outcome:
    """What a workload saw."""

    created_ids: list[str] = dataclasses.field(default_factory=list)
    errors: list[sk.SearchKitError] = dataclasses.field(default_factory=list)
    lists: int = 0
    list_errors: list[sk.SearchKitError] = dataclasses.field(default_factory=list)
    max_listed: int = 0
    wall_time: float = 0.0

    def server_errors(self) -> int:
        return sum(
            1 for e in (*self.errors, *self.list_errors) if e.status is not None and e.status >= 500
        )

    def creates_per_second(self) -> float:
        return len(self.created_ids) / self.wall_time if self.wall_time else 0.0


def run_workload(urls: Sequence[str], *, list_pause_s: float = 0.0) -> Outcome:
    """32 threads x 20 creates, spread over ``urls``, with one lister per URL alongside.

    The work is bounded by count, not by a stopwatch: every create is sent, however long a
    busy machine takes (the test's timeout is the ceiling a hang reaches), and the rate is
    reported as a figure. Creates are sent once (``reconcile=False``, no retries), so every
    failure shows. Listers loop until the creators are done, checking each list has unique
    ids. Read timeouts are ``HANG_S`` multiples: a slow answer on a loaded machine is no
    failure, only a silent server is.
    """
    outcome = Outcome()
    lock = threading.Lock()
    creators_done = threading.Event()
    started = time.monotonic()

    def client(url: str) -> sk.Client:
        return sk.Client(
            username=USER,
            password=PASSWORD,
            base_url=url,
            timeout=(HANG_S, 4 * HANG_S),
            deadline=8 * HANG_S,
            max_retries=0,
        )

    def create(thread: int) -> None:
        with client(urls[thread % len(urls)]) as c:
            for n in range(CREATES_PER_THREAD):
                try:
                    index = c.create_index(
                        f"load-{thread:02d}-{n:02d}",
                        region="eu-west-1",
                        type="free",
                        reconcile=False,
                        # Every name is new: the name guard ("raise" lists before and after
                        # each create, tests/faults/test_create_safety.py) would add two lists
                        # of hundreds of indexes per create and measure the lists, not this.
                        if_exists="create",
                    )
                except sk.SearchKitError as exc:
                    with lock:
                        outcome.errors.append(exc)
                else:
                    with lock:
                        outcome.created_ids.append(index.id)

    def list_alongside(url: str) -> None:
        with client(url) as c:
            while not creators_done.is_set():
                try:
                    ids = [i.id for i in c.list_indexes()]
                except sk.SearchKitError as exc:
                    with lock:
                        outcome.list_errors.append(exc)
                else:
                    assert len(ids) == len(set(ids)), "a list repeated an index"
                    with lock:
                        outcome.lists += 1
                        outcome.max_listed = max(outcome.max_listed, len(ids))
                creators_done.wait(list_pause_s)

    creators = [threading.Thread(target=create, args=(t,)) for t in range(THREADS)]
    listers = [threading.Thread(target=list_alongside, args=(url,)) for url in urls]
    for thread in (*listers, *creators):
        thread.start()
    for thread in creators:
        thread.join()
    outcome.wall_time = time.monotonic() - started
    creators_done.set()
    for thread in listers:
        thread.join()
    return outcome
