"""The ``collect`` and ``history`` commands: a collector that outlives failed rounds.

``searchkit collect --every 10m`` is meant to run for weeks from cron or a terminal. A round
that fails for a reason that may pass (the service down or slow past the call's deadline, a
rate limit, an answer it cannot read, a store briefly unwritable) is reported on stderr and
tried again after a pause that doubles while the failures last, never longer than
``--every``. A failure that no retry can fix (bad credentials, a permission, a wrong
address, bad settings) stops the collector at once with the reason.

The first Ctrl-C (or SIGTERM) lets the round under way finish its atomic writes and then
stops; a second one stops at once, even inside a call that hangs.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING

from searchkit._units import format_duration
from searchkit.errors import (
    AuthenticationError,
    ConfigError,
    NotFoundError,
    PermissionDeniedError,
    SearchKitError,
    ValidationError,
    describe_failure,
)

if TYPE_CHECKING:
    from searchkit.alerts.config import AlertsConfig
    from searchkit.history.usage_history import History

__all__ = [
    "FATAL",
    "add_store_option",
    "cmd_collect",
    "cmd_history",
    "open_store",
    "retry_delay",
    "store_location",
]

#: Failures a retry cannot fix: the collector stops on them with the reason.
FATAL: tuple[type[SearchKitError], ...] = (
    AuthenticationError,
    PermissionDeniedError,
    ConfigError,
    NotFoundError,
    ValidationError,
)


def retry_delay(every: float, failures: int) -> float:
    """Return the pause in seconds after ``failures`` failed rounds in a row.

    The first retry comes after a sixteenth of ``every`` (at least one second), each
    further one after twice the pause before, never longer than ``every`` itself.

    Example:
        >>> [retry_delay(600.0, n) for n in (1, 2, 3, 4, 5, 6)]
        [37.5, 75.0, 150.0, 300.0, 600.0, 600.0]
    """
    if failures < 1:
        return every
    first = max(1.0, every / 16)
    return float(min(every, first * 2.0 ** min(failures - 1, 60)))


def _seconds_text(seconds: float) -> str:
    return format_duration(seconds)


class _Stopper:
    """SIGINT/SIGTERM handling: the first asks for a clean stop, the second stops now."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self._previous: dict[int, object] = {}

    def _on_signal(self, signum: int, frame: object) -> None:
        if self.event.is_set():
            raise KeyboardInterrupt
        self.event.set()
        # os.write, not print: a handler may run while the main thread is inside print.
        os.write(
            sys.stderr.fileno(),
            b"searchkit collect: stopping after this round (press Ctrl-C again to stop now)\n",
        )

    def __enter__(self) -> _Stopper:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._on_signal)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]


def _progress(done: int, history: History, client: object, compact: bool) -> None:
    summary = history.collect(client, compact=compact)  # type: ignore[arg-type]
    skipped = f" ({summary.skipped_points:,} skipped)" if summary.skipped_points else ""
    print(
        f"round {done}: {summary.collected_at:%Y-%m-%d %H:%M:%S} UTC, "
        f"{summary.indexes} indexes, {summary.new_points:,} new points{skipped}, "
        f"{len(summary.gaps)} gaps, {len(summary.warnings)} warnings",
        flush=True,
    )
    for line in summary.problems:
        print(f"  warning: {line}", file=sys.stderr, flush=True)


def cmd_collect(args: argparse.Namespace) -> int:
    """Run ``searchkit collect``: one round, or rounds ``--every`` so long."""
    from searchkit.cli.service import client_from_environment

    if args.count is not None and args.count < 1:
        raise ConfigError("--count must be at least 1")
    rounds = args.count if args.count is not None else (None if args.every else 1)
    looping = rounds != 1
    history = open_store(args.store)
    alerts = _alerts_file(getattr(args, "alerts", None))
    done = failed = in_a_row = 0
    with _Stopper() as stopper:
        try:
            with client_from_environment(args.timeout) as client:
                while not stopper.event.is_set() and (rounds is None or done < rounds):
                    done += 1
                    try:
                        _progress(done, history, client, args.compact)
                        in_a_row = 0
                    except FATAL:
                        if looping:
                            print(
                                f"stopped in round {done}: a retry cannot fix this",
                                file=sys.stderr,
                                flush=True,
                            )
                        raise
                    except Exception as exc:
                        if not looping:
                            raise
                        failed += 1
                        in_a_row += 1
                        wait = retry_delay(args.every or 0.0, in_a_row)
                        last = rounds is not None and done >= rounds
                        print(
                            f"round {done} failed: {describe_failure(exc)}"
                            + ("" if last else f" Trying again in {_seconds_text(wait)}."),
                            file=sys.stderr,
                            flush=True,
                        )
                    if alerts is not None:  # after a failed round too: a stall is news
                        _alert_round(history, alerts, done)
                    if rounds is not None and done >= rounds:
                        break
                    if args.every is not None:
                        stopper.event.wait(
                            retry_delay(args.every, in_a_row) if in_a_row else args.every
                        )
        except KeyboardInterrupt:
            print(
                f"interrupted in round {done}; every stored file is complete",
                file=sys.stderr,
                flush=True,
            )
            return 130
    if stopper.event.is_set():
        print(f"stopped after {done} round(s); every stored file is complete", flush=True)
    if failed:
        print(f"{failed} of {done} round(s) failed", file=sys.stderr, flush=True)
        return 1
    return 0


def _alerts_file(path: str | None) -> AlertsConfig | None:
    """Read ``--alerts FILE`` before the first round: a bad file stops at once (exit 2)."""
    if path is None:
        return None
    from searchkit.cli.alerts import load_file

    return load_file(path)


def _alert_round(history: History, alerts: AlertsConfig, done: int) -> None:
    """Evaluate and send after a round; a failure is reported, and collecting goes on.

    A rule that cannot work (its glob matches no index) stops the collector: warnings
    that silently never come are worse than a collector that says why it stopped.
    """
    from searchkit.cli.alerts import round_after_collect

    try:
        round_after_collect(history, alerts, done)
    except ValidationError as exc:
        raise ConfigError(f"--alerts: {exc.message}") from None
    except SearchKitError as exc:
        print(f"round {done}: alerts failed: {describe_failure(exc)}", file=sys.stderr, flush=True)


def cmd_history(args: argparse.Namespace) -> int:
    """Run ``searchkit history``: summarise a store that exists."""
    print(open_store(args.store).info())
    return 0


def add_store_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--store`` (required, checked by :func:`store_location`) to a command."""
    parser.add_argument(
        "--store",
        required=True,
        type=store_location,
        metavar="LOCATION",
        help="folder or URL (s3://bucket/prefix) of the dataset; required, no default",
    )


def store_location(text: str) -> str:
    """Check ``--store`` as argparse reads it: a text that cannot name a history is a usage
    error (exit 2, naming the option) before anything is opened or written."""
    from searchkit.history.location import check_location

    try:
        check_location(text)
    except ValidationError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None
    return text


def open_store(store: str) -> History:
    """Open ``--store``; a location that cannot be one is an error naming the option."""
    from searchkit.history.usage_history import History

    try:
        return History(store)
    except ValidationError as exc:
        raise ValidationError(f"--store: {exc.message}") from None
