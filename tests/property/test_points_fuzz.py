"""Reading a list from bytes in place equals reading it from decoded JSON, whatever the points."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchkit.errors import InvalidResponseError
from searchkit.frames.throughput_frames import throughput_frame
from searchkit.model.index import IndexList, SearchIndex
from tests.conftest import examples

SETTINGS = settings(
    max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def go_texts(draw):
    """Texts in Go's layout with every fraction width, odd zones and the monotonic suffix."""
    year = draw(st.integers(1970, 2100))
    month, day = draw(st.integers(1, 12)), draw(st.integers(1, 28))
    hour, minute, second = (
        draw(st.integers(0, 23)),
        draw(st.integers(0, 59)),
        draw(st.integers(0, 59)),
    )
    width = draw(st.integers(0, 9))
    fraction = (
        "." + "".join(draw(st.lists(st.sampled_from("0123456789"), min_size=width, max_size=width)))
        if width
        else ""
    )
    sign = draw(st.sampled_from("+-"))
    offset = f"{sign}{draw(st.integers(0, 14)):02d}{draw(st.sampled_from([0, 30, 45])):02d}"
    zone = draw(st.sampled_from(["UTC", "CET", "-03", "+0545", "Europe/Berlin", "ChST", "X"]))
    suffix = draw(st.sampled_from(["", "", " m=+0.000123"]))
    date = f"{year:04d}-{month:02d}-{day:02d}"
    return f"{date} {hour:02d}:{minute:02d}:{second:02d}{fraction} {offset} {zone}{suffix}"


xs = st.one_of(
    go_texts(),
    go_texts(),
    st.text(max_size=12),
    st.none(),
    st.integers(),
)
ys = st.one_of(
    st.none(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(min_value=2**63, max_value=10**30),
    st.sampled_from(["12.5", "abc", " 7 ", ""]),
    st.booleans(),
)


@st.composite
def points(draw):
    kind = draw(st.sampled_from(["xy", "xy", "xy", "yx", "x", "y", "extra", "other"]))
    x, y = draw(xs), draw(ys)
    if kind == "xy":
        return {"x": x, "y": y}
    if kind == "yx":
        return {"y": y, "x": x}
    if kind == "x":
        return {"x": x}
    if kind == "y":
        return {"y": y}
    if kind == "extra":
        return {"x": x, "y": y, "z": 1}
    return draw(
        st.one_of(
            st.integers(), st.text(max_size=3), st.none(), st.lists(st.integers(), max_size=2)
        )
    )


@SETTINGS
@given(
    vectors=st.lists(st.lists(points(), max_size=8), min_size=1, max_size=4),
    separators=st.sampled_from([(",", ":"), (", ", ": ")]),
    ascii_only=st.booleans(),
)
def test_bytes_and_decoded_json_give_equal_indexes(vectors, separators, ascii_only):
    raw = [
        {"id": f"id-{n}", "name": f"n{n}", "throughput_vector": vector}
        for n, vector in enumerate(vectors)
    ]
    body = json.dumps(raw, separators=separators, ensure_ascii=ascii_only).encode()
    from_bytes = IndexList.from_json_bytes(body)
    from_json = IndexList.from_json(json.loads(body))
    assert from_bytes == from_json
    for a, b in zip(from_bytes, from_json, strict=True):
        assert a.throughput.problems == b.throughput.problems
        assert a.to_dict() == b.to_dict()


@SETTINGS
@given(
    texts=st.lists(go_texts(), min_size=1, max_size=20),
    separators=st.sampled_from([(",", ":"), (", ", ": ")]),
)
def test_clean_points_read_in_place_round_trip_to_the_texts_sent(texts, separators):
    raw = [{"id": "a", "throughput_vector": [{"x": t, "y": i} for i, t in enumerate(texts)]}]
    index = IndexList.from_json_bytes(json.dumps(raw, separators=separators).encode())[0]
    assert [p["x"] for p in index.to_dict()["throughput_vector"]] == texts
    assert index.throughput.values.tolist() == list(range(len(texts)))


NOT_OBJECTS = ["", [], [["x", "2026-01-01 00:00:00 +0000 UTC"], ["y", 1]], 0, None, "ab"]


@pytest.mark.parametrize("point", NOT_OBJECTS, ids=repr)
@pytest.mark.parametrize("first_has_points", [True, False])
def test_a_point_that_is_no_object_is_kept_and_named_on_both_paths(point, first_has_points):
    # Arrow reads "" and lists of pairs as structs: neither path may take them for points.
    raw = [
        {
            "id": "a",
            "name": "docs",
            "throughput_vector": (
                [{"x": "1970-01-01 00:00:00 +0000 UTC", "y": None}] if first_has_points else []
            ),
        },
        {
            "id": "b",
            "name": "news",
            # Only such points: Arrow converts a batch of them without complaint.
            "throughput_vector": [point, point],
        },
    ]
    body = json.dumps(raw).encode()
    for indexes in (IndexList.from_json_bytes(body), IndexList.from_json(json.loads(body))):
        news = indexes["news"]
        assert news.to_dict()["throughput_vector"] == [point, point]
        assert news.throughput.problems == ((0, 0), (1, 0))
        with pytest.raises(
            InvalidResponseError, match=r"^throughput_vector\[0\] of index 'news' is not an object$"
        ):
            throughput_frame(indexes)
        frame = throughput_frame(indexes, errors="coerce", names="news")
        assert frame["time"].isna().tolist() == [True, True]
        assert [math.isnan(v) for v in frame["value"].tolist()] == [True, True]


@pytest.mark.parametrize("y", [True, False])
@pytest.mark.parametrize("first_has_points", [True, False])
def test_a_boolean_y_is_no_number_on_both_paths(y, first_has_points):
    # Arrow reads a boolean as 1.0 or 0.0: neither path may take it for a value.
    first = [{"x": "1970-01-01 00:00:00 +0000 UTC", "y": 2**63}] if first_has_points else []
    raw = [
        {"id": "a", "name": "docs", "throughput_vector": first},
        {"id": "b", "name": "news", "throughput_vector": [{"x": None, "y": y}]},
    ]
    body = json.dumps(raw).encode()
    for indexes in (IndexList.from_json_bytes(body), IndexList.from_json(json.loads(body))):
        news = indexes["news"]
        assert news.to_dict()["throughput_vector"] == [{"x": None, "y": y}]
        assert news.throughput.problems == ((0, 4),)
        assert math.isnan(news.throughput.values[0])
        with pytest.raises(
            InvalidResponseError,
            match=rf"^throughput_vector\[0\] of index 'news' has a non-numeric y: {y}$",
        ):
            throughput_frame(indexes)


@pytest.mark.parametrize("separators", [(",", ":"), (", ", ": ")])
def test_an_array_of_odd_points_at_the_end_of_the_body_is_read_not_crashed_on(separators):
    # Six quotes look like one point to the in-place reader; the last "text" ends within
    # the body's last 8 bytes, where no 8-byte window starts.
    raw = [{"id": "id-0", "name": "n0", "throughput_vector": [{"y": None}, "", ""]}]
    body = json.dumps(raw, separators=separators).encode()
    for index in (
        IndexList.from_json_bytes(body)[0],
        SearchIndex.from_json_bytes(json.dumps(raw[0], separators=separators).encode()),
        IndexList.from_json(raw)[0],
    ):
        assert index.to_dict()["throughput_vector"] == [{"x": None, "y": None}, "", ""]
        assert index.throughput.problems == ((0, 1), (1, 0), (2, 0))
