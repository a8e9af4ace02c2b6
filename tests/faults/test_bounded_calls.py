"""A hostile or broken server cannot take the kernel: bodies are capped, calls have deadlines.

Regression tests of issue 11, items 1 (unbounded reads), 4 (a server dripping bytes) and
9 (a list reset mid-body is retried like any other connection error).
"""

from __future__ import annotations

import json
import time
import tracemalloc

import pytest

import searchkit as sk
from searchkit.api.client import DEFAULT_MAX_RESPONSE_BYTES
from tests.wall import HANG_S

from .conftest import SHORT_READ, harness_client, index_json
from .harness import (
    cut_mid_body,
    drip,
    drip_head,
    endless,
    gzip_bomb,
    hang,
    reply,
    reset,
    stall_mid_body,
)

MiB = 1 << 20


# -- item 1: every body is read with a cap ------------------------------------------------


def test_default_cap_is_1_gib_enough_for_10000_indexes_with_a_full_day_of_points():
    client = sk.Client(username="u", password="p", base_url="http://127.0.0.1:1")
    assert client.max_response_bytes == DEFAULT_MAX_RESPONSE_BYTES == 1024 * MiB


def test_gzip_bomb_fails_on_the_cap_counted_after_decompression_with_little_memory(server):
    # About 1 MiB on the wire that inflates to 1 GiB of (valid JSON) whitespace: before,
    # the client inflated it all (2.2 GiB of RAM); now it stops at the cap.
    server.script("GET", then=gzip_bomb(1 << 30))
    client = harness_client(server.url, max_response_bytes=16 * MiB, timeout=10.0)
    tracemalloc.start()
    try:
        with pytest.raises(sk.InvalidResponseError) as info:
            client.list_indexes()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert str(info.value) == (
        "list indexes (GET /v2/search -> 200): unexpected response from the service: the "
        "answer is larger than 16 MiB, over the limit of max_response_bytes=16777216 (16 MiB); "
        "a Client made with max_response_bytes=33554432 (32 MiB) or more reads it"
    )
    assert peak < 64 * MiB
    assert len(server.seen("GET")) == 1
    assert server.count("GET") == 1  # not retried: a second try would be as large


def test_endless_body_fails_on_the_cap_instead_of_memory_error(server):
    server.script("GET", then=endless())
    client = harness_client(server.url, max_response_bytes=8 * MiB)
    with pytest.raises(sk.InvalidResponseError, match=r"max_response_bytes=8388608 \(8 MiB\)"):
        client.list_indexes()
    assert server.count("GET") == 1


def test_announced_length_over_the_cap_is_refused_before_reading(server):
    body = json.dumps([index_json("docs")]).encode()
    server.script("GET", then=reply(200, body))
    client = harness_client(server.url, max_response_bytes=len(body) - 1)
    with pytest.raises(sk.InvalidResponseError) as info:
        client.list_indexes()
    assert f"the answer announces {len(body)} bytes, over the limit" in str(info.value)
    assert str(info.value).endswith(
        f"; a Client made with max_response_bytes={len(body)} ({len(body)} bytes) reads it"
    )


def test_body_exactly_at_the_cap_is_read(server):
    body = json.dumps([index_json("docs")]).encode()
    server.script("GET", then=reply(200, body))
    client = harness_client(server.url, max_response_bytes=len(body))
    assert client.list_indexes().names() == ["docs"]


def test_gzip_body_under_the_cap_is_inflated_and_read(server):
    server.script("GET", then=gzip_bomb(4 * MiB))  # "[" + spaces + "]": an empty list
    client = harness_client(server.url, max_response_bytes=4 * MiB)
    assert len(client.list_indexes()) == 0


@pytest.mark.parametrize("cap", [0, -1, 1.5, True])
def test_bad_cap_is_refused(cap):
    with pytest.raises(sk.ValidationError, match="max_response_bytes must be a whole number"):
        sk.Client(username="u", password="p", base_url="http://127.0.0.1:1", max_response_bytes=cap)


def test_unknown_content_encoding_is_an_invalid_response(server):
    server.script("GET", then=reply(200, b"[]", {"Content-Encoding": "br"}))
    with pytest.raises(sk.InvalidResponseError, match="unknown encoding 'br'"):
        harness_client(server.url).list_indexes()


@pytest.mark.parametrize("status", [502, 503])
def test_endless_body_of_a_retried_status_is_not_read_before_the_retry(server, status):
    # urllib3 reads a retried answer's body to the end before retrying: an endless one
    # would hold the call until the server gave up.
    server.script("GET", endless(status=status), then=reply(200, [index_json("docs")]))
    client = harness_client(server.url, timeout=(0.5, 0.5))
    started = time.monotonic()
    assert client.list_indexes().names() == ["docs"]
    assert time.monotonic() - started < HANG_S
    assert server.count("GET") == 2


def test_endless_body_of_the_last_retried_status_fails_on_the_cap(server):
    server.script("GET", then=endless(status=503))
    client = harness_client(server.url, max_response_bytes=1 << 20)
    with pytest.raises(sk.ServerError) as info:
        client.list_indexes()
    assert server.count("GET") == 3
    assert info.value.retries == 2


# -- item 4: one deadline for the whole call ----------------------------------------------


def test_server_dripping_one_byte_at_a_time_is_cut_off_at_the_deadline(server):
    # Each byte comes well within the read timeout, so only a whole-call deadline ends it.
    body = json.dumps([index_json("docs")]).encode()
    server.script("GET", then=drip(body, every=0.1))
    client = harness_client(server.url, timeout=(0.5, 0.5))
    assert client.deadline == 2.0  # twice (connect + read)
    started = time.monotonic()
    with pytest.raises(sk.TransportError) as info:
        client.list_indexes()
    elapsed = time.monotonic() - started
    assert str(info.value) == (
        f"list indexes (GET /v2/search to {server.url}): the call did not finish within "
        "its deadline of 2 s"
    )
    assert info.value.sent is True
    assert 2.0 <= elapsed < HANG_S  # the drip alone would take minutes
    assert server.count("GET") == 1  # the deadline is final: no retry


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_server_dripping_its_headers_is_cut_off_at_the_deadline(server, method):
    server.script(method, then=drip_head(every=0.1))
    server.script("GET" if method == "POST" else "POST", then=reply(200, []))
    client = harness_client(server.url, timeout=(0.5, 0.5))
    started = time.monotonic()
    with pytest.raises((sk.TransportError, sk.AmbiguousCreateError)) as info:
        if method == "GET":
            client.list_indexes()
        else:
            client.create_index("docs", region="eu-west-1", type="payg")
    assert time.monotonic() - started < HANG_S
    assert "the call did not finish within its deadline of 2 s" in str(info.value)
    assert server.count(method) == 1


def test_deadline_is_configurable(server):
    body = json.dumps([index_json("docs")]).encode()
    server.script("GET", then=drip(body, every=0.1))
    client = harness_client(server.url, deadline=0.6)
    started = time.monotonic()
    with pytest.raises(sk.TransportError, match=r"within its deadline of 0\.6 s"):
        client.list_indexes()
    assert time.monotonic() - started < HANG_S


def test_deadline_stops_retries_that_would_outlast_it(server):
    server.script("GET", then=hang())
    client = harness_client(server.url, timeout=(0.5, 0.4), max_retries=20, deadline=1.0)
    started = time.monotonic()
    with pytest.raises(sk.TransportError):
        client.list_indexes()
    assert time.monotonic() - started < HANG_S
    assert server.count("GET") <= 3  # 21 attempts without the deadline


def test_slow_create_and_its_lists_share_one_deadline(proxy):
    proxy.script("GET", then=hang())
    client = harness_client(proxy.url, timeout=(0.5, 0.5), deadline=1.2, max_retries=5)
    started = time.monotonic()
    with pytest.raises(sk.TransportError) as info:
        client.create_index("docs", region="eu-west-1", type="payg")
    assert time.monotonic() - started < HANG_S
    assert info.value.operation == "create index 'docs'"
    assert proxy.count("POST") == 0


@pytest.mark.parametrize("deadline", [0, -2, float("nan"), "5"])
def test_bad_deadline_is_refused(deadline):
    with pytest.raises(sk.ValidationError, match="deadline must be a number above 0"):
        sk.Client(username="u", password="p", base_url="http://127.0.0.1:1", deadline=deadline)


# -- item 9: a list reset mid-body is retried ---------------------------------------------


def test_list_reset_mid_body_is_retried_and_comes_back(server, client):
    server.script(
        "GET", cut_mid_body([index_json("lost")], after=20), then=reply(200, [index_json("docs")])
    )
    assert client.list_indexes().names() == ["docs"]
    assert server.count("GET") == 2


def test_list_reset_mid_body_every_time_is_a_transport_error_after_the_retries(server, client):
    server.script("GET", then=cut_mid_body([index_json("lost")], after=20))
    with pytest.raises(sk.TransportError) as info:
        client.list_indexes()
    assert server.count("GET") == 3  # the first try and max_retries=2 retries
    assert info.value.retries == 2
    assert str(info.value) == (
        f"list indexes (GET /v2/search to {server.url}): the connection was reset while the "
        "answer was being read after 2 retries"
    )


def test_body_retries_and_connection_retries_spend_one_budget(server, client):
    # max_retries=2: a reset before the answer (retried by urllib3) and a reset mid-body
    # (retried by the client) leave one retry, which the next mid-body reset spends.
    lost = cut_mid_body([index_json("lost")], after=20)
    server.script("GET", reset(), lost, lost, then=reply(200, [index_json("docs")]))
    with pytest.raises(sk.TransportError, match="after 2 retries"):
        client.list_indexes()
    assert server.count("GET") == 3


def test_create_reset_mid_body_is_never_re_sent(proxy, proxied, emulator):
    from .harness import forward

    def forward_then_cut(exchange):
        forward(then=cut_mid_body({"id": "x"}, after=5))(exchange)

    proxy.script("POST", forward_then_cut)
    index = proxied.create_index("docs", region="eu-west-1", type="payg")
    assert proxy.count("POST") == 1
    assert index.name == "docs"


def test_list_whose_body_stops_coming_is_retried_within_the_read_timeout(server):
    server.script(
        "GET", stall_mid_body([index_json("lost")], after=20), then=reply(200, [index_json("ok")])
    )
    client = harness_client(server.url, timeout=SHORT_READ)
    assert client.list_indexes().names() == ["ok"]
    assert server.count("GET") == 2


def test_list_whose_body_always_stops_is_a_transport_error_naming_the_read_timeout(server):
    server.script("GET", then=stall_mid_body([index_json("lost")], after=20))
    client = harness_client(server.url, timeout=SHORT_READ, max_retries=1)
    with pytest.raises(sk.TransportError) as info:
        client.list_indexes()
    assert str(info.value) == (
        f"list indexes (GET /v2/search to {server.url}): the answer stopped coming for 0.5 s "
        "after 1 retry"
    )
    assert server.count("GET") == 2
