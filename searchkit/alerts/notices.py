"""What one alert message says: the facts a person needs to act, and their one wording.

A :class:`Notice` is one incident's transition as the channels send it: which index and
limit, what was used and the limit, when the forecast expects the limit to be hit (with
its band), when the data were collected, and how often this index's forecasts were right
in its backtest. :func:`notice_text` words it once; the webhook, Slack, e-mail and log
channels all send that wording, so a person reads the same thing wherever it arrives.
Secrets have no place here: a notice carries no token, no URL and no password.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pandas as pd

__all__ = ["STATES", "Notice", "notice_text", "short_time", "subject_text", "trial_notice"]

#: The states a notice reports, as the incident model names them, plus ``test``.
STATES = ("firing", "resolved", "breached", "test")


@dataclasses.dataclass(frozen=True)
class Notice:
    """One incident transition as it is sent.

    Attributes:
        key: The incident's stable key (the Alertmanager ``fingerprint``; receivers drop a
            repeat by it).
        state: ``firing``, ``resolved``, ``breached``, or ``test`` for ``alerts --test``.
        at: When the transition happened (aware UTC).
        rule: The rule's name.
        index_id: The index's id (empty for an incident about the collector itself).
        name: The index's name (or what the incident is about).
        field: The limit (``max_daily_queries``, ``max_daily_updates`` or their sum).
        period: Start of the limit's period (a UTC day); None when none.
        used: Operations used so far in the period; NaN when unknown.
        limit: The limit in operations; NaN when unknown, inf when unlimited.
        hit_at: When the forecast expects the limit to be hit (or when it was); None when
            not before the reset.
        hit_at_earliest: The band's early end of ``hit_at`` (None when none).
        hit_at_latest: The band's late end of ``hit_at`` (None: not before the reset).
        as_of: When the data the notice rests on were collected.
        started_at: When the incident began (its first firing).
        accuracy: How often this index's forecasts were right in its backtest, as a
            sentence (empty when no backtest could say).
        detail: A sentence the incident model adds (e.g. why it resolved); may be empty.
    """

    key: str
    state: str
    at: pd.Timestamp
    rule: str = ""
    index_id: str = ""
    name: str = ""
    field: str = ""
    period: pd.Timestamp | None = None
    used: float = math.nan
    limit: float = math.nan
    hit_at: pd.Timestamp | None = None
    hit_at_earliest: pd.Timestamp | None = None
    hit_at_latest: pd.Timestamp | None = None
    as_of: pd.Timestamp | None = None
    started_at: pd.Timestamp | None = None
    accuracy: str = ""
    detail: str = ""

    def labels(self) -> dict[str, str]:
        """The incident's identity as Alertmanager labels (texts, empty ones left out)."""
        labels = {
            "alertname": "SearchkitLimit" if self.index_id else "SearchkitCollector",
            "rule": self.rule,
            "index_id": self.index_id,
            "index": self.name,
            "field": self.field,
            "period": "" if self.period is None else f"{self.period:%Y-%m-%d}",
        }
        return {k: v for k, v in labels.items() if v}

    def facts(self) -> dict[str, str]:
        """The figures as texts (Alertmanager annotations, e-mail lines)."""
        facts = {
            "used": _operations(self.used),
            "limit": _limit_text(self.limit),
            "utilization": _share(self.used, self.limit),
            "hit_at": short_time(self.hit_at),
            "hit_at_earliest": short_time(self.hit_at_earliest),
            "hit_at_latest": short_time(self.hit_at_latest),
            "data_collected_at": short_time(self.as_of),
            "backtest": self.accuracy,
        }
        return {k: v for k, v in facts.items() if v}


def short_time(moment: Any) -> str:
    """An instant as ``2026-11-20 16:40 UTC``; empty for NaT or None."""
    if moment is None or pd.isna(moment):
        return ""
    stamp = pd.Timestamp(moment)
    stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
    return f"{stamp:%Y-%m-%d %H:%M} UTC"


def _clock(moment: Any) -> str:
    """An instant as ``16:40 UTC`` (the day is the period's)."""
    text = short_time(moment)
    return text[11:] if text else ""


def _operations(value: float) -> str:
    if value is None or not math.isfinite(value):
        return ""
    return f"{value:,.0f}"


def _limit_text(limit: float) -> str:
    if limit is None or math.isnan(limit):
        return ""
    return "unlimited" if math.isinf(limit) else f"{limit:,.0f}"


def _share(used: float, limit: float) -> str:
    if used is None or limit is None or not (math.isfinite(used) and math.isfinite(limit)):
        return ""
    if limit <= 0:
        return ""
    return f"{used / limit:.0%}"


def subject_text(notice: Notice) -> str:
    """A one-line title: state, what, and when (an e-mail subject, a Slack first line)."""
    what = f"{notice.name} {notice.field}".strip() or notice.rule
    if notice.state == "test":
        return "[TEST] searchkit alerts: a test message"
    if notice.state == "breached":
        when = _clock(notice.hit_at) or _clock(notice.at)
        return f"[BREACHED] {what}: the limit was hit at {when}"
    if notice.state == "resolved":
        return f"[RESOLVED] {what}"
    when = _clock(notice.hit_at)
    return f"[FIRING] {what}" + (f": expected to hit the limit at {when}" if when else "")


def notice_text(notice: Notice) -> str:
    """Word a notice for a person: what happened, the figures, how far to trust them.

    Example:
        >>> import pandas as pd
        >>> n = Notice(key="k1", state="firing", at=pd.Timestamp("2026-11-20 09:10Z"),
        ...     rule="forecast", index_id="i-1", name="code-snippets",
        ...     field="max_daily_queries", used=612_000, limit=1_000_000,
        ...     hit_at=pd.Timestamp("2026-11-20 16:40Z"),
        ...     hit_at_earliest=pd.Timestamp("2026-11-20 15:50Z"),
        ...     hit_at_latest=pd.Timestamp("2026-11-20 17:30Z"),
        ...     as_of=pd.Timestamp("2026-11-20 09:10Z"),
        ...     accuracy="its breach calls were right on 26 of 28 past days")
        >>> print(notice_text(n))
        [FIRING] code-snippets max_daily_queries: expected to hit the limit at 16:40 UTC
        Index code-snippets (i-1), limit max_daily_queries: used 612,000 of 1,000,000 (61%).
        Expected to hit the limit at 2026-11-20 16:40 UTC (band 15:50 UTC to 17:30 UTC).
        Data collected at 2026-11-20 09:10 UTC.
        Backtest: its breach calls were right on 26 of 28 past days.
        Rule forecast; incident k1.
    """
    lines = [subject_text(notice)]
    if notice.state == "test":
        lines.append(
            "This is a test of searchkit's alert channels: nothing is wrong. Real messages "
            "name the index, the limit, what was used, when the limit is expected to be "
            "hit and how often this index's forecasts were right."
        )
        return "\n".join(lines)
    if notice.index_id or notice.field:
        used = _operations(notice.used)
        limit = _limit_text(notice.limit)
        share = _share(notice.used, notice.limit)
        figures = f"used {used or 'unknown'} of {limit or 'an unknown limit'}"
        figures += f" ({share})" if share else ""
        lines.append(f"Index {notice.name} ({notice.index_id}), limit {notice.field}: {figures}.")
    lines.append(_when_line(notice))
    if not pd.isna(notice.as_of):
        lines.append(f"Data collected at {short_time(notice.as_of)}.")
    if notice.accuracy:
        lines.append(f"Backtest: {notice.accuracy}.")
    if notice.detail:
        detail = notice.detail.rstrip(".")
        lines.append(detail[:1].upper() + detail[1:] + ".")
    lines.append(f"Rule {notice.rule}; incident {notice.key}.")
    return "\n".join(line for line in lines if line)


def _when_line(notice: Notice) -> str:
    """The sentence about the hit time, by state."""
    if notice.state == "breached":
        return f"The limit was hit at {short_time(notice.hit_at) or short_time(notice.at)}."
    if notice.state == "resolved":
        return f"Resolved at {short_time(notice.at)}."
    if pd.isna(notice.hit_at):
        return "The forecast does not reach the limit before the reset." if notice.field else ""
    band = ""
    if not pd.isna(notice.hit_at_earliest) or not pd.isna(notice.hit_at_latest):
        early = _clock(notice.hit_at_earliest) or "now"
        late = _clock(notice.hit_at_latest) or "after the reset"
        band = f" (band {early} to {late})"
    return f"Expected to hit the limit at {short_time(notice.hit_at)}{band}."


def trial_notice(at: pd.Timestamp) -> Notice:
    """The notice ``searchkit alerts --test`` sends to every channel."""
    return Notice(key=f"searchkit-test-{at.value}", state="test", at=at, rule="test")
