"""Benchmark row-group pruning: pyarrow's ``ParquetFileFragment.subset`` (what the reader
uses) against the hand-written min/max walk it replaced (kept here as the baseline).

On a store of ``--indexes`` x ``--days`` (one sorted file a day, 16,384-row groups, as
collect writes), for one index id and for one hour, it prints the time to choose each day's
row groups both ways (best of ``--repeat``), that both choose the same groups, and
``History.throughput`` end to end for the same reads.

Run: .venv/bin/python bench/pruning.py [--indexes 1000] [--days 7]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).parent))
from history import END, write_dataset

_PER_UNIT = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def hand_written(parquet: pq.ParquetFile, prune: dict[str, Any]) -> list[int]:
    """The reader's former row-group pruning, as it was (the baseline)."""
    metadata = parquet.metadata
    position = {metadata.schema.column(i).name: i for i in range(metadata.num_columns)}
    arrow = parquet.schema_arrow
    checks: list[tuple[int, str, Any]] = []
    for column, wanted in prune.items():
        if column == "time":
            scale = _PER_UNIT[arrow.field("time").type.unit]
            lo, hi = wanted
            checks.append((position[column], "range", (lo // scale, hi // scale)))
        else:
            checks.append((position[column], "values", sorted(wanted)))
    keep = []
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        ok = True
        for place, how, allowed in checks:
            stats = row_group.column(place).statistics
            if how == "range":
                lo, hi = allowed
                ok = high_low_overlap(stats.min_raw, stats.max_raw, lo, hi)
            else:
                ok = any(stats.min <= value <= stats.max for value in allowed)
            if not ok:
                break
        if ok:
            keep.append(group)
    return keep


def high_low_overlap(low: int, high: int, lo: int, hi: int) -> bool:
    return high >= lo and low <= hi


def best(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--indexes", type=int, default=1000)
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from searchkit.history.layout import TIMESTAMP
    from searchkit.history.usage_history import History

    with tempfile.TemporaryDirectory(prefix="searchkit-pruning-") as folder:
        root = Path(folder) / "h"
        write_dataset(root, args.indexes, args.days)
        paths = sorted(str(p) for p in (root / "throughput").glob("day=*/*.parquet"))
        hist = History(root)
        one_id = str(hist.throughput(start=END - pd.Timedelta(days=1))["index_id"].iloc[0])
        hour = END - pd.Timedelta(days=1, hours=12)
        cases = {
            "one index id": (
                {"index_id": [one_id]},
                ds.field("index_id").isin(pa.array([one_id])),
                {"index_ids": one_id},
            ),
            "one hour": (
                {"time": (hour.value, hour.value + 3_600_000_000_000 - 1)},
                (ds.field("time") >= pa.scalar(hour.value, TIMESTAMP))
                & (ds.field("time") < pa.scalar(hour.value + 3_600_000_000_000, TIMESTAMP)),
                {"start": hour, "end": hour + pd.Timedelta(hours=1)},
            ),
        }
        files = [pq.ParquetFile(path) for path in paths]
        local = pafs.LocalFileSystem()
        fragments = [ds.ParquetFileFormat().make_fragment(path, local) for path in paths]
        for fragment in fragments:
            fragment.ensure_complete_metadata()
        groups = sum(f.metadata.num_row_groups for f in files)
        print(
            f"{args.indexes} indexes x {args.days} days: {len(paths)} files, {groups} row "
            f"groups; choosing row groups from footers already read, best of {args.repeat}"
        )
        for label, (prune, expression, read) in cases.items():
            ours = [[g.id for g in f.subset(expression).row_groups] for f in fragments]
            theirs = [hand_written(f, prune) for f in files]
            assert ours == theirs, (label, ours, theirs)
            subset = best(lambda e=expression: [f.subset(e) for f in fragments], args.repeat)
            walk = best(lambda p=prune: [hand_written(f, p) for f in files], args.repeat)
            end_to_end = best(lambda r=read: hist.throughput(**r), args.repeat)
            print(
                f"{label:14} subset {subset * 1e3:7.2f} ms, hand-written {walk * 1e3:7.2f} ms "
                f"({subset / walk:.2f}x; same {sum(map(len, ours))} groups); "
                f"History.throughput {end_to_end:.3f} s"
            )


if __name__ == "__main__":
    main()
