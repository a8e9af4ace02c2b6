"""A plot of one limit across indexes: horizontal bars, "unlimited" said and drawn."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from searchkit._deprecation import legacy_arguments
from searchkit.errors import ValidationError
from searchkit.frames.limits_frames import limits_frame
from searchkit.frames.sources import Source
from searchkit.model.limits import LIMIT_INFO, LimitInfo, check_limit_field
from searchkit.render.formats import format_bytes, format_limit, plain_number
from searchkit.render.plots import NOTE_STYLE, literal, new_axes, themed
from searchkit.render.themes import ThemeName, line_look, theme_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from matplotlib.axes import Axes

__all__ = ["plot_limits"]

# Bars are easier to compare than lines: plot_limits goes logarithmic only at 100x.
_LIMITS_LOG_SPAN = 100.0
#: The most labelled decades on a logarithmic limits axis.
_LOG_TICKS = 6
#: ``field=None``: the daily limits throughput is compared with, added up (as usage_frame).
_DAILY = ("max_daily_queries", "max_daily_updates")
_DAILY_INFO = LimitInfo("queries + updates / day", "Queries + updates per day", "operations", "day")


@legacy_arguments(positional=("field",), renamed={"indexes_or_frame": "source"})
def plot_limits(
    source: Source,
    *,
    field: str | None = None,
    ax: Axes | None = None,
    theme: ThemeName | None = None,
) -> Axes:
    """Plot one limit across indexes as horizontal bars.

    Args:
        source: Indexes in any form :func:`~searchkit.limits_frame`
            accepts, a History (its latest limits), or a frame of ``limits_frame``.
        field: The limit to show, one of :data:`~searchkit.model.limits.LIMIT_FIELDS`;
            None (default) shows ``max_daily_queries + max_daily_updates``, the daily
            limit that throughput uses up, as :func:`~searchkit.usage_frame` compares
            (unlimited when either is; missing when either is).
        ax: The Axes to draw on; a new figure is made when None.
        theme: ``"dark"`` or ``"light"``, as for
            :func:`~searchkit.render.plots.plot_throughput`.

    Returns:
        The Axes: one bar per index, labelled with its value; an unlimited index is a
        hatched bar to the axis edge labelled "unlimited", a missing value is labelled "—".
        The axis (logarithmic at a 100x span) has plain-number ticks: "12,000", not "12k".

    Raises:
        ValidationError: ``field`` is not a limit, or the input has an unexpected shape.

    Example:
        >>> ax = plot_limits(client.list_indexes(), field="max_vector_count")  # doctest: +SKIP
        >>> ax.figure.savefig("limits.png")  # doctest: +SKIP
    """
    from matplotlib.colors import to_rgba
    from matplotlib.ticker import FuncFormatter

    look = theme_of(theme)
    labels, values, info = _limit_values(source, field)
    if ax is None:
        ax = new_axes((8, 1.2 + 0.45 * max(len(values), 2)))
    _titles(ax, info, field)
    if values.size == 0:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.text(0.5, 0.5, "no indexes", transform=ax.transAxes, **NOTE_STYLE)
        return themed(ax, look)

    finite = np.isfinite(values)
    unlimited = np.isposinf(values)
    missing = np.isnan(values)
    left, right = _limit_span(ax, values, finite)

    color = line_look(0, look)["color"]
    bytes_unit = field == "max_monthly_bandwidth"
    byte_format = FuncFormatter(lambda value, _pos=None: format_bytes(value))
    y = np.arange(values.size)
    shown = finite & (values > left)
    ax.barh(y[shown], values[shown] - left, left=left, height=0.6, color=color)
    ax.barh(
        y[unlimited],
        right - left,
        left=left,
        height=0.6,
        facecolor=to_rgba(color, 0.12),
        edgecolor=color,
        hatch="///",
        linewidth=0.8,
    )
    text = byte_format if bytes_unit else format_limit
    _label_bars(ax, values, unlimited, missing, (left, right), text)

    ax.set_yticks(y, [literal(label) for label in labels])
    ax.set_ylim(values.size - 0.5, -0.5)  # first index on top
    ax.xaxis.set_major_formatter(byte_format if bytes_unit else FuncFormatter(plain_number))
    if not finite.any():
        ax.set_xticks([])
    ax.grid(True, axis="x", linewidth=0.5, alpha=0.4)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return themed(ax, look)


def _limit_span(ax: Axes, values: np.ndarray, finite: np.ndarray) -> tuple[float, float]:
    """Set the x axis of the bars (log when values span 100x); return its (left, right)."""
    positive = values[finite & (values > 0)]
    log = positive.size > 0 and positive.max() / positive.min() >= _LIMITS_LOG_SPAN
    if log:
        from matplotlib.ticker import FixedLocator

        ax.set_xscale("log")
        # The decade below the smallest value, so that its bar is visible too.
        left = 10 ** math.floor(math.log10(positive.min()) - 0.3)
        right = 10 ** (math.log10(positive.max()) + 0.6)  # room for the value labels
        # Plain ticks are wide ("1,000,000,000"): label at most 6 decades, as on the
        # linear axis, so that they never run into each other on a figure 8 inches wide;
        # every n-th decade counted from the largest value's (whatever matplotlib's
        # version would pick).
        first, last = math.ceil(math.log10(left)), math.floor(math.log10(right))
        largest = math.floor(math.log10(positive.max()))
        step = max(1, math.ceil((last - first + 1) / _LOG_TICKS))
        decades = [10.0**e for e in range(first, last + 1) if (largest - e) % step == 0]
        ax.xaxis.set_major_locator(FixedLocator(decades))
    else:
        left = min(0.0, values[finite].min()) if finite.any() else 0.0
        top = values[finite].max() if finite.any() else 0.0
        right = top * 1.3 if top > 0 else 1.0
    ax.set_xlim(left, right)
    return left, right


def _label_bars(
    ax: Axes,
    values: np.ndarray,
    unlimited: np.ndarray,
    missing: np.ndarray,
    span: tuple[float, float],
    text: Callable[[float], str],
) -> None:
    """Write each bar's value beside it: "unlimited" at the right edge, "—" when absent."""
    left, right = span
    for row in range(values.size):
        value = values[row]
        if unlimited[row]:
            ax.annotate(
                "unlimited",
                (right, row),
                xytext=(-6, 0),
                textcoords="offset points",
                ha="right",
                va="center",
                fontsize="small",
                fontstyle="italic",
                color="0.15",
            )
        elif missing[row]:
            ax.annotate(
                "—",
                (left, row),
                xytext=(4, 0),
                textcoords="offset points",
                ha="left",
                va="center",
                fontsize="small",
                color="0.35",
            )
        else:
            end = value if value > left else left
            ax.annotate(
                text(value),
                (end, row),
                xytext=(4, 0),
                textcoords="offset points",
                ha="left",
                va="center",
                fontsize="small",
                color="0.15",
            )


def _titles(ax: Axes, info: LimitInfo, field: str | None) -> None:
    """Name the limit the bars draw, in words and as its field (the sum when None)."""
    label = "max_daily_queries+max_daily_updates" if field is None else field
    ax.set_title(f"Limit: {info.title.lower()} ({label})")
    ax.set_xlabel(f"{info.unit} per {info.period}" if info.period else info.unit)


def _limit_values(
    source: Source | pd.Series, field: str | None
) -> tuple[list[str], np.ndarray, LimitInfo]:
    """The bars' labels and values, and how the limit is called (``field`` checked)."""
    if field is not None:
        check_limit_field(field)
    if isinstance(source, pd.Series):
        raise ValidationError("expected indexes or a limits frame, got a Series")
    frame = limits_frame(source)
    for name in _DAILY if field is None else (field,):
        if name not in frame.columns:
            raise ValidationError(f"the frame has no column {name!r}")
    ids = [str(i) for i in frame.index]
    names = frame["name"].tolist() if "name" in frame.columns else ids
    labels = [
        str(name) if isinstance(name, str) and name else ids[row] for row, name in enumerate(names)
    ]
    columns = _DAILY if field is None else (field,)
    values = sum(
        (
            pd.to_numeric(frame[name], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
            for name in columns
        ),
        start=np.zeros(len(frame), dtype=np.float64),
    )
    return labels, values, _DAILY_INFO if field is None else LIMIT_INFO[field]
