"""``connect()``: a client of the configured service, else of a demo emulator started here.

One demo emulator per set of options lives per process (per kernel), so re-running
``client = sk.connect()`` in a notebook reuses it instead of starting another each time.
It stops when a client of it is closed, when :func:`close_demo` is called, or when the
process ends. Starting one is said calmly: a note in a notebook (a display, not a red
stderr box that reads as an error), a line on stderr in a terminal, and a log record at
INFO (logger ``searchkit``) either way.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from typing import TYPE_CHECKING, Any

from searchkit.api.client import Client
from searchkit.api.config import ENV_BASE_URL, ENV_PASSWORD, ENV_USERNAME
from searchkit.errors import ConfigError

if TYPE_CHECKING:
    from searchkit.emulator import Emulator

__all__ = ["close_demo", "connect"]

log = logging.getLogger("searchkit")

_lock = threading.Lock()
# Running demo emulators, by the options they were started with.
_demos: dict[tuple[tuple[str, Any], ...], Emulator] = {}


def connect(**emulator_options: Any) -> Client:
    """Return a client of the configured service, or of a demo emulator started here.

    With ``SEARCHKIT_BASE_URL`` set, this is ``Client()`` from the environment. Without it
    (and without credentials in the environment), a demo emulator starts in this process
    on 127.0.0.1 (it says so). Calling again with the same options returns a new client of
    the same emulator. Closing a client of it stops it, for every client of it.

    Args:
        **emulator_options: Passed to :class:`searchkit.Emulator` when one is started,
            e.g. ``seed=7`` and ``clock=...`` for repeatable notebooks.

    Raises:
        ConfigError: ``SEARCHKIT_USERNAME``/``SEARCHKIT_PASSWORD`` are set but
            ``SEARCHKIT_BASE_URL`` is not: credentials meant for a real service are never
            silently swapped for the demo.

    Example:
        >>> client = sk.connect(seed=7)
        >>> client.close()   # also stops the demo emulator
    """
    if os.environ.get(ENV_BASE_URL):
        return Client()
    set_names = [n for n in (ENV_USERNAME, ENV_PASSWORD) if os.environ.get(n)]
    if set_names:
        raise ConfigError(
            f"{' and '.join(set_names)} {'is' if len(set_names) == 1 else 'are'} set but "
            f"{ENV_BASE_URL} is not: set {ENV_BASE_URL} to the service's address (e.g. "
            f"https://api.example.com), or unset {' and '.join(set_names)} to use the demo "
            "emulator"
        )
    emulator_options.setdefault("demo", True)
    key = _key(emulator_options)
    with _lock:
        emulator = _demos.get(key) if key is not None else None
        if emulator is not None and not emulator.running:
            emulator = None  # stopped by someone else: start a fresh one
        started = emulator is None
        if emulator is None:
            from searchkit.emulator import Emulator

            emulator = Emulator(**emulator_options)
            emulator.start()
            if key is not None:
                _demos[key] = emulator
    if started:
        _announce(
            f"{ENV_BASE_URL} is not set, so a demo emulator was started at {emulator.url} "
            "(synthetic data, nothing leaves this machine)"
        )
    return Client(
        username=emulator.username,
        password=emulator.password,
        base_url=emulator.url,
        on_close=lambda: _stop(emulator),
    )


def _announce(text: str) -> None:
    """Say ``text`` where the user looks: a note in a notebook, else a line on stderr."""
    log.info(text)
    if _in_kernel():
        from IPython.display import display

        from searchkit.render.html import note_html

        plain = f"searchkit: {text}"
        display({"text/plain": plain, "text/html": note_html(plain)}, raw=True)  # type: ignore[no-untyped-call]
    else:
        print(f"searchkit: {text}", file=sys.stderr)


def _in_kernel() -> bool:
    # Only when IPython is already imported: a script must not pay for importing it.
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and getattr(shell, "kernel", None) is not None


def close_demo() -> int:
    """Stop every demo emulator :func:`connect` started in this process.

    Returns:
        How many were stopped.
    """
    with _lock:
        running = list(_demos.values())
        _demos.clear()
    for emulator in running:
        emulator.stop()
    return len(running)


def _stop(emulator: Emulator) -> None:
    with _lock:
        for key, value in list(_demos.items()):
            if value is emulator:
                del _demos[key]
    emulator.stop()


def _key(options: dict[str, Any]) -> tuple[tuple[str, Any], ...] | None:
    """Options as a dict key; None when one cannot be compared (then nothing is reused)."""
    key = tuple(sorted((name, _frozen(value)) for name, value in options.items()))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _frozen(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    return value
