"""The cockpit's pictures: a fixed size, both themes, and no band of nothing below."""

from __future__ import annotations

import io

import matplotlib
import numpy as np
import pytest
from matplotlib import image

from searchkit.analytics.day import forecast_day
from searchkit.analytics.usage import usage_frame
from searchkit.render.cockpit_pictures import daily_pngs, day_pngs
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
