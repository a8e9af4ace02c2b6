"""The emulator's OpenAPI document is a data file: it must say what the emulator does."""

from __future__ import annotations

from searchkit.emulator import data
from searchkit.emulator.app import openapi_document


def test_the_document_names_the_emulators_regions_plans_and_limits():
    document = openapi_document()
    schemas = document["components"]["schemas"]
    index = schemas["SearchIndex"]["properties"]
    create = schemas["CreateSearchIndex"]["properties"]
    assert index["region"]["enum"] == list(data.REGIONS)
    assert index["type"]["enum"] == list(data.TYPES)
    assert create["region"]["enum"] == list(data.REGIONS)
    assert create["type"]["enum"] == list(data.TYPES)
    assert [f for f in index if f.startswith("max_")] == list(data.LIMIT_FIELDS)


def test_servers_is_listed_only_when_asked_and_each_call_gets_its_own_copy():
    assert "servers" not in openapi_document()
    served = openapi_document("http://127.0.0.1:8787")
    assert served["servers"] == [{"url": "http://127.0.0.1:8787"}]
    served["info"]["title"] = "changed"
    assert openapi_document()["info"]["title"] != "changed"
