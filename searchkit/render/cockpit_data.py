"""What the quota cockpit reads: today's forecast, the daily usage, the newest point.

The cockpit (:mod:`searchkit.ui.cockpit`) calls only these, on its worker thread; each is
one public analytics call on the source the user gave (a History through
:func:`read_by_refresh`: the same store, read only where it changed), so the cockpit's
rows are exactly :func:`~searchkit.forecast_limits`' for the same source and ``now``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from searchkit.analytics.day_forecast import DayForecast, forecast_day
from searchkit.analytics.usage import is_history, usage_frame
from searchkit.frames.counting import ValueUnit
from searchkit.history.seen_history import SeenHistory

if TYPE_CHECKING:
    from searchkit.frames.sources import Source
    from searchkit.frames.zones import Instant

__all__ = ["cockpit_forecast", "cockpit_usage", "newest_point", "read_by_refresh", "source_text"]


def read_by_refresh(source: Source) -> Source:
    """What the cockpit's refreshes read: a History as a
    :class:`~searchkit.history.seen_history.SeenHistory` (each refresh reads only the files
    written since the last; whatever it cannot prove unchanged it reads afresh, so the
    rows stay forecast_limits' on the store to the bit), anything else as it is (read
    whole each time)."""
    return SeenHistory(source) if is_history(source) else source


def cockpit_forecast(
    source: Source, *, now: Instant | None, field: str | None, value_unit: ValueUnit
) -> DayForecast:
    """Today's forecast of every index with the curves of its picture (one read).

    What Arrow's allocator kept of the read's buffers is given back to the system then: the
    cockpit stays open in the kernel, and the next step (the backtest's replay, a drawing)
    would otherwise stack on top of memory nothing uses.
    """
    import pyarrow as pa

    day = forecast_day(source, now, field=field, value_unit=value_unit)
    pa.default_memory_pool().release_unused()
    return day


def cockpit_usage(source: Source, *, field: str | None, value_unit: ValueUnit) -> pd.DataFrame:
    """Operations per index and UTC day against that day's limit (the daily view)."""
    if field is not None and "+" in field:  # the sum is usage_frame's default
        field = None
    return usage_frame(source, field=field, value_unit=value_unit)


def newest_point(source: Source) -> pd.Timestamp | None:
    """The newest stored point's time of a History (reading only its newest day);
    None for other sources (they are read whole on every refresh)."""
    if is_history(source):
        newest: pd.Timestamp | None = source.newest_time()
        return newest
    return None


def source_text(source: Source) -> str:
    """Name the source in a status line without a secret: a History's location, or what
    kind of object it is (an IndexList's tokens never reach the text)."""
    if is_history(source):
        return f"the history at {source.location}"
    return f"the {type(source).__name__} given"
