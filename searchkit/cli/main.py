"""The ``searchkit`` command: list, create, serve, collect, history, forecast, alerts, demo, lab.

Expected failures (bad credentials, unreachable host, a refused field, a folder that cannot
be written) print one line on stderr and exit with status 1 (2 for a usage or configuration
error); no traceback. Every text that came from the service is shown with its control
characters as visible escapes, so it cannot act on the terminal.

Start-up stays fast: this module imports only the standard library and searchkit's light
modules at load time; pandas, requests and werkzeug are imported by the command that needs
them.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from searchkit.cli import alerts as alerts_command
from searchkit.cli import forecast as forecast_command
from searchkit.cli.output import OutputError, guarded, silence
from searchkit.cli.parser import build_parser
from searchkit.errors import ConfigError, SearchKitError, ValidationError, describe_failure
from searchkit.model.index import SECRET_FIELDS
from searchkit.model.secret import secret_value

if TYPE_CHECKING:
    from searchkit.api.client import Client
    from searchkit.model.index import IndexList, SearchIndex

__all__ = ["main"]


class UsageError(Exception):
    """A command line that cannot work as given (exit status 2, one line, no traceback)."""


def _safe(text: object) -> str:
    from searchkit.render.text import terminal_safe

    return terminal_safe(text)


def _client(args: argparse.Namespace) -> Client:
    from searchkit.cli.service import client_from_environment

    return client_from_environment(getattr(args, "timeout", None))


def _plain(value: Any) -> Any:
    # JSON for the fields of a future model type: arrays and the like become lists or text.
    return value.tolist() if hasattr(value, "tolist") else str(value)


def _json_records(
    indexes: Sequence[SearchIndex], *, show_secrets: bool, with_throughput: bool
) -> list[dict[str, Any]]:
    from searchkit.model.secret import MASK

    records = []
    for index in indexes:
        record = index.to_dict(include_secrets=True)
        for field in SECRET_FIELDS:
            value = secret_value(record.get(field))
            # A masked token stays distinguishable from no token (null).
            record[field] = value if show_secrets or not value else MASK
        if not with_throughput:
            record.pop("throughput_vector", None)
        records.append(record)
    return records


def _cmd_list(args: argparse.Namespace) -> int:
    if args.with_throughput and args.format != "json":
        raise UsageError("--with-throughput goes with --format json")
    with _client(args) as client:
        indexes: IndexList = client.list_indexes()
    if args.format == "json":
        records = _json_records(
            indexes, show_secrets=args.show_secrets, with_throughput=args.with_throughput
        )
        # ensure_ascii: every control or bidi character is written as a \u escape.
        print(json.dumps(records, indent=2, default=_plain))
    elif args.format == "csv":
        from searchkit.render.text import limits_csv_text

        sys.stdout.write(limits_csv_text(indexes, show_secrets=args.show_secrets))
    else:
        print(_limits_table(indexes, args, show_secrets=args.show_secrets))
    return 0


def _limits_table(
    indexes: Iterable[SearchIndex], args: argparse.Namespace, *, show_secrets: bool = False
) -> str:
    """The limits table for this terminal: its width, or every column (``--wide``), or
    the ``--columns`` asked for; a last line names the columns left out."""
    from searchkit.cli.table import limits_table, terminal_columns

    wanted = getattr(args, "columns", None)
    width = None if getattr(args, "wide", False) else terminal_columns()
    try:
        return limits_table(
            indexes,
            width=width,
            columns=wanted.split(",") if wanted else None,
            show_secrets=show_secrets,
        )
    except ValidationError as exc:  # a column --columns named that the table has not
        raise UsageError(str(exc)) from None


def _cmd_create(args: argparse.Namespace) -> int:
    from searchkit.api.client import mismatch
    from searchkit.errors import DuplicateIndexWarning, IndexExistsError, ValidationError

    verb = "created"
    # Re-running a create (a shell history, a cron job) must not make a second paid index:
    # an existing name is refused unless --if-exists says otherwise.
    mode: Literal["raise", "create"] = "create" if args.if_exists == "create" else "raise"
    with _client(args) as client, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DuplicateIndexWarning)
        try:
            index = client.create_index(
                args.name, region=args.region, type=args.type, if_exists=mode
            )
        except IndexExistsError as exc:
            ids = ", ".join(str(i.id) for i in exc.existing)
            if args.if_exists == "return" and len(exc.existing) == 1:
                index, verb = exc.existing[0], "found existing"
                differs = mismatch(index, region=args.region, type=args.type)
                if differs is not None:
                    print(_safe(f"searchkit: note: {differs}"), file=sys.stderr)
            elif args.if_exists == "return":
                raise ValidationError(
                    f"{len(exc.existing)} indexes named {args.name!r} exist ({ids}); "
                    "--if-exists return cannot choose one: use `searchkit list` to pick by id"
                ) from None
            else:
                raise ValidationError(
                    f"an index named {args.name!r} already exists ({ids}); nothing was "
                    "created. Use --if-exists return to use it, or --if-exists create to make "
                    "another of the same name"
                ) from None
    print(
        _safe(
            f"{verb} index {index.name!r} ({index.id}) in {index.region}, endpoint {index.endpoint}"
        )
    )
    print(_limits_table([index], args))
    if args.show_secrets:
        for field in SECRET_FIELDS:
            print(_safe(f"{field}: {secret_value(getattr(index, field))}"))
    duplicates = [w.message for w in caught if isinstance(w.message, DuplicateIndexWarning)]
    for duplicate in duplicates:
        # Created, but not alone: a cron job that overlapped another must be noticed.
        print(_safe(f"searchkit: warning: {duplicate}"), file=sys.stderr)
    return 1 if duplicates else 0


def _check_serve_args(args: argparse.Namespace) -> None:
    import pathlib

    from searchkit._net import is_loopback_host

    if not args.allow_remote and not is_loopback_host(args.host):
        raise ConfigError(
            f"refusing to bind {args.host!r}: the emulator speaks plain http with Basic auth, "
            "so it binds loopback only unless you pass --allow-remote"
        )
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be from 0 to 65535, got {args.port}")
    seen: set[str] = set()
    for name, _ in [*args.user, *args.read_only_user]:
        if name in seen:
            raise UsageError(
                f"account {name!r} is given more than once (--user and --read-only-user "
                "names must be unique)"
            )
        seen.add(name)
    if args.db is not None:
        folder = pathlib.Path(args.db).expanduser().resolve().parent
        if not folder.is_dir():
            raise UsageError(
                f"cannot open --db {args.db!r}: the folder {str(folder)!r} does not exist"
            )
        if pathlib.Path(args.db).is_dir():
            raise UsageError(f"cannot open --db {args.db!r}: it is a folder, not a file")


def _cmd_serve(args: argparse.Namespace) -> int:
    import errno
    import signal
    import sqlite3
    import threading

    _check_serve_args(args)
    from searchkit.emulator import Emulator

    try:
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
    except sqlite3.Error as exc:
        raise UsageError(f"cannot use --db {args.db!r}: {exc}") from None
    try:
        emulator.start()
    except OSError as exc:
        hint = (
            "; choose another --port (0 picks a free one)" if exc.errno == errno.EADDRINUSE else ""
        )
        raise UsageError(
            f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}{hint}"
        ) from None
    stop = threading.Event()
    previous = None
    if threading.current_thread() is threading.main_thread():
        # A service manager (systemd, docker stop, kill) asks with SIGTERM: stop as cleanly
        # as on Ctrl-C, closing the database.
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    try:
        print(f"searchkit emulator listening on {emulator.url} (Ctrl-C to stop)")
        if not args.user:
            # The operator asked for a generated account: they must be told its password.
            print(f"account: {emulator.username}:{emulator.password}")
        print(_try_line(args, emulator))
        sys.stdout.flush()
        stop.wait()
        print("stopping (SIGTERM)")
    except KeyboardInterrupt:
        print("stopping")
    finally:
        emulator.stop()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        sys.stdout.flush()
    return 0


def _try_line(args: argparse.Namespace, emulator: Any) -> str:
    """The command line to paste into another terminal to list this emulator's indexes.

    On loopback it holds the first account's password: the operator just chose it (or was
    just shown the generated one), it is an emulator's, and it is good only on this machine.
    Bound to another address (--allow-remote) the password stays out of the terminal and its
    scrollback: ``SEARCHKIT_PASSWORD=...`` is to be filled in.
    """
    import shlex

    from searchkit._net import is_loopback_host

    username, password = args.user[0] if args.user else (emulator.username, emulator.password)
    shown = shlex.quote(password) if is_loopback_host(args.host) else "..."
    return (
        f"try: SEARCHKIT_BASE_URL={shlex.quote(emulator.url)} "
        f"SEARCHKIT_USERNAME={shlex.quote(username)} SEARCHKIT_PASSWORD={shown} searchkit list"
    )


def _cmd_collect(args: argparse.Namespace) -> int:
    from searchkit.cli.collect import cmd_collect

    return cmd_collect(args)


def _cmd_history(args: argparse.Namespace) -> int:
    from searchkit.cli.collect import cmd_history

    return cmd_history(args)


def _cmd_demo(args: argparse.Namespace) -> int:
    import pathlib

    folder = pathlib.Path(args.out)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create the folder {args.out!r}: {exc.strerror or exc}") from None
    from searchkit.cli.demo import run_demo

    try:
        run_demo(folder)
    except OSError as exc:
        where = f" {exc.filename!r}" if exc.filename else ""
        raise UsageError(f"cannot write the demo{where}: {exc.strerror or exc}") from None
    return 0


def _cmd_lab(args: argparse.Namespace) -> int:
    import importlib.util

    from searchkit.cli.lab import copy_notebooks, lab_words, run_jupyterlab
    from searchkit.render.lab_theme import jupyterlab_theme

    # The same interpreter as searchkit, so an unactivated venv still finds its JupyterLab.
    if importlib.util.find_spec("jupyterlab") is None:
        raise ConfigError("JupyterLab is not installed here: pip install 'searchkit[notebooks]'")
    # JupyterLab starts with the user's settings: in its dark theme the saved (light)
    # figures would be white blocks until the cells run, so the copies leave them out.
    dark = jupyterlab_theme() == "dark"
    try:
        copied, kept = copy_notebooks(args.dir, without_figures=dark)
    except OSError as exc:
        raise UsageError(
            f"cannot copy the notebooks to {args.dir!r}: {exc.strerror or exc}"
        ) from None
    except ValidationError as exc:  # the folder they ship from
        raise UsageError(str(exc)) from None
    for line in lab_words(args.dir, copied, kept, dark=dark):
        print(f"searchkit: {line}", file=sys.stderr)
    return run_jupyterlab(args.dir)


COMMANDS = {
    "list": _cmd_list,
    "create": _cmd_create,
    "serve": _cmd_serve,
    "collect": _cmd_collect,
    "history": _cmd_history,
    "forecast": forecast_command.run,
    "alerts": alerts_command.run,
    "demo": _cmd_demo,
    "lab": _cmd_lab,
}


def _error_line(exc: SearchKitError) -> str:
    # The plain sentence for people, then the technical detail: class and HTTP exchange.
    detail = type(exc).__name__
    if exc.method and exc.path:
        detail += f", {exc.method} {exc.path}"
        if exc.status is not None:
            detail += f" -> {exc.status}"
    return f"{describe_failure(exc)} [{detail}]"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status.

    Output that cannot be written (a full disk, ``> /dev/full``) is one error line and
    exit 1; a closed pipe (``| head``) is exit 0.
    """
    try:
        with guarded():
            return _run(argv)
    except OutputError as exc:
        silence()
        print(f"searchkit: cannot write the output: {exc} [OSError]", file=sys.stderr)
        return 1
    except BrokenPipeError:
        silence()
        return 0


def _run(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except ConfigError as exc:
        print(_safe(f"searchkit: configuration error: {exc.message}"), file=sys.stderr)
        return 2
    except UsageError as exc:
        print(_safe(f"searchkit {args.command}: {exc}"), file=sys.stderr)
        return 2
    except SearchKitError as exc:
        print(_safe(f"searchkit: {_error_line(exc)}"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
