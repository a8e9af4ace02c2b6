"""Fixtures of the fault tests: the misbehaving server, clients with tiny timeouts, secrets.

Every test here runs with DEBUG logging of ``searchkit`` and ``urllib3`` captured, and
fails if the account password (plain or as its Basic header) or a known token shows up in
a log line.
"""

from __future__ import annotations

import base64
import logging

import pytest

import searchkit as sk

# TOKEN and READ_ONLY_TOKEN are what canned responses carry and error bodies echo.
from tests.index_json import READ_ONLY_TOKEN, TOKEN, index_json  # noqa: F401 - for the tests
from tests.wall import HANG_S

from .harness import FaultServer

#: The account password of every harness client; distinctive, so a leak is unmistakable.
PASSWORD = "pw-Kx7q2-never-shown-9Zr4"
USERNAME = "fault-tester"


def basic_header(username: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()


def secrets_of(username: str, password: str) -> tuple[str, ...]:
    """The texts that would betray ``password``: itself and its Basic credentials."""
    encoded = base64.b64encode(f"{username}:{password}".encode()).decode()
    return (password, encoded)


HARNESS_SECRETS = (*secrets_of(USERNAME, PASSWORD), TOKEN, READ_ONLY_TOKEN)


#: Read timeout of tests whose server never answers: short, so the matrix runs fast.
SHORT_READ = (2.0, 0.5)


#: A harness client's settings: short backoff, so faults resolve fast. The timeout stays at
#: 2 s so a busy machine is not mistaken for a fault; tests whose server never answers pass
#: ``timeout=SHORT_READ``.
HARNESS_SETTINGS: dict[str, object] = {
    "username": USERNAME,
    "password": PASSWORD,
    "timeout": 2.0,
    "max_retries": 2,
    "backoff_factor": 0.01,
    "retry_after_cap": 5.0,
    "retry_budget": 5.0,
}


def harness_client(url: str, **options: object) -> sk.Client:
    """A client of the harness at ``url`` (:data:`HARNESS_SETTINGS`, ``options`` over them)."""
    return sk.Client(base_url=url, **{**HARNESS_SETTINGS, **options})  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _no_secret_in_debug_logs(caplog):
    caplog.set_level(logging.DEBUG, logger="searchkit")
    caplog.set_level(logging.DEBUG, logger="urllib3")
    yield
    text = caplog.text
    leaked = [s for s in HARNESS_SECRETS if s in text]
    assert not leaked, "a secret reached the DEBUG log"


# A misbehaving answer lasts far longer than the ceiling HANG_S a test allows a bounded call,
# so "the call was cut off" and "the machine was busy" cannot be confused.
MAX_HANG_S = 4 * HANG_S


@pytest.fixture
def server_options():
    """Here ``server`` (tests/conftest.py) may hang far past what a bounded call allows."""
    return {"max_hang": MAX_HANG_S}


@pytest.fixture
def client_options():
    """Here ``client`` is the harness's: of ``server``, with the harness's settings."""
    return {"of": "server", **HARNESS_SETTINGS}


@pytest.fixture
def emulator_options():
    """Here the emulator stands in for the real service: the harness's account, real clock."""
    return {"users": [(USERNAME, PASSWORD)], "window_minutes": 5}


@pytest.fixture
def proxy(emulator):
    """The harness in front of the emulator: forwards what it is not told to break."""
    with FaultServer(upstream=emulator.url, max_hang=MAX_HANG_S) as s:
        yield s


@pytest.fixture
def proxied(proxy):
    """A client of the emulator through the harness."""
    with harness_client(proxy.url) as c:
        yield c


def stored_names(service) -> list[str]:
    """Names of the indexes the emulator really holds, oldest first."""
    return [index["name"] for index in service.store.list_indexes(service.account)]
