"""The demo: the main job of searchkit, end to end, on an embedded emulator."""

from __future__ import annotations

import pathlib
import sys
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from searchkit.analytics.day_forecast import DayForecast

__all__ = ["run_demo"]

#: A fixed seed so the demo's indexes, tokens and series are the same on every run.
DEMO_SEED = 2026


def run_demo(
    out: str | pathlib.Path = "searchkit-demo", *, stream: TextIO | None = None
) -> dict[str, pathlib.Path]:
    """Start the demo emulator, list it over HTTP, print limits, write the plots.

    Args:
        out: Folder for the PNG files; created when missing.
        stream: Where to print (stdout by default).

    Returns:
        The written files: ``{"throughput": path, "limits": path, "forecast": path,
        "utilization": path, "cockpit": path}`` (the last, the quota cockpit's picture of
        the index that crosses its limit later today).
    """
    # A bare Figure draws with the Agg canvas on savefig, without pyplot and without
    # switching the user's backend (matplotlib.use would change it for the whole process).
    from matplotlib.figure import Figure

    from searchkit.cli.table import limits_table, terminal_columns
    from searchkit.emulator import Emulator
    from searchkit.render.limit_bars import plot_limits
    from searchkit.render.plots import plot_throughput

    stream = stream or sys.stdout
    folder = pathlib.Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    with Emulator(demo=True, seed=DEMO_SEED) as emulator, emulator.client() as client:
        print(f"demo emulator at {emulator.url} (synthetic data, loopback only)", file=stream)
        indexes = client.list_indexes()
    print(f"{len(indexes)} indexes, limits per index:\n", file=stream)
    print(limits_table(indexes, width=terminal_columns(stream)), file=stream)

    written = {}
    fig = Figure(figsize=(11, 5), layout="constrained")
    # Per-minute points over a day draw as a barcode; 15-minute means show the daily shape.
    plot_throughput(
        indexes,
        ax=fig.add_subplot(),
        resample="15min",
        title="Throughput of the demo indexes (15-minute means)",
    )
    written["throughput"] = folder / "throughput.png"
    fig.savefig(written["throughput"], dpi=110)

    fig = Figure(figsize=(9, 4.5), layout="constrained")
    plot_limits(indexes, field="max_daily_queries", ax=fig.add_subplot())
    written["limits"] = folder / "limits.png"
    fig.savefig(written["limits"], dpi=110)

    written.update(_write_usage(folder, stream))

    print("\nwrote:", file=stream)
    width = max(map(len, written))  # the paths in one column
    for what, path in written.items():
        print(f"  {what:<{width}} {path.resolve()}  ({SHOWS[what]})", file=stream)
    return written


#: What each written file shows, the limit it draws named (issue 28: one demo drew two
#: limits for one index without saying which).
SHOWS = {
    "throughput": "15-minute means per index, operations/s (assumed)",
    "limits": "limit max_daily_queries per index",
    "forecast": "today against max_daily_queries + max_daily_updates",
    "utilization": "each UTC day against max_daily_queries + max_daily_updates",
    "cockpit": "today's forecast against max_daily_queries + max_daily_updates",
}


def _write_usage(folder: pathlib.Path, stream: TextIO) -> dict[str, pathlib.Path]:
    """Forecast today's daily limits and draw a week of utilization (issue 13's questions).

    A second demo emulator returns a week of throughput per index, so one list holds
    enough days for the heatmap; the forecast is for the current UTC day.
    """
    from matplotlib.figure import Figure

    from searchkit.analytics.day_forecast import forecast_day
    from searchkit.cli.forecast import forecast_text
    from searchkit.cli.table import terminal_columns
    from searchkit.emulator import Emulator
    from searchkit.render.utilization import plot_utilization

    with Emulator(demo=True, seed=DEMO_SEED, window_minutes=7 * 1440) as emulator:
        with emulator.client() as client:
            week = client.list_indexes()
    day = forecast_day(week)  # forecast_limits' rows, and the curves the cockpit draws
    forecast = day.rows
    print(
        "\ndaily limits (queries + updates, in operations), forecast to the next reset at "
        "UTC midnight:\n",
        file=stream,
    )
    # The table `searchkit forecast` prints: the same columns, order and notes.
    print(forecast_text(forecast, width=terminal_columns(stream)), file=stream)
    written = {"forecast": folder / "forecast.csv"}
    forecast.to_csv(written["forecast"])
    fig = Figure(figsize=(11, 4), layout="constrained")
    plot_utilization(week, ax=fig.add_subplot())
    written["utilization"] = folder / "utilization.png"
    fig.savefig(written["utilization"], dpi=110)
    written["cockpit"] = _write_cockpit(day, folder, stream)
    return written


def _write_cockpit(day: DayForecast, folder: pathlib.Path, stream: TextIO) -> pathlib.Path:
    """The quota cockpit's picture of the index that crosses its limit later today."""
    import pandas as pd

    from searchkit.render.cockpit_pictures import day_pngs
    from searchkit.render.forecast_plot import find_index

    rows = day.rows
    ahead = rows[rows["hit_at"] > rows["as_of"]].sort_values("hit_at")
    index_id = str(ahead.index[0]) if len(ahead) else find_index(rows, None)
    row = rows.loc[index_id]
    if pd.isna(row["hit_at"]):
        says = "runs out first, though not today"
    elif len(ahead):
        says = f"crosses its limit at {row['hit_at']:%H:%M} UTC today"
    else:
        says = f"reached its limit at {row['hit_at']:%H:%M} UTC today"
    print(f"\nthe quota cockpit's picture of {row['name']}, which {says}", file=stream)
    path = folder / "cockpit.png"
    path.write_bytes(day_pngs(day, index_id)[0])
    return path
