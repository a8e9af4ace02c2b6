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


# --- Text for terminals (the command line) -------------------------------------------------
#
# Everything below renders plain text for a terminal. Text that came from the service is
# passed through terminal_safe(): a name holding ESC sequences (clear the screen, set the
# window title, write the clipboard through OSC 52) or bidi overrides must show as
# harmless, visible text, never act on the user's terminal.

#: Bidirectional-text controls (embeddings, overrides, isolates, marks): they can make a
#: line read differently from what it holds, so they are shown by code point.
_BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
_NAMED_CONTROLS = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _build_terminal_table() -> dict[int, str]:
    table = {}
    # C0 controls, DEL and C1 controls (0x9B is a one-byte CSI in some terminals).
    for code in [*range(0x20), *range(0x7F, 0xA0)]:
        char = chr(code)
        table[code] = _NAMED_CONTROLS.get(char, f"\\x{code:02x}")
    # Line and paragraph separators break a line in some terminals; bidi controls reorder it.
    for char in ("\u2028", "\u2029", *_BIDI_CONTROLS):
        table[ord(char)] = f"<U+{ord(char):04X}>"
    return table


_TERMINAL_TABLE = _build_terminal_table()


def terminal_safe(text: object) -> str:
    """Return ``text`` with every control character shown as a visible escape.

    C0 and C1 control characters and DEL become ``\\x1b``-style escapes (tab, line feed and
    carriage return as ``\\t``, ``\\n``, ``\\r``), so the text stays on one line and no
    escape sequence reaches the terminal; bidi controls and line separators become
    ``<U+202E>``-style code points. Everything else is kept as it is.

    Example:
        >>> terminal_safe("docs\\x1b]52;c;aGk=\\x07")
        'docs\\\\x1b]52;c;aGk=\\\\x07'
        >>> terminal_safe("abc\\u202edef")
        'abc<U+202E>def'
    """
    return str(text).translate(_TERMINAL_TABLE)


def text_width(text: str) -> int:
    """Return how many terminal columns ``text`` takes (East Asian wide and emoji count 2).

    Example:
        >>> text_width("docs"), text_width("文書"), text_width("🚀 docs")
        (4, 4, 7)
    """
    import unicodedata

    width = 0
    for char in text:
        if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def _secret_text(value: Any) -> str | None:
    # Tokens may be plain text or a masked Secret whose real value is read explicitly.
    value = getattr(value, "get_secret_value", lambda: value)()
    return None if value is None else str(value)


def _limit_text(value: Any, field: str) -> str:
    try:
        return format_limit(value, field)
    except (OverflowError, ValueError):  # an integer too big for a float: show its digits
        return f"{value:,}" if isinstance(value, int) else str(value)


def _created_text(index: SearchIndex) -> str:
    try:
        created = index.created
    except (OverflowError, OSError, ValueError):
        return "—"
    return created.strftime("%Y-%m-%d %H:%M") if isinstance(created, dt.datetime) else "—"


def _short_id(value: Any) -> str:
    text = _text(value)
    return text if len(text) <= 8 else text[:8]


def _pad(text: str, width: int, *, right: bool) -> str:
    gap = " " * max(width - text_width(text), 0)
    return gap + text if right else text + gap


def limits_text_table(
    indexes: IndexList | Iterable[SearchIndex], show_secrets: bool = False
) -> str:
    """Return the indexes as an aligned plain-text table for a terminal, one row each.

    Columns: name, a short id (the first 8 characters), plan, region, creation time (UTC),
    then the nine limits formatted as in the HTML tables (thousands separators,
    "unlimited", bandwidth in byte units), right-aligned; with ``show_secrets`` the two
    tokens last. Every text from the service goes through :func:`terminal_safe`, and wide
    characters (CJK, emoji) keep the columns aligned.

    Args:
        indexes: An IndexList or any iterable of SearchIndex.
        show_secrets: Add the ``token`` and ``read_only_token`` columns, unmasked.

    Returns:
        The table without a final newline; ``(no indexes)`` when there are none.

    Example:
        >>> table = limits_text_table(
        ...     [SearchIndex.from_dict({"name": "docs", "id": "0123456789abc",
        ...                             "max_daily_queries": -1})])
        >>> table.splitlines()[1].split()[:2], "unlimited" in table
        (['docs', '01234567'], True)
    """
    items = list(indexes)
    if not items:
        return "(no indexes)"
    head = ["name", "id", "type", "region", "created (UTC)"]
    head += [LIMIT_LABELS[f].replace(" / ", "/") for f in LIMIT_FIELDS]
    rows = []
    for index in items:
        row = [
            _text(index.name),
            _short_id(index.id),
            _text(index.type),
            _text(index.region),
            _created_text(index),
        ]
        row += [_limit_text(getattr(index, f, None), f) for f in LIMIT_FIELDS]
        if show_secrets:
            row += [_secret_text(index.token) or "—", _secret_text(index.read_only_token) or "—"]
        rows.append([terminal_safe(cell) for cell in row])
    if show_secrets:
        head += ["token", "read_only_token"]
    numeric = {head.index(LIMIT_LABELS[f].replace(" / ", "/")) for f in LIMIT_FIELDS}
    widths = [max(text_width(r[c]) for r in [head, *rows]) for c in range(len(head))]
    return "\n".join(
        "  ".join(_pad(cell, widths[c], right=c in numeric) for c, cell in enumerate(row)).rstrip()
        for row in [head, *rows]
    )


def _csv_limit(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return "" if value is None else str(value)
    if isinstance(value, int):
        return "unlimited" if value == -1 else str(value)
    return str(value)


def limits_csv_text(indexes: IndexList | Iterable[SearchIndex], show_secrets: bool = False) -> str:
    """Return the indexes as CSV for other programs, one row per index, with a header.

    Columns: ``id``, ``name``, ``type``, ``region``, ``endpoint``, ``partner_email``,
    ``created`` (ISO 8601, UTC), ``input_enrichment_enabled`` (``true``/``false``), the nine
    limits, and with ``show_secrets`` ``token`` and ``read_only_token``. Limits are the
    service's integers as written, except -1, which is written ``unlimited``; an absent
    value is an empty field. Text passes through :func:`terminal_safe`, so a control
    character in a name is written as a visible escape (use ``--format json`` for the exact
    text).

    Example:
        >>> print(limits_csv_text([SearchIndex.from_dict(
        ...     {"id": "a1", "name": "docs", "max_daily_queries": -1,
        ...      "max_vector_count": 2000000000})]).splitlines()[1])
        a1,docs,,,,,,,2000000000,,,unlimited,,,,,
    """
    import csv
    import io

    head = ["id", "name", "type", "region", "endpoint", "partner_email", "created"]
    head += ["input_enrichment_enabled", *LIMIT_FIELDS]
    if show_secrets:
        head += ["token", "read_only_token"]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(head)
    for index in indexes:
        try:
            created = index.created
        except (OverflowError, OSError, ValueError):
            created = None
        enrichment = index.input_enrichment_enabled
        row = [
            index.id or "",
            index.name or "",
            "" if index.type is None else _text(index.type),
            "" if index.region is None else _text(index.region),
            index.endpoint or "",
            index.partner_email or "",
            created.isoformat() if isinstance(created, dt.datetime) else "",
            "" if not isinstance(enrichment, bool) else str(enrichment).lower(),
        ]
        row += [_csv_limit(getattr(index, f, None)) for f in LIMIT_FIELDS]
        if show_secrets:
            row += [_secret_text(index.token) or "", _secret_text(index.read_only_token) or ""]
        writer.writerow([terminal_safe(cell) for cell in row])
    return out.getvalue()
