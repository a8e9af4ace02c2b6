"""A real SMTP server on loopback for the alert tests (aiosmtpd), and what it received."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

#: The SMTP password of the test server's one account.
SMTP_PASSWORD = "smtp-pw-Qz81-never-shown"
SMTP_USER = "alerts@example.test"


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


@contextlib.contextmanager
def smtp_server() -> Iterator[tuple[Any, Inbox]]:
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
