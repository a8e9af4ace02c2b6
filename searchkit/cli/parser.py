"""The command line's arguments: one parser, a function per command (or pair) that adds it."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

from searchkit._version import __version__
from searchkit.cli import forecast as forecast_command
from searchkit.cli.collect import add_store_option
from searchkit.model.limits import REGIONS, TYPES
from searchkit.render.table_width import COLUMN_PRIORITY

__all__ = ["DEFAULT_LAB_DIR", "build_parser"]

if TYPE_CHECKING:
    #: The object each command is added to.
    Subcommands = argparse._SubParsersAction[argparse.ArgumentParser]

# The table's columns in the order they stay when it is fitted to a terminal.
_PRIORITY = ", ".join(COLUMN_PRIORITY[:1] + COLUMN_PRIORITY[3:])

#: Where ``searchkit lab`` copies the example notebooks when no ``--dir`` is given.
DEFAULT_LAB_DIR = "searchkit-notebooks"


def _not_blank(what: str) -> Callable[[str], str]:
    """Return an argparse type that keeps a text as given but refuses an empty or blank one.

    An empty folder or file name would quietly mean the current folder (or a file named
    " "); a usage error naming the option (exit 2) says what was wrong instead.
    """

    def text_given(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return text

    return text_given


def _user(text: str) -> tuple[str, str]:
    name, sep, password = text.partition(":")
    if not sep or not name or not password:
        raise argparse.ArgumentTypeError("expected NAME:PASSWORD with both parts non-empty")
    return name, password


def _timeout(text: str) -> float | tuple[float, float]:
    # The same reader as SEARCHKIT_TIMEOUT, so "--timeout 5,30" means what the variable does.
    from searchkit.api.config import parse_timeout
    from searchkit.errors import ConfigError

    try:
        value = parse_timeout(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(
            exc.message.replace("timeout must be", "expected")
        ) from None
    assert value is not None  # text is given, so parse_timeout reads it
    return value


def _add_timeout(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--timeout",
        type=_timeout,
        metavar="SECONDS",
        help="give up after this many seconds: connecting, each wait for an answer and the "
        "whole call with its retries; or CONNECT,READ (e.g. 5,30: the call ends within "
        "READ). Same as SEARCHKIT_TIMEOUT (default: that variable, else 5,30 with 70 s for "
        "the whole call)",
    )


def _duration(text: str) -> float:
    import re

    match = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", text.strip())
    if not text.strip() or match is None:
        raise argparse.ArgumentTypeError(
            f"expected a duration such as 30s, 10m, 1h or 1h30m: {text!r}"
        )
    hours, minutes, seconds = (int(part or 0) for part in match.groups())
    return hours * 3600.0 + minutes * 60.0 + seconds


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of ``searchkit``'s command line, every command added."""
    parser = argparse.ArgumentParser(
        prog="searchkit",
        description="Manage search indexes. The service is named by the environment "
        "variables SEARCHKIT_BASE_URL, SEARCHKIT_USERNAME and SEARCHKIT_PASSWORD; to try "
        "searchkit offline, start the emulator with `searchkit serve --demo`.",
    )
    parser.add_argument("--version", action="version", version=f"searchkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_list_and_create(sub)
    _add_serve(sub)
    _add_collect_and_history(sub)
    forecast_command.add_parser(sub)
    _add_alerts(sub)
    _add_demo_and_lab(sub)
    return parser


def _add_list_and_create(sub: Subcommands) -> None:
    """Add the ``list`` and ``create`` commands."""
    p = sub.add_parser("list", help="list the account's indexes and their limits")
    p.add_argument(
        "--format",
        choices=("table", "csv", "json"),
        default="table",
        help="table for people; csv (limits as numbers, unlimited written 'inf') or json "
        "(the API's fields, tokens masked as '••••••••') for programs (default: table)",
    )
    p.add_argument(
        "--wide",
        action="store_true",
        help="the table with every column, however wide (default: fit the terminal, "
        "COLUMNS or its width, leaving out columns last in this order: " + _PRIORITY + ")",
    )
    p.add_argument(
        "--columns",
        metavar="A,B,...",
        type=_not_blank("column names, comma-separated"),
        help="the table with these columns only (the name always), e.g. "
        "'queries/day,updates/day,region'; see the table's header for the names "
        "(default: the columns that fit, as --wide says)",
    )
    p.add_argument(
        "--show-secrets",
        action="store_true",
        help="include index tokens (default: masked as '••••••••')",
    )
    p.add_argument(
        "--with-throughput",
        action="store_true",
        help="with --format json: include every throughput point (large; default: left out)",
    )
    _add_timeout(p)

    p = sub.add_parser("create", help="create an index")
    p.add_argument(
        "name",
        metavar="NAME",
        type=_not_blank("the index's name (not blank)"),
        help="the index's name, sent as typed; required",
    )
    p.add_argument(
        "--region", required=True, choices=REGIONS, help="where the index lives; required"
    )
    p.add_argument(
        "--type", required=True, choices=TYPES, help="the plan (fixed may be refused); required"
    )
    p.add_argument(
        "--show-secrets",
        action="store_true",
        help="print the new index's tokens (default: not printed)",
    )
    p.add_argument(
        "--if-exists",
        choices=("raise", "return", "create"),
        default="raise",
        help="when an index of that name exists: refuse (raise), use it (return), or make "
        "another of the same name (create) (default: %(default)s)",
    )
    _add_timeout(p)


def _add_serve(sub: Subcommands) -> None:
    """Add the ``serve`` command."""
    p = sub.add_parser(
        "serve",
        help="run the emulator of the API as a server",
        description="Run the offline emulator of the API over HTTP until Ctrl-C or SIGTERM.",
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        type=_not_blank("an address to bind, such as 127.0.0.1"),
        help="address to bind; loopback only unless --allow-remote (default: 127.0.0.1)",
    )
    p.add_argument(
        "--port", type=int, default=8787, help="port to bind; 0 picks a free one (default: 8787)"
    )
    p.add_argument(
        "--db",
        metavar="FILE",
        type=_not_blank("a file name (leave --db out to keep the indexes in memory)"),
        help="SQLite file to keep indexes in across restarts (default: in memory, lost on exit)",
    )
    p.add_argument(
        "--user",
        action="append",
        type=_user,
        default=[],
        metavar="NAME:PASSWORD",
        help="an account (repeatable; default: one generated account, printed at start)",
    )
    p.add_argument(
        "--read-only-user",
        action="append",
        type=_user,
        default=[],
        metavar="NAME:PASSWORD",
        help="an account that may list but not create (repeatable; default: none)",
    )
    p.add_argument(
        "--demo", action="store_true", help="start with a set of demo indexes (default: empty)"
    )
    p.add_argument(
        "--seed", type=int, help="make ids, tokens and series repeatable (default: random)"
    )
    p.add_argument(
        "--allow-fixed", action="store_true", help="accept type 'fixed' (default: refused)"
    )
    p.add_argument(
        "--window-minutes",
        type=int,
        default=1440,
        help="per-minute throughput points returned per index (default 1440, one day)",
    )
    p.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow binding a non-loopback --host (the emulator has no TLS; default: off)",
    )


def _add_collect_and_history(sub: Subcommands) -> None:
    """Add the ``collect`` and ``history`` commands."""
    p = sub.add_parser(
        "collect",
        help="collect usage history into a Parquet dataset",
        description="Store one snapshot of every index's throughput and limits in a Parquet "
        "dataset, or one every --every until Ctrl-C, SIGTERM or --count rounds. The service "
        "is the one `searchkit list` uses (SEARCHKIT_BASE_URL, SEARCHKIT_USERNAME, "
        "SEARCHKIT_PASSWORD). With --every, a failed round is reported and tried again after "
        "a growing pause (at most --every); bad credentials or settings stop it. Ctrl-C stops "
        "after the round under way; a second Ctrl-C stops at once.",
    )
    add_store_option(p)
    p.add_argument(
        "--every",
        type=_duration,
        metavar="DURATION",
        help="collect again after this long, e.g. 30s, 10m, 1h (default: collect once)",
    )
    p.add_argument(
        "--count",
        type=int,
        metavar="N",
        help="stop after N rounds (default: 1 without --every, no limit with it)",
    )
    p.add_argument(
        "--no-compact",
        dest="compact",
        action="store_false",
        help="leave each closed day's files as written (only its daily rollup is written), "
        "for stores compacted by other means; by default each round compacts the days that "
        "closed",
    )
    p.add_argument(
        "--alerts",
        metavar="FILE",
        type=_not_blank("an alerts file (TOML: [[rule]] and [[channel]] tables)"),
        help="after each round, evaluate the alert rules of this TOML file and send what "
        "is due to its channels (default: no alerts)",
    )
    _add_timeout(p)

    p = sub.add_parser("history", help="summarise a collected usage history")
    add_store_option(p)


def _add_alerts(sub: Subcommands) -> None:
    """Add the ``alerts`` command."""
    p = sub.add_parser(
        "alerts",
        help="show the alert incidents of a store, replay the rules, test the channels",
        description="Show the open alert incidents recorded in the store's alerts/ dataset "
        "and how their messages went; --backtest replays the rules on the stored days "
        "beside threshold rules; --test sends one test message to each channel of the "
        "rules file. Secrets (webhook URLs, SMTP passwords) are masked.",
    )
    add_store_option(p)
    p.add_argument(
        "--rules",
        metavar="FILE",
        help="the alerts file: [[rule]] and [[channel]] tables (needed for --test and "
        "--backtest; default: the incidents only)",
    )
    p.add_argument("--backtest", action="store_true", help="replay the rules on the stored past")
    p.add_argument("--test", action="store_true", help="send one test message to each channel")


def _add_demo_and_lab(sub: Subcommands) -> None:
    """Add the ``demo`` and ``lab`` commands."""
    p = sub.add_parser("demo", help="run the demo on an embedded emulator and write plots")
    p.add_argument(
        "--out",
        default="searchkit-demo",
        type=_not_blank("a folder (an empty one would write into the current folder)"),
        help="folder for the PNG files (default: %(default)s)",
    )

    p = sub.add_parser(
        "lab",
        help="open JupyterLab on the example notebooks",
        description="Copy the example notebooks that ship with searchkit into a folder "
        "(files already there are kept, never overwritten) and open JupyterLab on it.",
    )
    p.add_argument(
        "--dir",
        default=DEFAULT_LAB_DIR,
        type=_not_blank("a folder (an empty one would copy into the current folder)"),
        help="folder for the notebooks; created when missing (default: %(default)s)",
    )
