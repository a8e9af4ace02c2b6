"""Fixtures of the alert delivery tests: a store, notices; the receivers' options.

Webhook receivers are ``server`` (tests/conftest.py, the fault harness): a real HTTP server
on 127.0.0.1 that answers 200, 500 or 404, hangs, or drops the connection, as scripted.
E-mail goes to ``smtp`` (tests/conftest.py), a real SMTP server on loopback.
"""

from __future__ import annotations

import pandas as pd
import pytest

from searchkit.alerts.notices import Notice
from searchkit.history.usage_history import History

from .smtp import SMTP_PASSWORD, SMTP_USER

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
def server_options():
    """Here ``server`` is a webhook receiver that may hang up to 30 s (a round's budget)."""
    return {"max_hang": 30}
