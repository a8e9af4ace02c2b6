"""Hostile clients on raw sockets: slow, silent, malformed or too many. The emulator answers
with a JSON error or closes the connection, never hangs, never answers 500."""

from __future__ import annotations

import base64
import json
import logging
import select
import socket
import threading
import time
from collections.abc import Iterator

import pytest
import requests

from searchkit.emulator import Emulator
from tests.wall import HANG_S

from .conftest import NOW, USER

AUTH = "Basic " + base64.b64encode(f"{USER[0]}:{USER[1]}".encode()).decode()
CHALLENGE = 'Basic realm="searchkit-emulator", charset="UTF-8"'
# Short limits, so the tests wait at most a few seconds for each one to strike.
LIMITS = {"header_timeout": 1.0, "body_timeout": 1.0, "idle_timeout": 1.0}


pytestmark = pytest.mark.emulator(users=[USER], seed=3, clock=NOW, window_minutes=5, **LIMITS)


@pytest.fixture(autouse=True)
def _nothing_logged(
    request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture
) -> Iterator[None]:
    # Set before the emulator starts, checked after it stopped (autouse fixtures wrap the
    # others): no traceback, no "unexpected error" for anything a client can send.
    if "emulator" not in request.fixturenames:
        yield
        return
    caplog.set_level(logging.WARNING, logger="searchkit.emulator")
    yield
    assert [record.getMessage() for record in caplog.records] == []


def connect(emulator: Emulator) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", emulator.port), timeout=10)
    return sock


def read_all(sock: socket.socket, within: float = HANG_S) -> bytes:
    """Read until the server closes the connection; fail if it has not within ``within`` s."""
    deadline = time.monotonic() + within
    received = b""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"the server did not close within {within} s: {received!r}")
        sock.settimeout(remaining)
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        if not chunk:
            return received
        received += chunk


def exchange(emulator: Emulator, data: bytes, *, half_close: bool = False) -> bytes:
    with connect(emulator) as sock:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        return read_all(sock)


def parse(answer: bytes) -> tuple[int, dict[str, str], object]:
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        key, _, value = line.partition(":")
        headers[key.strip().lower()] = value.strip()
    if headers.get("transfer-encoding") == "chunked":
        body = dechunk(body)
    return status, headers, json.loads(body)


def dechunk(body: bytes) -> bytes:
    out = b""
    while True:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return out
        out += rest[:size]
        body = rest[size + 2 :]


def post_head(**headers: str) -> bytes:
    fields = {
        "Host": "127.0.0.1",
        "Authorization": AUTH,
        "Content-Type": "application/json",
        **headers,
    }
    lines = "".join(f"{key}: {value}\r\n" for key, value in fields.items())
    return f"POST /v2/search HTTP/1.1\r\n{lines}\r\n".encode()


VALID = b'{"name":"docs","region":"eu-west-1","type":"free"}'


def test_a_silent_connection_is_closed_after_the_idle_timeout(emulator):
    with connect(emulator) as sock:
        started = time.monotonic()
        assert read_all(sock, within=HANG_S) == b""
        waited = time.monotonic() - started

    assert 0.8 <= waited < HANG_S
    assert wait_for(lambda: emulator.open_connections == 0)


def test_a_header_dripped_byte_by_byte_gets_408_at_the_header_deadline(emulator):
    with connect(emulator) as sock:
        sock.sendall(b"GET /v2/search HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        started = time.monotonic()
        # One byte every 0.1 s: each read succeeds, only a deadline on the whole header
        # stops this.
        while not select.select([sock], [], [], 0.1)[0]:
            if time.monotonic() - started > HANG_S:
                raise AssertionError(f"no answer {HANG_S:g} s into a dripped header")
            sock.sendall(b"a")
        answer = read_all(sock)

    status, headers, body = parse(answer)
    assert status == 408
    assert headers["content-type"] == "application/json"
    assert body == {"error": "the request header was not received within 1 s"}


def test_a_body_that_stops_short_of_its_content_length_gets_408(emulator):
    with connect(emulator) as sock:
        sock.sendall(post_head(**{"Content-Length": "50"}) + b'{"name":')
        answer = read_all(sock)

    status, _, body = parse(answer)
    assert status == 408
    assert body == {"error": "the request body was not received in time"}
    assert emulator.store.count_indexes() == 0


def test_a_chunked_body_without_its_final_chunk_gets_408_while_the_client_waits(emulator):
    data = post_head(**{"Transfer-Encoding": "chunked"}) + b'5\r\n{"nam\r\n'

    with connect(emulator) as sock:
        sock.sendall(data)
        answer = read_all(sock)

    status, _, body = parse(answer)
    assert status == 408
    assert body == {"error": "the request body was not received in time"}


@pytest.mark.parametrize(
    ("chunks", "message"),
    [
        (b"zz\r\n{}\r\n0\r\n\r\n", "invalid chunk size 'zz'"),
        (b"-2\r\n{}\r\n0\r\n\r\n", "invalid chunk size '-2'"),
        (b"+2\r\n{}\r\n0\r\n\r\n", "invalid chunk size '+2'"),
        (b"0x2\r\n{}\r\n0\r\n\r\n", "invalid chunk size '0x2'"),
        (b"\r\n{}\r\n0\r\n\r\n", "invalid chunk size ''"),
        (b"1" * 17 + b"\r\n{}\r\n0\r\n\r\n", "invalid chunk size '11111111111111111'"),
        (b"2\r\n{}XX0\r\n\r\n", "a chunk's data does not end in CRLF"),
        (b"2\n{}\n0\n\n", "the chunk size line does not end in CRLF"),
        (b"2\r\n{}\r\n", "the body ended before the chunk size line"),
        (b"9\r\n{}", "the body ended inside a chunk"),
    ],
    ids=[
        "letters",
        "negative",
        "plus",
        "hex-prefix",
        "empty",
        "too-long",
        "no-crlf",
        "bare-lf",
        "no-final-chunk",
        "cut-inside",
    ],
)
def test_a_malformed_chunked_body_gets_400_naming_the_fault(emulator, chunks, message):
    data = post_head(**{"Transfer-Encoding": "chunked"}) + chunks

    status, headers, body = parse(exchange(emulator, data, half_close=True))

    assert status == 400
    assert headers["content-type"] == "application/json"
    assert body == {"error": f"malformed chunked request body: {message}"}
    assert emulator.store.count_indexes() == 0


def test_a_well_formed_chunked_body_with_extension_and_trailer_creates(emulator):
    half = len(VALID) // 2
    chunks = (
        f"{half:x};note=1\r\n".encode()
        + VALID[:half]
        + f"\r\n{len(VALID) - half:X}\r\n".encode()
        + VALID[half:]
        + b"\r\n0\r\nX-Trailer: yes\r\n\r\n"
    )

    status, _, body = parse(
        exchange(emulator, post_head(**{"Transfer-Encoding": "chunked"}) + chunks)
    )

    assert status == 200
    assert body["name"] == "docs"


def test_a_body_shorter_than_its_content_length_gets_400_when_the_client_hangs_up(emulator):
    data = post_head(**{"Content-Length": "80"}) + VALID

    status, _, body = parse(exchange(emulator, data, half_close=True))

    assert status == 400
    assert body == {"error": "the request body is shorter than its Content-Length"}


@pytest.mark.parametrize("length", ["abc", "-5", "1e3", "٣"])
def test_a_content_length_that_is_not_a_whole_number_gets_400(emulator, length):
    data = post_head(**{"Content-Length": length}) + VALID

    status, _, body = parse(exchange(emulator, data, half_close=True))

    assert status == 400
    assert body == {"error": "the Content-Length header is not a whole number"}


@pytest.mark.parametrize(
    "value",
    [b"Basic \xff\xfeYWxpY2U=", b"Basic YWxp\xe9Y2U6cHc=", b"\xc3\xa9 abc"],
    ids=["high-bytes", "byte-inside-base64", "non-ascii-scheme"],
)
def test_a_non_ascii_byte_in_the_authorization_value_gets_401_not_500(emulator, value):
    data = b"GET /v2/search HTTP/1.1\r\nHost: x\r\nAuthorization: " + value + b"\r\n\r\n"

    status, headers, body = parse(exchange(emulator, data))

    assert status == 401
    assert headers["www-authenticate"] == CHALLENGE
    assert body == {"error": "the Authorization header must carry HTTP Basic credentials"}


@pytest.mark.parametrize(
    ("request_line", "status", "message"),
    [
        (b"GET /v2/search HTTP/9.9\r\n", 505, "Invalid HTTP version (9.9)"),
        (b"GET /v2/search HTTP/x\r\n", 400, "Bad request version ('HTTP/x')"),
        (b"GET /v2/search HTTP/1.1\r\n" + b"X-A: b\r\n" * 101, 431, "Too many headers"),
        (b"GET /v2/search HTTP/1.1\r\nX-Long: " + b"a" * 70000 + b"\r\n", 431, "Line too long"),
        (b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n", 414, "Request-URI Too Long"),
        (b"\x16\x03\x01" + b"\x00" * 300 + b"\r\n", 400, None),
    ],
    ids=["version", "garbled-version", "too-many-fields", "field-too-long", "uri", "tls"],
)
def test_requests_the_http_layer_rejects_get_a_json_error(emulator, request_line, status, message):
    answer = exchange(emulator, request_line + b"\r\n")

    got, headers, body = parse(answer)
    assert got == status
    assert headers["content-type"] == "application/json"
    if message is None:
        # The request line is quoted, cut short: never 64 KiB of the client's bytes.
        assert body["error"].startswith("Bad request syntax (")
        assert len(body["error"]) == 201
    else:
        assert body == {"error": message}


def test_past_the_connection_cap_clients_get_503_json_at_once_then_service_recovers():
    with Emulator(users=[USER], window_minutes=1, max_connections=3, idle_timeout=2.0) as emu:
        url = f"{emu.url}/v2/search"
        idle = [connect(emu) for _ in range(3)]
        try:
            assert wait_for(lambda: emu.open_connections == 3)
            started = time.monotonic()
            refused = requests.get(url, auth=USER, timeout=5)
            refused_after = time.monotonic() - started

            # The silent sockets stay open on this side; the server drops them at 2 s, and
            # then serves again.
            assert wait_for(lambda: emu.open_connections == 0)
            recovered = requests.get(url, auth=USER, timeout=5)
        finally:
            for sock in idle:
                sock.close()

    assert refused.status_code == 503
    assert refused.headers["Content-Type"] == "application/json"
    assert refused.headers["Retry-After"] == "1"
    assert refused.json() == {
        "error": "the emulator has 3 open connections, its limit; try again shortly"
    }
    # Refused rather than queued until an idle socket closed (which would have been a 200).
    print(f"\nrefused after {refused_after:.2f} s")
    assert recovered.status_code == 200


def test_stop_returns_promptly_with_stalled_clients_connected():
    # The stalled clients would hold the server for minutes: far past the ceiling HANG_S.
    slow = 4 * HANG_S
    emu = Emulator(users=[USER], window_minutes=1, idle_timeout=slow, header_timeout=slow).start()
    silent = connect(emu)
    dripping = connect(emu)
    dripping.sendall(b"GET /v2/search HTTP/1.1\r\n")
    # Both accepted: the request line is in the server's socket buffer, read even after stop.
    assert wait_for(lambda: emu.open_connections == 2)
    stopper = threading.Thread(target=emu.stop)

    started = time.monotonic()
    stopper.start()
    stopper.join(HANG_S)
    took = time.monotonic() - started
    try:
        assert not stopper.is_alive(), f"stop() still blocked after {HANG_S:g} s"
        print(f"\nstop() took {took:.2f} s")
        # The silent client sees the connection end; the one cut mid-header is told why.
        assert read_all(silent) == b""
        status, _, body = parse(read_all(dripping))
        assert (status, body) == (503, {"error": "the emulator is shutting down"})
    finally:
        silent.close()
        dripping.close()


def test_stop_lets_an_answer_in_flight_finish():
    emu = Emulator(users=[USER], window_minutes=1, delay=0.3).start()
    results: list[requests.Response] = []
    worker = threading.Thread(
        target=lambda: results.append(requests.get(f"{emu.url}/v2/search", auth=USER, timeout=5))
    )
    worker.start()
    assert wait_for(lambda: emu.app.held == 1)  # the request is in, its answer < 0.3 s away

    emu.stop()
    worker.join(5)

    assert [r.status_code for r in results] == [200]


def wait_for(condition, within: float = HANG_S) -> bool:
    """Whether ``condition()`` (the emulator's state: its open connections, the requests it
    holds) came true within ``within`` s; it is read every 20 ms, nothing is waited out."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_openapi_lists_the_connection_errors_with_retry_after(emulator):
    document = requests.get(f"{emulator.url}/openapi.json", timeout=5).json()

    for method in ("get", "post"):
        responses = document["paths"]["/v2/search"][method]["responses"]
        assert responses["408"] == {"$ref": "#/components/responses/Timeout"}
        assert responses["503"] == {"$ref": "#/components/responses/Unavailable"}
    unavailable = document["components"]["responses"]["Unavailable"]
    assert set(unavailable["headers"]) == {"Retry-After"}


@pytest.fixture(scope="module")
def big_account() -> Iterator[Emulator]:
    """An account whose list (about 23 MB) is larger than loopback's socket buffers."""
    emu = Emulator(users=[USER], seed=6, clock=NOW, window_minutes=1440, body_timeout=1.0)
    specs = [{"name": f"i{n}", "region": "eu-west-1", "type": "payg"} for n in range(300)]
    for start in range(0, len(specs), 50):
        emu.store.create_many(emu.account, specs[start : start + 50])
    yield emu.start()
    emu.stop()


def request_list_without_reading(emu: Emulator) -> socket.socket:
    sock = connect(emu)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.sendall(f"GET /v2/search HTTP/1.1\r\nHost: x\r\nAuthorization: {AUTH}\r\n\r\n".encode())
    return sock


def test_a_client_that_stops_reading_a_big_list_is_dropped_after_the_write_timeout(big_account):
    sock = request_list_without_reading(big_account)
    try:
        assert wait_for(lambda: big_account.open_connections == 1)
        # The answer stalls in the socket buffers; one second later the server gives up.
        assert wait_for(lambda: big_account.open_connections == 0)
    finally:
        sock.close()


def test_stop_returns_promptly_while_a_client_stalls_a_big_list():
    # The stalled writer would wait minutes for the client: far past the ceiling HANG_S.
    emu = Emulator(users=[USER], seed=6, clock=NOW, window_minutes=1440, body_timeout=4 * HANG_S)
    specs = [{"name": f"i{n}", "region": "eu-west-1", "type": "payg"} for n in range(300)]
    for start in range(0, len(specs), 50):
        emu.store.create_many(emu.account, specs[start : start + 50])
    emu.start()
    sock = request_list_without_reading(emu)
    try:
        # The answer has begun (its first bytes are here): it fills the small buffers and
        # blocks the writer at once.
        assert select.select([sock], [], [], HANG_S)[0] == [sock]
        stopper = threading.Thread(target=emu.stop)
        started = time.monotonic()
        stopper.start()
        stopper.join(HANG_S)
        took = time.monotonic() - started
    finally:
        sock.close()

    assert not stopper.is_alive(), f"stop() still blocked after {HANG_S:g} s"
    print(f"\nstop() took {took:.2f} s")
    # The writer thread was cut off rather than left blocked on the stalled client.
    assert emu.open_connections == 0


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"max_connections": 0}, "max_connections must be an integer >= 1"),
        ({"max_connections": True}, "max_connections must be an integer >= 1"),
        ({"max_connections": 2.5}, "max_connections must be an integer >= 1"),
        ({"header_timeout": 0}, "header_timeout must be a finite number of seconds > 0"),
        ({"body_timeout": float("inf")}, "body_timeout must be a finite number of seconds > 0"),
        ({"idle_timeout": float("nan")}, "idle_timeout must be a finite number of seconds > 0"),
        ({"idle_timeout": "5"}, "idle_timeout must be a number of seconds"),
    ],
)
def test_connection_limits_are_checked_up_front(arguments, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        Emulator(**arguments)


def test_the_default_cap_stays_below_the_open_files_limit():
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    with Emulator(window_minutes=1) as emu:
        assert emu.max_connections == max(4, min(512, (soft - 128) // 2))


# -- fields RFC 9112 says to refuse (issue 29, item 16) ------------------------------------


def test_two_conflicting_content_lengths_get_400_and_create_nothing(emulator):
    length = str(len(VALID))
    head = post_head(**{"Content-Length": length})
    data = head.replace(b"\r\n\r\n", b"\r\nContent-Length: 5\r\n\r\n") + VALID

    status, _, body = parse(exchange(emulator, data, half_close=True))

    assert status == 400
    assert body == {"error": f"conflicting Content-Length headers (5, {length}): send one"}
    assert emulator.store.list_indexes(emulator.account) == []


def test_a_content_length_list_of_two_values_gets_400(emulator):
    data = post_head(**{"Content-Length": f"{len(VALID)}, 7"}) + VALID

    status, _, body = parse(exchange(emulator, data, half_close=True))

    assert status == 400
    assert body == {"error": f"conflicting Content-Length headers ({len(VALID)}, 7): send one"}


@pytest.mark.parametrize(
    "field", [b"X-Trace: a\x00b", b"Authorization: Basic\x00 YWxpY2U6cHc="], ids=["x", "auth"]
)
def test_a_nul_inside_a_header_value_gets_400(emulator, field):
    data = b"GET /v2/search HTTP/1.1\r\nHost: x\r\n" + field + b"\r\n\r\n"

    status, _, body = parse(exchange(emulator, data))

    name = field.partition(b":")[0].decode()
    assert status == 400
    assert body == {"error": f"the {name!r} header holds a NUL character"}
