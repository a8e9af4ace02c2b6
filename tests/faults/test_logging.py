"""Every call is logged at DEBUG with method, path, status and elapsed time, nothing more."""

from __future__ import annotations

import logging
import re

import pytest

import searchkit as sk

from .conftest import PASSWORD, READ_ONLY_TOKEN, SHORT_READ, TOKEN, harness_client, index_json
from .harness import hang, reply


def searchkit_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "searchkit"]


def test_a_successful_list_is_one_debug_line_with_status_and_elapsed(server, client, caplog):
    server.script("GET", then=reply(200, [index_json("docs")]))
    client.list_indexes()
    (record,) = [r for r in caplog.records if r.name == "searchkit"]
    assert record.levelno == logging.DEBUG
    assert re.fullmatch(r"GET /v2/search -> 200 in \d+\.\d{3}s", record.getMessage())


def test_a_create_logs_its_list_and_its_post_but_no_body_or_header(server, client, caplog):
    created = index_json("secret-project-name")
    server.script("GET", reply(200, []), then=reply(200, [created]))
    server.script("POST", then=reply(200, created))
    client.create_index("secret-project-name", region="eu-west-1", type="payg")
    lines = searchkit_lines(caplog)
    assert [line.split(" in ")[0] for line in lines] == [
        "GET /v2/search -> 200",
        "POST /v2/search -> 200",
        "GET /v2/search -> 200",  # the check that no other process created the name
    ]
    everything = caplog.text
    for absent in (
        "secret-project-name",
        "eu-west-1",
        "Authorization",
        "Basic",
        TOKEN,
        READ_ONLY_TOKEN,
        PASSWORD,
    ):
        assert absent not in everything


def test_an_error_status_is_logged_with_its_status(server, client, caplog):
    server.script("GET", then=reply(404, {"error": f"nothing here for token={TOKEN}"}))
    with pytest.raises(sk.NotFoundError):
        client.list_indexes()
    assert [line.split(" in ")[0] for line in searchkit_lines(caplog)] == ["GET /v2/search -> 404"]


def test_a_transport_failure_is_logged_with_its_kind_and_elapsed(server, caplog):
    server.script("GET", then=hang())
    with pytest.raises(sk.TransportError):
        harness_client(server.url, timeout=SHORT_READ).list_indexes()
    (line,) = searchkit_lines(caplog)
    assert re.fullmatch(r"GET /v2/search -> failed \(ConnectionError\) in \d+\.\d{3}s", line)
