"""The incident state machine, one step for many incidents at once (NumPy arrays).

An incident (one rule, index, limit and period) is *quiet* until its condition holds;
it *fires* once the condition has held for the rule's ``pending`` time; a firing incident
*resolves* once the condition has been false for ``hold`` (so a forecast wobbling around
the threshold does not fire, resolve and fire again), or when the period ends under the
limit; it is *breached* when the limit is hit, whatever it was before, and stays so.
An observation that is not known (stale data, no forecast) moves nothing: it neither
counts towards ``pending`` nor ``hold``, and restarts both clocks.

The live evaluation (:func:`~searchkit.alerts.incidents.evaluate`) steps the incidents
of one instant; the backtest (:func:`~searchkit.backtest_alerts`) steps a whole history's
incidents instant after instant: both through :func:`step`, so they cannot disagree.
All instants are int64 nanoseconds since the epoch, :data:`NO_TIME` for none.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["BREACHED", "FIRING", "NO_TIME", "QUIET", "RESOLVED", "STATES", "Slots", "close", "step"]

NO_TIME = np.iinfo(np.int64).min
QUIET, FIRING, RESOLVED, BREACHED = 0, 1, 2, 3
#: State names by code (a quiet incident whose condition holds is "pending").
STATES: tuple[str, ...] = ("quiet", "firing", "resolved", "breached")


@dataclass
class Slots:
    """The state of ``n`` incidents: one array element each."""

    state: np.ndarray  # int8 code
    over_since: np.ndarray  # the condition has held since (pending), NO_TIME if not
    under_since: np.ndarray  # a firing incident's condition is false since, NO_TIME if not
    fired_at: np.ndarray  # first firing
    episode_at: np.ndarray  # start of the firing in effect (the last one)
    breached_at: np.ndarray  # when the limit was hit
    resolved_at: np.ndarray
    fired: np.ndarray  # int32: times fired (more than 1 is a repeat)

    @classmethod
    def quiet(cls, n: int) -> Slots:
        """``n`` incidents that have seen nothing yet."""

        def never() -> np.ndarray:
            return np.full(n, NO_TIME, np.int64)

        return cls(
            np.zeros(n, np.int8), never(), never(), never(), never(), never(), never(),
            np.zeros(n, np.int32),
        )  # fmt: skip

    def copy(self) -> Slots:
        return Slots(*(a.copy() for a in self.__dict__.values()))


def step(
    slots: Slots,
    now: int | np.ndarray,
    known: np.ndarray,
    condition: np.ndarray,
    hit_at: np.ndarray,
    pending: np.ndarray | int,
    hold: np.ndarray | int,
    cleared: np.ndarray | None = None,
) -> np.ndarray:
    """Advance ``slots`` (in place) to ``now``; return each one's transition code.

    Args:
        slots: The incidents' states before ``now``.
        now: The instant evaluated (ns), one for all or one each.
        known: The observation is usable (fresh data, a forecast made).
        condition: The rule's condition holds (read only where known).
        hit_at: When the limit was hit (ns), NO_TIME while it is not.
        pending: How long (ns) the condition must hold before firing.
        hold: How long (ns) it must be false before a firing incident resolves.
        cleared: Where the firing incident counts as back under (read only where known
            and the condition does not hold); default: wherever the condition does not
            hold. A stricter test than "not the condition" is hysteresis: between the
            two, a firing incident keeps firing and a quiet one stays quiet.

    Returns:
        Per incident: 0 (nothing to say), FIRING, RESOLVED or BREACHED.
    """
    state = slots.state
    out = np.zeros(len(state), np.int8)
    now_a = np.broadcast_to(np.asarray(now, np.int64), state.shape)
    breach = (hit_at != NO_TIME) & (state != BREACHED)
    out[breach] = BREACHED
    state[breach] = BREACHED
    slots.breached_at[breach] = hit_at[breach]
    live = state != BREACHED
    unknown = live & ~known
    slots.over_since[unknown] = NO_TIME
    slots.under_since[unknown] = NO_TIME
    over = live & known & condition
    slots.under_since[over] = NO_TIME
    start = over & (slots.over_since == NO_TIME)
    slots.over_since[start] = now_a[start]
    fire = over & (state != FIRING) & (now_a - slots.over_since >= pending)
    out[fire] = FIRING
    state[fire] = FIRING
    slots.fired[fire] += 1
    first = fire & (slots.fired_at == NO_TIME)
    slots.fired_at[first] = now_a[first]
    slots.episode_at[fire] = now_a[fire]
    below = live & known & ~condition
    slots.over_since[below] = NO_TIME
    under = below if cleared is None else below & cleared
    slots.under_since[below & ~under] = NO_TIME
    firing = under & (state == FIRING)
    begin = firing & (slots.under_since == NO_TIME)
    slots.under_since[begin] = now_a[begin]
    resolve = firing & (now_a - slots.under_since >= hold)
    out[resolve] = RESOLVED
    state[resolve] = RESOLVED
    slots.resolved_at[resolve] = now_a[resolve]
    return out


def close(
    slots: Slots, end: int | np.ndarray, hit_at: np.ndarray, covered: np.ndarray
) -> np.ndarray:
    """End the period of ``slots`` (in place): a breach found now is breached, a firing
    incident whose period ended under the limit resolves at ``end``, but only where the
    data ``covered`` the period's end (stale data never resolves anything).

    Returns:
        Per incident: 0, RESOLVED or BREACHED.
    """
    state = slots.state
    out = np.zeros(len(state), np.int8)
    end_a = np.broadcast_to(np.asarray(end, np.int64), state.shape)
    breach = (hit_at != NO_TIME) & (state != BREACHED)
    out[breach] = BREACHED
    state[breach] = BREACHED
    slots.breached_at[breach] = hit_at[breach]
    resolve = ~breach & covered & (state == FIRING)
    out[resolve] = RESOLVED
    state[resolve] = RESOLVED
    slots.resolved_at[resolve] = end_a[resolve]
    return out
