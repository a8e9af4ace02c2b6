"""Old spellings that still work for one release, each with a DeprecationWarning.

Version 0.2.0 settled one vocabulary (see CHANGELOG.md): the first argument of a function
taking indexes is ``source``, every option after it is keyword-only, a few options and
attributes have new names. Notebooks written against 0.1.0 keep running through 0.2.x: the
old keyword, an option passed by position, an old attribute still give the same result, and
a :class:`DeprecationWarning` says what to write instead. They go in 0.3.0.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

__all__ = ["REMOVED_IN", "legacy_arguments", "warn_deprecated"]

#: The release that drops the old spellings.
REMOVED_IN = "0.3.0"

F = TypeVar("F", bound=Callable[..., Any])


def warn_deprecated(message: str, *, stacklevel: int = 3) -> None:
    """Warn that an old spelling was used; ``stacklevel`` 3 points at the caller's caller.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as seen:
        ...     warnings.simplefilter("always")
        ...     warn_deprecated("old is now new")
        >>> str(seen[0].message)
        'old is now new (the old spelling goes in searchkit 0.3.0)'
    """
    warnings.warn(
        f"{message} (the old spelling goes in searchkit {REMOVED_IN})",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def legacy_arguments(
    *,
    positional: tuple[str, ...] = (),
    renamed: Mapping[str, str] | None = None,
    first: int = 1,
) -> Callable[[F], F]:
    """Accept a function's 0.1.0 calls: options by position and old keyword names.

    The decorated function declares only the new signature (``inspect.signature`` shows
    it); a call that uses the old one is translated, with one warning per old spelling.

    Args:
        positional: The options, in their old order, that used to be accepted by position
            after the first ``first`` arguments (now keyword-only).
        renamed: Old keyword name -> new name.
        first: How many leading arguments stay positional (``self`` counts).

    Example:
        >>> @legacy_arguments(positional=("freq",), renamed={"indexes": "source"})
        ... def usage(source, *, freq="D"):
        ...     return source, freq
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     usage("x", "W"), usage(indexes="x")
        (('x', 'W'), ('x', 'D'))
    """
    old_names = dict(renamed or {})

    def decorate(func: F) -> F:
        name = func.__qualname__

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if len(args) > first:
                args = _keywords_from_positions(name, args, kwargs, first, positional)
            for old, new in old_names.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{name}() got both {old!r} and its new name {new!r}")
                    warn_deprecated(f"{name}(): the argument {old!r} is now called {new!r}")
                    kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        return cast(F, wrapper)

    return decorate


def _keywords_from_positions(
    name: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    first: int,
    positional: tuple[str, ...],
) -> tuple[Any, ...]:
    """Move options passed by position into ``kwargs`` (warning once); return the rest."""
    extra = args[first:]
    if len(extra) > len(positional):
        raise TypeError(
            f"{name}() got {len(extra)} options by position, at most {len(positional)} "
            "allowed; options after the first argument are keyword-only"
        )
    names = positional[: len(extra)]
    for option in names:
        if option in kwargs:
            raise TypeError(f"{name}() got multiple values for argument {option!r}")
    kwargs.update(zip(names, extra, strict=True))
    spelled = ", ".join(f"{option}=..." for option in names)
    warn_deprecated(
        f"{name}(): pass {', '.join(names)} by keyword ({spelled}); options after the "
        "first argument are keyword-only",
        stacklevel=4,
    )
    return args[:first]
