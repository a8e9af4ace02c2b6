"""The limits table as a terminal shows it: fitted to its width, every column, or those named.

``searchkit list`` and ``create`` print it, and so does ``searchkit demo``: one rule for all
three (:mod:`~searchkit.render.table_width` says which columns stay).
"""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Iterable, Sequence
from typing import TextIO

from searchkit.model.index import SearchIndex
from searchkit.render.table_width import choose_columns, fit_table
from searchkit.render.text import limits_table_cells

__all__ = ["limits_table", "terminal_columns"]


def terminal_columns(stream: TextIO | None = None) -> int | None:
    """The terminal's width (``COLUMNS`` first), when ``stream`` (standard output by
    default) is one, or is standard output and ``COLUMNS`` is set; else None: a file, a
    program or a string buffer reading the table gets every column."""
    import shutil

    stream = stream or sys.stdout
    terminal = hasattr(stream, "isatty") and stream.isatty()
    if not terminal and not (stream is sys.stdout and "COLUMNS" in os.environ):
        return None
    return shutil.get_terminal_size().columns


def limits_table(
    indexes: Iterable[SearchIndex],
    *,
    width: int | None,
    columns: Sequence[str] | None = None,
    show_secrets: bool = False,
) -> str:
    """Return the limits table ``width`` columns wide (None: every column), or ``columns``
    only (and the name); a closing note names the columns left out and how to see them.

    Raises:
        ValidationError: a name in ``columns`` is not a column of the table.
    """
    items = list(indexes)
    if not items:
        return "(no indexes)"
    head, rows, right, whole = limits_table_cells(items, show_secrets=show_secrets)
    if columns:
        head, rows, kept = choose_columns(head, rows, columns)
        right = {n for n, c in enumerate(kept) if c in right}
        whole = {n for n, c in enumerate(kept) if c in whole}
        width = None
    fitted = fit_table(head, rows, width, right=right, whole=whole)
    if not fitted.left_out:
        return fitted.text
    many = len(fitted.left_out)
    note = (
        f"{many} column{'s' if many > 1 else ''} left out to fit {width} columns: "
        f"{', '.join(fitted.left_out)}."
    )
    hint = "`searchkit list --wide` shows every column, `--columns A,B` the ones named."
    room = max(width or 0, 40)
    return "\n".join([fitted.text, *textwrap.wrap(note, room), *textwrap.wrap(hint, room)])
