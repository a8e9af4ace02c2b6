"""The command line's tests see no terminal width unless a test sets one.

``searchkit list`` fits its table to ``COLUMNS`` when that is set: a CI job or a shell that
exports it must not cut the tables the other tests read whole.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
