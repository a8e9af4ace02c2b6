"""429 on a list: Retry-After honoured up to a cap, garbage ignored, a day-long wait refused."""

from __future__ import annotations

import time

import pytest

import searchkit as sk
from tests.wall import HANG_S

from .conftest import harness_client, index_json
from .harness import http_date, reply

SLOW_DOWN = {"error": "slow down"}


def test_retry_after_in_seconds_is_waited_then_the_list_comes_back(server, client):
    server.script("GET", reply(429, SLOW_DOWN, {"Retry-After": "1"}), then=reply(200, []))
    assert client.list_indexes().names() == []
    first, second = server.seen("GET")
    assert 0.9 <= second.at - first.at < HANG_S


def test_retry_after_as_an_http_date_is_honoured(server, client):
    # HTTP dates have whole seconds, so "2 s from now" means a wait of more than 1 s.
    server.script(
        "GET",
        reply(429, SLOW_DOWN, {"Retry-After": http_date(2)}),
        then=reply(200, [index_json("docs")]),
    )
    assert client.list_indexes().names() == ["docs"]
    first, second = server.seen("GET")
    assert 0.9 <= second.at - first.at < HANG_S


@pytest.mark.parametrize("garbage", ["-1", "20.0", "soon", ""])
def test_garbled_retry_after_falls_back_to_backoff(server, client, garbage):
    server.script(
        "GET",
        reply(429, SLOW_DOWN, {"Retry-After": garbage}),
        reply(429, SLOW_DOWN, {"Retry-After": garbage}),
        then=reply(200, [index_json("docs")]),
    )
    assert client.list_indexes().names() == ["docs"]
    assert server.count("GET") == 3
    first, *_, last = server.seen("GET")
    assert last.at - first.at < HANG_S / 2  # backoff_factor=0.01; "20.0" honoured: 40 s


def test_retry_after_beyond_the_cap_is_rate_limit_error_at_once(server, client):
    server.script("GET", then=reply(429, SLOW_DOWN, {"Retry-After": "86400"}))
    started = time.monotonic()
    with pytest.raises(sk.RateLimitError) as info:
        client.list_indexes()
    assert time.monotonic() - started < HANG_S  # not a day's wait
    assert server.count("GET") == 1
    assert info.value.retry_after == 86400
    assert info.value.status == 429
    assert (
        str(info.value) == "list indexes (GET /v2/search -> 429): slow down (retry after 86400 s)"
    )


def test_rate_limit_without_retry_after_is_retried_then_raised(server, client):
    server.script("GET", then=reply(429, SLOW_DOWN))
    with pytest.raises(sk.RateLimitError) as info:
        client.list_indexes()
    assert server.count("GET") == 3
    assert info.value.retry_after is None


def test_rate_limited_create_is_not_repeated(server, client):
    server.script("GET", then=reply(200, []))
    server.script("POST", then=reply(429, SLOW_DOWN, {"Retry-After": "1"}))
    with pytest.raises(sk.RateLimitError) as info:
        client.create_index("docs", region="eu-west-1", type="payg")
    assert server.count("POST") == 1
    assert info.value.retry_after == 1


def test_retry_after_waits_count_against_the_retry_budget(server):
    server.script("GET", then=reply(429, SLOW_DOWN, {"Retry-After": "1"}))
    client = harness_client(server.url, max_retries=10, retry_budget=1.5)
    started = time.monotonic()
    with pytest.raises(sk.RateLimitError):
        client.list_indexes()
    # One wait of 1 s fits the 1.5 s budget; a second would end past it, so none is begun.
    assert server.count("GET") == 2
    assert time.monotonic() - started < HANG_S
