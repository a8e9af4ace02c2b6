"""Basic credentials are UTF-8 (RFC 7617): accents, euro signs and emoji authenticate when
sent as UTF-8; anything that is not UTF-8 base64 gets 401, never 500."""

from __future__ import annotations

import base64
import unicodedata

import pytest
import requests

from searchkit.emulator.app import basic_credentials

from .conftest import NOW

CHALLENGE = 'Basic realm="searchkit-emulator", charset="UTF-8"'
ACCOUNTS = [
    ("renée", "mot-de-passe-éàçüß"),
    ("euro", "price-€100-£5-¥7"),
    ("emoji-🦊", "🔑🚀-secret-👩‍💻"),
    ("greek", "κωδικός-Ωμέγα"),
]


def basic(username: str, password: str, encoding: str = "utf-8") -> str:
    return "Basic " + base64.b64encode(f"{username}:{password}".encode(encoding)).decode()


pytestmark = pytest.mark.emulator(shared=True, users=ACCOUNTS, seed=5, clock=NOW, window_minutes=1)


@pytest.mark.parametrize(("username", "password"), ACCOUNTS, ids=[a[0] for a in ACCOUNTS])
def test_non_ascii_credentials_sent_as_utf8_authenticate(emulator, username, password):
    response = requests.get(
        f"{emulator.url}/v2/search",
        headers={"Authorization": basic(username, password)},
        timeout=5,
    )

    assert response.status_code == 200, response.text
    assert response.json() == []


def test_a_password_typed_with_combining_accents_matches_the_precomposed_one(emulator):
    username, password = ACCOUNTS[0]
    decomposed = unicodedata.normalize("NFD", password)
    assert decomposed != password

    response = requests.get(
        f"{emulator.url}/v2/search",
        headers={"Authorization": basic(username, decomposed)},
        timeout=5,
    )

    assert response.status_code == 200


def test_the_same_password_in_latin1_bytes_is_refused_with_the_utf8_challenge(emulator):
    username, password = ACCOUNTS[0]

    response = requests.get(
        f"{emulator.url}/v2/search",
        headers={"Authorization": basic(username, password, "latin-1")},
        timeout=5,
    )

    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == CHALLENGE
    assert response.json() == {
        "error": "the Authorization header must carry HTTP Basic credentials"
    }


@pytest.mark.parametrize(
    "value",
    [
        "Basic " + base64.b64encode(b"renee:\xff\xfe").decode(),  # not UTF-8
        "Basic " + base64.b64encode(b"\xed\xa0\x80:pw").decode(),  # an encoded surrogate
        "Basic cmVuZWU6cHc",  # base64 missing its padding
        "Basic cmVu ZWU6cHc=",  # a space inside the base64
        "Basic " + base64.b64encode(b"no-colon").decode(),
        "Basic " + base64.b64encode(b":no-user").decode(),
        "Basic",
    ],
    ids=["not-utf8", "surrogate", "no-padding", "space", "no-colon", "no-user", "empty"],
)
def test_values_that_are_not_utf8_basic_credentials_get_401(emulator, value):
    response = requests.get(
        f"{emulator.url}/v2/search", headers={"Authorization": value}, timeout=5
    )

    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == CHALLENGE
    assert response.json() == {
        "error": "the Authorization header must carry HTTP Basic credentials"
    }


def test_basic_credentials_decodes_utf8_and_splits_at_the_first_colon():
    assert basic_credentials(basic("a", "b:c€")) == ("a", "b:c€")
    assert basic_credentials("basic   " + base64.b64encode(b"a:").decode()) == ("a", "")
    assert basic_credentials("Bearer " + base64.b64encode(b"a:b").decode()) is None


def test_openapi_documents_the_utf8_challenge(emulator):
    document = requests.get(f"{emulator.url}/openapi.json", timeout=5).json()

    unauthorized = document["components"]["responses"]["Unauthorized"]
    assert unauthorized["headers"]["WWW-Authenticate"]["description"] == CHALLENGE
