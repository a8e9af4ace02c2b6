"""The browser's throughput picture: resampling, theme colours, and the light and dark PNGs."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

from searchkit.model.index import IndexList
from searchkit.render.plots import AUTO_POINTS, AUTO_STEPS, auto_step
from searchkit.render.themes import THEMES as PLOT_THEMES

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

# Line colours: the plots' own (render.themes), so an index has the colour in the browser
# that it has in every other figure; the dark ones are the same hues made lighter.
LIGHT_COLOURS = PLOT_THEMES["light"].colours
DARK_COLOURS = PLOT_THEMES["dark"].colours
THEMES = {
    # text and grid colours of the plot on a transparent background
    "light": {"text": "#1a1a1a", "grid": "#9a9a9a", "colours": LIGHT_COLOURS},
    "dark": {"text": "#e8e8e8", "grid": "#8a8a8a", "colours": DARK_COLOURS},
}


def auto_resample(frame: pd.DataFrame) -> tuple[str | None, str]:
    """Pick the finest resampling that draws at most AUTO_POINTS points per line."""
    if frame.empty:
        return None, "every point"
    most = int(frame.groupby("index_id", sort=False, observed=True).size().max())
    return auto_step(most, frame["time"].max() - frame["time"].min())


def throughput_pngs(
    *, indexes: IndexList, tz: str, resample: str, colours: dict[Any, int]
) -> tuple[bytes, bytes, str]:
    """Draw the throughput of ``indexes`` twice (light and dark theme) as PNG."""
    from matplotlib.figure import Figure

    from searchkit.frames.throughput_frames import throughput_frame
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
