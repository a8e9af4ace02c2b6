"""Benchmark the usage history at scale: 1,000 indexes x 30 days x 1,440 points (43.2M).

Prints, each measured in this run:
- collect time per round: the real ``History.collect`` against an in-process emulator
  holding 1,000 indexes (a full day's window each), on top of the 30-day dataset: the first
  round (every listed point new) and steady rounds ten minutes apart;
- bytes on disk per million points;
- ``History.throughput`` for one index over 30 days and for all indexes over one day, as a
  ratio to DuckDB reading the same files directly with the same dedupe (target: within
  1.5x), each with the peak resident memory of a fresh process doing only that read
  (target: reading one index never loads the whole dataset);
- ``usage_frame`` over the whole history and ``forecast_limits`` for today (which reads only
  the current day and the one before).

The 30-day dataset is written synthetically with pyarrow, in exactly the layout collect
writes (one sorted file per day), since 30 days of emulator collects would take hours.

With ``--layouts``, measures instead the layout ``searchkit collect --every 10m --no-compact``
leaves (144 throughput files a day, a limits snapshot when the limits change, and the daily
rollup of each closed day), before and after ``compact()``, for this
code and, with ``--baseline SRC`` (a source tree, e.g. ``git archive main searchkit | tar -x
-C SRC``), for that code in the same run: ``usage_frame`` on both layouts, against a plain
pyarrow + pandas day total over the compacted files (the floor for reading raw points); and
bytes per million points before and after compaction.

With ``--collect``, only the collect rounds, on an empty store (steady rounds against one
plain list of the same indexes, each measured just before). With ``--year``, writes
``--days`` compacted days with their rollups (written by the rollup code compaction uses)
and measures ``usage_frame`` (UTC and ``--zones``), ``plot_utilization`` drawn and
``quota_cockpit`` until its table and first picture show (UTC and each zone; pyplot and the
widgets imported first, as in a notebook), ``History.info()`` and ``forecast_limits``, the
latter against reading the days it bins with ``History.throughput``, a day at a time: wall
and CPU seconds (all threads) of each, in a fresh process; with ``--baseline SRC``, the same
calls of that code in turn with each (``--repeat N`` times each: ranges), on
``--baseline-store DIR`` when given (a store that code wrote: a rollup is named and checked
by the code that reads it); ``--only usage,plot,cockpit,info`` measures some.

Usage: .venv/bin/python bench/history.py [--indexes 1000] [--days 30] [--keep DIR]
       .venv/bin/python bench/history.py --layouts [--baseline SRC] [--indexes 200] [--days 7]
       .venv/bin/python bench/history.py --year --days 365 --indexes 1000 [--keep DIR]
           [--zones America/New_York,Asia/Kolkata,Pacific/Chatham] [--baseline SRC
           [--baseline-store DIR]] [--repeat N] [--only usage,plot,cockpit,info]
       .venv/bin/python bench/history.py --collect [--indexes 1000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from figures import emit

END = pd.Timestamp("2026-11-20", tz="UTC")
MINUTES = 1440
_DAY_NS = 86_400 * 1_000_000_000


def write_dataset(
    root: Path, indexes: int, days: int, rollups: bool = False
) -> tuple[list[str], float]:
    """Write one sorted file a day; with ``rollups``, each day's rollup too (as compaction)."""
    from searchkit.history.layout import THROUGHPUT_SCHEMA, WRITE_OPTIONS, stored
    from searchkit.history.rollups import rollup, signature

    try:
        from searchkit.history.encoding import write_options
    except ImportError:  # a tree from before rollups had an encoding of their own (22d64ca)

        def write_options(kind: str, schema: pa.Schema) -> dict[str, Any]:
            return WRITE_OPTIONS

    # A rollup names its files by (name, size, mtime) now, by name alone before 67cd4d6.
    by_name = "names" in inspect.signature(signature).parameters

    ids = [str(uuid.UUID(int=i + 1, version=4)) for i in range(indexes)]
    names = [f"index-{i:04d}" for i in range(indexes)]
    rng = np.random.default_rng(7)
    level = 10 ** rng.uniform(0, 3, indexes)
    account = pa.array(["bench-account"] * (indexes * MINUTES), pa.string())
    id_column = pa.array(np.repeat(ids, MINUTES), pa.string())
    name_column = pa.array(np.repeat(names, MINUTES), pa.string())
    started = time.perf_counter()
    for day in range(days):
        first = END - pd.Timedelta(days=days - day)
        minute = np.arange(MINUTES, dtype=np.int64)
        times = np.tile(first.value + minute * 60_000_000_000, indexes)
        shape = 1 + 0.6 * np.cos(2 * np.pi * minute / MINUTES)
        values = np.round(np.outer(level, shape) * rng.uniform(0.9, 1.1, (indexes, MINUTES)), 2)
        table = pa.Table.from_arrays(
            [
                account,
                id_column,
                name_column,
                pa.array(times, pa.timestamp("ns", tz="UTC")),
                pa.array(values.ravel()),
                pa.array(np.full(times.size, first.value + _DAY_NS), pa.timestamp("ns", tz="UTC")),
            ],
            schema=THROUGHPUT_SCHEMA,
        )
        folder = root / "throughput" / f"day={first:%Y-%m-%d}"
        folder.mkdir(parents=True)
        name = f"part-{first.value}-{uuid.uuid4().hex}.parquet"
        pq.write_table(stored(table), folder / name, **WRITE_OPTIONS)  # as collect writes
        if rollups:
            rolled = root / "rollups" / f"day={first:%Y-%m-%d}"
            rolled.mkdir(parents=True)
            written = (folder / name).stat()  # a rollup names its file by size and time
            file = (name, written.st_size, written.st_mtime_ns // 10**9)
            source = signature([name] if by_name else [file])
            summary = stored(rollup(table, f"{first:%Y-%m-%d}", source))
            pq.write_table(summary, rolled / name, **write_options("rollups", summary.schema))
    write_limits(root, ids, names)
    return names, time.perf_counter() - started


def write_limits(root: Path, ids: list[str], names: list[str]) -> None:
    """One limits snapshot per index, as collect writes it: free plans, so forecasts bite."""
    from searchkit.history.layout import LIMITS_SCHEMA

    count = len(ids)
    stamp = END.value
    columns = {
        "account": ["bench-account"] * count,
        "id": ids,
        "name": names,
        "type": ["free"] * count,
        "region": ["eu-west-1"] * count,
        "endpoint": [f"bench-{i}" for i in range(count)],
        "created": [stamp - 90 * _DAY_NS] * count,
        "input_enrichment_enabled": [True] * count,
        "partner_email": [""] * count,
        "collected_at": [stamp] * count,
    }
    for field in LIMITS_SCHEMA.names:
        if field.startswith("max_"):
            columns[field] = [1_000_000.0] * count
    table = pa.table({f.name: pa.array(columns[f.name], f.type) for f in LIMITS_SCHEMA})
    folder = root / "limits" / f"day={END - pd.Timedelta(days=1):%Y-%m-%d}"
    folder.mkdir(parents=True)
    pq.write_table(table, folder / f"part-{stamp}-{uuid.uuid4().hex}.parquet")


def write_collected(root: Path, indexes: int, days: int) -> None:
    """Write the layout 10-minute collects leave: 144 throughput files a day, and one limits
    snapshot (collect stores one only when the limits change, and these never do)."""
    from searchkit.history.layout import LIMITS_SCHEMA, THROUGHPUT_SCHEMA, WRITE_OPTIONS

    ids = [str(uuid.UUID(int=i + 1, version=4)) for i in range(indexes)]
    names = [f"index-{i:04d}" for i in range(indexes)]
    rng = np.random.default_rng(7)
    level = 10 ** rng.uniform(0, 3, indexes)
    snapshot = {
        "account": ["bench-account"] * indexes,
        "id": ids,
        "name": names,
        "type": ["free"] * indexes,
        "region": ["eu-west-1"] * indexes,
        "endpoint": [f"bench-{i}" for i in range(indexes)],
        "created": [END.value - 90 * _DAY_NS] * indexes,
        "input_enrichment_enabled": [True] * indexes,
        "partner_email": [""] * indexes,
    }
    for field in LIMITS_SCHEMA.names:
        if field.startswith("max_"):
            snapshot[field] = [1_000_000.0] * indexes
    for day in range(days):
        first = END - pd.Timedelta(days=days - day)
        for tick in range(MINUTES // 10):
            minute = np.arange(tick * 10, tick * 10 + 10, dtype=np.int64)
            stamp = first.value + (tick + 1) * 600_000_000_000
            times = np.tile(first.value + minute * 60_000_000_000, indexes)
            shape = 1 + 0.6 * np.cos(2 * np.pi * minute / MINUTES)
            values = np.round(np.outer(level, shape) * rng.uniform(0.9, 1.1, (indexes, 10)), 2)
            columns = [
                pa.array(["bench-account"] * times.size, pa.string()),
                pa.array(np.repeat(ids, 10), pa.string()),
                pa.array(np.repeat(names, 10), pa.string()),
                pa.array(times, pa.timestamp("ns", tz="UTC")),
                pa.array(values.ravel()),
                pa.array(np.full(times.size, stamp), pa.timestamp("ns", tz="UTC")),
            ]
            table = pa.Table.from_arrays(columns, schema=THROUGHPUT_SCHEMA)
            limits = pa.table(
                {
                    f.name: pa.array(snapshot.get(f.name, [stamp] * indexes), f.type)
                    for f in LIMITS_SCHEMA
                }
            )
            parts = [("throughput", table)] + ([("limits", limits)] if day == tick == 0 else [])
            for kind, part in parts:
                folder = root / kind / f"day={first:%Y-%m-%d}"
                folder.mkdir(parents=True, exist_ok=True)
                name = f"part-{stamp}-{uuid.uuid4().hex}.parquet"
                pq.write_table(part, folder / name, **WRITE_OPTIONS)


def plain_day_totals(root: str) -> int:
    """Usage per index and day with pyarrow + pandas alone: the floor for usage_frame."""
    rows = 0
    for folder in sorted(Path(root, "throughput").iterdir()):
        table = pq.read_table(folder, columns=["index_id", "time", "value", "collected_at"])
        frame = table.to_pandas()
        frame = frame.sort_values(["index_id", "time", "collected_at"])
        frame = frame[~frame.duplicated(["index_id", "time"], keep="last")]
        step = frame.groupby("index_id", observed=True)["time"].diff().dt.total_seconds()
        interval = step.groupby(frame["index_id"]).transform("median").fillna(60.0)
        totals = (frame["value"].fillna(0.0) * interval).groupby(frame["index_id"]).sum()
        rows += len(totals)
    return rows


def disk_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*.parquet"))


DUCKDB_QUERY = """
SELECT index_id, name, time, value, account
FROM read_parquet(?, hive_partitioning = true)
WHERE {where}
QUALIFY row_number() OVER (PARTITION BY account, index_id, time ORDER BY collected_at DESC) = 1
ORDER BY index_id, time
"""


def _status_kib(field: str) -> int:
    # VmHWM is this address space's peak (ru_maxrss would carry the parent's over fork+exec).
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _resident_kib() -> int:
    return _status_kib("VmRSS")


def measure(root: str, what: str, engine: str, arg: str) -> dict[str, float]:
    """Run one read in this process (a fresh one); report seconds, rows, peak RSS."""
    if engine == "searchkit":
        from searchkit import History  # the public name: baseline trees too

        hist = History(root)
        if what in ("plot", "cockpit"):
            _drawing_loaded()  # as in a notebook: pyplot and the widgets imported already
        before_kib = _resident_kib()
        started, cpu = time.perf_counter(), time.process_time()
        if what == "one-index":
            frame = hist.throughput(names=[arg])
        elif what == "refusal":  # a read past the machine's memory, refused before its data
            try:
                frame = hist.throughput(start=pd.Timestamp(arg, tz="UTC"))
            except Exception as error:  # HistoryError: its words say the size
                print(str(error), file=sys.stderr)
                frame = None  # rows: -1, refused
        elif what == "usage":  # arg: the zone ("-": the default, UTC)
            import searchkit as sk

            frame = sk.usage_frame(hist) if arg == "-" else sk.usage_frame(hist, tz=arg)
        elif what in ("plot", "cockpit"):  # arg: the zone ("-": the default, UTC)
            frame = _drawn(hist, what, None if arg == "-" else arg)
        elif what == "rollup-read":  # plain pyarrow: the columns a zone's usage needs
            columns = ["index_id", "period", "interval_seconds", "quarter_value_sum"]
            columns += ["quarter_points", "invalid"]
            frame = pd.DataFrame(
                index=range(pq.read_table(Path(root, "rollups"), columns=columns).num_rows)
            )
        elif what == "info":  # rows: the points it counts
            frame = pd.DataFrame(index=range(hist.info().points))
        elif what == "compact":
            frame = pd.DataFrame(hist.compact(), index=[0])
        elif what == "refresh":
            frame = pd.DataFrame(index=range(hist.refresh_rollups()))
        elif what == "plain":
            frame = pd.DataFrame(index=range(plain_day_totals(root)))
        elif what == "forecast-days":
            from searchkit.analytics import profile as pf

            # The days forecast_limits bins: analytics.forecast reads this many, up to the
            # day of the end of the newest point's minute (the forecast's instant).
            newest = hist.newest_time()
            assert newest is not None
            last = (newest + pd.Timedelta(minutes=1)).normalize()
            first = last - pd.Timedelta(days=pf.CALIBRATION_DAYS + pf.WINDOW + 7 - 1)
            wanted = [d for d in hist.days() if f"{first:%Y-%m-%d}" <= d <= f"{last:%Y-%m-%d}"]
            rows = 0
            for day in wanted:
                if arg == "plain":  # pyarrow's plain read of the day's files, all columns
                    files = sorted(Path(root, "throughput", f"day={day}").glob("*.parquet"))
                    rows += sum(pq.read_table(path).num_rows for path in files)
                    continue
                begin = pd.Timestamp(day, tz="UTC")
                rows += len(hist.throughput(start=begin, end=begin + pd.Timedelta(days=1)))
            frame = pd.DataFrame(index=range(rows))
        elif what == "forecast":
            import searchkit as sk

            frame = sk.forecast_limits(hist)
        else:
            day = pd.Timestamp(arg, tz="UTC")
            frame = hist.throughput(start=day, end=day + pd.Timedelta(days=1))
    else:
        import duckdb

        con = duckdb.connect()
        con.execute("SET threads = 2")
        glob = f"{root}/throughput/*/*.parquet"
        before_kib = _resident_kib()
        started, cpu = time.perf_counter(), time.process_time()
        if what == "one-index":
            query = DUCKDB_QUERY.format(where="name = ?")
            frame = con.execute(query, [glob, arg]).df()
        else:
            day = pd.Timestamp(arg, tz="UTC")
            query = DUCKDB_QUERY.format(where="day = ? AND time >= ? AND time < ?")
            params = [glob, f"{day:%Y-%m-%d}", day, day + pd.Timedelta(days=1)]
            frame = con.execute(query, params).df()
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    peak_kib = _status_kib("VmHWM")
    for close in _OPEN:
        close()
    return {
        "seconds": seconds,
        "cpu": cpu,
        "rows": -1 if frame is None else len(frame),
        "peak_mib": peak_kib / 1024,
        "read_mib": (peak_kib - before_kib) / 1024,
    }


#: What a measurement left open (a cockpit), closed once it is measured.
_OPEN: list = []


def _drawing_loaded() -> None:
    """Load what a notebook has loaded before its first plot: pyplot, the widgets."""
    import matplotlib

    matplotlib.use("Agg")
    import ipywidgets  # noqa: F401
    import matplotlib.pyplot

    import searchkit as sk

    sk.plot_utilization, sk.quota_cockpit  # noqa: B018 (the package face loads them)


def _drawn(hist, what: str, tz: str | None) -> pd.DataFrame:
    """``plot_utilization(hist, tz=tz)`` drawn (rows: its cells), or ``quota_cockpit(hist,
    tz=tz)`` until its table and first picture show (rows: its rows; ``now``: the newest
    point, the end of the year's last day)."""
    import searchkit as sk

    if what == "plot":
        ax = sk.plot_utilization(hist, tz=tz)
        ax.figure.canvas.draw()
        return pd.DataFrame(index=range(ax.images[0].get_array().size))
    cockpit = sk.quota_cockpit(hist, tz=tz, now=END - pd.Timedelta(minutes=1))
    deadline = time.perf_counter() + 300
    while cockpit.picture_png is None or not cockpit.page_lines:
        if time.perf_counter() > deadline:
            raise TimeoutError("the cockpit did not show its table and picture in 300 s")
        time.sleep(0.002)
    _OPEN.append(lambda: (cockpit.wait(), cockpit.close()))
    return pd.DataFrame(index=range(len(cockpit.rows)))


def run_measure(
    root: Path, what: str, engine: str, arg: str, repeat: int = 3, source: str | None = None
) -> dict[str, float]:
    """Measure in fresh processes, the best of ``repeat``; ``source`` is the code to run."""
    env = dict(os.environ)
    if source:
        env["PYTHONPATH"] = source  # ahead of the installed searchkit
    best: dict[str, float] | None = None
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, __file__, "--measure", str(root), what, engine, arg],
            check=True,
            capture_output=True,
            text=True,
            env=env,
        ).stdout
        result = json.loads(out)
        if best is None or result["seconds"] < best["seconds"]:
            best = result
    assert best is not None
    return best


def bench_collect(
    root: Path, indexes: int, rounds: int, key: str = "history.collect"
) -> tuple[float, list[float], int]:
    from searchkit import History
    from searchkit.emulator import Emulator

    clock = END.timestamp() - 3600
    with Emulator(seed=1, clock=clock) as emu:
        owner = emu.account
        specs = [
            {"name": f"live-{i:04d}", "region": "eu-west-1", "type": "payg"} for i in range(indexes)
        ]
        emu.store.create_many(owner, specs)
        hist = History(root)
        with emu.client(timeout=120) as client:
            started = time.perf_counter()
            first = hist.collect(client, now=emu.now())
            cold = time.perf_counter() - started
            steady, lists = [], []
            for _ in range(rounds):
                emu.advance(600)
                started = time.perf_counter()
                client.list_indexes()
                lists.append(time.perf_counter() - started)
                started = time.perf_counter()
                hist.collect(client, now=emu.now())
                steady.append(time.perf_counter() - started)
    print(
        f"steady collect vs one plain list of the same indexes: median "
        f"{np.median(steady):.2f} s vs {np.median(lists):.2f} s = "
        f"{np.median(steady) / np.median(lists):.2f}x"
    )
    emit(f"{key}.steady", np.median(steady))
    emit(f"{key}.vs_list", np.median(steady) / np.median(lists), "x")
    return cold, steady, first.new_points


def bench_layouts(root: Path, indexes: int, days: int, baseline: str | None) -> None:
    """usage_frame on the layout 10-minute collects leave, before and after compaction."""
    points = indexes * days * MINUTES
    write_collected(root / "collected", indexes, days)
    size = disk_bytes(root / "collected")
    print(
        f"collected layout: {indexes:,} indexes x {days} days x {MINUTES} points = "
        f"{points / 1e6:.2f}M points in {len(list(root.rglob('*.parquet'))):,} files"
    )
    codes = [("this code", None)] + ([("baseline", baseline)] if baseline else [])
    results: dict[str, dict[str, float]] = {}
    for label, source in codes:
        copy = root / label.replace(" ", "-")
        shutil.copytree(root / "collected", copy)
        results[f"{label} uncompacted"] = run_measure(copy, "usage", "searchkit", "-", 1, source)
        if source is None:
            # What collect(compact=False) leaves: every closed day keeps its files and gets
            # its rollup as it closes (here all at once; the collector does one day a day).
            results["refresh"] = run_measure(copy, "refresh", "searchkit", "-", 1)
            results["rolled"] = run_measure(copy, "usage", "searchkit", "-", 3)
        results[f"{label} compact"] = run_measure(copy, "compact", "searchkit", "-", 1, source)
        results[f"{label} compacted"] = run_measure(copy, "usage", "searchkit", "-", 3, source)
        after = sum(p.stat().st_size for p in copy.rglob("*.parquet") if "rollups" not in p.parts)
        results[f"{label} bytes"] = {"before": size, "after": after}
    results["plain"] = run_measure(root / "this-code", "plain", "searchkit", "-", 3)
    plain = results["plain"]["seconds"]
    for label, _ in codes:
        loose, tight = results[f"{label} uncompacted"], results[f"{label} compacted"]
        stored = results[f"{label} bytes"]
        print(
            f"{label}: usage_frame uncompacted without rollups {loose['seconds']:.2f} s "
            f"(+{loose['read_mib']:.0f} MiB), compacted {tight['seconds']:.2f} s "
            f"(+{tight['read_mib']:.0f} MiB) = {loose['seconds'] / tight['seconds']:.2f}x; "
            f"compact() {results[f'{label} compact']['seconds']:.1f} s; MiB per million points "
            f"before compaction {stored['before'] / 2**20 / (points / 1e6):.2f}, after "
            f"{stored['after'] / 2**20 / (points / 1e6):.2f} = "
            f"{stored['before'] / stored['after']:.2f}x"
        )
        if label == "this code":
            emit("layouts.uncompacted_bare.s", loose["seconds"])
            emit("layouts.compacted.s", tight["seconds"])
            emit("layouts.compacted.mib", tight["read_mib"], "MiB")
            emit("layouts.mib_per_million.before", stored["before"] / 2**20 / (points / 1e6), "MiB")
            emit("layouts.mib_per_million.after", stored["after"] / 2**20 / (points / 1e6), "MiB")
    rolled, tight = results["rolled"], results["this code compacted"]
    print(
        f"this code: usage_frame uncompacted with the collector's rollups of its closed days "
        f"{rolled['seconds']:.2f} s (+{rolled['read_mib']:.0f} MiB) = "
        f"{rolled['seconds'] / tight['seconds']:.2f}x the compacted store (those rollups took "
        f"{results['refresh']['seconds']:.1f} s to write, {days} days at once)"
    )
    emit("layouts.rolled.s", rolled["seconds"])
    emit("layouts.rolled.mib", rolled["read_mib"], "MiB")
    emit("layouts.rolled_vs_compacted", rolled["seconds"] / tight["seconds"], "x")
    emit("layouts.refresh.s", results["refresh"]["seconds"])
    emit("layouts.plain.s", plain)
    print(
        f"the raw points' floor, plain pyarrow + pandas day totals over the compacted files: "
        f"{plain:.2f} s; compacted usage_frame (rollups) = {tight['seconds'] / plain:.2f}x it"
    )


#: What ``--year`` measures (``--only`` picks some).
_PARTS = ("usage", "plot", "cockpit", "info")


def check_rollups(root: Path) -> None:
    """Refuse a kept store whose rollups this code does not take (another code's seal): every
    call would read the year's points instead (minutes and GiBs each, not the figures)."""
    import warnings

    from searchkit import History

    hist = History(root)
    days = hist.days()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # each rejected rollup says so: counted below
        current = len(hist.sums(days[0], days[-1]))
    if current < len(days) - 1:  # the newest day may be open
        raise SystemExit(
            f"{root}: {len(days) - current} of {len(days)} days have no rollup this code takes "
            f"(written by another code): the year's calls would read their points. Rewrite "
            f'them on a copy first: cp -al {root} COPY; python -c "import searchkit; '
            f"searchkit.History('COPY').refresh_rollups()\""
        )


def bench_year(
    root: Path,
    indexes: int,
    days: int,
    zones: list[str],
    baseline: str | None,
    baseline_root: Path | None = None,
    repeat: int = 1,
    only: set[str] | None = None,
) -> None:
    """usage_frame (in UTC and each of ``zones``), plot_utilization drawn and the cockpit
    until ready (in UTC and each zone), info() and forecast_limits on a long compacted
    history with its rollups (``only``: some of :data:`_PARTS`); with ``baseline`` (a source
    tree), the same calls of that code in the same run, in turn, ``repeat`` times each, on
    ``baseline_root`` (a store that code wrote: rollups are named and checked per the code
    that reads them) or on ``root``."""
    points = indexes * days * MINUTES
    if (root / "throughput").exists():  # --keep DIR of an earlier run: measured again
        written = "written by an earlier run"
        check_rollups(root)
    else:
        _, seconds = write_dataset(root, indexes, days, rollups=True)
        written = f"written in {seconds:.0f} s"
    size = disk_bytes(root)
    print(
        f"dataset: {indexes:,} indexes x {days} days x {MINUTES} points = {points / 1e6:.1f}M "
        f"points, compacted with rollups, {size / 2**30:.2f} GiB, {written}"
    )
    emit("year.disk_gib", size / 2**30, "GiB")
    old_root = baseline_root or root
    only = only or set(_PARTS)

    def side_by_side(label: str, what: str, arg: str, target: str) -> dict[str, float]:
        """Measure this code and the baseline's in turn (A B A B ..., ``repeat`` each, a
        fresh process each); print the ranges, wall and CPU; return this code's fastest."""
        ours, old = [], []
        for _ in range(repeat):
            ours.append(run_measure(root, what, "searchkit", arg, 1))
            if baseline:
                old.append(run_measure(old_root, what, "searchkit", arg, 1, source=baseline))
        best = min(ours, key=lambda result: result["seconds"])
        key = f"year.{what}" + ("" if arg == "-" else f".{arg}")
        emit(f"{key}.s", best["seconds"])
        emit(f"{key}.cpu", best["cpu"])
        emit(f"{key}.mib", best["read_mib"], "MiB")
        line = f"{label}: {_spread(ours)}, {int(ours[0]['rows']):,} rows ({target})"
        if baseline:
            fastest = min(old, key=lambda result: result["seconds"])
            ratio = fastest["seconds"] / best["seconds"]
            line += f"; baseline code {_spread(old)} = {ratio:.1f}x slower"
            emit(f"{key}.baseline.s", fastest["seconds"])
            emit(f"{key}.baseline.cpu", fastest.get("cpu"))
            emit(f"{key}.baseline.mib", fastest["read_mib"], "MiB")
        print(line, flush=True)
        return best

    print(f"each call {repeat} times, this code and the baseline's in turn; load: {_load()}")
    if "usage" in only:
        _usages(side_by_side, root, days, zones)
    _drawings(side_by_side, zones, only)
    print(f"load after: {_load()}")
    if "info" not in only:
        return
    side_by_side("History.info() (rows: points)", "info", "-", "target < 3 s, < 500 MB")
    forecast = run_measure(root, "forecast", "searchkit", "-", 1)
    read = run_measure(root, "forecast-days", "searchkit", "-", 1)
    plain = run_measure(root, "forecast-days", "searchkit", "plain", 1)
    print(
        f"forecast_limits(hist): {forecast['seconds']:.2f} s (+{forecast['read_mib']:.0f} MiB) "
        f"vs reading the days it covers ({int(read['rows']):,} points) with "
        f"History.throughput, a day at a time: {read['seconds']:.2f} s = "
        f"{forecast['seconds'] / read['seconds']:.2f}x; with plain pyarrow (pq.read_table, all "
        f"columns): {plain['seconds']:.2f} s = {forecast['seconds'] / plain['seconds']:.2f}x "
        f"(target <= 1.3x)"
    )
    emit("year.forecast.s", forecast["seconds"])
    emit("year.forecast.cpu", forecast["cpu"])
    refused = run_measure(root, "refusal", "searchkit", "2026-06-01", 1)
    if refused["rows"] < 0:
        print(
            f"hist.throughput(start='2026-06-01') refused in {refused['seconds']:.2f} s "
            f"(+{refused['read_mib']:.0f} MiB), before any data is read"
        )
        emit("year.refusal.s", refused["seconds"])
    else:
        print(
            f"hist.throughput(start='2026-06-01') read {int(refused['rows']):,} points in "
            f"{refused['seconds']:.2f} s: not refused (they fit in memory)"
        )
    emit("year.forecast.mib", forecast["read_mib"], "MiB")
    emit("year.forecast.read_s", read["seconds"])
    emit("year.forecast.plain_s", plain["seconds"])
    emit("year.forecast.vs_plain", forecast["seconds"] / plain["seconds"], "x")
    emit("year.forecast.vs_read", forecast["seconds"] / read["seconds"], "x")


def _usages(side_by_side, root: Path, days: int, zones: list[str]) -> None:
    """usage_frame in UTC and each zone, beside a plain read of the rollups' quarters."""
    usage = side_by_side(
        f"usage_frame(hist), all indexes x {days} days", "usage", "-", "targets < 10 s, < 1 GiB"
    )
    floor = run_measure(root, "rollup-read", "searchkit", "-", 1)
    print(
        f"plain pyarrow read of the rollups' quarter columns (what a zone's usage needs): "
        f"{floor['seconds']:.2f} s, +{floor['read_mib']:.0f} MiB"
    )
    for zone in zones:
        ours = side_by_side(f"usage_frame(hist, tz={zone!r})", "usage", zone, "target < 3 s")
        print(
            f"  = {ours['seconds'] / usage['seconds']:.2f}x UTC, "
            f"{ours['seconds'] / floor['seconds']:.2f}x the plain read"
        )


def _drawings(side_by_side, zones: list[str], only: set[str]) -> None:
    """plot_utilization drawn, and the cockpit until ready, in UTC and each zone."""
    for zone in ["-", *zones]:
        shown = "UTC" if zone == "-" else zone
        if "plot" in only:
            side_by_side(
                f"plot_utilization(hist, tz={shown!r}) drawn (rows: cells)", "plot", zone,
                "target < 3 s",
            )  # fmt: skip
        if "cockpit" in only:
            side_by_side(
                f"quota_cockpit(hist, tz={shown!r}) until its table and picture show",
                "cockpit", zone, "target < 3 s",
            )  # fmt: skip


def _spread(results: list[dict[str, float]]) -> str:
    """Wall and CPU seconds and memory of repeated measurements, as ranges."""

    def span(key: str, form: str) -> str:
        low, high = min(r[key] for r in results), max(r[key] for r in results)
        return format(low, form) if len(results) == 1 else f"{low:{form}}-{high:{form}}"

    memory = span("read_mib", ".0f")
    return f"{span('seconds', '.2f')} s (CPU {span('cpu', '.2f')} s), +{memory} MiB"


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--indexes", type=int, default=1000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", help="write the dataset here and keep it")
    parser.add_argument("--layouts", action="store_true", help="measure the collected layout")
    parser.add_argument("--baseline", help="a source tree to measure beside this code")
    parser.add_argument(
        "--collect",
        action="store_true",
        help="only the collect rounds, on an empty store, against one plain list each",
    )
    parser.add_argument(
        "--year",
        action="store_true",
        help="usage_frame and forecast_limits on --days compacted days with rollups "
        "(a year: --year --days 365 --indexes 1000; needs ~2.2 GB of disk)",
    )
    parser.add_argument(
        "--zones",
        default="America/New_York,Asia/Kolkata,Pacific/Chatham",
        help="with --year: the zones usage_frame is measured in beside UTC",
    )
    parser.add_argument(
        "--baseline-store",
        help="with --year --baseline: the store the baseline code reads (one it wrote)",
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="with --year: measure each call this many times"
    )
    parser.add_argument(
        "--only",
        default=",".join(_PARTS),
        help=f"with --year: what to measure, of {','.join(_PARTS)} (info: info() and the forecast)",
    )
    parser.add_argument("--measure", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(*args.measure)))
        return
    if args.collect:
        root = Path(tempfile.mkdtemp(prefix="searchkit-collect-bench-"))
        try:
            cold, steady, new_points = bench_collect(
                root, args.indexes, args.rounds, "history.collect_empty"
            )
            size = disk_bytes(root / "throughput")
            print(
                f"collect, {args.indexes:,} indexes x {MINUTES} points: first round {cold:.1f} s "
                f"({new_points:,} new points); steady rounds "
                f"{', '.join(f'{s:.2f}' for s in steady)} s; throughput files "
                f"{size / 2**20:.1f} MiB"
            )
        finally:
            shutil.rmtree(root, ignore_errors=True)
        return
    if args.year:
        root = Path(args.keep or tempfile.mkdtemp(prefix="searchkit-year-bench-"))
        try:
            bench_year(
                root,
                args.indexes,
                args.days,
                args.zones.split(","),
                args.baseline,
                Path(args.baseline_store) if args.baseline_store else None,
                args.repeat,
                set(args.only.split(",")),
            )
        finally:
            if not args.keep:
                shutil.rmtree(root, ignore_errors=True)
        return
    if args.layouts:
        root = Path(args.keep or tempfile.mkdtemp(prefix="searchkit-layouts-bench-"))
        try:
            bench_layouts(root, args.indexes, args.days, args.baseline)
        finally:
            if not args.keep:
                shutil.rmtree(root, ignore_errors=True)
        return

    root = Path(args.keep or tempfile.mkdtemp(prefix="searchkit-history-bench-"))
    points = args.indexes * args.days * MINUTES
    try:
        names, seconds = write_dataset(root, args.indexes, args.days)
        size = disk_bytes(root)
        print(
            f"dataset: {args.indexes:,} indexes x {args.days} days x {MINUTES} points = "
            f"{points / 1e6:.1f}M points, written in {seconds:.1f} s"
        )
        print(
            f"on disk: {size / 2**20:.1f} MiB = {size / (points / 1e6) / 2**20:.2f} MiB per "
            f"million points ({size / points:.2f} bytes a point)"
        )
        emit("history.disk_mib_per_million", size / (points / 1e6) / 2**20, "MiB")
        one_index, one_day = names[len(names) // 2], f"{END - pd.Timedelta(days=2):%Y-%m-%d}"
        for what, arg in (("one-index", one_index), ("one-day", one_day)):
            ours = run_measure(root, what, "searchkit", arg)
            duck = run_measure(root, what, "duckdb", arg)
            assert ours["rows"] == duck["rows"], (ours, duck)
            label = (
                f"one index x {args.days} days" if what == "one-index" else "all indexes x 1 day"
            )
            print(
                f"History.throughput, {label} ({int(ours['rows']):,} rows): "
                f"{ours['seconds'] * 1000:.0f} ms vs DuckDB {duck['seconds'] * 1000:.0f} ms "
                f"= {ours['seconds'] / duck['seconds']:.2f}x; memory the read added: "
                f"{ours['read_mib']:.0f} MiB (process peak {ours['peak_mib']:.0f} MiB; DuckDB "
                f"{duck['read_mib']:.0f} MiB, peak {duck['peak_mib']:.0f} MiB)"
            )
            emit(f"history.{what}.ms", ours["seconds"] * 1000, "ms")
            emit(f"history.{what}.cpu_ms", ours["cpu"] * 1000, "ms")
            emit(f"history.{what}.duckdb_cpu_ms", duck["cpu"] * 1000, "ms")
            emit(f"history.{what}.mib", ours["read_mib"], "MiB")
            emit(f"history.{what}.duckdb_ms", duck["seconds"] * 1000, "ms")
            emit(f"history.{what}.duckdb_mib", duck["read_mib"], "MiB")
            emit(f"history.{what}.vs_duckdb", ours["seconds"] / duck["seconds"], "x")
        for label, run in (
            ("usage_frame(hist), all indexes x all days", "usage"),
            ("forecast_limits(hist), today", "forecast"),
        ):
            result = run_measure(root, run, "searchkit", "-", repeat=1)
            print(
                f"{label}: {result['seconds']:.1f} s, {int(result['rows']):,} rows; memory the "
                f"call added: {result['read_mib']:.0f} MiB"
            )
            emit(f"history.{run}.s", result["seconds"])
            emit(f"history.{run}.cpu", result["cpu"])
            emit(f"history.{run}.mib", result["read_mib"], "MiB")
        cold, steady, new_points = bench_collect(root, args.indexes, args.rounds)
        print(
            f"collect, {args.indexes:,} live indexes x 1 day window on the {args.days}-day "
            f"dataset: first round {cold:.1f} s ({new_points:,} new points); steady rounds "
            f"10 min apart: {', '.join(f'{s:.1f}' for s in steady)} s "
            f"(median {np.median(steady):.1f} s)"
        )
        print(f"dataset bytes after collects: {disk_bytes(root) / 2**20:.1f} MiB")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
