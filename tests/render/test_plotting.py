"""plot_throughput and plot_limits draw what they promise on the Axes they return."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.figure import Figure

from searchkit.errors import ValidationError
from searchkit.frames.limits_frames import limits_frame
from searchkit.frames.throughput_frames import throughput_frame, throughput_series
from searchkit.model.index import IndexList
from searchkit.render.limit_bars import plot_limits
from searchkit.render.plots import plot_throughput
from searchkit.render.themes import THEMES, index_colour
from tests.analytics_data import raw_index, realistic_indexes

NAMES = ["docs-search", "product-catalog", "support-tickets", "code-snippets", "legal-contracts"]


@pytest.fixture(scope="module")
def indexes():
    return realistic_indexes(minutes=120)


@pytest.fixture
def ax():
    return Figure(figsize=(8, 4)).add_subplot()


@pytest.fixture(autouse=True)
def _no_show(monkeypatch):
    # A plotting helper must never pop up a window or block: fail if it tries.
    def refuse(*args, **kwargs):
        raise AssertionError("plt.show() was called")

    monkeypatch.setattr(plt, "show", refuse)


def legend_labels(ax) -> list[str]:
    legend = ax.get_legend()
    return [] if legend is None else [t.get_text() for t in legend.get_texts()]


def texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


# --- throughput --------------------------------------------------------------------------


def test_one_line_per_index_with_a_legend_by_name(indexes, ax):
    returned = plot_throughput(indexes, ax=ax, title="last two hours")
    assert returned is ax
    assert [line.get_label() for line in ax.get_lines()] == NAMES
    assert legend_labels(ax) == NAMES
    assert ax.get_title() == "last two hours"


def test_axis_labels_name_throughput_and_the_time_zone(indexes, ax):
    plot_throughput(indexes, ax=ax, names=["docs-search", "legal-contracts"])
    assert ax.get_ylabel() == "throughput (operations/s, assumed)"
    assert ax.get_xlabel() == "time (UTC)"
    assert isinstance(ax.xaxis.get_major_formatter(), mdates.ConciseDateFormatter)


def test_tz_sets_the_date_axis_zone(indexes, ax):
    plot_throughput(indexes, ax=ax, tz="Asia/Kathmandu")
    assert ax.get_xlabel() == "time (Asia/Kathmandu)"
    # The data start at 12:00 UTC, which the axis shows as 17:45 in Kathmandu.
    start = mdates.date2num(np.datetime64("2026-03-28T12:00:00"))
    labels = ax.xaxis.get_major_formatter().format_ticks([start, start + 1 / 24])
    assert labels[0] == "17:45"


def test_lines_carry_every_point_at_its_instant(indexes, ax):
    plot_throughput(indexes[:1], ax=ax)
    frame = throughput_frame(indexes[:1])
    x, y = ax.get_lines()[0].get_data()
    assert len(x) == len(frame) == 120
    expected = frame["time"].dt.tz_localize(None).to_numpy()
    assert np.array_equal(np.asarray(x, dtype="datetime64[ns]"), expected)
    np.testing.assert_array_equal(y, frame["value"].to_numpy())


def test_resample_plots_period_means(indexes, ax):
    plot_throughput(indexes[:1], ax=ax, resample="15min")
    _, y = ax.get_lines()[0].get_data()
    series = throughput_series(indexes[0])
    assert len(y) == len(series.resample("15min").mean())
    assert y[1] == pytest.approx(series.resample("15min").mean().iloc[1])


@pytest.mark.parametrize(
    ("resample", "label"),
    [
        ("15min", "time (UTC); 15-minute means"),
        ("1h", "time (UTC); hourly means"),
        ("6h", "time (UTC); 6-hour means"),
        ("W", "time (UTC); means per W-SUN"),
    ],
)
def test_an_asked_resampling_is_named_on_the_x_axis_as_auto_names_its_own(
    indexes, ax, resample, label
):
    # make demo's throughput.png said "time (UTC);": a separator with nothing after it.
    plot_throughput(indexes, ax=ax, resample=resample)
    assert ax.get_xlabel() == label


def test_bad_resample_is_a_validation_error(indexes, ax):
    with pytest.raises(ValidationError, match="resample"):
        plot_throughput(indexes, ax=ax, resample="every now and then")


def test_single_point_index_is_drawn_with_a_marker(ax):
    one = raw_index("lonely", minutes=1, seed=1)
    many = raw_index("busy", minutes=30, seed=2)
    one["throughput_vector"][0]["y"] = 3.0
    plot_throughput([one, many], ax=ax)
    markers = {line.get_label(): line.get_marker() for line in ax.get_lines()}
    assert markers["lonely"] == "o"
    assert markers["busy"] in (None, "None", "")


def test_no_data_says_so(ax):
    plot_throughput([{"id": "a", "name": "empty", "throughput_vector": []}], ax=ax)
    assert ax.get_lines() == []
    assert "no throughput data" in texts(ax)
    assert ax.get_ylabel() == "throughput (operations/s, assumed)"


def test_no_indexes_at_all_says_so(ax):
    plot_throughput([], ax=ax)
    assert "no throughput data" in texts(ax)


@pytest.mark.parametrize(
    "convert",
    [
        throughput_frame,
        lambda raw: throughput_frame(raw, wide=True),
        lambda raw: IndexList.from_json(raw),
    ],
    ids=["tidy", "wide", "models"],
)
def test_frames_and_models_plot_like_raw_json(indexes, convert):
    expected = plot_throughput(indexes, ax=Figure().add_subplot())
    actual = plot_throughput(convert(indexes), ax=Figure().add_subplot())
    assert legend_labels(actual) == legend_labels(expected)
    for a, b in zip(actual.get_lines(), expected.get_lines(), strict=True):
        # A wide frame cannot tell a null value from a time another index has: both are
        # NaN, and neither is drawn, so compare what is drawn.
        drawn = b.get_ydata()[~np.isnan(b.get_ydata())]
        np.testing.assert_array_equal(a.get_ydata()[~np.isnan(a.get_ydata())], drawn)


def test_levels_tenfold_apart_get_a_symlog_axis_that_keeps_zeros_and_says_so(ax):
    quiet = raw_index("quiet", minutes=60, seed=1)
    busy = raw_index("busy", minutes=60, seed=2)
    for p in quiet["throughput_vector"]:
        p["y"] = 2.0
    for p in busy["throughput_vector"]:
        p["y"] = 20.0
    quiet["throughput_vector"][3]["y"] = 0
    plot_throughput([quiet, busy], ax=ax)
    assert ax.get_yscale() == "symlog"
    assert ax.get_ylabel() == "throughput (operations/s, assumed)\nsymlog: linear below 1"
    assert ax.get_ylim()[0] == 0


def test_levels_less_than_tenfold_apart_keep_a_linear_axis_from_zero(indexes, ax):
    # docs-search and legal-contracts: medians about 318 and 241
    plot_throughput([indexes[0], indexes[4]], ax=ax)
    assert ax.get_yscale() == "linear"
    assert ax.get_ylim()[0] == 0


def test_indexes_sharing_a_name_are_told_apart_in_the_legend(ax):
    one = raw_index("twin", minutes=5, seed=1, id="id-1")
    two = raw_index("twin", minutes=5, seed=2, id="id-2")
    plot_throughput([one, two], ax=ax)
    assert legend_labels(ax) == ["twin (id-1)", "twin (id-2)"]


def test_a_series_plots_as_one_named_line(indexes, ax):
    plot_throughput(throughput_series(indexes[2]), ax=ax)
    assert legend_labels(ax) == ["support-tickets"]


def test_frame_in_a_zone_keeps_its_zone(indexes, ax):
    plot_throughput(throughput_frame(indexes, tz="America/St_Johns"), ax=ax)
    assert ax.get_xlabel() == "time (America/St_Johns)"


def test_without_ax_a_new_figure_is_made(indexes):
    ax = plot_throughput(indexes)
    try:
        assert len(ax.get_lines()) == 5
    finally:
        plt.close(ax.figure)


def test_unexpected_frame_is_refused(ax):
    import pandas as pd

    with pytest.raises(ValidationError, match="throughput frame"):
        plot_throughput(pd.DataFrame({"a": [1]}), ax=ax)


# --- limits ------------------------------------------------------------------------------


def bar_widths(ax) -> list[float]:
    return [patch.get_width() for patch in ax.patches]


def test_one_bar_per_index_labelled_by_name(indexes, ax):
    returned = plot_limits(indexes, field="max_writes_per_second", ax=ax)
    assert returned is ax
    assert [t.get_text() for t in ax.get_yticklabels()] == NAMES
    assert bar_widths(ax) == [1000, 5000, 1000, 1000, 1000]
    assert ax.get_xscale() == "linear"
    assert ax.get_title() == "Limit: writes per second (max_writes_per_second)"
    assert ax.get_xlabel() == "writes per second"
    assert texts(ax) == ["1,000", "5,000", "1,000", "1,000", "1,000"]


def tick_labels(ax) -> list[str]:
    """The x tick labels a reader sees: drawn, inside the axis."""
    ax.figure.canvas.draw()
    low, high = ax.get_xlim()
    return [t.get_text() for t in ax.get_xticklabels() if low <= t.get_position()[0] <= high]


def test_the_demos_limit_ticks_read_like_its_bar_labels():
    # What `searchkit demo` draws in limits.png: two limits of 10,000, four unlimited.
    fig = Figure(figsize=(9, 4.5), layout="constrained")
    raw = [raw_index(f"index-{n}", max_daily_queries=-1) for n in range(4)]
    raw[1:1] = [raw_index(name, max_daily_queries=10_000) for name in ("tickets", "snippets")]
    ax = plot_limits(raw, field="max_daily_queries", ax=fig.add_subplot())
    assert tick_labels(ax) == ["0", "2,000", "4,000", "6,000", "8,000", "10,000", "12,000"]
    assert [t for t in texts(ax) if t != "unlimited"] == ["10,000", "10,000"]


def test_limit_ticks_are_plain_numbers_on_a_linear_axis(indexes, ax):
    plot_limits(indexes, field="max_writes_per_second", ax=ax)
    assert tick_labels(ax) == ["0", "1,000", "2,000", "3,000", "4,000", "5,000", "6,000"]


def test_limit_ticks_are_plain_numbers_on_a_log_axis_every_other_decade_when_many(ax):
    raw = [raw_index(f"i{n}", max_vector_count=10 ** (n + 2)) for n in range(9)]  # 100 .. 1e10
    plot_limits(raw, field="max_vector_count", ax=ax)
    assert ax.get_xscale() == "log"
    assert tick_labels(ax) == ["100", "10,000", "1,000,000", "100,000,000", "10,000,000,000"]


def test_first_index_is_on_top(indexes, ax):
    plot_limits(indexes, field="max_writes_per_second", ax=ax)
    bottom, top = ax.get_ylim()
    assert bottom > top  # inverted: row 0 at the top


def test_unlimited_is_a_hatched_bar_to_the_axis_edge(indexes, ax):
    plot_limits(indexes, field="max_daily_queries", ax=ax)
    hatched = [p for p in ax.patches if p.get_hatch()]
    assert len(hatched) == 1
    bar = hatched[0]
    assert bar.get_x() + bar.get_width() == pytest.approx(ax.get_xlim()[1])
    assert "unlimited" in texts(ax)


def test_missing_is_labelled_with_a_dash_and_zero_as_zero(indexes, ax):
    plot_limits(indexes, field="max_daily_queries", ax=ax)
    labels = texts(ax)
    assert labels == ["unlimited", "50,000,000", "10,000", "0", "—"]


def test_values_spanning_orders_of_magnitude_use_a_log_axis(indexes, ax):
    plot_limits(indexes, field="max_daily_queries", ax=ax)
    assert ax.get_xscale() == "log"
    # The smallest bar is visible: the axis starts below it.
    assert ax.get_xlim()[0] < 10_000


def test_bandwidth_is_labelled_in_bytes(indexes, ax):
    plot_limits(indexes, field="max_monthly_bandwidth", ax=ax)
    assert "200 GB" in texts(ax)


def test_only_unlimited_and_missing_still_draws(ax):
    raw = [raw_index("a", max_daily_updates=-1), raw_index("b", max_daily_updates=None)]
    plot_limits(raw, field="max_daily_updates", ax=ax)
    assert texts(ax) == ["unlimited", "—"]


def test_limits_frame_input_plots_like_indexes(indexes):
    expected = plot_limits(indexes, ax=Figure().add_subplot())
    actual = plot_limits(limits_frame(indexes), ax=Figure().add_subplot())
    assert texts(actual) == texts(expected)
    assert bar_widths(actual) == bar_widths(expected)


def test_no_indexes_says_so(ax):
    plot_limits([], ax=ax)
    assert "no indexes" in texts(ax)


def test_unknown_field_is_a_validation_error(indexes, ax):
    with pytest.raises(ValidationError, match="max_everything"):
        plot_limits(indexes, field="max_everything", ax=ax)


def test_plots_render_to_png(indexes, tmp_path):
    fig = Figure(figsize=(10, 7), layout="constrained")
    top, bottom = fig.subplots(2, 1)
    plot_throughput(indexes, ax=top, tz="Europe/Berlin", resample="5min")
    plot_limits(indexes, ax=bottom)
    fig.savefig(tmp_path / "both.png", dpi=60)
    assert (tmp_path / "both.png").stat().st_size > 10_000


# --- names are data (issue 11.6), names=, and many indexes (issue 10.3) ------------------

ODD_NAMES = ["price $\\frac{1}{$", "_hidden", "$5 vs $6"]


def shows_literally(text, name: str) -> bool:
    """Whether matplotlib draws ``text`` as ``name`` itself: no mathtext, nothing dropped."""
    from matplotlib import cbook

    source = text.get_text()
    return not cbook.is_math_text(source) and source.replace(r"\$", "$") == name


@pytest.mark.parametrize("name", ODD_NAMES)
def test_throughput_legend_shows_a_name_literally(name):
    figure = Figure(figsize=(6, 3))
    ax = figure.add_subplot()
    plot_throughput([raw_index(name, minutes=5, seed=1)], ax=ax)
    (entry,) = ax.get_legend().get_texts()
    assert shows_literally(entry, name)
    figure.canvas.draw()  # renders without a mathtext error


@pytest.mark.parametrize("name", ODD_NAMES)
def test_limits_tick_label_shows_a_name_literally(name):
    figure = Figure(figsize=(6, 3))
    ax = figure.add_subplot()
    plot_limits([raw_index(name, max_daily_queries=10)], field="max_daily_queries", ax=ax)
    (label,) = ax.get_yticklabels()
    assert shows_literally(label, name)
    figure.canvas.draw()


def test_all_odd_names_share_one_legend(ax):
    raw = [raw_index(n, minutes=5, seed=s) for s, n in enumerate(ODD_NAMES)]
    plot_throughput(raw, ax=ax)
    assert [t.get_text().replace(r"\$", "$") for t in ax.get_legend().get_texts()] == ODD_NAMES


def test_names_plots_only_the_indexes_named(indexes, ax):
    plot_throughput(indexes, ax=ax, names=["support-tickets", "docs-search"])
    assert legend_labels(ax) == ["docs-search", "support-tickets"]


def test_names_that_match_no_index_are_refused(indexes, ax):
    with pytest.raises(ValidationError, match="no index named 'nope'"):
        plot_throughput(indexes, ax=ax, names=["docs-search", "nope"])


def test_past_max_indexes_the_busiest_are_drawn_and_the_rest_counted(ax):
    raw = [raw_index(f"index-{n:02d}", minutes=5, seed=n) for n in range(30)]
    for n, index in enumerate(raw):
        for point in index["throughput_vector"]:
            point["y"] = float(n + 1)  # index-29 is the busiest
    plot_throughput(raw, ax=ax, max_indexes=20)
    assert legend_labels(ax) == [f"index-{n:02d}" for n in range(29, 9, -1)]
    assert ax.get_legend().get_title().get_text() == "top 20 of 30 by volume\n(10 not shown)"


def test_max_indexes_none_draws_every_index(ax):
    raw = [raw_index(f"index-{n:02d}", minutes=5, seed=n) for n in range(25)]
    plot_throughput(raw, ax=ax, max_indexes=None)
    assert len(ax.get_lines()) == 25
    assert ax.get_legend().get_title().get_text() == "index"


def test_limit_titles_are_words_and_bandwidth_ticks_are_bytes(indexes, ax):
    plot_limits(indexes, field="max_monthly_bandwidth", ax=ax)
    assert ax.get_title() == "Limit: bandwidth per month (max_monthly_bandwidth)"
    assert ax.get_xlabel() == "bytes per month"
    formatter = ax.xaxis.get_major_formatter()
    assert formatter(5e10, 0) == "50 GB"


# --- one look per line, plain-number ticks, themes (issue 19, items 8 and 9) -----------------


def many_indexes(count: int) -> list[dict]:
    return [raw_index(f"index-{n:02d}", minutes=30, seed=n) for n in range(count)]


def test_twenty_lines_have_twenty_different_looks(ax):
    plot_throughput(many_indexes(20), ax=ax)
    looks = [
        (matplotlib.colors.to_hex(line.get_color()), line.get_linestyle())
        for line in ax.get_lines()
    ]
    assert len(looks) == 20
    assert len(set(looks)) == 20
    assert {style for _, style in looks} == {"-", "--"}  # ten colours, then dashed
    legend = ax.get_legend()
    assert [h.get_linestyle() for h in legend.legend_handles] == [s for _, s in looks]


def test_forty_lines_drawn_on_request_still_differ(ax):
    plot_throughput(many_indexes(40), ax=ax, max_indexes=None)
    looks = {
        (matplotlib.colors.to_hex(line.get_color()), line.get_linestyle())
        for line in ax.get_lines()
    }
    assert len(looks) == 40


def test_symlog_ticks_are_plain_numbers_not_si_prefixes(ax):
    quiet = raw_index("quiet", minutes=60, seed=1)
    busy = raw_index("busy", minutes=60, seed=2)
    for p in quiet["throughput_vector"]:
        p["y"] = 0.2
    for p in busy["throughput_vector"]:
        p["y"] = 5000.0
    plot_throughput([quiet, busy], ax=ax)
    ax.figure.canvas.draw()
    assert ax.get_yscale() == "symlog"
    shown = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert {"0.1", "1", "10", "100", "1,000"} <= set(shown), shown
    assert not [t for t in shown if t[-1] in "mkMGµ"], shown
    assert ax.get_ylabel() == "throughput (operations/s, assumed)\nsymlog: linear below 0.1"


def face(ax) -> str:
    return matplotlib.colors.to_hex(ax.get_facecolor())


def test_dark_theme_draws_for_a_dark_page(indexes, ax):
    plot_throughput(indexes, ax=ax, theme="dark")
    assert face(ax) == matplotlib.colors.to_hex(ax.figure.get_facecolor()) == "#111111"
    assert matplotlib.colors.to_hex(ax.yaxis.label.get_color()) == "#e8e8e8"
    assert {matplotlib.colors.to_hex(t.get_color()) for t in ax.get_legend().get_texts()} == {
        "#e8e8e8"
    }
    first = ax.get_lines()[0]
    key = next(str(i["id"]) for i in indexes if i["name"] == first.get_label())
    assert matplotlib.colors.to_hex(first.get_color()) == index_colour(key, THEMES["dark"])


def test_plot_theme_block_applies_to_every_plot_and_a_call_can_override_it(indexes):
    from searchkit.render.themes import plot_theme

    with plot_theme("dark"):
        dark = plot_limits(indexes, ax=Figure().add_subplot())
        light = plot_throughput(indexes, ax=Figure().add_subplot(), theme="light")
    after = plot_limits(indexes, ax=Figure().add_subplot())
    assert (face(dark), face(light), face(after)) == ("#111111", "#ffffff", "#ffffff")
    assert matplotlib.colors.to_hex(dark.patches[0].get_facecolor()) == THEMES["dark"].colours[0]


def test_an_unknown_theme_is_refused_naming_it(indexes, ax):
    from searchkit.render.themes import plot_theme

    with pytest.raises(ValidationError, match="theme must be 'light' or 'dark', got 'blue'"):
        plot_throughput(indexes, ax=ax, theme="blue")
    with pytest.raises(ValidationError, match="got 'Dark'"), plot_theme("Dark"):
        pass


def test_the_busiest_are_counted_as_usage_counts_them_invalid_values_for_nothing(ax):
    # One rule for a valid value (issue 26 item 1): a negative or infinite value is no
    # usage, here as in usage_frame, so a broken sensor does not make an index the busiest
    # (nor a negative one hide a busy index).
    import pandas as pd

    times = pd.date_range("2026-11-20 10:00", periods=5, freq="min", tz="UTC")
    values = {
        "busy": [9.0] * 5,
        "broken": [1.0, np.inf, 1.0, 1.0, 1.0],
        "quiet": [2.0] * 5,
        "negative": [50.0, -1e6, 50.0, 50.0, 50.0],
    }
    frame = pd.DataFrame(
        {
            "index_id": np.repeat([f"id-{n}" for n in values], 5),
            "name": np.repeat(list(values), 5),
            "time": np.tile(times, len(values)),
            "value": np.concatenate(list(values.values())),
        }
    )
    plot_throughput(frame, ax=ax, max_indexes=2, resample=None)
    assert legend_labels(ax) == ["negative", "busy"]
