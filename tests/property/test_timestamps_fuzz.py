"""parse_timestamps under arbitrary input: a UTC index or TimestampError, nothing else."""

from __future__ import annotations

import calendar

import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from searchkit.errors import TimestampError
from searchkit.model.gotime import parse_timestamps
from tests.conftest import examples

SETTINGS = settings(
    max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

NS = 1_000_000_000
# datetime64[ns] covers 1677-09-21 .. 2262-04-11; stay a day inside for any offset.
FIRST_YEAR, LAST_YEAR = 1678, 2261

zone_names = st.one_of(
    st.sampled_from(["UTC", "CET", "CEST", "EST", "IST", "NZDT", "WITA", "ChST"]),
    st.from_regex(r"[+-][0-9]{2}([0-9]{2})?", fullmatch=True),
    st.text(
        st.characters(blacklist_categories=["Zs", "Cc", "Cs", "Zl", "Zp"]), min_size=1, max_size=12
    ),
)


@st.composite
def go_times(draw):
    """A Go ``time.Time.String()`` text and the exact UTC nanoseconds it denotes."""
    year = draw(st.integers(FIRST_YEAR, LAST_YEAR))
    month = draw(st.integers(1, 12))
    day = draw(st.integers(1, calendar.monthrange(year, month)[1]))
    hour, minute, second = (
        draw(st.integers(0, 23)),
        draw(st.integers(0, 59)),
        draw(st.integers(0, 59)),
    )
    nanos = draw(st.integers(0, NS - 1))
    offset_minutes = draw(st.integers(-(14 * 60), 14 * 60))
    zone = draw(zone_names)
    monotonic = draw(
        st.one_of(st.just(""), st.from_regex(r" m=[+-][0-9]{1,6}\.[0-9]{9}", fullmatch=True))
    )
    fraction = f"{nanos:09d}".rstrip("0")
    sign = "-" if offset_minutes < 0 else "+"
    hours, minutes = divmod(abs(offset_minutes), 60)
    text = (
        f"{year:04d}-{month:02d}-{day:02d} {hour:02d}:{minute:02d}:{second:02d}"
        f"{'.' + fraction if fraction else ''} {sign}{hours:02d}{minutes:02d} {zone}{monotonic}"
    )
    wall = calendar.timegm((year, month, day, hour, minute, second))
    return text, (wall - offset_minutes * 60) * NS + nanos


@SETTINGS
@given(st.lists(go_times(), max_size=20))
def test_go_texts_parse_to_the_exact_utc_instant(cases):
    texts = [text for text, _ in cases]
    parsed = parse_timestamps(texts)
    assert str(parsed.dtype) == "datetime64[ns, UTC]"
    assert parsed.asi8.tolist() == [expected for _, expected in cases]


@SETTINGS
@given(
    st.lists(
        st.one_of(st.none(), st.text(max_size=60), go_times().map(lambda c: c[0])), max_size=20
    )
)
@example(["2026-02-30 00:00:00 +0000 UTC"])
@example(["2026-01-01 24:00:00 +0000 UTC"])
@example(["2026-01-01 00:00:00 +2400 X"])
@example(["9999-01-01 00:00:00 +0000 UTC"])
@example(["2026-01-01 00:00:00.1234567890 +0000 UTC"])
@example(["\uff12\uff10\uff12\uff16-01-01 00:00:00 +0000 UTC"])
@example(["2026-01-01 00:00:00 +0000 \x0bUTC"])
def test_any_texts_give_an_index_of_the_same_length_or_timestamp_error(texts):
    try:
        parsed = parse_timestamps(texts)
    except TimestampError as exc:
        assert str(exc).startswith("cannot parse timestamp ")
        assert "at position " in str(exc)
    else:
        assert len(parsed) == len(texts)
        assert str(parsed.dtype) == "datetime64[ns, UTC]"


@SETTINGS
@given(
    st.lists(
        st.one_of(st.none(), st.text(max_size=60), go_times().map(lambda c: c[0])), max_size=20
    )
)
def test_coerce_never_raises_and_blanks_exactly_the_bad_texts(texts):
    coerced = parse_timestamps(texts, errors="coerce")
    assert len(coerced) == len(texts)
    for text, value in zip(texts, coerced, strict=True):
        if text is None:
            assert value is pd.NaT
            continue
        try:
            alone = parse_timestamps([text])[0]
        except TimestampError:
            assert value is pd.NaT
        else:
            assert value == alone


@SETTINGS
@given(
    st.lists(
        st.one_of(st.integers(), st.floats(allow_nan=False), st.binary(max_size=8), st.booleans()),
        min_size=1,
        max_size=5,
    )
)
def test_values_that_are_not_text_are_timestamp_error_or_nat(values):
    with pytest.raises(TimestampError, match="at position 0"):
        parse_timestamps(values)
    assert parse_timestamps(values, errors="coerce").isna().all()
