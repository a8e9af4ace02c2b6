"""Secrets: tokens that never show themselves, one way to read them, one mask text."""

from __future__ import annotations

import hmac
from typing import Any

__all__ = ["MASK", "Secret", "masked", "secret_value"]

#: What a secret shows instead of its value, everywhere searchkit prints one.
MASK = "••••••••"


class Secret:
    """A token that never shows itself: str, repr and format print a mask.

    The pydantic convention: read the real value with :meth:`get_secret_value`. Two secrets
    are equal when their values are; a secret is hashable and true when not empty.

    Example:
        >>> token = Secret("s3cr3t")
        >>> str(token), f"{token}", token.get_secret_value()
        ('••••••••', '••••••••', 's3cr3t')
    """

    __slots__ = ("_value",)
    _value: str

    def __init__(self, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError(f"a Secret holds text, got {type(value).__name__}")
        object.__setattr__(self, "_value", value)

    def get_secret_value(self) -> str:
        """Return the real value."""
        return self._value

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a Secret is immutable")

    def __str__(self) -> str:
        return MASK

    def __repr__(self) -> str:
        return f"Secret({MASK!r})"

    def __format__(self, spec: str) -> str:
        return format(MASK, spec)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Secret):
            return hmac.compare_digest(self._value.encode(), other._value.encode())
        return NotImplemented

    def __hash__(self) -> int:
        return hash((Secret, self._value))

    def __bool__(self) -> bool:
        return bool(self._value)

    def __len__(self) -> int:
        # As pydantic's SecretStr: the length is not the secret.
        return len(self._value)

    def __reduce__(self) -> tuple[Any, ...]:
        return (Secret, (self._value,))

    def __copy__(self) -> Secret:
        return self

    def __deepcopy__(self, memo: Any) -> Secret:
        return self


def secret_value(value: Secret | str | None) -> str | None:
    """Return the real text of a token whether it is a :class:`Secret`, text or None."""
    return value.get_secret_value() if isinstance(value, Secret) else value


def masked(secret: object) -> str:
    """Return the mask for a secret that is set, "—" for one that is absent or empty."""
    return MASK if secret else "—"
