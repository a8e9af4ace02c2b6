"""Throughput points as immutable columns: :class:`Throughput`, one index's points.

The readers that make them are in :mod:`searchkit.model._decode`. Kept apart from the
models so that importing them does not load NumPy, pandas and Arrow.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from searchkit.errors import InvalidResponseError, SearchKitError, TimestampError
from searchkit.model._frozen import FrozenMapping, thaw
from searchkit.model.gotime import (
    explain,
    fast_parse,
    format_layout,
    nanos_to_index,
    string_buffers,
)

__all__ = ["EMPTY", "NAT", "Problem", "Throughput"]

#: NaT as int64 epoch nanoseconds.
NAT = np.iinfo(np.int64).min
_NO_TEXTS = pa.array([], pa.string())


# --- throughput: columns, not objects ------------------------------------------------------


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


class Problem(enum.IntEnum):
    """Why a point cannot be read, worded with the index's name when a frame asks."""

    NOT_OBJECT = 0
    NO_TIME = 1
    TIME_NOT_TEXT = 2
    BAD_TIME = 3
    BAD_VALUE = 4


class Throughput:
    """The throughput samples of one index as immutable columns, in the order sent.

    Each point costs 24 bytes: its instant (``int64`` nanoseconds, NaT when unreadable),
    its value (``float64``, NaN for null or unreadable) and an 8-byte layout key from which
    the Go text is rebuilt byte for byte. Texts the fast layout does not cover (a monotonic
    suffix, a long zone name) are kept as sent in an Arrow column beside their positions;
    points that cannot be read are kept as sent, by position, with why they cannot be read;
    :meth:`error` words that for a frame.

    Example:
        >>> index = SearchIndex.from_dict({"name": "docs", "throughput_vector": [
        ...     {"x": "2026-01-01 12:00:00.5 +0100 CET", "y": 3}]})
        >>> index.throughput.times[0], index.throughput.values[0]
        (Timestamp('2026-01-01 11:00:00.500000+0000', tz='UTC'), np.float64(3.0))
    """

    __slots__ = (
        "_kept",
        "_layout",
        "_nanos",
        "_problems",
        "_source",
        "_text_rows",
        "_texts",
        "_values",
    )
    _kept: FrozenMapping
    _text_rows: np.ndarray
    _texts: pa.Array
    _layout: np.ndarray | None
    _source: pa.Array | None
    _nanos: np.ndarray
    _problems: tuple[tuple[int, int], ...]
    _values: np.ndarray

    def __init__(
        self,
        nanos: np.ndarray,
        values: np.ndarray,
        layout: np.ndarray | pa.Array,
        kept: Mapping[int, Any] | None = None,
        problems: tuple[tuple[int, int], ...] = (),
        text_rows: np.ndarray | None = None,
        texts: pa.Array | None = None,
    ) -> None:
        if not (nanos.shape == values.shape == (len(layout),) and nanos.ndim == 1):
            raise ValueError("nanos, values and layout must be 1-D arrays of one length")
        set_ = object.__setattr__
        set_(self, "_nanos", _read_only(nanos.astype(np.int64, copy=False).view()))
        set_(self, "_values", _read_only(values.astype(np.float64, copy=False).view()))
        if isinstance(layout, pa.Array):
            # The texts themselves: their layout keys are computed when first needed (a
            # frame never needs them), and the texts dropped then.
            set_(self, "_layout", None)
            set_(self, "_source", layout)
        else:
            set_(self, "_layout", _read_only(layout.astype(np.uint64, copy=False).view()))
            set_(self, "_source", None)
        set_(self, "_kept", FrozenMapping({str(k): v for k, v in (kept or {}).items()}))
        set_(self, "_problems", tuple(problems))
        rows = np.empty(0, np.int64) if text_rows is None else text_rows.astype(np.int64)
        set_(self, "_text_rows", _read_only(rows))
        set_(self, "_texts", _NO_TEXTS if texts is None else texts)
        if len(self._texts) != rows.size:
            raise ValueError("text_rows and texts must have one length")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Throughput is immutable")

    @property
    def nanos(self) -> np.ndarray:
        """Instants as read-only ``int64`` epoch nanoseconds (int64 min where unreadable)."""
        return self._nanos

    @property
    def values(self) -> np.ndarray:
        """Values as a read-only ``float64`` array (NaN for null or unreadable)."""
        return self._values

    @property
    def times(self) -> pd.DatetimeIndex:
        """Instants as a UTC ``DatetimeIndex`` (NaT where unreadable)."""
        return nanos_to_index(self._nanos)

    @property
    def problems(self) -> tuple[tuple[int, int], ...]:
        """(position, reason code) of each point that cannot be read, in order."""
        return self._problems

    def __len__(self) -> int:
        return int(self._nanos.size)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Throughput):
            return NotImplemented
        return (
            np.array_equal(self._nanos, other._nanos)
            and np.array_equal(self._values, other._values, equal_nan=True)
            and np.array_equal(self._keys(), other._keys())
            and self._kept == other._kept
            and self._problems == other._problems
            and np.array_equal(self._text_rows, other._text_rows)
            and self._texts.equals(other._texts)
        )

    def __hash__(self) -> int:
        return hash((len(self), self._nanos[:1].tobytes(), self._nanos[-1:].tobytes()))

    def __repr__(self) -> str:
        return f"Throughput({len(self)} points)"

    def __copy__(self) -> Throughput:
        return self

    def __deepcopy__(self, memo: Any) -> Throughput:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        kept = {int(k): v for k, v in self._kept.items()}
        arrays = (self._nanos.copy(), self._values.copy(), self._keys().copy())
        texts = (self._text_rows.copy(), self._texts)
        return (Throughput, (*arrays, kept, self._problems, *texts))

    def error(self, name: str | None, *, values_only: bool = False) -> SearchKitError | None:
        """Return the error naming the first point that cannot be read (None if all can).

        Args:
            name: The index's name, for the message.
            values_only: Consider only points that are no object or have a bad ``y``.
        """
        problems = self._problems
        if values_only:
            problems = tuple(p for p in problems if p[1] in (Problem.NOT_OBJECT, Problem.BAD_VALUE))
        if not problems:
            return None
        position, reason = problems[0]
        where = f"at position {position} of index {name!r}"
        raw = self._kept.get(str(position))
        x = raw.get("x") if isinstance(raw, Mapping) else self._text_at(position)
        if reason == Problem.NOT_OBJECT:
            return InvalidResponseError(
                f"throughput_vector[{position}] of index {name!r} is not an object"
            )
        if reason == Problem.BAD_VALUE:
            y = raw.get("y") if isinstance(raw, Mapping) else None
            return InvalidResponseError(
                f"throughput_vector[{position}] of index {name!r} has a non-numeric y: "
                f"{_shorten(y)}"
            )
        if reason == Problem.NO_TIME:
            return TimestampError(f"throughput point {where} has no time 'x'")
        if reason == Problem.TIME_NOT_TEXT:
            return TimestampError(
                f"cannot parse timestamp {_shorten(x)} {where}: "
                f"expected text, got {type(x).__name__}"
            )
        return TimestampError(f"cannot parse timestamp {_shorten(x)} {where}: {explain(x)}")

    def points(self) -> list[Any]:
        """Return the points as the API's JSON objects (``{"x": text, "y": value}``)."""
        out: list[Any] = [None] * len(self)
        keys = self._keys()
        fast = np.flatnonzero(keys != 0)
        texts = format_layout(self._nanos[fast], keys[fast])
        values = [None if v != v else v for v in self._values.tolist()]
        for position, text in zip(fast.tolist(), texts, strict=True):
            out[position] = {"x": text, "y": values[position]}
        for row, text in zip(self._text_rows.tolist(), self._texts.to_pylist(), strict=True):
            out[row] = {"x": text, "y": values[row]}
        for key, raw in self._kept.items():
            out[int(key)] = thaw(raw)
        return out

    def _keys(self) -> np.ndarray:
        """Return the layout keys (0 where the text is kept as sent), computing them once."""
        if self._layout is None:
            assert self._source is not None
            offsets, data = string_buffers(self._source)
            _, ok, keys = fast_parse(data, offsets[:-1], offsets[1:] - offsets[:-1], layout=True)
            assert keys is not None
            keys[~ok] = 0
            object.__setattr__(self, "_layout", _read_only(keys))
            object.__setattr__(self, "_source", None)
        assert self._layout is not None
        return self._layout

    def _text_at(self, position: int) -> str | None:
        found = int(np.searchsorted(self._text_rows, position))
        if found < self._text_rows.size and self._text_rows[found] == position:
            text: str | None = self._texts[found].as_py()
            return text
        return None


EMPTY = Throughput(np.empty(0, np.int64), np.empty(0, np.float64), np.empty(0, np.uint64))


def _shorten(value: Any, limit: int = 60) -> str:
    shown = repr(value)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"
