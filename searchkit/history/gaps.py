"""The gap rule: when stored points of an index leave a hole, never interpolated."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from searchkit._units import format_duration
from searchkit.frames.counting import DEFAULT_INTERVAL, median_spacing

__all__ = ["GAP_FACTOR", "Gap", "day_gaps", "listing_gap"]

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


def day_gaps(frame: pd.DataFrame, previous: dict[tuple[str, str], pd.Timestamp]) -> list[Gap]:
    """Find gaps in one day's tidy points (and since the day before, via ``previous``).

    An index's usual interval is the median spacing of its points in this day.
    """
    stamps = frame["time"].array
    times = stamps.asi8
    index_ids = frame["index_id"].array
    codes = index_ids.codes
    ids = index_ids.categories
    steps = median_spacing(codes, times, pd.Index(ids)).to_numpy()
    default = np.timedelta64(DEFAULT_INTERVAL.value, "ns")
    allowed = np.where(np.isnat(steps), default, steps).astype(np.int64) * GAP_FACTOR
    starts = np.flatnonzero(np.append(True, codes[1:] != codes[:-1]))
    ends = np.append(starts[1:] - 1, len(codes) - 1)
    accounts = frame["account"].array
    names = frame["name"].array
    found = []
    for start, end in zip(starts, ends, strict=True):
        key = (str(accounts[start]), str(ids[codes[start]]))
        before = previous.get(key)
        if before is not None and times[start] - before.value > allowed[codes[start]]:
            found.append(Gap(key[0], key[1], str(names[end]), before, stamps[start]))
        previous[key] = stamps[end]
    jump = np.flatnonzero((codes[1:] == codes[:-1]) & (np.diff(times) > allowed[codes[1:]]))
    for left in jump.tolist():
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


def listing_gap(stored_until: pd.Timestamp, listed_from: pd.Timestamp) -> bool:
    """Whether the service's oldest listed point leaves a hole after the newest stored one."""
    return bool(listed_from - stored_until > DEFAULT_INTERVAL * GAP_FACTOR)
