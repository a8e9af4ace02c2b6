"""The utilization heatmap under hostile names."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt

import searchkit as sk
from tests.index_json import index_json


def test_names_with_dollar_signs_are_drawn_literally(tmp_path):
    # "$x^$" is a mathtext parse error when drawn as math (issue 18, item 11).
    points = [{"x": f"2026-11-20 00:0{m}:00 +0000 UTC", "y": 1.0} for m in range(5)]
    raw = [
        index_json("$x^$", id="i-1", throughput_vector=points),
        index_json("price $5 vs $6", id="i-2", throughput_vector=points),
    ]
    ax = sk.plot_utilization(raw)
    png = tmp_path / "utilization.png"
    ax.figure.savefig(png)
    labels = [label.get_text() for label in ax.get_yticklabels()]
    plt.close(ax.figure)
    assert labels == [r"\$x^\$", r"price \$5 vs \$6"]
    assert png.read_bytes().startswith(b"\x89PNG")


def test_dark_theme_draws_the_heatmap_for_a_dark_page_and_keeps_cell_numbers_readable():
    # Issue 19, item 9: the heatmap too; an unlimited index stays without colour (the page's).
    points = [{"x": f"2026-11-20 00:0{m}:00 +0000 UTC", "y": 1.0} for m in range(5)]
    raw = [
        index_json("capped", id="i-1", max_daily_queries=100, max_daily_updates=100,
                   throughput_vector=points),
        index_json("open", id="i-2", max_daily_queries=-1, max_daily_updates=-1,
                   throughput_vector=points),
    ]  # fmt: skip
    ax = sk.plot_utilization(raw, theme="dark")
    hex_of = matplotlib.colors.to_hex
    cells = {t.get_text(): hex_of(t.get_color()) for t in ax.texts}
    legend = [hex_of(t.get_color()) for t in ax.get_legend().get_texts()]
    ticks = {hex_of(t.get_color()) for t in ax.get_yticklabels()}
    bad = hex_of(ax.images[0].get_cmap().get_bad())
    faces = (hex_of(ax.get_facecolor()), hex_of(ax.figure.get_facecolor()))
    plt.close(ax.figure)
    # 5 points x 60 s x 1/s = 300 operations of 200: at least 150 % (5 minutes of a day),
    # a dark cell with white text; legend: over the limit, partial day, unlimited.
    assert cells == {"≥150%": "#ffffff", "unlimited": "#b0b0b0"}
    assert legend == ["#e8e8e8", "#e8e8e8", "#e8e8e8"]
    assert ticks == {"#e8e8e8"}
    assert faces == ("#111111", "#111111") and bad == "#111111"
    with sk.plot_theme("dark"):
        light = sk.plot_utilization(raw, theme="light")
    assert hex_of(light.images[0].get_cmap().get_bad()) == "#ffffff"
    plt.close(light.figure)


def test_past_max_indexes_the_most_used_indexes_are_drawn_and_the_rest_counted():
    # 1,000 rows of labels are a black bar: draw the most used, say how many are left out.
    points = [{"x": f"2026-11-20 00:0{m}:00 +0000 UTC", "y": 1.0} for m in range(5)]
    raw = [
        index_json(name, id=f"i-{n}", max_daily_queries=limit, max_daily_updates=0,
                   throughput_vector=points)
        for n, (name, limit) in enumerate(
            [("a-open", -1), ("b-low", 1000), ("c-high", 100), ("d-mid", 500), ("e-high", 100)]
        )
    ]  # fmt: skip
    ax = sk.plot_utilization(raw, max_indexes=3)
    labels = [label.get_text() for label in ax.get_yticklabels()]
    ylabel = ax.get_ylabel()
    every = sk.plot_utilization(raw, max_indexes=None)
    every_labels = [label.get_text() for label in every.get_yticklabels()]
    plt.close(ax.figure)
    plt.close(every.figure)
    # 300 operations a day: 300% of 100 (c, e), 60% of 500; 30% of 1000; unlimited last
    assert labels == ["c-high", "d-mid", "e-high"]
    assert ylabel == "the 3 of 5 indexes most used\n(2 not shown)"
    assert every_labels == ["a-open", "b-low", "c-high", "d-mid", "e-high"]
    assert every.get_ylabel() == ""


def test_days_of_another_zone_say_why_their_cells_are_blank_and_the_busiest_are_drawn():
    # A daily limit resets at UTC midnight: Kolkata days have no share of it (usage_frame's
    # reason). The heatmap drew 3 white rows, alphabetical, as "most used", saying nothing.
    def points(value):
        return [{"x": f"2026-11-20 0{h}:00:00 +0000 UTC", "y": value} for h in range(6)]

    raw = [
        index_json(name, id=f"i-{n}", max_daily_queries=100, max_daily_updates=0,
                   throughput_vector=points(value))
        for n, (name, value) in enumerate([("a-quiet", 1.0), ("b-busy", 5.0), ("c-mid", 3.0)])
    ]  # fmt: skip
    ax = sk.plot_utilization(raw, tz="Asia/Kolkata", max_indexes=2)
    labels = [label.get_text() for label in ax.get_yticklabels()]
    texts = [" ".join(t.get_text().split()) for t in ax.texts]
    ylabel = ax.get_ylabel()
    utc = sk.plot_utilization(raw, max_indexes=2)
    utc_texts = [t.get_text() for t in utc.texts]
    plt.close(ax.figure)
    plt.close(utc.figure)
    assert labels == ["b-busy", "c-mid"]  # the most operations in a Kolkata day
    assert ylabel == "the 2 of 3 indexes most used\n(1 not shown)"
    assert texts == [
        "No share of the limit to colour: max_daily_queries+max_daily_updates resets at UTC "
        "midnight; these days start at midnight in Asia/Kolkata. (sk.usage_frame has the "
        "operations of each period)"
    ]
    # In UTC the cells have their shares (6 points an hour apart x 3,600 s x 5/s = 108,000
    # operations of 100; partial days), and no words.
    assert utc_texts == ["≥108,000%", "≥64,800%"]
