"""Old claims are pruned, once a day, and two collectors still send one notification per
incident (issue 25 leftover: claims were never pruned, one small file per send attempt)."""

from __future__ import annotations

import os
import pathlib
import time

import pandas as pd

from searchkit.alerts.claims import CLAIMS_FOLDER, RETAIN, Claims, claim_digest
from searchkit.alerts.delivery import deliver
from searchkit.alerts.journal import Journal, transition_row
from searchkit.alerts.watch import WINDOW
from tests.faults.harness import FaultServer, reply

from .test_delivery import Clock, hook, posted_keys, racing_collectors, transition

DAY = 86400.0


def aged(claims: Claims, digest: str, attempt: int, days: float) -> pathlib.Path:
    """Take a claim and make it ``days`` old (its file's time: what a claim's age is)."""
    assert claims.claim(digest, attempt, {"who": "earlier"}) is True
    path = pathlib.Path(claims.path(digest, attempt))
    then = time.time() - days * DAY
    os.utime(path, (then, then))
    return path


def test_claims_older_than_four_days_are_pruned_once_a_day(store):
    claims = Claims(store.filesystem, store.root, store.location)
    old, older = claim_digest("k-old", "1", "ops"), claim_digest("k-older", "2", "ops")
    gone = [aged(claims, old, 1, 4.5), aged(claims, old, 2, 4.2), aged(claims, older, 1, 30)]
    window = aged(claims, claim_digest("k-window", "1", "ops"), 1, 3.5)  # may still be pending
    fresh = aged(claims, claim_digest("k-now", "1", "ops"), 1, 0)

    assert claims.prune() == 3
    assert [p.exists() for p in gone] == [False, False, False]
    assert not pathlib.Path(claims.path(old, 1)).parent.exists()  # no empty folders left
    assert window.exists() and fresh.exists()
    assert claims.prune() is None  # done today, by this or another collector
    assert Claims(store.filesystem, store.root, store.location).prune() is None
    assert claims.prune(now=time.time() + DAY) == 1  # tomorrow: the 3.5-day claim is 4.5
    assert not window.exists() and fresh.exists()
    markers = sorted(p.name for p in pathlib.Path(store.root, CLAIMS_FOLDER).glob("*.marker"))
    assert len(markers) == 2 and markers[0].startswith("pruned-")


def test_a_claim_is_kept_while_its_transition_can_still_be_pending():
    # A round reads the journal from the start of the day WINDOW before it: a transition
    # recorded up to three days ago may be pending, and its claims are consulted.
    assert (WINDOW + pd.Timedelta(days=2)).total_seconds() <= RETAIN


def test_two_collectors_still_send_one_notification_per_incident_while_pruning(store):
    claims = Claims(store.filesystem, store.root, store.location)
    stale = [aged(claims, claim_digest(f"old-{n}", "1", "ops"), 1, 5) for n in range(3)]
    clock = Clock()
    rows = [transition_row(transition(key=f"k{n}"), 1) for n in range(5)]
    Journal(store).append(rows, now=clock())
    with FaultServer() as receiver:
        receiver.script("POST", then=reply(200))
        reports = racing_collectors(store, receiver, clock)
        again = deliver(Journal(store, collector="late"), [hook(receiver)], clock=clock)
        assert sorted(posted_keys(receiver)) == [(f"k{n}", "firing") for n in range(5)]

    assert sum(len(r.sent) for r in reports) == 5 and (again.sent, again.elsewhere) == ([], 0)
    assert sorted(r.pruned for r in reports) == [0, 0, 0, 3]  # one collector pruned
    assert not any(path.exists() for path in stale)
    taken = sorted(pathlib.Path(store.root, CLAIMS_FOLDER).glob("*/*.claim"))
    assert len(taken) == 5  # this round's claims stay
