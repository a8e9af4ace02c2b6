"""Where alert messages go: a webhook (Alertmanager JSON or Slack text), e-mail, a log line.

Each channel sends one :class:`~searchkit.alerts.notices.Notice` within a timeout the caller
gives (what is left of the collect round's budget) and says how it went as an
:class:`Outcome`: ``sent``; ``failed`` (the receiver is down, slow or dropped the
connection: worth another try in a later round); or ``misconfigured`` (the receiver
refused the message in a way no retry fixes: a 4xx answer, a wrong login, a refused
address; reported, not retried).

A channel never shows its secrets: a webhook's URL (Slack's carries a token in its path)
shows as its scheme and host with the rest masked, an SMTP password not at all, in reprs,
outcomes and errors alike. Failures are worded by searchkit, never by copying an
exception's text, which may quote the URL.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import smtplib
import ssl
from typing import Literal
from urllib.parse import urlsplit

import urllib3
from urllib3.exceptions import (
    ConnectTimeoutError,
    HTTPError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
)

from searchkit._net import is_loopback_host
from searchkit._version import __version__
from searchkit.alerts.notices import Notice, notice_text
from searchkit.alerts.payloads import alertmanager_payload, email_message, slack_payload
from searchkit.errors import ValidationError
from searchkit.model.secret import MASK, Secret

__all__ = [
    "LOGGER_NAME",
    "Channel",
    "EmailChannel",
    "LogChannel",
    "Outcome",
    "WebhookChannel",
    "masked_url",
]

#: The logger the log channel writes to (and delivery reports on).
LOGGER_NAME = "searchkit.alerts"

Result = Literal["sent", "failed", "misconfigured"]


@dataclasses.dataclass(frozen=True)
class Outcome:
    """How one send went.

    Attributes:
        result: ``sent``, ``failed`` (try again later) or ``misconfigured`` (no retry
            fixes it: reported, not retried).
        detail: What happened, in searchkit's words (no secret in it).
        status: The receiver's HTTP status or SMTP reply code, when it gave one.
    """

    result: Result
    detail: str
    status: int | None = None


def masked_url(url: str) -> str:
    """Show a webhook URL as its scheme and host, the rest (where tokens live) masked.

    Example:
        >>> masked_url("https://hooks.slack.com/services/T000/B000/XXXXXXXX")
        'https://hooks.slack.com/••••••••'
        >>> masked_url("http://user:pw@127.0.0.1:9000/hook?token=x")
        'http://127.0.0.1:9000/••••••••'
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return MASK
    if not parts.scheme or not host:
        return MASK
    host = f"[{host}]" if ":" in host else host
    rest = "/" + MASK if (parts.path.strip("/") or parts.query or parts.fragment) else ""
    return f"{parts.scheme}://{host}{port}{rest}"


class Channel:
    """A place alert messages go. Subclasses implement :meth:`send`.

    Attributes:
        name: The channel's name (from the rules file; shown in reports and records).
        kind: ``webhook``, ``email`` or ``log``.
        timeout: Most seconds one send may take (less when the round's budget is short).
        send_resolved: Whether ``resolved`` transitions are sent too.
    """

    kind = "channel"

    def __init__(self, name: str, *, timeout: float = 5.0, send_resolved: bool = True) -> None:
        self.name = name
        self.timeout = float(timeout)
        self.send_resolved = send_resolved

    def wants(self, notice: Notice) -> bool:
        """Whether this channel sends ``notice`` at all."""
        return self.send_resolved or notice.state != "resolved"

    def send(self, notice: Notice, *, timeout: float) -> Outcome:
        """Send one notice, taking at most about ``timeout`` seconds."""
        raise NotImplementedError

    def describe(self) -> str:
        """Where this channel sends, secrets masked (for reports and records)."""
        return self.kind

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self.describe()})"


class WebhookChannel(Channel):
    """POST each notice as JSON: Alertmanager's webhook body, or Slack's text.

    Args:
        url: The receiver's URL (a :class:`~searchkit.Secret` or text; kept as a Secret:
            a Slack URL carries its token in the path). ``http://`` only to loopback
            unless ``allow_http``.
        name: The channel's name.
        format: ``"alertmanager"`` (default) or ``"slack"``.
        receiver: The Alertmanager ``receiver`` field (default: the channel's name).
        external_url: Alertmanager's ``externalURL`` and each alert's ``generatorURL``.
        timeout: Most seconds one POST may take.
        allow_http: Allow plain ``http://`` to a host other than this machine.
        send_resolved: Also send resolved incidents.

    Raises:
        ValidationError: The URL is not an http(s) URL with a host, is plain http to a
            remote host without ``allow_http``, or ``format`` is unknown (the URL masked).
    """

    kind = "webhook"

    def __init__(
        self,
        url: str | Secret,
        *,
        name: str = "webhook",
        format: str = "alertmanager",
        receiver: str | None = None,
        external_url: str = "",
        timeout: float = 5.0,
        allow_http: bool = False,
        send_resolved: bool = True,
    ) -> None:
        super().__init__(name, timeout=timeout, send_resolved=send_resolved)
        secret = Secret(url)
        text = secret.get_secret_value()
        shown = masked_url(text)
        if format not in ("alertmanager", "slack"):
            raise ValidationError(
                f"channel {name!r}: format must be 'alertmanager' or 'slack', got {format!r}"
            )
        try:
            parts = urlsplit(text)
            host = parts.hostname or ""
            parts.port  # noqa: B018 - a port that is not a number raises here
        except ValueError:
            raise ValidationError(
                f"channel {name!r}: the webhook URL {shown} is not a URL"
            ) from None
        if parts.scheme not in ("http", "https") or not host:
            raise ValidationError(
                f"channel {name!r}: the webhook URL {shown} must be an http:// or https:// "
                "URL with a host"
            )
        if parts.scheme == "http" and not is_loopback_host(host) and not allow_http:
            raise ValidationError(
                f"channel {name!r}: the webhook URL {shown} is plain http to another "
                "machine, which would send its token in clear: use https, or set "
                "allow_http = true for a receiver on a trusted network"
            )
        if parts.username or parts.password:
            raise ValidationError(
                f"channel {name!r}: the webhook URL {shown} carries a user name or "
                "password; put the credential in the path or query the receiver reads"
            )
        self.url = secret
        self.format = format
        self.receiver = receiver or name
        self.external_url = external_url
        self._pool = urllib3.PoolManager(retries=False, maxsize=1, block=False)

    def describe(self) -> str:
        return f"{self.format} webhook {masked_url(self.url.get_secret_value())}"

    def body(self, notice: Notice) -> bytes:
        """The JSON this channel POSTs for ``notice``."""
        if self.format == "slack":
            payload = slack_payload(notice)
        else:
            payload = alertmanager_payload(
                notice, receiver=self.receiver, external_url=self.external_url
            )
        return json.dumps(payload, ensure_ascii=False).encode("utf-8")

    def send(self, notice: Notice, *, timeout: float) -> Outcome:
        wait = max(0.001, min(self.timeout, timeout))
        try:
            response = self._pool.request(
                "POST",
                self.url.get_secret_value(),
                body=self.body(notice),
                headers={
                    "Content-Type": "application/json",
                    "User-Agent": f"searchkit/{__version__}",
                },
                timeout=urllib3.Timeout(total=wait),
                retries=False,
                redirect=False,
                preload_content=False,
            )
        except NewConnectionError:  # before its base class ConnectTimeoutError
            return Outcome("failed", "could not connect (refused or unreachable)")
        except (ConnectTimeoutError, ReadTimeoutError, TimeoutError):
            return Outcome("failed", f"no answer within {wait:.1f} s")
        except ProtocolError:
            return Outcome("failed", "the connection was dropped before an answer")
        except HTTPError as exc:  # TLS, name resolution, ...: named by class, never text
            return Outcome("failed", f"the request failed ({type(exc).__name__})")
        try:
            status = response.status
        finally:
            response.close()  # the body is not needed; never wait for it
        return _http_outcome(status)


def _http_outcome(status: int) -> Outcome:
    """What a webhook answer's status means for delivery."""
    if 200 <= status < 300:
        return Outcome("sent", f"HTTP {status}", status)
    if status in (408, 425, 429) or status >= 500:
        return Outcome("failed", f"HTTP {status}: the receiver could not take it now", status)
    if 300 <= status < 400:
        return Outcome(
            "misconfigured",
            f"HTTP {status}: the receiver redirects, and alerts do not follow redirects "
            "(the URL's token would go elsewhere): configure the final URL",
            status,
        )
    if 400 <= status < 500:
        return Outcome(
            "misconfigured",
            f"HTTP {status}: the receiver refused the message; check the URL and the "
            "format (not retried)",
            status,
        )
    return Outcome("failed", f"HTTP {status}: an answer that is not a result", status)


class EmailChannel(Channel):
    """Send each notice as a plain-text e-mail over SMTP.

    STARTTLS is used (and required) unless the server is on this machine (a local relay);
    the login, when one is given, is sent only after it.

    Args:
        host: The SMTP server.
        sender: The From address.
        to: The recipients.
        port: The server's port (default 587 with STARTTLS, else 25).
        username: The login (None: no login).
        password: The login's password (kept as a :class:`~searchkit.Secret`).
        starttls: Force STARTTLS on or off; None (default) is on unless ``host`` is
            loopback. Off towards another machine is refused when a login is given.
        name: The channel's name.
        timeout: Most seconds one e-mail may take.
        send_resolved: Also send resolved incidents.

    Raises:
        ValidationError: No recipient, no sender, or a login that would cross the network
            in clear.
    """

    kind = "email"

    def __init__(
        self,
        host: str,
        *,
        sender: str,
        to: list[str],
        port: int | None = None,
        username: str | None = None,
        password: str | Secret | None = None,
        starttls: bool | None = None,
        name: str = "email",
        timeout: float = 10.0,
        send_resolved: bool = True,
    ) -> None:
        super().__init__(name, timeout=timeout, send_resolved=send_resolved)
        if not host.strip():
            raise ValidationError(f"channel {name!r}: host is empty")
        if not sender.strip():
            raise ValidationError(f"channel {name!r}: sender is empty")
        if not to or any(not address.strip() for address in to):
            raise ValidationError(f"channel {name!r}: to must list at least one address")
        loopback = is_loopback_host(host)
        self.starttls = (not loopback) if starttls is None else starttls
        if username and not self.starttls and not loopback:
            raise ValidationError(
                f"channel {name!r}: a login without STARTTLS to {host} would send the "
                "password in clear; leave starttls on"
            )
        self.host = host
        self.port = port if port is not None else (587 if self.starttls else 25)
        self.sender = sender
        self.to = list(to)
        self.username = username
        self.password = None if password is None else Secret(password)

    def describe(self) -> str:
        login = f", login {self.username}" if self.username else ""
        tls = "STARTTLS" if self.starttls else "no TLS (loopback)"
        return f"e-mail via {self.host}:{self.port} ({tls}{login}) to {', '.join(self.to)}"

    def send(self, notice: Notice, *, timeout: float) -> Outcome:
        wait = max(0.001, min(self.timeout, timeout))
        message = email_message(notice, sender=self.sender, to=self.to)
        try:
            with smtplib.SMTP(self.host, self.port, timeout=wait) as server:
                server.ehlo()
                if self.starttls:
                    if not server.has_extn("starttls"):
                        return Outcome(
                            "misconfigured",
                            f"{self.host} offers no STARTTLS; not sending in clear",
                        )
                    server.starttls(context=ssl.create_default_context())
                    server.ehlo()
                if self.username:
                    secret = self.password.get_secret_value() if self.password else ""
                    server.login(self.username, secret)
                refused = server.send_message(message)
        except smtplib.SMTPAuthenticationError as exc:
            return Outcome("misconfigured", f"the server refused the login ({exc.smtp_code})")
        except smtplib.SMTPRecipientsRefused:
            return Outcome("misconfigured", "the server refused every recipient")
        except smtplib.SMTPNotSupportedError:
            return Outcome("misconfigured", "the server does not support the login asked for")
        except smtplib.SMTPResponseException as exc:
            code = int(exc.smtp_code)
            result: Result = "misconfigured" if 500 <= code < 600 else "failed"
            return Outcome(result, f"the server answered {code}", code)
        except (smtplib.SMTPServerDisconnected, smtplib.SMTPException):
            return Outcome("failed", "the server closed the connection before the end")
        except TimeoutError:
            return Outcome("failed", f"no answer within {wait:.1f} s")
        except ssl.SSLError as exc:
            return Outcome("failed", f"TLS failed ({type(exc).__name__})")
        except OSError as exc:
            return Outcome("failed", f"could not connect ({type(exc).__name__})")
        if refused:
            return Outcome("sent", f"sent, but {len(refused)} recipient(s) refused")
        return Outcome("sent", "accepted by the server", 250)


class LogChannel(Channel):
    """Write each notice as one log line of the ``searchkit.alerts`` logger.

    Args:
        name: The channel's name.
        level: The log level (default WARNING, which Python prints on stderr even when
            logging is not configured).
        send_resolved: Also log resolved incidents.
    """

    kind = "log"

    def __init__(
        self, *, name: str = "log", level: int | str = logging.WARNING, send_resolved: bool = True
    ) -> None:
        super().__init__(name, timeout=1.0, send_resolved=send_resolved)
        self.level = logging.getLevelName(level) if isinstance(level, str) else level
        if not isinstance(self.level, int):
            raise ValidationError(f"channel {name!r}: unknown log level {level!r}")

    def describe(self) -> str:
        return f"log line ({logging.getLevelName(self.level)}, logger {LOGGER_NAME})"

    def send(self, notice: Notice, *, timeout: float) -> Outcome:
        text = notice_text(notice).replace("\n", " | ")
        logging.getLogger(LOGGER_NAME).log(self.level, "%s", text)
        return Outcome("sent", "logged")
