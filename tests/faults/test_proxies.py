"""Proxies: loopback (the emulator) is always reached directly; https honours the variables.

Regression tests of issue 11, item 2: with ``http_proxy`` set, Basic credentials meant for
``http://127.0.0.1`` went in clear text to the proxy host, and its answer was trusted.
"""

from __future__ import annotations

import pytest

import searchkit as sk

from .conftest import PASSWORD, USERNAME, harness_client
from .harness import FaultServer, reply

PROXY_VARIABLES = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy")
PROXY_VARIABLES += ("ALL_PROXY", "no_proxy", "NO_PROXY")


@pytest.fixture
def rogue_proxy(monkeypatch):
    """A proxy-like server on loopback that records whether anyone came to it."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with FaultServer() as proxy:
        proxy.script("GET", then=reply(200, []))  # a forged, empty "list"
        proxy.script("POST", then=reply(500, {"error": "proxied"}))
        proxy.script("CONNECT", then=reply(403, "no tunnel for you"))
        yield proxy


@pytest.mark.parametrize("variable", ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"])
def test_loopback_traffic_never_goes_through_a_proxy(rogue_proxy, monkeypatch, emulator, variable):
    monkeypatch.setenv(variable, rogue_proxy.url)
    emulator.store.create_index(emulator.account, name="real", region="eu-west-1", type="payg")
    with harness_client(emulator.url) as client:
        assert client.list_indexes().names() == ["real"]
        assert client.create_index("docs", region="eu-west-1", type="payg").name == "docs"
    assert rogue_proxy.count() == 0


def test_loopback_by_name_is_not_proxied_either(rogue_proxy, monkeypatch, emulator):
    monkeypatch.setenv("http_proxy", rogue_proxy.url)
    monkeypatch.setenv("HTTP_PROXY", rogue_proxy.url)
    url = emulator.url.replace("127.0.0.1", "localhost")
    with harness_client(url) as client:
        assert client.list_indexes().names() == []
    assert rogue_proxy.count() == 0


def test_https_traffic_goes_through_the_configured_proxy_without_the_credentials(
    rogue_proxy, monkeypatch
):
    # Users behind a corporate proxy need it: the client asks the proxy for a tunnel
    # (CONNECT), and the Basic credentials would travel only inside the TLS tunnel.
    monkeypatch.setenv("HTTPS_PROXY", rogue_proxy.url)
    client = sk.Client(
        username=USERNAME,
        password=PASSWORD,
        base_url="https://search.example.invalid",
        timeout=2.0,
        max_retries=0,
    )
    with pytest.raises(sk.TransportError) as info:
        client.list_indexes()
    (tunnel,) = rogue_proxy.seen("CONNECT")
    assert tunnel.path == "search.example.invalid:443"
    assert tunnel.header("Authorization") is None
    assert str(info.value) == (
        "list indexes (GET /v2/search to https://search.example.invalid): the proxy refused "
        "or failed the connection"
    )


def test_no_proxy_is_honoured_for_https(rogue_proxy, monkeypatch, tripwire_dns):
    monkeypatch.setenv("HTTPS_PROXY", rogue_proxy.url)
    monkeypatch.setenv("NO_PROXY", "search.example.invalid")
    client = sk.Client(
        username=USERNAME,
        password=PASSWORD,
        base_url="https://search.example.invalid",
        timeout=2.0,
        max_retries=0,
    )
    with pytest.raises(sk.TransportError):
        client.list_indexes()
    assert rogue_proxy.count() == 0
    assert tripwire_dns == ["search.example.invalid"]  # it went for the host itself


@pytest.fixture
def tripwire_dns(monkeypatch):
    """Name lookups of the test, refused (nothing leaves the machine)."""
    import socket

    looked_up: list[str] = []
    real = socket.getaddrinfo

    def lookup(host, *args, **kwargs):
        if host in ("127.0.0.1", "localhost"):
            return real(host, *args, **kwargs)
        looked_up.append(host)
        raise socket.gaierror(socket.EAI_NONAME, "tripwire: no lookups in this test")

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    return looked_up
