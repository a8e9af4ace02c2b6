"""The widgets' tests draw the same pictures again and again: each test builds its browser
on the same demo data at the same fixed clock, and the browser draws its first index; the
cockpit draws the same row's day. Drawing them (light and dark, matplotlib to PNG) was half
of these files' CPU time. So here each distinct picture is drawn once per worker by the
product's own function and handed, the same bytes, to every later widget that asks for
exactly the same one: the same arguments, compared by their pickled bytes. A picture whose
arguments cannot say all it depends on (a day that reads its index's points from a store
when drawn) is drawn every time. tests/render tests the drawings themselves, uncached.
The cockpit's warm-up drawing runs once per worker too.
"""

from __future__ import annotations

import hashlib
import io
import pickle
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest

#: A drawing's arguments (hashed pickle) -> what the product's function returned for them.
_DRAWN: dict[bytes, Any] = {}


class _Canonical(pickle.Pickler):
    """Pickles a frame as a fresh copy of it: the same values give the same bytes even after
    pandas cached something on one of them (a drawing reading a row does)."""

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, pd.DataFrame | pd.Series):
            return obj.copy().__reduce_ex__(pickle.DEFAULT_PROTOCOL)
        return NotImplemented


def _drawn_once(
    draw: Callable[..., Any], depends_on_more: Callable[..., bool]
) -> Callable[..., Any]:
    def once(*args: Any, **kwargs: Any) -> Any:
        if depends_on_more(*args, **kwargs):
            return draw(*args, **kwargs)
        buffer = io.BytesIO()
        try:
            _Canonical(buffer).dump((draw.__qualname__, args, sorted(kwargs.items())))
        except (pickle.PicklingError, TypeError, AttributeError):
            return draw(*args, **kwargs)
        key = hashlib.sha256(buffer.getvalue()).digest()
        if key not in _DRAWN:
            _DRAWN[key] = draw(*args, **kwargs)
        return _DRAWN[key]

    return once


_WARMED: list[bool] = []


def _warm_up_once(warm_up: Callable[[], None]) -> Callable[[], None]:
    def once() -> None:
        if not _WARMED:
            _WARMED.append(True)
            warm_up()

    return once


@pytest.fixture(autouse=True)
def _pictures_drawn_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from searchkit.render import cockpit_pictures
    from searchkit.ui import browser

    monkeypatch.setattr(
        browser, "throughput_pngs", _drawn_once(browser.throughput_pngs, lambda **_: False)
    )
    # The cockpit warms matplotlib up (a tiny drawing) on a thread as it opens: once in a
    # worker does what it is for; each further cockpit's was 30-50 ms of drawing nothing.
    monkeypatch.setattr(cockpit_pictures, "warm_up", _warm_up_once(cockpit_pictures.warm_up))
    # A day with a source reads that store's points while it is drawn: not cached.
    monkeypatch.setattr(
        cockpit_pictures,
        "day_pngs",
        _drawn_once(cockpit_pictures.day_pngs, lambda day, *_, **__: day.source is not None),
    )
