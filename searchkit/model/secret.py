"""Secrets: tokens that never show themselves, one way to read them, one mask text."""

from __future__ import annotations

import hmac
from typing import Any

__all__ = ["MASK", "Secret", "masked", "secret_value"]

#: What a secret shows instead of its value, everywhere searchkit prints one.
MASK = "••••••••"


class Secret(str):
    """A token that never shows itself: as text it *is* its mask.

    A ``Secret`` is a ``str`` whose characters are the mask ``••••••••``; the real value is
    kept aside and read with :meth:`get_secret_value` (the pydantic convention). So every
    conversion that treats it as text (``str``, ``repr``, f-strings, ``json.dumps``,
    ``pd.DataFrame(indexes)`` and Parquet, Feather or CSV written from it) gives the mask,
    and nothing but that one explicit call gives the token. Two secrets are equal when their
    values are (a secret equals no plain text, the mask included); a secret is hashable and
    true when its value is not empty (the one fact :func:`masked` shows, as "—"). Its
    ``len`` is the mask's, 8, whatever the value: a token's length is a fact about it that
    a ``len`` in a repr, a widget's state or a table width would otherwise give away.

    Example:
        >>> token = Secret("s3cr3t")
        >>> str(token), f"{token}", token.get_secret_value()
        ('••••••••', '••••••••', 's3cr3t')
        >>> len(token), len(Secret("a much longer token")), bool(token), bool(Secret(""))
        (8, 8, True, False)
    """

    _value: str

    def __new__(cls, value: str) -> Secret:
        if isinstance(value, Secret):
            return value
        if not isinstance(value, str):
            raise TypeError(f"a Secret holds text, got {type(value).__name__}")
        self = super().__new__(cls, MASK)
        object.__setattr__(self, "_value", value)
        return self

    def get_secret_value(self) -> str:
        """Return the real value."""
        return self._value

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a Secret is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("a Secret is immutable")

    def __str__(self) -> str:
        return MASK

    def __repr__(self) -> str:
        return f"Secret({MASK!r})"

    def __format__(self, spec: str) -> str:
        return format(MASK, spec)

    def __eq__(self, other: object) -> bool:
        # Not NotImplemented for plain text: str's own == would then find the mask equal.
        if isinstance(other, Secret):
            return hmac.compare_digest(self._value.encode(), other._value.encode())
        return False

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((Secret, self._value))

    def __bool__(self) -> bool:
        return bool(self._value)

    def __len__(self) -> int:
        # The text's length, like every str operation on a Secret: the mask's, never the
        # value's (pydantic's SecretStr gives the value's, which tells a 4-digit PIN apart).
        return len(MASK)

    def __reduce__(self) -> tuple[Any, ...]:
        return (Secret, (self._value,))

    def __copy__(self) -> Secret:
        return self

    def __deepcopy__(self, memo: Any) -> Secret:
        return self


def secret_value(value: object) -> str | None:
    """Return the real text of a token: a :class:`Secret`'s value, other text as it is.

    The one way searchkit reads a secret (tables with ``show_secrets``, ``to_dict``, the
    client's list of texts to mask). None stays None.
    """
    if isinstance(value, Secret):
        return value.get_secret_value()
    return None if value is None else str(value)


def masked(secret: object) -> str:
    """Return the mask for a secret that is set, "—" for one that is absent or empty."""
    return MASK if secret else "—"
