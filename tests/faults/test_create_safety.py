"""A create is sent once: a lost answer is reconciled through a list, never re-POSTed."""

from __future__ import annotations

import datetime as dt

import pytest

import searchkit as sk
from searchkit.emulator import Emulator

from .conftest import PASSWORD, SHORT_READ, USERNAME, harness_client, stored_names
from .harness import FaultServer, drop, forward, hang, refused_port, reply, reset

CREATE = {"region": "eu-west-1", "type": "payg"}

LOST_ANSWERS = {
    "dropped": drop(),
    "reset": reset(),
    "timeout": hang(),
    "502": reply(502, "<html>Bad Gateway</html>"),
    "503": reply(503, {"error": "upstream timed out"}),
    "truncated": reply(200, b'{"id": "0000', {"Content-Length": "500"}),
}


@pytest.mark.parametrize("lost", LOST_ANSWERS.values(), ids=LOST_ANSWERS.keys())
def test_create_whose_answer_is_lost_returns_the_index_it_created(proxy, service, lost):
    proxy.script("POST", forward(then=lost))
    with harness_client(proxy.url, timeout=SHORT_READ) as client:
        index = client.create_index("docs", **CREATE)
    assert proxy.count("POST") == 1
    assert stored_names(service) == ["docs"]
    (stored,) = service.store.list_indexes(service.account)
    assert index.id == stored["id"]
    assert index.token.get_secret_value() == stored["token"]


def test_reconciling_skips_an_older_index_of_the_same_name(proxy, proxied, service):
    older = proxied.create_index("docs", **CREATE)
    proxy.script("POST", forward(then=drop()))
    newer = proxied.create_index("docs", **CREATE)
    assert newer.id != older.id
    assert stored_names(service) == ["docs", "docs"]
    assert proxy.count("POST") == 2  # one per call


def test_lost_answer_with_a_failing_list_is_ambiguous_and_not_repeated(proxy, proxied, service):
    proxy.script("GET", forward(), then=reply(503, {"error": "down"}))
    proxy.script("POST", forward(then=drop()))
    with pytest.raises(sk.AmbiguousCreateError) as info:
        proxied.create_index("docs", **CREATE)
    assert proxy.count("POST") == 1
    assert stored_names(service) == ["docs"]
    assert str(info.value) == (
        "POST /v2/search: creating index 'docs' failed after the request was sent "
        "(POST /v2/search to "
        f"{proxy.url}: the connection was reset or closed before an answer), and listing to "
        "check also failed (GET /v2/search -> 503: down); it may or may not exist: list the "
        "indexes before trying again"
    )


def test_lost_answer_without_reconciling_is_ambiguous_at_once(proxy, service):
    proxy.script("POST", forward(then=hang()))
    client = harness_client(proxy.url, timeout=SHORT_READ)
    with pytest.raises(sk.AmbiguousCreateError, match=r"no answer within 0\.5 s"):
        client.create_index("docs", reconcile=False, **CREATE)
    assert (proxy.count("POST"), proxy.count("GET")) == (1, 0)
    assert stored_names(service) == ["docs"]


def test_request_abandoned_before_its_body_was_read_is_ambiguous_and_creates_nothing(
    proxy, proxied, service
):
    proxy.script("POST", reset(before_body=True))
    with pytest.raises(sk.AmbiguousCreateError, match="no new index of that name is listed yet"):
        proxied.create_index("docs", **CREATE)
    assert proxy.count("POST") == 1
    assert stored_names(service) == []


def test_a_second_new_index_of_the_same_name_makes_the_create_ambiguous(proxy, proxied, service):
    # Someone else created "docs" while this call's answer was lost: the client cannot
    # tell which one is its own, so it must not guess.
    def lost_and_raced(exchange):
        forward(then=drop())(exchange)
        service.store.create_index(service.account, name="docs", **CREATE)

    proxy.script("POST", lost_and_raced)
    with pytest.raises(sk.AmbiguousCreateError, match="2 new indexes of that name are listed"):
        proxied.create_index("docs", **CREATE)
    assert proxy.count("POST") == 1
    assert stored_names(service) == ["docs", "docs"]


def test_server_error_on_create_without_a_new_index_is_server_error(proxy, proxied, service):
    proxy.script("POST", reply(500, {"error": "database unavailable"}))
    with pytest.raises(sk.ServerError, match=r"POST /v2/search -> 500: database unavailable"):
        proxied.create_index("docs", **CREATE)
    assert proxy.count("POST") == 1
    assert proxy.count("GET") == 2  # before and after: nothing new, so really not created
    assert stored_names(service) == []


def test_create_refused_before_sending_is_safe_to_repeat(service):
    with refused_port() as port:
        client = harness_client(f"http://127.0.0.1:{port}")
        with pytest.raises(sk.TransportError) as info:
            client.create_index("docs", reconcile=False, **CREATE)
    assert info.value.sent is False
    assert info.value.method == "POST"
    assert stored_names(service) == []
    # The same port, now answering: the repeat creates the one and only index.
    with FaultServer(upstream=service.url, port=port) as back:
        assert client.create_index("docs", **CREATE).name == "docs"
        assert back.count("POST") == 1
    assert stored_names(service) == ["docs"]


def test_list_before_a_create_failing_to_connect_sends_no_post(service):
    with refused_port() as port, pytest.raises(sk.TransportError) as info:
        harness_client(f"http://127.0.0.1:{port}").create_index("docs", **CREATE)
    assert info.value.sent is False
    assert stored_names(service) == []


@pytest.fixture
def skewed_proxy():
    """The harness in front of an emulator whose clock stands two days in the past."""
    past = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=2)
    with (
        Emulator(users=[(USERNAME, PASSWORD)], clock=past, window_minutes=5) as emulator,
        FaultServer(upstream=emulator.url) as proxy,
    ):
        yield proxy, emulator


@pytest.mark.parametrize(
    "lost", [drop(), reply(502, "<html>Bad Gateway</html>")], ids=["dropped", "502"]
)
def test_lost_create_on_a_service_with_a_distant_clock_is_ambiguous_not_a_failure(
    skewed_proxy, lost
):
    # The index was created, but its creation_time cannot prove it is this call's. Saying
    # "failed" here would invite a retry and a second index.
    proxy, emulator = skewed_proxy
    proxy.script("POST", forward(then=lost))
    with pytest.raises(sk.AmbiguousCreateError) as info:
        harness_client(proxy.url).create_index("docs", **CREATE)
    assert "1 new index(es) of that name are listed, but with a creation_time" in str(info.value)
    assert proxy.count("POST") == 1
    assert stored_names(emulator) == ["docs"]
