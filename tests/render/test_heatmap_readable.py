"""The utilization heatmap stays readable at 7, 30 and 90 days and at 1,000 indexes (issue 28,
item 7): no two drawn words overlap (their bounding boxes, measured as drawn), every cell's
number sits inside its cell or none is drawn (and the legend says so), and the legend
hangs under the dates and the axis label.

The pictures are kept in tests/render/artifacts/ (gitignored) to look at.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

import searchkit as sk

ARTIFACTS = Path(__file__).parent / "artifacts"
FIELD = "max_daily_queries+max_daily_updates"
TOO_SMALL = "cells too small for their numbers\n(sk.usage_frame has them)"


def usage_of(days: int, indexes: int) -> pd.DataFrame:
    """A usage frame of ``indexes`` x ``days``: every 7th name long, every 11th unlimited.

    Utilizations from 5% to 2,400% (numbers up to "≥2,400%", the widest a cell holds),
    the last day partial.
    """
    names = [
        f"a-rather-long-index-name-{i:04d}" if i % 7 == 0 else f"index-{i:04d}"
        for i in range(indexes)
    ]
    periods = pd.date_range("2026-11-01", periods=days, freq="D", tz="UTC")
    index = pd.MultiIndex.from_product([range(indexes), periods], names=["n", "period"])
    n = index.get_level_values("n").to_numpy()
    day = np.tile(np.arange(days), indexes)
    unlimited = n % 11 == 5
    utilization = np.where(unlimited, np.nan, 0.05 + ((n * 7 + day * 13) % 48) / 2)
    limit = np.where(unlimited, np.inf, 20_000.0)
    return pd.DataFrame(
        {
            "index_id": [f"i-{i}" for i in n],
            "name": [names[i] for i in n],
            "period": index.get_level_values("period"),
            "operations": np.nan_to_num(utilization, nan=1.0) * 20_000,
            "points": 1440,
            "invalid": 0,
            "limit": limit,
            "utilization": utilization,
            "breached": utilization > 1,
            "complete": day != days - 1,
            "field": FIELD,
            "reason": np.where(unlimited, "unlimited", ""),
        }
    )


def drawn(ax, name: str):
    """Save the figure (drawing it) as an artifact; return the words drawn, by what they are.

    Returns {kind: [(text, bbox), ...]} for the cells' numbers and row words, the dates,
    the names, the axis labels, the title, the colour bar's words, and the legend as one
    block (its own words never count against each other).
    """
    ARTIFACTS.mkdir(exist_ok=True)
    figure = ax.figure
    figure.savefig(ARTIFACTS / f"heatmap-{name}.png")
    print(f"picture: {ARTIFACTS / f'heatmap-{name}.png'}")
    renderer = figure.canvas.get_renderer()

    def box(text):
        return (text.get_text(), text.get_window_extent(renderer))

    def ticks(axis):
        lo, hi = sorted(axis.get_view_interval())
        return [
            box(tick.label1)
            for tick in axis.get_major_ticks()
            if tick.label1.get_visible() and tick.label1.get_text() and lo <= tick.get_loc() <= hi
        ]

    colorbar = next(other for other in figure.axes if other is not ax)
    legend = ax.get_legend()
    words = {
        "cells": [box(t) for t in ax.texts],
        "dates": ticks(ax.xaxis),
        "names": ticks(ax.yaxis),
        "labels": [box(t) for t in (ax.xaxis.label, ax.yaxis.label, ax.title) if t.get_text()],
        "colour bar": [*ticks(colorbar.yaxis), box(colorbar.yaxis.label)],
        "legend": [("legend", legend.get_window_extent(renderer))] if legend else [],
    }
    return words


def overlaps(words) -> list[tuple[str, str]]:
    """Every pair of drawn words whose boxes share more than a boundary."""
    every = [(f"{kind}:{text}", bbox) for kind, found in words.items() for text, bbox in found]
    return [
        (a, b)
        for (a, abox), (b, bbox) in itertools.combinations(every, 2)
        if abox.x0 < bbox.x1 and bbox.x0 < abox.x1 and abox.y0 < bbox.y1 and bbox.y0 < abox.y1
    ]


def outside_the_figure(ax, words) -> list[str]:
    """The drawn words that the figure's edge cuts."""
    page = ax.figure.bbox
    return [
        f"{kind}:{text}"
        for kind, found in words.items()
        for text, box in found
        if box.x0 < page.x0 or box.y0 < page.y0 or box.x1 > page.x1 or box.y1 > page.y1
    ]


def legend_entries(ax) -> list[str]:
    legend = ax.get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend else []


def numbers_outside_their_cells(ax) -> list[str]:
    """The cells' numbers whose box leaves their cell (x: the day, y: the row)."""
    renderer = ax.figure.canvas.get_renderer()
    out = []
    for text in ax.texts:
        if text.get_text() == "unlimited":
            continue
        x, y = text.get_position()
        (left, top), (right, bottom) = ax.transData.transform(
            [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)]
        )
        bbox = text.get_window_extent(renderer)
        if not (left <= bbox.x0 and bbox.x1 <= right and bottom <= bbox.y0 and bbox.y1 <= top):
            out.append(text.get_text())
    return out


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_week_shows_every_number_inside_its_cell_every_date_and_no_words_touch(theme):
    ax = sk.plot_utilization(usage_of(7, 6), theme=theme)
    words = drawn(ax, f"7-days-{theme}")
    assert overlaps(words) == []
    assert outside_the_figure(ax, words) == []
    assert numbers_outside_their_cells(ax) == []
    numbers = [text for text, _ in words["cells"] if text != "unlimited"]
    assert len(numbers) == 7 * 5  # index-0005 is unlimited: one word across its row
    assert numbers[:7] == ["5%", "655%", "1,305%", "1,955%", "205%", "855%", "≥1,505%"]
    assert [text for text, _ in words["dates"]] == [f"Nov {d:02d}" for d in range(1, 8)]
    assert legend_entries(ax) == ["over the limit", "partial day: at least this much", "unlimited"]


def test_thirty_days_leave_the_numbers_out_say_so_and_thin_the_dates():
    ax = sk.plot_utilization(usage_of(30, 30))
    words = drawn(ax, "30-days-30-indexes")
    assert overlaps(words) == []
    assert outside_the_figure(ax, words) == []
    assert [text for text, _ in words["cells"]] == ["unlimited"] * 3
    assert [text for text, _ in words["dates"]] == [
        "Nov 01",
        "Nov 08",
        "Nov 15",
        "Nov 22",
        "Nov 29",
    ]
    assert len(words["names"]) == 30
    assert legend_entries(ax) == ["over the limit", "unlimited", TOO_SMALL]


def test_ninety_days_show_weekly_dates_and_colour_alone_where_a_cross_would_be_a_dot():
    ax = sk.plot_utilization(usage_of(90, 30), theme="dark")
    words = drawn(ax, "90-days-30-indexes-dark")
    assert overlaps(words) == []
    assert outside_the_figure(ax, words) == []
    assert [text for text, _ in words["dates"]] == [
        "Nov 01", "Nov 15", "Nov 29", "Dec 13", "Dec 27", "Jan 10", "Jan 24",
    ]  # fmt: skip
    assert len(ax.collections) == 0  # no crosses: a cell is narrower than one
    assert legend_entries(ax) == ["unlimited", TOO_SMALL]


def test_a_year_of_days_shows_dates_eight_weeks_apart_laid_out_from_weekly_ticks():
    # A year is laid out from weekly dates (365 ticks took seconds to lay out), and thinned
    # to the step every day's ticks gave: every 56th day.
    ax = sk.plot_utilization(usage_of(365, 40), max_indexes=None)
    words = drawn(ax, "365-days-40-indexes")
    assert overlaps(words) == []
    assert outside_the_figure(ax, words) == []
    assert [text for text, _ in words["dates"]] == [
        "Nov 01", "Dec 27", "Feb 21", "Apr 18", "Jun 13", "Aug 08", "Oct 03",
    ]  # fmt: skip


def test_a_thousand_indexes_draw_the_thirty_most_used_and_count_the_rest():
    ax = sk.plot_utilization(usage_of(30, 1000))
    words = drawn(ax, "30-days-1000-indexes")
    assert overlaps(words) == []
    assert outside_the_figure(ax, words) == []
    assert len(words["names"]) == 30
    assert ax.get_ylabel() == "the 30 of 1,000 indexes most used\n(970 not shown)"


def test_a_thousand_indexes_all_drawn_thin_their_names_until_they_keep_apart():
    ax = sk.plot_utilization(usage_of(7, 1000), max_indexes=None)
    words = drawn(ax, "7-days-1000-indexes-all")
    assert overlaps(words) == []
    assert outside_the_figure(ax, words) == []
    names = [text for text, _ in words["names"]]
    step = 1000 // len(names) + (1000 % len(names) > 0)
    assert names[:2] == [
        "a-rather-long-index-name-0000",
        sorted(set(usage_of(1, 1000)["name"]))[step],
    ]
    assert [text for text, _ in words["cells"]] == []  # 1,000 rows have no room for words
    assert legend_entries(ax) == ["unlimited", TOO_SMALL]


def test_a_heatmap_on_a_given_small_axes_keeps_its_words_apart_too():
    # The demo draws on an Axes of its own figure (11 x 4 inches): the same fitting applies.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(8, 3.5), layout="constrained")
    FigureCanvasAgg(figure)
    ax = sk.plot_utilization(usage_of(21, 6), ax=figure.add_subplot())
    words = drawn(ax, "21-days-small-axes")
    assert overlaps(words) == []
    assert outside_the_figure(ax, words) == []
    assert numbers_outside_their_cells(ax) == []
