"""Fixtures of the alert delivery tests: a real SMTP server on loopback, a store, notices.

Webhook receivers are the fault harness (``tests/faults/harness.py``): a real HTTP server on
127.0.0.1 that answers 200, 500 or 404, hangs, or drops the connection, as scripted.
"""

from __future__ import annotations

import socket
import threading

import pandas as pd
import pytest

from searchkit.alerts.notices import Notice
from searchkit.history.store import History

#: A Slack-like webhook path whose token must never show anywhere but on the wire.
HOOK_TOKEN = "T0SECRET/B0SECRET/hookTokenXyZ123"
#: The SMTP password of the test server's one account.
SMTP_PASSWORD = "smtp-pw-Qz81-never-shown"
SMTP_USER = "alerts@example.test"


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


class Inbox:
    """What the SMTP server received: envelopes and the logins it saw."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, list[str], bytes]] = []
        self.logins: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    async def handle_DATA(self, server, session, envelope):  # aiosmtpd's handler hook
        with self.lock:
            self.messages.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.content))
        return "250 OK"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def smtp_server():
    """A real SMTP server on 127.0.0.1 with one login (plain AUTH allowed on loopback)."""
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult

    inbox = Inbox()

    def authenticator(server, session, envelope, mechanism, auth_data):
        user = auth_data.login.decode()
        password = auth_data.password.decode()
        with inbox.lock:
            inbox.logins.append((user, password))
        # handled=False: aiosmtpd answers a refusal with 535 itself (True would answer nothing).
        return AuthResult(success=user == SMTP_USER and password == SMTP_PASSWORD, handled=False)

    controller = Controller(
        inbox,
        hostname="127.0.0.1",
        port=_free_port(),
        authenticator=authenticator,
        auth_require_tls=False,
    )
    controller.start()
    try:
        yield controller, inbox
    finally:
        controller.stop()
