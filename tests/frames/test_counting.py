"""The counting rules (searchkit.frames.counting), value by value."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from searchkit.errors import ValidationError
from searchkit.frames import counting as ct


def test_negative_and_infinite_values_are_invalid_a_missing_one_is_a_zero_point():
    values = np.array([1.5, -0.0, -1.0, np.inf, -np.inf, np.nan, 0.0])
    invalid = ct.invalid_values(values)
    assert invalid.tolist() == [False, False, True, True, True, False, False]
    assert ct.clean_values(values, invalid).tolist() == [1.5, -0.0, 0.0, 0.0, 0.0, 0.0, 0.0]


def test_an_unknown_interval_is_a_minute():
    steps = pd.Series(pd.to_timedelta(["30s", None, "5min"]))
    assert ct.interval_seconds(steps).tolist() == [30.0, 60.0, 300.0]
    assert ct.interval_seconds(np.array([np.nan, 10.0])).tolist() == [60.0, 10.0]
    assert pd.Timedelta(minutes=1) == ct.DEFAULT_INTERVAL and ct.DEFAULT_SECONDS == 60.0


def test_value_units_scale_by_the_interval_or_count_a_point():
    seconds = np.array([60.0, 300.0])
    assert ct.unit_scales("per_second", seconds).tolist() == [60.0, 300.0]
    assert ct.unit_scales("per_minute", seconds).tolist() == [1.0, 5.0]
    assert ct.unit_scales("per_point", seconds).tolist() == [1.0, 1.0]
    assert list(ct.VALUE_UNITS) == ["per_second", "per_minute", "per_point"]


@pytest.mark.parametrize("unit", ["per_hour", None, 1])
def test_an_unknown_value_unit_is_refused_naming_it(unit):
    with pytest.raises(ValidationError) as caught:
        ct.check_value_unit(unit)
    assert str(caught.value) == (
        f"value_unit must be one of ['per_minute', 'per_point', 'per_second'], got {unit!r}"
    )


def test_time_constants():
    assert ct.HOUR_NS == 3_600_000_000_000 and ct.QUARTER_NS * 4 == ct.HOUR_NS
    assert ct.DAY_NS == 24 * ct.HOUR_NS and (ct.HOURS, ct.QUARTERS) == (24, 96)


def test_one_point_per_instant_keeps_the_larger_value_in_order():
    times = pd.to_datetime(["2026-11-20 10:00", "2026-11-20 10:00", "2026-11-20 10:01"], utc=True)
    frame = pd.DataFrame({"index_id": ["a", "a", "a"], "time": times, "value": [2.0, 5.0, np.nan]})
    kept = ct.one_per_instant(frame)
    assert kept["value"].tolist()[0] == 5.0 and np.isnan(kept["value"].iloc[1])
    assert kept["time"].tolist() == [times[0], times[2]]
    distinct = frame.iloc[[0, 2]].reset_index(drop=True)
    assert ct.one_per_instant(distinct) is distinct


def test_bins_sum_in_time_order_and_count_valid_and_invalid_apart():
    values = np.array([1e16, 1.0, 1.0, -3.0, np.nan, 4.0])
    invalid = ct.invalid_values(values)
    flat = np.array([0, 0, 0, 0, 1, 1])
    sums, valid, bad = ct.binned(flat, ct.clean_values(values, invalid), invalid, 3)
    # One addition after the other: 1e16 + 1 is 1e16, twice (a compensated sum gives 1e16+2).
    assert sums.tolist() == [1e16, 4.0, 0.0]
    assert valid.tolist() == [3, 2, 0] and bad.tolist() == [1, 0, 0]


def test_run_sums_add_bins_left_to_right():
    values = np.array([[1e16, 1.0, 1.0, 2.0], [1.0, 2.0, 3.0, 4.0]])
    assert ct.run_sums(values, [0, 3]).tolist() == [[1e16, 2.0], [6.0, 4.0]]
    assert ct.run_sums(values, [0]).tolist() == [[1e16 + 2.0], [10.0]]  # 1e16+1 is 1e16
    counts = np.array([[1, 2, 3]], dtype=np.int64)
    got = ct.run_sums(counts, [0, 1])
    assert got.dtype == np.int64 and got.tolist() == [[1, 5]]


def test_median_spacing_is_nat_for_a_single_point():
    got = ct.median_spacing(np.array([0, 0, 0, 1]), np.array([0, 60, 180, 5]) * 10**9,
                            pd.Index(["a", "b"]))  # fmt: skip
    assert got.tolist() == [pd.Timedelta(seconds=90), pd.NaT]


def test_run_sums_are_one_addition_after_the_other_not_a_pairwise_sum():
    values = np.random.default_rng(1).lognormal(2, 3, (200, 96))
    starts = [0, 17, 40, 95]
    want = np.zeros((200, 4))
    for run, (low, high) in enumerate(zip(starts, [*starts[1:], 96], strict=True)):
        total = values[:, low].copy()
        for column in range(low + 1, high):
            total += values[:, column]
        want[:, run] = total
    got = ct.run_sums(values, starts)
    assert np.array_equal(got, want)
    assert not np.array_equal(got[:, 0], values[:, :17].sum(axis=1))  # numpy's pairwise sum


def test_a_median_spacing_is_the_midpoint_of_the_middle_two_rounded_half_to_even():
    # Spacings (ns) per group: [1, 2] -> 1.5 -> 2; [1, 4] -> 2.5 -> 2 (half to even);
    # [3, 1, 10] -> 3; a steady group [7, 7] -> 7; a single instant -> NaT. Groups come
    # interleaved and unsorted, with a NaT instant that is left out.
    nat = np.iinfo(np.int64).min
    codes = np.array([2, 0, 1, 2, 0, 1, 2, 3, 0, 1, 2, 3, 3, 4, 0])
    nanos = np.array([20, 0, 100, 23, 1, 101, 24, 50, 3, 105, 34, 57, nat, 9, nat])
    got = ct.median_spacing(codes, nanos, pd.Index(list("abcde")))
    assert got.to_numpy().view(np.int64)[:4].tolist() == [2, 2, 3, 7]
    assert pd.isna(got["e"])
    groups, spacing = ct.spacings(codes, nanos)
    assert groups.tolist() == [0, 0, 1, 1, 2, 2, 2, 3]
    assert spacing.tolist() == [1, 2, 1, 4, 3, 1, 10, 7]
    low, high = ct.median_ranks(np.array([1, 2, 3, 4]))
    assert (low.tolist(), high.tolist()) == ([0, 0, 1, 1], [0, 1, 1, 2])


def test_the_median_spacing_is_numpy_s_median_rounded_to_the_nanosecond():
    rng = np.random.default_rng(26)
    codes = rng.integers(0, 40, 5_000)
    nanos = rng.integers(0, 10**12, 5_000)
    got = ct.median_spacing(codes, nanos, pd.Index(range(41))).to_numpy().view(np.int64)
    for group in range(40):
        own = np.sort(nanos[codes == group])
        assert got[group] == int(np.round(np.median(np.diff(own)))), group
    assert got[40] == np.iinfo(np.int64).min  # no instant: NaT


def test_bins_extended_with_later_points_are_the_bins_of_all_of_them_to_the_bit():
    rng = np.random.default_rng(30)
    nanos = np.sort(rng.integers(0, ct.DAY_NS, 4_000))
    values = rng.lognormal(3, 4, 4_000)
    values[::97] = -1.0
    codes = rng.integers(0, 5, 4_000)
    invalid = ct.invalid_values(values)
    clean = ct.clean_values(values, invalid)
    flat = codes * ct.HOURS + ct.bin_slots(nanos, 0, ct.HOUR_NS)
    whole = ct.binned(flat, clean, invalid, 5 * ct.HOURS)
    cut = 2_500  # the first points binned, the rest added later (as a collect round does)
    sums, valid, _ = ct.binned(flat[:cut], clean[:cut], invalid[:cut], 5 * ct.HOURS)
    sums, valid = sums.reshape(5, ct.HOURS), valid.reshape(5, ct.HOURS)
    ct.add_binned(sums, flat[cut:], clean[cut:], invalid[cut:], valid)
    assert np.array_equal(sums.ravel(), whole[0]) and np.array_equal(valid.ravel(), whole[1])
    quarter = ct.QUARTER_NS
    assert ct.bin_slots(np.array([0, quarter - 1, quarter]), 0, quarter).tolist() == [0, 0, 1]
    assert np.array_equal(ct.sums_in_order(codes, clean, 5), ct.binned(codes, clean, invalid, 5)[0])
