"""``searchkit`` run as a real process, as a user runs it (the CLI tests' one way to do so)."""

from __future__ import annotations

import os
import subprocess
import sys

__all__ = ["finish", "searchkit", "service_env"]


def service_env(url: str, username: str, password: str, **more: str) -> dict[str, str]:
    """This process's environment, pointed at the service at ``url`` with an account."""
    return {
        **os.environ,
        "SEARCHKIT_BASE_URL": url,
        "SEARCHKIT_USERNAME": username,
        "SEARCHKIT_PASSWORD": password,
        **more,
    }


def searchkit(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    """Start ``python -m searchkit ARGS`` with ``env``, its output captured as text."""
    return subprocess.Popen(
        [sys.executable, "-m", "searchkit", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def finish(process: subprocess.Popen[str], timeout: float = 120) -> tuple[str, str]:
    """Wait for ``process`` (killed if it outlives ``timeout``); return its stdout, stderr."""
    try:
        return process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
