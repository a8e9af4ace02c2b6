"""Rendering of indexes for people: HTML (notebooks, widgets) and display text.

Every function here is safe to call from a ``_repr_html_``: it never raises, whatever the
data, and never puts a token or password in its output (tokens show masked). Text that came
from the service (names, endpoints, e-mails, unknown enum values) is always HTML-escaped.

Styles are inline ``style`` attributes, never ``<style>`` blocks: JupyterLab strips style
blocks from the output of an untrusted notebook (any notebook opened from disk that was not
run here), and the tables would lose their layout. Colours that must follow the theme use
JupyterLab's CSS variables; an untrusted notebook drops those declarations and the text
takes the theme's own colour, which is readable on both light and dark backgrounds.

The limit labels come from :data:`searchkit.model.index.LIMIT_INFO`, the one table of them.
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import math
import numbers
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from searchkit.model.index import IndexList, SearchIndex
from searchkit.model.limits import LIMIT_FIELDS, LIMIT_INFO, UNLIMITED
from searchkit.model.secret import MASK

if TYPE_CHECKING:
    import pandas as pd


__all__ = [
    "create_form_html",
    "display_limits_frame",
    "format_bytes",
    "format_limit",
    "index_browser_html",
    "index_card_html",
    "index_list_html",
    "limits_summary",
    "limits_table",
    "message_html",
    "short_id",
]

#: Characters of an id shown in tables: enough to tell two same-named indexes apart.
SHORT_ID = 8
#: Rows an HTML table of indexes shows at most by default; the caption counts the rest.
MAX_ROWS = 60
#: The limits the index browser's table shows; the others are one click away.
KEY_LIMITS: tuple[str, ...] = (
    "max_daily_queries",
    "max_daily_updates",
    "max_query_per_second",
    "max_writes_per_second",
)

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


# --- display text ---------------------------------------------------------------------------


def format_bytes(value: float) -> str:
    """Return a byte count in decimal (SI) units with at most one decimal: ``50 GB``.

    The one way searchkit writes bytes: tables, cards, the CLI and plot axes all use it.

    Example:
        >>> format_bytes(5e10), format_bytes(1.5e9), format_bytes(999)
        ('50 GB', '1.5 GB', '999 B')
    """
    size = float(value)
    if not math.isfinite(size):
        return str(size)
    units = ("B", "kB", "MB", "GB", "TB", "PB")
    step = 0
    while step < len(units) - 1 and abs(round(size, 1)) >= 1000:
        size /= 1000
        step += 1
    unit = units[step]
    text = f"{size:,.0f}" if unit == "B" else f"{size:,.1f}".removesuffix(".0")
    return f"{text} {unit}"


def format_limit(value: Any, field: str | None = None) -> str:
    """Return a limit as display text: "unlimited", "—" when absent, else a grouped number.

    Accepts the frame's floats (``inf`` unlimited, NaN absent) and the API's integers
    (-1 unlimited, None absent). The text is plain, not HTML-escaped, and this never raises:
    a value that is not a number is shown as it is.

    Args:
        value: One limit value.
        field: The limit's name; ``max_monthly_bandwidth`` is shown in byte units.

    Returns:
        The text to show.

    Example:
        >>> format_limit(float("inf")), format_limit(None), format_limit(1234567.0)
        ('unlimited', '—', '1,234,567')
        >>> format_limit(5e10, "max_monthly_bandwidth")
        '50 GB'
    """
    if value is None:
        return "—"
    # bool is an int, numpy's bool_ is not a Real: both are shown as they are.
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return str(value)
    try:
        number = float(value)
    except (OverflowError, ValueError):  # an integer too big for a float: show its digits
        return f"{value:,}" if isinstance(value, numbers.Integral) else str(value)
    if math.isnan(number):
        return "—"
    if number == math.inf or number == UNLIMITED:
        return "unlimited"
    if math.isinf(number):  # -inf: not something the service sends, shown as is
        return str(number)
    if field == "max_monthly_bandwidth":
        return format_bytes(number)
    return f"{number:,.0f}" if number.is_integer() else f"{number:,}"


def short_id(value: Any) -> str:
    """Return the first characters of an id, enough to tell indexes apart in a table."""
    return "—" if value is None or value != value else str(value)[:SHORT_ID]


def display_limits_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Return a copy of a limits frame with its ``max_*`` columns as display text.

    Args:
        frame: A frame from :func:`~searchkit.frames.frames.limits_frame` (any subset of its
            columns).

    Returns:
        A copy where each limit reads "unlimited", "—", a number with thousands
        separators or (bandwidth) bytes in units; the other columns are unchanged.

    Example:
        >>> display_limits_frame(limits_frame([{"id": "a", "max_daily_queries": -1}]))[
        ...     "max_daily_queries"
        ... ].tolist()
        ['unlimited']
    """
    import pandas as pd

    shown = frame.copy()
    for name in LIMIT_FIELDS:
        if name in shown.columns:
            shown[name] = pd.array([format_limit(v, name) for v in shown[name]], dtype="str")
    return shown


def limits_table(indexes_or_frame: Any) -> pd.DataFrame:
    """Return the limits as a table to read: name first, short ids, limits as display text.

    :func:`~searchkit.frames.frames.limits_frame` stays numeric for computing; this is its view for
    people: thousands separators, "unlimited", bandwidth in byte units, "—" for a limit the
    service did not send, columns labelled in words. It is a plain DataFrame of text, so
    it displays the same in any notebook, trusted or not, and prints well.

    Args:
        indexes_or_frame: Indexes in any form ``limits_frame`` accepts, or a frame it
            returned (its ``id`` index and ``name``, ``type``, ``region`` columns are used
            when present).

    Returns:
        A frame indexed by the first 8 characters of each id (``id``), with the columns
        ``name``, ``plan``, ``region`` and one per limit labelled as in
        :data:`~searchkit.model.index.LIMIT_INFO` (``"queries / day"``...).

    Example:
        >>> sk.limits_table(client.list_indexes())  # doctest: +SKIP
    """
    import pandas as pd

    frame = _limits(indexes_or_frame)
    columns: dict[str, Any] = {}
    for source, label in (("name", "name"), ("type", "plan"), ("region", "region")):
        if source in frame.columns:
            values = frame[source].astype(object)
            columns[label] = [("—" if v is None or v != v else str(v)) for v in values]
    for field in LIMIT_FIELDS:
        if field in frame.columns:
            columns[LIMIT_INFO[field].label] = [format_limit(v, field) for v in frame[field]]
    index = pd.Index([short_id(i) for i in frame.index], dtype="str", name="id")
    return pd.DataFrame(columns, index=index, dtype="str")


def limits_summary(indexes_or_frame: Any) -> pd.DataFrame:
    """Return statistics of each limit that treat "unlimited" explicitly.

    ``limits_frame(...).describe()`` mixes ``inf`` into the statistics (NaN medians and a
    RuntimeWarning per column when most limits are unlimited). Here the statistics are over
    the finite values only, beside a count of the unlimited and of the absent ones.

    Args:
        indexes_or_frame: Indexes in any form ``limits_frame`` accepts, or a frame it
            returned.

    Returns:
        A frame with one row per limit (indexed by field name, in
        :data:`~searchkit.model.index.LIMIT_FIELDS` order) and the columns ``label``,
        ``indexes`` (how many rows), ``unlimited``, ``missing``, ``limited`` (finite
        values) and ``min``, ``median``, ``mean``, ``max`` of the finite values, rounded to
        whole numbers as the limits are (nullable ``Int64``, ``<NA>`` when there are
        none), with no warning raised.

    Example:
        >>> sk.limits_summary(client.list_indexes()).loc["max_daily_queries", "unlimited"]
        ...  # doctest: +SKIP
    """
    import numpy as np
    import pandas as pd

    frame = _limits(indexes_or_frame)
    rows = []
    for field in LIMIT_FIELDS:
        if field not in frame.columns:
            continue
        values = pd.to_numeric(frame[field], errors="coerce").to_numpy(
            dtype=np.float64, na_value=np.nan
        )
        finite = values[np.isfinite(values)]
        empty = finite.size == 0
        rows.append(
            {
                "field": field,
                "label": LIMIT_INFO[field].label,
                "indexes": int(values.size),
                "unlimited": int(np.count_nonzero(np.isposinf(values))),
                "missing": int(np.count_nonzero(np.isnan(values))),
                "limited": int(finite.size),
                "min": np.nan if empty else float(finite.min()),
                "median": np.nan if empty else float(np.median(finite)),
                "mean": np.nan if empty else float(finite.mean()),
                "max": np.nan if empty else float(finite.max()),
            }
        )
    columns = ["label", "indexes", "unlimited", "missing", "limited", "min", "median"]
    columns += ["mean", "max"]
    if not rows:
        return pd.DataFrame(columns=columns, index=pd.Index([], name="field", dtype="str"))
    summary = pd.DataFrame(rows).set_index("field")[columns]
    # Limits are whole numbers: whole-number statistics read as 1050000000, not 1.05e+09.
    for name in ("min", "median", "mean", "max"):
        summary[name] = summary[name].round().astype("Int64")
    return summary


def _limits(data: Any) -> pd.DataFrame:
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return data
    from searchkit.frames.frames import limits_frame  # frames never imports display: no circle

    return limits_frame(data)


# --- HTML -------------------------------------------------------------------------------------


def _text(value: Any) -> str:
    if value is None:
        return "—"
    if hasattr(value, "value"):
        value = value.value
    return str(value) if str(value) != "" else "—"


def _created(index: SearchIndex, layout: str = "%Y-%m-%d %H:%M UTC") -> str:
    try:
        created = index.created
    except (OverflowError, OSError, ValueError):
        return "—"
    return created.strftime(layout) if isinstance(created, dt.datetime) else "—"


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
    """Return the notebook HTML of a SearchIndex (a card) or an IndexList (a table)."""
    if isinstance(model, IndexList):
        return index_list_html(model)
    if isinstance(model, SearchIndex):
        return index_card_html(model)
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
            ("endpoint", e(_text(index.endpoint))),
            ("created", e(_created(index))),
            ("id", f"<code>{e(_text(index.id))}</code>"),
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
        points = len(index.throughput_raw)
        table = "border-collapse:collapse;margin:0"
        return (
            f'<div class="sk-card" style="{_FONT};border:1px solid rgba(128,128,128,0.35);'
            'border-radius:6px;padding:8px 12px;max-width:640px;box-sizing:border-box">'
            f'<h4 style="margin:0 0 4px 0;font-size:15px">{e(_text(index.name))}</h4>'
            f'<div class="sk-sub" style="{_MUTED};margin-bottom:6px">{e(_text(index.type))} '
            f"plan · {e(_text(index.region))} · {points:,} throughput points</div>"
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
        heads = ["name", "id", "plan", "region"] + (["endpoint", "created"] if details else [])
        head = "".join(_th(h) for h in heads) + "".join(
            _th(LIMIT_INFO[f].label, numeric=True) for f in fields
        )
        rows = []
        shown = items if max_rows is None else items[: max(max_rows, 0)]
        for i in shown:
            cells = [
                f"<b>{e(_text(i.name))}</b>",
                f"<code>{e(short_id(i.id))}</code>",
                e(_text(i.type)),
                e(_text(i.region)),
            ]
            if details:
                cells += [e(_text(i.endpoint)), e(_created(i))]
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
        _field_html("Plan", plan),
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
    head += [LIMIT_INFO[f].label.replace(" / ", "/") for f in LIMIT_FIELDS]
    rows = []
    for index in items:
        row = [
            _text(index.name),
            short_id(index.id),
            _text(index.type),
            _text(index.region),
            _created(index, "%Y-%m-%d %H:%M"),
        ]
        row += [format_limit(getattr(index, f, None), f) for f in LIMIT_FIELDS]
        if show_secrets:
            row += [_secret_text(index.token) or "—", _secret_text(index.read_only_token) or "—"]
        rows.append([terminal_safe(cell) for cell in row])
    if show_secrets:
        head += ["token", "read_only_token"]
    numeric = {head.index(LIMIT_INFO[f].label.replace(" / ", "/")) for f in LIMIT_FIELDS}
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
