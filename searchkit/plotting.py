"""Matplotlib plots of throughput over time and of one limit across indexes.

Both functions follow matplotlib's own advice for helpers: draw on the Axes they are given
(or on a new figure when none is), return that Axes, and never call ``plt.show()`` or touch
global settings such as rcParams, so they compose with subplots and stay quiet in tests.
"""

from __future__ import annotations

import datetime as dt
import math
import zoneinfo
from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from searchkit.errors import ValidationError
from searchkit.frames import (
    Indexes,
    TimeZone,
    format_limit,
    limits_frame,
    throughput_frame,
)
from searchkit.models import LIMIT_FIELDS

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_limits", "plot_throughput"]

# Short unit labels of the limits, for the x axis of plot_limits.
_LIMIT_UNITS = {
    "max_vector_count": "vectors",
    "max_monthly_reranks": "reranks per month",
    "max_daily_updates": "updates per day",
    "max_daily_queries": "queries per day",
    "max_monthly_bandwidth": "bytes per month",
    "max_writes_per_second": "writes per second",
    "max_query_per_second": "queries per second",
    "max_reads_per_request": "reads per request",
    "max_writes_per_request": "writes per request",
}
# Values spanning at least this ratio get a log axis, so small limits stay visible.
_LOG_SPAN = 100.0
_NOTE_STYLE = {"ha": "center", "va": "center", "color": "0.45", "fontsize": "large"}


def _new_axes(figsize: tuple[float, float]) -> Axes:
    # pyplot only when the caller gave no Axes: that is what makes the figure show up in
    # a notebook; a given Axes is drawn on as is.
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


# --- throughput --------------------------------------------------------------------------


def plot_throughput(
    indexes_or_frame: Indexes | pd.DataFrame | pd.Series,
    *,
    ax: Axes | None = None,
    tz: TimeZone = None,
    resample: str | pd.DateOffset | None = None,
    title: str | None = None,
    forecast: pd.DataFrame | None = None,
) -> Axes:
    """Plot throughput over time, one line per index.

    Args:
        indexes_or_frame: Indexes in any form :func:`~searchkit.frames.throughput_frame`
            accepts, a frame it returned (tidy or ``wide=True``), or a Series from
            :func:`~searchkit.frames.throughput_series`.
        ax: The Axes to draw on; a new figure is made when None.
        tz: Time zone of the date axis (name or ``tzinfo``); by default the data's own
            zone, UTC for indexes.
        resample: A pandas frequency such as ``"15min"`` or ``"1h"``: plot the mean of each
            period (in the axis's time zone) instead of every point.
        title: Title of the Axes.
        forecast: A :func:`~searchkit.forecast_limits` frame: draw each plotted index's
            recent pace until the reset (dashed), the pace that would use exactly its limit
            (dotted) and when the limit is hit.

    Returns:
        The Axes, with a concise date axis labelled with its time zone, the y axis
        labelled "throughput", and a legend by index name. An index with a single point
        shows as a marker; with no points at all the Axes says "no throughput data".

    Raises:
        ValidationError: The input has an unexpected shape, or ``tz``/``resample`` is not
            understood.
        TimestampError: A throughput time does not parse.

    Example:
        >>> indexes = client.list_indexes()  # doctest: +SKIP
        >>> ax = plot_throughput(indexes, tz="Europe/Berlin", resample="15min")  # doctest: +SKIP
        >>> ax.figure.savefig("throughput.png")  # doctest: +SKIP
    """
    import matplotlib.dates as mdates
    from matplotlib.ticker import EngFormatter

    lines = _throughput_lines(indexes_or_frame, tz)
    zone = _zone_of(lines, tz)
    if resample is not None:
        offset = _offset(resample)
        lines = [(label, series.resample(offset).mean()) for label, series in lines]
    if ax is None:
        ax = _new_axes((10, 4))

    drawn = 0
    for label, series in lines:
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        points = int(np.count_nonzero(~np.isnan(values)))
        if points == 0:
            continue
        # Naive UTC datetime64 is what matplotlib converts fastest; the locator and the
        # formatter below show it in ``zone``.
        times = series.index.tz_convert("UTC").tz_localize(None).to_numpy()
        ax.plot(
            times,
            values,
            label=label,
            linewidth=1.1,
            marker="o" if points == 1 else None,
            markersize=5,
        )
        drawn += 1

    ax.set_ylabel("throughput")
    ax.set_xlabel(f"time ({_zone_label(zone)})")
    if title is not None:
        ax.set_title(title)
    if drawn == 0:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.text(0.5, 0.5, "no throughput data", transform=ax.transAxes, **_NOTE_STYLE)
        return ax

    locator = mdates.AutoDateLocator(tz=zone, minticks=4, maxticks=10)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, tz=zone))
    threshold = _log_threshold(lines)
    if threshold is not None:
        # Indexes whose typical levels differ a hundredfold would otherwise flatten the
        # quiet ones onto the axis. symlog keeps exact zeros (a log axis cannot).
        ax.set_yscale("symlog", linthresh=threshold)
        ax.yaxis.set_major_formatter(EngFormatter(sep=""))
        ax.set_ylabel("throughput (log scale)")
    if _all_non_negative(lines):
        ax.set_ylim(bottom=0)
    if forecast is not None:
        _draw_forecast(ax, forecast, [label for label, _ in lines])
    ax.grid(True, linewidth=0.5, alpha=0.4)
    ax.margins(x=0.02)
    # Outside the plot area: a legend inside would hide the busiest hours of some line.
    ax.legend(
        title="index",
        fontsize="small",
        title_fontsize="small",
        frameon=False,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        ncols=1 + (drawn - 1) // 16,
    )
    return ax


def _throughput_lines(data: Any, tz: TimeZone) -> list[tuple[str, pd.Series]]:
    """Turn any accepted input into (label, Series indexed by aware time) pairs."""
    if isinstance(data, pd.Series):
        if not isinstance(data.index, pd.DatetimeIndex):
            raise ValidationError("a throughput Series must be indexed by time")
        label = "throughput" if data.name is None else str(data.name)
        return [(label, _aware(data, tz))]
    if isinstance(data, pd.DataFrame):
        if {"time", "value"} <= set(data.columns):
            return _tidy_lines(data, tz)
        if isinstance(data.index, pd.DatetimeIndex):
            # The wide form's outer join fills other indexes' times with NaN; drawn as
            # is, every line would be cut to dots. Each column keeps its own points.
            return [(str(column), _aware(data[column].dropna(), tz)) for column in data.columns]
        raise ValidationError(
            "expected a throughput frame: columns index_id, name, time, value, or a wide "
            "frame indexed by time"
        )
    return _tidy_lines(throughput_frame(data, tz=tz), tz)


def _tidy_lines(frame: pd.DataFrame, tz: TimeZone) -> list[tuple[str, pd.Series]]:
    key = "index_id" if "index_id" in frame.columns else "name"
    if key not in frame.columns:
        return [("throughput", _aware(_points_series(frame), tz))]
    groups = list(frame.groupby(key, sort=False, observed=True, dropna=False))
    names = [_group_name(part, key_value) for key_value, part in groups]
    seen = Counter(names)
    lines = []
    for (key_value, part), name in zip(groups, names, strict=True):
        # Two indexes may share a name: tell them apart by id in the legend.
        label = f"{name} ({key_value})" if seen[name] > 1 and key == "index_id" else name
        lines.append((label, _aware(_points_series(part).sort_index(), tz)))
    return lines


def _group_name(part: pd.DataFrame, key_value: Any) -> str:
    name = part["name"].iloc[0] if "name" in part.columns else None
    return str(key_value) if pd.isna(name) else str(name)


def _points_series(frame: pd.DataFrame) -> pd.Series:
    return pd.Series(
        frame["value"].to_numpy(dtype=np.float64, na_value=np.nan),
        index=pd.DatetimeIndex(frame["time"]),
    )


def _aware(series: pd.Series, tz: TimeZone) -> pd.Series:
    index = series.index
    if index.tz is None:
        # Naive times in a frame are read as UTC, the toolkit's convention.
        index = index.tz_localize("UTC")
    if tz is not None:
        try:
            index = index.tz_convert(tz)
        except (KeyError, ValueError, TypeError, AttributeError) as exc:
            raise ValidationError(f"unknown time zone {tz!r}") from exc
    return series.set_axis(index)


def _zone_of(lines: list[tuple[str, pd.Series]], tz: TimeZone) -> dt.tzinfo:
    if isinstance(tz, dt.tzinfo):
        return tz
    if isinstance(tz, str):
        try:
            return zoneinfo.ZoneInfo(tz)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
            raise ValidationError(f"unknown time zone {tz!r}") from exc
    for _, series in lines:
        return series.index.tz
    return dt.timezone.utc


def _zone_label(zone: dt.tzinfo) -> str:
    key = getattr(zone, "key", None) or getattr(zone, "zone", None)
    if key:
        return str(key)
    text = str(zone)
    return "UTC" if text in ("UTC", "UTC+00:00") else text


def _offset(resample: str | pd.DateOffset) -> pd.DateOffset:
    try:
        return pd.tseries.frequencies.to_offset(resample)
    except (ValueError, TypeError) as exc:
        raise ValidationError(
            f"resample must be a pandas frequency like '15min', got {resample!r}"
        ) from exc


def _log_threshold(lines: list[tuple[str, pd.Series]]) -> float | None:
    """Return the linear range of a symlog axis when levels span orders of magnitude."""
    levels = []
    for _, series in lines:
        positive = series[series > 0]
        if len(positive):
            levels.append(float(positive.median()))
    if len(levels) < 2 or max(levels) / min(levels) < _LOG_SPAN:
        return None
    return 10.0 ** math.floor(math.log10(min(levels)))


def _all_non_negative(lines: list[tuple[str, pd.Series]]) -> bool:
    return all(not (series < 0).any() for _, series in lines)


# --- limits ------------------------------------------------------------------------------


def plot_limits(
    indexes_or_frame: Indexes | pd.DataFrame,
    field: str = "max_daily_queries",
    *,
    ax: Axes | None = None,
) -> Axes:
    """Plot one limit across indexes as horizontal bars.

    Args:
        indexes_or_frame: Indexes in any form :func:`~searchkit.frames.limits_frame`
            accepts, or a frame it returned.
        field: The limit to show, one of :data:`~searchkit.models.LIMIT_FIELDS`.
        ax: The Axes to draw on; a new figure is made when None.

    Returns:
        The Axes: one bar per index, labelled with its value; an unlimited index is a
        hatched bar to the axis edge labelled "unlimited", a missing value is labelled "—".
        The axis is logarithmic when the values span two orders of magnitude or more.

    Raises:
        ValidationError: ``field`` is not a limit, or the input has an unexpected shape.

    Example:
        >>> ax = plot_limits(client.list_indexes(), field="max_vector_count")  # doctest: +SKIP
        >>> ax.figure.savefig("limits.png")  # doctest: +SKIP
    """
    from matplotlib.colors import to_rgba
    from matplotlib.ticker import EngFormatter

    if field not in LIMIT_FIELDS:
        raise ValidationError(f"unknown limit {field!r}; limits are: {', '.join(LIMIT_FIELDS)}")
    labels, values = _limit_values(indexes_or_frame, field)
    if ax is None:
        ax = _new_axes((8, 1.2 + 0.45 * max(len(values), 2)))
    ax.set_title(field)
    unit = _LIMIT_UNITS[field]
    ax.set_xlabel(unit)
    if values.size == 0:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.text(0.5, 0.5, "no indexes", transform=ax.transAxes, **_NOTE_STYLE)
        return ax

    finite = np.isfinite(values)
    unlimited = np.isposinf(values)
    missing = np.isnan(values)
    positive = values[finite & (values > 0)]
    log = positive.size > 0 and positive.max() / positive.min() >= _LOG_SPAN
    if log:
        ax.set_xscale("log")
        # The decade below the smallest value, so that its bar is visible too.
        left = 10 ** math.floor(math.log10(positive.min()) - 0.3)
        right = 10 ** (math.log10(positive.max()) + 0.6)  # room for the value labels
    else:
        left = min(0.0, values[finite].min()) if finite.any() else 0.0
        top = values[finite].max() if finite.any() else 0.0
        right = top * 1.3 if top > 0 else 1.0
    ax.set_xlim(left, right)

    color = "C0"
    bytes_unit = field == "max_monthly_bandwidth"
    byte_format = EngFormatter(unit="B")
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
    for row in y:
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
                byte_format(value) if bytes_unit else format_limit(value),
                (end, row),
                xytext=(4, 0),
                textcoords="offset points",
                ha="left",
                va="center",
                fontsize="small",
                color="0.15",
            )

    ax.set_yticks(y, labels)
    ax.set_ylim(values.size - 0.5, -0.5)  # first index on top
    ax.xaxis.set_major_formatter(byte_format if bytes_unit else EngFormatter(sep=""))
    if not finite.any():
        ax.set_xticks([])
    ax.grid(True, axis="x", linewidth=0.5, alpha=0.4)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return ax


def _limit_values(data: Any, field: str) -> tuple[list[str], np.ndarray]:
    if isinstance(data, pd.DataFrame):
        if field not in data.columns:
            raise ValidationError(f"the frame has no column {field!r}")
        frame = data
    elif isinstance(data, pd.Series):
        raise ValidationError("expected indexes or a limits frame, got a Series")
    else:
        frame = limits_frame(data)
    ids = [str(i) for i in frame.index]
    names = frame["name"].tolist() if "name" in frame.columns else ids
    labels = [
        str(name) if isinstance(name, str) and name else ids[row] for row, name in enumerate(names)
    ]
    values = pd.to_numeric(frame[field], errors="coerce").to_numpy(
        dtype=np.float64, na_value=np.nan
    )
    return labels, values


def _draw_forecast(ax: Axes, forecast: pd.DataFrame, names: list[str]) -> None:
    from searchkit.usage import draw_forecast

    draw_forecast(ax, forecast, names)
