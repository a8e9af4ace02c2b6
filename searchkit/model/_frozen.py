"""Read-only JSON values: what models keep of fields they do not type.

Kept apart (and free of heavy imports) so that the models and the throughput columns can both
use it without importing each other.
"""

from __future__ import annotations

import types
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["FrozenMapping", "thaw"]

_EMPTY: Mapping[str, Any] = types.MappingProxyType({})


class FrozenMapping(Mapping[str, Any]):
    """A read-only, hashable mapping of JSON values (nested arrays become tuples)."""

    __slots__ = ("_data",)
    _data: dict[str, Any]

    def __init__(self, data: Mapping[str, Any] = _EMPTY) -> None:
        object.__setattr__(self, "_data", {str(k): _freeze(v) for k, v in data.items()})

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a FrozenMapping is immutable")

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(frozenset(self._data.items()))

    def __repr__(self) -> str:
        return f"FrozenMapping({self._data!r})"

    def __copy__(self) -> FrozenMapping:
        return self

    def __deepcopy__(self, memo: Any) -> FrozenMapping:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenMapping, (thaw(self),))


def _freeze(value: Any) -> Any:
    if isinstance(value, FrozenMapping):
        return value
    if isinstance(value, Mapping):
        return FrozenMapping(value)
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """Return a frozen JSON value as plain dicts and lists again."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
    return value
