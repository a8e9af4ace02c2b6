"""A flood of idle connections against an emulator process with a small open-files limit:
new clients get a 503 at once instead of hanging, and service comes back on its own once
the idle timeout has dropped the silent connections (which stay open on the attacker's side).
Bounded: 300 sockets, about 20 s; the idle timeout is long enough that a busy machine still
opens the whole flood before the first socket is dropped (the 503 shows it was)."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import time

import pytest
import requests

import searchkit
from tests.wall import HANG_S

USER = ("flood", "flood-pw-2e9a")
FD_LIMIT = 256
FLOOD = 300
IDLE_TIMEOUT_S = 15.0

# Loads the emulator alone (no pandas), prints its URL, serves until stdin closes.
SERVE = f"""
import sys, types
package = types.ModuleType("searchkit")
package.__path__ = [sys.argv[1]]
sys.modules["searchkit"] = package
from searchkit.emulator import Emulator
emu = Emulator(users=[{USER!r}], window_minutes=1, idle_timeout={IDLE_TIMEOUT_S})
emu.start()
print(emu.url, emu.max_connections, flush=True)
sys.stdin.read()
emu.stop()
print("stopped", flush=True)
"""


def _limit_fds() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT))


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc")
def test_an_idle_flood_past_the_fd_limit_gets_503s_then_service_recovers():
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE, os.path.dirname(searchkit.__file__)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_limit_fds,
    )
    flood: list[socket.socket] = []
    try:
        url, cap = process.stdout.readline().split()
        port = int(url.rsplit(":", 1)[1])
        started = time.monotonic()
        for _ in range(FLOOD):
            flood.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        flood_took = time.monotonic() - started
        fds_during_flood = open_fds(process.pid)

        started = time.monotonic()
        refused = requests.get(f"{url}/v2/search", auth=USER, timeout=10)
        refused_after = time.monotonic() - started

        # The flood's sockets stay open here; the emulator drops them at its idle timeout.
        started = time.monotonic()
        while True:
            answer = requests.get(f"{url}/v2/search", auth=USER, timeout=10)
            if answer.status_code == 200 or time.monotonic() - started > IDLE_TIMEOUT_S + HANG_S:
                break
            time.sleep(0.2)
        recovered_after = time.monotonic() - started
    finally:
        for sock in flood:
            sock.close()
        _, stderr = process.communicate(timeout=HANG_S)

    print(
        f"\nflood of {FLOOD} idle connections, open-files limit {FD_LIMIT}, cap {cap}: "
        f"a new client got {refused.status_code} after {refused_after:.2f} s, "
        f"service back after {recovered_after:.1f} s; {fds_during_flood} fds open in the flood, "
        f"which took {flood_took:.1f} s to open"
    )
    assert int(cap) == (FD_LIMIT - 128) // 2
    assert fds_during_flood < FD_LIMIT
    assert refused.status_code == 503
    assert refused.headers["Retry-After"] == "1"
    assert refused.json()["error"].startswith(f"the emulator has {cap} open connections")
    assert answer.status_code == 200
    assert process.returncode == 0
    assert "Traceback" not in stderr
