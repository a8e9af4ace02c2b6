"""The whole fault matrix, once more, under DEBUG logging: no secret comes out anywhere.

Each row of the matrix runs in short form against the harness (in front of the emulator
where a create must really happen). Everything a user could see is gathered: every log
record of ``searchkit`` and ``urllib3``, the str, repr and formatted traceback (causes
included) of every exception, and the repr of every result. None may hold the account
password, its Basic credentials, a token of a created index, or a netrc password; and no
create may have made a second index.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import logging
import socket
import traceback
from collections.abc import Callable, Iterator
from functools import partial

import pytest

import searchkit as sk

from .conftest import (
    HARNESS_SECRETS,
    PASSWORD,
    READ_ONLY_TOKEN,
    SHORT_READ,
    TOKEN,
    USERNAME,
    basic_header,
    harness_client,
    index_json,
)
from .harness import (
    FaultServer,
    cut_mid_body,
    drip,
    drop,
    endless,
    forward,
    hang,
    http_date,
    refused_port,
    reply,
    reset,
    stall_mid_body,
    truncated,
)

NETRC_SECRET = "netrc-Pw-Zz90-sweep-only"
CREATE = {"region": "eu-west-1", "type": "payg"}


class Sweep:
    """Runs fault cases and keeps everything they let a user see."""

    def __init__(self, service, stack: contextlib.ExitStack):
        self.service = service
        self.stack = stack
        self.seen_texts: list[str] = []
        self.faults = 0
        self.creates: list[str] = []
        self.servers: list[FaultServer] = []
        self._names = (f"sweep-{n}" for n in itertools.count())

    def server(self, *, upstream: bool = True) -> FaultServer:
        url = self.service.url if upstream else None
        server = self.stack.enter_context(FaultServer(upstream=url))
        self.servers.append(server)
        return server

    def client(self, url: str, **options: object) -> sk.Client:
        return self.stack.enter_context(harness_client(url, **options))

    def name(self) -> str:
        name = next(self._names)
        self.creates.append(name)
        return name

    def attempt(self, call: Callable[[], object]) -> None:
        """Run one fault case; keep its result's repr or its exception as shown to users."""
        self.faults += 1
        try:
            result = call()
        except sk.SearchKitError as exc:
            self.seen_texts += [str(exc), repr(exc), *traceback.format_exception(exc)]
        else:
            self.seen_texts.append(repr(result))


def list_rows(s: Sweep) -> None:
    with refused_port() as port:
        s.attempt(s.client(f"http://127.0.0.1:{port}").list_indexes)
    server = s.server()
    server.script("GET", then=hang())
    s.attempt(s.client(server.url, timeout=SHORT_READ).list_indexes)
    for script in (
        [reply(502, "bad gateway"), reply(503, {}), reply(504, b"")],
        [reply(500, {"error": "boom"})],
        [reply(503, {"error": "down"})] * 3,
    ):
        server = s.server()
        server.script("GET", *script)
        s.attempt(s.client(server.url).list_indexes)


def rate_limit_rows(s: Sweep) -> None:
    for retry_after in ("1", http_date(1), "-1", "1.0", "soon", "86400"):
        server = s.server()
        server.script("GET", reply(429, {"error": "slow down"}, {"Retry-After": retry_after}))
        s.attempt(s.client(server.url).list_indexes)


def create_rows(s: Sweep) -> None:
    for lost in (
        drop(),
        reset(),
        hang(),
        reply(502, "bad gateway"),
        reply(500, {}),
        truncated(200, {"id": "x"}),
    ):
        server = s.server()
        server.script("POST", forward(then=lost))
        name = s.name()
        client = s.client(server.url, timeout=SHORT_READ)
        s.attempt(partial(client.create_index, name, **CREATE))
    for script, reconcile in (
        ([forward(then=drop())], False),
        ([reset(before_body=True)], True),
        ([reply(503, {"error": f"try later, token={TOKEN}"})], True),
    ):
        server = s.server()
        server.script("POST", *script)
        client = s.client(server.url)
        s.attempt(partial(client.create_index, s.name(), reconcile=reconcile, **CREATE))
    server = s.server()
    server.script("GET", forward(), then=reply(503, {"error": "down"}))
    server.script("POST", forward(then=drop()))
    s.attempt(partial(s.client(server.url).create_index, s.name(), **CREATE))
    with refused_port() as port:
        client = s.client(f"http://127.0.0.1:{port}")
        s.attempt(partial(client.create_index, s.name(), reconcile=False, **CREATE))


def status_and_body_rows(s: Sweep) -> None:
    bodies = [
        {"error": "e"},
        {"message": "m"},
        {"code": 1, "message": "cm"},
        "text",
        b"",
        "x" * 100_000,
        {"error": f"bad token: {TOKEN}"},
        {"error": f"token {TOKEN} unknown"},
        f"Authorization: {basic_header(USERNAME, PASSWORD)}",
        f"password {PASSWORD} wrong",
    ]
    for status in (400, 401, 403, 404, 405):
        for body in bodies:
            server = s.server(upstream=False)
            server.script("GET", reply(200, [index_json("known")]), then=reply(status, body))
            client = s.client(server.url)
            client.list_indexes()  # the client now knows the index's tokens
            s.attempt(client.list_indexes)


def invalid_response_rows(s: Sweep) -> None:
    for answer in (
        reply(200, f"<html>token {TOKEN} read_only_token={READ_ONLY_TOKEN}</html>"),
        reply(200, {"token": TOKEN}),
        reply(200, [index_json("bad", max_daily_queries="lots")]),
        truncated(200, [index_json("cut")]),
    ):
        server = s.server(upstream=False)
        server.script("GET", reply(200, [index_json("known")]), then=answer)
        client = s.client(server.url)
        client.list_indexes()
        s.attempt(client.list_indexes)


def hostile_body_rows(s: Sweep) -> None:
    """Bodies that are too large, too slow, reset or stalled, echoing secrets on the way."""
    echo = [index_json(f"token {TOKEN} password {PASSWORD}")]
    for answer, options in (
        (endless(b"[" + f"{TOKEN} {PASSWORD} ".encode() * 100), {"max_response_bytes": 1 << 20}),
        (reply(200, echo), {"max_response_bytes": 100}),
        (drip(json.dumps(echo).encode(), every=0.05), {"deadline": 0.3}),
        (cut_mid_body(echo, after=200), {}),
        (stall_mid_body(echo, after=200), {"timeout": SHORT_READ, "max_retries": 0}),
    ):
        server = s.server(upstream=False)
        server.script("GET", then=answer)
        s.attempt(s.client(server.url, **options).list_indexes)
    server = s.server()
    server.script("POST", forward(then=cut_mid_body({"token": TOKEN}, after=5)))
    s.attempt(partial(s.client(server.url).create_index, s.name(), **CREATE))


def credential_rows(s: Sweep, monkeypatch, tmp_path) -> None:
    elsewhere = s.server(upstream=False)
    for status in (301, 302, 307, 308):
        server = s.server()
        server.script(
            "GET",
            reply(
                status,
                b"",
                {"Location": f"http://u:{PASSWORD}@127.0.0.1:{elsewhere.port}/?token={TOKEN}"},
            ),
        )
        s.attempt(s.client(server.url).list_indexes)
    netrc = tmp_path / "netrc"
    netrc.write_text(f"default login netrc-user password {NETRC_SECRET}\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    server = s.server()
    server.script("GET", forward(), reply(401, {"error": "no"}), then=forward())
    client = s.client(server.url)
    s.attempt(client.list_indexes)
    s.attempt(client.list_indexes)
    s.attempt(partial(client.create_index, s.name(), **CREATE))
    for url in (
        "http://search.example.com",
        "http://localhost@evil.example",
        f"https://{USERNAME}:{PASSWORD}@search.example.com",
    ):
        s.attempt(lambda u=url: sk.Client(username=USERNAME, password=PASSWORD, base_url=u))
    monkeypatch.setenv("SEARCHKIT_BASE_URL", server.url)
    monkeypatch.setenv("SEARCHKIT_USERNAME", USERNAME)
    s.attempt(sk.Client)
    monkeypatch.setenv("SEARCHKIT_PASSWORD", "")
    s.attempt(sk.Client)


@contextlib.contextmanager
def no_outside_connections(monkeypatch) -> Iterator[list[object]]:
    """Record (and refuse) any connect to a non-loopback address."""
    outside: list[object] = []
    real_connect = socket.socket.connect

    def connect(sock, address):
        if isinstance(address, tuple) and address[0] not in ("127.0.0.1", "::1"):
            outside.append(address)
            raise OSError("tripwire: only loopback in tests")
        return real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    yield outside


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_whole_matrix_under_debug_logging_leaks_no_secret_and_duplicates_nothing(
    emulator, caplog, monkeypatch, tmp_path
):
    caplog.set_level(logging.DEBUG, logger="searchkit")
    caplog.set_level(logging.DEBUG, logger="urllib3")
    with contextlib.ExitStack() as stack, no_outside_connections(monkeypatch) as outside:
        sweep = Sweep(emulator, stack)
        list_rows(sweep)
        rate_limit_rows(sweep)
        create_rows(sweep)
        status_and_body_rows(sweep)
        invalid_response_rows(sweep)
        hostile_body_rows(sweep)
        credential_rows(sweep, monkeypatch, tmp_path)
        sent_headers = [repr(r.headers) for srv in sweep.servers for r in srv.seen()]
        posts_per_server = [srv.count("POST") for srv in sweep.servers]

    stored = emulator.store.list_indexes(emulator.account)
    secrets = {
        *HARNESS_SECRETS,
        NETRC_SECRET,
        *(i["token"] for i in stored),
        *(i["read_only_token"] for i in stored),
    }
    record_texts = [f"{r.getMessage()} {r.args!r}" for r in caplog.records]
    visible = "\n".join([caplog.text, *record_texts, *sweep.seen_texts])
    leaked = sorted(s for s in secrets if s in visible)
    netrc_sent = [h for h in sent_headers if NETRC_SECRET in h or "netrc-user" in h]
    per_name = collections.Counter(i["name"] for i in stored)
    duplicates = sum(n - 1 for n in per_name.values() if n > 1)

    print(
        f"\nfault matrix sweep: {sweep.faults} faults tried, {len(sweep.creates)} creates, "
        f"{duplicates} duplicates created, {len(leaked)} secrets leaked, "
        f"{len(caplog.records)} log records checked"
    )
    assert sweep.faults == 94
    assert max(posts_per_server) == 1  # never a second POST for one create
    assert leaked == []
    assert netrc_sent == []
    assert outside == []
    assert duplicates == 0
    assert set(per_name) <= set(sweep.creates)
