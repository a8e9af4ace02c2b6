"""Why a forecast row is not a calibrated forecast: the words of ``reason``.

:func:`~searchkit.forecast_limits` leaves ``reason`` empty for a forecast with a calibrated
band; otherwise it says what is missing (points, past days, a reported limit) or why
nothing was forecast (stale data), in one sentence a person can act on.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from searchkit._units import format_duration
from searchkit.analytics import profile as pf

__all__ = ["age", "no_data_reasons", "reasons"]


def no_data_reasons(limit: np.ndarray, found: np.ndarray) -> list[str]:
    return [
        "the service did not report this limit" if np.isnan(v) else "no throughput points"
        for v in limit
    ]


def reasons(
    bins: pf.Bins,
    plan: dict[str, np.ndarray],
    rows: np.ndarray,
    limit: np.ndarray,
    moment: pd.Timestamp,
    window: pd.Timedelta,
) -> list[str]:
    """Why each row is not a calibrated forecast (empty when it is)."""
    out = []
    for pos, i in enumerate(rows):
        notes = []
        if i >= 0 and bins.future[i]:
            notes.append(
                f"{bins.future[i]} point(s) dated after now ({moment:%Y-%m-%d %H:%M} UTC) left out"
            )
        if np.isnan(limit[pos]):
            notes.append("the service did not report this limit")
        elif i < 0 or bins.newest[i] == pf.NO_TIME:
            notes.append("no throughput points for this index")
        else:
            notes.extend(_method_notes(bins, plan, int(i), moment, window))
        out.append("; ".join(notes))
    return out


def _method_notes(
    bins: pf.Bins, plan: dict[str, np.ndarray], i: int, moment: pd.Timestamp, window: Any
) -> list[str]:
    method = plan["method"][i]
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
