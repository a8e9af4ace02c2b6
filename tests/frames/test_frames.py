"""limits_frame, throughput_frame, throughput_series and the display helpers."""

from __future__ import annotations

import copy
import datetime as dt
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from searchkit.errors import InvalidResponseError, TimestampError, ValidationError
from searchkit.frames.counting import median_spacing
from searchkit.frames.limits_frames import LIMITS_COLUMNS, limits_frame
from searchkit.frames.throughput_frames import (
    THROUGHPUT_COLUMNS,
    throughput_frame,
    throughput_intervals,
    throughput_series,
)
from searchkit.model.index import IndexList, SearchIndex
from searchkit.model.limits import LIMIT_FIELDS, REGIONS, TYPES
from tests.analytics_data import raw_index, realistic_indexes

UTC = dt.timezone.utc

EXPECTED_LIMIT_DTYPES = {
    "name": "str",
    "short_id": "str",
    "type": "category",
    "region": "category",
    "endpoint": "str",
    "created": "datetime64[ns, UTC]",
    "input_enrichment_enabled": "boolean",
    "partner_email": "str",
    **dict.fromkeys(LIMIT_FIELDS, "float64"),
}


def point(x: str, y: float | None) -> dict:
    return {"x": x, "y": y}


# --- limits ------------------------------------------------------------------------------


def test_limits_frame_has_one_row_per_index_indexed_by_index_id():
    raw = realistic_indexes(minutes=2)
    frame = limits_frame(raw)
    assert frame.index.name == "index_id"
    assert frame.index.tolist() == [r["id"] for r in raw]
    assert frame["name"].tolist() == [r["name"] for r in raw]


def test_limits_frame_columns_and_dtypes_are_exact():
    frame = limits_frame(realistic_indexes(minutes=2))
    assert tuple(frame.columns) == LIMITS_COLUMNS
    assert {c: str(t) for c, t in frame.dtypes.items()} == EXPECTED_LIMIT_DTYPES
    assert str(frame.index.dtype) == "str"


def test_unlimited_becomes_inf_absent_becomes_nan_and_zero_stays_zero():
    raw = [
        raw_index("a", max_daily_queries=-1),
        raw_index("b", max_daily_queries=0),
        raw_index("c", max_daily_queries=None),
        {k: v for k, v in raw_index("d").items() if k != "max_daily_queries"},
        raw_index("e", max_daily_queries=25_000),
    ]
    column = limits_frame(raw)["max_daily_queries"].tolist()
    assert column[0] == math.inf
    assert column[1] == 0.0
    assert math.isnan(column[2]) and math.isnan(column[3])
    assert column[4] == 25_000.0


def test_unlimited_sorts_above_every_limit():
    raw = [raw_index("a", max_daily_queries=-1), raw_index("b", max_daily_queries=10**12)]
    ordered = limits_frame(raw).sort_values("max_daily_queries", ascending=False)
    assert ordered["name"].tolist() == ["a", "b"]


def test_secrets_are_excluded_by_default():
    raw = [raw_index("a")]
    frame = limits_frame(raw)
    assert "token" not in frame.columns and "read_only_token" not in frame.columns
    assert raw[0]["token"] not in frame.to_csv()


def test_secrets_are_included_on_request_after_the_limits():
    raw = [raw_index("a")]
    frame = limits_frame(raw, include_secrets=True)
    assert tuple(frame.columns) == (*LIMITS_COLUMNS, "token", "read_only_token")
    assert frame["token"].iloc[0] == raw[0]["token"]
    assert frame["read_only_token"].iloc[0] == raw[0]["read_only_token"]


@pytest.mark.parametrize("empty", [[], IndexList(), ()])
def test_empty_input_gives_empty_frame_with_the_same_columns_and_dtypes(empty):
    frame = limits_frame(empty)
    assert frame.empty and tuple(frame.columns) == LIMITS_COLUMNS
    assert {c: str(t) for c, t in frame.dtypes.items()} == EXPECTED_LIMIT_DTYPES
    assert frame.index.name == "index_id"
    assert list(limits_frame([], include_secrets=True).columns)[-2:] == [
        "token",
        "read_only_token",
    ]


def test_type_and_region_keep_unknown_values_beside_the_spec_ones():
    raw = [raw_index("a", plan="paid", region="ap-south-2"), raw_index("b")]
    frame = limits_frame(raw)
    assert frame["type"].tolist() == ["paid", "payg"]
    assert list(frame["type"].cat.categories) == [*TYPES, "paid"]
    assert list(frame["region"].cat.categories) == [*REGIONS, "ap-south-2"]


def test_created_is_aware_utc_from_unix_seconds():
    frame = limits_frame([raw_index("a", creation_time=1_767_225_600)])
    assert frame["created"].iloc[0] == pd.Timestamp("2026-01-01T00:00:00", tz="UTC")


def test_missing_or_garbled_fields_are_missing_not_errors():
    frame = limits_frame([{"id": "x", "creation_time": "soon", "input_enrichment_enabled": "y"}])
    row = frame.iloc[0]
    assert pd.isna(row["created"]) and pd.isna(row["input_enrichment_enabled"])
    assert pd.isna(row["name"]) and pd.isna(row["type"])
    assert frame[list(LIMIT_FIELDS)].isna().all(axis=None)


def test_older_vercel_email_is_read_as_partner_email():
    raw = raw_index("a")
    del raw["partner_email"]
    raw["vercel_email"] = "team@vercel.example"
    assert limits_frame([raw])["partner_email"].iloc[0] == "team@vercel.example"


def test_models_and_raw_json_give_the_same_limits_frame():
    raw = realistic_indexes(minutes=2)
    models = IndexList.from_json(copy.deepcopy(raw))
    pd.testing.assert_frame_equal(limits_frame(models), limits_frame(raw))
    pd.testing.assert_frame_equal(limits_frame(list(models)), limits_frame(raw))


def test_a_single_index_is_a_frame_of_one_row():
    raw = raw_index("solo")
    assert limits_frame(raw)["name"].tolist() == ["solo"]
    assert limits_frame(SearchIndex.from_dict(raw))["name"].tolist() == ["solo"]


@pytest.mark.parametrize("bad", [42, "indexes", [1, 2], pd.DataFrame()])
def test_other_inputs_are_refused(bad):
    with pytest.raises(ValidationError):
        limits_frame(bad)


# --- throughput --------------------------------------------------------------------------

RAW = [
    {
        "id": "id-a",
        "name": "alpha",
        "throughput_vector": [
            point("2026-03-28 13:01:00.5 +0100 CET", 2),
            point("2026-03-28 13:00:00 +0100 CET", 1.5),
            point("2026-03-28 13:02:00 +0100 CET", 0),
            point("2026-03-28 13:03:00.000000001 +0100 CET", None),
        ],
    },
    {
        "id": "id-b",
        "name": "beta",
        "throughput_vector": [point("2026-03-28 17:45:00 +0545 +0545", 7)],
    },
    {"id": "id-c", "name": "gamma", "throughput_vector": []},
    {"id": "id-d", "name": "delta"},
]


def test_throughput_columns_are_exactly_the_contract():
    frame = throughput_frame(RAW)
    assert tuple(frame.columns) == THROUGHPUT_COLUMNS
    assert str(frame["time"].dtype) == "datetime64[ns, UTC]"
    assert frame["value"].dtype == np.float64


def test_throughput_rows_are_sorted_by_index_then_time_with_exact_values():
    frame = throughput_frame(RAW)
    assert frame["index_id"].tolist() == ["id-a"] * 4 + ["id-b"]
    assert frame["name"].tolist() == ["alpha"] * 4 + ["beta"]
    assert frame["time"].tolist() == [
        pd.Timestamp("2026-03-28T12:00:00", tz="UTC"),
        pd.Timestamp("2026-03-28T12:01:00.5", tz="UTC"),
        pd.Timestamp("2026-03-28T12:02:00", tz="UTC"),
        pd.Timestamp("2026-03-28T12:03:00.000000001", tz="UTC"),
        pd.Timestamp("2026-03-28T12:00:00", tz="UTC"),
    ]
    assert frame["value"].tolist()[:3] == [1.5, 2.0, 0.0]


def test_zero_is_kept_and_null_is_nan_not_dropped():
    values = throughput_frame(RAW)["value"]
    assert (values == 0).sum() == 1
    assert values.isna().sum() == 1
    assert len(values) == 5


def test_tz_converts_the_time_column_without_moving_instants():
    utc = throughput_frame(RAW)
    local = throughput_frame(RAW, tz="America/St_Johns")
    assert str(local["time"].dtype) == "datetime64[ns, America/St_Johns]"
    assert (local["time"] == utc["time"]).all()
    # Newfoundland is on daylight time (NDT, -0230) since 8 March 2026.
    assert local["time"].iloc[0].strftime("%H:%M %z") == "09:30 -0230"


def test_tzinfo_objects_are_accepted():
    frame = throughput_frame(RAW, tz=dt.timezone(dt.timedelta(hours=-3)))
    assert frame["time"].iloc[0].utcoffset() == dt.timedelta(hours=-3)


def test_unknown_time_zone_is_a_validation_error():
    with pytest.raises(ValidationError, match="Mars/Olympus"):
        throughput_frame(RAW, tz="Mars/Olympus")


def test_intervals_are_median_spacings_by_index_id():
    intervals = throughput_intervals(throughput_frame(RAW))
    assert intervals.index.tolist() == ["id-a", "id-b"]
    assert str(intervals.dtype) == "timedelta64[ns]"
    # Spacings 60.5 s, 59.5 s, 60.000000001 s: the median is the middle one.
    assert intervals["id-a"] == pd.Timedelta(seconds=60, nanoseconds=1)
    assert intervals["id-b"] is pd.NaT


def test_interval_of_an_even_number_of_spacings_is_their_middle_mean():
    raw = [
        {
            "id": "even",
            "throughput_vector": [
                point(f"2026-03-28 12:00:{s:02d} +0000 UTC", 1) for s in (0, 10, 30, 40, 45)
            ],
        }
    ]
    # Spacings 10, 20, 10, 5 s: median (10 + 10) / 2.
    assert throughput_intervals(throughput_frame(raw))["even"] == pd.Timedelta(seconds=10)


def test_intervals_follow_the_frame_as_filtered_and_work_on_wide_frames_and_series():
    frame = throughput_frame(RAW)
    only_beta = frame[frame["name"] == "beta"]
    assert throughput_intervals(only_beta).index.tolist() == ["id-b"]
    wide = throughput_intervals(throughput_frame(RAW, wide=True))
    assert wide.index.name == "name" and wide.index.tolist() == ["alpha", "beta", "gamma", "delta"]
    # Wide frames cannot tell a null value from no point: the spacing of the values shown.
    assert wide["alpha"] == pd.Timedelta(seconds=60) and wide["gamma"] is pd.NaT
    series = throughput_intervals(throughput_series(RAW[0]))
    assert series.tolist() == [pd.Timedelta(seconds=60, nanoseconds=1)]
    with pytest.raises(ValidationError):
        throughput_intervals(limits_frame(RAW))


def test_median_spacing_of_steady_and_uneven_groups_is_each_group_s_middle_spacing():
    # Steady samplers take a shortcut; the others, NaT instants, a group of one point, an
    # even count (the mean of the middle two, to the nanosecond) and rows out of order do not.
    rng = np.random.default_rng(9)
    codes, nanos, want = [], [], {}
    for group in range(40):
        kind = group % 5
        count = int(rng.integers(1, 30))
        if kind == 0:  # steady
            steps = np.full(count - 1, 60 * 10**9)
        elif kind == 1:  # steady but for one gap
            steps = np.full(count - 1, 300 * 10**9)
            steps[len(steps) // 2 :][:1] = 3 * 3600 * 10**9
        else:
            steps = rng.integers(1, 10**11, count - 1)
        times = 10**18 + np.concatenate([[0], np.cumsum(steps)]).astype(np.int64)
        codes += [group] * count
        nanos += times.tolist()
        if count >= 2:
            want[group] = int(np.round(np.median(np.diff(times).astype(np.float64))))
    codes += [3, 7]
    nanos += [np.iinfo(np.int64).min] * 2  # NaT: left out
    order = rng.permutation(len(codes))
    labels = pd.Index([f"g{g}" for g in range(40)], name="index_id")
    for shuffle in (np.arange(len(codes)), order):
        got = median_spacing(np.asarray(codes)[shuffle], np.asarray(nanos)[shuffle], labels)
        expected = [pd.Timedelta(want[g], "ns") if g in want else pd.NaT for g in range(40)]
        assert got.tolist() == expected


def test_frames_carry_no_attrs():
    assert throughput_frame(RAW).attrs == {}
    assert throughput_frame(RAW, wide=True).attrs == {}
    assert throughput_series(RAW[0]).attrs == {}


def test_raw_json_models_and_index_list_give_the_same_frame():
    raw = realistic_indexes(minutes=30)
    from_raw = throughput_frame(raw)
    from_models = throughput_frame(IndexList.from_json(copy.deepcopy(raw)))
    pd.testing.assert_frame_equal(from_raw, from_models)
    assert len(from_raw) == 5 * 30


def test_realistic_day_in_five_zones_is_regular_per_minute():
    frame = throughput_frame(realistic_indexes(minutes=1440))
    assert len(frame) == 5 * 1440
    assert frame.groupby("name", observed=True)["time"].is_monotonic_increasing.all()
    for spacing in throughput_intervals(frame):
        assert abs(spacing - pd.Timedelta(minutes=1)) < pd.Timedelta(seconds=1)


def test_bad_timestamp_names_the_index_and_position():
    raw = copy.deepcopy(RAW)
    raw[1]["throughput_vector"].append(point("2026-02-30 00:00:00 +0000 UTC", 1))
    with pytest.raises(TimestampError, match=r"at position 1 of index 'beta'"):
        throughput_frame(raw)


def test_missing_time_names_the_index_and_position():
    raw = copy.deepcopy(RAW)
    raw[0]["throughput_vector"][2] = {"y": 3}
    with pytest.raises(TimestampError, match=r"at position 2 of index 'alpha' has no time"):
        throughput_frame(raw)


@pytest.mark.parametrize("bad_point", [None, ["2026-03-28 12:00:00 +0000 UTC", 1], 5])
def test_a_point_that_is_not_an_object_is_an_invalid_response(bad_point):
    raw = copy.deepcopy(RAW)
    raw[1]["throughput_vector"].append(bad_point)
    with pytest.raises(InvalidResponseError, match=r"throughput_vector\[1\] of index 'beta'"):
        throughput_frame(raw)


def test_numeric_text_values_are_read_and_others_refused():
    raw = [
        {
            "id": "t",
            "name": "t",
            "throughput_vector": [point(RAW[1]["throughput_vector"][0]["x"], "12.5")],
        }
    ]
    assert throughput_frame(raw)["value"].tolist() == [12.5]
    raw[0]["throughput_vector"][0]["y"] = "lots"
    with pytest.raises(InvalidResponseError, match="non-numeric y"):
        throughput_frame(raw)


def test_non_text_time_is_a_timestamp_error():
    raw = [{"id": "t", "name": "t", "throughput_vector": [{"x": 1_700_000_000, "y": 1}]}]
    with pytest.raises(TimestampError, match="position 0 of index 't'"):
        throughput_frame(raw)


def test_empty_input_gives_empty_tidy_frame():
    frame = throughput_frame([])
    assert frame.empty and tuple(frame.columns) == THROUGHPUT_COLUMNS
    assert str(frame["time"].dtype) == "datetime64[ns, UTC]"
    assert frame["value"].dtype == np.float64
    assert throughput_intervals(frame).empty


def test_wide_form_has_one_column_per_index_name_indexed_by_time():
    wide = throughput_frame(RAW, wide=True, tz="Europe/Berlin")
    assert list(wide.columns) == ["alpha", "beta", "gamma", "delta"]
    assert wide.index.name == "time"
    assert str(wide.index.dtype) == "datetime64[ns, Europe/Berlin]"
    assert wide.index.is_monotonic_increasing
    assert wide["alpha"].count() == 3 and wide["beta"].count() == 1
    noon = pd.Timestamp("2026-03-28T12:00:00", tz="UTC")
    assert wide.loc[noon, "alpha"] == 1.5 and wide.loc[noon, "beta"] == 7
    assert wide["gamma"].isna().all()


def test_wide_form_tells_apart_indexes_that_share_a_name():
    raw = [dict(RAW[0], id="one"), dict(RAW[0], id="two")]
    assert list(throughput_frame(raw, wide=True).columns) == ["alpha (one)", "alpha (two)"]


def test_throughput_series_is_named_after_the_index_and_indexed_by_time():
    series = throughput_series(RAW[0], tz="Asia/Kathmandu")
    assert series.name == "alpha"
    assert series.index.name == "time"
    assert str(series.index.dtype) == "datetime64[ns, Asia/Kathmandu]"
    assert series.tolist()[:3] == [1.5, 2.0, 0.0]
    assert throughput_series(SearchIndex.from_dict(RAW[0])).equals(throughput_series(RAW[0]))


def test_throughput_series_wants_one_index():
    with pytest.raises(ValidationError):
        throughput_series(RAW)  # type: ignore[arg-type]


def test_limits_and_throughput_of_indexes_listed_from_the_emulator(client):
    created = client.create_index("docs", region="eu-west-1", type="payg")
    indexes = client.list_indexes()
    limits = limits_frame(indexes)
    assert limits.loc[created.id, "name"] == "docs"
    assert limits.loc[created.id, "created"].tzinfo is not None
    throughput = throughput_frame(indexes)
    points = len(created.throughput)
    assert points > 0 and len(throughput) == points
    assert throughput["time"].is_monotonic_increasing
    assert throughput["value"].notna().any()


# --- one conversion: raw JSON and models agree on dirty data --------------------------------

DIRTY_LIMITS = [
    raw_index("lots", max_daily_queries="lots"),
    raw_index("bool", max_daily_queries=True),
    raw_index("half", max_daily_queries=12.5),
    raw_index("huge", max_daily_queries=10**400),
    raw_index("text", max_daily_queries=" 25 "),
    raw_index("float", max_daily_queries=25.0),
    {**raw_index("garbled"), "creation_time": "soon", "input_enrichment_enabled": "y"},
]


def _entry_points(raw):
    """The same JSON through every entry point a user has."""
    body = json.dumps(raw).encode()
    return {
        "raw": raw,
        "from_json": IndexList.from_json(copy.deepcopy(raw)),
        "from_json_bytes": IndexList.from_json_bytes(body),
        "models": [SearchIndex.from_dict(r) for r in raw],
    }


def test_garbled_limits_are_missing_from_every_entry_point():
    frames = {k: limits_frame(v) for k, v in _entry_points(DIRTY_LIMITS).items()}
    expected = [math.nan, math.nan, math.nan, math.nan, 25.0, 25.0, math.inf]
    for frame in frames.values():
        pd.testing.assert_frame_equal(frame, frames["raw"])
    column = frames["raw"]["max_daily_queries"].tolist()
    assert [v if not math.isnan(v) else "nan" for v in column] == [
        v if not math.isnan(v) else "nan" for v in expected
    ]
    garbled = frames["raw"].iloc[6]
    assert pd.isna(garbled["created"]) and pd.isna(garbled["input_enrichment_enabled"])


def test_a_limit_beyond_int64_is_kept_as_sent_not_an_overflow():
    index = IndexList.from_json_bytes(json.dumps(DIRTY_LIMITS[3:4]).encode())[0]
    assert index.max_daily_queries is None
    assert index.invalid["max_daily_queries"] == 10**400
    assert math.isnan(limits_frame([index])["max_daily_queries"].iloc[0])


DIRTY_THROUGHPUT = [
    {
        "id": "id-d",
        "name": "dirty",
        "throughput_vector": [
            point("2026-03-28 13:00:00 +0100 CET", 1),
            point("2026-03-28 13:01:00 +0100 CET", "12.5"),
            point("2026-03-28 13:02:00 +0100 CET m=+0.5", None),
            point("2026-03-28 13:03:00 +0100 CET", "abc"),
            point("2026-02-30 13:04:00 +0100 CET", 2),
        ],
    }
]


@pytest.mark.parametrize("entry", ["raw", "from_json", "from_json_bytes", "models"])
def test_dirty_points_give_the_same_error_and_the_same_coerced_frame(entry):
    indexes = _entry_points(DIRTY_THROUGHPUT)[entry]
    with pytest.raises(
        InvalidResponseError,
        match=r"throughput_vector\[3\] of index 'dirty' has a non-numeric y: 'abc'",
    ):
        throughput_frame(indexes)
    coerced = throughput_frame(indexes, errors="coerce")
    assert coerced["value"].tolist()[:2] == [1.0, 12.5]
    assert math.isnan(coerced["value"].iloc[2]) and math.isnan(coerced["value"].iloc[3])
    assert coerced["time"].iloc[2] == pd.Timestamp("2026-03-28 12:02:00", tz="UTC")
    # 30 February has no instant: NaT, sorted last as pandas does, its value kept.
    assert pd.isna(coerced["time"].iloc[4]) and coerced["value"].iloc[4] == 2.0
    pd.testing.assert_frame_equal(
        coerced, throughput_frame(DIRTY_THROUGHPUT, errors="coerce"), check_like=False
    )


def test_y_abc_in_throughput_vector_is_an_invalid_response_not_a_value_error():
    index = SearchIndex.from_dict(DIRTY_THROUGHPUT[0])
    with (
        pytest.raises(InvalidResponseError, match=r"throughput_vector\[3\] of index 'dirty'"),
        pytest.deprecated_call(),
    ):
        _ = index.throughput_vector


# --- names, short ids, files --------------------------------------------------------------


def test_names_keep_only_the_indexes_asked_for_in_input_order():
    frame = throughput_frame(RAW, names=["beta", "alpha"])
    assert frame["name"].unique().tolist() == ["alpha", "beta"]
    assert throughput_frame(RAW, names="beta")["value"].tolist() == [7.0]
    assert list(throughput_frame(RAW, names=["beta"], wide=True).columns) == ["beta"]
    with pytest.raises(ValidationError, match="no index named 'omega'"):
        throughput_frame(RAW, names=["omega"])


def test_limits_frame_has_a_short_id_to_tell_same_named_indexes_apart():
    raw = [
        raw_index("docs", id="5d6a1f3c-aaaa-4000-8000-000000000001"),
        raw_index("docs", id="9e1b2c3d-bbbb-4000-8000-000000000002"),
    ]
    frame = limits_frame(raw)
    assert frame["short_id"].tolist() == ["5d6a1f3c", "9e1b2c3d"]


def _frames_searchkit_returns():
    raw = realistic_indexes(minutes=30)
    return {
        "limits": limits_frame(raw),
        "limits with secrets": limits_frame(raw, include_secrets=True),
        "throughput": throughput_frame(raw),
        "throughput in a zone": throughput_frame(raw, tz="America/St_Johns"),
        "throughput wide": throughput_frame(raw, wide=True, tz="Europe/Berlin"),
        "throughput empty": throughput_frame([]),
        "limits empty": limits_frame([]),
        "intervals": throughput_intervals(throughput_frame(raw)).to_frame(),
    }


@pytest.mark.parametrize("name", list(_frames_searchkit_returns()))
@pytest.mark.parametrize("form", ["parquet", "feather"])
def test_every_frame_round_trips_through_parquet_and_feather(tmp_path, name, form):
    frame = _frames_searchkit_returns()[name]
    path = tmp_path / f"frame.{form}"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        getattr(frame, f"to_{form}")(path)
        back = getattr(pd, f"read_{form}")(path)
    if frame.empty:
        # Arrow keeps a categorical's categories with its rows: none survive zero rows.
        categorical = [c for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)]
        frame = frame.astype(dict.fromkeys(categorical, "category"))
        frame = frame.astype({c: back[c].dtype for c in categorical})
    pd.testing.assert_frame_equal(back, frame)
