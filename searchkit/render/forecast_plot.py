"""The picture of one index's day: what the forecast really says (:func:`plot_forecast`).

Today's cumulative operations from midnight (UTC, when the daily limits reset), the
projected path from now to the reset with its 10-90 band (the rest of the day spread over
the hours as the forecast spreads it, so the projected line crosses the limit exactly at
``hit_at``), the past days' curves faint behind it for the rhythm, the limit it is compared
with named in words, and the hit time with its earliest and latest. Every mark has a legend
entry. The numbers are :func:`~searchkit.forecast_limits`' rows for the same source and
``now``; the curves come from :func:`~searchkit.analytics.day_forecast.forecast_day`.
"""

from __future__ import annotations

import datetime as dt
import functools
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from searchkit.analytics.day_forecast import DayForecast, forecast_day
from searchkit.errors import UnknownIndexError, ValidationError
from searchkit.frames.counting import ValueUnit
from searchkit.frames.zones import TimeZone, resolve_zone
from searchkit.model.limits import LIMIT_INFO
from searchkit.render.formats import format_limit, plain_number
from searchkit.render.plots import NOTE_STYLE, literal, new_axes, themed
from searchkit.render.themes import Theme, ThemeName, index_slots, line_look, theme_of

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from searchkit.frames.sources import Source
    from searchkit.frames.zones import Instant

__all__ = ["draw_day", "find_index", "limit_words", "plot_forecast", "retheme_day"]

_LIMIT_COLOUR = "#d62728"
_DARK_LIMIT_COLOUR = "#ff6b6b"
# What each themed mark of a day's picture is coloured by (its gid): the index's colour,
# the theme's muted grey, the limit's red. :func:`retheme_day` recolours by them.
_INDEX, _MUTED, _LIMIT = "sk-index", "sk-muted", "sk-limit"


def limit_words(field: str) -> str:
    """Say which limit a figure draws, in words: "queries + updates a day".

    Example:
        >>> limit_words("max_daily_queries+max_daily_updates")
        'queries + updates a day'
    """
    fields = field.split("+")
    if not all(f in LIMIT_INFO for f in fields):
        return field.replace("+", " + ")
    what = " + ".join(LIMIT_INFO[f].label.split(" / ")[0] for f in fields)
    period = LIMIT_INFO[fields[0]].period
    return f"{what} a {period}" if period else what


def find_index(rows: pd.DataFrame, index: str | None) -> str:
    """Return the ``index_id`` of the row ``index`` names (an id or a name).

    None picks the index that runs out first: the earliest ``hit_at``, else the highest
    ``projected_utilization`` of a finite limit.

    Raises:
        UnknownIndexError: No row has that id or name (a ValidationError and a KeyError).
        ValidationError: There are no rows.
    """
    if rows.empty:
        raise ValidationError("there is no index to draw: the source holds none")
    if index is None:
        finite = np.isfinite(rows["limit"].to_numpy(np.float64))
        ratio = (rows["projected"] / rows["limit"]).where(finite)
        order = pd.DataFrame({"hit": rows["hit_at"], "ratio": -ratio.fillna(-np.inf)})
        return str(order.sort_values(["hit", "ratio"], na_position="last").index[0])
    if index in rows.index:
        return str(index)
    named = rows.index[rows["name"] == index]
    if len(named) == 0:
        known = ", ".join(repr(n) for n in sorted(rows["name"].astype(str))[:8])
        raise UnknownIndexError(f"no index has the name or id {index!r}; there are: {known}")
    return str(named[0])


def plot_forecast(
    source: Source | DayForecast,
    *,
    index: str | None = None,
    now: Instant | None = None,
    field: str | None = None,
    tz: TimeZone = None,
    value_unit: ValueUnit = "per_second",
    past_days: int = 7,
    ax: Axes | None = None,
    title: str | None = None,
    theme: ThemeName | None = None,
) -> Axes:
    """Draw what today's forecast of one index says, against its daily limit.

    Args:
        source: Anything :func:`~searchkit.forecast_limits` takes (or a
            :class:`~searchkit.analytics.day_forecast.DayForecast` made already).
        index: The index's name or id; None draws the one that runs out first.
        now: The instant to forecast from, as :func:`~searchkit.forecast_limits` takes it.
        field: The limit, as :func:`~searchkit.forecast_limits` takes it (default the sum
            of the daily queries and updates).
        tz: Time zone of the time axis (the day drawn is still the UTC day the limit
            counts, from reset to reset).
        value_unit: See :func:`~searchkit.usage_frame`.
        past_days: How many complete past days to draw faintly behind today.
        ax: The Axes to draw on; a new figure is made when None.
        title: Title of the Axes; by default the index's name and the limit's words.
        theme: ``"dark"`` or ``"light"``, as the other plots take it.

    Returns:
        The Axes: today's cumulative operations (solid, the index's colour), the projected
        path to the reset (dashed) inside its 10-90 band (shaded), the past days (faint
        grey), the limit (a red line, named in the legend with its value; "unlimited" is
        said, never drawn), now, and the hit time with its earliest and latest (a marker
        on the limit with a bar between them). The legend names each mark.

    Raises:
        ValidationError: ``index`` names no index, or an option is refused as
            :func:`~searchkit.forecast_limits` refuses it.

    Example:
        >>> ax = sk.plot_forecast(hist, index="code-snippets")  # doctest: +SKIP
    """
    if isinstance(source, DayForecast):
        day = source
    else:
        day = forecast_day(source, now, field=field, value_unit=value_unit)
    index_id = find_index(day.rows, index)
    if ax is None:
        ax = new_axes((10, 4.2))
    return draw_day(ax, day, index_id, tz=tz, past_days=past_days, title=title, theme=theme)


@functools.lru_cache(maxsize=4)
def _slots(keys: tuple[str, ...]) -> dict[str, int]:
    """:func:`index_slots` of a figure's indexes, worked out once for a cockpit's pictures
    (each selection draws one index among the same 1,000)."""
    return index_slots(keys)


def draw_day(
    ax: Axes,
    day: DayForecast,
    index_id: str,
    *,
    tz: TimeZone = None,
    past_days: int = 7,
    title: str | None = None,
    theme: ThemeName | None = None,
) -> Axes:
    """Draw one index's day on ``ax`` (see :func:`plot_forecast`)."""
    look = theme_of(theme)
    zone = resolve_zone(tz, default=dt.timezone.utc) or dt.timezone.utc
    row: Any = day.rows.loc[index_id]
    start, reset = pd.Timestamp(row["period"]), pd.Timestamp(row["reset"])
    colours = _colours(day, index_id, look)
    colour, muted, limit_colour = colours[_INDEX], colours[_MUTED], colours[_LIMIT]

    def x(times: Any) -> Any:
        return pd.DatetimeIndex(times).tz_convert("UTC").tz_localize(None).to_numpy()

    top = 0.0
    past = day.past(index_id, days=past_days)
    for number, (_, curve) in enumerate(past.groupby("day", sort=False)):
        hours = start + pd.to_timedelta(curve["hour"].to_numpy(), unit="h")
        label = f"past {past['day'].nunique()} complete days" if number == 0 else None
        ax.plot(
            x(hours), curve["used"], color=muted, alpha=0.35, linewidth=0.9, label=label, gid=_MUTED
        )
        top = max(top, float(curve["used"].max()))
    today = day.today(index_id)
    if len(today):
        ax.plot(
            x(today["time"]),
            today["used"],
            color=colour,
            linewidth=2.0,
            label=f"today so far: {format_limit(round(row['used']))}",
            gid=_INDEX,
        )
        top = max(top, float(today["used"].max()))
    path = day.path(index_id)
    if len(path):
        times = x(path["time"])
        ax.fill_between(
            times,
            path["projected_low"],
            path["projected_high"],
            color=colour,
            alpha=0.18,
            linewidth=0,
            label="10-90 band",
            gid=_INDEX,
        )
        ax.plot(
            times,
            path["projected"],
            color=colour,
            linestyle="--",
            linewidth=1.6,
            label=f"forecast: {format_limit(round(row['projected']))} at the reset "
            f"({row['method']})",
            gid=_INDEX,
        )
        top = max(top, float(path["projected_high"].max()))
    top = _draw_limit(ax, row, limit_colour, top, x)
    _draw_hit(ax, row, limit_colour, zone, x)
    as_of = pd.Timestamp(row["as_of"])
    ax.axvline(
        x([as_of])[0],
        color=muted,
        linewidth=0.8,
        linestyle=":",
        label=f"now: {as_of.tz_convert(zone):%H:%M}",
        gid=_MUTED,
    )
    _finish(ax, row, zone, x([start, reset]), top, title, look)
    return themed(ax, look)


def _colours(day: DayForecast, index_id: str, look: Theme | None) -> dict[str, str]:
    """The colour of each role of a day's picture in ``look``."""
    # The index's look among the source's indexes: its colour in the other figures of them.
    slot = _slots(tuple(day.rows.index.astype(str)))[str(index_id)]
    dark = look is not None and look.name == "dark"
    return {
        _INDEX: line_look(slot, look)["color"],
        _MUTED: look.muted if look else "#8c8c8c",
        _LIMIT: _DARK_LIMIT_COLOUR if dark else _LIMIT_COLOUR,
    }


def retheme_day(ax: Axes, day: DayForecast, index_id: str, *, theme: ThemeName) -> Axes:
    """Recolour a picture :func:`draw_day` drew of ``index_id`` for ``theme``: the same
    picture, to the pixel, as drawing it in that theme, without drawing it again (the
    cockpit draws each selection in both themes)."""
    from matplotlib.patches import Patch

    look = theme_of(theme)
    colours = _colours(day, index_id, look)
    marks: list[Any] = [*ax.lines, *ax.collections]
    for mark in marks:
        role = mark.get_gid()
        if role in colours:
            mark.set_color(colours[role])
    legend = ax.get_legend()
    if legend is not None:
        # The legend's samples are copies made when it was drawn: recoloured as theirs.
        shown: list[Any] = ax.get_legend_handles_labels()[0]
        for sample, mark in zip(legend.legend_handles, shown, strict=True):
            role = mark.get_gid()
            if sample is None or role not in colours:
                continue
            if isinstance(sample, Patch):  # a band's sample: its colours, alpha and all
                sample.set_facecolor(tuple(mark.get_facecolor()[0]))
                sample.set_edgecolor(tuple(mark.get_edgecolor()[0]))
            else:
                sample.set_color(colours[role])  # type: ignore[attr-defined]
        if look is not None:
            legend.get_frame().set_facecolor(look.face)
    return themed(ax, look)


def _draw_limit(ax: Axes, row: pd.Series, colour: str, top: float, x: Any) -> float:
    limit = float(row["limit"])
    words = limit_words(str(row["field"]))
    if np.isfinite(limit):
        ax.axhline(
            limit,
            color=colour,
            linewidth=1.3,
            label=f"limit: {format_limit(limit)} {words}",
            gid=_LIMIT,
        )
        return max(top, limit)
    text = "unlimited" if np.isposinf(limit) else "not reported by the service"
    ax.plot([], [], " ", label=f"limit of {words}: {text}")
    return top


def _draw_hit(ax: Axes, row: pd.Series, colour: str, zone: dt.tzinfo, x: Any) -> None:
    hit = row["hit_at"]
    if pd.isna(hit) or not np.isfinite(float(row["limit"])):
        return
    when = pd.Timestamp(hit)
    limit = float(row["limit"])
    if when <= pd.Timestamp(row["as_of"]):
        label = f"limit reached at {when.tz_convert(zone):%H:%M}"
        ax.plot(
            x([when]),
            [limit],
            marker="X",
            markersize=10,
            color=colour,
            linestyle="",
            label=label,
            gid=_LIMIT,
        )
        return
    early, late = row["hit_at_earliest"], row["hit_at_latest"]
    span = "" if pd.isna(early) else f", earliest {pd.Timestamp(early).tz_convert(zone):%H:%M}"
    span += (
        ", latest: not before the reset"
        if pd.isna(late)
        else (f", latest {pd.Timestamp(late).tz_convert(zone):%H:%M}")
    )
    centre = x([when])[0]
    left = x([early])[0] if pd.notna(early) else centre
    right = x([late])[0] if pd.notna(late) else x([row["reset"]])[0]
    ax.plot(
        [left, right],
        [limit, limit],
        color=colour,
        linewidth=5,
        alpha=0.45,
        solid_capstyle="butt",
        gid=_LIMIT,
    )
    ax.plot(
        [centre],
        [limit],
        marker="o",
        markersize=8,
        color=colour,
        linestyle="",
        label=f"hit at {when.tz_convert(zone):%H:%M}{span}",
        gid=_LIMIT,
    )


def _finish(
    ax: Axes, row: pd.Series, zone: dt.tzinfo, span: Any, top: float, title: str | None, look: Any
) -> None:
    import matplotlib.dates as mdates
    from matplotlib.ticker import FuncFormatter

    ax.set_xlim(span[0], span[1])
    ax.set_ylim(0, top * 1.08 if top > 0 else 1)
    locator = mdates.HourLocator(byhour=range(0, 24, 3), tz=zone)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M", tz=zone))
    zone_name = "UTC" if zone == dt.timezone.utc else str(zone)
    ax.set_xlabel(
        f"time ({zone_name}); the limit resets at "
        f"{pd.Timestamp(row['reset']).tz_convert(zone):%H:%M}"
    )
    ax.set_ylabel("operations since the reset")
    ax.yaxis.set_major_formatter(FuncFormatter(plain_number))
    ax.grid(True, linewidth=0.5, alpha=0.4)
    name = literal(row["name"])
    # At the top of the axes, as matplotlib would place it (nothing is above them): said
    # here, it is not worked out again from the tick labels' extents at every drawing.
    ax.set_title(
        title or f"{name}: today against its limit of {limit_words(str(row['field']))}", y=1.0
    )
    if not len(ax.get_lines()) or pd.isna(row["used"]):
        ax.text(
            0.5,
            0.5,
            row["reason"] or "no throughput today",
            transform=ax.transAxes,
            wrap=True,
            **NOTE_STYLE,
        )
    ax.legend(
        loc="upper left", fontsize="small", framealpha=0.6, facecolor=look.face if look else None
    )
