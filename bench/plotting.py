"""Benchmark the plots and the index browser over many indexes (issue 10, item 3).

For N indexes (1,000 by default) of one day of per-minute throughput, it prints, each as
the best of a few runs and as a ratio to a baseline measured in the same run:

* ``throughput_frame(indexes)``: the baseline, the conversion every plot starts with;
* ``plot_throughput(indexes, resample="15min")`` drawn and rendered to PNG (the frame
  built inside), target under 1 s at 1,000 indexes;
* ``plot_throughput(frame, resample="15min")`` from a frame already built;
* ``index_browser(client)`` built and idle (listed, table and selection filled, first
  plot drawn), target under 2 s at 1,000 indexes. The client here is an in-memory one whose
  ``list_indexes()`` returns the prepared IndexList, so the figure is the widget's own
  work, not the network's (``bench/throughput.py`` and ``bench/list.py`` measure that).

Run it with ``python bench/plotting.py [--indexes 1000] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import time
from collections.abc import Callable
from typing import Any

import matplotlib

matplotlib.use("Agg")

from matplotlib.figure import Figure

from searchkit.frames.throughput_frames import throughput_frame
from searchkit.model.index import IndexList, SearchIndex
from searchkit.render.plots import plot_throughput
from searchkit.ui.browser import index_browser

POINTS = 1440  # one day per minute
START = dt.datetime(2026, 11, 19, 12, 0, tzinfo=dt.timezone.utc)


def build_indexes(count: int) -> IndexList:
    """Return ``count`` indexes with a day of per-minute throughput each."""
    times = [
        (START + dt.timedelta(minutes=m)).strftime("%Y-%m-%d %H:%M:%S +0000 UTC")
        for m in range(POINTS)
    ]
    items = []
    for n in range(count):
        level = 1 + (n * 7919) % 997
        vector = [{"x": t, "y": float(level + (m * 31 + n) % 17)} for m, t in enumerate(times)]
        items.append(
            SearchIndex.from_dict(
                {
                    "id": f"{n:08d}-0000-4000-8000-000000000000",
                    "name": f"index-{n:04d}",
                    "type": "payg",
                    "region": "eu-west-1",
                    "max_daily_queries": -1 if n % 3 else 1_000_000,
                    "throughput_vector": vector,
                }
            )
        )
    return IndexList(items)


class InMemoryClient:
    """Answers list_indexes() with a prepared list: the browser's cost without the wire."""

    base_url = "memory://bench"
    username = "bench"

    def __init__(self, indexes: IndexList) -> None:
        self._indexes = indexes

    def list_indexes(self) -> IndexList:
        return self._indexes


def best(action: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


def plot_to_png(data: Any) -> None:
    figure = Figure(figsize=(10, 4), layout="constrained")
    plot_throughput(data, ax=figure.add_subplot(), resample="15min")
    figure.savefig(io.BytesIO(), format="png")


def build_browser(client: InMemoryClient) -> None:
    browser = index_browser(client)  # type: ignore[arg-type]
    if not browser.wait(60):
        raise RuntimeError("the browser did not finish building")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--indexes", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    indexes = build_indexes(args.indexes)
    frame = throughput_frame(indexes)
    print(f"{args.indexes:,} indexes x {POINTS:,} points ({len(frame):,} rows)")
    baseline = best(lambda: throughput_frame(indexes), args.repeat)
    rows = [
        ("throughput_frame(indexes)  [baseline]", baseline, None),
        ('plot_throughput(indexes, resample="15min") + PNG', None, 1.0),
        ('plot_throughput(frame, resample="15min") + PNG', None, None),
        ("index_browser(client) built and idle", None, 2.0),
    ]
    actions = [
        None,
        lambda: plot_to_png(indexes),
        lambda: plot_to_png(frame),
        lambda: build_browser(InMemoryClient(indexes)),
    ]
    print(f"{'step':<52} {'seconds':>8} {'x baseline':>11}  target")
    for (label, seconds, target), action in zip(rows, actions, strict=True):
        if action is not None:
            seconds = best(action, args.repeat)
        assert seconds is not None
        goal = f"< {target:.0f} s " + ("met" if seconds < target else "MISSED") if target else ""
        print(f"{label:<52} {seconds:8.3f} {seconds / baseline:10.2f}x  {goal}")


if __name__ == "__main__":
    main()
