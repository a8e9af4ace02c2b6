"""Create and list over real HTTP: every field of the spec, typed as the spec says."""

from __future__ import annotations

import json
import re
import uuid

import requests

from searchkit.emulator import Emulator
from searchkit.emulator.data import PRESETS

from ..spec import LIMIT_FIELDS, SPEC_FIELDS
from .conftest import NOW_EPOCH


def create(http: requests.Session, api: str, **fields: object) -> requests.Response:
    body = {"name": "docs", "region": "eu-west-1", "type": "payg", **fields}
    return http.post(api, json=body, timeout=5)


def test_create_returns_every_spec_field_typed_as_specified(http, api):
    response = create(http, api, name="docs", region="us-central1", type="free")

    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    index = response.json()
    assert set(index) == SPEC_FIELDS
    assert uuid.UUID(index["id"]).version == 4
    assert str(uuid.UUID(index["id"])) == index["id"]
    assert isinstance(index["customer_id"], str) and index["customer_id"]
    assert index["name"] == "docs"
    assert index["region"] == "us-central1"
    assert index["type"] == "free"
    assert re.fullmatch(r"[a-z]+-[a-z]+-\d{5}-us1", index["endpoint"])
    assert index["partner_email"] == ""
    assert re.fullmatch(r"[A-Za-z0-9_-]{64}", index["token"])
    assert re.fullmatch(r"[A-Za-z0-9_-]{64}", index["read_only_token"])
    assert index["token"] != index["read_only_token"]
    for field in LIMIT_FIELDS:
        assert type(index[field]) is int, field
    assert index["creation_time"] == NOW_EPOCH
    assert index["input_enrichment_enabled"] is True
    points = index["throughput_vector"]
    assert len(points) == 60
    for point in points:
        assert set(point) == {"x", "y"}
        assert isinstance(point["x"], str)
        assert type(point["y"]) in (int, float)
        assert point["y"] >= 0


def test_listed_index_equals_the_created_one(http, api):
    created = create(http, api).json()

    listed = http.get(api, timeout=5).json()

    assert listed == [created]


def test_limits_come_from_the_preset_of_the_type(http, api):
    for plan in ("free", "payg"):
        index = create(http, api, type=plan).json()
        assert {field: index[field] for field in LIMIT_FIELDS} == dict(PRESETS[plan])


def test_list_is_ordered_by_creation_and_ids_are_unique(http, api):
    names = [f"index-{n}" for n in range(5)]
    ids = [create(http, api, name=name).json()["id"] for name in names]

    listed = http.get(api, timeout=5).json()

    assert [index["name"] for index in listed] == names
    assert [index["id"] for index in listed] == ids
    assert len(set(ids)) == 5


def test_empty_account_lists_an_empty_array(http, api):
    response = http.get(api, timeout=5)

    assert response.status_code == 200
    assert response.json() == []


def test_indexes_are_private_to_their_account(http, api, other_user):
    create(http, api)

    listed = requests.get(api, auth=other_user, timeout=5).json()

    assert listed == []


def test_read_only_account_can_list(api, read_only_user):
    response = requests.get(api, auth=read_only_user, timeout=5)

    assert response.status_code == 200
    assert response.json() == []


def test_unknown_request_fields_are_ignored(http, api):
    response = create(http, api, name="extra", colour="blue", partner_email="x@example.com")

    assert response.status_code == 200
    assert response.json()["name"] == "extra"
    assert response.json()["partner_email"] == ""
    assert "colour" not in response.json()


def test_name_of_128_characters_is_accepted(http, api):
    response = create(http, api, name="n" * 128)

    assert response.status_code == 200
    assert response.json()["name"] == "n" * 128


def test_name_is_stored_as_given(http, api):
    name = "  Ünïcode docs ✓  "
    assert create(http, api, name=name).json()["name"] == name
    assert http.get(api, timeout=5).json()[0]["name"] == name


def test_fixed_is_created_when_allowed(emulator, http, api):
    emulator.allow_fixed = True

    index = create(http, api, type="fixed").json()

    assert index["type"] == "fixed"
    assert {field: index[field] for field in LIMIT_FIELDS} == dict(PRESETS["fixed"])


def test_charset_parameter_is_accepted(http, api):
    response = http.post(
        api,
        data=b'{"name": "cs", "region": "eu-west-1", "type": "free"}',
        headers={"Content-Type": "application/json; charset=UTF-8"},
        timeout=5,
    )

    assert response.status_code == 200


def test_demo_set_holds_six_realistic_indexes():
    with Emulator(demo=True, seed=3, clock=NOW_EPOCH, window_minutes=30) as emu:
        listed = requests.get(
            f"{emu.url}/v2/search", auth=(emu.username, emu.password), timeout=5
        ).json()

    assert [index["name"] for index in listed] == [
        "docs-search",
        "product-catalog",
        "support-tickets",
        "news-archive",
        "code-snippets",
        "legal-contracts",
    ]
    assert {index["region"] for index in listed} == {"eu-west-1", "us-central1"}
    assert sorted(index["type"] for index in listed).count("fixed") == 1
    assert {index["type"] for index in listed} == {"free", "payg", "fixed"}
    assert all(index["creation_time"] < NOW_EPOCH for index in listed)
    zone_labels = {index["throughput_vector"][0]["x"].rsplit(" ", 1)[1] for index in listed}
    assert len(zone_labels) >= 4


def test_body_near_the_limit_sent_in_chunks_is_read_whole(http, api):
    body = json.dumps({"name": "big", "region": "eu-west-1", "type": "free", "pad": "y" * 65_000})
    payload = body.encode()
    assert len(payload) <= 64 * 1024

    def chunks():
        for start in range(0, len(payload), 1000):
            yield payload[start : start + 1000]

    response = http.post(
        api, data=chunks(), headers={"Content-Type": "application/json"}, timeout=5
    )

    assert response.status_code == 200
    assert response.json()["name"] == "big"
