"""How the analytics read a History: each UTC day as its rollup's sums or as its points.

:func:`read_days` gives the days asked in order, each a :class:`Day` that says which it is:
a day whose current rollup answers the question (the caller decides, and asks the History
for those sums with :meth:`~searchkit.History.sums`) comes as its sums, any other as its
points, read ahead on threads (Parquet decodes and NumPy sorts without the GIL) while the
day before is counted. A :class:`PointsReader` reads each span of points once, however
often it is asked (the forecast reads today's points to find its instant, then bins them).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import pandas as pd

if TYPE_CHECKING:
    from searchkit.history.dedupe import Points
    from searchkit.history.rollups import DaySums, Detail

__all__ = ["AHEAD", "Day", "PointsReader", "PointsSource", "answers_before", "read_days"]

AHEAD = 2  # days read ahead of the one counted


class PointsSource(Protocol):
    """What :class:`PointsReader` reads from: a :class:`~searchkit.History`."""

    def points(self, *, start: pd.Timestamp, end: pd.Timestamp | None) -> Points: ...

    def sums(self, first: str, last: str, *, detail: Detail = "day") -> dict[str, DaySums]: ...


class PointsReader:
    """The points of a History by span, each span read once (kept until dropped), and the
    sums of its days' rollups by hour, each range read once."""

    def __init__(self, source: PointsSource) -> None:
        self.source = source
        self._read: dict[tuple[pd.Timestamp, pd.Timestamp | None], Points] = {}
        self._sums: dict[tuple[str, str], dict[str, DaySums]] = {}

    def sums(self, first: str, last: str) -> dict[str, DaySums]:
        """:meth:`~searchkit.History.sums` by hour of the days ``first`` to ``last``
        (from a range read before when it held them)."""
        for (low, high), found in self._sums.items():
            if low <= first and last <= high:
                return {day: sums for day, sums in found.items() if first <= day <= last}
        self._sums[first, last] = self.source.sums(first, last, detail="hour")
        return self._sums[first, last]

    def points(self, start: pd.Timestamp, end: pd.Timestamp | None) -> Points:
        """The points from ``start`` (inclusive) to ``end`` (exclusive; None: all after)."""
        if (start, end) not in self._read:
            self._read[start, end] = self.source.points(start=start, end=end)
        return self._read[start, end]


def answers_before(sums: DaySums | None, cut: int | None) -> bool:
    """Whether a day's rollup ``sums`` answer for its points before ``cut`` (epoch ns; None:
    all of them): they hold no point at or after it. The open day's rollup, which each
    collect extends, holds the points written since a forecast's instant too; then the
    day is read from its points, up to the instant. (Whether a rollup's quarters answer
    a zone's periods is :func:`~searchkit.analytics.periods.plan`'s to say.)"""
    if sums is None:
        return False
    return cut is None or not len(sums.ids) or int(sums.last_point.max()) < cut


@dataclass(frozen=True)
class Day:
    """One span of a History (a UTC day, or all after one) as the analytics count it: its
    rollup's ``sums`` when they answer, else its ``points``; exactly one is set."""

    start: pd.Timestamp
    end: pd.Timestamp | None
    sums: DaySums | None = None
    points: Points | None = None


def read_days(
    reader: PointsReader,
    spans: Sequence[tuple[pd.Timestamp, pd.Timestamp | None, DaySums | None]],
) -> Iterator[Day]:
    """Yield each span as a :class:`Day`, in order: from its sums where given, else from
    its points, at most :data:`AHEAD` spans' points read ahead of the one yielded."""
    to_read = [at for at, (_, _, sums) in enumerate(spans) if sums is None]
    reading: dict[int, Future[Points]] = {}
    with ThreadPoolExecutor(max_workers=AHEAD) as pool:

        def read_ahead() -> None:
            while to_read and len(reading) < AHEAD:
                at = to_read.pop(0)
                start, end, _ = spans[at]
                reading[at] = pool.submit(reader.points, start, end)

        for at, (start, end, sums) in enumerate(spans):
            if sums is not None:
                yield Day(start, end, sums=sums)
                continue
            read_ahead()
            points = reading.pop(at).result()
            read_ahead()
            yield Day(start, end, points=points)
