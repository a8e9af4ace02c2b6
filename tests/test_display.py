"""HTML and text rendering of indexes: readable, escaped, never raising, never a secret."""

from __future__ import annotations

import pytest

from searchkit.display import (
    MASK,
    index_card_html,
    index_list_html,
    message_html,
)
from searchkit.models import LIMIT_FIELDS, IndexList, SearchIndex

TOKEN = "tok_" + "A" * 60
READ_ONLY_TOKEN = "rot_" + "B" * 60

FULL = {
    "customer_id": "cust-1",
    "id": "7f1c0a52-1111-4222-8333-444455556666",
    "name": "docs",
    "endpoint": "proud-otter-12345-eu1",
    "type": "payg",
    "region": "eu-west-1",
    "partner_email": "",
    "token": TOKEN,
    "read_only_token": READ_ONLY_TOKEN,
    "max_vector_count": 2_000_000_000,
    "max_monthly_reranks": -1,
    "max_daily_updates": -1,
    "max_daily_queries": 10_000,
    "max_monthly_bandwidth": 50_000_000_000,
    "max_writes_per_second": 1_000,
    "max_query_per_second": 1_000,
    "max_reads_per_request": 1_000,
    "max_writes_per_request": 1_000,
    "creation_time": 1_763_640_000,
    "input_enrichment_enabled": True,
    "throughput_vector": [{"x": "2026-11-20 12:00:00 +0000 UTC", "y": 1.5}],
}


def test_card_shows_name_plan_region_endpoint_created_and_limits():
    card = index_card_html(SearchIndex.from_dict(FULL))
    for text in (
        "docs",
        "payg plan",
        "eu-west-1",
        "proud-otter-12345-eu1",
        "2025-11-20 12:00 UTC",
        "1 throughput points",
        "2,000,000,000",
        "10,000",
        "50.0 GB",
        "input enrichment",
    ):
        assert text in card
    assert card.count("unlimited") == 2


def test_card_masks_both_tokens():
    card = index_card_html(SearchIndex.from_dict(FULL))
    assert TOKEN not in card and READ_ONLY_TOKEN not in card
    assert card.count(MASK) == 2


def test_card_shows_a_dash_for_absent_tokens_and_limits():
    card = index_card_html(SearchIndex.from_dict({"name": "bare"}))
    assert MASK not in card
    assert card.count("—") >= 2 + len(LIMIT_FIELDS)


def test_card_escapes_text_from_the_service():
    odd = dict(
        FULL,
        name="<b>x</b>",
        endpoint="<img src=x>",
        partner_email="a&b@example.com",
        region="mars-<1>",
        type="paid",
    )
    card = index_card_html(SearchIndex.from_dict(odd))
    assert "<b>x</b>" not in card and "&lt;b&gt;x&lt;/b&gt;" in card
    assert "<img" not in card
    assert "a&amp;b@example.com" in card
    assert "mars-&lt;1&gt;" in card and "paid plan" in card


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"creation_time": 10**18},
        {"creation_time": -(10**18)},
        {"name": "", "type": "", "region": ""},
        {"throughput_vector": [1, 2, "x"]},
        {"max_vector_count": 10**30},
    ],
)
def test_card_and_table_never_raise_on_odd_data(data):
    index = SearchIndex.from_dict(data)
    assert "sk-card" in index_card_html(index)
    assert "sk-list" in index_list_html([index])


def test_card_of_something_that_is_not_an_index_is_a_short_note():
    assert index_card_html(object()).startswith("<pre>SearchIndex (could not render")
    assert index_list_html(5).startswith("<pre>IndexList (could not render")


def test_table_has_one_row_per_index_and_a_count():
    indexes = IndexList.from_json([FULL, dict(FULL, id="2", name="news", type="free")])
    table = index_list_html(indexes)
    assert "2 indexes" in table
    assert table.count("<tr>") == 3  # the header and two rows
    assert "docs" in table and "news" in table
    assert TOKEN not in table and READ_ONLY_TOKEN not in table


def test_table_of_no_indexes_says_so():
    table = index_list_html(IndexList())
    assert "0 indexes" in table and "no indexes yet" in table


def test_table_of_one_index_says_index():
    assert "1 index<" in index_list_html(IndexList.from_json([FULL]))


def test_reprs_for_notebooks_delegate_to_the_display_module():
    indexes = IndexList.from_json([FULL])
    assert indexes._repr_html_() == index_list_html(indexes)
    assert indexes[0]._repr_html_() == index_card_html(indexes[0])


def test_real_emulator_indexes_render_without_their_tokens(client):
    created = client.create_index("docs", region="eu-west-1", type="payg")
    indexes = client.list_indexes()
    shown = index_card_html(created) + index_list_html(indexes)
    for index in indexes:
        tokens = (index.token.get_secret_value(), index.read_only_token.get_secret_value())
        assert all(token not in shown for token in tokens)


@pytest.mark.parametrize("kind", ["info", "success", "error"])
def test_message_is_escaped_and_classed_by_kind(kind):
    html = message_html("a <b> & c", kind)
    assert f'class="sk-message sk-{kind}"' in html
    assert "a &lt;b&gt; &amp; c" in html


def test_message_of_unknown_kind_is_info():
    assert 'class="sk-message sk-info"' in message_html("x", "shout")
