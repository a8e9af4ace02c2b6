"""Notebook HTML of indexes: cards, tables, messages and the widgets' snapshots.

Every function here is safe to call from a ``_repr_html_``: it never raises, whatever the
data, and never puts a token or password in its output (tokens show masked). Text that came
from the service (names, endpoints, e-mails, unknown enum values) is always HTML-escaped.

Styles are inline ``style`` attributes, never ``<style>`` blocks: JupyterLab strips style
blocks from the output of an untrusted notebook (any notebook opened from disk that was not
run here), and the tables would lose their layout. Colours that must follow the theme use
JupyterLab's CSS variables; an untrusted notebook drops those declarations and the text
takes the theme's own colour, which is readable on both light and dark backgrounds.

The limit labels come from :data:`searchkit.model.limits.LIMIT_INFO`, the one table of them.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from searchkit.model.index import IndexList, SearchIndex
from searchkit.model.limits import LIMIT_FIELDS, LIMIT_INFO
from searchkit.model.secret import MASK
from searchkit.render.formats import KEY_LIMITS, created_text, format_limit, plain_text, short_id

if TYPE_CHECKING:
    from searchkit.history.reports import CollectSummary

    pass

__all__ = [
    "MAX_ROWS",
    "collect_summary_html",
    "create_form_html",
    "index_browser_html",
    "index_card_html",
    "index_cards_html",
    "index_list_html",
    "index_list_view_html",
    "message_html",
    "model_html",
    "note_html",
    "png_tag",
]

#: Rows an HTML table of indexes shows at most by default; the caption counts the rest.
MAX_ROWS = 60
_MESSAGE_KINDS = ("info", "success", "error", "busy")

# --- inline styles (see the module docstring for why inline) ------------------------------

_FONT = "font-family:var(--jp-ui-font-family,sans-serif);font-size:13px"
_MUTED = "color:var(--jp-ui-font-color2,#666)"
# A neutral grey with alpha reads as a faint rule on white and on the dark themes alike.
_RULE = "border-bottom:1px solid rgba(128,128,128,0.35)"
_CELL = "padding:2px 10px 2px 0;text-align:left;white-space:nowrap;vertical-align:top"
_NUM = (
    "padding:2px 10px 2px 0;text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums"
)
# "unlimited": the theme's text colour mixed with green. In JupyterLab light that is a dark
# green (7:1 on white), in dark a light green (over 8:1 on #111 and #212121); the browser
# test measures both. Outside JupyterLab the fallbacks give the dark green.
_UNLIMITED = (
    "font-style:italic;color:color-mix(in srgb,var(--jp-content-font-color1,#000) 55%,#2e7d32)"
)
_MESSAGE_COLOURS = {
    "info": "",
    "busy": ";font-style:italic",
    "success": ";color:var(--jp-success-color0,#1b5e20)",
    "error": ";color:var(--jp-error-color1,#b00020)",
}


# --- pieces of the cards and tables ---------------------------------------------------------


def _masked(secret: Any) -> str:
    return (
        f'<span class="sk-masked" style="letter-spacing:1px;{_MUTED}">{MASK}</span>'
        if secret
        else "—"
    )


def _enrichment(value: bool | None) -> str:
    return {True: "on", False: "off"}.get(value, "—") if isinstance(value, bool) else "—"


def _limit_cell(index: SearchIndex, field: str) -> str:
    text = format_limit(getattr(index, field, None), field)
    if text == "unlimited":
        return f'<td class="sk-num sk-unl" style="{_NUM};{_UNLIMITED}">{text}</td>'
    return f'<td class="sk-num" style="{_NUM}">{html.escape(text)}</td>'


def _th(text: str, *, numeric: bool = False) -> str:
    style = _NUM if numeric else _CELL
    return f'<th style="{style};{_RULE};font-weight:600">{text}</th>'


def _td(text: str) -> str:
    return f'<td style="{_CELL}">{text}</td>'


def model_html(model: object) -> str:
    """Return the notebook HTML of a SearchIndex (card), an IndexList (table), a CollectSummary."""
    if isinstance(model, IndexList):
        return index_list_view_html(model)
    if isinstance(model, SearchIndex):
        return index_card_html(model)
    # Only now: a card or a table must not load the history (and pandas) to be drawn.
    from searchkit.history.reports import CollectSummary

    if isinstance(model, CollectSummary):
        return collect_summary_html(model)
    raise TypeError(f"no notebook HTML for {type(model).__name__}")


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
            ("endpoint", e(plain_text(index.endpoint))),
            ("created", e(created_text(index))),
            ("id", f"<code>{e(plain_text(index.id))}</code>"),
            ("input enrichment", _enrichment(index.input_enrichment_enabled)),
            ("token", _masked(index.token)),
            ("read-only token", _masked(index.read_only_token)),
        ]
        if index.partner_email:
            rows.insert(2, ("partner e-mail", e(index.partner_email)))
        info = "".join(f"<tr>{_td(k)}{_td(v)}</tr>" for k, v in rows)
        limits = "".join(
            f"<tr>{_td(LIMIT_INFO[f].label)}{_limit_cell(index, f)}</tr>" for f in LIMIT_FIELDS
        )
        points = len(index.throughput)
        table = "border-collapse:collapse;margin:0"
        return (
            f'<div class="sk-card" style="{_FONT};border:1px solid rgba(128,128,128,0.35);'
            'border-radius:6px;padding:8px 12px;max-width:640px;box-sizing:border-box">'
            f'<h4 style="margin:0 0 4px 0;font-size:15px">{e(plain_text(index.name))}</h4>'
            f'<div class="sk-sub" style="{_MUTED};margin-bottom:6px">{e(plain_text(index.type))} '
            f"plan · {e(plain_text(index.region))} · {points:,} throughput points</div>"
            f'<table style="{table}">{info}</table>'
            f'<table style="{table};margin-top:6px">{limits}</table></div>'
        )
    except Exception as exc:  # a display must never raise inside a notebook
        return f"<pre>SearchIndex (could not render: {html.escape(type(exc).__name__)})</pre>"


def index_list_html(
    indexes: IndexList | Iterable[SearchIndex],
    *,
    limits: Iterable[str] = LIMIT_FIELDS,
    details: bool = True,
    max_rows: int | None = MAX_ROWS,
) -> str:
    """Return an HTML table of indexes, one row each, limits with "unlimited".

    Args:
        indexes: An IndexList or any iterable of SearchIndex.
        limits: The limit fields to show as columns (all nine by default).
        details: Show the endpoint and creation time columns.
        max_rows: Show at most this many rows, the first ones, like pandas; the caption
            says how many are shown. None shows every index.

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
        fields = [f for f in limits if f in LIMIT_INFO]
        heads = ["name", "id", "type", "region"] + (["endpoint", "created"] if details else [])
        head = "".join(_th(h) for h in heads) + "".join(
            _th(LIMIT_INFO[f].label, numeric=True) for f in fields
        )
        rows = []
        shown = items if max_rows is None else items[: max(max_rows, 0)]
        for i in shown:
            cells = [
                f"<b>{e(plain_text(i.name))}</b>",
                f"<code>{e(short_id(i.id))}</code>",
                e(plain_text(i.type)),
                e(plain_text(i.region)),
            ]
            if details:
                cells += [e(plain_text(i.endpoint)), e(created_text(i))]
            rows.append(
                "<tr>"
                + "".join(_td(c) for c in cells)
                + "".join(_limit_cell(i, f) for f in fields)
                + "</tr>"
            )
        body = "".join(rows)
        if not items:
            span = len(heads) + len(fields)
            body = f'<tr><td colspan="{span}" style="{_CELL}"><i>no indexes yet</i></td></tr>'
        caption = f"{len(items):,} index" + ("" if len(items) == 1 else "es")
        if len(shown) < len(items):
            caption += f" (the first {len(shown):,} shown)"
        return (
            f'<table class="sk-list" style="{_FONT};border-collapse:collapse;margin:0">'
            f'<caption style="text-align:left;{_MUTED};padding-bottom:2px">{caption}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        )
    except Exception as exc:  # a display must never raise inside a notebook
        return f"<pre>IndexList (could not render: {html.escape(type(exc).__name__)})</pre>"


def index_list_view_html(indexes: IndexList | Iterable[SearchIndex]) -> str:
    """Return how an IndexList shows in a notebook: a table that fits, the rest on demand.

    Fifteen columns (every limit, the endpoint and the creation time) overflow a notebook's
    width, so the table shows name, short id, type, region and the four limits people
    compare; a ``<details>`` block below it ("every limit, endpoint and creation time")
    opens the full table. ``sk.limits_table(indexes)`` gives every limit as a DataFrame.
    """
    try:
        items = list(indexes)
        compact = index_list_html(items, limits=KEY_LIMITS, details=False)
        if not items:
            return compact
        return (
            f'{compact}<details class="sk-details" style="{_FONT};margin-top:4px">'
            f'<summary style="cursor:pointer;{_MUTED}">every limit, endpoint and creation '
            f"time</summary>{index_list_html(items)}</details>"
        )
    except Exception as exc:  # a display must never raise inside a notebook
        return f"<pre>IndexList (could not render: {html.escape(type(exc).__name__)})</pre>"


def message_html(text: str, kind: str = "info") -> str:
    """Return one line of plain text as an HTML message block.

    Args:
        text: The message, plain text (it is escaped here).
        kind: ``"info"``, ``"busy"`` (in italics), ``"success"`` or ``"error"`` (with a
            leading warning sign); sets the colour and a CSS class ``sk-<kind>``.

    Returns:
        HTML with the classes ``sk-message`` and ``sk-<kind>``.

    Example:
        >>> message_html("Enter a name for the index.", "error")  # doctest: +ELLIPSIS
        '<div class="sk-message sk-error" ...>⚠ Enter a name for the index.</div>'
    """
    kind = kind if kind in _MESSAGE_KINDS else "info"
    sign = {"error": "⚠ "}.get(kind, "")  # busy texts end in "…"; italics say the rest
    style = f"{_FONT};padding:4px 0{_MESSAGE_COLOURS[kind]}"
    return f'<div class="sk-message sk-{kind}" style="{style}">{sign}{html.escape(str(text))}</div>'


def note_html(text: str) -> str:
    """Return plain text as a calm note: muted text, a grey rule on its left, no alarm colour.

    For what the user should know but need not act on (the demo emulator started), where a
    red stderr box would read as an error.

    Example:
        >>> note_html("a demo emulator was started")  # doctest: +ELLIPSIS
        '<div class="sk-note" ...>a demo emulator was started</div>'
    """
    style = (
        f"{_FONT};{_MUTED};padding:2px 8px;margin:2px 0;"
        "border-left:3px solid rgba(128,128,128,0.55)"
    )
    return f'<div class="sk-note" style="{style}">{html.escape(str(text))}</div>'


# --- static pictures of the widgets (a saved notebook shows these) --------------------------


def _field_html(label: str, value: str) -> str:
    return (
        f'<div style="display:flex;gap:8px;margin:2px 0"><span style="width:80px;'
        f'text-align:right">{html.escape(label)}</span><span style="border:1px solid '
        'rgba(128,128,128,0.5);padding:1px 6px;min-width:180px;border-radius:2px">'
        f"{html.escape(value) or '&nbsp;'}</span></div>"
    )


def create_form_html(
    *,
    base_url: str,
    username: str,
    name: str,
    region: str,
    plan: str,
    messages: Iterable[tuple[str, Any]] = (),
) -> str:
    """Return a static HTML picture of the create form, as it looked when displayed.

    A saved notebook opened without its kernel shows this instead of the live widget.

    Args:
        base_url: The service address the form creates at.
        username: The account's name (never its password).
        name: The name field's text.
        region: The region chosen.
        plan: The plan chosen.
        messages: What the output area showed: ``(kind, text)`` pairs and ``("card", index)``.

    Returns:
        HTML with the class ``sk-create-form-static``; never a token.
    """
    e = html.escape
    parts = [
        f'<div class="sk-create-form-static" style="{_FONT}">',
        f"<div>Creates indexes at <code>{e(base_url)}</code> as <b>{e(username)}</b></div>",
        _field_html("Name", name),
        _field_html("Region", region),
        _field_html("Type", plan),
    ]
    for kind, value in messages:
        parts.append(index_card_html(value) if kind == "card" else message_html(value, kind))
    parts.append(
        f'<div style="{_MUTED};font-size:11px">(a picture of the form: run the cell '
        "to use it)</div></div>"
    )
    return "".join(parts)


def index_browser_html(
    *,
    status: tuple[str, str],
    indexes: IndexList | Iterable[SearchIndex],
    selected: Iterable[str],
    png: bytes | None,
    hint: str = "",
) -> str:
    """Return a static HTML picture of the index browser, as it looked when displayed.

    Args:
        status: The status line, as ``(kind, text)``.
        indexes: The indexes listed.
        selected: Names of the indexes plotted.
        png: The light-theme plot as PNG bytes, or None when none is shown.
        hint: The sentence shown instead of a plot, when there is none.

    Returns:
        HTML with the class ``sk-browser-static``; never a token.
    """
    e = html.escape
    kind, text = status
    chosen = ", ".join(selected) or "none"
    parts = [
        f'<div class="sk-browser-static" style="{_FONT}">',
        message_html(text, kind),
        '<div style="overflow:auto;max-height:320px">',
        index_list_html(indexes, limits=KEY_LIMITS, details=False),
        "</div>",
        f"<div>Plotted: {e(chosen)}</div>",
    ]
    if png is not None:
        data = base64.b64encode(png).decode("ascii")
        parts.append(
            f'<img alt="throughput of {e(chosen)}" src="data:image/png;base64,{data}" '
            'style="max-width:100%;background:white;border-radius:4px"/>'
        )
    elif hint:
        parts.append(message_html(hint, "info"))
    parts.append(
        f'<div style="{_MUTED};font-size:11px">(a picture of the index browser: run '
        "the cell to use it)</div></div>"
    )
    return "".join(parts)


# --- Text for terminals (the command line) -------------------------------------------------
#
# Everything below renders plain text for a terminal. Text that came from the service is
# passed through terminal_safe(): a name holding ESC sequences (clear the screen, set the
# window title, write the clipboard through OSC 52) or bidi overrides must show as
# harmless, visible text, never act on the user's terminal.

#: Bidirectional-text controls (embeddings, overrides, isolates, marks): they can make a
#: line read differently from what it holds, so they are shown by code point.


def png_tag(png: bytes, alt: str, css: str = "") -> str:
    """An <img> of PNG bytes, inline (no network)."""
    import base64

    data = base64.b64encode(png).decode("ascii")
    return (
        f'<img class="{css}" alt="{html.escape(alt)}" style="max-width:100%" '
        f'src="data:image/png;base64,{data}"/>'
    )


def themed_images_html(light: bytes, dark: bytes, note: str, names: list[str]) -> str:
    """HTML showing the light PNG in a light JupyterLab theme and the dark one in a dark."""
    about = "throughput of " + ", ".join(names)

    def img(data: bytes, theme: str) -> str:
        return png_tag(data, f"{about} ({theme} theme)", f"sk-plot-{theme}")

    # JupyterLab marks the page with data-jp-theme-light="true"/"false"; live widget output
    # is trusted, so this small style block applies (a saved picture uses the light image).
    style = (
        "<style>.sk-plot-dark{display:none}"
        'body[data-jp-theme-light="false"] .sk-plot-light{display:none}'
        'body[data-jp-theme-light="false"] .sk-plot-dark{display:inline}</style>'
    )
    caption = f'<div class="sk-plot-note">{html.escape(note)}</div>' if note else ""
    return f"{style}{img(light, 'light')}{img(dark, 'dark')}{caption}"


def index_cards_html(indexes: Iterable[SearchIndex]) -> str:
    """Return the cards of several indexes side by side, wrapping on narrow outputs."""
    cards = "".join(f'<div style="flex:0 1 420px">{index_card_html(i)}</div>' for i in indexes)
    return f'<div style="display:flex;flex-wrap:wrap;gap:8px">{cards}</div>'


def collect_summary_html(summary: CollectSummary) -> str:
    """Return what one History.collect stored, as notebook HTML: points per index, problems."""
    rows = "".join(
        f"<tr><td>{html.escape(name)}</td><td style='text-align:right'>{count:,}</td></tr>"
        for name, count in summary.points_by_index.items()
    )
    problems = "".join(f"<li>{html.escape(line)}</li>" for line in summary.problems)
    return (
        f"<div><strong>Collected</strong> {summary.collected_at:%Y-%m-%d %H:%M:%S} UTC: "
        f"{summary.indexes} indexes, <strong>{summary.new_points:,}</strong> new points"
        + (f" ({summary.skipped_points:,} skipped)" if summary.skipped_points else "")
        + "<table><thead><tr><th>index</th><th>new points</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
        + (f"<ul style='color:#a33'>{problems}</ul>" if problems else "")
        + "</div>"
    )
