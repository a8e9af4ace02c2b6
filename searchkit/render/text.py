"""Terminal and CSV text of indexes: aligned tables that a hostile name cannot garble."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from searchkit.model.index import IndexList, SearchIndex
from searchkit.model.limits import LIMIT_FIELDS, LIMIT_INFO
from searchkit.model.secret import secret_value
from searchkit.render.formats import created_text, format_limit, plain_text, short_id

if TYPE_CHECKING:
    pass

__all__ = [
    "MAX_CELL",
    "aligned_table",
    "clip",
    "limits_csv_text",
    "limits_table_cells",
    "limits_text_table",
    "terminal_safe",
    "text_width",
]

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

    Columns are ``wcwidth``'s; a character it calls unprintable counts 0 (the text has been
    through :func:`terminal_safe`, which escapes control characters, before it is measured).

    Example:
        >>> text_width("docs"), text_width("文書"), text_width("🚀 docs")
        (4, 4, 7)
    """
    from wcwidth import wcswidth, wcwidth

    width = wcswidth(text)
    return width if width >= 0 else sum(max(wcwidth(char), 0) for char in text)


#: Widest a table cell is shown, in terminal columns: a longer text (a 10,000-character
#: index name) is cut with "…", so one cell cannot pad every row of a table to its width.
MAX_CELL = 100


def clip(text: str, width: int = MAX_CELL) -> str:
    """Return ``text`` cut to ``width`` terminal columns, ending in "…" when it was cut.

    Example:
        >>> clip("docs"), clip("x" * 100, 10), clip("文書文書文書", 7)
        ('docs', 'xxxxxxxxx…', '文書文…')
    """
    if text_width(text) <= width:
        return text
    from wcwidth import wcwidth

    kept, used = [], 0
    for char in text:
        used += max(wcwidth(char), 0)
        if used > width - 1:
            break
        kept.append(char)
    return "".join(kept) + "…"


def _pad(text: str, width: int, *, right: bool) -> str:
    gap = " " * max(width - text_width(text), 0)
    return gap + text if right else text + gap


def limits_text_table(
    indexes: IndexList | Iterable[SearchIndex], show_secrets: bool = False
) -> str:
    """Return the indexes as an aligned plain-text table for a terminal, one row each.

    Columns: name, a short id (the first 8 characters), type, region, creation time (UTC),
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
    head, rows, numeric, tokens = limits_table_cells(items, show_secrets=show_secrets)
    return aligned_table(head, rows, right=numeric, whole=tokens)


def limits_table_cells(
    indexes: Iterable[SearchIndex], *, show_secrets: bool = False
) -> tuple[list[str], list[list[str]], set[int], set[int]]:
    """Return the cells of :func:`limits_text_table`: header, rows, right-aligned and
    never-cut columns (by position), every text through :func:`terminal_safe`."""
    head = ["name", "id", "type", "region", "created (UTC)"]
    head += [LIMIT_INFO[f].label.replace(" / ", "/") for f in LIMIT_FIELDS]
    rows = []
    for index in indexes:
        row = [
            plain_text(index.name),
            short_id(index.id),
            plain_text(index.type),
            plain_text(index.region),
            created_text(index, "%Y-%m-%d %H:%M"),
        ]
        row += [format_limit(getattr(index, f, None), f) for f in LIMIT_FIELDS]
        if show_secrets:
            row += [secret_value(index.token) or "—", secret_value(index.read_only_token) or "—"]
        rows.append([terminal_safe(cell) for cell in row])
    if show_secrets:
        head += ["token", "read_only_token"]
    numeric = {head.index(LIMIT_INFO[f].label.replace(" / ", "/")) for f in LIMIT_FIELDS}
    tokens = {len(head) - 2, len(head) - 1} if show_secrets else set()
    return head, rows, numeric, tokens


def aligned_table(
    head: Sequence[str],
    rows: Iterable[Sequence[str]],
    right: Collection[int] = (),
    whole: Collection[int] = (),
) -> str:
    """Return ``head`` and ``rows`` as columns two spaces apart, without a final newline.

    Widths are terminal columns (:func:`text_width`), so wide names (CJK, emoji) keep the
    columns aligned; the columns numbered in ``right`` are right-aligned, the others
    left-aligned; trailing spaces are dropped. A cell wider than :data:`MAX_CELL` is cut
    with "…" (:func:`clip`), except in the columns numbered in ``whole`` (tokens to copy).
    The cells are otherwise written as given: pass them through :func:`terminal_safe`
    first when they hold text from elsewhere.

    Example:
        >>> print(aligned_table(["name", "used"], [["文書", "1,000"], ["docs-search", "7"]],
        ...                     right={1}))
        name          used
        文書         1,000
        docs-search      7
    """
    cut = [list(row) for row in rows]
    for row in cut:
        row[:] = [cell if c in whole else clip(cell) for c, cell in enumerate(row)]
    table = [list(head), *cut]
    widths = [max(text_width(r[c]) for r in table) for c in range(len(head))]
    return "\n".join(
        "  ".join(_pad(cell, widths[c], right=c in right) for c, cell in enumerate(row)).rstrip()
        for row in table
    )


def _csv_limit(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return "" if value is None else str(value)
    if isinstance(value, int):
        return "inf" if value == -1 else str(value)  # a number pandas reads back: float("inf")
    return str(value)


def limits_csv_text(indexes: IndexList | Iterable[SearchIndex], show_secrets: bool = False) -> str:
    """Return the indexes as CSV for other programs, one row per index, with a header.

    Columns: ``index_id`` (the index key, named as in every frame, so the file joins them;
    the API's ``id``), then named as in ``--format json`` (the API's fields): ``name``,
    ``type``, ``region``, ``endpoint``, ``partner_email``, ``creation_time`` (ISO 8601, UTC),
    ``input_enrichment_enabled`` (``true``/``false``), the nine limits, and with
    ``show_secrets`` ``token`` and ``read_only_token``. Numbers stay numbers: limits are the
    service's integers as written, except -1, which is written ``inf`` (what pandas writes
    for an unlimited limit, in ``forecast.csv`` or ``limits_frame(...).to_csv()``, and reads
    back as ``float("inf")``); an absent value is an empty field. Text passes through
    :func:`terminal_safe`, so a control character in a name is written as a visible escape
    (use ``--format json`` for the exact text).

    Example:
        >>> print(limits_csv_text([SearchIndex.from_dict(
        ...     {"id": "a1", "name": "docs", "max_daily_queries": -1,
        ...      "max_vector_count": 2000000000})]).splitlines()[1])
        a1,docs,,,,,,,2000000000,,,inf,,,,,
        >>> limits_csv_text([]).split(",")[:2]
        ['index_id', 'name']
    """
    import csv
    import io

    head = ["index_id", "name", "type", "region", "endpoint", "partner_email", "creation_time"]
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
            "" if index.type is None else plain_text(index.type),
            "" if index.region is None else plain_text(index.region),
            index.endpoint or "",
            index.partner_email or "",
            created.isoformat() if isinstance(created, dt.datetime) else "",
            "" if not isinstance(enrichment, bool) else str(enrichment).lower(),
        ]
        row += [_csv_limit(getattr(index, f, None)) for f in LIMIT_FIELDS]
        if show_secrets:
            row += [secret_value(index.token) or "", secret_value(index.read_only_token) or ""]
        writer.writerow([terminal_safe(cell) for cell in row])
    return out.getvalue()
