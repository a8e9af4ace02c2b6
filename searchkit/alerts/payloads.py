"""The bodies channels send: Alertmanager's webhook JSON, Slack's text, an e-mail.

The webhook body follows Prometheus Alertmanager's webhook format, version 4, so receivers
and relays written for Alertmanager take it as they are: one message per incident
transition, the incident's key as the alert's ``fingerprint`` (an alert is identified by
its labels and fingerprint, never by the text of its message), ``status`` ``firing`` or
``resolved``. A breach is ``firing`` with the annotation ``state: breached`` (Alertmanager
knows two statuses; the incident stays the same alert).
"""

from __future__ import annotations

import email.message
import email.utils
from typing import Any

import pandas as pd

from searchkit.alerts.notices import Notice, notice_text, subject_text

__all__ = ["ZERO_TIME", "alertmanager_payload", "email_message", "rfc3339", "slack_payload"]

#: What Alertmanager writes as ``endsAt`` of an alert still firing.
ZERO_TIME = "0001-01-01T00:00:00Z"


def rfc3339(moment: Any) -> str:
    """An instant as Alertmanager writes it (``2026-11-20T16:40:00Z``); NaT as zero time."""
    if moment is None or pd.isna(moment):
        return ZERO_TIME
    stamp = pd.Timestamp(moment)
    stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
    return stamp.strftime("%Y-%m-%dT%H:%M:%S") + (
        f".{stamp.microsecond // 1000:03d}Z" if stamp.microsecond else "Z"
    )


def alertmanager_payload(
    notice: Notice, *, receiver: str, external_url: str = ""
) -> dict[str, Any]:
    """Return the Alertmanager (version 4) webhook body of one notice.

    Example:
        >>> import pandas as pd
        >>> body = alertmanager_payload(
        ...     Notice(key="k1", state="resolved", at=pd.Timestamp("2026-11-20 18:00Z"),
        ...            rule="r", index_id="i-1", name="docs", field="max_daily_queries",
        ...            started_at=pd.Timestamp("2026-11-20 09:00Z")),
        ...     receiver="ops")
        >>> body["version"], body["status"], body["alerts"][0]["fingerprint"]
        ('4', 'resolved', 'k1')
        >>> body["alerts"][0]["startsAt"], body["alerts"][0]["endsAt"]
        ('2026-11-20T09:00:00Z', '2026-11-20T18:00:00Z')
    """
    status = "resolved" if notice.state == "resolved" else "firing"
    labels = notice.labels()
    annotations = {
        "summary": subject_text(notice),
        "description": notice_text(notice),
        "state": notice.state,
        **notice.facts(),
    }
    started = notice.at if pd.isna(notice.started_at) else notice.started_at
    alert = {
        "status": status,
        "labels": labels,
        "annotations": annotations,
        "startsAt": rfc3339(started),
        "endsAt": rfc3339(notice.at) if status == "resolved" else ZERO_TIME,
        "generatorURL": external_url,
        "fingerprint": notice.key,
    }
    return {
        "version": "4",
        "groupKey": f'{{}}:{{fingerprint="{notice.key}"}}',
        "truncatedAlerts": 0,
        "status": status,
        "receiver": receiver,
        "groupLabels": dict(labels),
        "commonLabels": dict(labels),
        "commonAnnotations": dict(annotations),
        "externalURL": external_url,
        "alerts": [alert],
    }


def _slack_escape(text: str) -> str:
    """Escape what Slack's text reads as markup (``&``, ``<``, ``>``)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_payload(notice: Notice) -> dict[str, Any]:
    """Return the body of a Slack incoming webhook: the notice's text, title in bold.

    Example:
        >>> import pandas as pd
        >>> notice = Notice(key="k", state="test", at=pd.Timestamp("2026-11-20Z"))
        >>> slack_payload(notice)["text"][:40]
        '*[TEST] searchkit alerts: a test message'
    """
    first, _, rest = notice_text(notice).partition("\n")
    text = f"*{_slack_escape(first)}*"
    if rest:
        text += "\n" + _slack_escape(rest)
    return {"text": text}


def email_message(notice: Notice, *, sender: str, to: list[str]) -> email.message.EmailMessage:
    """Return the e-mail of one notice (plain text; the key in a header for filters)."""
    message = email.message.EmailMessage()
    message["Subject"] = subject_text(notice)
    message["From"] = sender
    message["To"] = ", ".join(to)
    message["Date"] = email.utils.format_datetime(pd.Timestamp(notice.at).to_pydatetime())
    message["X-Searchkit-Incident"] = notice.key
    message["X-Searchkit-State"] = notice.state
    message.set_content(notice_text(notice) + "\n")
    return message
