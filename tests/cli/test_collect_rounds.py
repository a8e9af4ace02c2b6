"""``searchkit collect`` as a long-running process: failed rounds, fatal errors, Ctrl-C.

Each test runs the real command in a subprocess against a real loopback server (the fault
harness in front of the emulator), so signals and retries are those a user meets.
"""

from __future__ import annotations

import signal
import subprocess
import threading

import pytest

from searchkit.history.usage_history import History
from tests.cli.processes import finish, searchkit, service_env
from tests.faults.harness import FaultServer, forward, hang, reply


@pytest.fixture
def indexes(emulator):
    with emulator.client() as client:
        client.create_index("docs", region="eu-west-1", type="free")
    return emulator


def start(url: str, username: str, password: str, *args: str) -> subprocess.Popen[str]:
    return searchkit(service_env(url, username, password), "collect", *args)


def test_failed_rounds_are_reported_and_retried_until_the_service_is_back(indexes, tmp_path):
    store = tmp_path / "h"
    with FaultServer(upstream=indexes.url) as server:
        server.script("GET", then=reply(503, {"error": "down"}, {"Retry-After": "0"}))
        process = start(
            server.url, indexes.username, indexes.password,
            "--store", str(store), "--every", "2s", "--count", "3",
        )  # fmt: skip
        try:
            first = process.stderr.readline()
            server.script("GET", then=reply(200, b'[{"id": "x", "throughput_vector": [{'))
            second = process.stderr.readline()
            server.script("GET", then=forward())
        except BaseException:
            process.kill()
            raise
        out, err = finish(process)
    assert first == (
        "round 1 failed: The service failed to list indexes after 3 retries (HTTP 503: "
        "down). Trying again in 1 s.\n"
    )
    assert second == (
        "round 2 failed: The service sent an answer that could not be read (unexpected "
        "response from the service: the body is not JSON (Input data was truncated); it "
        """starts with '[{"id": "x", "throughput_vector": [{'). Trying again in 2 s.\n"""
    )
    assert out.startswith("round 3: ") and out.endswith(
        "1 indexes, 1,440 new points, 0 gaps, 0 warnings\n"
    )
    assert err == "2 of 3 round(s) failed\n"
    assert process.returncode == 1
    assert len(History(store).throughput()) == 1440


def test_bad_credentials_stop_the_collector_with_the_reason(indexes, tmp_path):
    process = start(
        indexes.url, indexes.username, "wrong-password",
        "--store", str(tmp_path / "h"), "--every", "1s", "--count", "5",
    )  # fmt: skip
    out, err = finish(process)
    assert out == ""
    lines = err.splitlines()
    assert lines[0] == "stopped in round 1: a retry cannot fix this"
    assert lines[1].startswith("searchkit: ")
    assert lines[1].endswith("[AuthenticationError, GET /v2/search -> 401]")
    assert len(lines) == 2
    assert process.returncode == 1


def test_a_second_ctrl_c_ends_a_hung_call_at_once(indexes, tmp_path):
    store = tmp_path / "h"
    with FaultServer(upstream=indexes.url, max_hang=120) as server:
        server.script("GET", then=hang())
        process = start(
            server.url, indexes.username, indexes.password,
            "--store", str(store), "--every", "1h", "--timeout", "60",
        )  # fmt: skip
        try:
            pause = threading.Event()
            while server.count("GET") == 0 and process.poll() is None:
                pause.wait(0.05)
            process.send_signal(signal.SIGINT)
            first = process.stderr.readline()
            process.send_signal(signal.SIGINT)
            # Without the second Ctrl-C the call would hang for its 60 s timeout.
            out, err = finish(process, timeout=20)
        except BaseException:
            process.kill()
            raise
    assert first == (
        "searchkit collect: stopping after this round (press Ctrl-C again to stop now)\n"
    )
    assert out == ""
    assert err == "interrupted in round 1; every stored file is complete\n"
    assert process.returncode == 130
    assert not store.exists() or not [p for p in store.rglob("*") if p.is_file()]
