"""Fixtures of the alert delivery tests: a real SMTP server on loopback, a store, notices.

Webhook receivers are the fault harness (``tests/faults/harness.py``): a real HTTP server on
127.0.0.1 that answers 200, 500 or 404, hangs, or drops the connection, as scripted.
"""

from __future__ import annotations

import pandas as pd
import pytest

from searchkit.alerts.notices import Notice
from searchkit.history.usage_history import History

from .smtp import SMTP_PASSWORD, SMTP_USER, smtp_server

__all__ = ["HOOK_TOKEN", "SMTP_PASSWORD", "SMTP_USER", "firing"]

#: A Slack-like webhook path whose token must never show anywhere but on the wire.
HOOK_TOKEN = "T0SECRET/B0SECRET/hookTokenXyZ123"


def firing(key: str = "inc-1", **changes: object) -> Notice:
    """A firing notice of the demo's evening index, with figures a person acts on."""
    base = dict(
        key=key,
        state="firing",
        at=pd.Timestamp("2026-11-20 09:10", tz="UTC"),
        rule="forecast-default",
        index_id="6f1c-evening",
        name="code-snippets",
        field="max_daily_queries",
        period=pd.Timestamp("2026-11-20", tz="UTC"),
        used=612_000.0,
        limit=1_000_000.0,
        hit_at=pd.Timestamp("2026-11-20 16:40", tz="UTC"),
        hit_at_earliest=pd.Timestamp("2026-11-20 15:50", tz="UTC"),
        hit_at_latest=pd.Timestamp("2026-11-20 17:30", tz="UTC"),
        as_of=pd.Timestamp("2026-11-20 09:10", tz="UTC"),
        started_at=pd.Timestamp("2026-11-20 09:10", tz="UTC"),
        accuracy="its breach calls were right on 26 of 28 past days",
    )
    base.update(changes)
    return Notice(**base)  # type: ignore[arg-type]


@pytest.fixture
def store(tmp_path):
    return History(tmp_path / "store")


@pytest.fixture
def smtp():
    """A real SMTP server on 127.0.0.1: ``(controller, inbox)``."""
    with smtp_server() as server:
        yield server
