"""One listing of a History per analytics call.

``usage_frame``, ``forecast_limits`` and ``backtest_forecast`` read a History through
several of its methods; :func:`listed_once` runs them in one
:meth:`~searchkit.History.reading` scope, so on an object store each dataset is listed with
one LIST request for the whole call, whatever the days it reads (tests/history/
test_history_requests.py counts them at moto's server).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

__all__ = ["listed_once"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


def listed_once(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run ``function`` in its first argument's listing scope when that is a History."""

    @functools.wraps(function)
    def scoped(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        from searchkit.history.usage_history import History

        source = args[0] if args else kwargs.get("source")
        scope = source.reading() if isinstance(source, History) else contextlib.nullcontext()
        with scope:
            return function(*args, **kwargs)

    return scoped
