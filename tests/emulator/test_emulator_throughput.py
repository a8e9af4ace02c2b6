"""Synthetic throughput: Go's time layout, exact instants, zones, shape and determinism."""

from __future__ import annotations

import calendar
import datetime as dt
import re
from zoneinfo import ZoneInfo

import pytest
import requests

from searchkit.emulator import Emulator

from .conftest import NOW, NOW_EPOCH, USER

GO_TIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))? ([+-])(\d{2})(\d{2}) (\S+)"
)
ZONES = ["UTC", "Asia/Kathmandu", "America/St_Johns", "Europe/Berlin", "America/Sao_Paulo"]


def parse_go_time(text: str) -> tuple[int, int, str]:
    """Return (UTC epoch nanoseconds, offset minutes, zone label), independently of the app."""
    match = GO_TIME.fullmatch(text)
    assert match, text
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    fraction, sign, off_h, off_m, label = match.groups()[6:]
    if fraction is not None:
        assert not fraction.endswith("0"), f"untrimmed fraction in {text!r}"
    nanos = int((fraction or "").ljust(9, "0"))
    offset = (int(off_h) * 60 + int(off_m)) * (-1 if sign == "-" else 1)
    local = calendar.timegm((year, month, day, hour, minute, second))
    return (local - offset * 60) * 1_000_000_000 + nanos, offset, label


@pytest.fixture(scope="module")
def zoned_indexes() -> dict[str, dict]:
    # Created a day before NOW: a new index has no traffic before it exists.
    with Emulator(users=[USER], clock=NOW_EPOCH - 86_400, zones=ZONES, seed=5) as emu:
        api = f"{emu.url}/v2/search"
        for n in range(len(ZONES)):
            requests.post(
                api,
                json={"name": f"z{n}", "region": "eu-west-1", "type": "payg"},
                auth=USER,
                timeout=5,
            ).raise_for_status()
        emu.advance(86_400)
        listed = requests.get(api, auth=USER, timeout=5).json()
    return dict(zip(ZONES, listed, strict=True))


@pytest.mark.parametrize("zone", ZONES)
def test_points_are_the_last_1440_minutes_sampled_within_a_second(zoned_indexes, zone):
    points = zoned_indexes[zone]["throughput_vector"]
    first_minute = NOW_EPOCH // 60 - 1440

    assert len(points) == 1440
    for n, point in enumerate(points):
        instant_ns, _, _ = parse_go_time(point["x"])
        minute, within = divmod(instant_ns, 60_000_000_000)
        assert minute == first_minute + n
        assert within < 1_000_000_000


@pytest.mark.parametrize("zone", ZONES)
def test_offsets_and_labels_are_those_of_the_zone_at_each_instant(zoned_indexes, zone):
    tz = ZoneInfo(zone)
    for point in zoned_indexes[zone]["throughput_vector"]:
        instant_ns, offset, label = parse_go_time(point["x"])
        local = dt.datetime.fromtimestamp(instant_ns // 1_000_000_000, tz)
        assert offset * 60 == local.utcoffset().total_seconds()
        assert label == local.tzname()


def test_kathmandu_renders_numeric_offset_and_label(zoned_indexes):
    texts = [p["x"] for p in zoned_indexes["Asia/Kathmandu"]["throughput_vector"]]

    assert all(text.endswith(" +0545 +0545") for text in texts)
    assert texts[-1].startswith("2024-03-11 00:14:00")


def test_st_johns_crosses_into_daylight_time(zoned_indexes):
    texts = [p["x"] for p in zoned_indexes["America/St_Johns"]["throughput_vector"]]
    suffixes = [text.split(" ", 2)[2] for text in texts]

    assert suffixes[0] == "-0330 NST"
    assert suffixes[-1] == "-0230 NDT"
    switch = suffixes.index("-0230 NDT")
    assert texts[switch - 1].startswith("2024-03-10 01:59:00")
    assert texts[switch].startswith("2024-03-10 03:00:00")


def test_sao_paulo_label_is_numeric(zoned_indexes):
    texts = [p["x"] for p in zoned_indexes["America/Sao_Paulo"]["throughput_vector"]]

    assert all(text.endswith(" -0300 -03") for text in texts)


def test_utc_points_read_like_go(zoned_indexes):
    texts = [p["x"] for p in zoned_indexes["UTC"]["throughput_vector"]]

    assert texts[0].startswith("2024-03-09 18:30:00")
    assert texts[-1].startswith("2024-03-10 18:29:00")
    assert all(text.endswith(" +0000 UTC") for text in texts)


def test_fractions_vary_from_none_to_nine_digits(zoned_indexes):
    widths = set()
    for point in zoned_indexes["UTC"]["throughput_vector"]:
        seconds = point["x"].split(" ")[1]
        widths.add(len(seconds.partition(".")[2]))

    assert 0 in widths
    assert 9 in widths
    assert {1, 2, 3} & widths
    assert {4, 5, 6} & widths


def test_values_are_non_negative_two_decimal_floats_with_some_zeros(zoned_indexes):
    for index in zoned_indexes.values():
        values = [p["y"] for p in index["throughput_vector"]]
        assert all(isinstance(v, float) and v >= 0 for v in values)
        assert all(round(v, 2) == v for v in values)
        zeros = values.count(0.0)
        assert 3 <= zeros < 50
        assert len(set(values)) > 500


def test_daily_shape_has_a_clear_peak_and_trough(zoned_indexes):
    values = [p["y"] for p in zoned_indexes["UTC"]["throughput_vector"] if p["y"] > 0]
    hourly = [sorted(values[h * 60 : (h + 1) * 60])[30] for h in range(len(values) // 60)]

    assert max(hourly) > 1.5 * min(hourly)


def list_bytes(seed: int, clock: object) -> bytes:
    with Emulator(users=[USER], seed=seed, clock=clock, demo=True, window_minutes=120) as emu:
        api = f"{emu.url}/v2/search"
        for plan in ("free", "payg"):
            requests.post(
                api,
                json={"name": plan, "region": "us-central1", "type": plan},
                auth=USER,
                timeout=5,
            ).raise_for_status()
        return requests.get(api, auth=USER, timeout=5).content


def test_same_seed_and_clock_give_byte_identical_lists():
    first = list_bytes(99, NOW)
    second = list_bytes(99, NOW_EPOCH + 0.25)

    assert first == second


def test_another_seed_changes_ids_tokens_and_values():
    first = list_bytes(99, NOW)
    other = list_bytes(100, NOW)

    assert first != other
    assert first.count(b'"x":') == other.count(b'"x":')


def test_default_account_is_deterministic_with_a_seed():
    with Emulator(seed=4) as one, Emulator(seed=4) as two:
        assert (one.username, one.password) == (two.username, two.password)
    with Emulator() as one, Emulator() as two:
        assert one.password != two.password
        assert len(one.password) >= 32
