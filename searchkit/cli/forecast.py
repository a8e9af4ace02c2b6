"""``searchkit forecast --store LOCATION [--backtest]``: today's forecast in the terminal."""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["add_parser", "forecast_text", "run"]


def add_parser(sub: Any) -> None:
    """Add the ``forecast`` command to the ``searchkit`` sub-command parsers."""
    p = sub.add_parser(
        "forecast",
        help="forecast today's daily limits from a collected usage history",
        description="Forecast, per index, today's operations at the reset (UTC midnight) "
        "against max_daily_queries + max_daily_updates, from the index's daily and "
        "weekly rhythm in the history; --backtest also replays the stored days to show "
        "how well the method did on them.",
    )
    p.add_argument("--store", required=True, help="folder or URL (s3://bucket/prefix)")
    p.add_argument(
        "--backtest", action="store_true", help="also replay the stored days, per method"
    )


def run(args: argparse.Namespace) -> int:
    """Print the forecast (and the backtest summary) of the history at ``args.store``."""
    from searchkit.analytics.backtest import backtest_forecast
    from searchkit.analytics.forecast import forecast_limits
    from searchkit.history.store import History

    history = History(args.store)
    print(forecast_text(forecast_limits(history)))
    if args.backtest:
        result = backtest_forecast(history)
        print()
        print(backtest_text(result.summary, len(result.results)))
    return 0


def _number(value: float) -> str:
    if not math.isfinite(value):
        return "unlimited" if value == math.inf else "—"
    return f"{value:,.0f}"


def _when(value: Any) -> str:
    import pandas as pd

    return "not before the reset" if pd.isna(value) else f"{value:%H:%M}"


def forecast_text(forecast: pd.DataFrame) -> str:
    """The forecast frame as a table for people, one row per index, then the notes."""
    import pandas as pd

    if forecast.empty:
        return "no indexes in the history"
    first = forecast.iloc[0]
    lines = [
        f"forecast as of {first['as_of']:%Y-%m-%d %H:%M} UTC, to the reset at "
        f"{first['reset']:%Y-%m-%d %H:%M} UTC; {first['field']} (operations)",
        "",
    ]
    rows = []
    records: list[dict[Any, Any]] = forecast.to_dict("records")
    for row in records:
        band = f"{_number(row['projected_low'])} - {_number(row['projected_high'])}"
        share = float(row["projected_utilization"])
        hits = "—"
        if math.isfinite(row["limit"]) and not math.isnan(row["projected"]):
            hits = _when(row["hit_at"])
            if pd.notna(row["hit_at_earliest"]) and row["hit_at_earliest"] != row["hit_at"]:
                hits += f" (earliest {_when(row['hit_at_earliest'])})"
        rows.append(
            {
                "index": row["name"],
                "used": _number(row["used"]),
                "projected": _number(row["projected"]),
                "10-90 band": band if not math.isnan(row["projected"]) else "—",
                "limit": _number(row["limit"]),
                "projected %": f"{share:.0%}" if math.isfinite(share) else "—",
                "hits the limit at": hits,
            }
        )
    lines.append(pd.DataFrame(rows).to_string(index=False))
    notes = [(row["name"], row["reason"]) for row in records if row["reason"]]
    if notes:
        lines += ["", "notes:"]
        lines += [f"  {name}: {reason}" for name, reason in notes]
    return "\n".join(lines)


def backtest_text(summary: pd.DataFrame, count: int) -> str:
    """The backtest summary, per method, as a table for people."""
    import pandas as pd

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
        f"backtest: {count} past forecasts replayed (errors of the day's total, breach "
        "calls against each index's limit)\n" + shown.to_string()
    )
