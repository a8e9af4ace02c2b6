"""``searchkit alerts`` and the alert round of ``searchkit collect --alerts FILE``.

``searchkit alerts --store S --rules F`` shows the open incidents and their deliveries as
the store's journal records them; ``--backtest`` replays the rules on the stored past;
``--test`` sends one test message to each channel of the file and says how each went.
Every channel shows with its secrets masked.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from searchkit.alerts.config import AlertsConfig
    from searchkit.alerts.watch import RoundReport
    from searchkit.history.usage_history import History

__all__ = ["PAUSE_ENV", "incidents_text", "load_file", "round_after_collect", "run"]

#: Set (to anything) only by the tests: the collector stops after sending and before
#: recording the deliveries, says so on stderr and waits to be killed.
PAUSE_ENV = "SEARCHKIT_ALERTS_TEST_PAUSE_BEFORE_RECORD"


def load_file(path: str) -> AlertsConfig:
    """Read the alerts file named on the command line; a bad one is a configuration error
    (exit 2) naming the file and the line."""
    from searchkit.alerts.config import load_alerts
    from searchkit.errors import ConfigError, ValidationError

    try:
        return load_alerts(path)
    except ValidationError as exc:
        raise ConfigError(exc.message) from None


def run(args: argparse.Namespace) -> int:
    """Run ``searchkit alerts``."""
    from searchkit.errors import ConfigError
    from searchkit.history.usage_history import History

    if (args.test or args.backtest) and not args.rules:
        raise ConfigError("--test and --backtest need --rules FILE (the alerts file)")
    config = load_file(args.rules) if args.rules else None
    if args.test and config is not None:
        return _send_tests(config)
    history = History(args.store)  # checked as --store already
    history.require_folder()
    from searchkit.alerts.journal import Journal

    print(incidents_text(Journal(history).read()))
    if args.backtest and config is not None:
        print()
        print(_backtest_text(history, config))
    return 0


def _send_tests(config: AlertsConfig) -> int:
    """Send the test notice to every channel; one line each; 1 when any failed."""
    import pandas as pd

    from searchkit.alerts.notices import trial_notice
    from searchkit.render.text import terminal_safe

    if not config.channels:
        print("the alerts file names no [[channel]]: nothing to test", file=sys.stderr)
        return 1
    notice = trial_notice(pd.Timestamp.now(tz="UTC").floor("s"))
    failed = 0
    for channel in config.channels:
        outcome = channel.send(notice, timeout=channel.timeout)
        failed += outcome.result != "sent"
        print(
            terminal_safe(
                f"{channel.name} ({channel.describe()}): {outcome.result}: {outcome.detail}"
            )
        )
    return 1 if failed else 0


def incidents_text(records: pd.DataFrame) -> str:
    """The open incidents and their deliveries, for the terminal."""
    from searchkit.alerts.notices import short_time
    from searchkit.alerts.watch import open_incidents
    from searchkit.render.text import terminal_safe

    shown = open_incidents(records)
    if shown.empty:
        return "no incidents firing or breached"
    deliveries = records[records["record"] == "delivery"]
    lines = [f"{len(shown)} incident(s) firing or breached:"]
    for row in shown.to_dict("records"):
        what = f"{row['name']} {row['field']}".strip() or str(row["rule"])
        since = short_time(row["breached_at"] if row["state"] == "breached" else row["fired_at"])
        line = f"  {str(row['state']).upper():9} {what} (rule {row['rule']}) since {since or '?'}"
        mine = deliveries[deliveries["key"] == row["key"]].drop_duplicates("channel", keep="last")
        sent = [f"{d['channel']}: {d['outcome']}" for d in mine.to_dict("records")]
        line += f"; key {row['key']}" + (f"; {', '.join(sent)}" if sent else "")
        lines.append(terminal_safe(line))
    return "\n".join(lines)


def _backtest_text(history: History, config: AlertsConfig) -> str:
    """The alert backtest's summary: the file's rules beside the threshold rules."""
    from searchkit.alerts.backtest import backtest_alerts

    result = backtest_alerts(history, rules=list(config.rules) or None)
    return f"alert backtest ({len(result.incidents)} incidents):\n{result.table().to_string()}"


def round_after_collect(
    history: History, config: AlertsConfig, done: int, *, now: Any = None
) -> RoundReport:
    """Run the alert round after collect round ``done`` and print what it did."""
    from searchkit.alerts.watch import alert_round
    from searchkit.render.text import terminal_safe

    pause = _pause if os.environ.get(PAUSE_ENV) else None
    report = alert_round(history, config, now=now, before_record=pause)
    print(terminal_safe(f"round {done}: {report.summary()}"), flush=True)
    for line in report.delivery.lines():
        if line.startswith("sent "):
            continue
        print(terminal_safe(f"  alerts: {line}"), file=sys.stderr, flush=True)
    return report


def _pause(attempts: int) -> None:
    """The tests' hook: stop between sending and recording, until killed."""
    os.write(
        sys.stderr.fileno(),
        f"alerts: paused after {attempts} send(s), before recording them\n".encode(),
    )
    threading.Event().wait()
