"""The ``searchkit`` command: list, create, serve, collect, history, demo and lab.

Expected failures (bad credentials, unreachable host, a refused field) print one line on
stderr and exit with status 1 (2 for a usage or configuration error); no traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from searchkit.errors import ConfigError, SearchKitError
from searchkit.models import REGIONS, TYPES

__all__ = ["main"]

SHORT_LABELS = {
    "max_vector_count": "vectors",
    "max_monthly_reranks": "reranks/mo",
    "max_daily_updates": "updates/day",
    "max_daily_queries": "queries/day",
    "max_monthly_bandwidth": "bandwidth/mo",
    "max_writes_per_second": "writes/s",
    "max_query_per_second": "queries/s",
    "max_reads_per_request": "reads/req",
    "max_writes_per_request": "writes/req",
}


def _user(text: str) -> tuple[str, str]:
    name, sep, password = text.partition(":")
    if not sep or not name or not password:
        raise argparse.ArgumentTypeError("expected NAME:PASSWORD with both parts non-empty")
    return name, password


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="searchkit",
        description="Manage search indexes. The service is named by SEARCHKIT_BASE_URL, "
        "SEARCHKIT_USERNAME and SEARCHKIT_PASSWORD.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("list", help="list the account's indexes and their limits")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table")
    p.add_argument(
        "--show-secrets", action="store_true", help="include index tokens (hidden by default)"
    )

    p = sub.add_parser("create", help="create an index")
    p.add_argument("name")
    p.add_argument("--region", required=True, choices=REGIONS)
    p.add_argument("--type", required=True, choices=TYPES)
    p.add_argument("--show-secrets", action="store_true", help="print the new index's tokens")

    p = sub.add_parser("serve", help="run the emulator of the API as a server")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8787)
    p.add_argument("--db", help="SQLite file to keep indexes in across restarts")
    p.add_argument(
        "--user",
        action="append",
        type=_user,
        default=[],
        metavar="NAME:PASSWORD",
        help="an account (repeatable); without any, one is generated and printed",
    )
    p.add_argument(
        "--read-only-user",
        action="append",
        type=_user,
        default=[],
        metavar="NAME:PASSWORD",
        help="an account that may list but not create (repeatable)",
    )
    p.add_argument("--demo", action="store_true", help="start with a set of demo indexes")
    p.add_argument("--seed", type=int, help="make ids, tokens and series repeatable")
    p.add_argument("--allow-fixed", action="store_true", help="accept type 'fixed'")
    p.add_argument(
        "--window-minutes",
        type=int,
        default=1440,
        help="per-minute throughput points returned per index (default 1440, one day)",
    )
    p.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow binding a non-loopback --host (the emulator has no TLS)",
    )

    p = sub.add_parser("collect", help="collect usage history into a Parquet dataset")
    p.add_argument("--store", required=True, help="folder or URL (s3://bucket/prefix)")
    p.add_argument("--every", type=_duration, help="collect again after this long, e.g. 10m")
    p.add_argument("--count", type=int, help="stop after this many rounds")

    p = sub.add_parser("history", help="summarise a collected usage history")
    p.add_argument("--store", required=True, help="folder or URL (s3://bucket/prefix)")

    p = sub.add_parser("demo", help="run the demo on an embedded emulator and write plots")
    p.add_argument("--out", default="searchkit-demo", help="folder for the PNG files")

    p = sub.add_parser("lab", help="open JupyterLab on the example notebooks")
    p.add_argument("--notebooks", default="notebooks")
    return parser


def _limits_table(indexes: object, *, show_secrets: bool = False) -> str:
    from searchkit.frames import format_limit, limits_frame

    frame = limits_frame(indexes, include_secrets=show_secrets)
    if frame.empty:
        return "(no indexes)"
    shown = frame.reset_index()[["name", "type", "region", "created"]].astype(object)
    shown["created"] = frame["created"].dt.strftime("%Y-%m-%d %H:%M").fillna("—").to_numpy()
    for field, label in SHORT_LABELS.items():
        shown[label] = [format_limit(v, field) for v in frame[field]]
    if show_secrets:
        shown["token"] = frame["token"].to_numpy()
        shown["read_only_token"] = frame["read_only_token"].to_numpy()
    return shown.fillna("—").to_string(index=False)


def _cmd_list(args: argparse.Namespace) -> int:
    from searchkit.client import Client
    from searchkit.frames import limits_frame

    with Client() as client:
        indexes = client.list_indexes()
    if args.format == "json":
        print(json.dumps(indexes.to_dicts(include_secrets=args.show_secrets), indent=2))
    elif args.format == "csv":
        sys.stdout.write(limits_frame(indexes, include_secrets=args.show_secrets).to_csv())
    else:
        print(_limits_table(indexes, show_secrets=args.show_secrets))
    return 0


def _cmd_create(args: argparse.Namespace) -> int:
    from searchkit.client import Client

    with Client() as client:
        index = client.create_index(args.name, region=args.region, type=args.type)
    print(f"created index {index.name!r} ({index.id}) in {index.region}, endpoint {index.endpoint}")
    print(_limits_table([index]))
    if args.show_secrets:
        print(f"token: {index.token}\nread_only_token: {index.read_only_token}")
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    import threading

    from searchkit.config import is_loopback
    from searchkit.emulator import Emulator

    if not args.allow_remote and not is_loopback(args.host):
        raise ConfigError(
            f"refusing to bind {args.host!r}: the emulator speaks plain http with Basic auth, "
            "so it binds loopback only unless you pass --allow-remote"
        )
    emulator = Emulator(
        host=args.host,
        port=args.port,
        db=args.db,
        demo=args.demo,
        seed=args.seed,
        users=args.user or None,
        read_only_users=args.read_only_user or None,
        allow_fixed=args.allow_fixed,
        allow_remote=args.allow_remote,
        window_minutes=args.window_minutes,
    )
    emulator.start()
    print(f"searchkit emulator listening on {emulator.url} (Ctrl-C to stop)")
    if not args.user:
        # The operator asked for a generated account: they must be told its password.
        print(f"account: {emulator.username}:{emulator.password}")
    print(
        f"try: SEARCHKIT_BASE_URL={emulator.url} SEARCHKIT_USERNAME=... "
        "SEARCHKIT_PASSWORD=... searchkit list"
    )
    sys.stdout.flush()
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        print("stopping")
    finally:
        emulator.stop()
    return 0


def _duration(text: str) -> float:
    import re

    match = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", text.strip())
    if not text.strip() or match is None:
        raise argparse.ArgumentTypeError(
            f"expected a duration such as 30s, 10m, 1h or 1h30m: {text!r}"
        )
    hours, minutes, seconds = (int(part or 0) for part in match.groups())
    return hours * 3600.0 + minutes * 60.0 + seconds


def _cmd_collect(args: argparse.Namespace) -> int:
    import signal
    import threading

    from searchkit.client import Client
    from searchkit.history import History

    if args.count is not None and args.count < 1:
        raise ConfigError("--count must be at least 1")
    rounds = args.count if args.count is not None else (None if args.every else 1)
    history = History(args.store)
    stop = threading.Event()

    def request_stop(signum: int, frame: object) -> None:
        # Only a flag: the round under way finishes its (atomic) writes, then the loop ends.
        stop.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    done = 0
    try:
        with Client() as client:
            while not stop.is_set() and (rounds is None or done < rounds):
                summary = history.collect(client)
                done += 1
                print(
                    f"round {done}: {summary.collected_at:%Y-%m-%d %H:%M:%S} UTC, "
                    f"{summary.indexes} indexes, {summary.new_points:,} new points, "
                    f"{len(summary.gaps)} gaps, {len(summary.warnings)} warnings",
                    flush=True,
                )
                for line in summary.problems:
                    print(f"  warning: {line}", file=sys.stderr, flush=True)
                if rounds is not None and done >= rounds:
                    break
                if args.every:
                    stop.wait(args.every)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if stop.is_set():
        print(f"stopped after {done} round(s); every stored file is complete", flush=True)
    return 0


def _cmd_history(args: argparse.Namespace) -> int:
    from searchkit.history import History

    print(History(args.store).info())
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from searchkit.demo import run_demo

    run_demo(args.out)
    return 0


def _cmd_lab(args: argparse.Namespace) -> int:
    import importlib.util
    import subprocess

    # The same interpreter as searchkit, so an unactivated venv still finds its JupyterLab.
    if importlib.util.find_spec("jupyterlab") is None:
        raise ConfigError("JupyterLab is not installed here: pip install 'searchkit[dev]'")
    command = [sys.executable, "-m", "jupyterlab", args.notebooks]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        # Containers and CI-like machines run as root, where JupyterLab refuses to start.
        print("searchkit: running as root, so JupyterLab gets --allow-root", file=sys.stderr)
        command.append("--allow-root")
    return subprocess.call(command)


COMMANDS = {
    "list": _cmd_list,
    "create": _cmd_create,
    "serve": _cmd_serve,
    "collect": _cmd_collect,
    "history": _cmd_history,
    "demo": _cmd_demo,
    "lab": _cmd_lab,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args = _parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except ConfigError as exc:
        print(f"searchkit: configuration error: {exc}", file=sys.stderr)
        return 2
    except SearchKitError as exc:
        print(f"searchkit: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
