"""A day of alert rounds on the demo emulator under a fake clock: fired early, breached once.

The emulator's clock stands still and is moved by the test; each hour the history is
collected and :func:`alert_round` runs, as ``searchkit collect --alerts`` does, and the
messages reach a real HTTP receiver on loopback.
"""

from __future__ import annotations

import datetime as dt
import json

import pandas as pd
import pytest

from searchkit.alerts.channels import WebhookChannel
from searchkit.alerts.config import AlertsConfig
from searchkit.alerts.journal import Journal
from searchkit.alerts.rules import AlertRule
from searchkit.alerts.watch import alert_round, states_of
from searchkit.emulator import Emulator
from searchkit.history.usage_history import History
from tests.faults.harness import FaultServer, reply

WEEK_START = dt.datetime(2026, 11, 11, tzinfo=dt.timezone.utc)
DAY = pd.Timestamp("2026-11-21", tz="UTC")


#: The demo set, a day of points a list, on a clock the tests move.
EMULATOR = {"demo": True, "seed": 2026, "clock": WEEK_START, "window_minutes": 1440}
pytestmark = pytest.mark.emulator(**EMULATOR)  # ``emulator`` (tests/conftest.py)


def ten_days(folder) -> None:
    """Collect the ten days after WEEK_START, once a day, into ``folder``."""
    with Emulator(**EMULATOR) as emu, emu.client() as client:
        history = History(folder)
        for _ in range(10):
            emu.advance(86_400)
            history.collect(client, now=emu.now())


@pytest.fixture
def week(tmp_path, made_once, emulator, client):
    """The demo set with ten stored days (``made_once``); the clock at 2026-11-21 00:00 UTC."""
    history = History(made_once("ten-days", ten_days, tmp_path / "store"))
    emulator.advance(10 * 86_400)  # where the ten collects left the clock
    return emulator, client, history


def alerts(receiver: FaultServer) -> AlertsConfig:
    rule = AlertRule(name="forecast", indexes="code-snippets")
    return AlertsConfig(rules=(rule,), channels=(WebhookChannel(f"{receiver.url}/hook"),))


def posts(receiver: FaultServer) -> list[tuple[str, str, str, str]]:
    out = []
    for seen in receiver.seen("POST"):
        alert = json.loads(seen.body)["alerts"][0]
        notes = alert["annotations"]
        out.append((alert["fingerprint"], notes["state"], notes["hit_at"], notes["summary"]))
    return out


# Slow (6-7 s of CPU alone: seventeen hourly collects of a day of minutes, each with its
# alert round): `make test` runs it; the other tests here keep a round in the fast suite.
@pytest.mark.slow
def test_the_evening_index_fires_in_the_morning_and_breaches_once_at_the_crossing(week):
    emu, client, history = week
    summaries = []
    with FaultServer() as receiver:
        receiver.script("POST", then=reply(200))
        config = alerts(receiver)
        emu.advance(6 * 3600)
        for _ in range(17):  # 06:00 to 22:00, hourly
            now = pd.Timestamp(emu.now(), unit="s", tz="UTC")
            history.collect(client, now=now)
            report = alert_round(history, config, now=now, clock=emu.now)
            summaries.append(report.summary())
            emu.advance(3600)

    assert summaries[0] == "alerts: new 1 firing; 1 firing now; sent 1, failed 0"
    # code-snippets crosses its limit at 20:50 (the day's points, each value x 60 s)
    points = history.throughput(start=DAY, names=["code-snippets"]).sort_values("time")
    crossed = points["time"][(points["value"] * 60).cumsum().to_numpy() >= 20_000].iloc[0]
    assert crossed.floor("min") == pd.Timestamp("2026-11-21 20:50", tz="UTC")
    assert summaries[1:15] == ["alerts: no change; 1 firing now; sent 0, failed 0"] * 14
    assert summaries[15] == "alerts: new 1 breached; 0 firing now; sent 1, failed 0"  # 21:00
    assert summaries[16] == "alerts: no change; 0 firing now; sent 0, failed 0"
    [(key1, *first), (key2, *second)] = posts(receiver)
    body = json.loads(receiver.seen("POST")[0].body)
    index_id = body["commonLabels"]["index_id"]
    assert body["commonAnnotations"]["description"].splitlines() == [
        "[FIRING] code-snippets max_daily_queries+max_daily_updates: expected to hit the "
        "limit at 20:44 UTC",
        f"Index code-snippets ({index_id}), limit max_daily_queries+max_daily_updates: used "
        "6,760 of 20,000 (34%).",
        "Expected to hit the limit at 2026-11-21 20:44 UTC (band 20:16 UTC to 21:07 UTC).",
        "Data collected at 2026-11-21 05:59 UTC.",
        "Backtest: its forecasts called the day right 100% of the time.",
        "Projected low 24,680 >= 100% of the limit 20,000.",
        f"Rule forecast; incident {key1}.",
    ]
    assert key1 == key2  # one incident, the same key in both messages
    label = "code-snippets max_daily_queries+max_daily_updates"
    assert first == [
        "firing",
        "2026-11-21 20:44 UTC",
        f"[FIRING] {label}: expected to hit the limit at 20:44 UTC",
    ]
    assert second == [
        "breached",
        "2026-11-21 20:50 UTC",
        f"[BREACHED] {label}: the limit was hit at 20:50 UTC",
    ]


def test_a_restarted_collector_goes_on_from_the_recorded_state(week, tmp_path):
    emu, client, history = week
    with FaultServer() as receiver:
        receiver.script("POST", then=reply(200))
        config = alerts(receiver)
        emu.advance(6 * 3600)
        now = pd.Timestamp(emu.now(), unit="s", tz="UTC")
        history.collect(client, now=now)
        alert_round(history, config, now=now, clock=emu.now, journal=Journal(history))
        # A new process: a new journal, the same store, a later instant.
        emu.advance(600)
        later = pd.Timestamp(emu.now(), unit="s", tz="UTC")
        again = alert_round(history, config, now=later, clock=emu.now, journal=Journal(history))

    assert again.transitions == ()
    assert len(receiver.seen("POST")) == 1
    states = states_of(Journal(history).read())
    assert [(s.name, s.state, s.fired_at) for s in states.values()] == [
        ("code-snippets", "firing", DAY + pd.Timedelta(hours=6))
    ]


def test_a_stalled_collection_raises_its_own_incident_and_resolves_when_it_resumes(week):
    emu, client, history = week
    with FaultServer() as receiver:
        receiver.script("POST", then=reply(200))
        config = alerts(receiver)
        emu.advance(6 * 3600)
        history.collect(client, now=emu.now())
        alert_round(history, config, now=pd.Timestamp(emu.now(), unit="s", tz="UTC"))
        emu.advance(3 * 3600)  # three hours without a collect
        stalled = alert_round(history, config, now=pd.Timestamp(emu.now(), unit="s", tz="UTC"))
        history.collect(client, now=emu.now())
        resumed = alert_round(history, config, now=pd.Timestamp(emu.now(), unit="s", tz="UTC"))

    assert [(t["rule"], t["state"]) for t in stalled.transitions] == [
        ("collection stalled", "firing")
    ]
    assert [(t["rule"], t["state"]) for t in resumed.transitions] == [
        ("collection stalled", "resolved")
    ]
    bodies = [json.loads(s.body) for s in receiver.seen("POST")]
    stall = [b for b in bodies if b["commonLabels"]["alertname"] == "SearchkitCollector"]
    assert [b["status"] for b in stall] == ["firing", "resolved"]
    lines = stall[0]["commonAnnotations"]["description"].splitlines()
    assert lines[:2] == ["[FIRING] collection stalled", "Data collected at 2026-11-21 05:59 UTC."]
    assert lines[2].startswith("Nothing stored since 2026-11-21 05:59 UTC (over ")
    assert lines[3:] == [
        f"Rule collection stalled; incident {stall[0]['alerts'][0]['fingerprint']}."
    ]


def test_the_alerts_command_shows_the_incidents_and_the_backtest(week, tmp_path, capsys):
    from searchkit.cli.main import main

    emu, client, history = week
    rules = tmp_path / "alerts.toml"
    rules.write_text('[[rule]]\nname = "forecast"\nindexes = "code-snippets"\n')
    config = AlertsConfig(rules=(AlertRule(name="forecast", indexes="code-snippets"),), channels=())
    emu.advance(6 * 3600)
    now = pd.Timestamp(emu.now(), unit="s", tz="UTC")
    history.collect(client, now=now)
    told = alert_round(history, config, now=now, clock=emu.now).transitions

    status = main(["alerts", "--store", history.location, "--rules", str(rules), "--backtest"])

    out = capsys.readouterr().out.splitlines()
    assert status == 0
    assert out[:2] == [
        "1 incident(s) firing or breached:",
        "  FIRING    code-snippets max_daily_queries+max_daily_updates (rule forecast) since "
        f"2026-11-21 06:00 UTC; key {told[0]['key']}",
    ]
    assert out[3].startswith("alert backtest (")
    assert [line.split()[0] for line in out[6:]] == [
        "forecast",
        "used",
        "used",
        "used",
        "used",
    ]
