"""The widgets' tests draw the same pictures again and again: each test builds its browser
on the same demo data at the same fixed clock, and the browser draws its first index; the
cockpit draws the same row's day. Drawing them (light and dark, matplotlib to PNG) was half
of these files' CPU time. So here each distinct picture is drawn once per worker by the
product's own function and handed, the same bytes, to every later widget that asks for
exactly the same one: the same arguments, compared by their pickled bytes. A picture whose
arguments cannot say all it depends on (a day that reads its index's points from a store
when drawn) is drawn every time. tests/render tests the drawings themselves, uncached.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable
from typing import Any

import pytest

#: A drawing's arguments (hashed pickle) -> what the product's function returned for them.
_DRAWN: dict[bytes, Any] = {}


def _drawn_once(
    draw: Callable[..., Any], depends_on_more: Callable[..., bool]
) -> Callable[..., Any]:
    def once(*args: Any, **kwargs: Any) -> Any:
        if depends_on_more(*args, **kwargs):
            return draw(*args, **kwargs)
        try:
            key = hashlib.sha256(
                pickle.dumps((draw.__qualname__, args, sorted(kwargs.items())))
            ).digest()
        except (pickle.PicklingError, TypeError, AttributeError):
            return draw(*args, **kwargs)
        if key not in _DRAWN:
            _DRAWN[key] = draw(*args, **kwargs)
        return _DRAWN[key]

    return once


@pytest.fixture(autouse=True)
def _pictures_drawn_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from searchkit.render import cockpit_pictures
    from searchkit.ui import browser

    monkeypatch.setattr(
        browser, "throughput_pngs", _drawn_once(browser.throughput_pngs, lambda **_: False)
    )
    # A day with a source reads that store's points while it is drawn: not cached.
    monkeypatch.setattr(
        cockpit_pictures,
        "day_pngs",
        _drawn_once(cockpit_pictures.day_pngs, lambda day, *_, **__: day.source is not None),
    )
