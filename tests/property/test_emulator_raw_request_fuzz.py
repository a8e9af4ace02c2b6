"""Arbitrary bytes on a raw socket: the emulator answers a JSON error, a whole answer, or
closes; never a 500, never a logged traceback, never a half-written index."""

from __future__ import annotations

import base64
import json
import logging
import socket

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchkit.emulator import Emulator
from tests.conftest import examples

USER = ("fuzz", "fuzz-pw-é€🦊")
AUTH = b"Basic " + base64.b64encode(f"{USER[0]}:{USER[1]}".encode())
VALID = b'{"name":"x","region":"eu-west-1","type":"free"}'
PIECES = [
    b"GET", b"POST", b"HEAD", b"PUT", b" /v2/search", b" /healthz", b" /openapi.json",
    b" HTTP/1.1", b" HTTP/1.0", b" HTTP/2.0", b"\r\n", b"\n", b"\r\n\r\n",
    b"Authorization: ", AUTH, b"Basic \xff\xfe", b"Basic", b"Host: x",
    b"Content-Length: ", b"5", b"-1", b"99999999999999999999", b"0x10",
    b"Transfer-Encoding: chunked", b"Transfer-Encoding: gzip", b"Expect: 100-continue",
    b"Content-Type: application/json", b"; charset=latin1", b": ", b"{}", VALID,
    b"0\r\n\r\n", b"ff\r\n", b"\x00", b"\xc3\xa9", b"\xff",
]  # fmt: skip
raw_requests = st.lists(st.sampled_from(PIECES) | st.binary(max_size=20), max_size=30).map(b"".join)


pytestmark = pytest.mark.emulator(
    shared=True,
    users=[USER],
    window_minutes=1,
    header_timeout=0.5,
    body_timeout=0.5,
    idle_timeout=0.5,
)


def exchange(emulator: Emulator, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", emulator.port), timeout=10) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except ConnectionResetError:
            pass
        return received


@settings(
    max_examples=examples(300),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=raw_requests)
def test_raw_bytes_never_get_a_500_or_a_traceback(emulator, caplog, data):
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="searchkit.emulator"):
        answer = exchange(emulator, data)

    assert caplog.records == []
    head, _, body = answer.partition(b"\r\n\r\n")
    if answer.startswith(b"HTTP/1."):
        status = int(head.split(b" ", 2)[1])
        assert status < 500 or status == 505  # HTTP Version Not Supported
        if status >= 400 and b"Transfer-Encoding: chunked" not in head:
            assert set(json.loads(body)) == {"error"}
    listed = emulator.store.list_indexes(emulator.account)
    assert all(index["name"] == "x" and len(index["token"]) == 64 for index in listed)
