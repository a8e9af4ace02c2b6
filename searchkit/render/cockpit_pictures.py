"""The cockpit's pictures of one index, drawn for JupyterLab's light and dark themes.

Two views: today against the limit with the forecast fan (:func:`~searchkit.render.
forecast_plot.draw_day`), and the daily usage against the limit over a range of days
(:func:`draw_daily`, with the heatmap's rules: a partial day says "at least", a breach is
marked, unlimited is said and never drawn as 0%). Each is a PNG of a fixed size: what
reaches the browser is the picture, never the points.
"""

from __future__ import annotations

import html
import io
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from searchkit.render.forecast_plot import draw_day, limit_words, retheme_day
from searchkit.render.formats import format_limit, plain_number
from searchkit.render.plots import NOTE_STYLE, literal, themed
from searchkit.render.themes import index_slots, line_look, theme_of

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from searchkit.analytics.day_forecast import DayForecast

__all__ = ["FIGURE_SIZE", "cockpit_html", "daily_pngs", "day_pngs", "draw_daily", "warm_up"]

#: Inches at 100 dpi: 940 x 380 pixels, the width of a notebook's output area.
FIGURE_SIZE = (9.4, 3.8)
# Room for the y label and its plain-number ticks, the title, the time axis' ticks and
# label, and (the daily view) the legend below the bars; no more, so no band of nothing.
_MARGINS = {"left": 0.12, "right": 0.97, "top": 0.92, "bottom": 0.14}
_DAILY_MARGINS = _MARGINS | {"bottom": 0.22}


def warm_up() -> None:
    """Load what the first picture needs (matplotlib's figure and Agg canvas, the fonts of
    the labels) by drawing a tiny one: the cockpit does it on a thread of its own while it
    reads the store, so the first picture does not wait for a second of imports after it."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(1, 1), dpi=20)
    ax = figure.add_subplot()
    ax.set_title("0")
    ax.plot([0, 1], [0, 1])
    figure.savefig(io.BytesIO(), format="png")


def _pngs(draw: Any, margins: dict[str, float] = _MARGINS) -> tuple[bytes, bytes]:
    """Draw twice on a bare Figure (no pyplot: nothing global, nothing shown) as PNG."""
    out = []
    for theme in ("light", "dark"):
        figure = _figure(theme, margins)
        draw(figure.add_subplot(), theme)
        out.append(_png(figure))
    return out[0], out[1]


def day_pngs(
    day: DayForecast, index_id: str, *, tz: Any = "UTC", past_days: int = 7
) -> tuple[bytes, bytes]:
    """Today's picture of one index (light, dark) as PNG bytes: drawn once, in the light
    theme, then recoloured for the dark one (the same picture as drawn dark)."""
    figure = _figure("light", _MARGINS)
    ax = figure.add_subplot()
    draw_day(ax, day, index_id, tz=tz, past_days=past_days, theme="light")
    first = _png(figure)
    retheme_day(ax, day, index_id, theme="dark")
    return first, _png(figure)


def _figure(theme: str, margins: dict[str, float]) -> Figure:
    """A bare Figure (no pyplot: nothing global, nothing shown) of the pictures' size."""
    from matplotlib.figure import Figure

    look = theme_of(theme)
    assert look is not None
    # Fixed margins, not a layout engine: the pictures have one size and one kind of
    # labels, and constrained layout measured every text again (a fifth of the time).
    figure = Figure(figsize=FIGURE_SIZE, dpi=100, facecolor=look.face)
    figure.subplots_adjust(**margins)
    return figure


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    # Fast zlib (level 1): a third of the time went to compressing at level 6, for
    # files about a tenth larger.
    figure.savefig(
        buffer, format="png", metadata={"Software": None}, pil_kwargs={"compress_level": 1}
    )
    return buffer.getvalue()


def daily_pngs(
    usage: pd.DataFrame,
    index_id: str,
    *,
    name: str,
    field: str,
    days: int,
    dates: tuple[Any, Any] | None = None,
) -> tuple[bytes, bytes]:
    """The daily usage picture of one index (light, dark) as PNG bytes."""

    def draw(ax: Axes, theme: str) -> None:
        draw_daily(ax, usage, index_id, name=name, field=field, days=days, dates=dates, theme=theme)

    return _pngs(draw, _DAILY_MARGINS)


def draw_daily(
    ax: Axes,
    usage: pd.DataFrame,
    index_id: str,
    *,
    name: str,
    field: str,
    days: int = 30,
    dates: tuple[Any, Any] | None = None,
    theme: str | None = None,
) -> Axes:
    """Draw one index's operations per UTC day against the limit of each day.

    ``usage`` is :func:`~searchkit.usage_frame`'s frame (daily, UTC). Bars are the days'
    operations (hatched where the points cover only part of the day: at least this much),
    the limit in force each day a red step line, days over it marked with a cross; an
    unlimited index says so. The last ``days`` days up to the newest are drawn, or with
    ``dates`` (the first and the last UTC day, inclusive) those days.
    """
    look = theme_of(theme)
    mine = usage[usage["index_id"].astype(str) == str(index_id)].sort_values("period")
    if dates is not None:
        first, last = (pd.Timestamp(str(day), tz="UTC") for day in dates)
        mine = mine[(mine["period"] >= first) & (mine["period"] <= last)]
    elif len(mine):
        newest = pd.Timestamp(mine["period"].iloc[-1])
        mine = mine[mine["period"] > newest - pd.Timedelta(days=days)]
    words = limit_words(field)
    ax.set_title(f"{literal(name)}: operations per day against its limit of {words}")
    if mine.empty:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.text(0.5, 0.5, "no usage in this range", transform=ax.transAxes, **NOTE_STYLE)
        return themed(ax, look)
    slot = index_slots(usage["index_id"].astype(str).unique())[str(index_id)]
    colour = line_look(slot, look)["color"]  # as in the other figures of these indexes
    starts = pd.DatetimeIndex(mine["period"]).tz_convert("UTC").tz_localize(None)
    x = (starts + pd.Timedelta(hours=12)).to_numpy()
    used = mine["operations"].to_numpy(np.float64)
    complete = mine["complete"].to_numpy(bool)
    ax.bar(x[complete], used[complete], width=0.8, color=colour, label="operations")
    if (~complete).any():
        ax.bar(
            x[~complete],
            used[~complete],
            width=0.8,
            color="none",
            edgecolor=colour,
            hatch="///",
            label="partial day: at least this much",
        )
    _limit_steps(ax, mine, starts, look)
    over = mine["breached"].to_numpy(bool)
    if over.any():
        ink = look.text if look else "black"
        ax.plot(
            x[over],
            used[over],
            "x",
            color=ink,
            markersize=8,
            markeredgewidth=1.8,
            linestyle="",
            label=f"over the limit ({int(over.sum())} days)",
        )
    _daily_axes(ax, starts, look)
    return themed(ax, look)


def _limit_steps(ax: Axes, mine: pd.DataFrame, starts: pd.DatetimeIndex, look: Any) -> None:
    limit = mine["limit"].to_numpy(np.float64)
    red = "#ff6b6b" if look is not None and look.name == "dark" else "#d62728"
    finite = np.isfinite(limit)
    if finite.any():
        edges = np.append(starts.to_numpy(), (starts[-1] + pd.Timedelta(days=1)).to_numpy())
        values = np.append(np.where(finite, limit, np.nan), limit[-1] if finite[-1] else np.nan)
        ax.step(
            edges,
            values,
            where="post",
            color=red,
            linewidth=1.4,
            label=f"limit ({format_limit(limit[finite][-1])} on the last day)",
        )
    if np.isposinf(limit).any():
        ax.plot([], [], " ", label="unlimited: nothing to run out")
        ax.text(
            0.5,
            0.92,
            "unlimited",
            transform=ax.transAxes,
            ha="center",
            color=look.muted if look else "#555555",
        )
    if np.isnan(limit).any():
        ax.plot([], [], " ", label="limit not reported on some days")


def _daily_axes(ax: Axes, starts: pd.DatetimeIndex, look: Any) -> None:
    import matplotlib.dates as mdates
    from matplotlib.ticker import FuncFormatter

    first: Any = (starts[0] - pd.Timedelta(hours=6)).to_numpy()
    last: Any = (starts[-1] + pd.Timedelta(hours=30)).to_numpy()
    ax.set_xlim(first, last)
    locator = mdates.AutoDateLocator(minticks=3, maxticks=10)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    ax.set_xlabel("day (UTC, the daily limits' period)")
    ax.set_ylabel("operations per day")
    ax.yaxis.set_major_formatter(FuncFormatter(plain_number))
    ax.set_ylim(bottom=0)
    ax.grid(True, axis="y", linewidth=0.5, alpha=0.4)
    ax.legend(
        loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=4, fontsize="small", frameon=False
    )


def cockpit_html(
    *, status: tuple[str, str], header: str, lines: list[str], png: bytes | None, about: str
) -> str:
    """A static picture of the cockpit (the saved notebook shows it without a kernel)."""
    from searchkit.render.html import message_html, png_tag

    kind, text = status
    table = html.escape("\n".join([header, *lines]))
    picture = png_tag(png, about) if png is not None else ""
    return (
        '<div class="sk-cockpit-static" style="font-family:var(--jp-ui-font-family,'
        'sans-serif);font-size:13px">'
        f"{message_html(text, kind)}"
        '<pre style="font-size:11px;overflow:auto;max-height:340px;margin:4px 0">'
        f"{table}</pre>{picture}"
        '<div style="color:var(--jp-ui-font-color2,#666);font-size:11px">(a picture of '
        "the quota cockpit: run the cell to use it)</div></div>"
    )
