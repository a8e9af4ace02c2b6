"""SearchIndex and IndexList: tolerant parsing, typed fields, reprs without secrets."""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import json
import pickle

import numpy as np
import pandas as pd
import pytest

from searchkit import IndexList, IndexType, InvalidResponseError, Region, SearchIndex
from searchkit.errors import AmbiguousNameError, SearchKitError, TimestampError
from searchkit.model.index import ThroughputPoint
from searchkit.model.limits import LIMIT_FIELDS
from searchkit.model.secret import Secret
from tests.index_json import index_json

TOKEN = "AXxsecretTOKENvalue0123456789abcdef"
RO_TOKEN = "AXxREADonlyTOKENvalue9876543210zyx"

FULL = index_json(
    "docs",
    customer_id="user@example.com",
    id="5d6a1f3c-4f6e-4a55-9a65-2f7c1e0a9b10",
    token=TOKEN,
    read_only_token=RO_TOKEN,
    max_vector_count=2_000_000,
    max_daily_queries=0,
    max_writes_per_second=1000,
    creation_time=1_763_800_000,
    throughput_vector=[{"x": "2025-11-22 08:26:40.123 +0000 UTC", "y": 3.5}],
)


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
    assert index.throughput.points() == [{"x": "2025-11-22 08:26:40.123 +0000 UTC", "y": 3.5}]
    with pytest.deprecated_call():  # the 0.1.0 view, one release more
        assert index.throughput_vector == (
            ThroughputPoint("2025-11-22 08:26:40.123 +0000 UTC", 3.5),
        )
    assert index.extra == {}


def test_to_dict_round_trips_with_secrets_and_masks_without():
    index = SearchIndex.from_dict(FULL)
    assert index.to_dict(include_secrets=True) == FULL
    masked = index.to_dict()
    assert masked["token"] == masked["read_only_token"] == "••••••••"


def test_unknown_fields_enums_and_missing_fields_are_tolerated():
    index = SearchIndex.from_dict(
        {"id": "x", "name": "n", "type": "paid", "region": "ap-south-9", "shard_count": 3}
    )
    assert index.type == "paid" and not isinstance(index.type, IndexType)
    assert index.region == "ap-south-9"
    assert index.extra == {"shard_count": 3}
    assert index.max_daily_queries is None
    assert index.created is None
    assert len(index.throughput) == 0


def test_vercel_email_is_read_as_partner_email():
    index = SearchIndex.from_dict({"vercel_email": "team@vercel.example"})
    assert index.partner_email == "team@vercel.example"
    assert index.extra == {}


def test_partner_email_wins_over_vercel_email_which_stays_extra():
    index = SearchIndex.from_dict({"partner_email": "a@x.example", "vercel_email": "b@x.example"})
    assert index.partner_email == "a@x.example"
    assert index.extra == {"vercel_email": "b@x.example"}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_daily_queries", "lots"),
        ("max_daily_queries", True),
        ("max_daily_queries", 12.5),
        ("max_daily_queries", 10**400),
        ("max_vector_count", -(2**63) - 1),
        ("creation_time", "soon"),
        ("input_enrichment_enabled", "yes"),
        ("name", {"a": 1}),
        ("throughput_vector", "nope"),
    ],
)
def test_a_wrongly_typed_value_reads_as_none_and_is_kept_as_sent(field, value):
    raw = {**FULL, field: value}
    for index in (
        SearchIndex.from_dict(raw),
        SearchIndex.from_json_bytes(json.dumps(raw).encode()),
        IndexList.from_json_bytes(json.dumps([raw]).encode())[0],
    ):
        if field == "throughput_vector":
            assert len(index.throughput) == 0
        else:
            assert getattr(index, field) is None
        assert dict(index.invalid) == {field: value}
        assert index.to_dict(include_secrets=True) == raw


def test_integral_floats_and_numeric_strings_are_accepted_as_limits():
    index = SearchIndex.from_dict({"max_vector_count": 10.0, "max_daily_updates": " -1 "})
    assert index.max_vector_count == 10
    assert index.is_unlimited("max_daily_updates")


def test_repr_and_str_hide_tokens():
    index = SearchIndex.from_dict(FULL)
    for text in (repr(index), str(index), repr(IndexList([index])), index._repr_html_()):
        assert TOKEN not in text and RO_TOKEN not in text
    assert "token='••••••••'" in repr(index)
    assert str(index.token) == f"{index.token}" == f"{index.token:>3}".strip() == "••••••••"
    assert TOKEN not in repr(index.token)
    assert index.token.get_secret_value() == TOKEN  # one explicit call gives the real value


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
    assert indexes["b"].id == "2"


def test_to_dicts_masks_tokens_unless_asked():
    indexes = IndexList.from_json([FULL, {**FULL, "id": "2", "token": None}])
    assert [d["token"] for d in indexes.to_dicts()] == ["••••••••", None]
    assert [type(d["token"]) for d in indexes.to_dicts()] == [str, type(None)]
    assert indexes.to_dicts(include_secrets=True)[0]["token"] == TOKEN


@pytest.mark.parametrize("payload", [{"a": 1}, "text", 3, None])
def test_index_list_from_non_array_raises(payload):
    with pytest.raises(InvalidResponseError, match="expected a JSON array"):
        IndexList.from_json(payload)


def test_element_that_is_not_an_object_raises():
    message = "expected a JSON object for a search index at position 1, got a number"
    with pytest.raises(InvalidResponseError, match=message):
        IndexList.from_json([FULL, 5])
    with pytest.raises(InvalidResponseError, match=message):
        IndexList.from_json_bytes(json.dumps([FULL, 5]).encode())


def test_html_display_never_raises_on_odd_data():
    odd = SearchIndex.from_dict({"name": "<script>alert(1)</script>", "creation_time": 10**18})
    html = odd._repr_html_()
    assert "<script>alert" not in html
    assert "&lt;script&gt;" in html


def test_by_name_refuses_an_ambiguous_name_and_lists_the_ids():
    indexes = IndexList.from_json(
        [{**FULL, "id": "id-1"}, {**FULL, "id": "id-2"}, {**FULL, "id": "id-3", "name": "x"}]
    )
    with pytest.raises(AmbiguousNameError, match=r"2 indexes are named 'docs' \(ids id-1, id-2\)"):
        indexes.by_name("docs")
    with pytest.raises(LookupError):
        indexes["docs"]
    assert issubclass(AmbiguousNameError, SearchKitError)
    assert indexes["x"].id == "id-3"


# --- immutability and hashing ------------------------------------------------------------


def test_an_index_with_throughput_is_hashable_on_its_id():
    one = SearchIndex.from_dict(FULL)
    same = SearchIndex.from_json_bytes(json.dumps(FULL).encode())
    assert one == same and hash(one) == hash(same)
    assert hash(one) == hash(SearchIndex.from_dict({**FULL, "name": "renamed"}))
    assert len({one, same, SearchIndex.from_dict({**FULL, "id": "other"})}) == 2
    assert hash(IndexList([one])) == hash(IndexList([same]))


def test_an_index_cannot_be_changed():
    index = SearchIndex.from_dict({**FULL, "shard": {"count": [1, 2]}})
    with pytest.raises(dataclasses.FrozenInstanceError):
        index.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        index.extra["shard"] = 1  # type: ignore[index]
    with pytest.raises(TypeError):
        index.extra["shard"]["count"] = 1
    assert index.extra["shard"]["count"] == (1, 2)
    assert index.to_dict()["shard"] == {"count": [1, 2]}
    with pytest.raises(ValueError, match="read-only"):
        index.throughput.values[0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        index.throughput.nanos[0] = 1
    with pytest.raises(AttributeError):
        index.throughput._values = np.zeros(1)  # type: ignore[misc]
    with pytest.raises(AttributeError):
        index.token._value = "x"  # type: ignore[union-attr]


def test_a_plain_token_given_to_the_constructor_becomes_a_secret():
    index = SearchIndex(id="a", token="abc", extra={"k": [1]})
    assert isinstance(index.token, Secret) and index.token.get_secret_value() == "abc"
    assert "abc" not in repr(index)
    assert index.extra["k"] == (1,)


# --- secrets -----------------------------------------------------------------------------


def test_secrets_compare_and_hash_by_value():
    assert Secret("a") == Secret("a") and Secret("a") != Secret("b")
    assert hash(Secret("a")) == hash(Secret("a"))
    assert Secret("a") != "a"
    assert bool(Secret("")) is False and bool(Secret("a")) is True
    assert repr(Secret("abc")) == "Secret('••••••••')"


def test_a_secret_is_text_that_is_its_mask():
    token = Secret("abc")
    assert isinstance(token, str)
    assert (str(token), f"{token}", json.dumps(token)) == (
        "••••••••",
        "••••••••",
        json.dumps("••••••••"),
    )
    assert str.__str__(token) == "••••••••" and token.upper() == "••••••••"
    assert token.get_secret_value() == "abc" and len(token) == len("••••••••") == 8
    assert token != "••••••••" and token != "abc"
    assert "••••••••".__eq__(token) is True  # str sees its text, == asks the Secret first
    assert ("••••••••" == token) is False  # noqa: SIM300
    assert Secret(token) is token
    with pytest.raises(AttributeError, match="immutable"):
        token._value = "other"
    with pytest.raises(TypeError, match="a Secret holds text, got int"):
        Secret(3)


@pytest.mark.parametrize("value", ["", "1", "1234", "s3cr3t", "x" * 64, "€" * 40])
def test_len_is_the_masks_and_bool_only_says_whether_a_value_is_set(value):
    token = Secret(value)
    assert len(token) == 8  # whatever the value's length: it is not told
    assert bool(token) is (value != "")
    assert (len(str(token)), len(repr(token)), len(f"{token:>12}")) == (8, 18, 12)
    assert pd.Series([token], dtype=object).str.len().tolist() == [8]
    assert len(token.get_secret_value()) == len(value)  # the one explicit call


def test_tables_made_from_indexes_mask_the_tokens():
    indexes = IndexList.from_json([FULL, {**FULL, "id": "2", "name": "news"}])
    frame = pd.DataFrame(indexes)
    shown = frame.to_csv() + frame.to_string() + frame.to_json() + repr(frame)
    assert TOKEN not in shown and RO_TOKEN not in shown
    assert frame["name"].tolist() == ["docs", "news"]
    assert frame["token"].tolist() == frame["read_only_token"].tolist() == ["••••••••"] * 2
    dicts = pd.DataFrame(indexes.to_dicts()).to_csv()
    assert TOKEN not in dicts and RO_TOKEN not in dicts
    assert indexes.to_dicts(include_secrets=True)[0]["read_only_token"] == RO_TOKEN


@pytest.mark.parametrize("fmt", ["parquet", "feather", "csv"])
def test_a_table_made_from_indexes_survives_a_file_with_the_tokens_masked(tmp_path, fmt):
    indexes = IndexList.from_json([FULL, {**FULL, "id": "2", "name": "news", "token": None}])
    frame = pd.DataFrame(indexes).drop(columns=["throughput", "extra", "invalid"])
    path = tmp_path / f"indexes.{fmt}"
    getattr(frame, f"to_{fmt}")(path, **({"index": False} if fmt == "csv" else {}))
    back = getattr(pd, f"read_{fmt}")(path)
    assert TOKEN.encode() not in path.read_bytes() and RO_TOKEN.encode() not in path.read_bytes()
    assert back["token"].tolist()[0] == "••••••••" and pd.isna(back["token"].tolist()[1])
    assert back["read_only_token"].tolist() == ["••••••••", "••••••••"]
    assert back["name"].tolist() == ["docs", "news"]
    assert back["max_daily_queries"].tolist() == frame["max_daily_queries"].tolist()
    assert indexes[0].token.get_secret_value() == TOKEN


# --- bytes and decoded JSON give the same models -------------------------------------------

DIRTY_POINTS = [
    {"x": "2026-03-28 13:00:00 +0100 CET", "y": 1},
    {"x": "2026-03-28 13:01:00.500 +0100 CET", "y": None},
    {"x": "2026-03-28 13:02:00.000000001 +0100 CET", "y": "12.5"},
    {"x": "2026-03-28 13:03:00 +0100 CET m=+0.000123", "y": 2.5},
    {"x": "2026-03-28 13:04:00 +0100 Europe/Berlin_Time", "y": 0},
    {"x": "2026-02-30 00:00:00 +0000 UTC", "y": 3},
    {"x": "2026-03-28 13:06:00 +0100 CET", "y": "abc"},
    {"y": 4},
    {"x": 1_700_000_000, "y": 5},
    7,
    {"y": 6, "x": "2026-03-28 13:09:00 +0100 CET"},
    {"x": "2026-03-28 13:10:00 +0100 C\\u0045T", "y": 10**400},
]


@pytest.mark.parametrize("separators", [(",", ":"), (", ", ": ")])
def test_bytes_and_decoded_json_give_equal_indexes_on_clean_and_dirty_data(separators):
    raw = [
        FULL,
        {**FULL, "id": "dirty", "throughput_vector": DIRTY_POINTS},
        {**FULL, "id": "empty", "throughput_vector": []},
        {**FULL, "id": "null", "throughput_vector": None},
        {**FULL, "id": "none"},
    ]
    body = json.dumps(raw, separators=separators).encode()
    from_bytes = IndexList.from_json_bytes(body)
    from_json = IndexList.from_json(json.loads(body))
    assert from_bytes == from_json
    for a, b in zip(from_bytes, from_json, strict=True):
        assert a.throughput.problems == b.throughput.problems
        assert dict(a.invalid) == dict(b.invalid) and dict(a.extra) == dict(b.extra)
    dirty = from_bytes[1]
    assert [p for p, _ in dirty.throughput.problems] == [5, 6, 7, 8, 9, 11]
    values = dirty.throughput.values
    assert values[:5].tolist()[0] == 1.0 and np.isnan(values[1]) and values[2] == 12.5
    assert dirty.throughput.nanos[3] == pd.Timestamp("2026-03-28 12:03:00", tz="UTC").value


def test_points_round_trip_to_the_texts_sent():
    raw = {**FULL, "throughput_vector": [p for p in DIRTY_POINTS if p != 7]}
    decoded = json.loads(json.dumps(raw))
    for index in (
        SearchIndex.from_dict(decoded),
        SearchIndex.from_json_bytes(json.dumps(raw).encode()),
    ):
        points = index.to_dict(include_secrets=True)["throughput_vector"]
        assert [p.get("x") for p in points] == [p.get("x") for p in decoded["throughput_vector"]]


def test_throughput_vector_names_a_point_it_cannot_represent():
    index = SearchIndex.from_dict(
        {"name": "docs", "throughput_vector": [{"x": "2026-01-01 00:00:00 +0000 UTC", "y": "abc"}]}
    )
    with (
        pytest.raises(
            InvalidResponseError,
            match=r"throughput_vector\[0\] of index 'docs' has a non-numeric y",
        ),
        pytest.deprecated_call(),
    ):
        _ = index.throughput_vector


def test_throughput_keeps_instants_to_the_nanosecond():
    index = SearchIndex.from_json_bytes(
        json.dumps(
            {"throughput_vector": [{"x": "2262-04-11 23:47:16.854775807 +0000 UTC", "y": 1}]}
        ).encode()
    )
    assert index.throughput.nanos.tolist() == [np.iinfo(np.int64).max]
    assert index.throughput.error("x") is None


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"<html>", r"the body is not JSON \(JSON is malformed: invalid character \(byte 0\)\)"),
        (b'[{"name": "a"}', "the body is not JSON"),
        (b'{"indexes": []}', "expected a JSON array, got a JSON object"),
        (b'"text"', "expected a JSON array, got a string"),
        (b"[1]", "at position 0, got a number"),
    ],
)
def test_list_bytes_that_are_not_an_array_of_objects_are_refused(body, message):
    with pytest.raises(InvalidResponseError, match=message):
        IndexList.from_json_bytes(body)


def test_create_bytes_that_are_not_an_object_are_refused():
    with pytest.raises(InvalidResponseError, match="expected a JSON object, got a JSON array"):
        SearchIndex.from_json_bytes(b"[]")
    with pytest.raises(InvalidResponseError, match="byte 1"):
        SearchIndex.from_json_bytes(b"{]")


def test_a_bad_timestamp_is_reported_by_the_frame_not_by_decoding():
    body = json.dumps(
        [{"name": "docs", "throughput_vector": [{"x": "2026-02-30 00:00:00 +0000 UTC", "y": 1}]}]
    ).encode()
    index = IndexList.from_json_bytes(body)[0]
    error = index.throughput.error(index.name)
    assert isinstance(error, TimestampError)
    assert str(error) == (
        "cannot parse timestamp '2026-02-30 00:00:00 +0000 UTC' at position 0 of index "
        "'docs': day out of range for the month"
    )


def test_indexes_survive_pickle_and_deepcopy():
    indexes = IndexList.from_json(
        [FULL, {**FULL, "id": "dirty", "throughput_vector": DIRTY_POINTS}]
    )
    for copied in (pickle.loads(pickle.dumps(indexes)), copy.deepcopy(indexes)):  # noqa: S301
        assert copied == indexes
        assert copied[1].throughput.problems == indexes[1].throughput.problems
        assert copied[0].token.get_secret_value() == TOKEN
        assert copied.to_dicts(include_secrets=True) == indexes.to_dicts(include_secrets=True)


@pytest.mark.parametrize(
    "dump",
    [
        lambda raw: json.dumps(raw, indent=2),
        lambda raw: "\n  " + json.dumps(raw, ensure_ascii=False) + "\n",
        lambda raw: json.dumps(raw).replace("[]", "[ ]"),
    ],
    ids=["pretty", "padded", "spaced-empty"],
)
def test_bytes_in_other_layouts_read_through_the_general_path_alike(dump):
    raw = [FULL, {**FULL, "id": "empty", "name": "ñame", "throughput_vector": []}]
    body = dump(raw).encode()
    assert IndexList.from_json_bytes(body) == IndexList.from_json(json.loads(body))
    assert IndexList.from_json_bytes(b" [] ") == IndexList()
