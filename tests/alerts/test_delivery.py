"""Delivery through the journal: nothing lost, nothing known sent repeated, a bounded round.

The receiver is a real HTTP server on loopback (the fault harness); the journal is a real
store's ``alerts/`` dataset; the delivery clock is driven by the test (no sleeping).
"""

from __future__ import annotations

import json
import re
import threading

import pandas as pd

from searchkit.alerts.channels import LogChannel, WebhookChannel
from searchkit.alerts.claims import Claims, claim_digest
from searchkit.alerts.delivery import backoff, deliver
from searchkit.alerts.journal import Journal, transition_row
from tests.faults.harness import FaultServer, drop, hang, reply

from .conftest import HOOK_TOKEN

T0 = pd.Timestamp("2026-11-20 09:10", tz="UTC")


def transition(key: str = "a1b2c3d4e5f60718", state: str = "firing", **changes) -> dict:
    """A Transition.to_record() of the demo's evening index."""
    record = {
        "key": key,
        "state": state,
        "at": T0,
        "rule": "forecast >= 100%",
        "basis": "forecast",
        "threshold": 1.0,
        "band": "projected",
        "index_id": "6f1c-evening",
        "name": "code-snippets",
        "field": "max_daily_queries",
        "period_start": pd.Timestamp("2026-11-20", tz="UTC"),
        "limit": 1_000_000.0,
        "used": 612_000.0,
        "projected": 1_180_000.0,
        "projected_low": 1_050_000.0,
        "projected_high": 1_320_000.0,
        "hit_at": pd.Timestamp("2026-11-20 16:40", tz="UTC"),
        "hit_at_earliest": pd.Timestamp("2026-11-20 15:50", tz="UTC"),
        "hit_at_latest": pd.Timestamp("2026-11-20 17:30", tz="UTC"),
        "breached_at": None,
        "fired_at": T0,
        "collected_at": T0,
        "hit_rate": 0.93,
        "reason": "projected 1,180,000 >= 100% of the limit 1,000,000",
    }
    record.update(changes)
    return record


def plain(frame: pd.DataFrame, columns: list[str]) -> list[list[object]]:
    """Rows of ``columns`` as plain values: missing as None, whole numbers as int."""
    out = []
    for row in frame[columns].itertuples(index=False):
        out.append(
            [
                None if pd.isna(v) else int(v) if isinstance(v, float) and v.is_integer() else v
                for v in row
            ]
        )
    return out


class Clock:
    """The delivery's clock, moved by the test."""

    def __init__(self, start: pd.Timestamp = T0) -> None:
        self.now = start.value / 1e9

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def hook(server: FaultServer, name: str = "ops") -> WebhookChannel:
    return WebhookChannel(f"{server.url}/hook/{HOOK_TOKEN}", name=name)


def posted_keys(server: FaultServer) -> list[tuple[str, str]]:
    out = []
    for seen in server.seen("POST"):
        alert = json.loads(seen.body)["alerts"][0]
        out.append((alert["fingerprint"], alert["annotations"]["state"]))
    return out


def test_a_recorded_transition_is_sent_once_and_recorded_as_sent(store, server):
    server.script("POST", then=reply(200))
    journal = Journal(store, collector="c1")
    clock = Clock()
    journal.append([transition_row(transition(), 1)], now=clock())

    first = deliver(journal, [hook(server)], clock=clock)
    clock.advance(600)
    second = deliver(journal, [hook(server)], clock=clock)

    assert [(d.key, d.seq, d.channel, d.attempt, d.outcome) for d in first.sent] == [
        ("a1b2c3d4e5f60718", 1, "ops", 1, "sent")
    ]
    assert (second.sent, second.failed, second.waiting) == ([], [], 0)
    assert posted_keys(server) == [("a1b2c3d4e5f60718", "firing")]
    rows = plain(
        journal.read(), ["record", "key", "seq", "channel", "attempt", "outcome", "status"]
    )
    assert rows == [
        ["transition", "a1b2c3d4e5f60718", 1, None, None, None, None],
        ["delivery", "a1b2c3d4e5f60718", 1, "ops", 1, "sent", 200],
    ]


def test_a_receiver_that_is_down_is_retried_with_backoff_in_later_rounds(store, server):
    server.script("POST", reply(500), drop(), then=reply(200))
    journal = Journal(store)
    clock = Clock()
    journal.append([transition_row(transition(), 1)], now=clock())

    outcomes = []
    for minutes in (0, 0.5, 1, 1.5, 3, 3.5):
        clock.now = T0.value / 1e9 + minutes * 60
        report = deliver(journal, [hook(server)], clock=clock)
        outcomes.append(
            [d.outcome for d in report.sent + report.failed] or f"waiting {report.waiting}"
        )

    # 500 at 0 min: retry after 1 min; dropped at 1 min: retry after 2 more; sent at 3 min.
    assert outcomes == [["failed"], "waiting 1", ["failed"], "waiting 1", ["sent"], "waiting 0"]
    assert server.count("POST") == 3
    failed = journal.read().query("outcome == 'failed'")
    assert failed["next_try"].tolist() == [
        T0 + pd.Timedelta(minutes=1),
        T0 + pd.Timedelta(minutes=3),
    ]
    assert failed["message"].tolist() == [
        "HTTP 500: the receiver could not take it now",
        "the connection was dropped before an answer",
    ]
    assert [backoff(n) for n in (1, 2, 3)] == [60.0, 120.0, 240.0]


def test_a_4xx_is_recorded_misconfigured_and_never_retried(store, server):
    server.script("POST", then=reply(404, "no such hook"))
    journal = Journal(store)
    clock = Clock()
    journal.append([transition_row(transition(), 1)], now=clock())

    first = deliver(journal, [hook(server)], clock=clock)
    clock.advance(7200)
    later = deliver(journal, [hook(server)], clock=clock)

    assert [(d.channel, d.message) for d in first.misconfigured] == [
        (
            "ops",
            "HTTP 404: the receiver refused the message; check the URL and the format "
            "(not retried)",
        )
    ]
    assert first.lines() == [
        "channel ops is misconfigured: HTTP 404: the receiver refused the message; check "
        "the URL and the format (not retried) (a1b2c3d4e5f60718 #1 not sent, not retried)"
    ]
    assert (later.sent, later.failed, later.misconfigured) == ([], [], [])
    assert server.count("POST") == 1


def test_a_hanging_receiver_costs_the_round_its_budget_and_no_more_attempts(store, server):
    server.script("POST", then=hang())
    journal = Journal(store)
    clock = Clock()
    rows = [transition_row(transition(key=f"k{n}"), 1) for n in range(3)]
    journal.append(rows, now=clock())

    report = deliver(journal, [hook(server)], budget=0.5, clock=clock)

    # The first send waits out the whole budget; the other two wait for the next round.
    assert [d.key for d in report.failed] == ["k0"]
    assert re.fullmatch(r"no answer within 0\.[0-5] s", report.failed[0].message)
    assert report.deferred == 2
    assert report.lines()[-1] == "2 notification(s) left for the next round (budget spent)"
    assert server.count("POST") == 1


def test_a_channel_down_does_not_hold_back_another(store, server):
    server.script("POST", then=reply(503))
    journal = Journal(store)
    clock = Clock()
    journal.append([transition_row(transition(), 1)], now=clock())
    report = deliver(journal, [hook(server), LogChannel(name="log")], clock=clock)
    assert [(d.channel, d.outcome) for d in report.failed + report.sent] == [
        ("ops", "failed"),
        ("log", "sent"),
    ]


def test_an_incident_s_transitions_reach_a_channel_in_order(store, server):
    server.script("POST", reply(500), then=reply(200))
    journal = Journal(store)
    clock = Clock()
    journal.append(
        [
            transition_row(transition(), 1),
            transition_row(transition(state="breached", at=T0 + pd.Timedelta(hours=7)), 2),
        ],
        now=clock(),
    )
    first = deliver(journal, [hook(server)], clock=clock)
    clock.advance(60)
    second = deliver(journal, [hook(server)], clock=clock)
    clock.advance(60)
    third = deliver(journal, [hook(server)], clock=clock)

    assert [(d.seq, d.outcome) for d in first.failed + first.sent] == [(1, "failed")]
    assert [(d.seq, d.outcome) for d in second.sent] == [(1, "sent")]
    assert [(d.seq, d.outcome) for d in third.sent] == [(2, "sent")]
    assert posted_keys(server) == [
        ("a1b2c3d4e5f60718", "firing"),
        ("a1b2c3d4e5f60718", "firing"),
        ("a1b2c3d4e5f60718", "breached"),
    ]


def test_a_transition_recorded_twice_by_two_collectors_is_sent_once(store, server):
    server.script("POST", then=reply(200))
    clock = Clock()
    Journal(store, collector="a").append([transition_row(transition(), 1)], now=clock())
    Journal(store, collector="b").append([transition_row(transition(), 1)], now=clock())
    deliver(Journal(store), [hook(server)], clock=clock)
    assert posted_keys(server) == [("a1b2c3d4e5f60718", "firing")]


def racing_collectors(store, server: FaultServer, clock: Clock, count: int = 4) -> list:
    """``count`` collectors (threads) that each read the journal, then all deliver at once."""
    start = threading.Barrier(count)
    reports = []

    def collector(name: str) -> None:
        journal = Journal(store, collector=name)
        records = journal.read()  # all read before any sends
        start.wait()
        reports.append(deliver(journal, [hook(server)], records=records, clock=clock))

    threads = [threading.Thread(target=collector, args=(f"c{n}",)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return reports


def test_two_collectors_delivering_at_once_send_one_notification(store, server):
    server.script("POST", then=reply(200))
    clock = Clock()
    rows = [transition_row(transition(key=f"k{n}"), 1) for n in range(5)]
    Journal(store).append(rows, now=clock())
    reports = racing_collectors(store, server, clock)

    assert sorted(posted_keys(server)) == [(f"k{n}", "firing") for n in range(5)]
    assert sum(len(r.sent) for r in reports) == 5
    assert sum(r.elsewhere for r in reports) == 15


def test_a_claim_whose_collector_died_is_taken_over_after_the_lease(store, server):
    server.script("POST", then=reply(200))
    journal = Journal(store)
    clock = Clock()
    journal.append([transition_row(transition(), 1)], now=clock())
    # A collector claimed attempt 1 and died before recording anything.
    claims = Claims(store.filesystem, store.root, store.location)
    digest = claim_digest("a1b2c3d4e5f60718", "1", "ops")
    assert claims.claim(digest, 1, {"who": "dead"}) is True

    young = deliver(journal, [hook(server)], lease=3600, clock=clock)
    old = deliver(journal, [hook(server)], lease=0, clock=clock)

    assert (young.elsewhere, young.sent) == (1, [])
    assert [(d.attempt, d.outcome) for d in old.sent] == [(2, "sent")]
    assert posted_keys(server) == [("a1b2c3d4e5f60718", "firing")]


def test_the_journal_is_a_parquet_dataset_duckdb_reads(store, server):
    import duckdb  # here, not while collecting: every worker imports every test module

    server.script("POST", then=reply(200))
    journal = Journal(store)
    clock = Clock()
    journal.append([transition_row(transition(), 1)], now=clock())
    deliver(journal, [hook(server)], clock=clock)

    files = f"{store.root}/alerts/day=*/*.parquet"
    rows = duckdb.execute(
        "SELECT record, key, state, channel, outcome, day FROM read_parquet(?, "
        "hive_partitioning = true) ORDER BY recorded_at, record DESC",
        [files],
    ).fetchall()
    day = pd.Timestamp("2026-11-20").date()
    assert [tuple(r[:5]) for r in rows] == [
        ("transition", "a1b2c3d4e5f60718", "firing", None, None),
        ("delivery", "a1b2c3d4e5f60718", "firing", "ops", "sent"),
    ]
    assert {str(r[5]) for r in rows} == {str(day)}


def test_a_rule_s_incidents_go_only_to_the_channels_it_names(store, server):
    server.script("POST", then=reply(200))
    journal = Journal(store)
    clock = Clock()
    journal.append([transition_row(transition(), 1)], now=clock())
    report = deliver(
        journal,
        [hook(server), LogChannel(name="log")],
        clock=clock,
        routes={"forecast >= 100%": {"log"}},
    )
    assert [(d.channel, d.outcome) for d in report.sent] == [("log", "sent")]
    assert server.count("POST") == 0
