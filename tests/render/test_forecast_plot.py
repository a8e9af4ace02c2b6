"""plot_forecast draws what the forecast says, and every index keeps one colour."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

import searchkit as sk
from searchkit.analytics.day_forecast import forecast_day
from searchkit.render.themes import THEMES, index_colour, index_slots
from tests.analytics.test_forecast import busy_days, days_of

matplotlib.use("Agg")

UTC = "UTC"
NOW = "2026-11-21 06:00"


@pytest.fixture(scope="module")
def raw():
    return [
        days_of("shaped", 12, busy_days, today_until=6),
        days_of("unlimited", 12, busy_days, today_until=6, queries=-1),
    ]


def legend_texts(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_the_legend_names_each_mark_with_the_forecast_s_numbers(raw):
    ax = sk.plot_forecast(raw, index="shaped", now=NOW, ax=Figure().add_subplot())
    assert legend_texts(ax) == [
        "past 7 complete days",
        "today so far: 21,600",
        "10-90 band",
        "forecast: 201,600 at the reset (profile+weekly)",
        "limit: 100,000 queries + updates a day",
        "hit at 14:35, earliest 14:35, latest 14:35",
        "now: 06:00",
    ]
    assert ax.get_title() == "shaped: today against its limit of queries + updates a day"


def test_the_dashed_path_is_the_forecast_s_and_reaches_the_projected_total(raw):
    ax = sk.plot_forecast(raw, index="id-shaped", now=NOW, ax=Figure().add_subplot())
    (dashed,) = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert dashed.get_ydata()[0] == 21_600.0
    assert dashed.get_ydata()[-1] == pytest.approx(201_600.0, rel=1e-12)
    (limit,) = [line for line in ax.get_lines() if line.get_label().startswith("limit")]
    assert list(limit.get_ydata()) == [100_000.0, 100_000.0]


def test_the_time_axis_follows_the_zone_while_the_day_stays_the_limit_s(raw):
    ax = sk.plot_forecast(
        raw, index="shaped", now=NOW, tz="Asia/Kolkata", ax=Figure().add_subplot()
    )
    assert "hit at 20:05, earliest 20:05, latest 20:05" in legend_texts(ax)
    assert ax.get_xlabel() == "time (Asia/Kolkata); the limit resets at 05:30"


def test_unlimited_is_said_never_drawn(raw):
    ax = sk.plot_forecast(raw, index="unlimited", now=NOW, ax=Figure().add_subplot())
    texts = legend_texts(ax)
    assert "limit of queries + updates a day: unlimited" in texts
    assert not any(t.startswith("hit at") for t in texts)
    assert not [line for line in ax.get_lines() if line.get_label().startswith("limit:")]


def test_without_an_index_it_draws_the_one_that_runs_out_first(raw):
    ax = sk.plot_forecast(forecast_day(raw, NOW), ax=Figure().add_subplot())
    assert ax.get_title().startswith("shaped:")


def test_an_unknown_index_is_refused_naming_the_known_ones(raw):
    # An unknown name or id is an UnknownIndexError everywhere (the README's vocabulary).
    with pytest.raises(
        sk.UnknownIndexError,
        match="no index has the name or id 'nope'; there are: 'shaped', 'unlimited'",
    ):
        sk.plot_forecast(raw, index="nope", now=NOW)


def test_an_index_keeps_its_colour_whatever_else_is_drawn():
    keys = [f"index-{i}" for i in range(30)]
    alone = {key: index_slots([key])[key] for key in keys}
    for key in keys:
        assert alone[key] < 10  # alone, an index has its own colour, solid
        assert index_colour(key, None) == THEMES["light"].colours[alone[key]]
    assert index_colour("index-0", THEMES["dark"]) == THEMES["dark"].colours[alone["index-0"]]


def test_indexes_drawn_together_never_share_a_look():
    keys = [f"index-{i}" for i in range(40)]
    slots = index_slots(keys)
    assert len(set(slots.values())) == 40
    few = index_slots(keys[:10])
    assert sorted(few.values()) == list(range(10))  # ten indexes: ten colours, all solid


def test_the_dark_palette_keeps_neighbouring_colours_apart():
    def rgb(colour: str) -> np.ndarray:
        return np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)], dtype=float)

    dark = [rgb(c) for c in THEMES["dark"].colours]
    distances = [np.abs(a - b).sum() for i, a in enumerate(dark) for b in dark[i + 1 :]]
    assert min(distances) >= 100  # every pair differs by 100 or more in R+G+B
    face = rgb(THEMES["dark"].face)
    assert min(np.abs(c - face).sum() for c in dark) >= 250  # each stands out on the page


def test_past_days_are_drawn_faint_behind_today(raw):
    ax = sk.plot_forecast(raw, index="shaped", now=NOW, past_days=3, ax=Figure().add_subplot())
    faint = [line for line in ax.get_lines() if line.get_alpha() == 0.35]
    assert len(faint) == 3
    assert [line.get_ydata()[-1] for line in faint] == [201_600.0] * 3
    assert pd.Timestamp(NOW, tz=UTC)  # drawn as of the instant asked
