"""Matplotlib plots of throughput over time (:func:`plot_throughput`), and the plots' helpers.

The plots (here, in :mod:`~searchkit.render.limit_bars` and :mod:`~searchkit.render.utilization`)
follow matplotlib's own advice for helpers: draw on the Axes they are given (or on a new
figure when none is), return that Axes, and never call ``plt.show()`` or touch global
settings such as rcParams, so they compose with subplots and stay quiet in tests.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
from collections import Counter
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from searchkit._deprecation import legacy_arguments
from searchkit.errors import UnknownIndexError, ValidationError
from searchkit.frames.counting import clean_values, invalid_values, sums_in_order
from searchkit.frames.sources import Source, is_recorded
from searchkit.frames.throughput_frames import throughput_frame
from searchkit.frames.zones import TimeZone, resolve_zone
from searchkit.render.formats import plain_number, short_id
from searchkit.render.themes import (
    Theme,
    ThemeName,
    apply_theme,
    index_slots,
    line_look,
    theme_of,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from matplotlib.axes import Axes
    from pandas.tseries.offsets import BaseOffset

__all__ = [
    "AUTO_POINTS",
    "AUTO_STEPS",
    "NOTE_STYLE",
    "THROUGHPUT_LABEL",
    "auto_step",
    "draw_throughput",
    "literal",
    "new_axes",
    "plot_throughput",
    "themed",
]

# Levels spanning at least this ratio get a log axis, so the quiet lines do not lie flat:
# at a 10x spread the lowest line would use a tenth of the height on a linear axis.
_LOG_SPAN = 10.0
#: Most indexes plot_throughput draws by default; past it, the busiest are drawn.
MAX_INDEXES = 20
#: Most points per line that ``resample="auto"`` draws, and the steps it chooses from.
AUTO_POINTS = 200
AUTO_STEPS: tuple[tuple[str, str], ...] = (
    ("", "every point"),
    ("5min", "5-minute means"),
    ("15min", "15-minute means"),
    ("1h", "hourly means"),
    ("1D", "daily means"),
)
#: The y axis's words: DESIGN.md's one documented assumption about throughput values (the
#: API documents no unit), the same one usage_frame's ``value_unit`` makes.
THROUGHPUT_LABEL = "throughput (operations/s, assumed)"
NOTE_STYLE: dict[str, Any] = {"ha": "center", "va": "center", "color": "0.45", "fontsize": "large"}


def literal(text: object) -> str:
    """Return a name as matplotlib text that shows it literally.

    Names are data: a ``$`` would start mathtext (``$5 vs $6`` drawn as math, or
    ``price $\\frac{1}{$`` raising a parse error) and a leading underscore hides a legend
    entry. The dollar signs are escaped here; legends are given their labels explicitly,
    which keeps the ones starting with ``_``.
    """
    return str(text).replace("$", r"\$")


def new_axes(figsize: tuple[float, float]) -> Axes:
    """Return the Axes of a new pyplot figure of ``figsize`` inches, laid out constrained."""
    # pyplot only when the caller gave no Axes: that is what makes the figure show up in
    # a notebook; a given Axes is drawn on as is.
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


# --- throughput --------------------------------------------------------------------------


class _Line:
    """One line to draw: a stable key (the index id when known), its label, its points.

    The points Series is made on first use, so that of 1,000 indexes only the lines
    actually drawn pay for one.
    """

    __slots__ = ("_make", "_series", "key", "label", "name", "volume")

    def __init__(
        self,
        key: str,
        label: str,
        series: pd.Series | Callable[[], pd.Series],
        volume: float,
        name: str | None = None,
    ) -> None:
        self.key, self.label, self.volume = key, label, volume
        self.name = label if name is None else name
        self._series = series if isinstance(series, pd.Series) else None
        self._make = None if isinstance(series, pd.Series) else series

    @property
    def series(self) -> pd.Series:
        if self._series is None:
            assert self._make is not None
            self._series = self._make()
        return self._series

    @series.setter
    def series(self, value: pd.Series) -> None:
        self._series = value


@legacy_arguments(renamed={"indexes_or_frame": "source", "max_lines": "max_indexes"})
def plot_throughput(
    source: Source | pd.Series,
    *,
    ax: Axes | None = None,
    tz: TimeZone = None,
    resample: str | pd.DateOffset | None = "auto",
    title: str | None = None,
    names: Iterable[str] | None = None,
    max_indexes: int | None = MAX_INDEXES,
    forecast: pd.DataFrame | None = None,
    theme: ThemeName | None = None,
) -> Axes:
    """Plot throughput over time, one line per index.

    Args:
        source: Indexes in any form :func:`~searchkit.throughput_frame`
            accepts, a History (its stored points), a frame it returned (tidy or
            ``wide=True``), or a Series from :func:`~searchkit.throughput_series`.
        ax: The Axes to draw on; a new figure is made when None.
        tz: Time zone of the date axis (name or ``tzinfo``); by default the data's own
            zone, UTC for indexes.
        resample: A pandas frequency such as ``"15min"`` or ``"1h"``: plot the mean of each
            period (in the axis's time zone); None plots every point; ``"auto"`` (default)
            the finest of every point, 5-minute, 15-minute, hourly and daily means that
            draws at most 200 points a line (a day of minute points: 15-minute means), and
            the x label says which. Every point of a day, each drop to 0 drawn to the axis,
            reads as a barcode of spikes (on a symlog axis, each full height).
        title: Title of the Axes.
        names: Plot only the indexes of these names.
        max_indexes: Draw at most this many indexes: the busiest by total throughput;
            the legend's title says how many were left out. None draws every index.
        forecast: A :func:`~searchkit.forecast_limits` frame: draw each plotted index's
            recent pace until the reset (dashed), the pace that would use exactly its limit
            (dotted) and when the limit is hit.
        theme: ``"dark"`` draws for a dark page (JupyterLab Dark), ``"light"`` for a
            light one; by default the theme of an enclosing ``sk.plot_theme(...)`` block,
            else matplotlib's own look.

    Returns:
        The Axes, with a concise date axis labelled with its time zone, the y axis
        labelled "throughput (operations/s, assumed)" with plain-number ticks (0.1, 1,
        1,000), and a legend by index name (shown literally: ``$`` and a leading ``_`` are
        kept). Each line has a look of its own: ten colours, then the same ten dashed,
        dotted and dash-dotted. When levels differ tenfold or more the y axis is "symlog"
        (linear near zero, logarithmic above) and its label says so. An index with a
        single point shows as a marker; with no points at all the Axes says "no
        throughput data".

    Raises:
        ValidationError: The input has an unexpected shape, ``names`` names no index, or
            ``tz``/``resample`` is not understood.
        TimestampError: A throughput time does not parse.

    Example:
        >>> indexes = client.list_indexes()  # doctest: +SKIP
        >>> ax = plot_throughput(indexes, tz="Europe/Berlin", resample="15min")  # doctest: +SKIP
        >>> ax.figure.savefig("throughput.png")  # doctest: +SKIP
    """
    return draw_throughput(
        source,
        ax=ax,
        tz=tz,
        resample=resample,
        title=title,
        names=names,
        max_indexes=max_indexes,
        forecast=forecast,
        theme=theme,
    )


def draw_throughput(
    data: Source | pd.Series,
    *,
    ax: Axes | None = None,
    tz: TimeZone = None,
    resample: str | pd.DateOffset | None = None,
    title: str | None = None,
    names: Iterable[str] | None = None,
    max_indexes: int | None = MAX_INDEXES,
    colors: Mapping[str, Any] | None = None,
    linewidth: float = 1.1,
    forecast: pd.DataFrame | None = None,
    theme: ThemeName | None = None,
) -> Axes:
    """Draw as :func:`plot_throughput`; ``colors`` maps line keys (index ids) to colours."""
    look = theme_of(theme)
    zone_given = resolve_zone(tz)
    auto = isinstance(resample, str) and resample == "auto"
    offset = _offset(resample) if resample is not None and not auto else None
    lines = _throughput_lines(data, zone_given, names)
    total = len(lines)
    # Looks are given over every index of the data, before the busiest are chosen: an
    # index has the same colour whichever others are drawn beside it.
    slots = index_slots(line.key for line in lines)
    if max_indexes is not None and total > max_indexes:
        lines = sorted(lines, key=lambda line: -line.volume)[: max(max_indexes, 0)]
    zone = zone_given or _zone_of(lines)
    means = _means_words(offset) if offset is not None else ""
    if auto:
        chosen, means = _auto_step(lines)
        offset = _offset(chosen) if chosen else None
    if offset is not None:
        for line in lines:
            line.series = line.series.resample(offset).mean()
    if ax is None:
        ax = new_axes((10, 4))

    handles, labels = _draw_lines(ax, lines, slots, colors, linewidth, look)

    ax.set_ylabel(THROUGHPUT_LABEL)
    ax.set_xlabel(f"time ({_zone_label(zone)})" + (f"; {means}" if offset is not None else ""))
    if title is not None:
        ax.set_title(title)
    if not handles:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.text(0.5, 0.5, "no throughput data", transform=ax.transAxes, **NOTE_STYLE)
        return themed(ax, look)

    _time_and_scale(ax, lines, zone)
    if forecast is not None:
        _draw_forecast(ax, forecast, [line.name for line in lines])
    ax.grid(True, linewidth=0.5, alpha=0.4)
    ax.margins(x=0.02)
    _throughput_legend(ax, handles, labels, shown=len(lines), total=total)
    return themed(ax, look)


def themed(ax: Axes, theme: Theme | None) -> Axes:
    """Return ``ax``, recoloured for ``theme`` when one is given."""
    if theme is not None:
        apply_theme(ax, theme)
    return ax


def _draw_lines(
    ax: Axes,
    lines: list[_Line],
    slots: Mapping[str, int],
    colors: Mapping[str, Any] | None,
    linewidth: float,
    look: Theme | None,
) -> tuple[list[Any], list[str]]:
    """Draw each line that has a value; return the legend's handles and labels."""
    handles: list[Any] = []
    labels: list[str] = []
    for line in lines:
        values = line.series.to_numpy(dtype=np.float64, na_value=np.nan)
        points = int(np.count_nonzero(~np.isnan(values)))
        if points == 0:
            continue
        # Naive UTC datetime64 is what matplotlib converts fastest; the locator and the
        # formatter below show it in ``zone``.
        times = pd.DatetimeIndex(line.series.index).tz_convert("UTC").tz_localize(None).to_numpy()
        # One look per index (its colour wherever it is drawn), distinct within the plot.
        style = line_look(slots[line.key], look)
        if colors is not None and line.key in colors:
            style = {"color": colors[line.key], "linestyle": "-"}
        (handle,) = ax.plot(
            times,
            values,
            label=literal(line.label),
            linewidth=linewidth,
            marker="o" if points == 1 else None,
            markersize=5,
            **style,
        )
        handles.append(handle)
        labels.append(literal(line.label))
    return handles, labels


def _time_and_scale(ax: Axes, lines: list[_Line], zone: dt.tzinfo) -> None:
    """Put time ticks in ``zone`` and pick the y scale (symlog for levels far apart)."""
    import matplotlib.dates as mdates
    from matplotlib.ticker import FuncFormatter

    locator = mdates.AutoDateLocator(tz=zone, minticks=4, maxticks=10)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, tz=zone))
    threshold = _log_threshold(lines)
    if threshold is not None:
        # Indexes whose typical levels differ tenfold would otherwise flatten the quiet
        # ones onto the axis. symlog keeps exact zeros (a log axis cannot): linear below
        # the threshold, logarithmic above, and the label says exactly that.
        ax.set_yscale("symlog", linthresh=threshold)
        ax.set_ylabel(f"{THROUGHPUT_LABEL}\nsymlog: linear below {plain_number(threshold)}")
    # Plain numbers: an SI tick such as "100m" (0.1) reads as a hundred million.
    ax.yaxis.set_major_formatter(FuncFormatter(plain_number))
    if _all_non_negative(lines):
        ax.set_ylim(bottom=0)


def _throughput_legend(
    ax: Axes, handles: list[Any], labels: list[str], *, shown: int, total: int
) -> None:
    """Put the legend beside the plot, saying how many lines were left out."""
    left_out = total - shown
    legend_title = "index"
    if left_out:
        legend_title = f"top {shown} of {total:,} by volume\n({left_out:,} not shown)"
    # Labels passed explicitly: a name starting with "_" is kept (matplotlib would drop it).
    # Outside the plot area: a legend inside would hide the busiest hours of some line.
    ax.legend(
        handles,
        labels,
        title=legend_title,
        fontsize="small",
        title_fontsize="small",
        frameon=False,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        ncols=1 + (len(handles) - 1) // 16,
    )


def _throughput_lines(data: Any, tz: dt.tzinfo | None, names: Iterable[str] | None) -> list[_Line]:
    """Turn any accepted input into lines whose series are indexed by aware time."""
    wanted = None if names is None else [names] if isinstance(names, str) else list(names)
    if is_recorded(data):
        data = data.throughput()
    if isinstance(data, pd.Series):
        if not isinstance(data.index, pd.DatetimeIndex):
            raise ValidationError("a throughput Series must be indexed by time")
        label = "throughput" if data.name is None else str(data.name)
        lines = [_line(label, label, _aware(data, tz))]
    elif isinstance(data, pd.DataFrame):
        if {"time", "value"} <= set(data.columns):
            lines = _tidy_lines(data, tz, wanted)
        elif isinstance(data.index, pd.DatetimeIndex):
            # The wide form's outer join fills other indexes' times with NaN; drawn as
            # is, every line would be cut to dots. Each column keeps its own points.
            columns = [c for c in data.columns if wanted is None or str(c) in wanted]
            lines = [_line(str(c), str(c), _aware(data[c].dropna(), tz)) for c in columns]
        else:
            raise ValidationError(
                "expected a throughput frame: columns index_id, name, time, value, or a wide "
                "frame indexed by time"
            )
    else:
        lines = _tidy_lines(throughput_frame(data), tz, wanted)
    if wanted is not None:
        missing = [n for n in wanted if not any(line.name == n for line in lines)]
        if missing:
            raise UnknownIndexError(f"no index named {', '.join(map(repr, missing))} to plot")
    return lines


def _line(key: str, label: str, series: pd.Series) -> _Line:
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    return _Line(key, label, series, float(np.nansum(values)) if values.size else 0.0)


def _tidy_lines(frame: pd.DataFrame, tz: dt.tzinfo | None, wanted: list[str] | None) -> list[_Line]:
    key = "index_id" if "index_id" in frame.columns else "name"
    if key not in frame.columns:
        return [_line("throughput", "throughput", _aware(_points_series(frame), tz))]
    if wanted is not None and "name" in frame.columns:
        frame = frame[frame["name"].isin(wanted).to_numpy()]
    # One pass over the columns (no groupby of per-index frames): codes, order, volumes.
    keys = frame[key].astype(object).to_numpy()
    codes, uniques = pd.factorize(keys, use_na_sentinel=False)
    names_col = frame["name"].astype(object).to_numpy() if "name" in frame.columns else keys
    values = frame["value"].to_numpy(dtype=np.float64, na_value=np.nan)
    times = pd.DatetimeIndex(frame["time"])
    if times.tz is None:
        times = times.tz_localize("UTC")  # naive times in a frame are read as UTC
    if tz is not None:
        times = times.tz_convert(tz)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(uniques) + 1))
    # The busiest by the values usage counts (negative or infinite ones count for nothing).
    volumes = sums_in_order(codes, clean_values(values, invalid_values(values)), len(uniques))
    first = order[bounds[:-1]] if len(frame) else np.array([], dtype=np.int64)
    labels = [_name_of(names_col[row], uniques[code]) for code, row in enumerate(first)]
    seen = Counter(labels)
    lines = []
    for code, label in enumerate(labels):
        rows = order[bounds[code] : bounds[code + 1]]
        # Two indexes may share a name: tell them apart by (short) id in the legend.
        ident = str(uniques[code])
        shown = f"{label} ({short_id(ident)})" if seen[label] > 1 and key == "index_id" else label
        make = functools.partial(_part, values, times, rows)
        lines.append(_Line(ident, shown, make, float(volumes[code]), label))
    return lines


def _part(values: np.ndarray, times: pd.DatetimeIndex, rows: np.ndarray) -> pd.Series:
    part = pd.Series(values[rows], index=times[rows])
    return part if part.index.is_monotonic_increasing else part.sort_index()


def _name_of(name: Any, key_value: Any) -> str:
    return (
        str(key_value) if name is None or (isinstance(name, float) and name != name) else str(name)
    )


def _points_series(frame: pd.DataFrame) -> pd.Series:
    return pd.Series(
        frame["value"].to_numpy(dtype=np.float64, na_value=np.nan),
        index=pd.DatetimeIndex(frame["time"]),
    )


def _aware(series: pd.Series, tz: dt.tzinfo | None) -> pd.Series:
    index = pd.DatetimeIndex(series.index)
    if index.tz is None:
        # Naive times in a frame are read as UTC, the toolkit's convention.
        index = index.tz_localize("UTC")
    if tz is not None:
        index = index.tz_convert(tz)
    return series.set_axis(index)


def _zone_of(lines: list[_Line]) -> dt.tzinfo:
    for line in lines:
        zone = pd.DatetimeIndex(line.series.index).tz
        return zone if zone is not None else dt.timezone.utc
    return dt.timezone.utc


def _zone_label(zone: dt.tzinfo) -> str:
    key = getattr(zone, "key", None) or getattr(zone, "zone", None)
    if key:
        return str(key)
    text = str(zone)
    return "UTC" if text in ("UTC", "UTC+00:00") else text


def _offset(resample: str | pd.DateOffset) -> BaseOffset:
    try:
        return cast(pd.DateOffset, pd.tseries.frequencies.to_offset(resample))
    except (ValueError, TypeError) as exc:
        raise ValidationError(
            f"resample must be a pandas frequency like '15min', got {resample!r}"
        ) from exc


def _means_words(offset: BaseOffset) -> str:
    """How the x axis names a resampling asked for: as ``"auto"`` names its own choice."""
    for freq, words in AUTO_STEPS[1:]:
        if offset == pd.tseries.frequencies.to_offset(freq):
            return words
    unit = {"s": "second", "min": "minute", "h": "hour", "D": "day"}.get(offset.rule_code)
    return f"{offset.n}-{unit} means" if unit else f"means per {offset.freqstr}"


def _log_threshold(lines: list[_Line]) -> float | None:
    """Return the linear range of a symlog axis when levels span an order of magnitude."""
    levels = []
    for line in lines:
        values = line.series.to_numpy(dtype=np.float64, na_value=np.nan)
        positive = values[values > 0]
        if positive.size:
            levels.append(float(np.median(positive)))
    if len(levels) < 2 or max(levels) / min(levels) < _LOG_SPAN:
        return None
    return 10.0 ** math.floor(math.log10(min(levels)))


def auto_step(most: int, span: pd.Timedelta) -> tuple[str | None, str]:
    """The finest resampling that draws at most AUTO_POINTS a line: (frequency, words).

    ``most`` is the most points of any line, ``span`` the time the lines cover.
    """
    if most <= AUTO_POINTS:
        return None, "every point"
    for freq, words in AUTO_STEPS[1:]:
        if span / pd.Timedelta(freq) <= AUTO_POINTS:
            return freq, words
    return "1D", "daily means"


def _auto_step(lines: list[_Line]) -> tuple[str | None, str]:
    sized = [line.series for line in lines if len(line.series)]
    if not sized:
        return None, "every point"
    first = min(series.index.min() for series in sized)
    last = max(series.index.max() for series in sized)
    return auto_step(max(len(series) for series in sized), last - first)


def _all_non_negative(lines: list[_Line]) -> bool:
    return all(not (line.series < 0).any() for line in lines)


# --- limits ------------------------------------------------------------------------------


def _draw_forecast(ax: Axes, forecast: pd.DataFrame, names: list[str] | None = None) -> None:
    """Draw forecast rows onto a throughput Axes (used by ``plot_throughput(forecast=)``).

    For each index: the recent pace, dashed, from now to the reset; the pace that would
    use exactly the rest of the limit, dotted ("limit pace"); and a marker where the limit
    is hit. Above the dotted line means the limit will be hit before the reset.
    """
    colors = {line.get_label(): line.get_color() for line in ax.get_lines()}
    for _, row in forecast.iterrows():
        if names is not None and row["name"] not in names:
            continue
        now = row.get("as_of", pd.NaT)
        if pd.isna(row["projected"]) or pd.isna(row["pace"]) or pd.isna(now):
            continue
        color = colors.get(row["name"], "grey")
        start = now.tz_convert("UTC").tz_localize(None).to_datetime64()
        end = row["reset"].tz_convert("UTC").tz_localize(None).to_datetime64()
        ax.plot([start, end], [row["pace"]] * 2, linestyle="--", color=color, linewidth=1.2)
        if np.isfinite(row["limit"]):
            left = max((row["reset"] - now).total_seconds(), 1.0)
            allowed = max(row["limit"] - row["used"], 0.0) / left
            ax.plot([start, end], [allowed] * 2, linestyle=":", color=color, linewidth=1.5)
        if pd.notna(row["hit_at"]):
            when = row["hit_at"].tz_convert("UTC").tz_localize(None).to_datetime64()
            ax.axvline(when, color=color, linestyle="-.", linewidth=1.0, alpha=0.8)
