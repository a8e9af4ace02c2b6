"""Listing is safe to repeat: GET is retried on transport faults and 502/503/504, boundedly."""

from __future__ import annotations

import socket
import time

import pytest

import searchkit as sk
from tests.wall import HANG_S

from .conftest import SHORT_READ, harness_client, index_json
from .harness import hang, refused_port, reply, slow


@pytest.fixture
def connect_attempts(monkeypatch):
    """Every address a socket tried to connect to during the test."""
    attempts: list[object] = []
    real_connect = socket.socket.connect

    def recording_connect(self, address):
        attempts.append(address)
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", recording_connect)
    return attempts


def test_refused_connection_is_retried_with_backoff_then_transport_error(connect_attempts):
    with refused_port() as port:
        client = harness_client(f"http://127.0.0.1:{port}", max_retries=3, backoff_factor=0.05)
        started = time.monotonic()
        with pytest.raises(sk.TransportError) as info:
            client.list_indexes()
        elapsed = time.monotonic() - started
    assert connect_attempts == [("127.0.0.1", port)] * 4
    # Backoff before the 2nd and 3rd retry: 0.05 * 2 + 0.05 * 4 seconds at least.
    assert 0.3 <= elapsed < HANG_S
    assert info.value.sent is False
    assert info.value.method == "GET" and info.value.path == "/v2/search"
    assert str(info.value) == (
        f"list indexes (GET /v2/search to http://127.0.0.1:{port}): connection refused or "
        "host unreachable after 3 retries"
    )


def test_silent_server_is_retried_within_the_read_timeout_then_transport_error(server):
    server.script("GET", then=hang())
    client = harness_client(server.url, timeout=(0.5, 0.3), max_retries=2)
    started = time.monotonic()
    with pytest.raises(sk.TransportError, match=r"no answer within 0\.3 s after 2 retries"):
        client.list_indexes()
    elapsed = time.monotonic() - started
    assert server.count("GET") == 3
    assert 0.9 <= elapsed < HANG_S


@pytest.mark.parametrize("status", [502, 503, 504])
def test_gateway_failures_on_list_are_retried_until_the_list_comes_back(server, client, status):
    server.script(
        "GET",
        reply(status, "<html>bad gateway</html>"),
        reply(status, {"error": "upstream down"}),
        then=reply(200, [index_json("docs")]),
    )
    assert client.list_indexes().names() == ["docs"]
    assert server.count("GET") == 3


def test_service_unavailable_forever_is_server_error_after_the_bounded_attempts(server, client):
    server.script("GET", then=reply(503, {"error": "maintenance"}))
    with pytest.raises(sk.ServerError) as info:
        client.list_indexes()
    assert server.count("GET") == 3  # the first try and max_retries=2 retries
    assert info.value.status == 503
    assert str(info.value) == "list indexes (GET /v2/search -> 503): maintenance after 2 retries"


def test_internal_server_error_is_not_retried(server, client):
    # 500 says the service broke, not that it is briefly away: repeating would not help.
    server.script("GET", then=reply(500, {"error": "boom"}))
    with pytest.raises(sk.ServerError, match=r"^list indexes \(GET /v2/search -> 500\): boom$"):
        client.list_indexes()
    assert server.count("GET") == 1


def test_retrying_stops_when_the_time_budget_is_spent(server):
    server.script("GET", then=reply(503, {"error": "maintenance"}))
    client = harness_client(server.url, max_retries=50, backoff_factor=0.1, retry_budget=0.5)
    started = time.monotonic()
    with pytest.raises(sk.ServerError):
        client.list_indexes()
    elapsed = time.monotonic() - started
    assert 2 <= server.count("GET") < 10  # 51 attempts without the budget
    assert elapsed < HANG_S


def test_zero_retries_means_one_attempt(server):
    server.script("GET", then=reply(503, {"error": "maintenance"}))
    with pytest.raises(sk.ServerError):
        harness_client(server.url, max_retries=0).list_indexes()
    assert server.count("GET") == 1


def test_slow_answer_within_the_read_timeout_is_waited_for_not_retried(server):
    server.script("GET", then=slow(0.5, reply(200, [index_json("docs")])))
    client = harness_client(server.url, timeout=(2.0, 3.0))
    assert client.list_indexes().names() == ["docs"]
    assert server.count("GET") == 1


def test_answer_slower_than_the_read_timeout_is_abandoned_and_the_list_retried(server):
    server.script(
        "GET", slow(2.0, reply(200, [index_json("late")])), then=reply(200, [index_json("docs")])
    )
    client = harness_client(server.url, timeout=SHORT_READ)
    assert client.list_indexes().names() == ["docs"]
    assert server.count("GET") == 2


def test_error_reports_the_retries_actually_made_when_the_budget_ends_them(connect_attempts):
    # Before, the text said "after 50 retries" (the setting) whatever was really done.
    with refused_port() as port:
        client = harness_client(
            f"http://127.0.0.1:{port}", max_retries=50, backoff_factor=0.05, retry_budget=0.4
        )
        with pytest.raises(sk.TransportError) as info:
            client.list_indexes()
    made = len(connect_attempts) - 1
    assert 1 <= made < 50
    assert info.value.retries == made
    assert str(info.value).endswith(f"connection refused or host unreachable after {made} retries")


def test_error_after_one_retry_says_one_retry(server, client):
    server.script("GET", reply(503, {"error": "busy"}), then=reply(500, {"error": "broken"}))
    with pytest.raises(sk.ServerError) as info:
        client.list_indexes()
    assert server.count("GET") == 2
    assert info.value.retries == 1
    assert str(info.value) == "list indexes (GET /v2/search -> 500): broken after 1 retry"
    assert sk.errors.describe_failure(info.value) == (
        "The service failed to list indexes after 1 retry (HTTP 500: broken)."
    )
