"""Client against the emulator over real HTTP: round trips, typing, auth, validation."""

from __future__ import annotations

import logging
import re
import socket
import uuid
import warnings

import pytest

import searchkit as sk
from searchkit.model.limits import LIMIT_FIELDS
from tests.conftest import FIXED_CLOCK


def test_new_account_lists_no_indexes(client):
    indexes = client.list_indexes()
    assert isinstance(indexes, sk.IndexList)
    assert len(indexes) == 0


def test_created_index_is_returned_typed_and_then_listed(client):
    index = client.create_index("docs", region="eu-west-1", type="payg")
    assert isinstance(index, sk.SearchIndex)
    assert index.name == "docs"
    assert uuid.UUID(index.id)
    assert index.type is sk.IndexType.PAYG
    assert isinstance(index.region, sk.Region)
    assert re.fullmatch(r"[a-z]+-[a-z]+-\d{5}-[a-z]{2}\d", index.endpoint)
    assert index.creation_time == int(FIXED_CLOCK.timestamp())
    assert index.created == FIXED_CLOCK
    assert index.input_enrichment_enabled is True
    assert index.partner_email == ""
    for field in LIMIT_FIELDS:
        assert isinstance(getattr(index, field), int), field
    assert len(index.token.get_secret_value()) >= 32
    assert len(index.read_only_token.get_secret_value()) >= 32
    assert index.token != index.read_only_token
    points = index.throughput.points()
    assert points and all(isinstance(p["x"], str) for p in points)

    listed = client.list_indexes()
    assert listed.names() == ["docs"]
    assert listed.by_name("docs") == index


def test_name_is_sent_exactly_as_typed(client):
    # The spec allows any string: the client never rewrites what the user typed.
    assert client.create_index(" docs", region="us-central1", type="free").name == " docs"
    assert client.list_indexes().names() == [" docs"]


@pytest.mark.parametrize("name", ["x" * 129, "a\nb", "a\x85b"], ids=["129-chars", "LF", "NEL"])
def test_names_the_spec_allows_are_left_to_the_service_to_judge(client, name):
    # Length and control characters are the emulator's own rules, not the spec's: the
    # request is sent, and the refusal is the service's 400 with its words.
    with pytest.raises(sk.ValidationError) as info:
        client.create_index(name, region="eu-west-1", type="free")
    assert info.value.status == 400
    assert info.value.method == "POST"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "", "region": "eu-west-1", "type": "free"}, "name must not be empty or blank"),
        ({"name": "  \t", "region": "eu-west-1", "type": "free"}, "name must not be empty"),
        ({"name": 7, "region": "eu-west-1", "type": "free"}, "name must be a string, got int"),
        (
            {"name": "a", "region": "mars-1", "type": "free"},
            "region 'mars-1' is not one of the allowed values: eu-west-1, us-central1",
        ),
        (
            {"name": "a", "region": "eu-west-1", "type": "gold"},
            "type 'gold' is not one of the allowed values: free, payg, fixed",
        ),
    ],
)
def test_bad_fields_are_refused_before_any_request(kwargs, message):
    # A port with nothing listening: had the client sent anything, it would be a
    # TransportError, not a ValidationError.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with sk.Client(username="u", password="p", base_url=f"http://127.0.0.1:{port}") as client:
        with pytest.raises(sk.ValidationError, match=re.escape(message)):
            client.create_index(kwargs.pop("name"), reconcile=False, **kwargs)


def test_enum_members_are_accepted_as_fields(client):
    index = client.create_index("enum", region=sk.Region.US_CENTRAL1, type=sk.IndexType.FREE)
    assert index.type is sk.IndexType.FREE


def test_fixed_plan_is_refused_by_the_service_with_its_message(client, emulator):
    with pytest.raises(sk.ValidationError, match="not currently available") as info:
        client.create_index("fixed-one", region="eu-west-1", type="fixed")
    assert info.value.status == 400
    assert info.value.method == "POST" and info.value.path == "/v2/search"
    assert client.list_indexes().names() == []


def test_wrong_password_is_authentication_error_naming_the_source(emulator):
    with sk.Client(
        username=emulator.username, password="wrong-password-1234", base_url=emulator.url
    ) as client:
        with pytest.raises(sk.AuthenticationError) as info:
            client.list_indexes()
    text = str(info.value)
    assert info.value.status == 401
    assert f"refused user {emulator.username!r}" in text
    assert "whose credentials come from the username= and password= arguments" in text
    assert "wrong-password-1234" not in text and emulator.password not in text


def test_credentials_from_environment_are_named_as_such(emulator, monkeypatch):
    monkeypatch.setenv("SEARCHKIT_BASE_URL", emulator.url)
    monkeypatch.setenv("SEARCHKIT_USERNAME", emulator.username)
    monkeypatch.setenv("SEARCHKIT_PASSWORD", "not-the-password")
    with sk.Client() as client, pytest.raises(sk.AuthenticationError, match="the environment"):
        client.list_indexes()


def test_read_only_account_gets_permission_denied_on_create(emulator):
    emulator.add_user("reader", "reader-password-xyz", read_only=True)
    with sk.Client(
        username="reader", password="reader-password-xyz", base_url=emulator.url
    ) as client:
        assert client.list_indexes().names() == []
        with pytest.raises(sk.PermissionDeniedError) as info:
            client.create_index("nope", region="eu-west-1", type="free")
    assert info.value.status == 403
    assert "reader-password-xyz" not in str(info.value)


def test_client_repr_hides_password(client, emulator):
    assert emulator.password not in repr(client)
    assert repr(client) == (
        f"Client(base_url={emulator.url!r}, username={emulator.username!r}, "
        "credentials from arguments)"
    )


def test_client_without_any_configuration_is_a_config_error():
    with pytest.raises(sk.ConfigError, match="no credentials"):
        sk.Client()


@pytest.mark.parametrize("timeout", [0, -1, (1,), (1, 2, 3), "5", float("inf"), True])
def test_bad_timeouts_are_refused(timeout):
    with pytest.raises(sk.ValidationError, match="timeout must be a positive number"):
        sk.Client(username="u", password="p", base_url="http://127.0.0.1:1", timeout=timeout)


def test_timeout_accepts_number_or_pair():
    a = sk.Client(username="u", password="p", base_url="http://127.0.0.1:1", timeout=2)
    b = sk.Client(username="u", password="p", base_url="http://127.0.0.1:1", timeout=(1, 9))
    assert (a.timeout, b.timeout) == ((2.0, 2.0), (1.0, 9.0))
    assert sk.Client(username="u", password="p", base_url="http://127.0.0.1:1").timeout == (
        5.0,
        30.0,
    )


def test_connect_uses_the_configured_service(emulator, monkeypatch):
    monkeypatch.setenv("SEARCHKIT_BASE_URL", emulator.url)
    monkeypatch.setenv("SEARCHKIT_USERNAME", emulator.username)
    monkeypatch.setenv("SEARCHKIT_PASSWORD", emulator.password)
    with sk.connect() as client:
        assert client.base_url == emulator.url
        assert client.credentials_source == "environment"


def test_connect_without_configuration_starts_a_demo_emulator_and_says_so(capsys):
    with sk.connect(seed=3, clock=FIXED_CLOCK) as client:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", client.base_url)
        assert len(client.list_indexes()) >= 5
    err = capsys.readouterr().err
    assert (
        "SEARCHKIT_BASE_URL is not set, so a demo emulator was started at http://127.0.0.1:" in err
    )


# -- SEARCHKIT_TIMEOUT ---------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [("10", (10.0, 10.0)), ("2.5, 40", (2.5, 40.0))])
def test_timeout_comes_from_the_environment_when_not_given(monkeypatch, text, expected):
    monkeypatch.setenv("SEARCHKIT_TIMEOUT", text)
    client = sk.Client(username="u", password="p", base_url="http://127.0.0.1:1")
    assert client.timeout == expected
    assert client.deadline == 2 * sum(expected)
    given = sk.Client(username="u", password="p", base_url="http://127.0.0.1:1", timeout=3)
    assert given.timeout == (3.0, 3.0)  # an argument wins over the environment


@pytest.mark.parametrize("text", ["soon", "0", "-1", "1,2,3", "inf", "5,"])
def test_bad_timeout_in_the_environment_is_a_config_error_naming_it(monkeypatch, text):
    monkeypatch.setenv("SEARCHKIT_TIMEOUT", text)
    with pytest.raises(sk.ConfigError, match=r"SEARCHKIT_TIMEOUT must be seconds"):
        sk.Client(username="u", password="p", base_url="http://127.0.0.1:1")


# -- connect() -----------------------------------------------------------------------------


@pytest.fixture
def demos():
    from searchkit.connection import close_demo

    close_demo()
    yield
    close_demo()


def test_connect_again_with_the_same_options_reuses_the_emulator(demos, capsys):
    first = sk.connect(seed=3, clock=FIXED_CLOCK)
    again = sk.connect(seed=3, clock=FIXED_CLOCK)
    other = sk.connect(seed=4, clock=FIXED_CLOCK)
    assert again.base_url == first.base_url
    assert other.base_url != first.base_url
    assert again.list_indexes() == first.list_indexes()
    assert capsys.readouterr().err.count("a demo emulator was started") == 2


def test_closing_a_connect_client_stops_its_emulator_and_the_next_connect_starts_one(demos):
    client = sk.connect(seed=3, clock=FIXED_CLOCK)
    url = client.base_url
    client.close()
    with (
        sk.Client(username="u", password="p", base_url=url, max_retries=0) as probe,
        pytest.raises(sk.TransportError, match="connection refused"),
    ):
        probe.list_indexes()
    with sk.connect(seed=3, clock=FIXED_CLOCK) as fresh:
        assert len(fresh.list_indexes()) >= 5


def test_close_demo_stops_every_demo_emulator_connect_started(demos):
    from searchkit.connection import close_demo

    urls = [sk.connect(seed=s, clock=FIXED_CLOCK).base_url for s in (1, 2)]
    assert close_demo() == 2
    for url in urls:
        with (
            sk.Client(username="u", password="p", base_url=url, max_retries=0) as probe,
            pytest.raises(sk.TransportError),
        ):
            probe.list_indexes()
    assert close_demo() == 0


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"SEARCHKIT_USERNAME": "me", "SEARCHKIT_PASSWORD": "pw"}, "SEARCHKIT_USERNAME and "),
        ({"SEARCHKIT_PASSWORD": "pw"}, "SEARCHKIT_PASSWORD is set"),
    ],
)
def test_connect_with_credentials_but_no_address_is_a_config_error_not_the_demo(
    demos, monkeypatch, capsys, env, named
):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(sk.ConfigError, match=named) as info:
        sk.connect()
    assert "SEARCHKIT_BASE_URL is not" in str(info.value)
    assert "pw" not in str(info.value).replace("SEARCHKIT_PASSWORD", "")
    assert "demo emulator was started" not in capsys.readouterr().err


def test_connect_is_the_public_name_of_connection_connect():
    from searchkit.connection import connect

    assert sk.connect is connect


def test_connect_with_list_options_reuses_the_emulator_too(demos):
    first = sk.connect(users=[("ana", "ana-password-1")], demo=False)
    again = sk.connect(users=[("ana", "ana-password-1")], demo=False)
    assert again.base_url == first.base_url
    assert again.username == "ana"


def test_connect_starts_a_fresh_emulator_when_the_old_one_was_stopped_elsewhere(demos):
    from searchkit import connection

    first = sk.connect(seed=5, clock=FIXED_CLOCK)
    (emulator,) = connection._demos.values()
    emulator.stop()  # e.g. by code that held on to it
    fresh = sk.connect(seed=5, clock=FIXED_CLOCK)
    assert fresh.base_url != first.base_url
    assert len(fresh.list_indexes()) >= 5


# --- if_exists="return" says when the existing index is not what was asked -----------------


def test_if_exists_return_warns_when_the_existing_index_has_another_region_and_plan(client):
    existing = client.create_index("docs", region="us-central1", type="free")
    with pytest.warns(sk.IndexMismatchWarning) as caught:
        again = client.create_index("docs", region="eu-west-1", type="payg", if_exists="return")
    assert again == existing
    assert [str(w.message) for w in caught] == [
        "an index named 'docs' exists in us-central1 on the free plan, not in eu-west-1 on "
        "the payg plan as asked; it was returned as it is (if_exists='return')"
    ]
    assert caught[0].filename == __file__  # points at the caller's line
    assert issubclass(sk.IndexMismatchWarning, UserWarning)
    assert client.list_indexes().names() == ["docs"]


def test_if_exists_return_is_silent_when_the_existing_index_matches(client, recwarn):
    existing = client.create_index("docs", region="eu-west-1", type="payg")
    again = client.create_index("docs", region="eu-west-1", type="payg", if_exists="return")
    assert again == existing
    assert [w.category for w in recwarn] == []


def test_if_exists_return_mismatch_can_be_made_an_error(client):
    client.create_index("docs", region="eu-west-1", type="free")
    with warnings.catch_warnings():
        warnings.simplefilter("error", sk.IndexMismatchWarning)
        with pytest.raises(sk.IndexMismatchWarning, match="on the free plan, not in eu-west-1"):
            client.create_index("docs", region="eu-west-1", type="payg", if_exists="return")


def test_connect_logs_the_demo_notice_at_info(demos, caplog):
    caplog.set_level(logging.INFO, logger="searchkit")
    with sk.connect(seed=3, clock=FIXED_CLOCK) as client:
        url = client.base_url
    notices = [r for r in caplog.records if "demo emulator was started" in r.getMessage()]
    assert [(r.levelname, r.getMessage()) for r in notices] == [
        (
            "INFO",
            f"SEARCHKIT_BASE_URL is not set, so a demo emulator was started at {url} "
            "(synthetic data, nothing leaves this machine)",
        )
    ]
