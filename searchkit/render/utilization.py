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
from searchkit.render.plots import literal, new_axes

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from searchkit.analytics.usage import Source

__all__ = ["plot_utilization"]


def plot_utilization(
    source: Source,
    ax: Axes | None = None,
    *,
    field: str | None = None,
    tz: TimeZone = "UTC",
    value_unit: str = "per_second",
    title: str | None = None,
) -> Axes:
    """Draw a heatmap of index x day coloured by utilization, limit breaches marked.

    Args:
        source: An IndexList, the raw API JSON, or a :class:`~searchkit.History`.
        ax: The Axes to draw on; a new figure is made when None.
        field: See :func:`usage_frame`.
        tz: See :func:`usage_frame`.
        value_unit: See :func:`usage_frame`.
        title: Title of the Axes.

    Returns:
        The Axes: one row per index, one column per day, colour = operations / limit
        (capped at 150 %), a cross on each day over the limit, grey where unknown.
    """
    from matplotlib.colors import Normalize

    usage = usage_frame(source, tz=tz, field=field, value_unit=value_unit)
    if ax is None:
        ax = new_axes((10, 0.9 + 0.45 * max(usage["name"].nunique(), 4)))
    if usage.empty:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.text(0.5, 0.5, "no usage data", transform=ax.transAxes, ha="center", va="center")
        return ax
    grid = usage.pivot_table(
        index="name", columns="period", values="utilization", aggfunc="max", dropna=False
    )
    breached = usage.pivot_table(index="name", columns="period", values="breached", aggfunc="max")
    breached = breached.reindex_like(grid).fillna(False).astype(bool)
    data = np.ma.masked_invalid(grid.to_numpy(dtype=np.float64) * 100)
    cmap = _colormap()
    image = ax.imshow(
        data, aspect="auto", cmap=cmap, norm=Normalize(0, 150), interpolation="nearest"
    )
    rows, cols = np.nonzero(breached.to_numpy())
    ax.scatter(
        cols, rows + 0.25, marker="x", color="black", s=30, linewidths=1.2, label="over the limit"
    )
    # Names are data: shown literally, as the other plots do (a '$' starts mathtext).
    ax.set_yticks(range(len(grid.index)), [literal(name) for name in grid.index])
    labels = [f"{p:%b %d}" for p in grid.columns]
    step = max(1, len(labels) // 15)
    ax.set_xticks(range(0, len(labels), step), labels[::step], rotation=45, ha="right")
    colorbar = ax.figure.colorbar(image, ax=ax, extend="max")
    colorbar.set_label("utilization (%)")
    full = usage.pivot_table(index="name", columns="period", values="complete", aggfunc="min")
    complete = full.reindex_like(grid).fillna(True).astype(bool).to_numpy()
    if data.shape[1] <= 31:
        for (r, c), value in np.ndenumerate(data.filled(np.nan)):
            if np.isfinite(value):
                text = f"{value:.0f}%" if value < 1000 else f"{value / 100:.0f}x"
                text = text if complete[r, c] or value == 0 else f"≥{text}"  # partial: undercount
                ax.text(
                    c,
                    r - 0.05,
                    text,
                    ha="center",
                    va="bottom",
                    fontsize="x-small",
                    color="white" if value > 90 else "black",
                )
    ax.set_title(title or _utilization_title(str(usage["field"].iloc[0])), fontsize="medium")
    ax.set_xlabel(f"day ({_zone_name(tz)})")
    if len(rows):
        ax.legend(loc="upper left", bbox_to_anchor=(0, -0.25), frameon=False, fontsize="small")
    return ax


def _colormap() -> Any:
    import matplotlib

    return matplotlib.colormaps["YlOrRd"].with_extremes(bad="#dddddd")


def _utilization_title(field: str) -> str:
    """Say which limit a heatmap compares with, in words: "queries + updates per day"."""
    fields = field.split("+")
    if not all(f in LIMIT_INFO for f in fields):
        return f"Usage of {field.replace('+', ' + ')}"
    what = " + ".join(LIMIT_INFO[f].label.split(" / ")[0] for f in fields)
    period = LIMIT_INFO[fields[0]].period
    return f"Usage against the limit of {what}" + (f" per {period}" if period else "")


def _zone_name(tz: TimeZone) -> str:
    zone = resolve_zone(tz, default=dt.timezone.utc)
    return "UTC" if zone in (dt.timezone.utc, None) else str(zone)
