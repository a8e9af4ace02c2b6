"""Client errors are typed, never retried, and carry the service's message, cut to size."""

from __future__ import annotations

import pytest

import searchkit as sk

from .conftest import harness_client
from .harness import reply

STATUS_ERRORS = [
    (400, sk.ValidationError),
    (401, sk.AuthenticationError),
    (403, sk.PermissionDeniedError),
    (404, sk.NotFoundError),
    (405, sk.SearchKitError),
]


@pytest.mark.parametrize(("status", "error"), STATUS_ERRORS)
def test_client_error_on_list_is_typed_not_retried_and_shows_the_message(
    server, client, status, error
):
    server.script("GET", then=reply(status, {"error": f"refused with {status}"}))
    with pytest.raises(error) as info:
        client.list_indexes()
    assert type(info.value) is error
    assert server.count() == 1
    assert (info.value.status, info.value.method, info.value.path) == (status, "GET", "/v2/search")
    assert info.value.server_message == f"refused with {status}"
    assert str(info.value).startswith(
        f"list indexes (GET /v2/search -> {status}): refused with {status}"
    )


@pytest.mark.parametrize(("status", "error"), STATUS_ERRORS)
def test_client_error_on_create_is_typed_and_sent_once(server, client, status, error):
    server.script("GET", then=reply(200, []))
    server.script("POST", then=reply(status, {"error": f"refused with {status}"}))
    with pytest.raises(error) as info:
        client.create_index("docs", region="eu-west-1", type="payg")
    assert type(info.value) is error
    assert server.count("POST") == 1
    assert server.count("GET") == 1  # the list before; a 4xx is not ambiguous
    assert str(info.value).startswith(
        f"create index 'docs' (POST /v2/search -> {status}): refused with {status}"
    )


def test_authentication_error_names_the_user_and_where_the_credentials_came_from(server, client):
    server.script(
        "GET",
        then=reply(401, {"error": "bad credentials"}, {"WWW-Authenticate": 'Basic realm="search"'}),
    )
    with pytest.raises(sk.AuthenticationError) as info:
        client.list_indexes()
    assert str(info.value) == (
        "list indexes (GET /v2/search -> 401): bad credentials; the service refused user "
        "'fault-tester', whose credentials come from the username= and password= arguments"
    )


HUGE = "x" * 100_000


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"error": "from error", "message": "from message"}, "from error"),
        ({"message": "from message", "detail": "from detail"}, "from message"),
        ({"code": 4001, "message": "name is taken"}, "name is taken"),
        ({"error": {"code": 7, "message": "nested message"}}, "nested message"),
        ("plain text\nover two lines", "plain text over two lines"),
        # a web page is named, not pasted (issue 28: a Jupyter port's page filled the error)
        (
            "<html><body>Bad Request</body></html>",
            "an HTML page, not the API's JSON: is the address that of the service?",
        ),
        (b"", "HTTP 400"),
        (b"   \n", "HTTP 400"),
        (b"\xff\xfe not utf-8", "\ufffd\ufffd not utf-8"),
    ],
    ids=[
        "error",
        "message",
        "code-message",
        "nested",
        "text",
        "html",
        "empty",
        "blank",
        "bad-bytes",
    ],
)
def test_error_message_is_taken_from_error_then_message_then_the_body(
    server, client, body, message
):
    server.script("GET", then=reply(400, body))
    with pytest.raises(sk.ValidationError) as info:
        client.list_indexes()
    assert info.value.server_message == message
    assert str(info.value) == f"list indexes (GET /v2/search -> 400): {message}"


@pytest.mark.parametrize("body", [{"error": HUGE}, HUGE], ids=["json", "text"])
def test_huge_error_body_gives_a_bounded_message(server, client, body):
    server.script("GET", then=reply(400, body))
    with pytest.raises(sk.ValidationError) as info:
        client.list_indexes()
    assert info.value.server_message == "x" * 299 + "…"
    assert len(str(info.value)) < 400


# -- the same statuses from the emulator, through the harness ----------------------------


def test_wrong_password_from_the_service_is_one_authentication_error(proxy, emulator):
    client = harness_client(proxy.url, password="not-the-password")
    with pytest.raises(sk.AuthenticationError) as info:
        client.list_indexes()
    assert proxy.count() == 1
    assert info.value.server_message == "invalid username or password"


def test_read_only_account_creating_is_one_permission_denied(proxy, emulator):
    emulator.add_user("reader", "reader-pw-Tq81", read_only=True)
    client = harness_client(proxy.url, username="reader", password="reader-pw-Tq81")
    with pytest.raises(sk.PermissionDeniedError) as info:
        client.create_index("docs", region="eu-west-1", type="payg")
    assert proxy.count("POST") == 1
    assert info.value.server_message == "this account is read-only and cannot create indexes"


def test_unavailable_plan_from_the_service_is_one_validation_error(proxy, proxied):
    with pytest.raises(sk.ValidationError) as info:
        proxied.create_index("docs", region="eu-west-1", type="fixed")
    assert proxy.count("POST") == 1
    assert info.value.server_message == "type 'fixed' is not currently available"


def test_wrong_base_path_from_the_service_is_one_not_found(proxy):
    with harness_client(proxy.url + "/api") as client, pytest.raises(sk.NotFoundError) as info:
        client.list_indexes()
    assert proxy.count() == 1
    assert info.value.server_message == "no such endpoint: /api/v2/search"
