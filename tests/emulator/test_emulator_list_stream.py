"""The list answer is streamed: the same bytes as encoding the whole list at once, sent
chunked, built one index at a time, so its memory does not grow with the account."""

from __future__ import annotations

import base64
import json
import tracemalloc

import pytest
import requests
from werkzeug.test import EnvironBuilder

from searchkit.emulator import Emulator, data

from .conftest import NOW, USER

ZONES = ["UTC", "Asia/Kathmandu", "America/St_Johns"]
NAMES = ["docs", "café \u2013 ünïcode", "emoji 🦊", 'quote " and \\ backslash', "tab\u00a0nbsp"]


def whole_list_text(emulator: Emulator) -> bytes:
    """The answer as one json.dumps of the whole list would write it."""
    indexes = emulator.store.list_indexes(emulator.account)
    return json.dumps(indexes, ensure_ascii=False, separators=(",", ":")).encode()


def many_indexes(emu: Emulator) -> None:
    for n, name in enumerate(NAMES * 3):
        emu.store.create_index(emu.account, name=name, region="us-central1", type=data.TYPES[n % 3])


# One emulator for the module; its window crosses the day boundary of the per-day value blocks.
pytestmark = pytest.mark.emulator(
    shared=True,
    setup=many_indexes,
    users=[USER],
    seed=8,
    clock=NOW,
    zones=ZONES,
    window_minutes=1500,
)


def test_the_streamed_list_equals_json_dumps_of_the_whole_list(emulator):
    response = requests.get(f"{emulator.url}/v2/search", auth=USER, timeout=10)

    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    assert response.headers["Cache-Control"] == "no-store"
    assert response.content == whole_list_text(emulator)
    assert [index["name"] for index in response.json()] == NAMES * 3


def test_the_list_is_sent_chunked_without_a_content_length(emulator):
    with requests.get(f"{emulator.url}/v2/search", auth=USER, timeout=10, stream=True) as r:
        pieces = list(r.raw.stream(1 << 20, decode_content=True))

    assert r.headers["Transfer-Encoding"] == "chunked"
    assert "Content-Length" not in r.headers
    assert b"".join(pieces) == whole_list_text(emulator)


def test_an_empty_account_lists_an_empty_array():
    with Emulator(users=[USER], window_minutes=1) as emu:
        response = requests.get(f"{emu.url}/v2/search", auth=USER, timeout=5)

    assert response.status_code == 200
    assert response.content == b"[]"


def test_head_of_the_list_answers_without_a_body(emulator):
    response = requests.head(f"{emulator.url}/v2/search", auth=USER, timeout=5)

    assert response.status_code == 200
    assert response.content == b""


@pytest.mark.parametrize(
    ("zone", "window", "plan"),
    [("UTC", 1440, "payg"), ("Asia/Kathmandu", 3000, "free"), ("America/St_Johns", 7, "fixed")],
)
def test_throughput_json_is_the_json_of_throughput_vector(zone, window, plan):
    arguments = {"now": NOW.timestamp(), "zone": zone, "window_minutes": window, "plan": plan}

    text = data.throughput_json(77, **arguments)

    assert text == json.dumps(data.throughput_vector(77, **arguments), separators=(",", ":"))


def test_a_list_holds_a_small_fraction_of_its_body_in_memory():
    """Memory per list is bounded by one index, not by the account (issue 11.11)."""
    with Emulator(users=[USER], seed=4, clock=NOW, window_minutes=1440) as emu:
        emu.store.create_many(
            emu.account,
            [{"name": f"i{n}", "region": "eu-west-1", "type": "payg"} for n in range(120)],
        )
        environ = EnvironBuilder(
            path="/v2/search", headers={"Authorization": _basic(*USER)}
        ).get_environ()

        def list_once() -> int:
            statuses = []
            body = emu.app(environ, lambda status, headers: statuses.append(status))
            size = sum(len(piece) for piece in body)
            assert statuses == ["200 OK"]
            return size

        list_once()  # fills the per-minute caches, which every list shares
        tracemalloc.start()
        try:
            size = list_once()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()

    assert size > 8_000_000
    # Whole-body encoding held at least the body; streaming holds about one index.
    assert peak < size / 10


def _basic(username: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()
