"""The demo: the main job of searchkit, end to end, on an embedded emulator."""

from __future__ import annotations

import pathlib
import sys
from typing import TextIO

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
        The written files: ``{"throughput": path, "limits": path}``.
    """
    # A bare Figure draws with the Agg canvas on savefig, without pyplot and without
    # switching the user's backend (matplotlib.use would change it for the whole process).
    from matplotlib.figure import Figure

    from searchkit.display import limits_text_table
    from searchkit.emulator import Emulator
    from searchkit.plotting import plot_limits, plot_throughput

    stream = stream or sys.stdout
    folder = pathlib.Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    with Emulator(demo=True, seed=DEMO_SEED) as emulator, emulator.client() as client:
        print(f"demo emulator at {emulator.url} (synthetic data, loopback only)", file=stream)
        indexes = client.list_indexes()
    print(f"{len(indexes)} indexes, limits per index:\n", file=stream)
    print(limits_text_table(indexes), file=stream)

    written = {}
    fig = Figure(figsize=(11, 5), layout="constrained")
    plot_throughput(indexes, ax=fig.add_subplot(), title="Throughput of the demo indexes")
    written["throughput"] = folder / "throughput.png"
    fig.savefig(written["throughput"], dpi=110)

    fig = Figure(figsize=(9, 4.5), layout="constrained")
    plot_limits(indexes, field="max_daily_queries", ax=fig.add_subplot())
    written["limits"] = folder / "limits.png"
    fig.savefig(written["limits"], dpi=110)

    print("\nwrote:", file=stream)
    for what, path in written.items():
        print(f"  {what:<10} {path.resolve()}", file=stream)
    return written
