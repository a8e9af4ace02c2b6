"""Fit a text table to a terminal's width: columns left out by a stated priority, names cut.

``searchkit list`` printed 188 columns whatever the terminal, so an 80-column terminal
wrapped every row into three. Here a table is cut to a width the way a person reads it:
the name first, then what is asked most (the daily limits), then the rest in
:data:`COLUMN_PRIORITY` order until the first that does not fit whole: it and every later
one are left out (a number cut in half would read as another number), and the columns
that stay keep the table's order. The
name column gives up width last: cut with "…" only when even the first columns after it
would not fit otherwise.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import NamedTuple

__all__ = ["COLUMN_PRIORITY", "NAME_LEAST", "FittedTable", "choose_columns", "fit_table"]

#: Which columns stay first when a table is too wide (the header's words); a column not
#: named here goes last. ``name`` always stays.
COLUMN_PRIORITY = (
    "name",
    "token",
    "read_only_token",
    "queries/day",
    "updates/day",
    "type",
    "region",
    "id",
    "vectors",
    "bandwidth/month",
    "reranks/month",
    "queries/s",
    "writes/s",
    "created (UTC)",
    "reads/request",
    "writes/request",
)
#: Fewest terminal columns the name is cut to while other columns are being fitted.
NAME_LEAST = 20
_GAP = 2  # spaces between two columns (aligned_table's)


class FittedTable(NamedTuple):
    """A table fitted to a width: its text and the columns left out, in the table's order."""

    text: str
    left_out: tuple[str, ...]


def fit_table(
    head: Sequence[str],
    rows: Sequence[Sequence[str]],
    width: int | None,
    *,
    right: Collection[int] = (),
    whole: Collection[int] = (),
    priority: Sequence[str] = COLUMN_PRIORITY,
) -> FittedTable:
    """Return the table as :func:`aligned_table` draws it, at most ``width`` columns wide.

    Args:
        head: The columns' names; the first is the name column, which always stays.
        rows: The cells, through :func:`terminal_safe` already.
        width: Terminal columns to fit; None draws every column (nothing is left out).
        right: Columns (by position in ``head``) right-aligned.
        whole: Columns never cut (tokens to copy): they stay even past ``width``.
        priority: The order in which columns are kept.

    Returns:
        The table's text and the names of the columns left out. A table whose name and
        ``whole`` columns alone are wider than ``width`` is drawn that wide.
    """
    # Imported here: `searchkit --help` reads COLUMN_PRIORITY, and the text module's
    # imports would add ~5% to its start-up (bench/startup.py).
    from searchkit.render.text import aligned_table, clip, text_width

    if width is None:
        return FittedTable(aligned_table(head, rows, right=right, whole=whole), ())
    widths = [
        max([text_width(head[c])] + [text_width(clip(r[c])) for r in rows])
        for c in range(len(head))
    ]
    rank = {name: n for n, name in enumerate(priority)}
    order = sorted(range(1, len(head)), key=lambda c: (c not in whole, rank.get(head[c], 99), c))
    name = min(widths[0], max(NAME_LEAST, text_width(head[0])))
    kept, used = [0], name
    for c in order:  # in priority order, until the first that does not fit
        if c not in whole and used + _GAP + widths[c] > width:
            break
        kept.append(c)
        used += _GAP + widths[c]
    # What is left goes back to the name, up to its own width.
    name = min(widths[0], name + max(width - used, 0))
    kept.sort()
    cut_rows = [[clip(r[0], name)] + [r[c] for c in kept[1:]] for r in rows]
    text = aligned_table(
        [clip(head[0], name)] + [head[c] for c in kept[1:]],
        cut_rows,
        right={n for n, c in enumerate(kept) if c in right},
        whole={n for n, c in enumerate(kept) if c in whole},
    )
    return FittedTable(text, tuple(head[c] for c in range(len(head)) if c not in kept))


def choose_columns(
    head: Sequence[str], rows: Sequence[Sequence[str]], wanted: Sequence[str]
) -> tuple[list[str], list[list[str]], list[int]]:
    """Return the name column and the ``wanted`` ones (by header word), in the table's order.

    Returns:
        The header, the rows, and for each column kept its position in ``head`` (to carry
        its alignment over).

    Raises:
        ValidationError: a wanted column is not in the table; the message lists them all.
    """
    from searchkit.errors import ValidationError

    known = {word.lower(): c for c, word in enumerate(head)}
    known.setdefault("created", known.get("created (utc)", -1))
    words = [w.strip().lower() for w in wanted]
    unknown = [w for w, word in zip(wanted, words, strict=True) if known.get(word, -1) < 0]
    if unknown:
        raise ValidationError(
            f"no column {', '.join(map(repr, unknown))}: the columns are {', '.join(head)}"
        )
    kept = sorted({0, *(known[word] for word in words)})
    return [head[c] for c in kept], [[r[c] for c in kept] for r in rows], kept
