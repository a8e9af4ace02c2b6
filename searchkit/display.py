"""Rendering of indexes as HTML (notebooks) and text (command line).

Every function here is safe to call from a ``_repr_html_``: it never raises, whatever the
data, and never puts a token or password in its output (tokens show masked).
"""

from __future__ import annotations

import datetime as dt
import html
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from searchkit.models import LIMIT_FIELDS, SearchIndex

if TYPE_CHECKING:
    from searchkit.models import IndexList

__all__ = [
    "LIMIT_LABELS",
    "format_limit",
    "index_card_html",
    "index_list_html",
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

_MASK = "••••••••"
_STYLE = (
    "<style>"
    ".sk-card{font-family:var(--jp-ui-font-family,sans-serif);font-size:13px;"
    "border:1px solid var(--jp-border-color2,#ddd);border-radius:6px;padding:8px 12px;"
    "max-width:640px}"
    ".sk-card h4{margin:0 0 4px 0;font-size:15px}"
    ".sk-card .sk-sub{color:var(--jp-ui-font-color2,#666);margin-bottom:6px}"
    ".sk-card table,.sk-list{border-collapse:collapse}"
    ".sk-card td,.sk-list td,.sk-list th{padding:2px 10px 2px 0;text-align:left}"
    ".sk-num{text-align:right!important;font-variant-numeric:tabular-nums}"
    ".sk-unl{color:#2a7d2a;font-style:italic}"
    "</style>"
)


def _bytes(value: float) -> str:
    units = ["B", "KB", "MB", "GB", "TB", "PB"]
    size = float(value)
    for unit in units:
        if abs(size) < 1000 or unit == units[-1]:
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1000
    return f"{value:,.0f} B"  # pragma: no cover - loop always returns


def format_limit(value: Any, field: str | None = None) -> str:
    """Return a limit as display text: "unlimited", "—" (absent) or a grouped number.

    Accepts the API's integers (-1 unlimited) as well as the frames' floats (inf).

    Example:
        >>> format_limit(-1), format_limit(None), format_limit(1234567.0)
        ('unlimited', '—', '1,234,567')
    """
    try:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "—"
        number = float(value)
        if math.isnan(number):
            return "—"
        if number == -1 or math.isinf(number):
            return "unlimited"
        if field == "max_monthly_bandwidth":
            return _bytes(number)
        return f"{number:,.0f}" if number.is_integer() else f"{number:,}"
    except (TypeError, ValueError, OverflowError):
        return html.escape(str(value))


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


def _limit_cell(index: SearchIndex, field: str) -> str:
    text = format_limit(getattr(index, field, None), field)
    if text == "unlimited":
        return f'<td class="sk-num sk-unl">{text}</td>'
    return f'<td class="sk-num">{html.escape(text)}</td>'


def index_card_html(index: SearchIndex) -> str:
    """Return a compact HTML card of one index (tokens masked)."""
    try:
        e = html.escape
        rows = [
            ("endpoint", e(_text(index.endpoint))),
            ("created", e(_created(index))),
            ("id", f"<code>{e(_text(index.id))}</code>"),
            ("token", _MASK if index.token else "—"),
            ("read-only token", _MASK if index.read_only_token else "—"),
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
    """Return an HTML table of indexes, one row each, limits with "unlimited"."""
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
            f"<td>{e(_created(i))}</td>" + "".join(_limit_cell(i, f) for f in LIMIT_FIELDS)
            + "</tr>"
            for i in items
        )
        caption = f"{len(items)} index" + ("" if len(items) == 1 else "es")
        return (
            f'{_STYLE}<table class="sk-list"><caption style="text-align:left">{caption}'
            f"</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        )
    except Exception as exc:  # a display must never raise inside a notebook
        return f"<pre>IndexList (could not render: {html.escape(type(exc).__name__)})</pre>"
