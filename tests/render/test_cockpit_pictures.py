"""The cockpit's pictures: a fixed size, both themes, and no band of nothing below."""

from __future__ import annotations

import io

import matplotlib
import numpy as np
import pytest
from matplotlib import image

from searchkit.analytics.day_forecast import forecast_day
from searchkit.analytics.usage import usage_frame
from searchkit.render.cockpit_pictures import _pngs, daily_pngs, day_pngs, draw_daily
from searchkit.render.forecast_plot import draw_day
from tests.analytics.test_forecast import busy_days, days_of

matplotlib.use("Agg")

NOW = "2026-11-21 06:00"
FIELD = "max_daily_queries+max_daily_updates"


@pytest.fixture(scope="module")
def raw():
    return [days_of("shaped", 12, busy_days, today_until=6)]


def blank_rows_at_the_bottom(png: bytes) -> int:
    """How many pixel rows at the foot of the picture hold only its background."""
    pixels = image.imread(io.BytesIO(png), format="png")[..., :3]
    background = pixels[-1, 0]
    inked = np.abs(pixels - background).max(axis=(1, 2)) > 0.05
    return int(np.argmax(inked[::-1]))


def test_today_s_picture_ends_below_its_time_axis_label_not_a_band_lower(raw):
    for png in day_pngs(forecast_day(raw, NOW), "id-shaped"):
        assert image.imread(io.BytesIO(png), format="png").shape[:2] == (380, 940)
        # The time axis' label is the last line: a few pixels of margin under it (the
        # picture kept a 0.22 margin for a legend below that only the daily view has:
        # 40 rows of nothing).
        assert blank_rows_at_the_bottom(png) <= 12


def test_the_daily_picture_keeps_room_for_its_legend_below_the_bars(raw):
    light, _ = daily_pngs(usage_frame(raw), "id-shaped", name="shaped", field=FIELD, days=30)
    assert blank_rows_at_the_bottom(light) <= 12


def quiet_days(hour, when) -> float:
    return 0.1


def test_the_dark_picture_recoloured_is_the_dark_picture_drawn_to_the_byte():
    """day_pngs draws once and recolours for the dark theme: the same PNG as drawing it
    dark, for a row past its limit, one hitting it later, one that does not, an unlimited
    one and one with no point today."""
    day = forecast_day(
        [
            days_of("shaped", 12, busy_days, today_until=6),
            days_of("early", 12, busy_days, today_until=6, queries=10_000),
            days_of("quiet", 12, quiet_days, today_until=6),
            days_of("unlimited", 12, busy_days, today_until=6, queries=-1),
            days_of("gone", 11, busy_days),  # no point today
        ],
        NOW,
    )
    rows = day.rows.set_index("name")
    assert rows.loc["early", "hit_at"] < rows.loc["early", "as_of"] < rows.loc["shaped", "hit_at"]
    assert rows["hit_at"].isna().to_dict() == {
        "shaped": False,
        "early": False,
        "quiet": True,
        "unlimited": True,
        "gone": True,
    }
    assert rows.loc["gone", "used"] == 0
    tz = "America/New_York"
    for index_id in day.rows.index:

        def draw(ax, theme, index_id=index_id):
            draw_day(ax, day, index_id, tz=tz, theme=theme)

        light, dark = day_pngs(day, index_id, tz=tz)
        assert (light, dark) == _pngs(draw), index_id  # each drawn in its theme


def test_the_daily_picture_between_two_dates_draws_those_days(raw):
    from matplotlib.figure import Figure

    usage = usage_frame(raw)
    ax = Figure().add_subplot()
    draw_daily(
        ax, usage, "id-shaped", name="shaped", field=FIELD, dates=("2026-11-12", "2026-11-15")
    )
    bars = sorted((bar.get_x() + bar.get_width() / 2, bar.get_height()) for bar in ax.patches)
    days = usage[(usage["period"] >= "2026-11-12") & (usage["period"] <= "2026-11-15")]
    assert [height for _, height in bars] == days["operations"].tolist()
    assert len(bars) == 4
