"""Benchmark alert rules: what the default rule buys over "X% used", and their speed.

Accuracy (``backtest_alerts``' replay, every 10 minutes of every day with a week stored
before it, from only the data before each instant): the default rule beside the threshold
rules at 50, 70, 80 and 90% used, on

- the real traces of ``bench/forecast_traces/`` (sources in its README; every
  ``*.csv.gz`` there is replayed), each replayed alone, then pooled per family (Twitter:
  AAPL and GOOG) and all together;
- the synthetic traces of ``bench/forecast.py`` (cycles, bursts, level shifts, holidays,
  gaps),

each twice: with every trace's daily limit at its median daily total (half the days
breach) and at its 80th percentile (one in five). Per rule: breaches alerted before they
happened, missed, median and 10th-percentile lead time (hours), false alerts (days fired
that did not breach) per index-week, repeats (an incident fired twice). Then the verdict
of issue 25: the default against the *best threshold rule*, the one with the fewest false
alerts per index-week (ties: the most breaches alerted): it dominates when it has no more
false alerts, alerts at least as many breaches, with a longer median lead time, and 0
repeats. A line per threshold rule says whether the default dominates it too.

Speed: ``backtest_alerts`` of 1,000 indexes x 28 days at every="10min" (per-minute points,
the History written in collect's layout with its rollups, as ``bench/forecast.py``); the
evaluation step of a collect round (``observe`` + ``evaluate``: the forecast of the
watched limit and the incidents, default rule and the four threshold rules) on 1,000
indexes of the emulator, against the collect round itself, best of 3 each.

The whole alert round after a collect round (``collect_overhead``): reading the journal
back, evaluating, recording and delivering to a webhook on loopback and a log line, as
``searchkit collect --alerts`` does, against the collect round, best of 3.

Usage: .venv/bin/python bench/alerts.py [--speed | --accuracy | --round] [--indexes 1000]
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile
import time
from typing import Any

import numpy as np
import pandas as pd

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from figures import emit  # noqa: E402
from forecast import read_trace, synthetic_traces, trace_names  # noqa: E402

from searchkit.alerts import backtest as ab  # noqa: E402
from searchkit.alerts.rules import DEFAULT_RULE, THRESHOLD_RULES  # noqa: E402
from searchkit.analytics import bins as pb  # noqa: E402
from searchkit.analytics import profile as pf  # noqa: E402

EVERY = 600 * 10**9  # ten minutes, in nanoseconds
LEVELS = {"median": 0.5, "p80": 0.8}  # each trace's daily limit: a quantile of its day totals
FAMILIES = {  # trace name prefix -> family
    "nab_elb": "load balancer (NAB ELB)",
    "nab_nyc_taxi": "taxi passengers (NAB NYC)",
    "nab_twitter": "Twitter mentions (NAB AAPL, GOOG)",
    "taylor": "electricity demand (Taylor)",
    "uci_bike": "bike rentals (UCI DC)",
}
RULES = (DEFAULT_RULE, *THRESHOLD_RULES)


def family(name: str) -> str:
    for prefix, label in FAMILIES.items():
        if name.startswith(prefix):
            return label
    return name


def quantile_limit(bins: pb.Bins, q: float) -> np.ndarray:
    """Each index's ``q`` quantile of its complete days' totals."""
    complete = bins.cov.sum(axis=2) >= pf.COMPLETE_HOURS
    totals = np.where(complete, bins.ops.sum(axis=2), np.nan)
    return np.asarray(pf.quiet(np.nanquantile, totals, q, axis=1), np.float64)


def replay(tp: pd.DataFrame, q: float) -> ab.AlertBacktest:
    bins = pb.bins_from_frame(tp, "per_second")
    limit = quantile_limit(bins, q)
    return ab.replay_alerts(bins, list(RULES), [limit] * len(RULES), EVERY)


def pooled(parts: list[ab.AlertBacktest]) -> ab.AlertBacktest:
    """The backtests of separate traces as one (days of different eras are not binned
    together: each trace is replayed alone, then its incidents pooled)."""
    incidents = pd.concat([p.incidents for p in parts], ignore_index=True)
    rows = []
    for rule in RULES:
        days = sum(int(p.summary.loc[rule.name, "index_days"]) for p in parts)
        rows.append(ab.score(rule, incidents[incidents["rule"] == rule.name], days))
    return ab.AlertBacktest(incidents, ab.summarise(rows, [r.name for r in RULES]))


def verdict(summary: pd.DataFrame) -> tuple[bool, str]:
    """Does the default dominate the best threshold rule? One line per threshold rule."""
    ours = summary.loc[DEFAULT_RULE.name]
    thresholds = summary.loc[[r.name for r in THRESHOLD_RULES]]
    best = thresholds.sort_values(
        ["false_per_index_week", "alerted"], ascending=[True, False], kind="stable"
    ).index[0]
    lines, best_ok = [], False
    for name, row in thresholds.iterrows():
        checks = {
            "false alerts <=": ours["false_per_index_week"] <= row["false_per_index_week"],
            "alerted >=": ours["alerted"] >= row["alerted"],
            "median lead >": _longer(ours["lead_time_median"], row["lead_time_median"]),
            "0 repeats": ours["repeats"] == 0,
        }
        ok = all(checks.values())
        failed = [k for k, v in checks.items() if not v]
        mark = "best threshold rule, " if name == best else ""
        lines.append(
            f"    vs {name} ({mark}{row['false_per_index_week']:.2f} false/index-week, "
            f"{row['alerted']} alerted, lead {_hours(row['lead_time_median']):.1f} h): "
            + ("dominated" if ok else f"NOT dominated ({', '.join(failed)})")
        )
        best_ok = ok if name == best else best_ok
    return best_ok, "\n".join(lines)


def _longer(ours: object, theirs: object) -> bool:
    """Our median lead is longer; with no breach alerted by either, there is none to
    compare (true, and the table shows NaN for both)."""
    if pd.isna(ours) and pd.isna(theirs):
        return True
    return bool(_hours(ours) > _hours(theirs))


def _hours(value: object) -> float:
    return float("nan") if pd.isna(value) else pd.Timedelta(value).total_seconds() / 3600


def show(title: str, backtest: ab.AlertBacktest, key: str | None = None) -> bool:
    print(f"\n{title}")
    table = backtest.table().drop(columns=["basis", "band", "at"])
    for rule, row in table.iterrows() if key else ():  # the README's table: every rule
        name = "default" if rule == DEFAULT_RULE.name else "".join(filter(str.isalnum, str(rule)))
        emit(f"{key}.{name}.alerted", row["alerted"], "")
        emit(f"{key}.{name}.breaches", row["breaches"], "")
        emit(f"{key}.{name}.lead_median", row["lead_h_median"], "h")
        emit(f"{key}.{name}.lead_p10", row["lead_h_p10"], "h")
        emit(f"{key}.{name}.false_per_week", row["false_per_index_week"], "")
        emit(f"{key}.{name}.repeats", row["repeats"], "")
    print(table.to_string())
    ok, lines = verdict(backtest.summary)
    print(f"  default rule dominates the best threshold rule: {'YES' if ok else 'NO'}")
    print(lines)
    return ok


def accuracy() -> None:
    names = trace_names()
    real = {name: read_trace(name) for name in names}
    synthetic = synthetic_traces()
    print(f"default rule: {DEFAULT_RULE!r}")
    verdicts = {}
    for level, q in LEVELS.items():
        print(f"\n===== daily limit: each trace's {level} daily total =====")
        parts = {name: replay(frame, q) for name, frame in real.items()}
        families: dict[str, list[str]] = {}
        for name in names:
            families.setdefault(family(name), []).append(name)
        for label, members in families.items():
            verdicts[f"{level} {label}"] = show(
                f"real: {label} ({', '.join(members)})", pooled([parts[m] for m in members])
            )
        verdicts[f"{level} real pooled"] = show(
            f"real: all {len(names)} traces pooled",
            pooled(list(parts.values())),
            f"alerts.accuracy.{level}",
        )
        verdicts[f"{level} synthetic"] = show(
            "synthetic: 24 traces x 42 days", replay(synthetic, q)
        )
    print("\nverdicts (default dominates the best threshold rule):")
    for key, ok in verdicts.items():
        print(f"  {key}: {'yes' if ok else 'NO'}")


def backtest_speed(indexes: int) -> None:
    from history import write_dataset  # collect's per-minute layout, as bench/forecast.py

    import searchkit as sk

    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp) / "twenty-eight"
        write_dataset(root, indexes, 28)
        hist = sk.History(str(root))
        hist.refresh_rollups(hist.days()[:-1])
        started = time.perf_counter()
        result = sk.backtest_alerts(hist, every="10min", limit="median")
        took = time.perf_counter() - started
        started = time.perf_counter()
        sk.backtest_forecast(hist, limit="median")
        forecast = time.perf_counter() - started
    rows = int(result.summary["index_days"].iloc[0])
    print(
        f"\nbacktest_alerts, {indexes} indexes x 28 days at every=10min (144 instants a "
        f"day, {len(RULES)} rules, {rows:,} index-days replayed): {took:.1f} s (target < 60 s); "
        f"backtest_forecast of the same store (7 hours a day): {forecast:.1f} s"
    )
    emit("alerts.backtest.s", took)


def evaluate_overhead(indexes: int, repeat: int = 3, days: int = 14) -> None:
    """The evaluation step of a collect round against the round, on the emulator.

    The store is the one a collector running for ``days`` days leaves: a collect a day
    (each lists the service's one-day window), each closed day's rollup; then rounds
    10 minutes apart, each timed, and after each the evaluation (``observe``: the
    forecast of the watched limit, ``evaluate``: the incidents) timed apart.
    """
    from searchkit import History
    from searchkit.alerts.incidents import evaluate, observe
    from searchkit.emulator import Emulator

    end = pd.Timestamp("2026-11-20 15:00", tz="UTC")
    start = end - pd.Timedelta(days=days - 1)
    rules = list(RULES)
    with tempfile.TemporaryDirectory() as tmp, Emulator(seed=1, clock=start.timestamp()) as emu:
        specs = [
            {"name": f"live-{i:04d}", "region": "eu-west-1", "type": "free"} for i in range(indexes)
        ]
        emu.store.create_many(emu.account, specs)
        hist = History(pathlib.Path(tmp) / "store")
        rounds, steps, observed = [], [], []
        states: dict = {}
        with emu.client(timeout=300) as client:
            for _ in range(days - 1):
                hist.collect(client, now=emu.now())
                emu.advance(86_400)
            hist.collect(client, now=emu.now())
            hist.refresh_rollups(hist.days()[:-1])
            for _ in range(repeat):
                emu.advance(600)
                started = time.perf_counter()
                hist.collect(client, now=emu.now())
                rounds.append(time.perf_counter() - started)
                now = pd.Timestamp(emu.now(), unit="s", tz="UTC")
                started = time.perf_counter()
                seen = observe(hist, rules, now=now, previous=states)
                observed.append(time.perf_counter() - started)
                _, states = evaluate(rules, seen, now, states)
                steps.append(time.perf_counter() - started)
    print(
        f"\nevaluating {len(rules)} rules on {indexes} indexes after a collect round "
        f"({days} days stored, closed days rolled up; best of {repeat}): "
        f"{min(steps):.2f} s (the forecast, observe: {min(observed):.2f} s; evaluate: "
        f"{min(steps) - min(observed):.2f} s); the collect round: {min(rounds):.2f} s; the "
        f"evaluation adds {min(steps) / min(rounds):.0%} (target <= 20%); "
        f"{len(states)} incidents open"
    )
    emit("alerts.evaluate.s", min(steps))
    emit("alerts.evaluate.observe_s", min(observed))
    emit("alerts.evaluate.round_s", min(rounds))
    emit("alerts.evaluate.share", min(steps) / min(rounds) * 100, "%")


def _timed(function: Any, spent: list[float]) -> Any:
    """``function``, adding the seconds each call takes to ``spent``."""

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - started)

    return timed


def collect_overhead(indexes: int, repeat: int = 3) -> None:
    """A whole alert round after a collect round (alertsend's half of item 8).

    The round ``searchkit collect --alerts`` runs: the journal read back, the rules
    evaluated, transitions and states recorded, and delivery to a webhook on loopback and a
    log channel; against the collect round itself, best of ``repeat`` steady rounds (ten
    minutes apart), after a first round that fires and sends what the demo's traffic makes.
    """
    import logging

    from searchkit import History
    from searchkit.alerts import watch
    from searchkit.alerts.channels import LogChannel, WebhookChannel
    from searchkit.alerts.config import AlertsConfig
    from searchkit.alerts.watch import alert_round
    from searchkit.emulator import Emulator
    from tests.faults.harness import FaultServer, reply

    logging.getLogger("searchkit.alerts").setLevel(logging.ERROR)  # the log line, unprinted
    end = pd.Timestamp("2026-11-20 15:00", tz="UTC")
    with (
        tempfile.TemporaryDirectory() as tmp,
        Emulator(seed=1, clock=end.timestamp()) as emu,
        FaultServer() as receiver,
    ):
        receiver.script("POST", then=reply(200))
        config = AlertsConfig(
            rules=tuple(RULES),
            channels=(WebhookChannel(f"{receiver.url}/hook"), LogChannel()),
        )
        specs = [
            {"name": f"live-{i:04d}", "region": "eu-west-1", "type": "payg"} for i in range(indexes)
        ]
        emu.store.create_many(emu.account, specs)
        hist = History(pathlib.Path(tmp) / "store")
        # The evaluation (alertcore's observe + evaluate) timed inside each round.
        spent: list[float] = []
        watch.observe = _timed(watch.observe, spent)  # type: ignore[assignment]
        watch.evaluate = _timed(watch.evaluate, spent)  # type: ignore[assignment]
        rounds: list[float] = []
        alerting: list[float] = []
        evaluating: list[float] = []
        with emu.client(timeout=120) as client:
            hist.collect(client, now=emu.now())
            now = pd.Timestamp(emu.now(), unit="s", tz="UTC")
            started = time.perf_counter()
            first = alert_round(hist, config, now=now, clock=emu.now)
            first_time = time.perf_counter() - started
            for _ in range(repeat):
                emu.advance(600)
                started = time.perf_counter()
                hist.collect(client, now=emu.now())
                rounds.append(time.perf_counter() - started)
                now = pd.Timestamp(emu.now(), unit="s", tz="UTC")
                spent.clear()
                started = time.perf_counter()
                alert_round(hist, config, now=now, clock=emu.now)
                alerting.append(time.perf_counter() - started)
                evaluating.append(sum(spent))  # observe + evaluate inside that round
    best = min(alerting)
    evaluation = min(evaluating)
    rest = min(a - e for a, e in zip(alerting, evaluating, strict=True))
    print(
        f"\nthe alert round after a collect round on {indexes} indexes ({len(RULES)} rules; "
        f"journal read, evaluate, record, deliver to a webhook and a log line; best of "
        f"{repeat}): {best:.2f} s; the collect round: {min(rounds):.2f} s; the alert round "
        f"adds {best / min(rounds):.0%} (target <= 20%), of which the evaluation (observe + "
        f"evaluate) {evaluation:.2f} s and the journal, records and delivery {rest:.2f} s "
        f"({rest / min(rounds):.0%} of the round). The first round, which fired "
        f"{len(first.transitions)} and sent {len(first.delivery.sent)} messages: "
        f"{first_time:.2f} s"
    )
    emit("alerts.round.s", best)
    emit("alerts.round.collect_s", min(rounds))
    emit("alerts.round.share", best / min(rounds) * 100, "%")
    emit("alerts.round.rest_s", rest)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speed", action="store_true", help="only the speed figures")
    parser.add_argument("--accuracy", action="store_true", help="only the accuracy figures")
    parser.add_argument("--overhead", action="store_true", help="only the collect overhead")
    parser.add_argument(
        "--round", action="store_true", help="only the whole alert round after a collect"
    )
    parser.add_argument("--indexes", type=int, default=1000)
    args = parser.parse_args()
    if args.round:
        collect_overhead(args.indexes)
        return
    if not args.speed and not args.overhead:
        accuracy()
    if not args.accuracy:
        if not args.overhead:
            backtest_speed(args.indexes)
        evaluate_overhead(args.indexes)
        collect_overhead(args.indexes)


if __name__ == "__main__":
    main()
