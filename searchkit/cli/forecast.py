"""``searchkit forecast --store LOCATION [--backtest]``: today's forecast in the terminal."""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING, Any

from searchkit._units import format_duration
from searchkit.cli.collect import add_store_option

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SHOWN", "add_parser", "backtest_text", "by_urgency", "forecast_text", "run"]


#: Rows ``searchkit forecast`` shows without ``--all``: the most urgent indexes.
SHOWN = 20
#: Index names a grouped note lists without ``--all``.
NAMES_PER_NOTE = 3
#: Hours the newest stored point may be old before the output says the forecast is not today's.
STALE_HOURS = 2
#: Which columns of the forecast table stay first when it is fitted to a terminal: what
#: says whether and when the limit is hit, then the numbers behind it.
FORECAST_PRIORITY = (
    "index", "projected %", "hits the limit at", "projected", "limit", "used", "10-90 band",
)  # fmt: skip


def add_parser(sub: Any) -> None:
    """Add the ``forecast`` command to the ``searchkit`` sub-command parsers."""
    p = sub.add_parser(
        "forecast",
        help="forecast today's daily limits from a collected usage history",
        description="Forecast, per index, today's operations at the reset (UTC midnight) "
        "against max_daily_queries + max_daily_updates, from the index's daily and "
        "weekly rhythm in the history; --backtest also replays the stored days to show "
        "how well the method did on them. The most urgent indexes come first: those that "
        "hit their limit, soonest first, then by projected share of the limit.",
    )
    add_store_option(p)
    p.add_argument(
        "--backtest", action="store_true", help="also replay the stored days, per method"
    )
    p.add_argument(
        "--all",
        action="store_true",
        help=f"show every index (by default the {SHOWN} most urgent, and a count of the rest)",
    )
    p.add_argument(
        "--wide",
        action="store_true",
        help="the table with every column, however wide (default: fit the terminal, "
        "COLUMNS or its width, leaving out columns last in this order: "
        + ", ".join(FORECAST_PRIORITY).replace("%", "%%")  # argparse formats help with %
        + ")",
    )


def run(args: argparse.Namespace) -> int:
    """Print the forecast (and the backtest summary) of the history at ``args.store``."""
    import pandas as pd

    from searchkit.analytics.backtest import backtest_forecast
    from searchkit.analytics.forecast import forecast_limits
    from searchkit.cli.collect import open_store
    from searchkit.cli.table import terminal_columns

    history = open_store(args.store)
    history.require_folder()  # a mistyped --store is an error, not an empty forecast
    forecast = forecast_limits(history)
    width = None if args.wide else terminal_columns()
    print(forecast_text(forecast, shown=None if args.all else SHOWN, width=width))
    if not forecast.empty:
        note = stale_note(forecast["as_of"].iloc[0], pd.Timestamp.now(tz="UTC"))
        if note:
            print(f"\n{note}")
    if args.backtest:
        result = backtest_forecast(history)
        print()
        print(backtest_text(result.summary, len(result.results)))
    return 0


def stale_note(as_of: pd.Timestamp, now: pd.Timestamp) -> str | None:
    """A line saying the forecast is of the day the history ends, when that is not today.

    ``searchkit forecast`` forecasts as of the newest stored point (``forecast_limits``
    without ``now``): a history last collected days ago gives that day's forecast, which is
    easy to take for today's.

    Example:
        >>> import pandas as pd
        >>> stale_note(pd.Timestamp("2026-11-19 09:00", tz="UTC"),
        ...            pd.Timestamp("2026-11-25 23:00", tz="UTC"))
        'note: the history ends at 2026-11-19 09:00 UTC, 6 d 14 h ago: this is the forecast for that day; collect to forecast today'
    """  # noqa: E501
    import pandas as pd

    late = now - as_of
    if late <= pd.Timedelta(hours=STALE_HOURS):
        return None
    ago = format_duration(late.total_seconds())
    return (
        f"note: the history ends at {as_of:%Y-%m-%d %H:%M} UTC, {ago} ago: this is the "
        "forecast for that day; collect to forecast today"
    )


def _number(value: float) -> str:
    if not math.isfinite(value):
        return "unlimited" if value == math.inf else "—"
    return f"{value:,.0f}"


def _no_share(limit: float) -> str:
    """What the projected % column shows without a share: unlimited is no 0%."""
    return "unlimited" if limit == math.inf else "—"


def _note(reason: str) -> str:
    """A row's reason as a note: "unlimited" goes without saying (the table shows it)."""
    from searchkit.analytics.limit_periods import UNLIMITED_REASON

    if reason == UNLIMITED_REASON:
        return ""
    return reason.removeprefix(f"{UNLIMITED_REASON}; ")


def _hits(row: dict[Any, Any]) -> str:
    import pandas as pd

    if not math.isfinite(row["limit"]) or math.isnan(row["projected"]):
        return "—"
    if pd.isna(row["hit_at"]):
        return "not before the reset"
    hit = f"{row['hit_at']:%H:%M}"
    text = f"since {hit}" if row["hit_at"] <= row["as_of"] else hit
    earliest = row["hit_at_earliest"]
    if pd.notna(earliest) and f"{earliest:%H:%M}" != hit:
        text += f" (earliest {earliest:%H:%M})"
    return text


def _limited(forecast: pd.DataFrame) -> pd.Series:
    """Rows with a finite limit and a projection: the ones a hit time can mean anything for."""
    return forecast["limit"].map(math.isfinite) & forecast["projected"].notna()


def hits_limit(forecast: pd.DataFrame) -> pd.Series:
    """Whether each index is projected to hit (or has hit) its limit before the reset."""
    return forecast["hit_at"].notna() & _limited(forecast)


def by_urgency(forecast: pd.DataFrame) -> pd.DataFrame:
    """The forecast rows, most urgent first.

    First the indexes projected to hit their limit before the reset, soonest first (those
    already past it first of all), then the rest by projected share of the limit, highest
    first; indexes without a forecast or without a limit last; ties by name.
    """
    limited = _limited(forecast)
    share = forecast["projected_utilization"].where(limited)
    keys = forecast.assign(
        _hits=hits_limit(forecast),
        _at=forecast["hit_at"].where(limited),
        _share=share,
        _name=forecast["name"].astype(str),
    )
    ordered = keys.sort_values(
        ["_hits", "_at", "_share", "_name"],
        ascending=[False, True, False, True],
        na_position="last",
        kind="stable",
    )
    return forecast.loc[ordered.index] if forecast.index.is_unique else ordered[forecast.columns]


def _names(names: list[str], shown: int | None, total: int) -> str:
    if len(names) == total > 1:
        return f"all {total:,} indexes"
    if shown is None or len(names) <= shown:
        return ", ".join(names)
    return f"{', '.join(names[:shown])} and {len(names) - shown:,} more"


def forecast_text(
    forecast: pd.DataFrame, shown: int | None = None, *, width: int | None = None
) -> str:
    """The forecast frame as a table for people, most urgent index first, then the notes.

    Args:
        forecast: What :func:`~searchkit.forecast_limits` returned.
        shown: Rows to show (the most urgent; a line counts the others), or None for all.
            Notes shared by several indexes are one line each, naming
            :data:`NAMES_PER_NOTE` of them unless ``shown`` is None.
        width: Terminal columns to fit (columns left out in :data:`FORECAST_PRIORITY`
            order, and said so; the lines of words wrapped); None: every column.

    Names are shown with control characters escaped, and the columns stay aligned for
    wide (CJK, emoji) names.
    """
    from searchkit.render.table_width import fit_table
    from searchkit.render.text import clip, terminal_safe

    if forecast.empty:
        return "no indexes in the history"
    first = forecast.iloc[0]
    ordered = by_urgency(forecast)
    hits = hits_limit(ordered).to_numpy()
    records: list[dict[Any, Any]] = ordered.to_dict("records")
    for row in records:
        row["name"] = clip(terminal_safe(row["name"] if isinstance(row["name"], str) else "—"))
    hitting = int(hits.sum())
    lines = [
        f"forecast as of {first['as_of']:%Y-%m-%d %H:%M} UTC, to the reset at "
        f"{first['reset']:%Y-%m-%d %H:%M} UTC; {first['field']} (operations)",
        f"{hitting:,} of {len(records):,} indexes hit their limit before the reset; the most "
        "urgent first",
        "",
    ]
    head = ["index", "used", "projected", "10-90 band", "limit", "projected %"]
    rows = []
    for row in records[:shown]:
        band = f"{_number(row['projected_low'])} - {_number(row['projected_high'])}"
        share = float(row["projected_utilization"])
        limited = math.isfinite(row["limit"]) and math.isfinite(share)
        rows.append(
            [
                row["name"],
                _number(row["used"]),
                _number(row["projected"]),
                band if not math.isnan(row["projected"]) else "—",
                _number(row["limit"]),
                f"{share:,.0%}" if limited else _no_share(row["limit"]),
                _hits(row),
            ]
        )
    table = fit_table(
        [*head, "hits the limit at"], rows, width, right={1, 2, 3, 4, 5},
        priority=FORECAST_PRIORITY,
    )  # fmt: skip
    lines.append(table.text)
    if table.left_out:
        many = len(table.left_out)
        lines.append(
            f"{many} column{'s' if many > 1 else ''} left out to fit {width} columns: "
            f"{', '.join(table.left_out)} (--wide shows them)"
        )
    hidden = records[len(rows) :]
    if hidden:
        late = int(hits[len(rows) :].sum())
        lines.append(
            f"... {len(hidden):,} more indexes ({late:,} of them hit their limit); "
            "--all shows every one"
        )
    lines += _notes(records, shown)
    return "\n".join(lines) if width is None else _wrapped(lines, table.text, width)


def _notes(records: list[dict[Any, Any]], shown: int | None) -> list[str]:
    """The notes under the table: one line per reason, naming its indexes."""
    from searchkit.render.text import terminal_safe

    by_reason: dict[str, list[str]] = {}
    for row in records:
        reason = _note(row["reason"])
        if reason:
            by_reason.setdefault(terminal_safe(reason), []).append(row["name"])
    if not by_reason:
        return []
    each = None if shown is None else NAMES_PER_NOTE
    return [
        "",
        "notes:",
        *(
            f"  {_names(names, each, len(records))}: {reason}"
            for reason, names in by_reason.items()
        ),
    ]


def _wrapped(lines: list[str], table: str, width: int) -> str:
    """The lines of words wrapped to ``width`` (a note's next lines indented); the table,
    fitted already, as it is."""
    import textwrap

    from searchkit.render.text import text_width

    out: list[str] = []
    for line in lines:
        if line == table or text_width(line) <= width:
            out.append(line)
            continue
        indent = "    " if line.startswith("  ") else ""
        out += textwrap.wrap(line, max(width, 40), subsequent_indent=indent)
    return "\n".join(out)


def backtest_text(summary: pd.DataFrame, count: int) -> str:
    """The backtest summary, per method, as a table for people."""
    import pandas as pd

    from searchkit.analytics.profile import WINDOW

    if not count:
        return (
            "backtest: no past day to replay yet (a complete day is replayed once "
            f"{WINDOW} days are stored before it)"
        )

    table = summary.rename(
        columns={
            "mean_abs_error": "mean error",
            "median_abs_error": "median error",
            "coverage": "10-90 coverage",
            "hit_time_error_min": "hit time error (min)",
        }
    )
    shown = table.copy().astype(object)
    for column in ("mean error", "median error", "10-90 coverage"):
        shown[column] = [f"{v:.1%}" if pd.notna(v) else "—" for v in table[column]]
    for column in ("precision", "recall", "f1"):
        shown[column] = [f"{v:.2f}" if pd.notna(v) else "—" for v in table[column]]
    shown["forecasts"] = [f"{v:,.0f}" for v in table["forecasts"]]
    minutes = table["hit time error (min)"]
    shown["hit time error (min)"] = [f"{v:.0f}" if pd.notna(v) else "—" for v in minutes]
    return (
        f"backtest: {count:,} past forecasts replayed (errors of the day's total, breach "
        "calls against each index's limit)\n" + shown.to_string()
    )
