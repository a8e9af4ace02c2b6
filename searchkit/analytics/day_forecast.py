"""Today's forecast as curves: what a picture of the day draws for one index.

:func:`forecast_day` makes the rows of :func:`~searchkit.forecast_limits` once for every
index and keeps what they came from, so each index's picture is cut from it without reading
the store again: today's cumulative operations (from its points, or, where today came from
its rollup as the collector keeps it, from the rollup's quarter-hours: 96 knots, finer than
a picture's hour), the projected path from now to the reset with its band (the rest of the
day spread over the hours as the forecast spreads it, so the path crosses the limit exactly
at ``hit_at``), and the past days' cumulative curves for the rhythm. Every curve is in
operations, as the rows are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from searchkit.analytics import profile as pf
from searchkit.analytics.backtest import BACKTEST_HOURS, Backtest, replay, replay_scores
from searchkit.analytics.bins import DAY, Bins, last_day_points
from searchkit.analytics.days import answers_before
from searchkit.analytics.forecast import forecast_parts
from searchkit.analytics.reading import listed_once
from searchkit.analytics.usage import is_history
from searchkit.errors import UnknownIndexError
from searchkit.frames.counting import QUARTER_NS, QUARTERS, ValueUnit

if TYPE_CHECKING:
    from searchkit.frames.sources import Source
    from searchkit.frames.zones import Instant
    from searchkit.history.usage_history import History

__all__ = ["MAX_KNOTS", "DayForecast", "forecast_day"]

#: Most knots of today's curve: a day's points are thinned to this many (a cumulative curve
#: is monotone, so evenly spaced knots keep its shape at a picture's width).
MAX_KNOTS = 480


@dataclass(frozen=True)
class DayForecast:
    """Today's forecast of every index, and the curves behind each row.

    Attributes:
        rows: The frame :func:`~searchkit.forecast_limits` returns for the same source,
            ``now`` and options, indexed by ``index_id``.
    """

    rows: pd.DataFrame
    bins: Bins
    plan: dict[str, np.ndarray]
    # Today's operations per index (bins' rows) and quarter-hour when today came from its
    # rollup, and the History to read one index's points from when they are not at hand.
    quarters: np.ndarray | None = None
    source: History | None = None
    _read: dict[int, tuple[np.ndarray, np.ndarray]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @property
    def as_of(self) -> pd.Timestamp:
        """The instant forecast from (UTC)."""
        if len(self.rows):
            return pd.Timestamp(self.rows["as_of"].iloc[0])
        start = self.bins.first_day + (self.bins.days - 1) * DAY
        return pd.Timestamp(start)

    def _position(self, index_id: str) -> int:
        if index_id not in self.rows.index:
            raise UnknownIndexError(f"no forecast row for the index {index_id!r}")
        try:
            return self.bins.ids.index(str(index_id))
        except ValueError:
            return -1

    def today(self, index_id: str) -> pd.DataFrame:
        """Today's cumulative operations of one index, from midnight (UTC) to ``as_of``.

        Returns:
            Columns ``time`` (UTC) and ``used``: 0 at midnight, then the total after each
            point (thinned to :data:`MAX_KNOTS`; at each quarter-hour where today came
            from its rollup), and ``used`` at ``as_of``. Empty when the index has no point
            today.
        """
        at = self._position(index_id)
        row: Any = self.rows.loc[index_id]
        if at < 0 or not np.isfinite(row["used"]):
            return pd.DataFrame({"time": pd.DatetimeIndex([], tz="UTC"), "used": []})
        start, moment = pd.Timestamp(row["period"]).value, pd.Timestamp(row["as_of"]).value
        times, total = self._running(at, start, moment)
        if len(times) > MAX_KNOTS:
            keep = np.unique(np.linspace(0, len(times) - 1, MAX_KNOTS).round().astype(int))
            times, total = times[keep], total[keep]
        knots = np.concatenate([[start], times, [moment]])
        used = np.concatenate([[0.0], total, [float(row["used"])]])
        return pd.DataFrame({"time": pd.to_datetime(knots, utc=True), "used": used})

    def _running(self, at: int, start: int, moment: int) -> tuple[np.ndarray, np.ndarray]:
        """Instants and today's running total of operations at them, before ``moment``:
        each point's, else each finished quarter-hour's."""
        rows, times, ops = self.bins.last_points
        begin, end = np.searchsorted(rows, [at, at + 1])
        if end > begin or not self.bins.last_from_sums:
            return times[begin:end], np.cumsum(ops[begin:end])
        if self.quarters is not None:
            ends = start + np.arange(1, QUARTERS + 1, dtype=np.int64) * QUARTER_NS
            done = ends < moment
            return ends[done], np.cumsum(np.nan_to_num(self.quarters[at]))[done]
        if at not in self._read:  # the rollup changed since: the index's own points
            assert self.source is not None  # today came from a History's rollup
            one = replace(self.bins)
            last_day_points(self.source, one, np.asarray([at]), moment)
            self._read[at] = (one.last_points[1], np.cumsum(one.last_points[2]))
        return self._read[at]

    def path(self, index_id: str) -> pd.DataFrame:
        """The projected cumulative operations of one index from ``as_of`` to the reset.

        Returns:
            Columns ``time`` (UTC: ``as_of``, then each hour to the reset),
            ``projected``, ``projected_low`` and ``projected_high``; at the reset they
            equal the row's. Empty when nothing is forecast for the index.
        """
        at = self._position(index_id)
        row: Any = self.rows.loc[index_id]
        empty = pd.DataFrame(
            {"time": pd.DatetimeIndex([], tz="UTC")}
            | {c: [] for c in ("projected", "projected_low", "projected_high")}
        )
        if at < 0 or not np.isfinite(row["projected"]):
            return empty
        start, moment = pd.Timestamp(row["period"]), pd.Timestamp(row["as_of"])
        tau = (moment - start) / pd.Timedelta(hours=1)
        amounts = np.nan_to_num(self.plan["amounts"][at])
        hours = np.arange(int(np.floor(tau)) + 1, 25)
        ahead = np.cumsum(amounts)[hours - 1]  # the rest up to each hour's end
        knots = [moment] + [start + pd.Timedelta(hours=int(h)) for h in hours]
        used = float(row["used"])
        out: dict[str, Any] = {"time": pd.DatetimeIndex(knots).as_unit("ns")}
        for column, factor in (
            ("projected", 1.0),
            ("projected_low", float(self.plan["low"][at])),
            ("projected_high", float(self.plan["high"][at])),
        ):
            out[column] = np.concatenate([[used], used + ahead * factor])
        return pd.DataFrame(out)

    def past(self, index_id: str, *, days: int = 7) -> pd.DataFrame:
        """The cumulative operations of one index's complete past days, hour by hour.

        Args:
            index_id: The index.
            days: How many days before today to look at (incomplete ones are left out).

        Returns:
            Columns ``day`` (the UTC day), ``hour`` (0 to 24) and ``used`` (operations
            from that day's midnight to the hour), newest day first.
        """
        at = self._position(index_id)
        frames: list[pd.DataFrame] = []
        last = self.bins.days - 1
        for back in range(1, min(days, last) + 1 if at >= 0 else 1):
            if self.bins.cov[at, last - back].sum() < pf.COMPLETE_HOURS:
                continue
            day = self.bins.first_day + (last - back) * DAY
            used = np.concatenate([[0.0], np.cumsum(self.bins.ops[at, last - back])])
            frames.append(pd.DataFrame({"day": day, "hour": np.arange(25), "used": used}))
        if not frames:
            return pd.DataFrame({"day": pd.DatetimeIndex([], tz="UTC"), "hour": [], "used": []})
        return pd.concat(frames, ignore_index=True)

    def _replayed(self) -> tuple[Bins, np.ndarray]:
        """The bins a backtest replays (from the first day holding a point) and each
        index's limit (the rows')."""
        bins = self.bins
        covered = bins.cov.sum(axis=(0, 2)) > 0
        first = int(np.argmax(covered)) if covered.any() else bins.days
        held = Bins(
            bins.ids,
            bins.names,
            bins.first_day + first * DAY,
            bins.ops[:, first:],
            bins.cov[:, first:],
            bins.step,
            bins.newest,
            bins.future,
            bins.last_points,
        )
        limits = pd.Series(self.rows["limit"].to_numpy(), index=self.rows.index.astype(str))
        limit = np.asarray([limits.get(i, np.nan) for i in bins.ids], np.float64)
        return held, limit

    def scores(self, *, hours: Sequence[float] = BACKTEST_HOURS) -> pd.DataFrame:
        """How each index's forecasts fared in :meth:`backtest` (the forecaster's alone),
        without its frame of results: ``band_held``, ``calls_right``, ``backtested`` by
        ``index_id`` (see :func:`~searchkit.analytics.backtest.replay_scores`)."""
        held, limit = self._replayed()
        return replay_scores(held, limit, [float(h) for h in hours], pf.WINDOW)

    def backtest(
        self, *, hours: Sequence[float] = BACKTEST_HOURS, baselines: bool = True
    ) -> Backtest:
        """:func:`~searchkit.backtest_forecast` of the days this forecast read, without
        reading them again: the complete days before today, from the first day holding a
        point, up to the six weeks the forecast looks back (``limit`` the rows' limits).

        On a source holding no more than those days, the same results as
        ``backtest_forecast(source, hours=hours, field=...)`` with the same limits (without
        ``baselines``, the forecaster's alone: the baselines' columns are NaN).
        """
        held, limit = self._replayed()
        return replay(held, limit, [float(h) for h in hours], pf.WINDOW, baselines=baselines)


@listed_once
def forecast_day(
    source: Source,
    now: Instant | None = None,
    *,
    field: str | None = None,
    pace_window: str | pd.Timedelta = "1h",
    value_unit: ValueUnit = "per_second",
) -> DayForecast:
    """Forecast today for every index, keeping the curves a picture of the day draws.

    Args:
        source: As :func:`~searchkit.forecast_limits` takes it.
        now, field, pace_window, value_unit: As :func:`~searchkit.forecast_limits` takes
            them.

    Returns:
        A :class:`DayForecast`: ``.rows`` is the frame ``forecast_limits`` returns, and
        ``.today(index_id)``, ``.path(index_id)``, ``.past(index_id)`` the curves.

    Raises:
        ValidationError: As :func:`~searchkit.forecast_limits`.
    """
    options: dict[str, Any] = {"field": field, "pace_window": pace_window}
    # Today from its rollup where the collector keeps it current (forecast_limits' own
    # way): its quarter-hours draw the day, not a read of every point of it.
    rows, bins, plan = forecast_parts(
        source, now, value_unit=value_unit, last_points=False, **options
    )
    if not bins.last_from_sums or not is_history(source):
        return DayForecast(rows, bins, plan)
    return DayForecast(rows, bins, plan, _quarters(source, bins, rows), source)


def _quarters(source: History, bins: Bins, rows: pd.DataFrame) -> np.ndarray | None:
    """Today's operations per index (the rows of ``bins``) and quarter-hour, from its
    rollup; None when the rollup holds points after the forecast's instant (a collect
    extended it since) or is not current any more."""
    day = bins.first_day + (bins.days - 1) * DAY
    sums = source.sums(f"{day:%Y-%m-%d}", f"{day:%Y-%m-%d}", detail="quarter")
    today = sums.get(f"{day:%Y-%m-%d}")
    moment = pd.Timestamp(rows["as_of"].iloc[0]).value if len(rows) else day.value
    if today is None or not answers_before(today, moment):
        return None
    assert bins.last_scales is not None
    row_of = {index_id: row for row, index_id in enumerate(bins.ids)}
    out = np.full((len(bins.ids), QUARTERS), np.nan)
    for at, index_id in enumerate(today.ids):
        row = row_of.get(index_id)
        if row is not None:
            out[row] = today.value_sums[at] * bins.last_scales[row]
    return out
