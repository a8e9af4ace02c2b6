"""The incident state machine, driven through evaluate() with forecast rows."""

from __future__ import annotations

import pandas as pd
import pytest

import searchkit as sk
from searchkit.alerts.incidents import STALLED, IncidentState, evaluate, incident_key
from searchkit.alerts.rules import DEFAULT_RULE

UTC = "UTC"
LABEL = "max_daily_queries+max_daily_updates"
LIMIT = 1_000.0


def at(text: str) -> pd.Timestamp:
    return pd.Timestamp(text, tz=UTC)


def row(now, *, used=100.0, low=None, mid=None, high=None, hit_at=None, method="profile",
        index_id="id-a", name="docs", limit=LIMIT):  # fmt: skip
    """One forecast_limits row as of ``now`` (the band defaults to the centre)."""
    now = at(now)
    mid = used if mid is None else mid
    return {
        "index_id": index_id,
        "name": name,
        "field": LABEL,
        "period": now.normalize(),
        "reset": now.normalize() + pd.Timedelta(days=1),
        "used": used,
        "projected": mid if method else float("nan"),
        "projected_low": (mid if low is None else low) if method else float("nan"),
        "projected_high": (mid if high is None else high) if method else float("nan"),
        "limit": limit,
        "hit_at": pd.NaT if hit_at is None else at(hit_at),
        "hit_at_earliest": pd.NaT,
        "hit_at_latest": pd.NaT,
        "method": method,
        "as_of": now,
    }


def replay(rules, steps, *, previous=None, stalled_after="1h"):
    """Evaluate at each (now, rows, collected_at); return [(state, rule, at)], states."""
    states = dict(previous or {})
    said = []
    for now, rows, collected in steps:
        frame = pd.DataFrame(rows)
        told, states = evaluate(
            rules, frame, now, states, collected_at=collected, stalled_after=stalled_after
        )
        said += [(t.state, t.rule, t.at.strftime("%d %H:%M")) for t in told]
    return said, states


def test_a_forecast_wobbling_around_the_threshold_fires_once():
    rule = sk.AlertRule(name="mid", band="projected", hold="1h")
    wobble = [1_010, 990, 1_020, 980, 1_005, 995, 1_001]
    steps = [
        (
            at("2026-11-20 08:00") + pd.Timedelta(minutes=10 * k),
            [row("2026-11-20 08:00", mid=v)],
            None,
        )
        for k, v in enumerate(wobble)
    ]
    said, states = replay([rule], steps)
    assert said == [("firing", "mid", "20 08:00")]
    (state,) = states.values()
    assert (state.state, state.fired, state.under_since) == ("firing", 1, None)


def test_the_default_rule_resolves_only_when_the_high_end_stays_under_for_4_hours():
    def step(when, low, high):
        return (
            at(f"2026-11-20 {when}"),
            [row(f"2026-11-20 {when}", low=low, mid=low, high=high)],
            None,
        )

    steps = [
        step("06:00", 1_050, 1_400),  # the low end reaches the limit: firing
        step("07:00", 950, 1_100),  # back under, but the high end is not: still firing
        step("08:00", 800, 990),  # the high end under: the hold starts
        step("11:00", 800, 1_010),  # over again before 4 hours: the hold restarts
        step("12:00", 700, 900),
        step("15:50", 700, 900),  # 3 h 50 min under
        step("16:00", 700, 900),  # 4 hours under: resolved
        step("17:00", 1_100, 1_300),  # fires again the same day: a repeat, counted
    ]
    said, states = replay([DEFAULT_RULE], steps)
    assert said == [
        ("firing", "forecast", "20 06:00"),
        ("resolved", "forecast", "20 16:00"),
        ("firing", "forecast", "20 17:00"),
    ]
    (state,) = states.values()
    assert (state.fired, state.fired_at, state.episode_at, state.resolved_at) == (
        2, at("2026-11-20 06:00"), at("2026-11-20 17:00"), at("2026-11-20 16:00"),
    )  # fmt: skip


def test_a_pending_rule_fires_only_once_the_condition_held_long_enough():
    rule = sk.AlertRule(name="slow", band="projected", pending="20min")
    figures = (
        ("00", 1_100),
        ("10", 1_100),
        ("20", 900),
        ("30", 1_100),
        ("40", 1_100),
        ("50", 1_100),
    )
    steps = [
        (at(f"2026-11-20 09:{m}"), [row(f"2026-11-20 09:{m}", mid=v)], None) for m, v in figures
    ]
    said, _ = replay([rule], steps)
    assert said == [("firing", "slow", "20 09:50")]


def test_the_limit_hit_is_breached_at_the_crossing_and_stays_so():
    steps = [
        (at("2026-11-20 09:00"), [row("2026-11-20 09:00", used=600, low=1_100, high=1_300)], None),
        (
            at("2026-11-20 15:10"),
            [
                row(
                    "2026-11-20 15:10",
                    used=1_020,
                    low=1_500,
                    high=1_600,
                    hit_at="2026-11-20 15:04:31",
                )
            ],
            None,
        ),
        (
            at("2026-11-20 22:00"),
            [
                row(
                    "2026-11-20 22:00",
                    used=1_400,
                    low=1_400,
                    high=1_400,
                    hit_at="2026-11-20 15:04:31",
                )
            ],
            None,
        ),
    ]
    rules = [DEFAULT_RULE, sk.AlertRule(basis="used", at=0.9)]
    said, states = replay(rules, steps)
    assert said == [
        ("firing", "forecast", "20 09:00"),
        ("breached", "forecast", "20 15:10"),
        ("breached", "used >= 90%", "20 15:10"),  # it never fired: 600 then past the limit
    ]
    key = incident_key("forecast", "id-a", LABEL, at("2026-11-20"))
    assert states[key].breached_at == at("2026-11-20 15:04:31")
    assert states[key].state == "breached"


def test_a_breach_transition_carries_what_a_message_needs():
    rows = [row("2026-11-20 15:10", used=1_020, low=1_500, mid=1_550, high=1_600,
                hit_at="2026-11-20 15:04:31")]  # fmt: skip
    told, _ = evaluate([DEFAULT_RULE], pd.DataFrame(rows), at("2026-11-20 15:10"), {},
                       collected_at=at("2026-11-20 15:09"), hit_rates={"id-a": 0.93})  # fmt: skip
    (t,) = told
    assert (t.state, t.index_id, t.name, t.field, t.limit, t.used) == (
        "breached", "id-a", "docs", LABEL, 1_000.0, 1_020.0,
    )  # fmt: skip
    assert (t.projected_low, t.projected, t.projected_high) == (1_500.0, 1_550.0, 1_600.0)
    assert (t.breached_at, t.collected_at, t.hit_rate) == (
        at("2026-11-20 15:04:31"), at("2026-11-20 15:09"), 0.93,
    )  # fmt: skip
    assert t.key == incident_key("forecast", "id-a", LABEL, at("2026-11-20"))
    assert t.reason == "the limit of 1,000 was reached (1,020 used)"


def test_a_new_day_is_a_new_incident_and_the_old_one_closes_under_the_limit():
    day1 = at("2026-11-20 06:00")
    _, states = replay(
        [DEFAULT_RULE], [(day1, [row("2026-11-20 06:00", low=1_100, high=1_300)], None)]
    )
    # The next morning: yesterday's last instant (what observe() adds) ended at 990,
    # the data reach past midnight; today fires again under a new key.
    yesterday = row("2026-11-20 23:59:59.999999999", used=990, low=990, high=990)
    today = row("2026-11-21 06:00", low=1_200, high=1_300)
    said, states = replay(
        [DEFAULT_RULE],
        [(at("2026-11-21 06:00"), [today, yesterday], at("2026-11-21 05:59"))],
        previous=states,
    )
    assert said == [("firing", "forecast", "21 06:00"), ("resolved", "forecast", "21 06:00")]
    assert list(states) == [incident_key("forecast", "id-a", LABEL, at("2026-11-21"))]


def test_stale_data_never_resolves_and_a_stalled_collector_raises_its_own_incident():
    first = at("2026-11-20 06:00")
    _, states = replay(
        [DEFAULT_RULE], [(first, [row("2026-11-20 06:00", low=1_100, high=1_300)], first)]
    )
    # The collector stores nothing from 06:00: the forecast of a stale index is not made.
    stale = [
        (at(f"2026-11-20 {h}:00"), [row(f"2026-11-20 {h}:00", method="")], first)
        for h in ("06", "07", "08", "11")
    ]
    said, states = replay([DEFAULT_RULE], stale, previous=states)
    assert said == [("firing", STALLED, "20 08:00")]  # over an hour without a new point
    forecast = [s for s in states.values() if s.rule == "forecast"]
    assert [s.state for s in forecast] == ["firing"]
    # Collection resumes at 11:30: the stalled incident resolves; the forecast is back
    # under, the hold starts now, not while the data were stale.
    fresh = at("2026-11-20 11:30")
    said, states = replay(
        [DEFAULT_RULE],
        [(fresh, [row("2026-11-20 11:30", low=500, high=800)], fresh)],
        previous=states,
    )
    assert said == [("resolved", STALLED, "20 11:30")]
    (state,) = states.values()
    assert (state.state, state.under_since) == ("firing", fresh)


def test_the_stalled_incident_fires_once_per_stall():
    collected = at("2026-11-20 06:00")
    steps = [(at(f"2026-11-20 {t}"), [], collected) for t in ("06:50", "07:10", "09:00")]
    said, states = replay([DEFAULT_RULE], steps)
    assert said == [("firing", STALLED, "20 07:10")]
    (state,) = states.values()
    assert state.key == incident_key(STALLED, "", "", collected)


def test_a_firing_incident_stays_open_when_the_data_do_not_reach_the_period_end():
    _, states = replay(
        [DEFAULT_RULE], [(at("2026-11-20 20:00"), [row("2026-11-20 20:00", low=1_100)], None)]
    )
    yesterday = row("2026-11-20 23:59:59.999999999", used=990, low=990, high=990)
    said, states = replay(
        [DEFAULT_RULE],
        [(at("2026-11-21 00:30"), [yesterday], at("2026-11-20 23:40"))],
        previous=states,
        stalled_after="2h",
    )
    assert said == []
    assert [s.state for s in states.values()] == ["firing"]


def test_states_survive_a_round_trip_through_records():
    _, states = replay(
        [DEFAULT_RULE], [(at("2026-11-20 06:00"), [row("2026-11-20 06:00", low=1_100)], None)]
    )
    (state,) = states.values()
    assert IncidentState.from_record(state.to_record()) == state


def test_a_rule_whose_glob_matches_no_index_is_refused():
    rule = sk.AlertRule(name="prod", indexes="prod-*")
    with pytest.raises(sk.ValidationError, match=r"rule 'prod': indexes='prod-\*' matches none"):
        evaluate([rule], pd.DataFrame([row("2026-11-20 06:00")]), at("2026-11-20 06:00"), {})


def test_the_stalled_incident_says_how_long_in_words():
    collected = at("2026-11-20 06:00")
    told, _ = evaluate(
        [DEFAULT_RULE],
        pd.DataFrame([row("2026-11-20 08:00", method="")]),
        at("2026-11-20 08:00"),
        {},
        collected_at=collected,
        stalled_after="90min",
    )
    assert [t.reason for t in told] == [
        "nothing stored since 2026-11-20 06:00 UTC (over 1 h 30 min)"
    ]  # was "(over 0 days 01:30:00)"
