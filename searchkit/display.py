"""Rendering of indexes as HTML (notebooks, widgets) and text (command line).

Every function here is safe to call from a ``_repr_html_``: it never raises, whatever the
data, and never puts a token or password in its output (tokens show masked). Text that came
from the service (names, endpoints, e-mails, unknown enum values) is always HTML-escaped.
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from searchkit.frames import format_limit
from searchkit.models import LIMIT_FIELDS, SearchIndex

if TYPE_CHECKING:
    from searchkit.models import IndexList

__all__ = [
    "LIMIT_LABELS",
    "MASK",
    "index_card_html",
    "index_list_html",
    "message_html",
]

#: Short human labels for the limit fields, with their units.
LIMIT_LABELS: dict[str, str] = {
    "max_vector_count": "vectors",
    "max_monthly_reranks": "reranks / month",
    "max_daily_updates": "updates / day",
    "max_daily_queries": "queries / day",
    "max_monthly_bandwidth": "bandwidth / month",
    "max_writes_per_second": "writes / s",
    "max_query_per_second": "queries / s",
    "max_reads_per_request": "reads / request",
    "max_writes_per_request": "writes / request",
}

#: What a present token looks like on screen; the same length whatever the token.
MASK = "••••••••"

_MESSAGE_KINDS = ("info", "success", "error")

_STYLE = (
    "<style>"
    ".sk-card{font-family:var(--jp-ui-font-family,sans-serif);font-size:13px;"
    "border:1px solid var(--jp-border-color2,#ddd);border-radius:6px;padding:8px 12px;"
    "max-width:640px}"
    ".sk-card h4{margin:0 0 4px 0;font-size:15px}"
    ".sk-card .sk-sub{color:var(--jp-ui-font-color2,#666);margin-bottom:6px}"
    ".sk-card table,.sk-list{border-collapse:collapse}"
    # JupyterLab right-aligns every td of rendered HTML with a more specific rule; the
    # repeated class outranks it without !important, so .sk-num can still align numbers.
    ".sk-card.sk-card.sk-card td,.sk-list.sk-list.sk-list td,.sk-list.sk-list.sk-list th"
    "{padding:2px 10px 2px 0;text-align:left}"
    ".sk-list td,.sk-list th{white-space:nowrap}"
    ".sk-num{text-align:right!important;font-variant-numeric:tabular-nums}"
    ".sk-unl{color:#2a7d2a;font-style:italic}"
    ".sk-masked{letter-spacing:1px;color:var(--jp-ui-font-color2,#666)}"
    ".sk-message{font-family:var(--jp-ui-font-family,sans-serif);font-size:13px;"
    "padding:4px 0}"
    ".sk-message.sk-error{color:var(--jp-error-color1,#b00020)}"
    ".sk-message.sk-success{color:var(--jp-success-color1,#2a7d2a)}"
    "</style>"
)


def _text(value: Any) -> str:
    if value is None:
        return "—"
    if hasattr(value, "value"):
        value = value.value
    return str(value) if str(value) != "" else "—"


def _created(index: SearchIndex) -> str:
    try:
        created = index.created
    except (OverflowError, OSError, ValueError):
        return "—"
    return created.strftime("%Y-%m-%d %H:%M UTC") if isinstance(created, dt.datetime) else "—"


def _masked(secret: str | None) -> str:
    return f'<span class="sk-masked">{MASK}</span>' if secret else "—"


def _enrichment(value: bool | None) -> str:
    return {True: "on", False: "off"}.get(value, "—") if isinstance(value, bool) else "—"


def _limit_cell(index: SearchIndex, field: str) -> str:
    text = format_limit(getattr(index, field, None), field)
    if text == "unlimited":
        return f'<td class="sk-num sk-unl">{text}</td>'
    return f'<td class="sk-num">{html.escape(text)}</td>'


def index_card_html(index: SearchIndex) -> str:
    """Return a compact HTML card of one index: plan, region, endpoint, limits, masked tokens.

    Args:
        index: The index to show.

    Returns:
        HTML with the class ``sk-card``; a short ``<pre>`` note if the data cannot be
        rendered at all. Never raises and never contains a token.

    Example:
        >>> card = index_card_html(SearchIndex.from_dict({"name": "docs", "token": "s3cr3t"}))
        >>> "docs" in card and "s3cr3t" not in card
        True
    """
    try:
        e = html.escape
        rows = [
            ("endpoint", e(_text(index.endpoint))),
            ("created", e(_created(index))),
            ("id", f"<code>{e(_text(index.id))}</code>"),
            ("input enrichment", _enrichment(index.input_enrichment_enabled)),
            ("token", _masked(index.token)),
            ("read-only token", _masked(index.read_only_token)),
        ]
        if index.partner_email:
            rows.insert(2, ("partner e-mail", e(index.partner_email)))
        info = "".join(f"<tr><td>{k}</td><td>{v}</td></tr>" for k, v in rows)
        limits = "".join(
            f"<tr><td>{LIMIT_LABELS[f]}</td>{_limit_cell(index, f)}</tr>" for f in LIMIT_FIELDS
        )
        points = len(index.throughput_raw)
        return (
            f'{_STYLE}<div class="sk-card"><h4>{e(_text(index.name))}</h4>'
            f'<div class="sk-sub">{e(_text(index.type))} plan · {e(_text(index.region))}'
            f" · {points:,} throughput points</div>"
            f"<table>{info}</table><table style='margin-top:6px'>{limits}</table></div>"
        )
    except Exception as exc:  # a display must never raise inside a notebook
        return f"<pre>SearchIndex (could not render: {html.escape(type(exc).__name__)})</pre>"


def index_list_html(indexes: IndexList | Iterable[SearchIndex]) -> str:
    """Return an HTML table of indexes, one row each, limits with "unlimited".

    Args:
        indexes: An IndexList or any iterable of SearchIndex.

    Returns:
        HTML with the class ``sk-list`` and a caption counting the indexes; a short
        ``<pre>`` note if the data cannot be rendered. Never raises, never shows a token.

    Example:
        >>> table = index_list_html([SearchIndex.from_dict({"name": "docs"})])
        >>> "1 index" in table
        True
    """
    try:
        e = html.escape
        items = list(indexes)
        head = "".join(
            f"<th>{h}</th>" for h in ("name", "plan", "region", "endpoint", "created")
        ) + "".join(f'<th class="sk-num">{LIMIT_LABELS[f]}</th>' for f in LIMIT_FIELDS)
        body = "".join(
            "<tr>"
            f"<td><b>{e(_text(i.name))}</b></td><td>{e(_text(i.type))}</td>"
            f"<td>{e(_text(i.region))}</td><td>{e(_text(i.endpoint))}</td>"
            f"<td>{e(_created(i))}</td>"
            + "".join(_limit_cell(i, f) for f in LIMIT_FIELDS)
            + "</tr>"
            for i in items
        )
        if not items:
            body = f'<tr><td colspan="{5 + len(LIMIT_FIELDS)}"><i>no indexes yet</i></td></tr>'
        caption = f"{len(items)} index" + ("" if len(items) == 1 else "es")
        return (
            f'{_STYLE}<table class="sk-list"><caption style="text-align:left">{caption}'
            f"</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        )
    except Exception as exc:  # a display must never raise inside a notebook
        return f"<pre>IndexList (could not render: {html.escape(type(exc).__name__)})</pre>"


def message_html(text: str, kind: str = "info") -> str:
    """Return one line of plain text as an HTML message block.

    Args:
        text: The message, plain text (it is escaped here).
        kind: ``"info"``, ``"success"`` or ``"error"``; sets the colour and a CSS class
            ``sk-<kind>``.

    Returns:
        HTML with the classes ``sk-message`` and ``sk-<kind>``.

    Example:
        >>> message_html("Enter a name for the index.", "error").endswith(
        ...     '<div class="sk-message sk-error">Enter a name for the index.</div>')
        True
    """
    kind = kind if kind in _MESSAGE_KINDS else "info"
    return f'{_STYLE}<div class="sk-message sk-{kind}">{html.escape(str(text))}</div>'
