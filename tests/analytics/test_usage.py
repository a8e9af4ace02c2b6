"""Usage against limits: operations per day, the heatmap, a forecast on a plot."""

from __future__ import annotations

import datetime as dt
import json

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

import searchkit as sk
from searchkit.analytics.forecast import FORECAST_COLUMNS
from searchkit.emulator import Emulator
from searchkit.history.usage_history import History
from tests.index_json import index_json

# A pandas warning is a future error: none is allowed here.
pytestmark = pytest.mark.filterwarnings("error::pandas.errors.Pandas4Warning")


def go(ts: pd.Timestamp) -> str:
    return ts.strftime("%Y-%m-%d %H:%M:%S +0000 UTC")


def index(
    name: str,
    start: str,
    minutes: int,
    rate: float,
    *,
    queries=30_000,
    updates=30_000,
    every: int = 1,
    **extra,
):
    """An index with ``minutes`` points, one each ``every`` minutes from ``start``."""
    first = pd.Timestamp(start, tz="UTC")
    times = pd.date_range(first, periods=minutes, freq=pd.Timedelta(minutes=every))
    # go() of each instant, formatted all at once (two weeks of minutes: 0.2 s one by one)
    points = [{"x": x, "y": rate} for x in times.strftime("%Y-%m-%d %H:%M:%S +0000 UTC")]
    return {
        "id": f"id-{name}",
        "name": name,
        "max_daily_queries": queries,
        "max_daily_updates": updates,
        "throughput_vector": points,
        **extra,
    }


def test_usage_frame_counts_operations_per_utc_day_against_the_daily_limits():
    raw = [
        index("steady", "2026-11-19 23:00", 120, 2.0, queries=100, updates=200),
        index("free-for-all", "2026-11-20 00:00", 60, 5.0, queries=-1, updates=-1),
    ]
    usage = sk.usage_frame(raw)

    assert usage[["name", "period", "operations", "points", "limit"]].to_dict("records") == [
        {
            "name": "free-for-all",
            "period": pd.Timestamp("2026-11-20", tz="UTC"),
            "operations": 18_000.0,
            "points": 60,
            "limit": float("inf"),
        },
        {
            "name": "steady",
            "period": pd.Timestamp("2026-11-19", tz="UTC"),
            "operations": 7_200.0,
            "points": 60,
            "limit": 300.0,
        },
        {
            "name": "steady",
            "period": pd.Timestamp("2026-11-20", tz="UTC"),
            "operations": 7_200.0,
            "points": 60,
            "limit": 300.0,
        },
    ]
    # unlimited: no share of a limit (it was 0.0), and the reason says so
    assert usage["utilization"].fillna(-1.0).tolist() == [-1.0, 24.0, 24.0]
    assert usage["reason"].tolist() == ["unlimited", "", ""]
    assert usage["breached"].tolist() == [False, True, True]


def test_usage_frame_takes_a_single_field_and_another_unit():
    raw = [index("steady", "2026-11-20 00:00", 10, 3.0, queries=100, updates=200)]
    usage = sk.usage_frame(raw, field="max_daily_queries", value_unit="per_minute")
    assert usage["operations"].tolist() == [30.0]
    assert usage["utilization"].tolist() == [0.3]


def test_usage_frame_aligns_days_in_another_zone():
    raw = [index("steady", "2026-11-19 22:00", 240, 1.0)]
    usage = sk.usage_frame(raw, tz="Europe/Berlin")
    assert usage["period"].tolist() == [
        pd.Timestamp("2026-11-19", tz="Europe/Berlin"),
        pd.Timestamp("2026-11-20", tz="Europe/Berlin"),
    ]
    assert usage["operations"].tolist() == [3600.0, 10800.0]


def test_the_demo_data_show_one_index_past_and_one_on_course():
    noon = dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.timezone.utc)
    with Emulator(demo=True, seed=2026, clock=noon) as emu, emu.client() as client:
        forecast = sk.forecast_limits(client.list_indexes()).set_index("name")
    past, on_course = forecast.loc["support-tickets"], forecast.loc["code-snippets"]
    assert past["used"] > past["limit"]
    assert past["hit_at"] < pd.Timestamp("2026-11-20 07:30", tz="UTC")
    assert on_course["used"] < on_course["limit"] < on_course["projected"]
    assert pd.Timestamp("2026-11-20 09:00", tz="UTC") < on_course["hit_at"]
    assert on_course["hit_at"] < pd.Timestamp("2026-11-21", tz="UTC")
    assert forecast.loc[["docs-search", "news-archive"], "projected_utilization"].isna().all()


def test_sources_agree_index_list_raw_json_and_history(tmp_path):
    noon = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)
    with Emulator(demo=True, seed=5, clock=noon) as emu, emu.client() as client:
        indexes = client.list_indexes()
        hist = History(tmp_path / "h")
        hist.collect(client, indexes=indexes, now=emu.now())
    from_list = sk.usage_frame(indexes)
    from_raw = sk.usage_frame(indexes.to_dicts())
    from_history = sk.usage_frame(hist)
    for other in (from_raw, from_history):
        pd.testing.assert_frame_equal(
            from_list.astype({"index_id": str, "name": str}),
            other.astype({"index_id": str, "name": str}),
        )


def test_plot_utilization_colours_index_by_day_and_marks_breaches():
    raw = [
        index("steady", "2026-11-19 00:00", 2880, 0.25),  # 21,600 a day of 60,000
        index("heavy", "2026-11-19 00:00", 2880, 1.0, queries=30_000, updates=0),
    ]
    ax = sk.plot_utilization(raw)
    image = ax.get_images()[0].get_array()
    assert [t.get_text() for t in ax.get_yticklabels()] == ["heavy", "steady"]
    np.testing.assert_allclose(image, [[288.0, 288.0], [36.0, 36.0]])
    markers = ax.collections[0].get_offsets()
    assert markers.tolist() == [[0.0, 0.25], [1.0, 0.25]]
    assert ax.get_title() == (
        "Usage against the limit of queries + updates per day\n"
        "(max_daily_queries + max_daily_updates)"
    )
    single = sk.plot_utilization(raw, field="max_daily_queries")
    assert single.get_title() == "Usage against the limit of queries per day\n(max_daily_queries)"


def test_plot_throughput_draws_a_forecast_pace_and_limit_line():
    raw = [index("steady", "2026-11-20 00:00", 360, 1.0)]
    forecast = sk.forecast_limits(raw, now="2026-11-20 06:00")
    plain = sk.plot_throughput(raw)
    with_forecast = sk.plot_throughput(raw, forecast=forecast)
    assert len(with_forecast.get_lines()) == len(plain.get_lines()) + 3  # pace, limit, hit
    pace, limit_pace = with_forecast.get_lines()[1:3]
    assert pace.get_ydata().tolist() == [1.0, 1.0]
    assert limit_pace.get_ydata().tolist() == pytest.approx([38_400 / 64_800] * 2)


def test_a_partial_first_or_last_day_is_flagged_incomplete():
    raw = [index("steady", "2026-11-19 12:00", 2160, 1.0)]  # noon to midnight the next day
    usage = sk.usage_frame(raw)
    assert usage["complete"].tolist() == [False, True]
    ax = sk.plot_utilization(raw)
    assert [t.get_text() for t in ax.texts] == ["≥72%", "144%"]


def test_usage_from_a_history_compares_each_day_with_the_limits_then_in_force(tmp_path):
    start = dt.datetime(2026, 11, 20, tzinfo=dt.timezone.utc)
    hist = History(tmp_path / "h")
    with Emulator(demo=True, seed=4, clock=start) as emu, emu.client() as client:
        emu.advance(86_400)
        raw = client.list_indexes().to_dicts()
        hist.collect(client, indexes=raw, now=emu.now())  # holds Nov 20
        emu.advance(86_400)
        raw = client.list_indexes().to_dicts()
        docs = next(r for r in raw if r["name"] == "docs-search")
        docs["max_daily_queries"], docs["max_daily_updates"] = 1_000_000, 500_000
        hist.collect(client, indexes=raw, now=emu.now())  # holds Nov 21, new plan

    usage = sk.usage_frame(hist).set_index(["name", "period"])
    nov20, nov21 = (pd.Timestamp(d, tz="UTC") for d in ("2026-11-20", "2026-11-21"))
    assert usage.loc[("docs-search", nov20), "limit"] == float("inf")
    assert usage.loc[("docs-search", nov21), "limit"] == 1_500_000
    assert usage.loc[("support-tickets", nov21), "limit"] == 20_000


def test_an_index_list_sampled_every_five_minutes_counts_five_minutes_a_point():
    indexes = sk.IndexList.from_json(
        [
            index("five", "2026-11-20 00:00", 288, 0.5, every=5),  # a whole day
            index("one", "2026-11-20 00:00", 1440, 0.5),
        ]
    )
    usage = sk.usage_frame(indexes)
    assert usage[["name", "operations", "points", "complete", "utilization"]].to_dict(
        "records"
    ) == [
        {"name": "five", "operations": 43_200.0, "points": 288, "complete": True,
         "utilization": 0.72},
        {"name": "one", "operations": 43_200.0, "points": 1440, "complete": True,
         "utilization": 0.72},
    ]  # fmt: skip


def test_a_forecast_of_five_minute_points_uses_their_interval():
    indexes = sk.IndexList.from_json([index("five", "2026-11-20 00:00", 12, 2.0, every=5)])
    row = sk.forecast_limits(indexes).iloc[0]
    # Now is the end of the newest point's interval: 00:55 + 5 minutes.
    assert row["as_of"] == pd.Timestamp("2026-11-20 01:00", tz="UTC")
    assert row["used"] == 12 * 2.0 * 300
    assert row["pace"] == 2.0
    assert row["projected"] == 7_200 + 2.0 * 23 * 3_600
    # (60,000 - 7,200) / 2 per second = 26,400 s = 7 h 20 min after now.
    assert row["hit_at"] == pd.Timestamp("2026-11-20 08:20", tz="UTC")
    assert row["method"] == "pace"


def test_forecast_columns_are_fixed_and_as_of_is_last():
    raw = [index("steady", "2026-11-20 00:00", 60, 1.0)]
    forecast = sk.forecast_limits(raw, now="2026-11-20 00:30")
    assert list(forecast.columns) == list(FORECAST_COLUMNS)
    assert FORECAST_COLUMNS[-2:] == ("reason", "as_of")
    assert forecast["as_of"].tolist() == [pd.Timestamp("2026-11-20 00:30", tz="UTC")]
    assert sk.usage_frame(raw)["field"].tolist() == ["max_daily_queries+max_daily_updates"]
    assert sk.usage_frame(raw, field="max_daily_queries")["field"].tolist() == ["max_daily_queries"]


def _round_trips(frame: pd.DataFrame, path) -> None:
    assert frame.attrs == {}
    frame.to_parquet(path / "f.parquet")
    _same(pd.read_parquet(path / "f.parquet"), frame)
    frame.to_feather(path / "f.feather")
    _same(pd.read_feather(path / "f.feather"), frame)


def _same(back: pd.DataFrame, frame: pd.DataFrame) -> None:
    if len(frame):
        pd.testing.assert_frame_equal(back, frame)
        return
    # Arrow gives an empty categorical's categories the object dtype: "category" is all
    # that can be compared of it.
    assert back.dtypes.astype(str).to_dict() == frame.dtypes.astype(str).to_dict()
    pd.testing.assert_frame_equal(
        back, frame, check_dtype=False, check_index_type=False, check_categorical=False
    )
    assert back.index.dtype == frame.index.dtype


def _every_frame(hist: History, indexes) -> dict[str, pd.DataFrame]:
    return {
        "History.throughput": hist.throughput(),
        "History.limits": hist.limits(),
        "usage_frame(History)": sk.usage_frame(hist),
        "usage_frame(IndexList)": sk.usage_frame(indexes),
        "forecast_limits(History)": sk.forecast_limits(hist),
        "forecast_limits(IndexList)": sk.forecast_limits(indexes),
    }


def test_every_frame_of_history_and_usage_saves_to_parquet_and_feather(tmp_path):
    noon = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)
    with Emulator(demo=True, seed=5, clock=noon) as emu, emu.client() as client:
        indexes = client.list_indexes()
        hist = History(tmp_path / "h")
        hist.collect(client, indexes=indexes, now=emu.now())
    frames = _every_frame(hist, indexes)
    empties = _every_frame(History(tmp_path / "empty"), sk.IndexList([]))
    assert all(len(frame) for frame in frames.values())
    assert not any(len(frame) for frame in empties.values())
    for name, frame in frames.items():
        # An empty frame has the dtypes of a full one (whose Parquet files then concatenate).
        assert empties[name].dtypes.astype(str).to_dict() == frame.dtypes.astype(str).to_dict()
        assert empties[name].index.dtype == frame.index.dtype
        for kind, which in (("full", frame), ("empty", empties[name])):
            (tmp_path / name / kind).mkdir(parents=True)
            _round_trips(which, tmp_path / name / kind)


def test_negative_and_infinite_values_are_invalid_points_never_negative_usage(tmp_path):
    # A saved dump whose points say -300, -inf and inf (issue 18, item 9).
    values = [1.0, -300.0, float("-inf"), 2.0, None, float("inf"), -1e308]
    points = [{"x": f"2026-11-20 00:0{m}:00 +0000 UTC", "y": v} for m, v in enumerate(values)]
    dump = tmp_path / "indexes.json"
    dump.write_text(
        json.dumps([index_json("hostile", id="i-1", max_daily_updates=0, throughput_vector=points)])
    )
    usage = sk.usage_frame(json.loads(dump.read_text()))
    row = usage.iloc[0]
    # 1 + 2 + 0 (null) operations per second over the one-minute interval.
    assert (row["operations"], row["points"], row["invalid"]) == (180.0, 3, 4)
    assert (row["utilization"], row["breached"]) == (180.0 / 10_000, False)
    assert list(usage.columns[3:7]) == ["operations", "points", "invalid", "limit"]


@pytest.mark.parametrize(
    ("zone", "start", "minutes", "complete"),
    [
        ("America/New_York", "2026-03-08 05:00", 23 * 60, True),  # 23 hours, all covered
        ("Europe/Berlin", "2026-03-28 23:00", 23 * 60, True),  # 23 hours, all covered
        ("America/New_York", "2026-11-01 04:00", 24 * 60, False),  # 25 hours, one missing
        ("America/New_York", "2026-11-01 04:00", 25 * 60, True),  # 25 hours, all covered
    ],
)
def test_a_dst_day_is_complete_when_its_points_cover_its_own_length(zone, start, minutes, complete):
    usage = sk.usage_frame([index("dst", start, minutes, 1.0)], tz=zone)

    assert usage[["period", "points", "complete"]].to_dict("records") == [
        {
            "period": pd.Timestamp(start, tz="UTC").tz_convert(zone),
            "points": minutes,
            "complete": complete,
        }
    ]
