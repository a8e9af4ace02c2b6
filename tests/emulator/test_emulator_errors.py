"""Every error answer: status, exact JSON body, headers, and no change to the store."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest
import requests

from searchkit.emulator import Emulator

from .conftest import EMULATOR_OPTIONS, USER

CHALLENGE = 'Basic realm="searchkit-emulator", charset="UTF-8"'
VALID = {"name": "docs", "region": "eu-west-1", "type": "free"}


# One emulator for the module: errors leave no state behind (checked below).
pytestmark = pytest.mark.emulator(shared=True, **EMULATOR_OPTIONS)


@pytest.fixture(autouse=True)
def _store_unchanged(emulator: Emulator) -> Iterator[None]:
    # Every request in this module is refused, so none may leave an index behind.
    before = emulator.store.count_indexes()
    yield
    assert emulator.store.count_indexes() == before


def assert_json_error(response: requests.Response, status: int, message: str) -> None:
    assert response.status_code == status
    assert response.headers["Content-Type"] == "application/json"
    assert response.json() == {"error": message}


@pytest.mark.parametrize(
    ("auth_header", "message"),
    [
        (None, "authentication required: use HTTP Basic credentials"),
        ("Bearer abc", "the Authorization header must carry HTTP Basic credentials"),
        ("Basic not-base64!", "the Authorization header must carry HTTP Basic credentials"),
        (
            "Basic " + base64.b64encode(b"alice:wrong").decode(),
            "invalid username or password",
        ),
        (
            "Basic " + base64.b64encode(b"mallory:alice-pw-4f1c").decode(),
            "invalid username or password",
        ),
    ],
    ids=["missing", "bearer", "garbled", "wrong-password", "unknown-user"],
)
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_bad_credentials_get_401_with_challenge(emulator, api, method, auth_header, message):
    headers = {} if auth_header is None else {"Authorization": auth_header}

    response = requests.request(method, api, json=VALID, headers=headers, timeout=5)

    assert_json_error(response, 401, message)
    assert response.headers["WWW-Authenticate"] == CHALLENGE


def test_read_only_account_gets_403_on_create(emulator, api):
    credentials = ("ro-user", "ro-pw")
    emulator.add_user(*credentials, read_only=True)

    response = requests.post(api, json=VALID, auth=credentials, timeout=5)

    assert_json_error(response, 403, "this account is read-only and cannot create indexes")


LONG_NAME = "n" * 129


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "request body is not valid JSON"),
        (b"", "request body is not valid JSON"),
        (
            b'{"name": NaN, "region": "eu-west-1", "type": "free"}',
            "request body is not valid JSON",
        ),
        (b"\xff\xfe{}", "request body is not valid JSON"),
        (b"[1, 2]", "request body must be a JSON object"),
        (b'"docs"', "request body must be a JSON object"),
        (b'{"region": "eu-west-1", "type": "free"}', "missing required field 'name'"),
        (b'{"name": "docs", "type": "free"}', "missing required field 'region'"),
        (b'{"name": "docs", "region": "eu-west-1"}', "missing required field 'type'"),
        (
            b'{"name": 5, "region": "eu-west-1", "type": "free"}',
            "field 'name' must be a string",
        ),
        (
            b'{"name": null, "region": "eu-west-1", "type": "free"}',
            "field 'name' must be a string",
        ),
        (
            b'{"name": "docs", "region": ["eu-west-1"], "type": "free"}',
            "field 'region' must be a string",
        ),
        (
            b'{"name": "docs", "region": "eu-west-1", "type": true}',
            "field 'type' must be a string",
        ),
        (
            b'{"name": "   ", "region": "eu-west-1", "type": "free"}',
            "field 'name' must not be blank",
        ),
        (
            b'{"name": "", "region": "eu-west-1", "type": "free"}',
            "field 'name' must not be blank",
        ),
        (
            b'{"name": "' + LONG_NAME.encode() + b'", "region": "eu-west-1", "type": "free"}',
            "field 'name' must be at most 128 characters",
        ),
        (
            b'{"name": "a\\nb", "region": "eu-west-1", "type": "free"}',
            "field 'name' must not contain control characters",
        ),
        (
            b'{"name": "a\\ud800", "region": "eu-west-1", "type": "free"}',
            "field 'name' must not contain control characters",
        ),
        (
            b'{"name": "docs", "region": "mars-1", "type": "free"}',
            "field 'region' must be one of: eu-west-1, us-central1",
        ),
        (
            b'{"name": "docs", "region": "eu-west-1", "type": "gold"}',
            "field 'type' must be one of: free, payg, fixed",
        ),
        (
            b'{"name": "docs", "region": "eu-west-1", "type": "fixed"}',
            "type 'fixed' is not currently available",
        ),
    ],
)
def test_invalid_create_body_gets_400(emulator, api, http, body, message):
    response = http.post(api, data=body, headers={"Content-Type": "application/json"}, timeout=5)

    assert_json_error(response, 400, message)


@pytest.mark.parametrize(
    ("content_type", "message"),
    [
        (None, "Content-Type must be application/json"),
        ("text/plain", "Content-Type must be application/json"),
        ("application/x-www-form-urlencoded", "Content-Type must be application/json"),
        ("application/json; charset=latin-1", "Content-Type charset must be utf-8"),
    ],
)
def test_non_json_content_type_gets_415(emulator, api, http, content_type, message):
    headers = {} if content_type is None else {"Content-Type": content_type}

    response = http.post(api, data=b'{"name": "x"}', headers=headers, timeout=5)

    assert_json_error(response, 415, message)


def test_body_over_64_kib_gets_413(emulator, api, http):
    body = b'{"name": "' + b"x" * (64 * 1024) + b'"}'

    response = http.post(api, data=body, headers={"Content-Type": "application/json"}, timeout=5)

    assert_json_error(response, 413, "request body exceeds 65536 bytes")


def test_chunked_body_over_64_kib_gets_413(emulator, api, http):
    def chunks():
        yield b'{"name": "'
        for _ in range(80):
            yield b"x" * 1024
        yield b'"}'

    response = http.post(
        api, data=chunks(), headers={"Content-Type": "application/json"}, timeout=5
    )

    assert_json_error(response, 413, "request body exceeds 65536 bytes")


@pytest.mark.parametrize("path", ["/v2/search/extra", "/v1/search", "/", "/v2//search"])
def test_unknown_route_gets_404(emulator, http, path):
    response = http.get(emulator.url + path, timeout=5)

    assert_json_error(response, 404, f"no such endpoint: {path}")


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH"])
def test_wrong_method_gets_405_with_allow(emulator, api, http, method):
    response = http.request(method, api, json=VALID, timeout=5)

    assert_json_error(response, 405, f"method {method} is not allowed; use GET, HEAD, POST")
    assert response.headers["Allow"] == "GET, HEAD, POST"


def test_error_bodies_never_echo_the_password(emulator, api):
    response = requests.post(api, json=VALID, auth=(USER[0], "nearly-" + USER[1]), timeout=5)

    assert USER[1] not in response.text
    assert "nearly-" not in response.text
