"""Credentials and base URL: sources taken whole, the https rule, no userinfo."""

from __future__ import annotations

import pytest

from searchkit import ConfigError
from searchkit.api.config import (
    is_loopback,
    parse_timeout,
    resolve_base_url,
    resolve_credentials,
    validate_base_url,
)


def test_arguments_win_over_environment():
    env = {"SEARCHKIT_USERNAME": "env-user", "SEARCHKIT_PASSWORD": "env-pass"}
    creds = resolve_credentials("arg-user", "arg-pass", env=env)
    assert (creds.username, creds.password, creds.source) == ("arg-user", "arg-pass", "arguments")


def test_environment_is_used_when_no_arguments():
    env = {"SEARCHKIT_USERNAME": "env-user", "SEARCHKIT_PASSWORD": "env-pass"}
    creds = resolve_credentials(env=env)
    assert (creds.username, creds.password, creds.source) == ("env-user", "env-pass", "environment")


def test_half_set_arguments_are_not_completed_from_environment():
    env = {"SEARCHKIT_USERNAME": "env-user", "SEARCHKIT_PASSWORD": "env-pass"}
    with pytest.raises(ConfigError, match="arguments are incomplete: password missing"):
        resolve_credentials("arg-user", None, env=env)


@pytest.mark.parametrize(
    ("env", "missing"),
    [
        ({"SEARCHKIT_USERNAME": "u"}, "SEARCHKIT_PASSWORD"),
        ({"SEARCHKIT_PASSWORD": "p"}, "SEARCHKIT_USERNAME"),
        ({"SEARCHKIT_USERNAME": "u", "SEARCHKIT_PASSWORD": ""}, "SEARCHKIT_PASSWORD"),
    ],
)
def test_half_set_environment_names_what_is_missing(env, missing):
    with pytest.raises(ConfigError, match=f"incomplete: {missing} is not set or empty"):
        resolve_credentials(env=env)


def test_no_source_at_all_says_how_to_set_one():
    with pytest.raises(ConfigError, match="no credentials: pass username= and password="):
        resolve_credentials(env={})


def test_username_with_colon_is_refused():
    with pytest.raises(ConfigError, match="contains ':'"):
        resolve_credentials("a:b", "pw", env={})


def test_credentials_repr_hides_password():
    creds = resolve_credentials("me", "hunter2-very-secret", env={})
    assert "hunter2" not in repr(creds)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://api.example.com/", "https://api.example.com"),
        ("https://api.example.com:8443/base/", "https://api.example.com:8443/base"),
        ("http://127.0.0.1:8787", "http://127.0.0.1:8787"),
        ("http://127.8.9.10:1", "http://127.8.9.10:1"),
        ("http://localhost:9/", "http://localhost:9"),
        ("http://[::1]:8787", "http://[::1]:8787"),
        ("HTTPS://API.example.com", "https://api.example.com"),
        # The API's own path, copied from its docs, is appended per request: not doubled.
        ("https://api.example.com/v2/search", "https://api.example.com"),
        ("https://api.example.com/v2/search/", "https://api.example.com"),
        ("https://api.example.com/base/v2/search", "https://api.example.com/base"),
        ("http://127.0.0.1:8787/v2/search", "http://127.0.0.1:8787"),
        ("https://api.example.com/v2/searches", "https://api.example.com/v2/searches"),
    ],
)
def test_valid_base_urls_are_normalised(url, expected):
    assert validate_base_url(url) == expected


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://api.example.com", "refusing to send credentials over plain http"),
        ("http://10.0.0.5:8787", "refusing to send credentials over plain http"),
        ("http://localhost@evil.example", "must not contain a user or password"),
        ("https://user:pw@api.example.com", "must not contain a user or password"),
        ("ftp://api.example.com", "must start with https://"),
        ("api.example.com", "must start with https://"),
        ("https://", "has no host"),
        ("https://api.example.com/?x=1", "query string or fragment"),
        ("https://api.example.com:99999", "not a valid URL"),
        ("", "base URL is empty"),
    ],
)
def test_unsafe_or_malformed_base_urls_are_refused(url, message):
    with pytest.raises(ConfigError, match=message):
        validate_base_url(url)


def test_base_url_from_environment_and_missing():
    assert resolve_base_url(env={"SEARCHKIT_BASE_URL": "https://a.example"}) == "https://a.example"
    with pytest.raises(ConfigError, match="no service address"):
        resolve_base_url(env={})


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("LOCALHOST.", True),
        ("10.0.0.1", False),
        ("example.com", False),
        ("localhost.example.com", False),
    ],
)
def test_is_loopback(host, expected):
    assert is_loopback(host) is expected


@pytest.mark.parametrize(
    ("text", "expected"), [("10", 10.0), ("5,30", (5.0, 30.0)), (" 1.5 , 2 ", (1.5, 2.0))]
)
def test_timeout_text_is_one_number_or_a_connect_read_pair(text, expected):
    assert parse_timeout(text) == expected
    assert parse_timeout(env={"SEARCHKIT_TIMEOUT": text}) == expected


def test_no_timeout_in_the_environment_is_none():
    assert parse_timeout(env={}) is None
    assert parse_timeout(env={"SEARCHKIT_TIMEOUT": "  "}) is None


@pytest.mark.parametrize("text", ["soon", "0", "-3", "nan", "inf", "1,2,3", "1,,2"])
def test_bad_timeout_text_names_the_source(text):
    with pytest.raises(ConfigError, match=r"^SEARCHKIT_TIMEOUT must be seconds") as info:
        parse_timeout(env={"SEARCHKIT_TIMEOUT": text})
    assert "e.g. '10' or '5,30'" in str(info.value)
