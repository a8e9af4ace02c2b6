"""Benchmark the median spacing: the counting rule as it ships (each index's spacings sorted
in place, the midpoint of the two middle ones, :func:`searchkit.frames.counting.
median_spacing`) against the library's way of the same figure (pandas' groupby median,
rounded to the nanosecond, which the rule replaced), side by side in one run.

Each index samples once a minute for a day (``--points`` per index); a share of them
(``--uneven``) with a jitter of up to 2 s, so their spacings differ (a steady sampler's
median is its one spacing and sorts nothing). The two are run interleaved (A B A B ...),
each ``--repeat`` times, and timed in CPU seconds (``time.process_time``: the machine may
be shared) and wall seconds; the best of each is printed with their ratio, and the two
results are checked to be identical.

Run: .venv/bin/python bench/median.py [--indexes 1000] [--points 1440] [--repeat 5]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from searchkit.frames.counting import median_spacing, spacings


def by_pandas(codes: np.ndarray, nanos: np.ndarray, labels: pd.Index) -> pd.Series:
    """The median spacing as the library gives it: pandas' groupby median, rounded."""
    groups, spacing = spacings(codes, nanos)
    medians = pd.Series(spacing, dtype=np.float64).groupby(groups).median()
    out = np.full(len(labels), np.iinfo(np.int64).min, dtype=np.int64)
    out[medians.index.to_numpy()] = np.round(medians.to_numpy()).astype(np.int64)
    return pd.Series(out.view("m8[ns]"), index=labels, name="interval")


def timed(function: Callable[..., pd.Series], *args: object) -> tuple[float, float, pd.Series]:
    cpu, wall = time.process_time(), time.perf_counter()
    result = function(*args)
    return time.process_time() - cpu, time.perf_counter() - wall, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--indexes", type=int, default=1000)
    parser.add_argument("--points", type=int, default=1440)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(26)
    count, per = args.indexes, args.points
    labels = pd.Index(range(count))
    print(f"{count} indexes x {per} points, best of {args.repeat} (CPU s / wall s)")
    for uneven_share in (0.0, 0.3, 1.0):
        codes = np.repeat(np.arange(count), per)
        minutes = np.tile(np.arange(per, dtype=np.int64) * 60 * 10**9, count)
        jitter = rng.integers(-2 * 10**9, 2 * 10**9, len(minutes))
        uneven = np.repeat(rng.random(count) < uneven_share, per)
        nanos = np.sort((minutes + np.where(uneven, jitter, 0)).reshape(count, per), axis=1)
        nanos = nanos.ravel()
        shipped: list[tuple[float, float]] = []
        library: list[tuple[float, float]] = []
        for _ in range(args.repeat):
            cpu, wall, ours = timed(median_spacing, codes, nanos, labels)
            shipped.append((cpu, wall))
            cpu, wall, theirs = timed(by_pandas, codes, nanos, labels)
            library.append((cpu, wall))
            if not ours.equals(theirs):
                raise SystemExit("the two medians differ")
        ours_cpu, ours_wall = min(c for c, _ in shipped), min(w for _, w in shipped)
        theirs_cpu, theirs_wall = min(c for c, _ in library), min(w for _, w in library)
        print(
            f"  {uneven_share:4.0%} uneven: median_spacing {ours_cpu:.3f} / {ours_wall:.3f}, "
            f"pandas groupby median {theirs_cpu:.3f} / {theirs_wall:.3f}: "
            f"{ours_cpu / theirs_cpu:.2f}x CPU, identical"
        )


if __name__ == "__main__":
    main()
