"""One alert round after a collect: reload the incidents, evaluate, record, send.

:func:`alert_round` is what ``searchkit collect --alerts FILE`` runs after each round:

1. the incidents' states are reloaded from the store's journal (``alerts/``), so a
   restarted collector, or a second one, goes on from what was recorded;
2. the rules are evaluated on the history (:func:`~searchkit.alerts.incidents.observe`,
   :func:`~searchkit.alerts.incidents.evaluate`);
3. the transitions (each under its incident key and its number in the incident) and the
   states that changed are recorded, in one file, before anything is sent;
4. everything pending is delivered within the round's budget
   (:func:`~searchkit.alerts.delivery.deliver`).

A collector killed after step 3 sends in its next round; one killed between sending and
recording re-sends after the claim's lease, with the same key.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from searchkit.alerts.config import AlertsConfig
from searchkit.alerts.delivery import DeliveryReport, deliver
from searchkit.alerts.incidents import IncidentState, evaluate, observe
from searchkit.alerts.journal import Journal, transition_row

if TYPE_CHECKING:
    from searchkit.history.usage_history import History

__all__ = ["WINDOW", "RoundReport", "alert_round", "open_incidents", "states_of"]

#: How far back each round reads the journal (incidents of a day close the next day).
WINDOW = pd.Timedelta(days=2)
#: An open incident's state is written again after this long, so it stays in the window.
_REFRESH = pd.Timedelta(hours=12)


@dataclasses.dataclass(frozen=True)
class RoundReport:
    """What one alert round did: the transitions it recorded, the delivery, and how many
    incidents are firing after it."""

    transitions: tuple[dict[str, Any], ...]
    delivery: DeliveryReport
    open: int

    def summary(self) -> str:
        """One line: transitions, open incidents, sends."""
        by_state: dict[str, int] = {}
        for record in self.transitions:
            by_state[record["state"]] = by_state.get(record["state"], 0) + 1
        told = ", ".join(f"{n} {state}" for state, n in sorted(by_state.items()))
        told = f"new {told}" if told else "no change"
        d = self.delivery
        sends = f"sent {len(d.sent)}, failed {len(d.failed)}"
        if d.misconfigured:
            sends += f", misconfigured {len(d.misconfigured)}"
        if d.waiting or d.deferred:
            sends += f", {d.waiting + d.deferred} waiting"
        return f"alerts: {told}; {self.open} firing now; {sends}"


def states_of(records: pd.DataFrame) -> dict[str, IncidentState]:
    """The incidents' states as last recorded (a key recorded ``quiet`` left the map)."""
    latest = _latest_states(records)
    out = {}
    for row in latest.to_dict("records"):
        if row["state"] == "quiet":
            continue
        values = {str(k): _plain(v) for k, v in row.items()}
        values["period_start"] = values.get("period")
        out[str(row["key"])] = IncidentState.from_record(values)
    return out


def _latest_states(records: pd.DataFrame) -> pd.DataFrame:
    if records.empty:
        return records
    states = records[records["record"] == "state"]
    return states.drop_duplicates("key", keep="last")


def open_incidents(records: pd.DataFrame) -> pd.DataFrame:
    """The incidents whose last recorded state is pending, firing or breached, newest
    first (a breached one stays until its period's incidents are dropped)."""
    latest = _latest_states(records)
    if latest.empty:
        return latest
    shown = latest[latest["state"].isin(["firing", "breached", "pending"])]
    return shown.sort_values("recorded_at", ascending=False)


def _plain(value: Any) -> Any:
    """A value read from the journal as the incident model takes it (missing: None)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    return value


def alert_round(
    history: History,
    config: AlertsConfig,
    *,
    now: Any = None,
    journal: Journal | None = None,
    clock: Callable[[], float] = time.time,
    hit_rates: Mapping[str, float] | None = None,
    before_record: Callable[[int], None] | None = None,
) -> RoundReport:
    """Evaluate the rules on ``history`` at ``now``, record the changes, send what is due.

    Args:
        history: The store the collector writes.
        config: The alerts file (:func:`~searchkit.alerts.config.load_alerts`).
        now: The evaluation instant (default: the present).
        journal: The store's journal (default: a new one on ``history``).
        clock: The delivery's clock in epoch seconds (retries, claims' records).
        hit_rates: Per index id, how often its forecasts were right in its backtest.
        before_record: See :func:`~searchkit.alerts.delivery.deliver` (tests).

    Raises:
        HistoryError: The store cannot be read or written.
        ValidationError: A rule's glob matches no index.
    """
    journal = journal or Journal(history)
    moment = pd.Timestamp.now(tz="UTC") if now is None else pd.Timestamp(now)
    wall = pd.Timestamp(clock(), unit="s", tz="UTC")
    records = journal.read(since=min(moment, wall) - WINDOW)
    previous = states_of(records)
    observed = observe(history, config.rules, now=moment, previous=previous)
    told, states = evaluate(
        config.rules,
        observed,
        moment,
        previous,
        stalled_after=config.stalled_after,
        hit_rates=hit_rates,
    )
    told_records = [t.to_record() for t in told]
    rows = _rate_rows(history, records, told_records, moment, hit_rates)
    rows += _transition_rows(records, told_records)
    rows += _state_rows(records, previous, states, wall)
    written = journal.append(rows, now=clock())
    if not written.empty:
        records = pd.concat([records, written], ignore_index=True) if len(records) else written
    routes = {rule.name: set(rule.channels) for rule in config.rules}
    report = deliver(
        journal,
        config.channels,
        budget=config.budget,
        lease=config.lease,
        records=records,
        clock=clock,
        before_record=before_record,
        routes=routes,
    )
    transitions = tuple(row for row in rows if row["record"] == "transition")
    return RoundReport(transitions, report, sum(s.state == "firing" for s in states.values()))


def _rate_rows(
    history: History,
    records: pd.DataFrame,
    told: list[dict[str, Any]],
    moment: pd.Timestamp,
    given: Mapping[str, float] | None,
) -> list[dict[str, Any]]:
    """Give each transition its index's backtest hit rate; rows for rates computed now.

    Rates are computed (a backtest of the stored days) only when a transition needs one
    that today's journal does not hold, so a round with nothing to tell costs nothing, and
    a collector run from cron does not replay the past every ten minutes.
    """
    wanted = {str(r["index_id"]) for r in told if r["index_id"]}
    if not wanted:
        return []
    day = moment.normalize()
    known: dict[str, float] = dict(given or {})
    if not records.empty:
        stored = records[(records["record"] == "hit_rate") & (records["period"] == day)]
        known.update(zip(stored["index_id"].astype(str), stored["hit_rate"], strict=True))
    missing = sorted(wanted - set(known))
    rows: list[dict[str, Any]] = []
    if missing:
        from searchkit.alerts.backtest import hit_rates

        found = hit_rates(history, index_ids=missing, now=moment)
        for index_id in missing:  # an index without a backtest is recorded as unknown
            rate = found.get(index_id, math.nan)
            known[index_id] = rate
            rows.append({"record": "hit_rate", "index_id": index_id, "period": day,
                         "hit_rate": rate, "at": moment})  # fmt: skip
    for record in told:
        share = known.get(str(record["index_id"]))
        if share is not None and not math.isnan(share):
            record["hit_rate"] = share
    return rows


def _transition_rows(records: pd.DataFrame, told: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each transition's row, numbered after the incident's recorded transitions."""
    counts: dict[str, int] = {}
    if not records.empty:
        seen = records[records["record"] == "transition"].drop_duplicates(["key", "seq"])
        counts = {str(k): int(n) for k, n in seen.groupby("key")["seq"].max().items()}
    rows = []
    for record in told:
        key = str(record["key"])
        counts[key] = counts.get(key, 0) + 1
        rows.append(transition_row(record, counts[key]))
    return rows


def _state_rows(
    records: pd.DataFrame,
    previous: Mapping[str, IncidentState],
    states: Mapping[str, IncidentState],
    wall: pd.Timestamp,
) -> list[dict[str, Any]]:
    """Rows for the states that changed (or are due a refresh), and those that left."""
    written: dict[str, pd.Timestamp] = {}
    latest = _latest_states(records)
    if not latest.empty:
        written = dict(zip(latest["key"].astype(str), latest["recorded_at"], strict=True))
    rows = []
    for key, state in states.items():
        record = state.to_record()
        before = previous.get(key)
        same = before is not None and _comparable(before.to_record()) == _comparable(record)
        stale = key in written and wall - written[key] > _REFRESH
        if not same or stale:
            rows.append({**record, "record": "state"})
    for key, state in previous.items():
        if key not in states:
            rows.append({**state.to_record(), "record": "state", "state": "quiet"})
    return rows


def _comparable(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "updated_at"}
