"""Credentials go only to the configured host, and no secret comes back out in an error."""

from __future__ import annotations

import base64
import netrc
import socket
import traceback

import pytest

import searchkit as sk

from .conftest import (
    PASSWORD,
    READ_ONLY_TOKEN,
    TOKEN,
    USERNAME,
    basic_header,
    harness_client,
    index_json,
)
from .harness import FaultServer, drop, reply


@pytest.fixture
def tripwire(monkeypatch):
    """Every name lookup and connect attempted during the test; none is let through."""
    calls: list[tuple[str, object]] = []

    def refuse(kind):
        def record(*args, **kwargs):
            calls.append((kind, args[1] if kind == "connect" else args[0]))
            raise OSError(f"tripwire: {kind} is not allowed in this test")

        return record

    monkeypatch.setattr(socket.socket, "connect", refuse("connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", refuse("connect"))
    monkeypatch.setattr(socket, "create_connection", refuse("create_connection"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    return calls


def full_text(exc: BaseException) -> str:
    """The exception as a user can see it: str, repr and the chained traceback."""
    return "\n".join([str(exc), repr(exc), *traceback.format_exception(exc)])


# -- where requests may go ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("base_url", "reason"),
    [
        ("http://search.example.com", "refusing to send credentials over plain http"),
        ("http://10.0.0.8:8787", "refusing to send credentials over plain http"),
        ("http://evil.localhost:8787", "refusing to send credentials over plain http"),
        ("http://127.0.0.1.evil.example", "refusing to send credentials over plain http"),
        ("http://localhost@evil.example", "must not contain a user or password"),
        ("https://admin:hunter2-in-url@search.example.com", "must not contain a user or password"),
        ("http://admin:hunter2-in-url@127.0.0.1:8787", "must not contain a user or password"),
        ("ftp://admin:hunter2-in-url@search.example.com", "must start with https://"),
    ],
)
def test_unsafe_base_url_is_refused_before_any_socket_opens(tripwire, base_url, reason):
    with pytest.raises(sk.ConfigError, match=reason) as info:
        sk.Client(username=USERNAME, password=PASSWORD, base_url=base_url)
    assert tripwire == []
    assert "hunter2-in-url" not in full_text(info.value)
    assert PASSWORD not in full_text(info.value)


def test_unsafe_base_url_from_the_environment_is_refused_before_any_socket_opens(
    tripwire, monkeypatch
):
    monkeypatch.setenv("SEARCHKIT_BASE_URL", "http://search.example.com")
    monkeypatch.setenv("SEARCHKIT_USERNAME", USERNAME)
    monkeypatch.setenv("SEARCHKIT_PASSWORD", PASSWORD)
    with pytest.raises(sk.ConfigError, match=r"plain http to 'search\.example\.com'"):
        sk.Client()
    assert tripwire == []


@pytest.mark.parametrize(
    ("env", "missing"),
    [
        ({"SEARCHKIT_USERNAME": USERNAME}, "SEARCHKIT_PASSWORD is not set or empty"),
        (
            {"SEARCHKIT_USERNAME": USERNAME, "SEARCHKIT_PASSWORD": ""},
            "SEARCHKIT_PASSWORD is not set or empty",
        ),
        (
            {"SEARCHKIT_USERNAME": "", "SEARCHKIT_PASSWORD": PASSWORD},
            "SEARCHKIT_USERNAME is not set or empty",
        ),
    ],
    ids=["no-password", "empty-password", "empty-username"],
)
def test_half_set_environment_is_config_error_and_nothing_is_sent(
    server, monkeypatch, env, missing
):
    monkeypatch.setenv("SEARCHKIT_BASE_URL", server.url)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(sk.ConfigError, match=missing) as info:
        sk.Client()
    assert server.count() == 0
    assert PASSWORD not in full_text(info.value)


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_redirect_is_not_followed_and_credentials_never_reach_its_target(server, client, status):
    with FaultServer() as elsewhere:
        elsewhere.script("GET", then=reply(200, []))
        server.script("GET", then=reply(status, b"", {"Location": f"{elsewhere.url}/v2/search"}))
        with pytest.raises(sk.SearchKitError) as info:
            client.list_indexes()
        assert elsewhere.count() == 0
    assert server.count() == 1
    assert info.value.status == status
    assert f"redirects to {elsewhere.url}/v2/search; redirects are not followed" in str(info.value)


def test_redirect_of_a_create_is_not_followed(server, client):
    with FaultServer() as elsewhere:
        server.script("GET", then=reply(200, []))
        server.script("POST", then=reply(307, b"", {"Location": f"{elsewhere.url}/v2/search"}))
        with pytest.raises(sk.SearchKitError, match="redirects are not followed"):
            client.create_index("docs", region="eu-west-1", type="payg")
        assert elsewhere.count() == 0
    assert server.count("POST") == 1


NETRC_SECRET = "netrc-Pw-8Jd3-must-stay-home"


@pytest.fixture
def netrc_everywhere(tmp_path, monkeypatch):
    """A netrc with a default password, as $NETRC and as ~/.netrc; records any parse of it."""
    text = (
        f"machine 127.0.0.1 login netrc-user password {NETRC_SECRET}\n"
        f"default login netrc-user password {NETRC_SECRET}\n"
    )
    for path in (tmp_path / "netrc", tmp_path / ".netrc"):
        path.write_text(text)
        path.chmod(0o600)
    monkeypatch.setenv("NETRC", str(tmp_path / "netrc"))
    monkeypatch.setenv("HOME", str(tmp_path))
    parsed: list[object] = []
    real_netrc = netrc.netrc

    def recording_netrc(*args, **kwargs):
        parsed.append(args)
        return real_netrc(*args, **kwargs)

    monkeypatch.setattr(netrc, "netrc", recording_netrc)
    return parsed


def test_netrc_password_is_never_sent(server, netrc_everywhere):
    new = index_json("new")
    server.script(
        "GET",
        reply(200, [index_json("docs")]),
        reply(200, []),
        reply(200, [new]),  # the check after creating
        reply(401, {"error": "who are you"}),
        reply(503, {"error": "later"}),
        reply(302, b"", {"Location": "http://127.0.0.1:9/v2/search"}),
        then=reply(200, []),
    )
    server.script("POST", reply(200, new), reply(502, {"error": "gateway"}), drop())
    with harness_client(server.url, max_retries=0) as client:
        client.list_indexes()
        client.create_index("new", region="eu-west-1", type="payg")
        for call in (
            client.list_indexes,
            client.list_indexes,
            client.list_indexes,
            lambda: client.create_index("x", region="eu-west-1", type="free"),
            lambda: client.create_index("y", region="eu-west-1", type="free"),
        ):
            with pytest.raises(sk.SearchKitError):
                call()
    assert netrc_everywhere == []  # not even read
    requests_seen = server.seen()
    assert len(requests_seen) == 13  # 10 GET (lists before and after creates), 3 POST
    for seen in requests_seen:
        assert seen.header("authorization") == basic_header(USERNAME, PASSWORD)
        raw = repr(seen.headers) + seen.body.decode("utf-8", "replace")
        decoded = base64.b64decode(seen.header("authorization").split()[1]).decode()
        assert NETRC_SECRET not in raw and NETRC_SECRET not in decoded
        assert "netrc-user" not in raw and "netrc-user" not in decoded


# -- what comes back out -----------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        {"error": f"invalid token: {TOKEN}"},
        {"error": f"index exists with token {TOKEN}"},
        {"message": f"read_only_token={READ_ONLY_TOKEN} is wrong"},
        f"bad request; Authorization: {basic_header(USERNAME, PASSWORD)}",
        f"user {USERNAME} with password {PASSWORD} is locked",
        {"error": f"no such index {TOKEN}", "token": TOKEN},
    ],
    ids=[
        "token-pair",
        "token-free-text",
        "read-only-pair",
        "basic-header",
        "password",
        "token-field",
    ],
)
def test_error_body_echoing_a_secret_does_not_leak_it(server, client, body):
    # The client has seen the index's tokens once, from a list.
    server.script("GET", then=reply(200, [index_json("docs")]))
    server.script("POST", then=reply(400, body))
    client.list_indexes()
    with pytest.raises(sk.ValidationError) as info:
        client.create_index("docs2", region="eu-west-1", type="payg")
    text = full_text(info.value)
    for secret in (TOKEN, READ_ONLY_TOKEN, PASSWORD, basic_header(USERNAME, PASSWORD)):
        assert secret not in text
    assert "***" in info.value.server_message


@pytest.mark.parametrize(
    "body",
    [
        f"<html><p>token={TOKEN}</p></html>".encode(),
        f"<html><p>welcome, your token is {TOKEN}</p></html>".encode(),
        [index_json("docs"), TOKEN],
        {"token": TOKEN, "read_only_token": READ_ONLY_TOKEN},
    ],
    ids=["html-pair", "html-free-text", "bad-element", "object"],
)
def test_ok_body_echoing_a_token_is_invalid_response_without_the_token(server, client, body):
    server.script("GET", reply(200, [index_json("docs")]), then=reply(200, body))
    client.list_indexes()
    with pytest.raises(sk.InvalidResponseError) as info:
        client.list_indexes()
    text = full_text(info.value)
    assert TOKEN not in text and READ_ONLY_TOKEN not in text


def test_redirect_location_with_credentials_is_masked(server, client):
    server.script(
        "GET",
        then=reply(
            302, b"", {"Location": f"https://u:{PASSWORD}@elsewhere.example/?token={TOKEN}"}
        ),
    )
    with pytest.raises(sk.SearchKitError) as info:
        client.list_indexes()
    text = full_text(info.value)
    assert PASSWORD not in text and TOKEN not in text


@pytest.mark.parametrize("padding", [280, 290, 295, 299])
def test_secret_straddling_the_cut_of_an_error_message_leaves_no_prefix(server, client, padding):
    server.script("GET", then=reply(400, "x" * padding + f" {PASSWORD} trailing words"))
    with pytest.raises(sk.ValidationError) as info:
        client.list_indexes()
    assert PASSWORD[:6] not in full_text(info.value)
    assert len(info.value.server_message) <= 300


@pytest.mark.parametrize("padding", [100, 110, 115])
def test_token_straddling_the_cut_of_a_non_json_snippet_leaves_no_prefix(server, client, padding):
    server.script(
        "GET",
        reply(200, [index_json("docs")]),
        then=reply(200, "<" + "x" * padding + f" {TOKEN} trailing words"),
    )
    client.list_indexes()
    with pytest.raises(sk.InvalidResponseError) as info:
        client.list_indexes()
    assert TOKEN[:6] not in full_text(info.value)


# -- non-ASCII credentials (issue 11, item 3) ----------------------------------------------

UNICODE_PASSWORDS = {
    "accents": "mot-de-passe-éèçà",
    "euro": "prix-100€-secret",
    "emoji": "clé-🔑-emoji-😀",
    "cjk": "パスワード-秘密",
}


@pytest.mark.parametrize("password", UNICODE_PASSWORDS.values(), ids=UNICODE_PASSWORDS.keys())
def test_basic_credentials_are_sent_as_utf8(server, password):
    # RFC 7617: the charset is UTF-8. Before, requests sent Latin-1 (or raised a
    # UnicodeEncodeError whose repr held the whole password).
    server.script("GET", then=reply(200, []))
    with harness_client(server.url, password=password) as client:
        assert client.list_indexes().names() == []
    (seen,) = server.seen("GET")
    assert seen.header("Authorization") == basic_header(USERNAME, password)
    encoded = seen.header("Authorization").removeprefix("Basic ")
    assert base64.b64decode(encoded).decode("utf-8") == f"{USERNAME}:{password}"


@pytest.mark.parametrize("password", UNICODE_PASSWORDS.values(), ids=UNICODE_PASSWORDS.keys())
def test_unicode_password_works_end_to_end_against_the_emulator(password):
    from searchkit.emulator import Emulator

    with Emulator(users=[("émilie", password)]) as emulator:
        with emulator.client(timeout=5, max_retries=0) as client:
            index = client.create_index("docs", region="eu-west-1", type="payg")
            assert client.list_indexes().names() == ["docs"]
        with (
            sk.Client(
                username="émilie", password=password + "x", base_url=emulator.url, max_retries=0
            ) as wrong,
            pytest.raises(sk.AuthenticationError) as info,
        ):
            wrong.list_indexes()
    assert index.name == "docs"
    assert password not in full_text(info.value)


def test_refused_unicode_password_shows_no_part_of_it(server):
    password = "€-only-mine-🔑"
    server.script("GET", then=reply(401, {"error": f"bad password {password}"}))
    with pytest.raises(sk.AuthenticationError) as info:
        harness_client(server.url, password=password).list_indexes()
    assert password not in full_text(info.value)
    assert "bad password ***" in str(info.value)


def test_password_that_cannot_be_utf8_is_a_config_error_without_the_password():
    password = "lone-\ud800-surrogate-secret"
    with pytest.raises(sk.ConfigError) as info:
        sk.Client(username=USERNAME, password=password, base_url="http://127.0.0.1:1")
    assert str(info.value) == (
        "password from arguments contains a lone surrogate character, which cannot be sent as UTF-8"
    )
    assert "surrogate-secret" not in full_text(info.value)


# -- secrets of any length are masked (issue 11, item 10) ----------------------------------


@pytest.mark.parametrize("password", ["Zq", "Zq7", "%"], ids=["2-chars", "3-chars", "1-char"])
def test_short_password_echoed_as_a_value_is_masked(server, password):
    echo = f"Zq-less user; you sent password={password} to https://{USERNAME}:{password}@api"
    server.script("GET", then=reply(403, {"error": echo}))
    with pytest.raises(sk.PermissionDeniedError) as info:
        harness_client(server.url, password=password).list_indexes()
    # Masked where it stands as a value; the letters of other words stay (issue 18, item 22).
    assert info.value.server_message == "Zq-less user; you sent password=*** to https://***@api"


def test_a_password_of_four_letters_echoed_as_a_word_is_masked(server):
    server.script("GET", then=reply(403, {"error": "Zq7x-less user; you sent Zq7x!"}))
    with pytest.raises(sk.PermissionDeniedError) as info:
        harness_client(server.url, password="Zq7x").list_indexes()
    assert info.value.server_message == "***-less user; you sent ***!"


def test_short_basic_credentials_echoed_are_masked(server):
    short = base64.b64encode(b"a:b").decode()  # "YTpi": four characters
    server.script("GET", then=reply(400, {"error": f"bad header Basic {short} given"}))
    with pytest.raises(sk.ValidationError) as info:
        harness_client(server.url).list_indexes()
    assert info.value.server_message == "bad header Basic *** given"


def test_words_after_basic_are_not_mistaken_for_credentials(server):
    server.script("GET", then=reply(401, {"error": "HTTP Basic credentials required"}))
    with pytest.raises(sk.AuthenticationError) as info:
        harness_client(server.url).list_indexes()
    assert info.value.server_message == "HTTP Basic credentials required"


def test_a_one_letter_password_masks_no_letter_of_the_service_or_the_client_words(server):
    # Masking every "p" would garble the text and show where the password is not.
    server.script("GET", then=reply(200, b"[" + b" " * 100 + b"]"))
    with pytest.raises(sk.InvalidResponseError) as info:
        harness_client(server.url, password="p", max_response_bytes=50).list_indexes()
    assert str(info.value).endswith(
        "over the limit of max_response_bytes=50 (50 bytes); "
        "a Client made with max_response_bytes=102 (102 bytes) reads it"
    )
    server.script("GET", then=reply(200, "<p>oops: p</p>"))
    with pytest.raises(sk.InvalidResponseError) as info:
        harness_client(server.url, password="p").list_indexes()
    assert str(info.value).endswith(
        "the body is not JSON (JSON is malformed: invalid character (byte 0)); "
        "it starts with '<p>oops: p</p>'"
    )
