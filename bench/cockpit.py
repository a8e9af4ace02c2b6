"""Benchmark the quota cockpit on 1,000 indexes x 30 days, as the collector leaves a store.

The store: 29 closed days compacted with their rollups (what ``searchkit collect`` leaves
once it has compacted a day) and today, 2026-11-20, as 10-minute collect files up to 15:00
(90 files), written in exactly collect's layout (bench/history.py's writers), each followed
by what the collector does to the open day's rollup (``open_day.advance``: extended with the
round's points, so the store's readers find today summed).

Prints, each measured in a fresh process of its own in this run:
- ready: from ``sk.quota_cockpit(hist)`` to the table and the first picture shown
  (target < 2 s), beside ``forecast_limits(hist)`` alone (the floor: the cockpit's rows are
  its rows) and the backtest column's arrival (it fills in after the table);
- select: selecting another row until its picture is drawn, median of 10 (target < 300 ms),
  the daily-usage view's first drawing (which reads usage_frame once), and its next;
- refresh: after one more 10-minute collect file lands in the store, until the table and
  picture show it (target < 1 s); and a refresh with nothing new;
- the kernel's peak resident memory (target < 500 MB) and the bytes of widget state the
  browser receives (pictures, not points).

The cockpit's present is a clock: 15:00, then 15:10 once the extra collect lands (as
``now=emulator.now`` or the wall clock would be). Beside each time, the CPU seconds the
process spent (all its threads): on a shared machine the wall time follows the load, the
CPU time much less.

With ``--baseline SRC`` (a source tree: ``git archive REV searchkit | tar -x -C SRC``), the
same measurements of that code, interleaved with this code's (``--rounds`` of each, each
in a fresh process on the same store reset to NOW), as ranges, with the ratio of the
medians. ``--without-crossings``: today's rollup as a collector that knew no limit leaves
it (the points of the indexes past their limit are read for their crossing instant).

With ``--gained`` (beside ``--baseline``), instead: a notebook's cockpit opened while the
closed days had no rollup (their rollups held out of the store: a collector that kept
none), so its first read takes their points; then the rollups land (moved back in, as
``refresh_rollups()`` would write them) and a collect file with them; the refresh after
that (``gained``), and the one after the next collect (``next``), wall and CPU, with
whether the rows are ``forecast_limits``' on the store read afresh to the bit. The control
(``--gained``'s third column, this code) is the same refresh on the store whose rollups
were never held out.

Usage: .venv/bin/python bench/cockpit.py [--indexes 1000] [--days 30] [--keep DIR]
           [--baseline SRC] [--rounds N] [--without-crossings] [--gained]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
import history as written

NOW = written.END + pd.Timedelta(hours=15)
TICKS = 90  # 10-minute collects of today before NOW


def _layout(root: Path):
    import pyarrow.fs as pafs

    from searchkit.history.layout import Layout

    return Layout(str(root), pafs.LocalFileSystem(), str(root))


def _crossed(root: Path) -> dict[str, list[float]]:
    """The limits whose crossings the collector keeps in today's rollup (collect_round:
    ``daily_limits`` of the limits it just listed)."""
    import searchkit as sk
    from searchkit.history.crossings import daily_limits

    return daily_limits(sk.History(root).limits())


def write_today(root: Path, indexes: int, ticks: range) -> None:
    """Today's points as 10-minute collect files (one file per collect, not compacted),
    each round's file followed by the collector's extension of today's rollup, with the
    crossings of the limits it saw (as ``searchkit collect`` leaves it)."""
    from searchkit.history import open_day
    from searchkit.history.layout import THROUGHPUT_SCHEMA, stored

    layout = _layout(root)
    crossed = _crossed(root)

    ids = [str(uuid.UUID(int=i + 1, version=4)) for i in range(indexes)]
    names = [f"index-{i:04d}" for i in range(indexes)]
    level = 10 ** np.random.default_rng(7).uniform(0, 3, indexes)  # the closed days' levels
    rng = np.random.default_rng(ticks.start)
    first = written.END
    for tick in ticks:
        minute = np.arange(tick * 10, tick * 10 + 10, dtype=np.int64)
        stamp = first.value + (tick + 1) * 600_000_000_000
        times = np.tile(first.value + minute * 60_000_000_000, indexes)
        shape = 1 + 0.6 * np.cos(2 * np.pi * minute / written.MINUTES)
        values = np.round(np.outer(level, shape) * rng.uniform(0.9, 1.1, (indexes, 10)), 2)
        table = pa.Table.from_arrays(
            [
                pa.array(["bench-account"] * times.size, pa.string()),
                pa.array(np.repeat(ids, 10), pa.string()),
                pa.array(np.repeat(names, 10), pa.string()),
                pa.array(times, pa.timestamp("ns", tz="UTC")),
                pa.array(values.ravel()),
                pa.array(np.full(times.size, stamp), pa.timestamp("ns", tz="UTC")),
            ],
            schema=THROUGHPUT_SCHEMA,
        )
        path = layout.write("throughput", f"{first:%Y-%m-%d}", stored(table), stamp)
        open_day.advance(layout, f"{first:%Y-%m-%d}", path, table, crossed)


def _resident_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _until(check, timeout: float = 120.0) -> float:
    started = time.perf_counter()
    while not check():
        if time.perf_counter() - started > timeout:
            raise TimeoutError("the cockpit did not get there in time")
        time.sleep(0.002)
    return time.perf_counter() - started


def measure(root: str, what: str) -> dict[str, float]:
    """One measurement in this (fresh) process."""
    import matplotlib

    matplotlib.use("Agg")
    import searchkit as sk

    hist = sk.History(root)
    if what == "floor":
        started = time.perf_counter()
        rows = sk.forecast_limits(hist, now=NOW)
        return {"seconds": time.perf_counter() - started, "rows": len(rows)}
    clock = {"now": NOW}  # the cockpit's present: 10 minutes later once a collect lands
    started, cpu = time.perf_counter(), time.process_time()
    cockpit = sk.quota_cockpit(hist, now=lambda: clock["now"])
    _until(lambda: cockpit.picture_png is not None and len(cockpit.page_lines) > 0)
    out = {"ready": time.perf_counter() - started, "ready_cpu": time.process_time() - cpu}
    _until(lambda: not cockpit.rows["backtested"].isna().all())
    out["scored"] = time.perf_counter() - started
    cockpit.wait()
    out.update(_interact(cockpit, root, clock))
    out["state_bytes"] = _state_bytes(cockpit)
    out["resident_mib"] = _resident_mib()
    cockpit.close()
    # A second cockpit in the same kernel (its imports done): what opening one costs.
    started, cpu = time.perf_counter(), time.process_time()
    again = sk.quota_cockpit(hist, now=lambda: clock["now"])
    _until(lambda: again.picture_png is not None and len(again.page_lines) > 0)
    out["warm"], out["warm_cpu"] = time.perf_counter() - started, time.process_time() - cpu
    again.wait()
    again.close()
    return out


def _closed_rollups(root: Path) -> list[Path]:
    return sorted(
        p for p in (root / "rollups").glob("day=*") if p.name < f"day={written.END:%Y-%m-%d}"
    )


def hold_rollups(root: Path) -> None:
    """The closed days' rollups out of the store (to ``<root>-held``), as a collector that
    kept none leaves them."""
    held = root.parent / f"{root.name}-held"
    held.mkdir(exist_ok=True)
    for folder in _closed_rollups(root):
        folder.rename(held / folder.name)


def restore_rollups(root: Path) -> None:
    for folder in sorted((root.parent / f"{root.name}-held").glob("day=*")):
        folder.rename(root / "rollups" / folder.name)


def _ready(cockpit) -> None:
    _until(lambda: cockpit.picture_png is not None and len(cockpit.page_lines) > 0)
    cockpit.wait()


def measure_gained(root: str, held: bool) -> dict[str, float]:
    """``--gained``'s measurement in this (fresh) process: see the module."""
    import matplotlib

    matplotlib.use("Agg")
    import searchkit as sk
    from searchkit.analytics.forecast import FORECAST_COLUMNS

    store = Path(root)
    clock = {"now": NOW}
    started, cpu = time.perf_counter(), time.process_time()
    cockpit = sk.quota_cockpit(sk.History(root), now=lambda: clock["now"])
    _ready(cockpit)
    out = {"opened": time.perf_counter() - started, "opened_cpu": time.process_time() - cpu}
    back = store.parent / f"{store.name}-held"
    for folder in sorted(back.glob("day=*")) if held else []:
        folder.rename(store / "rollups" / folder.name)  # the rollups land
    for tick, key in ((TICKS, "gained"), (TICKS + 1, "next")):
        write_today(store, len(cockpit.rows), range(tick, tick + 1))
        clock["now"] = NOW + pd.Timedelta(minutes=10 * (tick - TICKS + 1))
        started, cpu = time.perf_counter(), time.process_time()
        cockpit.refresh()
        out[key], out[f"{key}_cpu"] = time.perf_counter() - started, time.process_time() - cpu
        assert f"{clock['now'] - pd.Timedelta(minutes=1):%H:%M} UTC" in cockpit.message
    fresh = sk.forecast_limits(sk.History(root), now=clock["now"])
    rows = cockpit.rows[list(FORECAST_COLUMNS)]
    out["identical"] = float(rows.equals(fresh) and (rows.dtypes == fresh.dtypes).all())
    cockpit.close()
    return out


def bench_gained(root: Path, baseline: str | None, rounds: int) -> None:
    """``--gained``: this code and the baseline's, interleaved, and the control."""
    runs = {"this code": (None, True)}
    runs |= {"baseline": (baseline, True)} if baseline else {}
    runs |= {"control (never held)": (None, False)}
    got: dict[str, list[dict[str, float]]] = {label: [] for label in runs}
    loads = [os.getloadavg()[0]]
    for _ in range(rounds):
        for label, (code, held) in runs.items():  # interleaved: A B C A B C ...
            restore_rollups(root)  # (a run that failed left them out)
            reset_today(root)
            if held:
                hold_rollups(root)
            got[label].append(run(root, f"gained-{int(held)}", code))
            loads.append(os.getloadavg()[0])
    print(f"load (1 min) before and after each run: {min(loads):.1f}-{max(loads):.1f} (shared)")
    print(f"{'':34s}" + "".join(f"{label:>28s}" for label in runs))
    for key, label in (
        ("opened", "cockpit opened (closed days read)"),
        ("gained", "refresh after the rollups landed"),
        ("next", "the refresh after that"),
    ):
        cells = [
            f"{_span([r[key] for r in got[n]])} s ({_span([r[key + '_cpu'] for r in got[n]])})"
            for n in runs
        ]
        print(f"{label:34s}" + "".join(f"{cell:>28s}" for cell in cells))
    same = ["yes" if all(r["identical"] for r in got[name]) else "NO" for name in runs]
    print(f"{'rows == forecast_limits afresh':34s}" + "".join(f"{cell:>28s}" for cell in same))
    if baseline:
        for key in ("gained", "next"):
            mine = statistics.median(r[key + "_cpu"] for r in got["this code"])
            theirs = statistics.median(r[key + "_cpu"] for r in got["baseline"])
            print(f"{key}: CPU this code / baseline = {mine / theirs:.2f}x (medians)")
    reset_today(root)


def _interact(cockpit, root: str, clock: dict[str, pd.Timestamp]) -> dict[str, float]:
    ids = list(cockpit.shown.index[1:11])
    timings, cpus = [], []
    for index_id in ids:
        before = cockpit.picture_png
        started, cpu = time.perf_counter(), time.process_time()
        cockpit.select(str(index_id))
        _until(lambda b=before: cockpit.picture_png is not b and not cockpit.busy)
        timings.append(time.perf_counter() - started)
        cpus.append(time.process_time() - cpu)
    view = next(w for w in _tree(cockpit) if "sk-view" in getattr(w, "_dom_classes", ()))
    started = time.perf_counter()
    view.value = "daily"
    cockpit.wait()
    daily_first = time.perf_counter() - started
    before = cockpit.picture_png
    started = time.perf_counter()
    cockpit.select(str(ids[0]))
    cockpit.wait()
    daily_next = time.perf_counter() - started
    view.value = "today"
    cockpit.wait()
    started = time.perf_counter()
    cockpit.refresh()
    unchanged = time.perf_counter() - started
    write_today(Path(root), len(cockpit.rows), range(TICKS, TICKS + 1))
    clock["now"] = NOW + pd.Timedelta(minutes=10)
    started, cpu = time.perf_counter(), time.process_time()
    cockpit.refresh()
    refreshed, refreshed_cpu = time.perf_counter() - started, time.process_time() - cpu
    assert "15:09 UTC" in cockpit.message, cockpit.message
    assert before is not None
    return {
        "select_median": statistics.median(timings),
        "select_cpu": statistics.median(cpus),
        "refresh_cpu": refreshed_cpu,
        "select_max": max(timings),
        "daily_first": daily_first,
        "daily_next": daily_next,
        "refresh_nothing_new": unchanged,
        "refresh": refreshed,
    }


def _tree(root):
    import ipywidgets as widgets

    seen, todo = {}, [root]
    while todo:
        widget = todo.pop()
        if widget.model_id in seen:
            continue
        seen[widget.model_id] = widget
        for name in widget.keys:
            value = getattr(widget, name)
            values = value if isinstance(value, list | tuple) else [value]
            todo += [v for v in values if isinstance(v, widgets.Widget)]
    return list(seen.values())


def _state_bytes(cockpit) -> int:
    return sum(len(json.dumps(w.get_state(), default=repr)) for w in _tree(cockpit))


def reset_today(root: Path, crossings: bool = True) -> None:
    """Today as the collector left it at NOW: an earlier measurement's extra collect file
    removed, and today's rollup rolled up from its points (with the crossings of the
    limits the collector saw, unless ``crossings`` is false: a collector that knew no
    limit)."""
    from searchkit.history import reader, rollups

    day = f"{written.END:%Y-%m-%d}"
    for extra in (root / "throughput" / f"day={day}").glob("part-*.parquet"):
        if int(extra.name.split("-")[1]) > NOW.value:
            extra.unlink()
    layout = _layout(root)
    points = reader.read(layout, "throughput", days=(day, day))
    source = rollups.sources(layout, day, day)[day]
    limits = _crossed(root) if crossings else None
    rollups.replace(layout, day, rollups.rollup(points, day, source, limits=limits), points)


def run(root: Path, what: str, code: str | None = None) -> dict[str, float]:
    """Measure in a fresh process; ``code``: a source tree to import searchkit from."""
    env = dict(os.environ)
    if code:
        env["PYTHONPATH"] = code  # ahead of the installed searchkit
    result = subprocess.run(
        [sys.executable, __file__, "--measure", str(root), what],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def _span(values: list[float], scale: float = 1.0, digits: int = 2) -> str:
    low, high = min(values) * scale, max(values) * scale
    if len(values) == 1 or f"{low:.{digits}f}" == f"{high:.{digits}f}":
        return f"{low:.{digits}f}"
    return f"{low:.{digits}f}-{high:.{digits}f}"


# (key, label, scale, digits, unit, target)
_FIGURES = (
    ("floor", "forecast_limits alone", 1, 2, "s", ""),
    ("ready", "ready (table + first picture)", 1, 2, "s", "< 2 s"),
    ("ready_cpu", "  its CPU", 1, 2, "s", ""),
    ("warm_cpu", "  a second cockpit in the kernel, CPU", 1, 2, "s", ""),
    ("scored", "backtest column filled at", 1, 2, "s", ""),
    ("select_median", "select a row -> picture, median of 10", 1000, 0, "ms", "< 300 ms"),
    ("select_cpu", "  its CPU", 1000, 0, "ms", ""),
    ("daily_first", "daily view, first (reads usage_frame)", 1000, 0, "ms", ""),
    ("daily_next", "daily view, next row", 1000, 0, "ms", ""),
    ("refresh", "refresh after one more collect", 1, 2, "s", "< 1 s"),
    ("refresh_cpu", "  its CPU", 1, 2, "s", ""),
    ("refresh_nothing_new", "refresh with nothing new", 1000, 0, "ms", ""),
    ("resident_mib", "kernel peak resident memory", 1, 0, "MiB", "< 500 MB"),
    ("state_bytes", "widget state (pictures, one page of rows)", 1 / 1024, 0, "KiB", ""),
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--indexes", type=int, default=1000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--keep", help="write the store here (or reuse one written there)")
    parser.add_argument(
        "--baseline",
        help="a source tree (git archive REV searchkit | tar -x -C DIR) measured in the same "
        "run, interleaved with this code",
    )
    parser.add_argument("--rounds", type=int, default=1, help="measurements of each code")
    parser.add_argument(
        "--without-crossings",
        action="store_true",
        help="today's rollup without crossings (a collector that knew no limit)",
    )
    parser.add_argument(
        "--gained",
        action="store_true",
        help="a refresh once the closed days read from their points gained rollups",
    )
    parser.add_argument("--measure", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        what = args.measure[1]
        if what.startswith("gained-"):
            print(json.dumps(measure_gained(args.measure[0], what == "gained-1")))
        else:
            print(json.dumps(measure(*args.measure)))
        return
    root = Path(args.keep or tempfile.mkdtemp(prefix="searchkit-cockpit-bench-"))
    if not (root / "throughput").exists():
        started = time.perf_counter()
        written.write_dataset(root, args.indexes, args.days - 1, rollups=True)
        write_today(root, args.indexes, range(TICKS))
        print(f"store written in {time.perf_counter() - started:.0f} s")
    if args.gained:
        print(f"store: {args.indexes:,} indexes x {args.days} days; time in s (CPU in brackets)")
        bench_gained(root, args.baseline, args.rounds)
        return
    crossings = not args.without_crossings
    print(
        f"store: {args.indexes:,} indexes x {args.days} days ({args.days - 1} compacted with "
        f"rollups, today as {TICKS} ten-minute collect files up to {NOW:%H:%M} UTC, its "
        f"rollup {'with' if crossings else 'WITHOUT'} the crossings of the limits the "
        f"collector saw); load before: {os.getloadavg()[0]:.1f}"
    )
    codes = {"this code": None} | ({"baseline": args.baseline} if args.baseline else {})
    got: dict[str, list[dict[str, float]]] = {label: [] for label in codes}
    for _ in range(args.rounds):
        for label, code in codes.items():  # interleaved: A B A B ...
            reset_today(root, crossings)
            figures = run(root, "cockpit", code)
            reset_today(root, crossings)
            figures["floor"] = run(root, "floor", code)["seconds"]
            got[label].append(figures)
    print(f"load after: {os.getloadavg()[0]:.1f} (the machine may be shared: CPU beside wall)")
    header = f"{'':44s}" + "".join(f"{label:>22s}" for label in codes)
    print(header + ("   ratio" if args.baseline else "") + "  target")
    for key, label, scale, digits, unit, target in _FIGURES:
        cells = [_span([r[key] for r in got[name]], scale, digits) + f" {unit}" for name in codes]
        line = f"{label:44s}" + "".join(f"{cell:>22s}" for cell in cells)
        if args.baseline:
            mine = statistics.median(r[key] for r in got["this code"])
            theirs = statistics.median(r[key] for r in got["baseline"])
            line += f"{mine / theirs:7.2f}x" if theirs else "        "
        print(line + ("  " + target if target else ""))


if __name__ == "__main__":
    main()
