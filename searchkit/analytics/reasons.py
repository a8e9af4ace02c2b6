"""Why a forecast row is what it is: the ``reason`` texts of :func:`~searchkit.forecast_limits`.

Kept apart from the arithmetic (:mod:`searchkit.analytics.forecast`): one place words what
is missing (no points, no limit, stale data, no past day, an idle index, a band from few
days) and what to do about it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from searchkit._units import format_duration
from searchkit.analytics import profile as pf
from searchkit.analytics.bins import NO_TIME, Bins
from searchkit.analytics.usage import is_history
from searchkit.errors import HistoryError

if TYPE_CHECKING:
    from searchkit.frames.sources import Source
    from searchkit.history.usage_history import History

__all__ = [
    "NO_DATA",
    "NO_POINTS",
    "age",
    "no_data_reasons",
    "reasons",
    "require_limits",
    "say_points_after",
]

NO_POINTS = "no throughput points for this index"
#: The same, when no index has a point to bin at all.
NO_DATA = "no throughput points"


def say_points_after(
    out: pd.DataFrame, bins: Bins, later: np.ndarray, source: Source, moment: pd.Timestamp
) -> None:
    """An explicit ``now`` before an index's first point: say the points come after it."""
    empty = out["reason"].isin([NO_POINTS, NO_DATA])
    if not empty.any():
        return
    newest = source.newest_time() if is_history(source) else None
    row_of = {str(i): n for n, i in enumerate(bins.ids)}
    when = f"{moment:%Y-%m-%d %H:%M} UTC"
    for index_id in out.index[empty]:
        n = row_of.get(str(index_id), -1)
        if n >= 0 and later[n] > 0:
            after = f"{later[n]:,} point(s) after it"
        elif newest is not None and newest >= moment:
            after = f"the history holds points after it, up to {newest:%Y-%m-%d %H:%M} UTC"
        else:
            continue
        out.loc[index_id, "reason"] = (
            f"no throughput points before now ({when}); {after}: give a later now, or none "
            "for the present"
        )


def no_data_reasons(limit: np.ndarray, found: np.ndarray) -> list[str]:
    return ["the service did not report this limit" if np.isnan(v) else NO_DATA for v in limit]


def reasons(
    bins: Bins,
    plan: dict[str, np.ndarray],
    rows: np.ndarray,
    limit: np.ndarray,
    moment: pd.Timestamp,
    window: pd.Timedelta,
) -> list[str]:
    """Why each row is not a calibrated forecast (empty when it is)."""
    reasons = []
    for pos, i in enumerate(rows):
        notes = []
        if i >= 0 and bins.future[i]:
            notes.append(
                f"{bins.future[i]} point(s) dated after now ({moment:%Y-%m-%d %H:%M} UTC) left out"
            )
        if np.isnan(limit[pos]):
            notes.append("the service did not report this limit")
        elif i < 0 or bins.newest[i] == NO_TIME:
            notes.append(NO_POINTS)
        else:
            notes.extend(_method_notes(bins, plan, int(i), moment, window))
        reasons.append("; ".join(notes))
    return reasons


def _method_notes(
    bins: Bins, plan: dict[str, np.ndarray], i: int, moment: pd.Timestamp, window: Any
) -> list[str]:
    method = plan["method"][i]
    days = plan["past_days"][i]
    if plan["idle"][i] and not plan["stale"][i] and method in ("profile", "pace"):
        rest = (
            "the rest of the day is forecast 0"
            if method == "profile"
            else f"today has some: the rest of the day at the pace of the last "
            f"{age(pd.Timedelta(window))}, band 0.5x-2x"
        )
        return [f"idle: the last {days} complete day(s) had no operations; {rest}"]
    if plan["stale"][i]:
        end = pd.Timestamp(int(bins.newest[i]), unit="ns", tz="UTC")
        return [
            f"stale: the data end at {end:%Y-%m-%d %H:%M} UTC, {age(moment - end)} before "
            "now; nothing forecast for today: collect again (searchkit collect) and retry"
        ]
    if method == "yesterday":
        return [
            "no complete past day (only the service's current window?): the rest of the day "
            "is yesterday's same hours, band 0.5x-2x; collect a History for the daily "
            "profile and a calibrated band"
        ]
    if method == "pace":
        return [
            f"no past day to learn a rhythm from: the rest of the day at the pace of the "
            f"last {age(pd.Timedelta(window))}, band 0.5x-2x; collect a History for more"
        ]
    if method == "":
        return [f"no points in the {age(pd.Timedelta(window))} before now"]
    notes = []
    if plan["past_days"][i] < 3:
        notes.append(f"only {plan['past_days'][i]} complete past day(s) for the profile")
    if plan["calibrated"][i] < pf.MIN_CALIBRATION:
        notes.append(
            f"band from only {plan['calibrated'][i]} past day(s) at this hour "
            f"({pf.MIN_CALIBRATION} or more calibrate it): widened"
        )
    return notes


def age(delta: pd.Timedelta) -> str:
    return format_duration(delta.total_seconds())


def require_limits(history: History, limits: pd.DataFrame) -> None:
    """Refuse to forecast a History that holds points but no limits, saying what to do.

    Without limits there is no index to forecast, and an empty answer would read as "no
    indexes" while the points are there: a first collect killed between writing its points
    and its limits leaves such a store.

    Raises:
        HistoryError: the history has throughput points and no limits snapshot.
    """
    if not limits.empty or history.newest_time() is None:
        return
    raise HistoryError(
        f"the history at {history.location} holds throughput points but no limits (its "
        "limits/ folder is missing or empty, as a first collect stopped before writing them "
        "leaves it): collect once more (searchkit collect --store LOCATION) to store the "
        "limits, then forecast"
    )
