"""The emulator's create endpoint under arbitrary bodies: a JSON 4xx or a whole index.

After every request the store holds exactly the indexes that were answered 200, each one
complete: a refused or broken request never leaves a row behind, whole or half.
"""

from __future__ import annotations

import json
import unicodedata
import uuid

import pytest
import requests
from hypothesis import example, given, settings
from hypothesis import strategies as st

from searchkit.emulator import Emulator
from tests.conftest import examples

from ..spec import LIMIT_FIELDS as LIMITS
from ..spec import REGIONS, SPEC_FIELDS, TYPES

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
field_values = {
    "name": st.one_of(st.text(max_size=140), json_values),
    "region": st.one_of(st.sampled_from(REGIONS), st.text(max_size=12), json_values),
    "type": st.one_of(st.sampled_from(TYPES), st.text(max_size=8), json_values),
}
create_like = st.fixed_dictionaries({}, optional={**field_values, "extra": json_values})
bodies = st.one_of(
    json_values.map(json.dumps),
    create_like.map(json.dumps),
    st.binary(max_size=200),
)


class Target:
    """The emulator under test and how many indexes it has rightly created."""

    def __init__(self, emulator: Emulator):
        self.emulator = emulator
        self.session = requests.Session()
        self.session.auth = (emulator.username, emulator.password)
        self.created = 0

    def post(self, body: str | bytes) -> requests.Response:
        return self.session.post(
            f"{self.emulator.url}/v2/search",
            data=body,
            headers={"Content-Type": "application/json"},
            timeout=10,
        )


@pytest.fixture(scope="module")
def target():
    with Emulator(window_minutes=2) as emulator:
        yield Target(emulator)


def assert_whole_index(index: dict, sent: dict | None = None) -> None:
    assert set(index) == SPEC_FIELDS
    uuid.UUID(index["id"])
    for field in ("customer_id", "endpoint", "token", "read_only_token"):
        assert isinstance(index[field], str) and index[field], field
    assert index["type"] in TYPES and index["region"] in REGIONS
    assert index["partner_email"] == ""
    for field in (*LIMITS, "creation_time"):
        assert type(index[field]) is int, field
    assert index["input_enrichment_enabled"] is True
    assert all(
        isinstance(p["x"], str) and isinstance(p["y"], int | float)
        for p in index["throughput_vector"]
    )
    if sent is not None:
        assert (index["name"], index["region"], index["type"]) == (
            sent["name"],
            sent["region"],
            sent["type"],
        )


def assert_store_holds_only_whole_indexes(target: Target) -> None:
    stored = target.emulator.store.list_indexes(target.emulator.account)
    assert len(stored) == target.created
    for index in stored:
        assert_whole_index(index)


def check(target: Target, body: str | bytes) -> requests.Response:
    response = target.post(body)
    assert response.headers["Content-Type"] == "application/json"
    payload = response.json()
    if response.status_code == 200:
        target.created += 1
        assert_whole_index(payload, json.loads(body))
    else:
        assert 400 <= response.status_code < 500
        assert set(payload) == {"error"}
        assert isinstance(payload["error"], str) and payload["error"]
    assert_store_holds_only_whole_indexes(target)
    return response


@settings(max_examples=examples(200), deadline=None)
@given(bodies)
@example('{"name": "a", "region": "eu-west-1", "type": "payg"}')
@example('{"name": "\\ud800", "region": "eu-west-1", "type": "payg"}')
@example('{"name": "a\\u0000b", "region": "eu-west-1", "type": "payg"}')
@example('{"name": "x", "region": "eu-west-1", "type": "payg", "name": 5}')
@example('{"name": NaN, "region": "eu-west-1", "type": "payg"}')
@example('{"name": 1e999, "region": "eu-west-1", "type": "payg"}')
@example("[" * 50_000)
@example(b"\xff\xfe{}")
@example("")
def test_any_body_gets_a_json_client_error_or_a_whole_index(target, body):
    check(target, body)


def valid_name(name: str) -> bool:
    return (
        bool(name.strip())
        and len(name) <= 128
        and not any(unicodedata.category(c) in ("Cc", "Cs") for c in name)
    )


@settings(max_examples=examples(150), deadline=None)
@given(
    name=st.text(max_size=140),
    region=st.sampled_from(REGIONS),
    type=st.sampled_from(("free", "payg")),
)
@example(name=" " * 3, region="eu-west-1", type="free")
@example(name="x" * 128, region="eu-west-1", type="free")
@example(name="x" * 129, region="eu-west-1", type="free")
@example(name="tab\there", region="eu-west-1", type="free")
@example(name="nel\x85here", region="eu-west-1", type="free")
def test_a_well_formed_create_succeeds_exactly_when_its_name_is_valid(target, name, region, type):
    body = json.dumps({"name": name, "region": region, "type": type})
    response = check(target, body)
    assert (response.status_code == 200) == valid_name(name)
