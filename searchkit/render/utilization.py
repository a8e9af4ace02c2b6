"""The utilization heatmap: index x day, coloured by the share of a limit used.

The numbers come from :func:`~searchkit.analytics.usage.usage_frame`; this module only draws.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import numpy as np

from searchkit.analytics.usage import usage_frame
from searchkit.frames.zones import TimeZone, resolve_zone
from searchkit.model.limits import LIMIT_INFO
from searchkit.render.plots import literal, new_axes, themed
from searchkit.render.themes import Theme, ThemeName, apply_theme, theme_of

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

    from searchkit.analytics.usage import Source

__all__ = ["MAX_ROWS", "plot_utilization"]

#: Most rows plot_utilization draws by default; past it, the most used indexes are drawn.
MAX_ROWS = 30


def plot_utilization(
    source: Source,
    ax: Axes | None = None,
    *,
    field: str | None = None,
    tz: TimeZone = "UTC",
    value_unit: str = "per_second",
    title: str | None = None,
    theme: ThemeName | None = None,
    max_rows: int | None = MAX_ROWS,
) -> Axes:
    """Draw a heatmap of index x day coloured by utilization, limit breaches marked.

    Args:
        source: An IndexList, the raw API JSON, or a :class:`~searchkit.History`.
        ax: The Axes to draw on; a new figure is made when None.
        field: See :func:`usage_frame`.
        tz: See :func:`usage_frame`.
        value_unit: See :func:`usage_frame`.
        title: Title of the Axes.
        theme: ``"dark"`` draws for a dark page (JupyterLab Dark), ``"light"`` for a
            light one; by default the theme of an enclosing ``sk.plot_theme(...)`` block,
            else matplotlib's own look.
        max_rows: Draw at most this many indexes, the highest utilization on any day
            first (unlimited last); the y axis counts the rest. None draws them all.

    Returns:
        The Axes: one row per index, one column per day, colour = operations / limit
        (capped at 150 %), every cell's number in percent ("≥" where the day's points do
        not cover it, so it undercounts), a cross on each day over the limit; an
        unlimited index is left white with the word "unlimited", a limit the service did
        not report is grey. The legend explains each mark.
    """
    from matplotlib.colors import ListedColormap, Normalize

    look = theme_of(theme)
    usage = usage_frame(source, tz=tz, field=field, value_unit=value_unit)
    total = usage["name"].nunique()
    usage = _most_used(usage, max_rows)
    if ax is None:
        ax = new_axes((10, 0.9 + 0.45 * max(usage["name"].nunique(), 4)))
    if usage.empty:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.text(0.5, 0.5, "no usage data", transform=ax.transAxes, ha="center", va="center")
        return themed(ax, look)
    grid = usage.pivot_table(
        index="name", columns="period", values="utilization", aggfunc="max", dropna=False
    )
    pivot = usage.pivot_table(index="name", columns="period", values="limit", aggfunc="max")
    limits = pivot.reindex_like(grid).to_numpy(dtype=np.float64)
    unlimited = np.isposinf(limits)
    unknown = np.isnan(limits) & ~np.isnan(grid.to_numpy(dtype=np.float64))
    breached = usage.pivot_table(index="name", columns="period", values="breached", aggfunc="max")
    breached = breached.reindex_like(grid).fillna(False).astype(bool)
    values = grid.to_numpy(dtype=np.float64) * 100
    data = np.ma.masked_invalid(np.where(unlimited, np.nan, values))
    image = ax.imshow(
        data, aspect="auto", cmap=_colormap(look), norm=Normalize(0, 150), interpolation="nearest"
    )
    if unknown.any():
        grey = ListedColormap(["#dddddd"])
        ax.imshow(np.ma.masked_where(~unknown, np.ones_like(values)), cmap=grey, aspect="auto")
    rows, cols = np.nonzero(breached.to_numpy())
    ax.scatter(
        cols, rows + 0.25, marker="x", color="black", s=30, linewidths=1.2, label="over the limit"
    )
    _axes(ax, grid, total, tz)
    colorbar = ax.figure.colorbar(image, ax=ax, extend="max")
    colorbar.set_label("operations / limit (%)")
    if look is not None:  # before the cells' numbers: they stay black or white by cell
        apply_theme(ax, look)
        apply_theme(colorbar.ax, look, figure=False)
    full = usage.pivot_table(index="name", columns="period", values="complete", aggfunc="min")
    complete = full.reindex_like(grid).fillna(True).astype(bool).to_numpy()
    partial = _label_cells(ax, data, complete)
    _say_unlimited(ax, data.shape[1], unlimited, look)
    ax.set_title(title or _utilization_title(str(usage["field"].iloc[0])), fontsize="medium")
    _legend(ax, bool(len(rows)), partial, bool(unknown.any()), bool(unlimited.any()), look)
    return ax


def _axes(ax: Axes, grid: pd.DataFrame, total: int, tz: TimeZone) -> None:
    """Name the rows (and how many indexes are left out) and the days."""
    # Names are data: shown literally, as the other plots do (a '$' starts mathtext).
    ax.set_yticks(range(len(grid.index)), [literal(name) for name in grid.index])
    if total > len(grid.index):
        ax.set_ylabel(
            f"the {len(grid.index):,} of {total:,} indexes most used\n"
            f"({total - len(grid.index):,} not shown)"
        )
    labels = [f"{p:%b %d}" for p in grid.columns]
    step = max(1, len(labels) // 15)
    ax.set_xticks(range(0, len(labels), step), labels[::step], rotation=45, ha="right")
    ax.set_xlabel(f"day ({_zone_name(tz)}); operations = value x sampling interval")


def _most_used(usage: pd.DataFrame, max_rows: int | None) -> pd.DataFrame:
    """The rows of the ``max_rows`` indexes with the highest utilization on any day."""
    if max_rows is None or usage["name"].nunique() <= max_rows:
        return usage
    limited = usage["utilization"].where(np.isfinite(usage["limit"]))
    peak = limited.groupby(usage["name"]).max().rename("peak").reset_index()
    order = peak.sort_values(["peak", "name"], ascending=[False, True], na_position="last")
    return usage[usage["name"].isin(order["name"].head(max(max_rows, 0)))]


def _say_unlimited(ax: Axes, days: int, unlimited: np.ndarray, look: Theme | None) -> None:
    """Write "unlimited" across each row of an index with no limit (its cells stay blank)."""
    for row in np.flatnonzero(unlimited.any(axis=1)):
        ax.text((days - 1) / 2, float(row), "unlimited", ha="center", va="center",
                fontsize="small", color=look.muted if look else "#555555")  # fmt: skip


def _label_cells(ax: Axes, data: Any, complete: np.ndarray) -> bool:
    """Write each cell's percentage (one unit everywhere); say whether any is partial."""
    partial = False
    if data.shape[1] > 31:
        return partial
    for (r, c), value in np.ndenumerate(data.filled(np.nan)):
        if not np.isfinite(value):
            continue
        text = f"{value:,.0f}%"
        if not complete[r, c] and value != 0:  # a partial day undercounts
            text, partial = f"≥{text}", True
        ax.text(c, r - 0.05, text, ha="center", va="bottom", fontsize="x-small",
                color="white" if value > 90 else "black")  # fmt: skip
    return partial


def _legend(
    ax: Axes, over: bool, partial: bool, unknown: bool, unlimited: bool, look: Theme | None
) -> None:
    """One legend entry for each kind of mark the heatmap shows."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles: list[Any] = []
    ink = look.text if look else "black"  # the legend stands on the page, not on a cell
    if over:
        handles.append(Line2D([], [], marker="x", color=ink, linestyle="", label="over the limit"))
    if partial:
        handles.append(Line2D([], [], marker="$≥$", color=ink, linestyle="",
                              label="partial day: at least this much"))  # fmt: skip
    if unlimited:
        blank = look.face if look else "white"
        handles.append(Patch(facecolor=blank, edgecolor="#999999", label="unlimited"))
    if unknown:
        handles.append(Patch(facecolor="#dddddd", label="limit not reported"))
    if handles:
        legend = ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0, -0.25),
                           ncols=len(handles), frameon=False, fontsize="small")  # fmt: skip
        if look is not None:
            for entry in legend.get_texts():
                entry.set_color(look.text)


def _colormap(look: Theme | None) -> Any:
    import matplotlib

    # "bad" is an unlimited cell: no colour, the page's own background.
    return matplotlib.colormaps["YlOrRd"].with_extremes(bad=look.face if look else "white")


def _utilization_title(field: str) -> str:
    """Say which limit a heatmap compares with, in words: "queries + updates per day"."""
    fields = field.split("+")
    if not all(f in LIMIT_INFO for f in fields):
        return f"Usage of {field.replace('+', ' + ')}"
    what = " + ".join(LIMIT_INFO[f].label.split(" / ")[0] for f in fields)
    period = LIMIT_INFO[fields[0]].period
    # Words and the fields themselves: the figure names the limit it draws.
    return (
        f"Usage against the limit of {what}"
        + (f" per {period}" if period else "")
        + f" ({' + '.join(fields)})"
    )


def _zone_name(tz: TimeZone) -> str:
    zone = resolve_zone(tz, default=dt.timezone.utc)
    return "UTC" if zone in (dt.timezone.utc, None) else str(zone)
