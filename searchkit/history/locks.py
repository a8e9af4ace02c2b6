"""A day's compaction lock: who holds it, and whether that holder is gone.

The lock is a file created exclusively (``O_EXCL``) in the day's folder, holding its
holder's pid, host and start time as JSON. Another compactor finding it takes it over when
the holder is gone: on the same host, when no process of that pid is alive (a compactor
killed by SIGKILL, or the machine rebooted); from another host, or when the file holds no
holder (written by an older searchkit, or being written), only once it is older than
:data:`~searchkit.history.layout.STALE` (an hour), since a pid there cannot be checked.
Otherwise the day is skipped, and :func:`held_by` says by whom, for the warning.

A pid reused by an unrelated process after the holder died keeps the lock until the hour
is up: the rule then is the same as for another host.

The compactors of one process (a round's merge on its thread, ``compact()`` in a notebook,
two collectors on threads) first take :func:`in_process`'s lock of the day: the second
waits for the first, then finds the day merged. The lock file is for other processes: one
of this process found holding it would be skipped with a warning naming this process's
own pid, as though another held it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import socket
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

from searchkit._units import format_duration
from searchkit.errors import HistoryWarning

__all__ = ["day_lock", "holder_text", "in_process", "verdict"]

_IN_PROCESS: dict[str, threading.Lock] = {}  # by the lock file's real path
_REGISTRY = threading.Lock()


def in_process(path: str) -> threading.Lock:
    """The lock this process's compactors hold while they hold the lock file at ``path``
    (a local path; links resolved: two spellings of one store are one lock)."""
    key = os.path.realpath(path)
    with _REGISTRY:
        if key not in _IN_PROCESS:
            _IN_PROCESS[key] = threading.Lock()
        return _IN_PROCESS[key]


def holder_text() -> bytes:
    """What this process writes into a lock it takes: pid, host and time, as JSON."""
    since = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    return json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": since}).encode()


def _holder(path: str) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as file:
            data = json.loads(file.read(4096) or b"null")
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("pid"), int):
        return None
    return data


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # a process of another user: alive
    return True


def verdict(path: str, stale: dt.timedelta) -> tuple[bool, str]:
    """Whether the lock at ``path`` may be taken over, and why (or who holds it).

    Returns:
        ``(True, why)`` when its holder is gone; else ``(False, who)``, a text naming the
        holder and the rule that will free the lock.
    """
    try:
        age = time.time() - os.stat(path).st_mtime
    except OSError:
        return True, "the lock is gone"
    if age > stale.total_seconds():
        return True, f"the lock is older than {format_duration(stale.total_seconds())}"
    holder = _holder(path)
    if holder is not None and holder.get("host") == socket.gethostname():
        pid = holder["pid"]
        if not _alive(pid):
            return True, f"its holder, pid {pid} on this host, is gone"
        return False, (
            f"another compactor holds its lock (pid {pid} on this host, since "
            f"{holder.get('since', '?')}); it is taken over once that process is gone"
        )
    who = (
        f"pid {holder['pid']} on host {holder.get('host')!r}, since {holder.get('since', '?')}"
        if holder is not None
        else "its holder is not recorded"
    )
    return False, (
        f"another compactor holds its lock ({who}); a lock whose holder cannot be checked "
        f"from here is taken over once it is {format_duration(stale.total_seconds())} old"
    )


@contextlib.contextmanager
def day_lock(path: str, what: str, stale: dt.timedelta) -> Iterator[bool]:
    """Hold the lock file at ``path`` (of ``what``: "throughput day 2026-11-20"); yield
    False when another process holds it (named in a :class:`HistoryWarning`: the day is
    skipped) or the day's folder is gone. A compactor of this process holding it is waited
    for (:func:`in_process`); a holder gone, or a lock older than ``stale`` from a holder
    that cannot be checked, is taken over (:func:`verdict`)."""
    with in_process(path):
        held = False
        for _ in range(2):
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                gone, why = verdict(path, stale)
                if not gone:
                    # Named where the compaction was asked for (compact_day's caller).
                    warnings.warn(f"{what} skipped: {why}", HistoryWarning, stacklevel=6)
                    break
                _remove(path)
                continue
            except FileNotFoundError:
                break  # the day folder is gone: nothing to compact
            try:
                os.write(fd, holder_text())
            finally:
                os.close(fd)
            held = True
            break
        try:
            yield held
        finally:
            if held:
                _remove(path)


def _remove(path: str) -> None:
    """Delete the lock file; one gone already (or undeletable) is left."""
    with contextlib.suppress(OSError):
        os.remove(path)
