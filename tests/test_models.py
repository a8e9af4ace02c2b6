"""SearchIndex and IndexList: tolerant parsing, typed fields, reprs without secrets."""

from __future__ import annotations

import datetime as dt

import pytest

from searchkit import IndexList, IndexType, InvalidResponseError, Region, SearchIndex
from searchkit.models import LIMIT_FIELDS, ThroughputPoint

TOKEN = "AXxsecretTOKENvalue0123456789abcdef"
RO_TOKEN = "AXxREADonlyTOKENvalue9876543210zyx"

FULL = {
    "customer_id": "user@example.com",
    "id": "5d6a1f3c-4f6e-4a55-9a65-2f7c1e0a9b10",
    "name": "docs",
    "endpoint": "proud-otter-12345-eu1",
    "type": "payg",
    "region": "eu-west-1",
    "partner_email": "",
    "token": TOKEN,
    "read_only_token": RO_TOKEN,
    "max_vector_count": 2_000_000,
    "max_monthly_reranks": -1,
    "max_daily_updates": -1,
    "max_daily_queries": 0,
    "max_monthly_bandwidth": -1,
    "max_writes_per_second": 1000,
    "max_query_per_second": 1000,
    "max_reads_per_request": 1000,
    "max_writes_per_request": 1000,
    "creation_time": 1_763_800_000,
    "input_enrichment_enabled": True,
    "throughput_vector": [{"x": "2025-11-22 08:26:40.123 +0000 UTC", "y": 3.5}],
}


def test_every_spec_field_is_typed():
    index = SearchIndex.from_dict(FULL)
    assert index.id == FULL["id"]
    assert index.type is IndexType.PAYG
    assert index.region is Region.EU_WEST_1
    assert index.limits == {f: FULL[f] for f in LIMIT_FIELDS}
    assert index.creation_time == 1_763_800_000
    assert index.created == dt.datetime(2025, 11, 22, 8, 26, 40, tzinfo=dt.timezone.utc)
    assert index.input_enrichment_enabled is True
    assert index.partner_email == ""
    assert index.throughput_vector == (ThroughputPoint("2025-11-22 08:26:40.123 +0000 UTC", 3.5),)
    assert index.extra == {}


def test_to_dict_round_trips_with_secrets_and_masks_without():
    index = SearchIndex.from_dict(FULL)
    assert index.to_dict(include_secrets=True) == FULL
    masked = index.to_dict()
    assert masked["token"] is None and masked["read_only_token"] is None


def test_unknown_fields_enums_and_missing_fields_are_tolerated():
    index = SearchIndex.from_dict(
        {"id": "x", "name": "n", "type": "paid", "region": "ap-south-9", "shard_count": 3}
    )
    assert index.type == "paid" and not isinstance(index.type, IndexType)
    assert index.region == "ap-south-9"
    assert index.extra == {"shard_count": 3}
    assert index.max_daily_queries is None
    assert index.created is None
    assert index.throughput_vector == ()


def test_vercel_email_is_read_as_partner_email():
    index = SearchIndex.from_dict({"vercel_email": "team@vercel.example"})
    assert index.partner_email == "team@vercel.example"
    assert index.extra == {}


def test_partner_email_wins_over_vercel_email_which_stays_extra():
    index = SearchIndex.from_dict({"partner_email": "a@x.example", "vercel_email": "b@x.example"})
    assert index.partner_email == "a@x.example"
    assert index.extra == {"vercel_email": "b@x.example"}


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("max_daily_queries", "lots", "field 'max_daily_queries' should be an integer"),
        ("max_daily_queries", True, "should be an integer, got a boolean"),
        ("input_enrichment_enabled", "yes", "should be a boolean"),
        ("name", {"a": 1}, "field 'name' should be a string"),
        ("throughput_vector", "nope", "'throughput_vector' should be an array"),
    ],
)
def test_wrong_types_raise_invalid_response_naming_the_field(field, value, message):
    with pytest.raises(InvalidResponseError, match=message):
        SearchIndex.from_dict({**FULL, field: value})


def test_integral_floats_and_numeric_strings_are_accepted_as_limits():
    index = SearchIndex.from_dict({"max_vector_count": 10.0, "max_daily_updates": " -1 "})
    assert index.max_vector_count == 10
    assert index.is_unlimited("max_daily_updates")


def test_repr_and_str_hide_tokens():
    index = SearchIndex.from_dict(FULL)
    for text in (repr(index), str(index), repr(IndexList([index])), index._repr_html_()):
        assert TOKEN not in text and RO_TOKEN not in text
    assert "token='••••••••'" in repr(index)
    assert index.token == TOKEN  # attribute access gives the real value


def test_index_list_is_a_sequence_with_lookups():
    indexes = IndexList.from_json(
        [{**FULL, "name": "a", "id": "1"}, {**FULL, "name": "b", "id": "2"}]
    )
    assert len(indexes) == 2
    assert indexes.names() == ["a", "b"]
    assert indexes.by_name("b").id == "2"
    assert indexes.by_id("1").name == "a"
    assert isinstance(indexes[1:], IndexList) and indexes[1:].names() == ["b"]
    assert [i.name for i in indexes] == ["a", "b"]
    assert repr(indexes) == "IndexList(2 indexes: ['a', 'b'])"
    with pytest.raises(KeyError, match="no index named 'c'; indexes: a, b"):
        indexes.by_name("c")


def test_to_dicts_masks_tokens_unless_asked():
    indexes = IndexList.from_json([FULL])
    assert indexes.to_dicts()[0]["token"] is None
    assert indexes.to_dicts(include_secrets=True)[0]["token"] == TOKEN


@pytest.mark.parametrize("payload", [{"a": 1}, "text", 3, None])
def test_index_list_from_non_array_raises(payload):
    with pytest.raises(InvalidResponseError, match="expected a JSON array"):
        IndexList.from_json(payload)


def test_element_that_is_not_an_object_raises():
    with pytest.raises(InvalidResponseError, match="expected a JSON object for a search index"):
        IndexList.from_json([FULL, 5])


def test_html_display_never_raises_on_odd_data():
    odd = SearchIndex.from_dict({"name": "<script>alert(1)</script>", "creation_time": 10**18})
    html = odd._repr_html_()
    assert "<script>alert" not in html
    assert "&lt;script&gt;" in html
