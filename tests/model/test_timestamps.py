"""parse_timestamps: Go time texts -> exact UTC instants, checked against the stdlib."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchkit.errors import SearchKitError, TimestampError, ValidationError
from searchkit.model.gotime import parse_timestamps
from tests.analytics_data import ZONES, epoch_nanos, go_format
from tests.conftest import examples

UTC = dt.timezone.utc

# Instants around DST changes (Europe, North America, southern hemisphere) and plain days.
INSTANTS = (
    dt.datetime(2026, 1, 15, 12, 34, 56, tzinfo=UTC),
    dt.datetime(2026, 3, 29, 0, 59, 59, tzinfo=UTC),
    dt.datetime(2026, 3, 29, 1, 0, 0, tzinfo=UTC),
    dt.datetime(2026, 3, 8, 10, 30, 0, tzinfo=UTC),
    dt.datetime(2026, 4, 5, 2, 30, 0, tzinfo=UTC),
    dt.datetime(2026, 10, 25, 0, 30, 0, tzinfo=UTC),
    dt.datetime(2024, 2, 29, 23, 59, 59, tzinfo=UTC),
    dt.datetime(1999, 12, 31, 23, 59, 59, tzinfo=UTC),
)
# A nanosecond value for each fraction width 0..9 that Go would print with that width.
FRACTIONS = tuple(int("987654321"[:width].ljust(9, "0") or "0") for width in range(10))


def nanos(index: pd.DatetimeIndex) -> list[int]:
    return index.asi8.tolist()


def test_every_zone_and_fraction_width_parses_to_the_stdlib_instant():
    texts, expected = [], []
    for zone in ZONES:
        tz = zoneinfo.ZoneInfo(zone)
        for instant in INSTANTS:
            for fraction in FRACTIONS:
                texts.append(go_format(instant.astimezone(tz), fraction))
                expected.append(epoch_nanos(instant, fraction))
    # The inputs really do cover every width, numeric zone names and odd offsets.
    widths = {len(t.split(" ")[1].partition(".")[2]) for t in texts}
    assert widths == set(range(10))
    assert any(t.endswith(" +0545 +0545") for t in texts)
    assert any(" -0330 NST" in t for t in texts) and any(" -0230 NDT" in t for t in texts)
    assert any(t.endswith(" -0300 -03") for t in texts)
    assert any(" +1345 +1345" in t for t in texts)

    assert nanos(parse_timestamps(texts)) == expected


@pytest.mark.parametrize(
    ("text", "iso"),
    [
        ("2026-03-28 17:45:00 +0545 +0545", "2026-03-28T12:00:00"),
        ("2026-03-28 08:30:00.5 -0330 NST", "2026-03-28T12:00:00.5"),
        ("2026-07-01 09:00:00.000000001 -0300 -03", "2026-07-01T12:00:00.000000001"),
        ("2026-07-02 00:45:00 +1245 +1245", "2026-07-01T12:00:00"),
        ("2026-07-01 14:00:00.123 +0200 CEST", "2026-07-01T12:00:00.123"),
        ("2026-01-01 00:00:00 +0000 UTC", "2026-01-01T00:00:00"),
        ("2026-01-01 05:30:00 +0530 IST", "2026-01-01T00:00:00"),
        ("2025-12-31 14:30:00 -0930 -0930", "2026-01-01T00:00:00"),
    ],
)
def test_offset_decides_the_instant(text, iso):
    assert parse_timestamps([text])[0] == pd.Timestamp(iso, tz="UTC")


def test_zone_name_is_only_a_label():
    # The offset says +0100 although the label says UTC: the offset wins.
    parsed = parse_timestamps(["2026-01-01 00:00:00 +0100 UTC"])
    assert parsed[0] == pd.Timestamp("2025-12-31T23:00:00", tz="UTC")


@pytest.mark.parametrize("suffix", [" m=+0.000123456", " m=-1.5", " m=+12345.000000001", " m=+3"])
def test_monotonic_suffix_is_ignored(suffix):
    text = "2026-03-28 12:00:00.25 +0000 UTC"
    assert parse_timestamps([text + suffix])[0] == parse_timestamps([text])[0]


@pytest.mark.parametrize("zone", ["ChST", "AEST", "WITA", "ABCDEFG", "+03", "-0330", "GMT+1"])
def test_any_zone_label_is_accepted(zone):
    parsed = parse_timestamps([f"2026-03-28 13:00:00 +0100 {zone}"])
    assert parsed[0] == pd.Timestamp("2026-03-28T12:00:00", tz="UTC")


def test_mixed_layouts_keep_their_order():
    texts = [
        "2026-03-28 12:00:00 +0000 UTC",
        "2026-03-28 13:00:00.1 +0100 CET m=+0.000000001",
        "2026-03-28 17:45:00.123456789 +0545 +0545",
        "2026-03-28 09:00:00.12 -0300 -03",
        "2026-03-28 12:00:00.000001 +0000 Coordinated_Universal_Time",
    ]
    expected = [0, 100_000_000, 123_456_789, 120_000_000, 1_000]
    base = epoch_nanos(dt.datetime(2026, 3, 28, 12, tzinfo=UTC))
    assert nanos(parse_timestamps(texts)) == [base + e for e in expected]


def test_result_is_utc_nanoseconds():
    parsed = parse_timestamps(["2026-03-28 12:00:00 +0000 UTC"])
    assert isinstance(parsed, pd.DatetimeIndex)
    assert parsed.dtype == pd.DatetimeTZDtype("ns", "UTC")


def test_limits_of_nanosecond_timestamps_are_exact():
    parsed = parse_timestamps(
        ["1677-09-21 00:12:43.145224193 +0000 UTC", "2262-04-11 23:47:16.854775807 +0000 UTC"]
    )
    assert nanos(parsed) == [np.iinfo(np.int64).min + 1, np.iinfo(np.int64).max]


@pytest.mark.parametrize(
    "text",
    [
        "1677-09-21 00:12:43.145224192 +0000 UTC",
        "2262-04-11 23:47:16.854775808 +0000 UTC",
        "0001-01-01 00:00:00 +0000 UTC",
        "9999-12-31 23:59:59 +0000 UTC",
    ],
)
def test_instants_beyond_nanosecond_range_are_refused(text):
    with pytest.raises(TimestampError, match="outside the range"):
        parse_timestamps([text])


def test_invalid_text_raises_naming_the_text_and_position():
    texts = ["2026-03-28 12:00:00 +0000 UTC"] * 3 + ["yesterday at noon"]
    with pytest.raises(TimestampError) as info:
        parse_timestamps(texts)
    message = str(info.value)
    assert "'yesterday at noon'" in message
    assert "position 3" in message
    assert isinstance(info.value, ValueError) and isinstance(info.value, SearchKitError)


def test_long_invalid_text_is_truncated_in_the_message():
    with pytest.raises(TimestampError) as info:
        parse_timestamps(["x" * 500])
    assert "…" in str(info.value)
    assert len(str(info.value)) < 200


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("2026-02-29 12:00:00 +0000 UTC", "day out of range"),
        ("2026-04-31 12:00:00 +0000 UTC", "day out of range"),
        ("2026-13-01 12:00:00 +0000 UTC", "month out of range"),
        ("2026-00-01 12:00:00 +0000 UTC", "month out of range"),
        ("2026-01-01 24:00:00 +0000 UTC", "time of day"),
        ("2026-01-01 12:60:00 +0000 UTC", "time of day"),
        ("2026-01-01 12:00:60 +0000 UTC", "time of day"),
        ("2026-01-01 12:00:00 +2400 X", "offset out of range"),
        ("2026-01-01 12:00:00 +0060 X", "offset out of range"),
    ],
)
def test_impossible_calendar_values_are_refused(text, reason):
    with pytest.raises(TimestampError, match=reason):
        parse_timestamps([text])


@pytest.mark.parametrize(
    "text",
    [
        "",
        "2026-03-28 12:00:00",  # no offset
        "2026-03-28 12:00:00 +0000",  # no zone name
        "2026-03-28T12:00:00 +0000 UTC",  # ISO separator
        "2026-03-28 12:00:00. +0000 UTC",  # dot without digits
        "2026-03-28 12:00:00.1234567890 +0000 UTC",  # ten digits
        "2026-03-28 12:00:00 +00:00 UTC",  # colon in the offset
        "2026-03-28 12:00:00 0000 UTC",  # no sign
        "2026-3-28 12:00:00 +0000 UTC",  # one-digit month
        " 2026-03-28 12:00:00 +0000 UTC",  # leading space
        "2026-03-28 12:00:00 +0000 UTC ",  # trailing space
        "2026-03-28 12:00:00 +0000  UTC",  # two spaces
        "2026-03-28 12:00:00 +0000 UTC m=",  # broken monotonic suffix
        "\uff12\uff10\uff12\uff16-03-28 12:00:00 +0000 UTC",  # fullwidth digits
    ],
)
def test_malformed_texts_are_refused(text):
    with pytest.raises(TimestampError, match="position 0"):
        parse_timestamps([text])


def test_coerce_turns_bad_texts_into_nat():
    texts = ["2026-03-28 12:00:00 +0000 UTC", "garbage", "2026-02-30 00:00:00 +0000 UTC", 7]
    parsed = parse_timestamps(texts, errors="coerce")
    assert parsed[0] == pd.Timestamp("2026-03-28T12:00:00", tz="UTC")
    assert parsed[1:].isna().all()


def test_missing_values_become_nat_without_error():
    parsed = parse_timestamps([None, "2026-03-28 12:00:00 +0000 UTC", float("nan")])
    assert parsed.isna().tolist() == [True, False, True]


def test_non_text_element_raises_with_position():
    with pytest.raises(TimestampError, match=r"position 1: expected text, got int"):
        parse_timestamps(["2026-03-28 12:00:00 +0000 UTC", 1_700_000_000])


def test_errors_argument_is_checked():
    with pytest.raises(ValidationError, match="errors must be"):
        parse_timestamps([], errors="ignore")  # type: ignore[arg-type]


def test_empty_input_gives_empty_utc_index():
    parsed = parse_timestamps([])
    assert len(parsed) == 0 and parsed.dtype == pd.DatetimeTZDtype("ns", "UTC")


def test_a_single_string_is_a_list_of_one():
    parsed = parse_timestamps("2026-03-28 12:00:00 +0000 UTC")
    assert list(parsed) == [pd.Timestamp("2026-03-28T12:00:00", tz="UTC")]


TEXTS = [go_format(dt.datetime(2026, 3, 28, 12, m, tzinfo=UTC), m * 1000) for m in range(8)]
EXPECTED = [epoch_nanos(dt.datetime(2026, 3, 28, 12, m, tzinfo=UTC), m * 1000) for m in range(8)]


@pytest.mark.parametrize(
    "container",
    [
        list,
        tuple,
        lambda t: np.array(t, dtype=object),
        lambda t: pd.Series(t, dtype="str"),
        lambda t: pd.Series(t, dtype=object),
        pd.Index,
        lambda t: pa.array(t),
        lambda t: pa.array(t, type=pa.large_string()),
        lambda t: pa.array(t, type=pa.string_view()),
        lambda t: pa.chunked_array([t[:3], t[3:]]),
        lambda t: iter(t),
    ],
)
def test_accepts_common_containers(container):
    assert nanos(parse_timestamps(container(TEXTS))) == EXPECTED


def test_sliced_arrow_array_is_read_from_its_offset():
    array = pa.array(["junk", *TEXTS, "more junk"]).slice(1, len(TEXTS))
    assert nanos(parse_timestamps(array)) == EXPECTED


def test_series_name_is_kept():
    assert parse_timestamps(pd.Series(TEXTS, name="x")).name == "x"


def test_long_inputs_cross_block_boundaries_exactly():
    # More rows than one block of the fast path, mixed with rows for the regex path.
    start = dt.datetime(2026, 3, 28, tzinfo=UTC)
    berlin = zoneinfo.ZoneInfo("Europe/Berlin")
    texts, expected = [], []
    for k in range(140_000):
        instant = start + dt.timedelta(seconds=k)
        fraction = (k * 7919) % 1_000_000_000
        suffix = "+0.5" if k % 9_973 == 0 else None
        texts.append(go_format(instant.astimezone(berlin), fraction, monotonic=suffix))
        expected.append(epoch_nanos(instant, fraction))
    assert nanos(parse_timestamps(texts)) == expected


# Fixed offsets up to ±23:59 with odd minutes, instants well inside datetime64[ns].
offsets = st.integers(min_value=-(23 * 60 + 59), max_value=23 * 60 + 59).map(
    lambda minutes: dt.timezone(dt.timedelta(minutes=minutes))
)
instants = st.datetimes(
    min_value=dt.datetime(1678, 1, 2), max_value=dt.datetime(2261, 12, 30), timezones=offsets
)
fractions = st.one_of(
    st.integers(0, 999_999_999),
    st.integers(0, 999).map(lambda ms: ms * 1_000_000),
    st.integers(0, 999_999).map(lambda us: us * 1_000),
    st.just(0),
)
zone_names = st.one_of(
    st.none(),  # Go's numeric label, e.g. +0545
    st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", min_size=1, max_size=7),
    st.sampled_from(["UTC", "-03", "+0545", "NST"]),
)
suffixes = st.one_of(st.none(), st.sampled_from(["+0.000123456", "-12.5", "+1"]))


def _render(when: dt.datetime, fraction: int, zone: str | None, suffix: str | None) -> str:
    text = go_format(when, fraction, monotonic=suffix)
    if zone is None:
        return text
    date, time, offset, _, *rest = text.split(" ")
    return " ".join([date, time, offset, zone, *rest])


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.tuples(instants, fractions, zone_names, suffixes), min_size=1, max_size=12))
def test_property_go_rendering_round_trips_to_the_same_instant(samples):
    texts = [_render(*sample) for sample in samples]
    expected = [epoch_nanos(when, fraction) for when, fraction, _, _ in samples]
    assert nanos(parse_timestamps(texts)) == expected


def _general_path_only(monkeypatch: pytest.MonkeyPatch) -> None:
    import searchkit.model.gotime as timestamps

    def nothing_understood(strings: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        size = len(strings)
        return np.zeros(size, dtype=np.int64), np.zeros(size, dtype=bool)

    monkeypatch.setattr(timestamps, "_fast_nanos", nothing_understood)


GOOD = "2026-03-28 12:34:56.123456789 +0545 +0545"


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, len(GOOD)),
            st.integers(0, 3),
            st.text(" 0123456789.:-+mAZaz=\x00\t\u00e9", max_size=3),
        ),
        min_size=1,
        max_size=20,
    )
)
def test_property_fast_and_general_paths_agree_on_any_text(edits):
    # Random cuts and insertions around a valid text: whatever the fast path accepts, the
    # regex path must accept with the same instant, and both must refuse the same texts.
    texts = [GOOD[:at] + insert + GOOD[at + cut :] for at, cut, insert in edits]
    both = parse_timestamps(texts, errors="coerce")
    with pytest.MonkeyPatch.context() as patch:
        _general_path_only(patch)
        general = parse_timestamps(texts, errors="coerce")
    assert both.isna().tolist() == general.isna().tolist()
    assert nanos(both[both.notna()]) == nanos(general[general.notna()])


LAYOUTS = (
    "2026-03-28 12:34:56 +0000 UTC",
    "2026-03-28 12:34:56.5 -0330 NST",
    "2026-03-28 12:34:56.123456789 +0545 +0545",
    "2024-02-29 23:59:59.999 -0300 -03",
)
# Bytes next to the ones the layout expects ("/" and ":" around the digits, and so on).
TRICKY = "/0:9 .,+-*AZaz[`{\x00\x7f\u00e9"


def test_fast_and_general_paths_agree_on_every_single_byte_edit(monkeypatch):
    texts = []
    for good in LAYOUTS:
        for at in range(len(good) + 1):
            texts.append(good[:at] + good[at + 1 :])  # deletion
            for char in TRICKY:
                texts.append(good[:at] + char + good[at + 1 :])  # substitution
                texts.append(good[:at] + char + good[at:])  # insertion
    both = parse_timestamps(texts, errors="coerce")
    _general_path_only(monkeypatch)
    general = parse_timestamps(texts, errors="coerce")
    disagree = [t for t, a, b in zip(texts, both, general, strict=True) if str(a) != str(b)]
    assert disagree == []


def test_resolve_zone_accepts_names_and_tzinfo_and_suggests_close_names():
    from searchkit.frames.zones import resolve_zone

    assert resolve_zone("Europe/Berlin") == zoneinfo.ZoneInfo("Europe/Berlin")
    assert resolve_zone("UTC") is dt.timezone.utc
    assert resolve_zone(None) is None
    berlin = zoneinfo.ZoneInfo("Europe/Berlin")
    assert resolve_zone(berlin) is berlin
    with pytest.raises(ValidationError) as info:
        resolve_zone("Berlin")
    assert str(info.value) == "unknown time zone 'Berlin'; did you mean 'Europe/Berlin'?"
    with pytest.raises(ValidationError, match=r"^unknown time zone 'Nowhere/Special'$"):
        resolve_zone("Nowhere/Special")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (None, None),
        (0, pd.Timestamp("1970-01-01", tz="UTC")),
        (1.5, pd.Timestamp("1970-01-01 00:00:01.5", tz="UTC")),
        ("2026-11-20 06:00", pd.Timestamp("2026-11-20 06:00", tz="UTC")),
        ("2026-11-20 07:00+01:00", pd.Timestamp("2026-11-20 06:00", tz="UTC")),
    ],
)
def test_utc_instant_reads_numbers_as_epoch_seconds_and_naive_times_as_utc(given, expected):
    from searchkit.frames.zones import utc_instant

    assert utc_instant(given) == expected
    if expected is not None:
        assert str(utc_instant(given).tz) == "UTC"
