"""Fixtures of the emulator tests: the emulator's options here, users, an authenticated session.

``emulator`` itself is tests/conftest.py's; here it has :data:`USER`, a fixed clock and a
short window (:data:`EMULATOR_OPTIONS`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest
import requests

from searchkit.emulator import Emulator

#: The emulator clock of these tests: a fixed instant, mid-minute on purpose, with the
#: America/St_Johns switch to daylight time (05:30 UTC that day) inside the last 24 hours.
NOW = dt.datetime(2024, 3, 10, 18, 30, 15, tzinfo=dt.timezone.utc)
NOW_EPOCH = int(NOW.timestamp())
USER = ("alice", "alice-pw-4f1c")
OTHER_USER = ("bob", "bob-pw-9d2e")
READ_ONLY_USER = ("rita", "rita-pw-7a3b")


#: The emulator of these tests: :data:`USER`, a fixed clock, a short window.
EMULATOR_OPTIONS = {"users": [USER], "seed": 11, "clock": NOW, "window_minutes": 60}


@pytest.fixture
def emulator_options() -> dict[str, object]:
    return dict(EMULATOR_OPTIONS)


@pytest.fixture
def other_user(emulator: Emulator) -> tuple[str, str]:
    """Add a second read-write account and return its credentials."""
    emulator.add_user(*OTHER_USER)
    return OTHER_USER


@pytest.fixture
def read_only_user(emulator: Emulator) -> tuple[str, str]:
    """Add a read-only account and return its credentials."""
    emulator.add_user(*READ_ONLY_USER, read_only=True)
    return READ_ONLY_USER


@pytest.fixture
def api(emulator: Emulator) -> str:
    """Return the full URL of the search index collection."""
    return f"{emulator.url}/v2/search"


@pytest.fixture
def http() -> Iterator[requests.Session]:
    """Yield a session authenticated as the first user."""
    with requests.Session() as session:
        session.auth = USER
        yield session
