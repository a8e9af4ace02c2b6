"""How a model shows itself in a notebook without importing the layer that draws it.

``_repr_html_`` of SearchIndex, IndexList and CollectSummary calls :func:`notebook_html`, which
calls the renderer installed with :func:`set_html_renderer`. The package face
(``searchkit/__init__.py``) installs render's HTML when searchkit is imported, so the model
(and the history) never imports rendering, which loads only when a notebook asks for HTML.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["notebook_html", "set_html_renderer"]

_renderer: list[Callable[[object], str]] = []


def set_html_renderer(renderer: Callable[[object], str]) -> None:
    """Make ``renderer`` the one that turns a model into notebook HTML."""
    _renderer[:] = [renderer]


def notebook_html(model: object) -> str | None:
    """Return a model's notebook HTML, or None (plain repr) when no renderer is installed."""
    return _renderer[0](model) if _renderer else None
