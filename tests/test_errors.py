"""The exception tree, status mapping, server message extraction and redaction."""

from __future__ import annotations

import json

import pytest

import searchkit as sk
from searchkit.errors import (
    describe_failure,
    error_for_status,
    mask_url,
    redact,
    server_message,
)


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, sk.ValidationError),
        (401, sk.AuthenticationError),
        (403, sk.PermissionDeniedError),
        (404, sk.NotFoundError),
        (422, sk.ValidationError),
        (429, sk.RateLimitError),
        (500, sk.ServerError),
        (503, sk.ServerError),
        (418, sk.SearchKitError),
    ],
)
def test_status_maps_to_class(status, cls):
    assert error_for_status(status) is cls


def test_every_error_is_a_searchkit_error_and_input_errors_are_value_errors():
    for name in (
        "ConfigError",
        "ValidationError",
        "TimestampError",
        "AuthenticationError",
        "PermissionDeniedError",
        "NotFoundError",
        "RateLimitError",
        "ServerError",
        "TransportError",
        "InvalidResponseError",
        "AmbiguousCreateError",
    ):
        assert issubclass(getattr(sk, name), sk.SearchKitError)
    assert issubclass(sk.ValidationError, ValueError)
    assert issubclass(sk.TimestampError, ValueError)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"error": "name is required"}', "name is required"),
        (b'{"message": "bad region"}', "bad region"),
        (b'{"code": 42, "message": "quota"}', "quota"),
        (b'{"error": "first", "message": "second"}', "first"),
        (b'{"error": {"message": "nested"}}', "nested"),
        (b"plain text\nfailure", "plain text failure"),
        (b"", None),
        (b"   ", None),
        (b'{"other": 1}', '{"other": 1}'),
    ],
)
def test_server_message_takes_error_then_message_then_text(body, expected):
    assert server_message(body) == expected


def test_server_message_is_bounded():
    message = server_message(json.dumps({"error": "x" * 10_000}).encode())
    assert len(message) == 300 and message.endswith("…")


def test_redact_masks_known_values_and_secret_pairs():
    text = 'failed: {"token": "abcDEF123456", "password": "pw"} Basic dXNlcjpwYXNzd29yZA== hunter22'
    out = redact(text, ["hunter22"])
    assert "abcDEF123456" not in out
    assert "dXNlcjpwYXNzd29yZA==" not in out
    assert "hunter22" not in out
    assert '"token": "***"' in out


def test_str_composes_operation_and_exchange_from_fields():
    exc = sk.ServerError(
        "down",
        status=503,
        method="GET",
        path="/v2/search",
        operation="create index 'docs'",
        retries=2,
    )
    assert exc.message == "down"
    assert str(exc) == "create index 'docs' (GET /v2/search -> 503): down after 2 retries"


def test_describe_failure_says_operation_retries_and_that_nothing_was_created():
    exc = sk.ServerError(
        "boom",
        status=503,
        method="GET",
        path="/v2/search",
        server_message="down",
        operation="create index 'docs'",
        retries=2,
    )
    assert describe_failure(exc) == (
        "The service failed to create index 'docs' after 2 retries (HTTP 503: down); "
        "nothing was created."
    )


def test_describe_failure_of_a_transport_error_names_the_address():
    exc = sk.TransportError(
        "connection refused", url="http://127.0.0.1:1", operation="list indexes", retries=1
    )
    assert describe_failure(exc) == (
        "Could not reach the service at http://127.0.0.1:1 to list indexes "
        "(connection refused after 1 retry)."
    )


def test_describe_failure_of_a_foreign_exception_masks_secrets():
    assert describe_failure(KeyError("token=abcdefgh123")) == "Unexpected KeyError: 'token=***'."


@pytest.mark.parametrize("secret", ["a", "xy", "k3y", "long-secret-value"])
def test_redact_masks_known_secrets_of_any_length_where_they_stand_as_values(secret):
    text = f"GET https://alice:{secret}@127.0.0.1/v2 password={secret} 'token': '{secret}'"
    assert redact(text, [secret]) == ("GET https://***@127.0.0.1/v2 password=*** 'token': '***'")
    assert redact(f"alice:{secret}@host token {secret}", [secret]) == "alice:***@host token ***"


def test_redact_masks_a_long_known_secret_wherever_it_occurs():
    assert redact("<long-secret-value>x", ["long-secret-value"]) == "<***>x"


def test_redact_leaves_the_letters_of_a_one_letter_password_in_ordinary_words():
    # Masking every "a" would show where the password is not, and so the password.
    text = "cannot reach api.example.com as alice: a read-only account (401)"
    assert redact(text, ["a"]) == text
    assert redact("wrong Password: a", ["a"]) == "wrong Password: ***"


def test_mask_url_hides_user_information_and_credential_parameters():
    assert mask_url("s3://AKIAKEY:se/cr+et@bucket/prefix?region=eu&secret_key=zz&x=1") == (
        "s3://***@bucket/prefix?region=eu&secret_key=***&x=1"
    )
    assert mask_url("https://127.0.0.1:8080/path?q=1") == "https://127.0.0.1:8080/path?q=1"


def test_redact_masks_the_longer_secret_first_so_no_piece_is_left():
    assert redact("token abcdef", ["abc", "abcdef"]) == "token ***"


def test_redact_reads_secret_objects_through_get_secret_value():
    class Secret:
        def get_secret_value(self):
            return "hidden-value"

        def __str__(self):
            return "**********"

    assert redact("got hidden-value", [Secret()]) == "got ***"


@pytest.mark.parametrize(
    "text",
    [
        "HTTP Basic credentials required",
        "use Basic auth",
        "Basic authentication failed",
        "Basic abcd",  # valid base64, but not user:pass
    ],
)
def test_redact_leaves_words_after_basic_alone(text):
    assert redact(text) == text


@pytest.mark.parametrize("pair", [b"a:b", b"user:pass", "émilie:mot-€".encode()])
def test_redact_masks_real_basic_credentials_of_any_length(pair):
    import base64

    encoded = base64.b64encode(pair).decode()
    assert redact(f"sent Basic {encoded}.") == "sent Basic ***."
