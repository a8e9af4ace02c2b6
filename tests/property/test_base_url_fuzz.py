"""Base URLs fuzzed: accepted only when safe, else ConfigError that never echoes a password."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from hypothesis import example, given
from hypothesis import strategies as st

from searchkit.api.config import is_loopback, validate_base_url
from searchkit.errors import ConfigError

PASSWORD = "Hunter2-Pw-x9Q"

hosts = st.one_of(
    st.sampled_from(
        [
            "127.0.0.1",
            "localhost",
            "[::1]",
            "api.example.com",
            "10.0.0.1",
            "evil.localhost",
            "127.0.0.1.evil.example",
            "0.0.0.0",
            "",
        ]
    ),
    st.text(max_size=20),
)
schemes = st.sampled_from(["http://", "https://", "HTTP://", "ftp://", "", "//", "http:/"])
# A user part that cannot end the address early: what follows it is still userinfo.
users = st.text(max_size=10).filter(lambda user: not set(user) & set("@/?#\\"))
tails = st.one_of(
    st.just(""),
    st.text(max_size=20),
    st.sampled_from([":8787", ":0", ":99999", ":x", "/v2", "/?q", "#f", "/"]),
)


@given(st.text(max_size=80))
@example("http://[::1")
@example("https://exa\uff03mple.com")
def test_any_text_is_a_url_or_config_error(text):
    try:
        url = validate_base_url(text)
    except ConfigError:
        return
    parts = urlsplit(url)
    assert parts.scheme in ("http", "https")
    assert parts.hostname and "@" not in parts.netloc
    assert not parts.query and not parts.fragment
    if parts.scheme == "http":
        assert is_loopback(parts.hostname)


@given(schemes, users, hosts, tails)
@example("ftp://", "admin", "api.example.com", "")
@example("", "admin", "api.example.com", "")
@example("https://", "admin", "", "/\uff03")
def test_url_with_a_password_inside_is_refused_without_echoing_it(scheme, user, host, tail):
    url = f"{scheme}{user}:{PASSWORD}@{host}{tail}"
    try:
        validate_base_url(url)
    except ConfigError as exc:
        assert PASSWORD not in str(exc)
    else:
        raise AssertionError(f"accepted a URL with a password inside: {url!r}")


@given(hosts, tails)
def test_plain_http_is_accepted_only_to_loopback(host, tail):
    try:
        url = validate_base_url(f"http://{host}{tail}")
    except ConfigError:
        return
    host = urlsplit(url).hostname.rstrip(".")
    assert host == "localhost" or ipaddress.ip_address(host).is_loopback
