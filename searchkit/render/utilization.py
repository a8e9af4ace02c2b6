"""The utilization heatmap: index x day, coloured by the share of a limit used.

The numbers come from :func:`~searchkit.analytics.usage.usage_frame`; this module only draws.
"""

from __future__ import annotations

import datetime as dt
import textwrap
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from searchkit._deprecation import legacy_arguments
from searchkit.analytics.limit_periods import NOT_REPORTED_REASON, UNLIMITED_REASON
from searchkit.analytics.usage import usage_frame
from searchkit.errors import ValidationError
from searchkit.frames.counting import ValueUnit
from searchkit.frames.zones import TimeZone, resolve_zone
from searchkit.model.limits import LIMIT_INFO
from searchkit.render.heatmap_fit import (
    first_day_step,
    fit_cells,
    name_step,
    numbers_may_fit,
    under_the_axis,
)
from searchkit.render.plots import literal, new_axes, themed
from searchkit.render.themes import Theme, ThemeName, apply_theme, theme_of

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.text import Text

    from searchkit.frames.sources import Source

__all__ = ["MAX_INDEXES", "plot_utilization"]

#: Most indexes plot_utilization draws by default; past it, the most used are drawn.
MAX_INDEXES = 30
#: Tallest new figure, in inches: past it, rows get lower and their names thinned.
_TALLEST = 28.0
_NUMBER_SIZE = "x-small"
_USAGE = frozenset(("index_id", "name", "period", "utilization", "limit", "breached", "field"))


@legacy_arguments(positional=("ax",), renamed={"max_rows": "max_indexes"})
def plot_utilization(
    source: Source | pd.DataFrame,
    *,
    ax: Axes | None = None,
    field: str | None = None,
    tz: TimeZone = None,
    value_unit: ValueUnit = "per_second",
    title: str | None = None,
    theme: ThemeName | None = None,
    max_indexes: int | None = MAX_INDEXES,
) -> Axes:
    """Draw a heatmap of index x day coloured by utilization, limit breaches marked.

    Args:
        source: Anything :func:`usage_frame` takes (an IndexList, the raw API JSON, a
            :class:`~searchkit.History`, a throughput frame), or a frame it returned,
            drawn as it is.
        ax: The Axes to draw on; a new figure is made when None.
        field: See :func:`usage_frame` (not with a usage frame: it has its field).
        tz: See :func:`usage_frame` (with a usage frame: the zone to show its periods in).
        value_unit: See :func:`usage_frame` (not with a usage frame).
        title: Title of the Axes.
        theme: ``"dark"`` draws for a dark page (JupyterLab Dark), ``"light"`` for a
            light one; by default the theme of an enclosing ``sk.plot_theme(...)`` block,
            else matplotlib's own look.
        max_indexes: Draw at most this many indexes, the highest utilization on any day
            first (unlimited last; when no period has a share of the limit, the most
            operations in a period first); the y axis counts the rest. None draws them all.

    Returns:
        The Axes: one row per index, one column per day, colour = operations / limit
        (capped at 150 %), every cell's number in percent ("≥" where the day's points do
        not cover it, so it undercounts), a cross on each day over the limit; an
        unlimited index is left white with the word "unlimited", a limit the service did
        not report is grey. Periods that are not the limit's (days in a zone other than
        UTC: a daily limit resets at UTC midnight) have no share of it: their cells are
        left white and the Axes says why (``usage_frame`` has their operations). The
        legend, under the dates, explains each mark. Words are
        fitted to the cells as drawn (:mod:`~searchkit.render.heatmap_fit`): when the
        numbers do not fit their cells (a month of days, hundreds of rows) none is
        drawn and the legend says so; dates and names are thinned until they keep apart.
    """
    look = theme_of(theme)
    usage = _usage(source, tz=tz, field=field, value_unit=value_unit)
    total = usage["name"].nunique()
    no_share = _no_share(usage)
    usage = _most_used(usage, max_indexes, by="utilization" if no_share is None else "operations")
    if ax is None:
        ax = new_axes(_figure_size(usage["name"].nunique()))
    if usage.empty:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.text(0.5, 0.5, "no usage data", transform=ax.transAxes, ha="center", va="center")
        return themed(ax, look)
    grid, data, unlimited, unknown = _grid(usage)
    _draw_cells(ax, data, unknown, look)
    _axes(ax, grid, total, usage["period"].dt.tz)
    ax.set_title(title or _utilization_title(str(usage["field"].iloc[0])), fontsize="medium")
    full = usage.pivot_table(index="name", columns="period", values="complete", aggfunc="min")
    complete = full.reindex_like(grid).fillna(True).astype(bool).to_numpy()
    numbers, partial = _label_cells(ax, data, complete)
    words = _say_unlimited(ax, data.shape[1], unlimited, look)
    if no_share is not None:
        _say_why_blank(ax, no_share, look)
    fit = fit_cells(ax, days=data.shape[1], rows=data.shape[0], numbers=numbers, words=words)
    breached = _cells(usage, grid, "breached").fillna(False).astype(bool)
    rows, cols = np.nonzero(breached.to_numpy())
    crosses = bool(len(rows)) and fit.cross_size > 0
    if crosses:
        width = 1.2 if fit.cross_size >= 16 else 0.8
        ax.scatter(cols, rows + 0.25, marker="x", color="black", s=fit.cross_size,
                   linewidths=width, label="over the limit")  # fmt: skip
    shown = bool(numbers)  # fit_cells empties the list when the numbers do not fit
    marks = _Marks(crosses, partial and shown, bool(unknown.any()), bool(unlimited.any()),
                   numbers_left_out=bool(data.count()) and not shown)  # fmt: skip
    _legend(ax, marks, look, fit.below_pt)
    return ax


def _grid(usage: pd.DataFrame) -> tuple[pd.DataFrame, Any, np.ndarray, np.ndarray]:
    """The utilization as index x period, its cells in percent (masked where there is no
    share: unlimited, or no limit to compare with), which are unlimited and which have
    operations but a limit not reported."""
    grid = usage.pivot_table(
        index="name", columns="period", values="utilization", aggfunc="max", dropna=False
    )
    limits = _cells(usage, grid, "limit").to_numpy(dtype=np.float64)
    unlimited = np.isposinf(limits)
    unknown = np.isnan(limits) & ~np.isnan(grid.to_numpy(dtype=np.float64))
    data = np.ma.masked_invalid(np.where(unlimited, np.nan, grid.to_numpy(np.float64) * 100))
    return grid, data, unlimited, unknown


def _figure_size(rows: int) -> tuple[float, float]:
    """Inches of a new heatmap: a row of a name's height, at most _TALLEST high."""
    return (10, min(1.6 + 0.45 * max(rows, 4), _TALLEST))


def _draw_cells(ax: Axes, data: Any, unknown: np.ndarray, look: Theme | None) -> None:
    """Colour the cells (grey where no limit was reported) and add the colour bar."""
    from matplotlib.colors import ListedColormap, Normalize

    image = ax.imshow(
        data, aspect="auto", cmap=_colormap(look), norm=Normalize(0, 150), interpolation="nearest"
    )
    if unknown.any():
        grey = ListedColormap(["#dddddd"])
        ax.imshow(np.ma.masked_where(~unknown, np.ones(data.shape)), cmap=grey, aspect="auto")
    colorbar = ax.figure.colorbar(image, ax=ax, extend="max")
    colorbar.set_label("operations / limit (%)")
    colorbar.ax.axhline(100, color=look.text if look else "black", linewidth=1.5)  # the limit
    if look is not None:  # before the cells' numbers: they stay black or white by cell
        apply_theme(ax, look)
        apply_theme(colorbar.ax, look, figure=False)


def _cells(usage: pd.DataFrame, grid: pd.DataFrame, column: str) -> pd.DataFrame:
    """``column`` of the usage laid out as ``grid`` (index x period; the largest of repeats)."""
    cells = usage.pivot_table(index="name", columns="period", values=column, aggfunc="max")
    return cells.reindex_like(grid)


def _usage(
    source: Source, *, tz: TimeZone, field: str | None, value_unit: ValueUnit
) -> pd.DataFrame:
    """The usage to draw: computed from the source, or a usage frame given as the source."""
    import pandas as pd

    if not (isinstance(source, pd.DataFrame) and set(source.columns) >= _USAGE):
        return usage_frame(source, tz=tz, field=field, value_unit=value_unit)
    if field is not None or value_unit != "per_second":
        raise ValidationError(
            "a usage frame was counted already: field and value_unit belong to usage_frame()"
        )
    zone = resolve_zone(tz)
    if zone is None:
        return source
    return source.assign(period=pd.DatetimeIndex(source["period"]).tz_convert(zone))


def _axes(ax: Axes, grid: pd.DataFrame, total: int, tz: TimeZone) -> None:
    """Name the rows (and how many indexes are left out) and the days."""
    # Names are data: shown literally, as the other plots do (a '$' starts mathtext).
    step = name_step(ax, len(grid.index))  # a thousand names: only those that can show
    ax.set_yticks(range(0, len(grid.index), step), [literal(n) for n in grid.index[::step]])
    if total > len(grid.index):
        ax.set_ylabel(
            f"the {len(grid.index):,} of {total:,} indexes most used\n"
            f"({total - len(grid.index):,} not shown)"
        )
    # Days, level: heatmap_fit thins them to a step at which they keep apart (a year's
    # from weekly ones: a tick for each of 365 days takes seconds to lay out).
    days = [f"{p:%b %d}" for p in grid.columns]
    step = first_day_step(ax, len(days), days[0]) if days else 1
    ax.set_xticks(range(0, len(days), step), days[::step])
    ax.set_xlabel(f"day ({_zone_name(tz)}); operations = value x sampling interval")


def _most_used(usage: pd.DataFrame, max_indexes: int | None, *, by: str) -> pd.DataFrame:
    """The rows of the ``max_indexes`` indexes with the highest utilization (``by``, or
    ``"operations"``) in any period."""
    if max_indexes is None or usage["name"].nunique() <= max_indexes:
        return usage
    if by == "operations":
        limited = usage["operations"]
    else:
        limited = usage["utilization"].where(np.isfinite(usage["limit"]))
    peak = limited.groupby(usage["name"]).max().rename("peak").reset_index()
    order = peak.sort_values(["peak", "name"], ascending=[False, True], na_position="last")
    return usage[usage["name"].isin(order["name"].head(max(max_indexes, 0)))]


def _no_share(usage: pd.DataFrame) -> str | None:
    """Why no period of ``usage`` has a share of the limit (its periods are not the
    limit's: the ``reason`` of every row), or None."""
    if usage.empty or "reason" not in usage or usage["utilization"].notna().any():
        return None
    reasons = usage["reason"].unique()
    if len(reasons) != 1 or reasons[0] in ("", UNLIMITED_REASON, NOT_REPORTED_REASON):
        return None  # unlimited and unreported limits have marks of their own
    return str(reasons[0])


def _say_why_blank(ax: Axes, reason: str, look: Theme | None) -> None:
    """Write across the Axes why its cells have no colour."""
    words = textwrap.fill(f"No share of the limit to colour: {reason}.", width=60)
    ax.text(0.5, 0.5, f"{words}\n(sk.usage_frame has the operations of each period)",
            transform=ax.transAxes, ha="center", va="center", fontsize="medium",
            color=look.muted if look else "#555555")  # fmt: skip


def _say_unlimited(ax: Axes, days: int, unlimited: np.ndarray, look: Theme | None) -> list[Text]:
    """Write "unlimited" across each row of an index with no limit (its cells stay blank)."""
    return [
        ax.text(
            (days - 1) / 2,
            float(row),
            "unlimited",
            ha="center",
            va="center",
            fontsize="small",
            color=look.muted if look else "#555555",
        )
        for row in np.flatnonzero(unlimited.any(axis=1))
    ]


def _label_cells(ax: Axes, data: Any, complete: np.ndarray) -> tuple[list[Text], bool]:
    """Write each cell's percentage (one unit everywhere); say whether any is partial."""
    partial = False
    texts: list[Text] = []
    values = data.filled(np.nan)
    finite = values[np.isfinite(values)]
    widest = f"≥{np.abs(finite).max():,.0f}%" if finite.size else ""
    if not widest or not numbers_may_fit(ax, data.shape, widest, _NUMBER_SIZE):
        return texts, partial
    for (r, c), value in np.ndenumerate(values):
        if not np.isfinite(value):
            continue
        text = f"{value:,.0f}%"
        if not complete[r, c] and value != 0:  # a partial day undercounts
            text, partial = f"≥{text}", True
        texts.append(ax.text(c, r - 0.05, text, ha="center", va="bottom", fontsize=_NUMBER_SIZE,
                             color="white" if value > 90 else "black"))  # fmt: skip
    return texts, partial


class _Marks(NamedTuple):
    """Which kinds of mark a heatmap shows, each with a legend entry."""

    over: bool
    partial: bool
    unknown: bool
    unlimited: bool
    numbers_left_out: bool


def _legend(ax: Axes, marks: _Marks, look: Theme | None, below_pt: float) -> None:
    """One legend entry for each kind of mark the heatmap shows, hung under the dates."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    over, partial, unknown, unlimited, left_out = marks
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
    if left_out:
        words = "cells too small for their numbers\n(sk.usage_frame has them)"
        handles.append(Patch(facecolor="none", edgecolor="none", label=words))
    # As many columns as the Axes is wide for: a wider legend would make the layout
    # shrink the Axes to make room beside it.
    for columns in range(len(handles), 0, -1):
        legend = ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0, 0),
                           bbox_transform=under_the_axis(ax, below_pt), ncols=columns,
                           frameon=False, fontsize="small")  # fmt: skip
        if legend.get_window_extent().width <= ax.bbox.width:
            break
    if look is not None and handles:
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
        + f"\n({' + '.join(fields)})"
    )


def _zone_name(tz: TimeZone) -> str:
    zone = resolve_zone(tz, default=dt.timezone.utc)
    return "UTC" if zone in (dt.timezone.utc, None) else str(zone)
