"""Presets, generated identifiers, Go time rendering and the throughput JSON shortcut."""

from __future__ import annotations

import json
import re
from zoneinfo import ZoneInfo

import pytest

from searchkit.emulator import data


def test_presets_cover_every_type_and_limit_field():
    assert set(data.PRESETS) == set(data.TYPES)
    for preset in data.PRESETS.values():
        assert tuple(preset) == data.LIMIT_FIELDS
        assert all(type(value) is int for value in preset.values())


def test_presets_hold_unlimited_zero_and_wide_magnitudes():
    assert list(data.PRESETS["payg"].values()).count(-1) >= 3
    assert list(data.PRESETS["fixed"].values()).count(-1) >= 3
    assert 0 in data.PRESETS["free"].values()
    positive = [v for preset in data.PRESETS.values() for v in preset.values() if v > 0]
    assert max(positive) / min(positive) >= 10_000
    assert max(positive) > 2**31


def test_seeded_generators_repeat_and_differ_by_purpose():
    one, two = data.rng_for(5, "index", 1), data.rng_for(5, "index", 1)
    other = data.rng_for(5, "index", 2)

    assert data.new_uuid(one) == data.new_uuid(two) != data.new_uuid(other)
    assert data.new_token(one) == data.new_token(two)


@pytest.mark.parametrize(("region", "code"), [("eu-west-1", "eu1"), ("us-central1", "us1")])
def test_endpoint_names_end_with_the_region_code(region, code):
    endpoint = data.new_endpoint(data.rng_for(None), region)

    assert re.fullmatch(rf"[a-z]+-[a-z]+-\d{{5}}-{code}", endpoint)


@pytest.mark.parametrize("zone", ["UTC", "America/St_Johns", "Asia/Kathmandu"])
def test_throughput_json_shortcut_equals_json_dumps(zone):
    vector = data.throughput_vector(123, now=1_710_095_415.5, zone=zone, window_minutes=2000)

    assert vector.json == json.dumps(list(vector), separators=(",", ":"))
    assert len(vector) == 2000


def test_overlapping_windows_agree_on_shared_minutes():
    earlier = data.throughput_vector(9, now=1_710_000_000, window_minutes=600)
    later = data.throughput_vector(9, now=1_710_000_000 + 60 * 100, window_minutes=600)

    assert earlier[100:] == later[:500]


@pytest.mark.parametrize(
    ("epoch_ns", "zone", "expected"),
    [
        (0, "UTC", "1970-01-01 00:00:00 +0000 UTC"),
        (1_500_000_000, "UTC", "1970-01-01 00:00:01.5 +0000 UTC"),
        (1_000_000_001, "UTC", "1970-01-01 00:00:01.000000001 +0000 UTC"),
        (1_704_067_200_120_000_000, "Asia/Kathmandu", "2024-01-01 05:45:00.12 +0545 +0545"),
        (1_704_067_200_000_001_000, "America/St_Johns", "2023-12-31 20:30:00.000001 -0330 NST"),
        (1_719_792_000_000_000_000, "America/Sao_Paulo", "2024-06-30 21:00:00 -0300 -03"),
        (-1, "UTC", "1969-12-31 23:59:59.999999999 +0000 UTC"),
        # Offsets with seconds truncate toward zero, as Go's integer division does.
        (-2_182_723_200_000_000_000, "Europe/Dublin", "1900-10-31 23:34:39 -0025 DMT"),
    ],
)
def test_format_go_time_matches_go_string(epoch_ns, zone, expected):
    assert data.format_go_time(epoch_ns, ZoneInfo(zone)) == expected
