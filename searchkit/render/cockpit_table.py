"""The cockpit's table of urgency: which index runs out first, in rows people read.

The rows are :func:`~searchkit.forecast_limits`' frame (one per index, for one limit),
with how the index's forecasts fared in its backtest beside them. This module sorts,
filters and pages them, writes each row as a line of aligned text (the widget's listbox
is the table, so the keyboard moves through it), and exports what is shown as CSV with the
numbers as numbers.
"""

from __future__ import annotations

import datetime as dt
import html
import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from searchkit.analytics.forecast import FORECASTABLE_FIELDS, check_field
from searchkit.render.forecast_plot import limit_words
from searchkit.render.formats import format_limit

if TYPE_CHECKING:
    from searchkit.analytics.day_forecast import DayForecast

__all__ = [
    "FIELD_CHOICES",
    "HEADERS",
    "SCORE_COLUMNS",
    "SORT_KEYS",
    "backtest_scores",
    "check_cockpit_field",
    "detail_html",
    "field_words",
    "hit_text",
    "row_label",
    "rows_csv",
    "shown_rows",
    "table_header",
    "with_scores",
]

#: The limits the cockpit offers: those throughput can use up (the sum first).
FIELD_CHOICES: tuple[str, ...] = (FORECASTABLE_FIELDS[-1], *FORECASTABLE_FIELDS[:-1])
#: The backtest's columns beside the forecast's: the share of replayed forecasts whose
#: real day total ended inside the band, the share of right breach calls, and how many.
SCORE_COLUMNS = ("band_held", "calls_right", "backtested")
#: Sort choices: label -> the column sorted on ("urgency": hit time, then utilization).
SORT_KEYS: dict[str, str] = {
    "runs out first": "urgency",
    "name": "name",
    "limit": "limit",
    "used": "used",
    "projected": "projected",
    "projected utilization": "projected_utilization",
    "hit at": "hit_at",
    "method": "method",
    "backtest": "band_held",
    "reason": "reason",
}
# (title, width, sort key) of each text column, in order; numbers are right-aligned.
# The hit time's header sorts by urgency: soonest hit first, then the highest utilization.
_COLUMNS = (
    ("index", 22, "name"),
    ("limit", 11, "limit"),
    ("used", 11, "used"),
    ("projected (10-90)", 34, "projected"),
    ("util.", 9, "projected_utilization"),
    ("hit at (earliest-latest)", 26, "urgency"),
    ("method", 14, "method"),
    ("backtest", 26, "band_held"),
    ("reason", 34, "reason"),
)
#: The table's column headers, each a sort control: (title, width in characters, the sort
#: key of SORT_KEYS it sorts by, whether its cells are right-aligned).
HEADERS: tuple[tuple[str, int, str, bool], ...] = tuple(
    (title, width, key, 1 <= i <= 4) for i, (title, width, key) in enumerate(_COLUMNS)
)


def backtest_scores(day: DayForecast) -> pd.DataFrame:
    """How each index's replayed forecasts fared: :data:`SCORE_COLUMNS` by ``index_id``.

    From the backtest of the days the forecast read (:meth:`~searchkit.analytics.day_forecast.
    DayForecast.scores`: :func:`~searchkit.backtest_forecast`'s replay of the forecaster,
    against the rows' limits, without reading the store again nor building its frame of
    results): ``band_held`` is the share of its forecasts whose day's real total fell
    inside the 10-90 band, ``calls_right`` the share whose breach call (projected over the
    limit or not) came true, ``backtested`` how many forecasts were replayed.
    """
    return day.scores()[list(SCORE_COLUMNS)]


def with_scores(rows: pd.DataFrame, scores: pd.DataFrame | None) -> pd.DataFrame:
    """The forecast rows with the backtest's columns beside them (NaN until known)."""
    out = rows.copy()
    for column in SCORE_COLUMNS:
        if scores is not None and column in scores.columns:
            out[column] = scores[column].reindex(out.index.astype(str)).to_numpy()
        else:
            out[column] = np.nan
    if scores is not None:  # known: an index the backtest could not replay has 0 forecasts
        out["backtested"] = out["backtested"].fillna(0)
    return out


def shown_rows(
    rows: pd.DataFrame, *, text: str = "", sort: str = "urgency", descending: bool = False
) -> pd.DataFrame:
    """The rows whose name holds ``text`` (any case), sorted on ``sort`` (see SORT_KEYS).

    Missing values sort last either way; ties keep the name order. "urgency" sorts by
    ``hit_at`` (soonest first, never-hit last), then by the highest projected
    utilization of a finite limit.
    """
    chosen = rows
    if text.strip():
        names = rows["name"].astype(str).str.casefold()
        chosen = rows[names.str.contains(text.strip().casefold(), regex=False)]
    chosen = chosen.sort_values("name", kind="stable")
    if sort == "urgency":
        finite = np.isfinite(chosen["limit"].to_numpy(np.float64))
        keys = pd.DataFrame(
            {
                "hit": chosen["hit_at"],
                "ratio": -chosen["projected_utilization"].where(finite),
            },
            index=chosen.index,
        )
        urgent = keys.sort_values(["hit", "ratio"], na_position="last", kind="stable").index
        chosen = chosen.loc[urgent]
        return chosen.iloc[::-1] if descending else chosen
    values: pd.Series = chosen[sort]
    if sort == "projected_utilization":  # unlimited has no utilization: it sorts last
        values = values.where(np.isfinite(chosen["limit"].to_numpy(np.float64)))
    order = values.sort_values(ascending=not descending, na_position="last", kind="stable")
    return chosen.loc[order.index]


def _number(value: Any) -> str:
    return format_limit(round(float(value))) if np.isfinite(value) else "—"


def hit_text(row: pd.Series, zone: dt.tzinfo) -> str:
    """When the row's limit runs out: "19:42 (18:50-21:10)", "reached 14:02", "not today"."""
    if not np.isfinite(float(row["limit"])):
        return "never (unlimited)" if np.isposinf(float(row["limit"])) else "—"
    hit = row["hit_at"]
    if pd.isna(hit):
        if pd.isna(row["projected"]):
            return "—"
        early = row["hit_at_earliest"]
        return (
            "not today"
            if pd.isna(early)
            else (f"not today (earliest {pd.Timestamp(early).tz_convert(zone):%H:%M})")
        )
    when = pd.Timestamp(hit).tz_convert(zone)
    if pd.Timestamp(hit) <= pd.Timestamp(row["as_of"]):
        return f"reached {when:%H:%M}"
    early, late = row["hit_at_earliest"], row["hit_at_latest"]
    first = "?" if pd.isna(early) else f"{pd.Timestamp(early).tz_convert(zone):%H:%M}"
    last = "reset" if pd.isna(late) else f"{pd.Timestamp(late).tz_convert(zone):%H:%M}"
    return f"{when:%H:%M} ({first}-{last})"


def _utilization_text(row: pd.Series) -> str:
    limit = float(row["limit"])
    if np.isposinf(limit):
        return "unlimited"
    value = float(row["projected"]) / limit if limit > 0 else math.nan
    return f"{value:.0%}" if np.isfinite(value) else "—"


def _score_text(row: pd.Series) -> str:
    count = row.get("backtested", np.nan)
    if pd.isna(count):
        return "…"  # the backtest runs after the table shows
    if count == 0:
        return "no day replayed"
    band = f"band {row['band_held']:.0%}"
    calls = "" if pd.isna(row["calls_right"]) else f" calls {row['calls_right']:.0%}"
    return f"{band}{calls} n={int(count)}"


def _cells(row: pd.Series, zone: dt.tzinfo) -> list[str]:
    projected = "—"
    if np.isfinite(row["projected"]):
        projected = (
            f"{_number(row['projected'])} ({_number(row['projected_low'])}-"
            f"{_number(row['projected_high'])})"
        )
    return [
        str(row["name"]),
        format_limit(row["limit"]),
        _number(row["used"]),
        projected,
        _utilization_text(row),
        hit_text(row, zone),
        str(row["method"]) or "none",
        _score_text(row),
        str(row["reason"]) or "calibrated",
    ]


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def row_label(row: pd.Series, zone: dt.tzinfo) -> str:
    """One row as a line of aligned text (names left, numbers right)."""
    parts = []
    for (_, width, _), cell, position in zip(_COLUMNS, _cells(row, zone), range(9), strict=True):
        cell = _fit(cell, width)
        parts.append(cell.rjust(width) if 1 <= position <= 4 else cell.ljust(width))
    return " ".join(parts).rstrip()


def table_header() -> str:
    """The column titles, aligned as :func:`row_label` aligns the rows."""
    parts = [
        title.rjust(width) if 1 <= i <= 4 else title.ljust(width)
        for i, (title, width, _) in enumerate(_COLUMNS)
    ]
    return " ".join(parts).rstrip()


def rows_csv(rows: pd.DataFrame) -> str:
    """The rows as CSV: ``index_id`` first, numbers as numbers (``inf`` for unlimited),
    instants in ISO 8601 UTC, empty where missing. No secret: the rows hold none."""
    return rows.to_csv(date_format="%Y-%m-%dT%H:%M:%S%z")


def check_cockpit_field(field: str | None) -> str:
    """The limit asked for, refused as :func:`~searchkit.forecast_limits` refuses it."""
    return check_field(field)


def field_words(field: str) -> str:
    """A limit's name in the field menu: "queries + updates a day"."""
    return limit_words(field)


def _hit_words(text: str) -> str:
    if text.startswith(("reached", "never", "not today", "—")):
        return f"limit {text}" if text.startswith("reached") else f"hit: {text}"
    return f"hit at {text}"


def detail_html(row: pd.Series, zone: dt.tzinfo) -> str:
    """The selected row in full: every number, the method and the whole reason."""
    e = html.escape
    cells = dict(zip((title for title, _, _ in _COLUMNS), _cells(row, zone), strict=True))
    words = limit_words(str(row["field"]))
    reason = str(row["reason"]) or "a calibrated forecast"
    return (
        '<div class="sk-detail-text" style="font-family:var(--jp-ui-font-family,sans-serif);'
        'font-size:13px;margin:4px 0">'
        f"<b>{e(str(row['name']))}</b> · limit {e(cells['limit'])} {e(words)} · "
        f"used {e(cells['used'])} · projected {e(cells['projected (10-90)'])} · "
        f"<span class='sk-hit'>{e(_hit_words(cells['hit at (earliest-latest)']))}</span> · "
        f"method {e(cells['method'])} · backtest {e(cells['backtest'])}<br>"
        f"<span style='color:var(--jp-ui-font-color2,#666)'>{e(reason)}</span></div>"
    )
