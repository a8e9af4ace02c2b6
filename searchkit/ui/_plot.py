"""The browser's throughput picture: resampling, theme colours, and the light and dark PNGs."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

from searchkit.model.index import IndexList

if TYPE_CHECKING:
    import pandas as pd


__all__ = [
    "AUTO_POINTS",
    "AUTO_STEPS",
    "DARK_COLOURS",
    "LIGHT_COLOURS",
    "THEMES",
    "NoData",
    "auto_resample",
    "theme_axes",
    "throughput_pngs",
]

#: Most points per line that "auto" resampling draws.
AUTO_POINTS = 200
AUTO_STEPS: tuple[tuple[str, str], ...] = (
    ("", "every point"),
    ("5min", "5-minute means"),
    ("15min", "15-minute means"),
    ("1h", "hourly means"),
    ("1D", "daily means"),
)

# Line colours, one slot per index for the life of a browser. The dark variants are the
# same hues made lighter, so a line keeps its colour's identity on a dark background.
LIGHT_COLOURS = (
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
    "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22",
)  # fmt: skip
DARK_COLOURS = (
    "#6cb4f0", "#ff7b7b", "#6fdc6f", "#ffb35c", "#c9a6ff",
    "#d9a38f", "#ffa3e0", "#5fe3f0", "#c8c8c8", "#e6e65c",
)  # fmt: skip
THEMES = {
    # text and grid colours of the plot on a transparent background
    "light": {"text": "#1a1a1a", "grid": "#9a9a9a", "colours": LIGHT_COLOURS},
    "dark": {"text": "#e8e8e8", "grid": "#8a8a8a", "colours": DARK_COLOURS},
}


def auto_resample(frame: pd.DataFrame) -> tuple[str | None, str]:
    """Pick the finest resampling that draws at most AUTO_POINTS points per line."""
    import pandas as pd

    if frame.empty:
        return None, "every point"
    most = int(frame.groupby("index_id", sort=False, observed=True).size().max())
    span = frame["time"].max() - frame["time"].min()
    for freq, label in AUTO_STEPS:
        if freq == "":
            if most <= AUTO_POINTS:
                return None, label
            continue
        if span / pd.Timedelta(freq) <= AUTO_POINTS:
            return freq, label
    return "1D", "daily means"


def throughput_pngs(
    *, indexes: IndexList, tz: str, resample: str, colours: dict[Any, int]
) -> tuple[bytes, bytes, str]:
    """Draw the throughput of ``indexes`` twice (light and dark theme) as PNG."""
    from matplotlib.figure import Figure

    from searchkit.frames.frames import throughput_frame
    from searchkit.render.plots import draw_throughput

    frame = throughput_frame(indexes)
    if not frame["value"].notna().any():
        raise NoData
    note = ""
    chosen: str | None = resample or None
    if resample == "auto":
        chosen, label = auto_resample(frame)
        note = f"auto: {label}"
    pictures = []
    for theme in ("light", "dark"):
        palette = THEMES[theme]
        colour_of = {
            str(key): palette["colours"][slot % len(palette["colours"])]
            for key, slot in colours.items()
        }
        # A bare Figure, not pyplot: nothing global, nothing shown by the inline backend.
        # Transparent, so it sits on the notebook's own background in either theme.
        figure = Figure(figsize=(9, 3.4), dpi=100, layout="constrained", facecolor="none")
        ax = figure.add_subplot(facecolor="none")
        draw_throughput(frame, ax=ax, tz=tz, resample=chosen, colors=colour_of, linewidth=1.6)
        theme_axes(ax, palette)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", metadata={"Software": None}, transparent=True)
        pictures.append(buffer.getvalue())
    return pictures[0], pictures[1], note


def theme_axes(ax: Any, palette: dict[str, Any]) -> None:
    text, grid = palette["text"], palette["grid"]
    ax.tick_params(colors=text, which="both")
    for spine in ax.spines.values():
        spine.set_color(grid)
    ax.xaxis.label.set_color(text)
    ax.yaxis.label.set_color(text)
    ax.title.set_color(text)
    ax.grid(True, color=grid, linewidth=0.5, alpha=0.5)
    for label in (*ax.get_xticklabels(), *ax.get_yticklabels()):
        label.set_color(text)
    ax.xaxis.get_offset_text().set_color(text)
    for child in ax.texts:
        child.set_color(text)
    legend = ax.get_legend()
    if legend is not None:
        legend.get_title().set_color(text)
        for entry in legend.get_texts():
            entry.set_color(text)


class NoData(Exception):
    """The indexes to plot have no throughput point with a value."""
