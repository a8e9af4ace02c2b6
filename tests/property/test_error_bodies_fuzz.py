"""Error and response bodies fuzzed: a bounded message or the documented error, no crash."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import searchkit as sk
from searchkit.errors import MAX_MESSAGE_CHARS, error_for_status, server_message
from tests.conftest import examples

from ..faults.harness import reply

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
bodies = st.one_of(
    st.binary(max_size=400),
    st.text(max_size=400).map(str.encode),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.dictionaries(
        st.sampled_from(["error", "message", "detail", "code"]), json_values, max_size=4
    ).map(lambda v: json.dumps(v).encode()),
)


def one_line(text: str) -> str:
    return " ".join(text.split())


@given(bodies, st.integers(min_value=2, max_value=MAX_MESSAGE_CHARS))
@example(b'{"error": {"message": null}}', 300)
@example(b"[" * 100_000, 300)
@example("\u2028\x85 \t".encode(), 300)
def test_server_message_is_one_bounded_line_or_none_for_a_blank_body(body, limit):
    message = server_message(body, limit=limit)
    if not body.decode("utf-8", "replace").strip():
        assert message is None
        return
    assert isinstance(message, str) and message
    assert len(message) <= limit
    assert message == one_line(message)


@given(st.text(min_size=1).filter(str.strip), json_values, json_values)
def test_error_field_wins_over_message_and_detail(error, message, detail):
    body = json.dumps({"detail": detail, "message": message, "error": error})
    assert server_message(body, limit=10_000) == one_line(error)


@given(st.text(min_size=1).filter(str.strip), st.integers())
def test_message_field_is_taken_when_there_is_no_error(message, code):
    body = json.dumps({"code": code, "message": message})
    assert server_message(body, limit=10_000) == one_line(message)


@given(st.text(max_size=2_000))
def test_plain_text_body_is_the_message_cut_to_the_limit(text):
    message = server_message(text.encode())
    if message is not None:
        assert len(message) <= MAX_MESSAGE_CHARS
        assert one_line(text).startswith(message.removesuffix("…").rstrip())


# -- through the client -------------------------------------------------------------------


# ``server`` (tests/conftest.py): one FaultServer for the module's many examples.
pytestmark = pytest.mark.server(shared=True)


@pytest.fixture
def client_options():
    """Here ``client`` talks to ``server`` with a password of its own (none reaches a message)."""
    return {
        "of": "server", "username": "u", "password": "pw-fuzz-Rr55-secret", "timeout": 2,
        "max_retries": 0,
    }  # fmt: skip


HTTP = settings(
    max_examples=examples(120),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@HTTP
@given(status=st.integers(400, 599), body=bodies)
def test_any_error_answer_is_the_status_class_with_a_bounded_message(server, client, status, body):
    server.script("GET", reply(status, body))
    with pytest.raises(sk.SearchKitError) as info:
        client.list_indexes()
    assert type(info.value) is error_for_status(status)
    assert info.value.status == status
    assert len(info.value.server_message) <= MAX_MESSAGE_CHARS
    assert len(str(info.value)) < 600
    assert "pw-fuzz-Rr55-secret" not in str(info.value)


index_like = st.fixed_dictionaries(
    {},
    optional={
        key: json_values
        for key in (
            "id",
            "name",
            "type",
            "region",
            "token",
            "max_vector_count",
            "max_daily_queries",
            "creation_time",
            "input_enrichment_enabled",
            "throughput_vector",
            "vercel_email",
            "partner_email",
            "unknown_field",
        )
    },
)


@HTTP
@given(
    body=st.one_of(
        bodies,
        st.lists(index_like, max_size=4).map(lambda v: json.dumps(v).encode()),
    )
)
@example(body=b'[{"creation_time": NaN, "max_vector_count": Infinity}]')
@example(body=b'[{"max_vector_count": "' + b"9" * 5000 + b'"}]')
def test_any_ok_answer_to_a_list_is_an_index_list_or_invalid_response(server, client, body):
    server.script("GET", reply(200, body))
    try:
        indexes = client.list_indexes()
    except sk.InvalidResponseError as exc:
        assert exc.status == 200
    else:
        assert isinstance(indexes, sk.IndexList)
        assert len(indexes) == len(json.loads(body))
        repr(indexes)
