"""A 200 that is not JSON of the right shape is InvalidResponseError, never a crash."""

from __future__ import annotations

import pytest

import searchkit as sk

from .conftest import index_json
from .harness import reply, truncated


@pytest.mark.parametrize(
    ("body", "what"),
    [
        (
            "<html><body>Welcome to nginx!</body></html>",
            "the body is not JSON (JSON is malformed: invalid character (byte 0)); "
            "it starts with '<html><body>Welcome to nginx!</body></html>'",
        ),
        ({"indexes": []}, "expected a JSON array, got a JSON object"),
        ("", "the body is empty"),
        ([1, 2], "expected a JSON object for a search index at position 0, got a number"),
        ('"just a string"', "expected a JSON array, got a string"),
    ],
    ids=["html", "object", "empty", "numbers", "string"],
)
def test_list_answered_with_the_wrong_body_is_invalid_response(server, client, body, what):
    payload = body.encode() if isinstance(body, str) else body
    server.script("GET", then=reply(200, payload))
    with pytest.raises(sk.InvalidResponseError) as info:
        client.list_indexes()
    assert (
        str(info.value)
        == f"list indexes (GET /v2/search -> 200): unexpected response from the service: {what}"
    )
    assert server.count() == 1


def test_list_with_a_garbled_field_lists_and_keeps_the_value_sent(server, client):
    # DESIGN: valid JSON of the right overall shape never stops a listing.
    server.script("GET", then=reply(200, [{"name": "docs", "max_vector_count": "lots"}]))
    (index,) = client.list_indexes()
    assert index.max_vector_count is None
    assert dict(index.invalid) == {"max_vector_count": "lots"}


def test_list_cut_short_every_time_is_retried_then_invalid_response(server, client):
    server.script("GET", then=truncated(200, [index_json("docs")], missing=100))
    with pytest.raises(sk.InvalidResponseError) as info:
        client.list_indexes()
    assert server.count("GET") == 3  # the first try and max_retries=2 retries
    assert info.value.retries == 2
    assert str(info.value) == (
        "list indexes (GET /v2/search -> 200): the response was cut short "
        "(fewer bytes than announced) after 2 retries"
    )


def test_create_answered_with_an_array_is_invalid_response_once_reconciling_finds_none(
    server, client
):
    server.script("GET", then=reply(200, []))
    server.script("POST", then=reply(200, [index_json("docs")]))
    with pytest.raises(sk.AmbiguousCreateError) as info:
        client.create_index("docs", region="eu-west-1", type="payg")
    assert server.count("POST") == 1
    assert isinstance(info.value.__cause__, sk.InvalidResponseError)
    assert "expected a JSON object, got a JSON array" in str(info.value)


@pytest.mark.parametrize(
    "sent",
    [
        {"value": "TOKEN-OBJ-1234567", "kind": "rw"},
        ["TOKEN-ARR-1234567", "TOKEN-ARR-7654321"],
    ],
    ids=["object", "array"],
)
def test_a_token_of_the_wrong_json_type_is_masked_everywhere(server, client, sent, tmp_path):
    # Issue 29 item 2: whatever type the service sends for a secret field, it never shows.
    import pandas as pd
    import pyarrow as pa

    server.script(
        "GET",
        then=reply(200, [{"name": "docs", "id": "i-1", "token": sent, "read_only_token": sent}]),
    )
    indexes = client.list_indexes()
    (index,) = indexes
    assert (index.token, index.read_only_token) == (None, None)
    assert str(index.invalid["token"]) == "••••••••"
    assert index.to_dict()["token"] == "••••••••"
    assert index.to_dict(include_secrets=True)["token"] == sent
    frame = pd.DataFrame(indexes)
    csv = tmp_path / "indexes.csv"
    frame.to_csv(csv)
    texts = [
        repr(index),
        repr(index.invalid),
        str(dict(index.invalid)),
        frame.to_string(),
        frame.to_html(),
        csv.read_text(),
        repr(sk.limits_frame(indexes)),
    ]
    try:
        frame.to_parquet(tmp_path / "indexes.parquet")
    except (pa.ArrowException, ValueError, TypeError) as exc:
        texts.append(str(exc))
    for text in texts:
        assert "TOKEN-" not in text, text
