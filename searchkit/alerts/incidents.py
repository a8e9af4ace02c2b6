"""Incidents, not messages: keys, states, transitions, and :func:`evaluate`.

One incident per rule, index, limit and period (a UTC day for daily limits), under a
stable key (:func:`incident_key`). :func:`evaluate` is pure: given the rules, what was
observed (:func:`observe` reads it from a source: the forecast of each watched limit),
the instant and the previous states, it returns the transitions to tell people about and
the new states. Whoever runs it (the collector) stores both and delivers the
transitions; the state machine itself is :mod:`searchkit.alerts.machine`.

A collector that has stored nothing for longer than ``stalled_after`` raises its own
"collection stalled" incident (index ``""``), resolved when collection resumes; while
data are stale no incident moves (the forecast of a stale index is not made).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np
import pandas as pd

from searchkit._units import format_duration
from searchkit.alerts import machine as mc
from searchkit.alerts.rules import DEFAULT_RULE, AlertRule, check_indexes
from searchkit.analytics.forecast import forecast_limits
from searchkit.analytics.usage import is_history, source_frames
from searchkit.errors import ValidationError
from searchkit.frames.counting import ValueUnit
from searchkit.frames.sources import Source

__all__ = [
    "STALLED",
    "STALLED_AFTER",
    "IncidentState",
    "Observation",
    "Transition",
    "evaluate",
    "incident_key",
    "observe",
]

#: The rule name of the collection-stalled incident.
STALLED = "collection stalled"
#: Default time without a newly stored point before collection counts as stalled.
STALLED_AFTER = pd.Timedelta(hours=1)
_DAY = pd.Timedelta(days=1)


def incident_key(rule: str, index_id: str, field: str, period: pd.Timestamp | str) -> str:
    """The incident's stable key: the same rule name, index, limit and period, the same key.

    A hex digest (16 characters) of the four, like an Alertmanager fingerprint: it says
    nothing of the message, so receivers may drop a copy sent twice.
    """
    when = period if isinstance(period, str) else pd.Timestamp(period).isoformat()
    text = "\x1f".join((rule, str(index_id), field, when))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _ts(value: Any) -> pd.Timestamp | None:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def _ns(value: pd.Timestamp | None) -> int:
    return mc.NO_TIME if value is None else int(value.value)


def _from_ns(value: int) -> pd.Timestamp | None:
    return None if value == mc.NO_TIME else pd.Timestamp(int(value), unit="ns", tz="UTC")


@dataclass(frozen=True, kw_only=True)
class IncidentState:
    """What is remembered of one incident between evaluations (stored by the collector).

    ``state`` is ``"pending"`` (the condition holds, not yet for the rule's ``pending``
    time: nothing was said), ``"firing"``, ``"resolved"`` or ``"breached"``;
    ``updated_at`` is the evaluation that last changed it (an incident that did not move
    keeps its record, the same object, from one evaluation to the next).
    """

    key: str
    rule: str
    index_id: str
    name: str
    field: str
    period: pd.Timestamp
    state: str
    over_since: pd.Timestamp | None = None
    under_since: pd.Timestamp | None = None
    fired_at: pd.Timestamp | None = None
    episode_at: pd.Timestamp | None = None
    breached_at: pd.Timestamp | None = None
    resolved_at: pd.Timestamp | None = None
    fired: int = 0
    updated_at: pd.Timestamp | None = None

    def to_record(self) -> dict[str, Any]:
        """A dict of plain values (instants as aware Timestamps or None)."""
        return asdict(self)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> IncidentState:
        """Back from :meth:`to_record` (or a row read from the store)."""
        values: dict[str, Any] = {f.name: record.get(f.name) for f in fields(cls)}
        for name in ("period", "over_since", "under_since", "fired_at", "episode_at",
                     "breached_at", "resolved_at", "updated_at"):  # fmt: skip
            values[name] = _ts(values[name])
        values["fired"] = int(values["fired"] or 0)
        for name in ("key", "rule", "index_id", "name", "field", "state"):
            values[name] = "" if values[name] is None else str(values[name])
        return cls(**values)


@dataclass(frozen=True, kw_only=True)
class Transition:
    """An incident changed state: everything a message needs to say.

    Attributes:
        key: The incident's stable key (:func:`incident_key`).
        state: ``"firing"``, ``"resolved"`` or ``"breached"``.
        at: The evaluation instant that saw the change.
        rule: The rule's name; ``basis``, ``threshold`` (its ``at``) and ``band`` (the
            forecast's figure it compares) beside it.
        index_id, name, field: The index and the limit (``field`` as
            :func:`~searchkit.forecast_limits` labels it).
        period: The start of the limit's period (a UTC day).
        limit, used: The limit and what was used so far (operations).
        projected, projected_low, projected_high: The forecast of the period's total
            and its 10-90 band (NaN when not forecast).
        hit_at, hit_at_earliest, hit_at_latest: When the limit is expected to be hit,
            and the band of it (None: not before the reset).
        breached_at: When the limit was hit (None while it is not).
        fired_at: When the incident first fired (None if it never did).
        collected_at: The newest stored point the evaluation saw.
        hit_rate: How often this index's forecasts were right in its backtest (NaN
            when unknown).
        reason: One sentence: why the incident changed state.
    """

    key: str
    state: str
    at: pd.Timestamp
    rule: str
    basis: str
    threshold: float
    band: str
    index_id: str
    name: str
    field: str
    period: pd.Timestamp | None
    limit: float
    used: float
    projected: float
    projected_low: float
    projected_high: float
    hit_at: pd.Timestamp | None
    hit_at_earliest: pd.Timestamp | None
    hit_at_latest: pd.Timestamp | None
    breached_at: pd.Timestamp | None
    fired_at: pd.Timestamp | None
    collected_at: pd.Timestamp | None
    hit_rate: float
    reason: str

    def to_record(self) -> dict[str, Any]:
        """A dict of plain values (instants as aware Timestamps or None)."""
        return asdict(self)


@dataclass(frozen=True)
class Observation:
    """What :func:`evaluate` reads: the forecast rows of the watched limits, and when
    the newest stored point was collected."""

    frame: pd.DataFrame
    collected_at: pd.Timestamp | None


def _now(now: Any) -> pd.Timestamp:
    moment = _ts(now)
    if moment is None:
        raise ValidationError(f"now must be a time, got {now!r}")
    return moment


def observe(
    source: Source,
    rules: Sequence[AlertRule] = (DEFAULT_RULE,),
    *,
    now: Any = None,
    previous: Mapping[str, IncidentState] | None = None,
    value_unit: ValueUnit = "per_second",
) -> Observation:
    """Read what :func:`evaluate` needs from ``source`` (a History, IndexList or JSON).

    The forecast (:func:`~searchkit.forecast_limits`) of each limit the rules watch, as of
    ``now`` (default: the present), with an ``index_id`` column; and, for incidents of
    ``previous`` still open from an earlier period, that period's forecast at its last
    instant (its final ``used`` and when it was hit), so that it can close.
    """
    moment = pd.Timestamp.now(tz="UTC") if now is None else _now(now)
    labels = sorted({rule.label for rule in rules})
    moments = [moment]
    for state in (previous or {}).values():
        if state.state == "firing" and state.period + _DAY <= moment:
            moments.append(state.period + _DAY - pd.Timedelta(1, "ns"))
    parts = [
        forecast_limits(source, now=at, field=label, value_unit=value_unit).reset_index()
        for at in sorted(set(moments), reverse=True)
        for label in labels
    ]
    frame = _with_period(pd.concat(parts, ignore_index=True))
    return Observation(frame, _collected_at(source))


def _with_period(frame: pd.DataFrame) -> pd.DataFrame:
    """The forecast's period column as ``period`` (its older name: ``period_start``)."""
    if "period" not in frame.columns and "period_start" in frame.columns:
        return frame.rename(columns={"period_start": "period"})
    return frame


def _collected_at(source: Source) -> pd.Timestamp | None:
    if is_history(source):
        return _ts(source.newest_time())
    tp, _ = source_frames(source)
    return None if tp.empty else _ts(pd.DatetimeIndex(tp["time"]).max())


def evaluate(
    rules: Sequence[AlertRule],
    observed: Observation | pd.DataFrame,
    now: Any,
    previous: Mapping[str, IncidentState],
    *,
    collected_at: Any = None,
    stalled_after: pd.Timedelta | str = STALLED_AFTER,
    hit_rates: Mapping[str, float] | None = None,
) -> tuple[list[Transition], dict[str, IncidentState]]:
    """Evaluate the rules at ``now``: the transitions to tell, and every incident's state.

    Args:
        rules: The rules (names unique).
        observed: From :func:`observe`, or a frame of :func:`~searchkit.forecast_limits`
            rows (with an ``index_id`` column), for the current period and, to close
            them, the last instant of earlier periods with open incidents.
        now: The evaluation instant.
        previous: The states returned by the last evaluation, by key.
        collected_at: The newest stored point's time (an Observation brings its own).
        stalled_after: Longer than this since ``collected_at`` raises the
            "collection stalled" incident.
        hit_rates: Per index id, the share of its backtest's breach calls that were
            right, for the messages.

    Returns:
        The transitions (in rule, then index order) and the new states by key: open
        incidents, and those closed in the current period (so they do not open again
        as new ones); closed incidents of earlier periods are dropped.

    Raises:
        ValidationError: Two rules share a name, a rule's glob matches none of the
            observed indexes, or ``now`` is not a time.
    """
    moment = _now(now)
    stall = pd.Timedelta(stalled_after)
    if isinstance(observed, Observation):
        frame, collected = observed.frame, observed.collected_at
    else:
        frame, collected = _with_period(observed), None
    collected = _ts(collected_at) if collected_at is not None else collected
    names = [rule.name for rule in rules]
    if len(set(names)) != len(names):
        raise ValidationError(f"rule names must be unique, got {names}")
    if len(frame):
        check_indexes(rules, frame["name"].astype(str).unique())
    round_ = _Round(moment, previous, collected, dict(hit_rates or {}), set())
    transitions: list[Transition] = []
    states: dict[str, IncidentState] = {}
    period = moment.normalize()
    for rule in rules if len(frame) else ():
        watched = np.asarray(rule.matches(frame["name"].astype(str)), bool)
        rows = frame[(frame["field"] == rule.label).to_numpy() & watched]
        current = rows[pd.DatetimeIndex(rows["period"]) == period]
        told, kept = _evaluate_rule(rule, current, round_)
        transitions += told
        states.update(kept)
        closing = rows[pd.DatetimeIndex(rows["period"]) < period]
        told, kept = _close_rule(rule, closing, round_)
        transitions += told
        states.update(kept)
    for key, state in previous.items():  # open incidents nothing observed this time
        if key in round_.seen or state.rule == STALLED:
            continue
        if state.state == "firing" or state.period == period:
            states[key] = state
    told, kept = _stalled(previous, moment, collected, stall)
    return transitions + told, {**states, **kept}


def _slots(keys: list[str], previous: Mapping[str, IncidentState]) -> mc.Slots:
    slots = mc.Slots.quiet(len(keys))
    codes = {name: code for code, name in enumerate(mc.STATES)}
    for at, key in enumerate(keys):
        state = previous.get(key)
        if state is None:
            continue
        slots.state[at] = codes.get(state.state, mc.QUIET)
        slots.over_since[at] = _ns(state.over_since)
        slots.under_since[at] = _ns(state.under_since)
        slots.fired_at[at] = _ns(state.fired_at)
        slots.episode_at[at] = _ns(state.episode_at)
        slots.breached_at[at] = _ns(state.breached_at)
        slots.resolved_at[at] = _ns(state.resolved_at)
        slots.fired[at] = state.fired
    return slots


def _observed(rule: AlertRule, rows: pd.DataFrame) -> tuple[np.ndarray, ...]:
    """Per row: known, condition, hit_at (ns), cleared for ``rule``."""
    limit = rows["limit"].to_numpy(np.float64)
    used = rows["used"].to_numpy(np.float64)
    fresh = (rows["method"].astype(str) != "").to_numpy()
    value = used if rule.basis == "used" else rows[rule.band].to_numpy(np.float64)
    clear = used if rule.basis == "used" else rows[rule.clear].to_numpy(np.float64)
    finite = np.isfinite(limit) & (limit > 0)
    known = fresh & finite & np.isfinite(value) & np.isfinite(clear)
    with np.errstate(invalid="ignore"):
        condition = value >= rule.at * limit
        cleared = clear < rule.at * limit
        reached = finite & np.isfinite(used) & (used >= limit)
    hit = pd.DatetimeIndex(rows["hit_at"]).as_unit("ns").asi8
    hit = np.where(hit == mc.NO_TIME, pd.DatetimeIndex(rows["as_of"]).as_unit("ns").asi8, hit)
    return known, condition, np.where(reached, hit, mc.NO_TIME), cleared


def _keys(rule: AlertRule, rows: pd.DataFrame) -> list[str]:
    texts = {p: p.isoformat() for p in pd.DatetimeIndex(rows["period"]).unique()}
    periods = [texts[p] for p in pd.DatetimeIndex(rows["period"])]
    ids = rows["index_id"].astype(str).tolist()
    labels = rows["field"].astype(str).tolist()
    return [incident_key(rule.name, i, f, p) for i, f, p in zip(ids, labels, periods, strict=True)]


@dataclass
class _Round:
    """What every rule of one evaluation shares: its instant, the states before it, the
    newest stored point, the hit rates, and the keys some rule has seen (grows)."""

    moment: pd.Timestamp
    previous: Mapping[str, IncidentState]
    collected: pd.Timestamp | None
    rates: dict[str, float]
    seen: set[str]


def _evaluate_rule(
    rule: AlertRule, rows: pd.DataFrame, round_: _Round
) -> tuple[list[Transition], dict[str, IncidentState]]:
    keys = _keys(rule, rows)
    previous = round_.previous
    slots = _slots(keys, previous)
    before = slots.copy()
    known, condition, hit, cleared = _observed(rule, rows)
    pending, hold = rule.pending_ns, rule.hold_ns
    out = mc.step(slots, round_.moment.value, known, condition, hit, pending, hold, cleared)
    round_.seen.update(keys)
    # An incident whose state did not move keeps its record (most, round after round).
    moved = [a != b for a, b in zip(before.__dict__.values(), slots.__dict__.values(), strict=True)]
    same = (out == 0) & ~np.logical_or.reduce(moved)
    kept = {k: previous[k] for k, s in zip(keys, same, strict=True) if s and k in previous}
    told, changed = _results(rule, rows, keys, slots, out, round_, "", same)
    return told, {**kept, **changed}


def _close_rule(
    rule: AlertRule, rows: pd.DataFrame, round_: _Round
) -> tuple[list[Transition], dict[str, IncidentState]]:
    """Close the open incidents of earlier periods whose last instant was observed."""
    keys = _keys(rule, rows)
    previous, collected = round_.previous, round_.collected
    open_ = [previous.get(k) is not None and previous[k].state == "firing" for k in keys]
    rows = rows[np.asarray(open_, bool)]
    keys = [k for k, o in zip(keys, open_, strict=True) if o]
    slots = _slots(keys, previous)
    _, _, hit, _ = _observed(rule, rows)
    ends = (pd.DatetimeIndex(rows["period"]) + _DAY).as_unit("ns").asi8
    covered = collected is not None and np.asarray(ends) <= collected.value
    out = mc.close(slots, ends, hit, np.broadcast_to(covered, len(keys)))
    round_.seen.update(k for k, code in zip(keys, out, strict=True) if code)
    told, kept = _results(rule, rows, keys, slots, out, round_, "closed")
    return told, {k: v for k, v in kept.items() if k not in round_.seen}


def _results(
    rule: AlertRule,
    rows: pd.DataFrame,
    keys: list[str],
    slots: mc.Slots,
    out: np.ndarray,
    round_: _Round,
    how: str,
    same: np.ndarray | None = None,
) -> tuple[list[Transition], dict[str, IncidentState]]:
    """Transitions and new states of the incidents with something to remember or say
    (most are quiet), but those ``same`` as before (their records are kept as they are)."""
    told: list[Transition] = []
    kept: dict[str, IncidentState] = {}
    some = (out != 0) | (slots.state != mc.QUIET) | (slots.over_since != mc.NO_TIME)
    if same is not None:
        some &= ~same
    picked = np.flatnonzero(some).tolist()
    records: list[dict[str, Any]] = [
        {str(k): v for k, v in row.items()} for row in rows.iloc[picked].to_dict("records")
    ]
    for at, row in zip(picked, records, strict=True):
        key = keys[at]
        state = _state(rule, key, row, slots, at, round_.moment)
        if state is not None:
            kept[key] = state
        if out[at]:
            told.append(_transition(rule, key, row, slots, at, int(out[at]), round_, how))
    return told, kept


def _state(
    rule: AlertRule, key: str, row: dict[str, Any], slots: mc.Slots, at: int, moment: pd.Timestamp
) -> IncidentState | None:
    code = int(slots.state[at])
    pending = code == mc.QUIET and slots.over_since[at] != mc.NO_TIME
    if code == mc.QUIET and not pending:
        return None
    return IncidentState(
        key=key,
        rule=rule.name,
        index_id=str(row["index_id"]),
        name=str(row["name"]),
        field=str(row["field"]),
        period=_ts(row["period"]) or moment.normalize(),
        state="pending" if pending else mc.STATES[code],
        over_since=_from_ns(slots.over_since[at]),
        under_since=_from_ns(slots.under_since[at]),
        fired_at=_from_ns(slots.fired_at[at]),
        episode_at=_from_ns(slots.episode_at[at]),
        breached_at=_from_ns(slots.breached_at[at]),
        resolved_at=_from_ns(slots.resolved_at[at]),
        fired=int(slots.fired[at]),
        updated_at=moment,
    )


def _reason(rule: AlertRule, row: dict[str, Any], code: int, how: str) -> str:
    limit = float(row["limit"])
    if code == mc.BREACHED:
        return f"the limit of {limit:,.0f} was reached ({float(row['used']):,.0f} used)"
    if code == mc.RESOLVED and how == "closed":
        return "the period ended under the limit"
    what = "used" if rule.basis == "used" else rule.band.replace("_", " ")
    value = float(row["used"] if rule.basis == "used" else row[rule.band])
    if code == mc.FIRING:
        return f"{what} {value:,.0f} >= {rule.at:.0%} of the limit {limit:,.0f}"
    return (
        f"{what} {value:,.0f} under {rule.at:.0%} of the limit {limit:,.0f} for "
        f"{_duration_text(pd.Timedelta(rule.hold))}"
    )


def _duration_text(delta: pd.Timedelta) -> str:
    return format_duration(delta.total_seconds())


def _transition(
    rule: AlertRule,
    key: str,
    row: dict[str, Any],
    slots: mc.Slots,
    at: int,
    code: int,
    round_: _Round,
    how: str,
) -> Transition:
    index_id = str(row["index_id"])
    return Transition(
        key=key,
        state=mc.STATES[code],
        at=round_.moment,
        rule=rule.name,
        basis=rule.basis,
        threshold=rule.at,
        band=rule.band,
        index_id=index_id,
        name=str(row["name"]),
        field=str(row["field"]),
        period=_ts(row["period"]),
        limit=float(row["limit"]),
        used=float(row["used"]),
        projected=float(row["projected"]),
        projected_low=float(row["projected_low"]),
        projected_high=float(row["projected_high"]),
        hit_at=_ts(row["hit_at"]),
        hit_at_earliest=_ts(row["hit_at_earliest"]),
        hit_at_latest=_ts(row["hit_at_latest"]),
        breached_at=_from_ns(slots.breached_at[at]),
        fired_at=_from_ns(slots.fired_at[at]),
        collected_at=round_.collected,
        hit_rate=float(round_.rates.get(index_id, np.nan)),
        reason=_reason(rule, row, code, how),
    )


def _stalled(
    previous: Mapping[str, IncidentState],
    moment: pd.Timestamp,
    collected: pd.Timestamp | None,
    stall: pd.Timedelta,
) -> tuple[list[Transition], dict[str, IncidentState]]:
    """The collection-stalled incident: open while nothing new was stored for ``stall``."""
    open_ = {k: s for k, s in previous.items() if s.rule == STALLED and s.state == "firing"}
    stalled = collected is not None and moment - collected > stall
    if stalled and collected is not None:
        key = incident_key(STALLED, "", "", collected)
        if key in open_:
            return [], {key: open_[key]}
        state = IncidentState(
            key=key, rule=STALLED, index_id="", name="", field="", period=collected,
            state="firing", fired_at=moment, episode_at=moment, fired=1, updated_at=moment,
        )  # fmt: skip
        reason = (
            f"nothing stored since {collected:%Y-%m-%d %H:%M} UTC (over {_duration_text(stall)})"
        )
        return [_stall_transition(state, "firing", moment, collected, reason)], {key: state}
    told = [
        _stall_transition(s, "resolved", moment, collected, "collection resumed")
        for s in open_.values()
    ]
    return told, {}


def _stall_transition(
    state: IncidentState, to: str, moment: pd.Timestamp, collected: Any, reason: str
) -> Transition:
    nan = float("nan")
    return Transition(
        key=state.key, state=to, at=moment, rule=STALLED, basis="", threshold=nan, band="",
        index_id="", name="", field="", period=state.period, limit=nan, used=nan,
        projected=nan, projected_low=nan, projected_high=nan, hit_at=None,
        hit_at_earliest=None, hit_at_latest=None, breached_at=None, fired_at=state.fired_at,
        collected_at=collected, hit_rate=nan, reason=reason,
    )  # fmt: skip


def keys_of(states: Iterable[IncidentState]) -> dict[str, IncidentState]:
    """States by key (what :func:`evaluate` takes as ``previous``)."""
    return {state.key: state for state in states}
