"""The exception tree, status mapping, server message extraction and redaction."""

from __future__ import annotations

import json

import pytest

import searchkit as sk
from searchkit.errors import error_for_status, redact, server_message


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
