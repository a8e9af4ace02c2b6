"""The Emulator's lifecycle: ports, persistence, demo, delay, binding, OpenAPI, concurrency."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

import searchkit
from searchkit.emulator import Emulator
from tests.wall import HANG_S

from .conftest import NOW, USER

VALID = {"name": "docs", "region": "eu-west-1", "type": "payg"}


def test_url_host_and_port_describe_the_bound_socket(emulator):
    assert emulator.host == "127.0.0.1"
    assert emulator.port > 0
    assert emulator.url == f"http://127.0.0.1:{emulator.port}"
    assert requests.get(f"{emulator.url}/healthz", timeout=5).json() == {"status": "ok"}


def test_repr_shows_url_and_username_but_never_the_password():
    with Emulator() as emu:
        text = repr(emu)
        assert emu.url in text
        assert repr(emu.username) in text
        assert emu.password not in text
    assert "not running" in repr(emu)


def test_stop_releases_the_port_and_is_idempotent():
    emu = Emulator().start()
    url = emu.url
    emu.stop()
    emu.stop()

    with pytest.raises(requests.ConnectionError):
        requests.get(f"{url}/healthz", timeout=2)
    with pytest.raises(RuntimeError, match="stopped"):
        emu.start()


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "example.com", ""])
def test_non_loopback_bind_requires_allow_remote(host):
    with pytest.raises(ValueError, match="allow_remote=True"):
        Emulator(host=host)


def test_allow_remote_permits_a_non_loopback_host():
    emu = Emulator(host="0.0.0.0", allow_remote=True)
    try:
        assert emu.host == "0.0.0.0"
    finally:
        emu.stop()


def test_duplicate_user_names_are_refused():
    with pytest.raises(ValueError, match="unique"):
        Emulator(users=[("a", "x")], read_only_users=[("a", "y")])


def test_added_user_can_authenticate(emulator):
    emulator.add_user("carol", "carol-pw")

    response = requests.get(f"{emulator.url}/v2/search", auth=("carol", "carol-pw"), timeout=5)

    assert response.status_code == 200


def test_state_in_a_db_file_survives_a_restart_without_duplicating_demo(tmp_path):
    db = str(tmp_path / "state.sqlite")
    with Emulator(db=db, users=[USER], demo=True) as first:
        api = f"{first.url}/v2/search"
        created = requests.post(api, json=VALID, auth=USER, timeout=5).json()
        before = requests.get(api, auth=USER, timeout=5).json()

    with Emulator(db=db, users=[USER], demo=True) as second:
        after = requests.get(f"{second.url}/v2/search", auth=USER, timeout=5).json()

    assert len(before) == 7
    assert [index["id"] for index in after] == [index["id"] for index in before]
    assert created["id"] in {index["id"] for index in after}


def test_seeded_restart_on_a_db_file_never_reuses_ids(tmp_path):
    db = str(tmp_path / "state.sqlite")
    ids = []
    for _ in range(2):
        with Emulator(db=db, users=[USER], seed=1, clock=NOW) as emu:
            response = requests.post(f"{emu.url}/v2/search", json=VALID, auth=USER, timeout=5)
            ids.append(response.json()["id"])

    assert ids[0] != ids[1]


def test_delay_slows_answers(emulator, api, http):
    emulator.delay = 0.2
    started = time.perf_counter()
    assert http.get(api, timeout=5).status_code == 200
    assert time.perf_counter() - started >= 0.2


def test_lowering_the_delay_releases_requests_already_waiting(emulator, api):
    emulator.delay = 4 * HANG_S  # a request that would wait for minutes
    answers: list[int] = []
    waiting = threading.Thread(
        target=lambda: answers.append(requests.get(api, auth=USER, timeout=8 * HANG_S).status_code)
    )
    waiting.start()
    waiting.join(0.5)
    assert answers == []  # still held
    emulator.delay = 0
    waiting.join(HANG_S)
    assert answers == [200]


def test_negative_delay_is_refused(emulator):
    with pytest.raises(ValueError, match="delay"):
        emulator.delay = -1


def test_openapi_describes_both_operations_and_every_index_field(emulator, api, http):
    response = requests.get(f"{emulator.url}/openapi.json", timeout=5)
    document = json.loads(response.text)
    index = http.post(api, json=VALID, timeout=5).json()

    assert response.status_code == 200
    assert document["openapi"].startswith("3.1")
    operations = document["paths"]["/v2/search"]
    assert operations["get"]["operationId"] == "listSearchIndexes"
    assert operations["post"]["operationId"] == "createSearchIndex"
    schema = document["components"]["schemas"]["SearchIndex"]
    assert set(schema["properties"]) == set(index)
    assert document["components"]["securitySchemes"]["basicAuth"]["scheme"] == "basic"
    assert "Error" in document["components"]["schemas"]


def test_concurrent_creates_and_lists_all_succeed_with_unique_ids(emulator, api):
    def work(worker: int) -> list[str]:
        ids = []
        with requests.Session() as session:
            session.auth = USER
            for n in range(10):
                body = {**VALID, "name": f"w{worker}-{n}"}
                created = session.post(api, json=body, timeout=10)
                listed = session.get(api, timeout=10)
                assert created.status_code == 200, created.text
                assert listed.status_code == 200, listed.text
                ids.append(created.json()["id"])
        return ids

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, range(8)))

    ids = [index_id for ids in results for index_id in ids]
    assert len(set(ids)) == 80
    assert emulator.store.count_indexes() == 80
    listed = requests.get(api, auth=USER, timeout=5).json()
    assert {index["id"] for index in listed} == set(ids)


# Loads searchkit.emulator under a bare "searchkit" package, so the child process skips the
# parent package's heavy imports (pandas) and proves the emulator needs nothing else.
BARE_IMPORT = """
import sys, types
package = types.ModuleType("searchkit")
package.__path__ = [sys.argv[1]]
sys.modules["searchkit"] = package
from searchkit.emulator import Emulator
from tests.wall import HANG_S
"""
SERVE_SCRIPT = (
    BARE_IMPORT
    + """
emu = Emulator(db=sys.argv[2], users=[("alice", "alice-pw-4f1c")], window_minutes=1).start()
print(emu.url, flush=True)
sys.stdin.read()
emu.stop()
"""
)
PACKAGE_DIR = os.path.dirname(searchkit.__file__)


def test_emulator_imports_nothing_else_from_searchkit():
    script = BARE_IMPORT + (
        "import json\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('searchkit'))))"
    )

    result = subprocess.run(
        [sys.executable, "-c", script, PACKAGE_DIR],
        capture_output=True,
        text=True,
        timeout=HANG_S,
        check=True,
    )

    modules = json.loads(result.stdout)
    assert "searchkit.emulator.server" in modules
    # The one loopback check (issue 9.10) and the one way an old spelling warns (standard
    # library only) are shared; nothing of the client is.
    assert [m for m in modules if not m.startswith("searchkit.emulator")] == [
        "searchkit",
        "searchkit._deprecation",
        "searchkit._net",
    ]


def served_urls(processes: list[subprocess.Popen[str]]) -> list[str]:
    """The URL each child emulator prints once it serves, in order. A child's start-up (and
    its exit, :func:`stop_children`) is bounded by the suite's hang deadline (HANG_S), never
    by a shorter fixed wait: CI at load 12 waited more than 10 s for a child to exit."""
    deadline = time.monotonic() + HANG_S
    urls = []
    for process in processes:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"a child emulator printed no URL within {HANG_S} s (a hang)"
        urls.append(process.stdout.readline().strip())
    return urls


def stop_children(processes: list[subprocess.Popen[str]]) -> None:
    """End each child emulator (its standard input closed: it stops and exits), waiting up
    to HANG_S for them all; a child still running then is killed and the test fails."""
    deadline = time.monotonic() + HANG_S
    try:
        for process in processes:
            process.communicate(timeout=max(0.0, deadline - time.monotonic()))
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()


def test_two_processes_share_one_db_file_under_concurrent_creates(tmp_path):
    db = str(tmp_path / "shared.sqlite")
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", SERVE_SCRIPT, PACKAGE_DIR, db],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        urls = served_urls(processes)
        assert all(url.startswith("http://127.0.0.1:") for url in urls)
        statuses: list[int] = []
        lock = threading.Lock()

        def work(worker: int) -> None:
            api = f"{urls[worker % 2]}/v2/search"
            with requests.Session() as session:
                session.auth = USER
                for n in range(10):
                    body = {**VALID, "name": f"p{worker}-{n}"}
                    response = session.post(api, json=body, timeout=30)
                    with lock:
                        statuses.append(response.status_code)

        with ThreadPoolExecutor(max_workers=16) as pool:
            list(pool.map(work, range(16)))

        assert statuses == [200] * 160
        lists = [requests.get(f"{url}/v2/search", auth=USER, timeout=10).json() for url in urls]
        assert len(lists[0]) == 160
        assert lists[0] == lists[1]
        assert len({index["id"] for index in lists[0]}) == 160
    finally:
        stop_children(processes)


def test_client_helper_talks_to_this_emulator():
    with (
        Emulator(demo=True, seed=2, clock=NOW, window_minutes=10) as emu,
        emu.client(timeout=5, max_retries=0) as client,
    ):
        created = client.create_index("from-client", region="us-central1", type="free")
        names = [index.name for index in client.list_indexes()]

    assert created.name == "from-client"
    assert names[-1] == "from-client"
    assert len(names) == 7


def test_a_taken_port_raises_oserror_instead_of_ending_the_process():
    import errno
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        emulator = Emulator(port=port)
        with pytest.raises(OSError) as caught:
            emulator.start()
    assert caught.value.errno == errno.EADDRINUSE
    assert str(caught.value).startswith(
        f"[Errno {errno.EADDRINUSE}] cannot listen on 127.0.0.1:{port}: "
    )
    assert not emulator.running
