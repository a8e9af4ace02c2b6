"""Shared fixtures: an emulator of the API on 127.0.0.1 and a free port, and its client."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import settings

# Property tests assert correctness, not speed: on a busy 2-core CI machine a per-example
# deadline would fail them for a GC pause. Speed is what bench/ measures.
settings.register_profile("searchkit", deadline=None, print_blob=True)
settings.load_profile("searchkit")


def pytest_configure(config: pytest.Config) -> None:
    # searchkit's own code and tests speak 0.2.0: an old spelling outside pytest.warns fails.
    config.addinivalue_line(
        "filterwarnings", "error:.*the old spelling goes in searchkit:DeprecationWarning"
    )


#: A fixed instant for tests that need the emulator's clock to stand still.
FIXED_CLOCK = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)


@pytest.fixture(autouse=True)
def _no_searchkit_environment(monkeypatch):
    # A developer's real credentials must never leak into (or steer) a test.
    for name in (
        "SEARCHKIT_BASE_URL",
        "SEARCHKIT_USERNAME",
        "SEARCHKIT_PASSWORD",
        "SEARCHKIT_TIMEOUT",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def emulator():
    from searchkit.emulator import Emulator

    with Emulator(seed=7, clock=FIXED_CLOCK) as emu:
        yield emu


@pytest.fixture
def client(emulator):
    with emulator.client(timeout=5, max_retries=0) as c:
        yield c
