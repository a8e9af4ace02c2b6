"""Benchmark row-group pruning: the reader's walk over the footer's statistics
(``Bounds.row_groups``, what ships) against pyarrow's ``ParquetFileFragment.subset`` of the
same condition (``Bounds.expression()``), side by side in one run.

On a store of ``--indexes`` x ``--days`` (one sorted file a day, 16,384-row groups, as
collect writes), for each case (index ids, a time range, both) it prints:

- the time to choose every file's row groups from footers already read, both ways (best
  of ``--repeat``): "warm" reuses the fragments (pyarrow caches each row group's statistics
  as expressions after the first subset), "cold" makes them anew, as each read does;
- that both choose the same row groups (the exact lists are compared);
- ``History.throughput`` end to end with the walk and with ``subset`` in its place.

Run: .venv/bin/python bench/pruning.py [--indexes 1000] [--days 7]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.dataset as ds
import pyarrow.fs as pafs

sys.path.insert(0, str(Path(__file__).parent))
from history import END, write_dataset

HOUR_NS = 3_600_000_000_000


def best(function: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return min(times)


def library(fragment: ds.ParquetFileFragment, _schema: Any, prune: Any) -> list[int]:
    """pyarrow's pruning of the same condition (the alternative measured)."""
    if prune is None:
        return list(range(fragment.metadata.num_row_groups))
    return [group.id for group in fragment.subset(prune.expression()).row_groups]


def cases(hist: Any, ids: list[str]) -> dict[str, dict[str, Any]]:
    hour = END - pd.Timedelta(days=1, hours=12)
    day = END - pd.Timedelta(days=3)
    return {
        "one index id": {"index_ids": ids[0]},
        "100 index ids": {"index_ids": ids[::10][:100]},
        "one hour": {"start": hour, "end": hour + pd.Timedelta(hours=1)},
        "one day": {"start": day, "end": day + pd.Timedelta(days=1)},
        "hour + one id": {"start": hour, "end": hour + pd.Timedelta(hours=1), "index_ids": ids[0]},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--indexes", type=int, default=1000)
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from figures import emit

    from searchkit import History
    from searchkit.history import reader
    from searchkit.history.points import selection

    with tempfile.TemporaryDirectory(prefix="searchkit-pruning-") as folder:
        root = Path(folder) / "h"
        write_dataset(root, args.indexes, args.days)
        paths = sorted(str(p) for p in (root / "throughput").glob("day=*/*.parquet"))
        hist = History(root)
        ids = sorted(hist.throughput(start=END - pd.Timedelta(minutes=1))["index_id"].unique())
        local = pafs.LocalFileSystem()

        def fragments() -> list[ds.ParquetFileFragment]:
            made = [ds.ParquetFileFormat().make_fragment(p, local) for p in paths]
            for fragment in made:
                fragment.ensure_complete_metadata()  # the footer, read before the timing
            return made

        warm = fragments()
        schemas = [f.metadata.schema.to_arrow_schema() for f in warm]
        groups = sum(f.metadata.num_row_groups for f in warm)
        print(
            f"{args.indexes} indexes x {args.days} days: {len(paths)} files, {groups} row "
            f"groups; best of {args.repeat}; ms to choose the row groups of every file from "
            "footers already read (walk: what ships; subset: pyarrow's), then "
            "History.throughput end to end"
        )
        shipped = reader._chosen
        for label, read in cases(hist, ids).items():
            start, end = read.get("start"), read.get("end")
            _, bounds = selection(start, end, index_ids=read.get("index_ids"))
            ours = [shipped(f, s, bounds) for f, s in zip(warm, schemas, strict=True)]
            theirs = [library(f, s, bounds) for f, s in zip(warm, schemas, strict=True)]
            assert ours == theirs, (label, ours, theirs)

            def choose(how: Callable[..., list[int]], made: list[Any], b: Any = bounds) -> None:
                for fragment, schema in zip(made, schemas, strict=True):
                    how(fragment, schema, b)

            walk_warm = best(lambda: choose(shipped, warm), args.repeat)
            subset_warm = best(lambda: choose(library, warm), args.repeat)
            walk_cold = subset_cold = float("inf")
            for _ in range(args.repeat):
                made = fragments()
                walk_cold = min(walk_cold, best(lambda m=made: choose(shipped, m), 1))
                made = fragments()
                subset_cold = min(subset_cold, best(lambda m=made: choose(library, m), 1))
            hist.throughput(**read)  # a first read warms the page cache for both
            walk_read = best(lambda r=read: hist.throughput(**r), args.repeat)
            reader._chosen = library
            try:
                subset_read = best(lambda r=read: hist.throughput(**r), args.repeat)
            finally:
                reader._chosen = shipped
            print(
                f"{label:14} same {sum(map(len, ours)):3} groups | warm: walk "
                f"{walk_warm * 1e3:6.2f}, subset {subset_warm * 1e3:6.2f} "
                f"({subset_warm / walk_warm:5.1f}x) | cold: walk {walk_cold * 1e3:6.2f}, "
                f"subset {subset_cold * 1e3:6.2f} ({subset_cold / walk_cold:5.1f}x) | read: "
                f"walk {walk_read:.3f} s, subset {subset_read:.3f} s "
                f"({subset_read / walk_read:.2f}x)"
            )
            case = label.replace(" + ", "+").replace(" ", "_")
            emit(f"pruning.walk_cold.{case}", walk_cold * 1e3, "ms")
            emit(f"pruning.subset_cold.{case}", subset_cold * 1e3, "ms")
            emit(f"pruning.ratio_cold.{case}", subset_cold / walk_cold, "x")
            emit(f"pruning.read_ratio.{case}", subset_read / walk_read, "x")


if __name__ == "__main__":
    main()
