"""The 0.1.0 spellings still work through 0.2.x: same result, one DeprecationWarning each.

Each test calls the old spelling and the new one and compares what they give, and checks
the warning's category and words (it says what to write instead).
"""

from __future__ import annotations

import datetime as dt
import warnings

import matplotlib
import pandas as pd
import pytest

matplotlib.use("Agg")

import searchkit as sk
from searchkit.emulator import Emulator
from tests.analytics.test_usage import index

RAW = [
    index("steady", "2026-11-19 00:00", 2880, 0.25),
    index("heavy", "2026-11-19 00:00", 2880, 1.0, queries=30_000, updates=0),
]
GOES = r"\(the old spelling goes in searchkit 0\.3\.0\)"


@pytest.fixture(scope="module")
def hist(tmp_path_factory):
    noon = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)
    with Emulator(demo=True, seed=5, clock=noon) as emu, emu.client() as client:
        history = sk.History(tmp_path_factory.mktemp("deprecations") / "h")
        history.collect(client, now=emu.now())
    return history


def new(call, *args, **kwargs):
    """Call with the new spelling: no warning at all."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return call(*args, **kwargs)


@pytest.mark.parametrize(
    ("function", "old"),
    [
        (sk.limits_frame, "indexes"),
        (sk.throughput_frame, "indexes"),
        (sk.limits_table, "indexes_or_frame"),
        (sk.limits_summary, "indexes_or_frame"),
    ],
)
def test_the_old_name_of_the_first_argument_warns_and_gives_the_same_frame(function, old):
    expected = new(function, RAW)
    message = rf"^{function.__name__}\(\): the argument '{old}' is now called 'source' {GOES}$"
    with pytest.warns(DeprecationWarning, match=message):
        got = function(**{old: RAW})
    pd.testing.assert_frame_equal(got, expected)


def test_throughput_intervals_frame_keyword_warns_and_gives_the_same_intervals():
    tp = sk.throughput_frame(RAW)
    with pytest.warns(DeprecationWarning, match="'frame' is now called 'source'"):
        got = sk.throughput_intervals(frame=tp)
    pd.testing.assert_series_equal(got, new(sk.throughput_intervals, tp))


def test_usage_frame_options_by_position_warn_and_give_the_same_frame():
    expected = new(
        sk.usage_frame, RAW, freq="W", tz="Europe/Berlin", field="max_daily_queries",
        value_unit="per_minute",
    )  # fmt: skip
    message = (
        r"^usage_frame\(\): pass freq, tz, field, value_unit by keyword \(freq=\.\.\., "
        r"tz=\.\.\., field=\.\.\., value_unit=\.\.\.\); options after the first argument are "
        rf"keyword-only {GOES}$"
    )
    with pytest.warns(DeprecationWarning, match=message):
        got = sk.usage_frame(RAW, "W", "Europe/Berlin", "max_daily_queries", "per_minute")
    pd.testing.assert_frame_equal(got, expected)


def test_forecast_limits_now_by_position_warns_and_gives_the_same_forecast():
    expected = new(sk.forecast_limits, RAW, now="2026-11-20 06:00")
    with pytest.warns(DeprecationWarning, match=r"forecast_limits\(\): pass now by keyword"):
        got = sk.forecast_limits(RAW, "2026-11-20 06:00")
    pd.testing.assert_frame_equal(got, expected)


def test_a_warning_points_at_the_callers_line():
    with pytest.warns(DeprecationWarning) as seen:
        sk.usage_frame(RAW, "D")
    assert seen[0].filename == __file__


def test_plot_options_by_position_and_old_keywords_warn_and_draw_the_same():
    expected = new(sk.plot_limits, RAW, field="max_daily_updates")
    with pytest.warns(DeprecationWarning, match=r"plot_limits\(\): pass field by keyword"):
        got = sk.plot_limits(RAW, "max_daily_updates")
    assert [p.get_width() for p in got.patches] == [p.get_width() for p in expected.patches]
    assert got.get_title() == expected.get_title() == "Limit: updates per day (max_daily_updates)"

    ax = new(sk.plot_throughput, RAW).figure.add_subplot(2, 1, 2)
    with pytest.warns(DeprecationWarning, match=r"plot_utilization\(\): pass ax by keyword"):
        drawn = sk.plot_utilization(RAW, ax)
    assert drawn is ax

    with pytest.warns(DeprecationWarning, match="'max_rows' is now called 'max_indexes'"):
        few = sk.plot_utilization(RAW, max_rows=1)
    assert [t.get_text() for t in few.get_yticklabels()] == [
        t.get_text() for t in new(sk.plot_utilization, RAW, max_indexes=1).get_yticklabels()
    ]
    with pytest.warns(DeprecationWarning, match="'max_lines' is now called 'max_indexes'"):
        one = sk.plot_throughput(RAW, max_lines=1)
    assert len(one.get_lines()) == len(new(sk.plot_throughput, RAW, max_indexes=1).get_lines())


def test_history_options_by_position_warn_and_read_the_same(hist):
    expected = new(hist.throughput, start="2026-11-20", end="2026-11-20 06:00")
    with pytest.warns(DeprecationWarning, match=r"History\.throughput\(\): pass start, end"):
        got = hist.throughput("2026-11-20", "2026-11-20 06:00")
    pd.testing.assert_frame_equal(got, expected)
    assert len(got) > 0
    with pytest.warns(DeprecationWarning, match=r"History\.limits\(\): pass at by keyword"):
        limits = hist.limits("2026-11-20 12:00")
    pd.testing.assert_frame_equal(limits, new(hist.limits, at="2026-11-20 12:00"))


def test_history_points_by_position_warn_and_read_the_same_points(hist):
    expected = new(hist.points, start="2026-11-20", end="2026-11-20 06:00")
    with pytest.warns(DeprecationWarning, match=r"History\.points\(\): pass start, end"):
        got = hist.points("2026-11-20", "2026-11-20 06:00")
    assert got.ids == expected.ids and len(got.ids) == 6, got.ids
    assert got.values.tolist() == expected.values.tolist() and len(got.values) > 0
    assert got.times.tolist() == expected.times.tolist()


def test_the_old_views_of_an_index_s_points_warn_and_give_the_same_points():
    item = sk.IndexList.from_json(RAW)["steady"]
    with pytest.warns(DeprecationWarning, match=r"^SearchIndex\.throughput_raw is deprecated"):
        raw = item.throughput_raw
    assert raw == tuple(item.throughput.points()) == tuple(RAW[0]["throughput_vector"])
    with pytest.warns(DeprecationWarning, match=r"^SearchIndex\.throughput_vector is deprecated"):
        pairs = item.throughput_vector
    assert [(p.x, p.y) for p in pairs] == [(p["x"], p["y"]) for p in RAW[0]["throughput_vector"]]


def test_history_warning_has_one_class_at_its_old_and_new_homes():
    from searchkit.errors import HistoryWarning
    from searchkit.history.layout import HistoryWarning as old_home

    assert sk.HistoryWarning is HistoryWarning is old_home


def test_old_and_new_spelling_together_or_too_many_positions_are_type_errors():
    with pytest.raises(TypeError, match="got both 'indexes' and its new name 'source'"):
        sk.limits_frame(source=RAW, indexes=RAW)
    with pytest.raises(TypeError, match=r"got 5 options by position, at most 4 allowed"):
        sk.usage_frame(RAW, "D", None, None, "per_second", "extra")
    with pytest.raises(TypeError, match="got multiple values for argument 'freq'"):
        sk.usage_frame(RAW, "D", freq="W")


def test_emulator_add_user_read_only_by_position_warns_and_adds_the_same_account():
    # Options after the required arguments are keyword-only everywhere (issue 26 item 4).
    with Emulator() as emu:
        with pytest.warns(DeprecationWarning, match=r"add_user\(\): pass read_only by keyword"):
            old = emu.add_user("reader", "secret-1", True)
        made = new(emu.add_user, "reader-2", "secret-2", read_only=True)
        assert (old.username, old.read_only) == ("reader", True)
        assert (made.username, made.read_only) == ("reader-2", True)
