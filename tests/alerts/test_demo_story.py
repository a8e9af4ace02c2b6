"""The demo's story, told by the alerts: warned in the morning, breached at the crossing."""

from __future__ import annotations

import datetime as dt

import pandas as pd

from searchkit.alerts.incidents import evaluate, incident_key, observe
from searchkit.alerts.rules import DEFAULT_RULE
from searchkit.emulator import Emulator

UTC = "UTC"
LABEL = "max_daily_queries+max_daily_updates"


def test_the_index_that_crosses_its_limit_this_evening_fires_in_the_morning():
    morning = dt.datetime(2026, 11, 20, 6, 0, tzinfo=dt.timezone.utc)
    rules = [DEFAULT_RULE]
    said, states = [], {}
    with Emulator(demo=True, seed=2026, clock=morning, window_minutes=7 * 1440) as emu:
        with emu.client() as client:
            for when in ("06:00", "12:00", "18:00", "22:00", "22:30"):
                now = pd.Timestamp(f"2026-11-20 {when}")
                emu.advance(now.timestamp() - emu.now())
                seen = observe(client.list_indexes(), rules, now=now, previous=states)
                told, states = evaluate(rules, seen, now, states)
                said += [(t.at, t.name, t.state, t.breached_at) for t in told]

    def at(text):
        return pd.Timestamp(f"2026-11-20 {text}", tz=UTC)

    assert said == [
        # support-tickets passes its limit at 06:43 (the demo's index "past it from the
        # morning on"): at 06:00 the forecast already warns of it ...
        (at("06:00"), "support-tickets", "firing", None),
        # code-snippets: even the low end of its forecast reaches the limit at 06:00 ...
        (at("06:00"), "code-snippets", "firing", None),
        # ... support-tickets is seen past it at the next round ...
        (at("12:00"), "support-tickets", "breached", at("06:43")),
        # ... and code-snippets stays firing until the point that crossed it (19:22).
        (at("22:00"), "code-snippets", "breached", at("19:22")),
    ]  # fmt: skip
    snippets = [s for s in states.values() if s.name == "code-snippets"]
    assert [(s.key, s.fired_at, s.fired) for s in snippets] == [
        (
            incident_key("forecast", snippets[0].index_id, LABEL, at("00:00")),
            at("06:00"),
            1,
        )
    ]
