"""HTML and text rendering of indexes: readable, escaped, never raising, never a secret."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from searchkit.frames.limits_frames import limits_frame
from searchkit.model.index import IndexList, SearchIndex
from searchkit.model.limits import LIMIT_FIELDS, LIMIT_INFO
from searchkit.model.secret import MASK
from searchkit.render.formats import KEY_LIMITS, format_bytes, format_limit
from searchkit.render.html import (
    index_card_html,
    index_list_html,
    index_list_view_html,
    message_html,
)
from searchkit.render.tables import display_limits_frame, limits_summary, limits_table
from tests.analytics_data import realistic_indexes
from tests.index_json import index_json

TOKEN = "tok_" + "A" * 60
READ_ONLY_TOKEN = "rot_" + "B" * 60

FULL = index_json(
    "docs",
    id="7f1c0a52-1111-4222-8333-444455556666",
    token=TOKEN,
    read_only_token=READ_ONLY_TOKEN,
    max_vector_count=2_000_000_000,
    max_monthly_bandwidth=50_000_000_000,
    creation_time=1_763_640_000,
    throughput_vector=[{"x": "2026-11-20 12:00:00 +0000 UTC", "y": 1.5}],
)


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
        "50 GB",
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
    assert indexes._repr_html_() == index_list_view_html(indexes)
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


# --- display text --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "field", "text"),
    [
        (math.inf, None, "unlimited"),
        (-1, None, "unlimited"),
        (math.nan, None, "—"),
        (None, None, "—"),
        (0.0, None, "0"),
        (1234567.0, None, "1,234,567"),
        (1_234_567, None, "1,234,567"),
        (np.float64(10_000), None, "10,000"),
        (np.int64(5), None, "5"),
        (2.5, None, "2.5"),
        (-math.inf, None, "-inf"),
        (50_000_000_000, "max_monthly_bandwidth", "50 GB"),
        (999, "max_monthly_bandwidth", "999 B"),
        (2e15, "max_monthly_bandwidth", "2 PB"),
        (-1, "max_monthly_bandwidth", "unlimited"),
        ("a<b", None, "a<b"),
        (True, None, "True"),
    ],
)
def test_format_limit(value, field, text):
    assert format_limit(value, field) == text


def test_display_limits_frame_formats_only_the_limits_and_leaves_the_frame_alone():
    frame = limits_frame(realistic_indexes(minutes=2))
    shown = display_limits_frame(frame)
    assert shown["max_daily_queries"].tolist() == [
        "unlimited",
        "50,000,000",
        "10,000",
        "0",
        "—",
    ]
    assert shown["name"].tolist() == frame["name"].tolist()
    assert frame["max_daily_queries"].dtype == np.float64


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0 B"),
        (999, "999 B"),
        (1000, "1 kB"),
        (1_500_000, "1.5 MB"),
        (5e10, "50 GB"),
        (999_960, "1 MB"),
        (2.5e18, "2,500 PB"),
    ],
)
def test_bytes_are_written_one_way(value, text):
    assert format_bytes(value) == text


def test_limits_table_puts_the_name_first_keyed_by_index_id_with_display_text():
    frame = limits_frame(realistic_indexes(minutes=2))
    table = limits_table(frame)
    assert list(table.columns[:3]) == ["name", "type", "region"]
    assert list(table.columns[3:]) == [LIMIT_INFO[f].label for f in LIMIT_FIELDS]
    assert table.index.name == "index_id"
    assert table.index.tolist() == frame.index.tolist()
    assert table["queries / day"].tolist() == ["unlimited", "50,000,000", "10,000", "0", "—"]
    assert table["bandwidth / month"].tolist()[:3] == ["unlimited", "200 GB", "50 GB"]
    # The numeric frame is left alone.
    assert frame["max_daily_queries"].dtype == np.float64


def test_limits_table_of_indexes_equals_that_of_their_frame():
    raw = realistic_indexes(minutes=2)
    pd.testing.assert_frame_equal(limits_table(raw), limits_table(limits_frame(raw)))


def test_limits_summary_counts_unlimited_and_describes_the_finite_values_without_warnings():
    raw = realistic_indexes(minutes=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        summary = limits_summary(raw, numeric=True)
    row = summary.loc["max_daily_queries"]
    # unlimited, 50,000,000, 10,000, 0, absent
    assert (row["indexes"], row["unlimited"], row["missing"], row["limited"]) == (5, 1, 1, 3)
    assert (row["min"], row["median"], row["max"]) == (0, 10_000, 50_000_000)
    assert row["mean"] == round((0 + 10_000 + 50_000_000) / 3)
    assert row["label"] == "queries / day"
    assert summary.index.tolist() == list(LIMIT_FIELDS)


def test_limits_summary_of_an_all_unlimited_limit_is_nan_statistics_and_a_count():
    raw = [{"id": "a", "max_daily_updates": -1}, {"id": "b", "max_daily_updates": -1}]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        row = limits_summary(raw, numeric=True).loc["max_daily_updates"]
    assert row["unlimited"] == 2 and row["limited"] == 0
    assert row["median"] is pd.NA and row["mean"] is pd.NA
    shown = limits_summary(raw).loc["max_daily_updates"]
    assert (shown["min"], shown["median"], shown["mean"], shown["max"]) == ("—",) * 4


def test_limits_summary_reads_as_limits_table_does_separators_and_byte_units():
    raw = [
        {"id": "a", "max_daily_queries": 1_050_000_000, "max_monthly_bandwidth": 50 * 10**9},
        {"id": "b", "max_daily_queries": 50_000_000, "max_monthly_bandwidth": -1},
    ]
    summary = limits_summary(raw)
    queries = summary.loc["max_daily_queries"]
    assert (queries["min"], queries["median"], queries["mean"], queries["max"]) == (
        "50,000,000",
        "550,000,000",
        "550,000,000",
        "1,050,000,000",
    )
    bandwidth = summary.loc["max_monthly_bandwidth"]
    assert bandwidth["max"] == limits_table(raw).iloc[0]["bandwidth / month"]
    assert (bandwidth["unlimited"], bandwidth["limited"]) == (1, 1)
    assert "1050000000" not in summary.to_string()


def test_displays_use_inline_styles_not_style_blocks():
    index = SearchIndex.from_dict(FULL)
    for markup in (
        index_card_html(index),
        index_list_html([index]),
        message_html("hello", "error"),
    ):
        assert "<style" not in markup
        assert 'style="' in markup
    table = index_list_html([index])
    assert "white-space:nowrap" in table
    assert 'class="sk-num sk-unl" style="' in table


def test_a_long_list_shows_its_first_rows_and_says_how_many_there_are():
    items = [
        SearchIndex.from_dict({"id": f"id-{n:04d}", "name": f"n-{n:04d}"}) for n in range(1000)
    ]
    table = index_list_html(items)
    assert table.count("<tr>") == 1 + 60  # the head and the first 60 rows
    assert "1,000 indexes (the first 60 shown)" in table
    assert "n-0059" in table and "n-0060" not in table
    assert index_list_html(items, max_rows=None).count("<tr>") == 1001


def test_an_index_list_shows_eight_columns_and_the_rest_on_demand():
    indexes = IndexList.from_json(realistic_indexes(minutes=2))
    shown = indexes._repr_html_()
    compact, _, details = shown.partition('<details class="sk-details"')
    heads = re.findall(r"<th[^>]*>([^<]*)</th>", compact)
    assert heads == [
        "name", "id", "type", "region",
        "queries / day", "updates / day", "queries / s", "writes / s",
    ]  # fmt: skip
    assert "every limit, endpoint and creation time</summary>" in details
    assert len(re.findall(r"<th\b[^>]*>", details)) == 15
    assert index_list_view_html([]) == index_list_html([], limits=KEY_LIMITS, details=False)
