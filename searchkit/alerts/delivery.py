"""Delivery: send what the journal says is unsent, within a budget, once per incident.

Each round, after the incident transitions are recorded, :func:`deliver` reads the journal
and sends every transition that some channel has not taken yet:

- **Nothing lost.** A transition stays pending for a channel until a delivery recorded as
  ``sent`` (or ``misconfigured``) says otherwise; a receiver that is down, slow or drops
  the connection is tried again in later rounds, after a pause that doubles with each
  failed attempt (1 minute, 2, 4, ... at most an hour).
- **Nothing known sent repeated.** Before sending, the attempt is claimed
  (:mod:`searchkit.alerts.claims`, a create-if-absent): of two collectors on one store,
  one sends. A claim older than the lease with no delivery recorded belongs to a
  collector killed between sending and recording: the next attempt re-sends, with the
  same incident key (at least once; the key lets the receiver drop the copy). Claims
  older than four days are pruned once a UTC day (:meth:`Claims.prune`).
- **A bounded round.** All sends of a round share ``budget`` seconds: each send's timeout
  is what is left (urllib3's and smtplib's own timeouts, no sleeping), and what did not
  fit waits for the next round.
- **4xx is not retried.** A receiver that refuses the message (an HTTP 4xx other than
  408/425/429, a refused login or address) is recorded ``misconfigured`` and reported.

Transitions of one incident reach a channel in order: a later one waits while an earlier
one is still pending there.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import pandas as pd

from searchkit.alerts.channels import Channel, Outcome
from searchkit.alerts.claims import Claims, claim_digest
from searchkit.alerts.journal import Delivery, Journal, notice_of
from searchkit.alerts.notices import Notice
from searchkit.errors import HistoryError

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_LEASE",
    "DeliveryReport",
    "Pending",
    "backoff",
    "deliver",
    "pending",
]

#: Seconds delivery may add to a collect round, by default.
DEFAULT_BUDGET = 10.0
#: Seconds after which a claim with no delivery recorded is taken over, by default.
DEFAULT_LEASE = 120.0
_FIRST_RETRY = 60.0
_LAST_RETRY = 3600.0
_MAX_TAKEOVERS = 50


def backoff(attempt: int) -> float:
    """Seconds to wait after the ``attempt``-th failed attempt (1 min, doubling, <= 1 h).

    Example:
        >>> [backoff(n) for n in (1, 2, 3, 7, 8, 20)]
        [60.0, 120.0, 240.0, 3600.0, 3600.0, 3600.0]
    """
    return float(min(_LAST_RETRY, _FIRST_RETRY * 2.0 ** min(max(attempt - 1, 0), 30)))


@dataclasses.dataclass(frozen=True)
class Pending:
    """A transition some channel has not taken yet."""

    notice: Notice
    seq: int
    channel: Channel
    attempts: int  # attempts recorded so far


@dataclasses.dataclass
class DeliveryReport:
    """What one delivery pass did."""

    sent: list[Delivery] = dataclasses.field(default_factory=list)
    failed: list[Delivery] = dataclasses.field(default_factory=list)
    misconfigured: list[Delivery] = dataclasses.field(default_factory=list)
    #: Pending, but their retry is not due yet.
    waiting: int = 0
    #: Pending, but the round's budget was spent before their turn.
    deferred: int = 0
    #: Another collector holds their claim (it is sending them now).
    elsewhere: int = 0
    #: Old claims deleted by this pass (the day's first: see Claims.prune).
    pruned: int = 0
    #: Why pruning old claims failed (it is tried again the next day), or "".
    prune_error: str = ""

    def lines(self) -> list[str]:
        """The pass in a few lines (no secret: channels show by name)."""
        out = []
        for d in self.sent:
            out.append(f"sent {d.key} #{d.seq} to {d.channel} ({d.message})")
        for d in self.failed:
            when = f"; next try after {d.next_try:%H:%M:%S} UTC" if d.next_try else ""
            out.append(f"failed {d.key} #{d.seq} to {d.channel}: {d.message}{when}")
        for d in self.misconfigured:
            out.append(
                f"channel {d.channel} is misconfigured: {d.message} ({d.key} #{d.seq} "
                "not sent, not retried)"
            )
        if self.deferred:
            out.append(f"{self.deferred} notification(s) left for the next round (budget spent)")
        if self.prune_error:
            out.append(f"old claims not pruned: {self.prune_error}")
        return out


def pending(
    records: pd.DataFrame,
    channels: Sequence[Channel],
    now: pd.Timestamp,
    routes: Mapping[str, Collection[str]] | None = None,
) -> tuple[list[Pending], int]:
    """Return what is to be sent now, oldest first, and how many wait for their retry.

    Args:
        records: The journal's rows (:meth:`Journal.read`).
        channels: The configured channels.
        now: The delivery's clock (a retry is due once ``next_try`` has passed).
        routes: Per rule name, the channels its incidents go to (none listed, or a rule
            not named: every channel).
    """
    if records.empty:
        return [], 0
    transitions = records[records["record"] == "transition"]
    transitions = transitions.drop_duplicates(["key", "seq"], keep="first")
    transitions = transitions.sort_values(["at", "key", "seq"], kind="stable")
    done, attempts, due = _delivery_state(records[records["record"] == "delivery"])
    out: list[Pending] = []
    waiting = 0
    blocked: set[tuple[str, str]] = set()  # (key, channel) with an earlier one pending
    rows: list[dict[Any, Any]] = transitions.to_dict("records")
    for row in rows:
        notice = notice_of(row)
        seq = int(row["seq"])
        for channel in channels:
            ident = (notice.key, seq, channel.name)
            if ident in done or not channel.wants(notice):
                continue
            route = (routes or {}).get(notice.rule)
            if route and channel.name not in route:
                continue
            if (notice.key, channel.name) in blocked:
                continue
            blocked.add((notice.key, channel.name))
            retry = due.get(ident)
            if retry is not None and retry > now:
                waiting += 1
                continue
            out.append(Pending(notice, seq, channel, attempts.get(ident, 0)))
    return out, waiting


def _delivery_state(
    deliveries: pd.DataFrame,
) -> tuple[set[tuple[str, int, str]], dict[tuple[str, int, str], int], dict[Any, pd.Timestamp]]:
    """From delivery rows: what is done, how many attempts each had, when each is due."""
    done: set[tuple[str, int, str]] = set()
    attempts: dict[tuple[str, int, str], int] = {}
    due: dict[Any, pd.Timestamp] = {}
    rows: list[dict[Any, Any]] = deliveries.to_dict("records")
    for row in rows:
        ident = (str(row["key"]), int(row["seq"]), str(row["channel"]))
        attempt = int(row["attempt"])
        if row["outcome"] in ("sent", "misconfigured"):
            done.add(ident)
        if attempt >= attempts.get(ident, 0):
            attempts[ident] = attempt
            if row["outcome"] == "failed" and not pd.isna(row["next_try"]):
                due[ident] = pd.Timestamp(row["next_try"])
    return done, attempts, due


def deliver(
    journal: Journal,
    channels: Sequence[Channel],
    *,
    budget: float = DEFAULT_BUDGET,
    lease: float = DEFAULT_LEASE,
    records: pd.DataFrame | None = None,
    clock: Callable[[], float] = time.time,
    before_record: Callable[[int], None] | None = None,
    routes: Mapping[str, Collection[str]] | None = None,
) -> DeliveryReport:
    """Send every pending transition to its channels within ``budget`` seconds; record it.

    Args:
        journal: The store's journal (read for what is pending, written with the results).
        channels: Where to send.
        budget: Seconds all sends of this pass may take together.
        lease: Seconds after which another collector's claim with nothing recorded for it
            is taken over (longer than any send can take).
        records: The journal's rows, when the caller has just read them.
        clock: The delivery's clock in epoch seconds (retry times, records).
        before_record: Called with the number of attempts made, after sending and before
            recording them (tests pause a collector there).
        routes: Per rule name, the channels its incidents go to (see :func:`pending`).

    Returns:
        A :class:`DeliveryReport`.

    Raises:
        HistoryError: The journal or a claim cannot be read or written. What was sent
            before is recorded when the journal can still be written.
    """
    started = time.monotonic()
    now = pd.Timestamp(clock(), unit="s", tz="UTC")
    if records is None:
        records = journal.read(since=now - pd.Timedelta(days=2))
    todo, waiting = pending(records, channels, now, routes)
    report = DeliveryReport(waiting=waiting)
    claims = Claims(journal.layout.fs, journal.layout.root, journal.layout.location)
    rows: list[dict[str, Any]] = []
    for item in todo:
        left = budget - (time.monotonic() - started)
        if left <= 0:
            report.deferred += 1
            continue
        attempt = _claim(claims, item, lease)
        if attempt is None:
            report.elsewhere += 1
            continue
        outcome = item.channel.send(item.notice, timeout=left)
        delivery = _delivery(item, attempt, outcome, pd.Timestamp(clock(), unit="s", tz="UTC"))
        getattr(report, outcome.result).append(delivery)
        rows.append(_row(item, delivery, outcome))
    if before_record is not None and rows:
        before_record(len(rows))
    journal.append(rows, now=clock())
    try:  # once a UTC day; a store that cannot be pruned still delivers
        report.pruned = claims.prune() or 0
    except HistoryError as exc:
        report.prune_error = str(exc)
    return report


def _claim(claims: Claims, item: Pending, lease: float) -> int | None:
    """Claim the next attempt of ``item``; None when another collector holds it."""
    digest = claim_digest(item.notice.key, str(item.seq), item.channel.name)
    what = {"key": item.notice.key, "seq": item.seq, "channel": item.channel.name}
    attempt = item.attempts + 1
    for _ in range(_MAX_TAKEOVERS):
        if claims.claim(digest, attempt, what):
            return attempt
        age = claims.age(digest, attempt)
        if age is not None and age < lease:
            return None  # claimed moments ago: another collector is sending it
        attempt += 1  # its claimer died before recording: take the next attempt
    return None


def _delivery(item: Pending, attempt: int, outcome: Outcome, at: pd.Timestamp) -> Delivery:
    next_try = None
    if outcome.result == "failed":
        next_try = at + pd.Timedelta(seconds=backoff(attempt))
    return Delivery(
        key=item.notice.key,
        seq=item.seq,
        channel=item.channel.name,
        target=item.channel.describe(),
        attempt=attempt,
        outcome=outcome.result,
        message=outcome.detail,
        status=outcome.status,
        next_try=next_try,
    )


def _row(item: Pending, delivery: Delivery, outcome: Outcome) -> dict[str, Any]:
    n = item.notice
    return {
        "record": "delivery",
        "key": n.key,
        "seq": item.seq,
        "state": n.state,
        "at": n.at,
        "rule": n.rule,
        "index_id": n.index_id,
        "name": n.name,
        "field": n.field,
        "period": n.period,
        "channel": delivery.channel,
        "target": delivery.target,
        "attempt": delivery.attempt,
        "outcome": delivery.outcome,
        "status": delivery.status,
        "message": delivery.message,
        "next_try": delivery.next_try,
    }
