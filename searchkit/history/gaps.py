"""The gap rule: when stored points of an index leave a hole, never interpolated."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd

from searchkit._units import format_duration
from searchkit.frames.counting import DEFAULT_INTERVAL, median_spacing

__all__ = [
    "GAP_FACTOR",
    "Gap",
    "day_gaps",
    "gap_thresholds",
    "inner_gaps",
    "listing_gap",
    "thresholds",
]

#: A step longer than this many usual sampling intervals is a gap.
GAP_FACTOR = 1.5


@dataclasses.dataclass(frozen=True)
class Gap:
    """Points the service no longer returns: collected too rarely, never interpolated."""

    account: str
    index_id: str
    name: str
    stored_until: pd.Timestamp
    listed_from: pd.Timestamp

    @property
    def missing(self) -> pd.Timedelta:
        """How long the hole lasts."""
        return self.listed_from - self.stored_until

    def __str__(self) -> str:
        return (
            f"gap in {self.name!r}: nothing between {self.stored_until:%Y-%m-%d %H:%M:%S} and "
            f"{self.listed_from:%Y-%m-%d %H:%M:%S} UTC "
            f"({format_duration(self.missing.total_seconds())}); "
            "collect more often than the service's window"
        )


def gap_thresholds(codes: np.ndarray, times: np.ndarray, ids: Sequence[str]) -> np.ndarray:
    """Each index's longest step that is no gap in one day's sorted points (ns, float):
    :data:`GAP_FACTOR` times the median spacing of its points that day, or of
    :data:`~searchkit.frames.counting.DEFAULT_INTERVAL` for an index with one point."""
    steps = median_spacing(codes, times, pd.Index(ids)).to_numpy()
    return thresholds(steps.astype(np.int64), np.isnat(steps))


def thresholds(spacing: np.ndarray, unknown: np.ndarray) -> np.ndarray:
    """:func:`gap_thresholds` from each index's median ``spacing`` (ns; ``unknown`` where
    it has one point): the one place the factor and the default meet."""
    default = np.int64(DEFAULT_INTERVAL.value)
    allowed: np.ndarray = np.where(unknown, default, spacing).astype(np.int64) * GAP_FACTOR
    return allowed


def inner_gaps(codes: np.ndarray, times: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """The rows (index then time order) after which one day's points of an index leave a
    gap: the step to the next row of the same index is longer than its ``allowed``."""
    same = codes[1:] == codes[:-1]
    return np.flatnonzero(same & (np.diff(times) > allowed[codes[1:]]))


def day_gaps(frame: pd.DataFrame, previous: dict[tuple[str, str], int]) -> list[Gap]:
    """Find gaps in one day's tidy points (and since the day before, via ``previous``:
    each index's last point before, epoch ns, which this updates).

    An index's usual interval is the median spacing of its points in this day.
    """
    stamps = frame["time"].array
    times = np.asarray(stamps.asi8, np.int64)
    index_ids = frame["index_id"].array
    codes = np.asarray(index_ids.codes)
    ids = index_ids.categories
    allowed = gap_thresholds(codes, times, ids)
    starts = np.flatnonzero(np.append(True, codes[1:] != codes[:-1]))
    ends = np.append(starts[1:] - 1, len(codes) - 1)
    accounts = frame["account"].array
    names = frame["name"].array
    found = []
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        key = (str(accounts[start]), str(ids[codes[start]]))
        before = previous.get(key)
        if before is not None and times[start] - before > allowed[codes[start]]:
            found.append(Gap(key[0], key[1], str(names[end]), _utc(before), stamps[start]))
        previous[key] = int(times[end])
    for left in inner_gaps(codes, times, allowed).tolist():
        found.append(
            Gap(
                str(accounts[left]),
                str(ids[codes[left]]),
                str(names[left]),
                stamps[left],
                stamps[left + 1],
            )
        )
    return found


def _utc(nanos: int) -> pd.Timestamp:
    return pd.Timestamp(nanos, unit="ns", tz="UTC")


def listing_gap(stored_until: pd.Timestamp, listed_from: pd.Timestamp) -> bool:
    """Whether the service's oldest listed point leaves a hole after the newest stored one."""
    return bool(listed_from - stored_until > DEFAULT_INTERVAL * GAP_FACTOR)
