"""backtest_alerts on a history whose breach instants are known to the second."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

import searchkit as sk
from tests.analytics_data import go_format

UTC = "UTC"
START = pd.Timestamp("2026-11-09", tz=UTC)  # a Monday


def raw_index(name: str, rates: list[float], *, queries: int = 100_000) -> dict:
    """Points every 5 minutes: day d at ``rates[d]`` operations per second all day."""
    points = []
    for day, rate in enumerate(rates):
        for minute in range(0, 1440, 5):
            when = (START + pd.Timedelta(days=day, minutes=minute)).to_pydatetime()
            points.append({"x": go_format(when.astimezone(dt.timezone.utc)), "y": rate})
    return {
        "id": f"id-{name}",
        "name": name,
        "max_daily_queries": queries,
        "max_daily_updates": 0,
        "throughput_vector": points,
    }


@pytest.fixture(scope="module")
def replayed():
    # Eight days of 86,400 operations, then a day at twice the rate: 100,000 (the limit)
    # is reached at 50,000 s, 13:53:20. Days 7 and 8 have a week before them.
    raw = [raw_index("steady", [1.0] * 8 + [2.0])]
    return sk.backtest_alerts(raw, every="10min")


def at(text: str) -> pd.Timestamp:
    return pd.Timestamp(text, tz=UTC)


def test_each_rule_fires_when_its_figure_reaches_the_threshold(replayed):
    incidents = replayed.incidents
    breach_day = incidents[incidents["day"] == at("2026-11-17")].set_index("rule")
    assert breach_day["breached_at"].eq(at("2026-11-17 13:53:20")).all()
    # Used so far is 7,200 an hour: 50% at 06:56:40, seen at 07:00; 90% at 12:30 sharp.
    assert breach_day["fired_at"].to_dict() == {
        "forecast": at("2026-11-17 00:10"),
        "used >= 50%": at("2026-11-17 07:00"),
        "used >= 70%": at("2026-11-17 09:50"),
        "used >= 80%": at("2026-11-17 11:10"),
        "used >= 90%": at("2026-11-17 12:30"),
    }
    assert breach_day.loc["used >= 90%", "lead_time"] == pd.Timedelta("1h23min20s")
    assert breach_day.loc["forecast", "lead_time"] == pd.Timedelta("13h43min20s")


def test_a_day_that_stays_under_is_a_false_alert_for_the_rules_it_crossed(replayed):
    incidents = replayed.incidents
    calm = incidents[incidents["day"] == at("2026-11-16")]
    # 86,400 of 100,000 used: 50, 70 and 80% were crossed, 90% and the forecast were not.
    assert calm["rule"].tolist() == ["used >= 50%", "used >= 70%", "used >= 80%"]
    assert calm["breached_at"].isna().all()
    assert calm["lead_time"].isna().all()


def test_the_summary_counts_per_rule(replayed):
    summary = replayed.summary
    assert summary.index.tolist() == [
        "forecast",
        "used >= 50%",
        "used >= 70%",
        "used >= 80%",
        "used >= 90%",
    ]
    assert summary["index_days"].tolist() == [2] * 5
    assert summary["breaches"].tolist() == [1] * 5
    assert summary["alerted"].tolist() == [1] * 5
    assert summary["missed"].tolist() == [0] * 5
    assert summary["false_alerts"].tolist() == [0, 1, 1, 1, 0]
    assert summary["false_per_index_week"].tolist() == [0.0, 3.5, 3.5, 3.5, 0.0]
    assert summary["repeats"].tolist() == [0] * 5
    assert summary.loc["used >= 50%", "lead_time_median"] == pd.Timedelta("6h53min20s")


def test_a_breach_crossed_between_two_evaluations_is_missed_by_a_rule_at_the_limit():
    raw = [raw_index("steady", [1.0] * 8 + [2.0])]
    rule = sk.AlertRule(name="at the limit", basis="used", at=1.0)
    result = sk.backtest_alerts(raw, rules=[rule], every="10min")
    row = result.incidents[result.incidents["rule"] == "at the limit"].iloc[0]
    assert (row["fired_at"] is pd.NaT, row["breached_at"]) == (True, at("2026-11-17 13:53:20"))
    assert result.summary.loc["at the limit", ["alerted", "missed"]].tolist() == [0, 1]


def test_the_incidents_frame_has_the_documented_columns(replayed):
    assert replayed.incidents.columns.tolist() == [
        "index_id", "name", "field", "day", "rule", "limit", "fired_at", "breached_at",
        "lead_time", "resolved_at", "fired",
    ]  # fmt: skip
    assert replayed.incidents["field"].unique().tolist() == ["max_daily_queries+max_daily_updates"]
    assert np.isin(replayed.incidents["index_id"], ["id-steady"]).all()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"every": "10s"}, "every must be from 1 minute to 6 hours, got '10s'"),
        ({"every": "soon"}, "every must be a duration such as \"10min\", got 'soon'"),
        ({"rules": ["forecast"]}, "rules must be AlertRule objects, got 'forecast'"),
        ({"limit": "most"}, 'limit must be None, "median" or a number'),
    ],
)
def test_bad_arguments_are_refused(kwargs, message):
    with pytest.raises(sk.ValidationError) as caught:
        sk.backtest_alerts([raw_index("a", [1.0] * 3)], **kwargs)
    assert message in str(caught.value)


def test_hit_rates_are_the_share_of_right_breach_calls_per_index():
    from searchkit.alerts.backtest import hit_rates

    # Day 7 stays under 100,000 and day 8 goes over: the forecasts made at 03:00, 06:00,
    # ... 21:00 of both days call each right.
    raw = [raw_index("steady", [1.0] * 8 + [2.0])]
    assert hit_rates(raw) == {"id-steady": 1.0}
    assert hit_rates(raw, now="2026-11-17 12:00") == {"id-steady": 1.0}
    assert hit_rates(raw, index_ids=["id-other"]) == {}


def test_a_history_replays_the_same_incidents_as_the_points_it_was_collected_from(tmp_path):
    from searchkit.emulator import Emulator

    raw = [raw_index("steady", [1.0] * 8 + [2.0])]
    hist = sk.History(str(tmp_path / "h"))
    with Emulator() as emu, emu.client() as client:
        hist.collect(client, indexes=raw, now=emu.now())
    from_history = sk.backtest_alerts(hist, every="10min")
    from_points = sk.backtest_alerts(raw, every="10min")
    pd.testing.assert_frame_equal(from_history.incidents, from_points.incidents)
    pd.testing.assert_frame_equal(from_history.summary, from_points.summary)


def test_a_rule_is_replayed_only_on_the_indexes_its_glob_watches():
    # examples/alerts.toml's "80% used" watches prod-*: the replay judged it on every index.
    raw = [raw_index(name, [1.0] * 8 + [2.0]) for name in ("prod-search", "staging-search")]
    rule = sk.AlertRule(name="80% used", basis="used", at=0.8, indexes="prod-*")
    replayed = sk.backtest_alerts(raw, rules=[rule], every="10min")
    watched = replayed.incidents[replayed.incidents["rule"] == "80% used"]
    assert watched["name"].tolist() == ["prod-search", "prod-search"]
    assert watched["breached_at"].dropna().tolist() == [at("2026-11-17 13:53:20")]
    row = replayed.summary.loc["80% used"]
    assert (row["index_days"], row["breaches"], row["alerted"], row["false_alerts"]) == (2, 1, 1, 1)
    # The threshold rules beside it watch every index, as before.
    assert replayed.summary.loc["used >= 80%", "index_days"] == 4


def test_a_rule_whose_glob_matches_no_index_is_refused_naming_it():
    rule = sk.AlertRule(name="prod", indexes="prod-*")
    with pytest.raises(sk.ValidationError, match=r"rule 'prod': indexes='prod-\*' matches none"):
        sk.backtest_alerts([raw_index("staging", [1.0] * 9)], rules=[rule])
