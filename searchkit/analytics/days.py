"""How the analytics read a History: each UTC day as its rollup's sums or as its points.

:func:`read_days` gives the days asked in order, each a :class:`Day` that says which it is:
a day whose current rollup answers the question (the caller decides, and asks the History
for those sums with :meth:`~searchkit.History.sums`) comes as its sums, any other as its
points, read ahead on threads (Parquet decodes and NumPy sorts without the GIL) while the
day before is counted. A :class:`PointsReader` keeps the newest span of points it read, for
a second ask (the forecast reads today's points to find its instant, then bins them).

Memory stays that of :data:`HELD` days' points whatever the number of days read: the one
counted, :data:`AHEAD` read ahead, and the one kept. Each day's read is checked against its
share of the read budget (:func:`searchkit.history.budget.shared`): a day that would not fit
is refused before its data is read, saying how to bound it. (The reader once kept every
span it read: a year of points without usable rollups took +16.5 GiB, although each day's
read alone passed the budget.)
"""

from __future__ import annotations

import contextvars
import datetime as dt
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import pandas as pd

from searchkit.history import budget

if TYPE_CHECKING:
    from searchkit.history.dedupe import Points
    from searchkit.history.rollups import DaySums, Detail

__all__ = ["AHEAD", "HELD", "Day", "PointsReader", "PointsSource", "answers_before", "read_days"]

AHEAD = 2  # days read ahead of the one counted
#: The most spans' points held at once: the one counted, AHEAD read ahead, the one kept.
HELD = AHEAD + 2
#: How a call whose days are read from their points is bounded (see :func:`read_days`).
BOUND = (
    "the days without a usable rollup are read from their points; write their rollups "
    "with hist.refresh_rollups() (it reads a day at a time), or raise SEARCHKIT_READ_LIMIT"
)

Span = tuple[pd.Timestamp, pd.Timestamp | None]


class PointsSource(Protocol):
    """What :class:`PointsReader` reads from: a :class:`~searchkit.History`."""

    def points(self, *, start: pd.Timestamp, end: pd.Timestamp | None) -> Points: ...

    def sums(self, first: str, last: str, *, detail: Detail = "day") -> dict[str, DaySums]: ...


class PointsReader:
    """The points of a History by span, the newest span read kept (and only it: memory
    stays that of a span), and the sums of its days' rollups by hour, each range read once."""

    def __init__(self, source: PointsSource) -> None:
        self.source = source
        self._kept: tuple[Span, Points] | None = None
        self._lock = threading.Lock()
        self._sums: dict[str, DaySums] = {}  # by day, of every day asked so far
        self._asked: set[str] = set()  # the days asked (a day without current sums too)

    def sums(self, first: str, last: str) -> dict[str, DaySums]:
        """:meth:`~searchkit.History.sums` by hour of the days ``first`` to ``last``, each
        day's rollup read once: only the days no ask before covered are read.

        (The forecast asks twice: the days up to the newest point's, to find its instant,
        then its window, which ends a day later when that instant is midnight. Reading the
        second range whole read every rollup twice: on S3, a HEAD and a GET more a day.)"""
        for low, high in _runs(first, last, self._asked):
            self._sums.update(self.source.sums(low, high, detail="hour"))
            self._asked.update(_each_day(low, high))
        return {day: self._sums[day] for day in sorted(self._sums) if first <= day <= last}

    def points(self, start: pd.Timestamp, end: pd.Timestamp | None) -> Points:
        """The points from ``start`` (inclusive) to ``end`` (exclusive; None: all after);
        kept when no span kept starts later (the newest day: the forecast asks it twice)."""
        kept = self._kept
        if kept is not None and kept[0] == (start, end):
            return kept[1]
        points = self.source.points(start=start, end=end)
        with self._lock:
            if self._kept is None or self._kept[0][0] <= start:
                self._kept = ((start, end), points)
        return points


def _each_day(first: str, last: str) -> list[str]:
    """The UTC days ``first`` to ``last`` (``YYYY-MM-DD``, inclusive)."""
    start, end = dt.date.fromisoformat(first), dt.date.fromisoformat(last)
    return [f"{start + dt.timedelta(days=n):%Y-%m-%d}" for n in range((end - start).days + 1)]


def _runs(first: str, last: str, asked: set[str]) -> list[tuple[str, str]]:
    """The days ``first`` to ``last`` not in ``asked``, as (first, last) runs of
    consecutive days."""
    runs: list[tuple[str, str]] = []
    for day in _each_day(first, last):
        if day in asked:
            continue
        if runs and runs[-1][1] == f"{dt.date.fromisoformat(day) - dt.timedelta(days=1):%Y-%m-%d}":
            runs[-1] = (runs[-1][0], day)
        else:
            runs.append((day, day))
    return runs


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
    its points, at most :data:`AHEAD` spans' points read ahead of the one yielded, each
    read within its share of the budget (a :data:`HELD`-th: see the module).

    Raises:
        HistoryError: A span's points would take more than their share of the budget
            (before its data is read), saying how to bound the call.
    """
    to_read = [at for at, (_, _, sums) in enumerate(spans) if sums is None]
    reading: dict[int, Future[Points]] = {}
    with (
        ThreadPoolExecutor(max_workers=AHEAD) as pool,
        budget.shared(HELD, f"{HELD} days", BOUND),
    ):

        def read_ahead() -> None:
            while to_read and len(reading) < AHEAD:
                at = to_read.pop(0)
                start, end, _ = spans[at]
                # The budget's share goes along to the reading thread.
                scope = contextvars.copy_context()
                reading[at] = pool.submit(scope.run, reader.points, start, end)

        for at, (start, end, sums) in enumerate(spans):
            if sums is not None:
                yield Day(start, end, sums=sums)
                continue
            read_ahead()
            points = reading.pop(at).result()
            read_ahead()
            yield Day(start, end, points=points)
