"""Readers of throughput points: decoded JSON, or a list body's bytes read in place.

:func:`read_vectors` reads decoded JSON (one Arrow pass over every point of every index) and
:func:`read_raw_items` reads a list body in place: msgspec leaves each throughput array as
raw bytes and :func:`~searchkit.model._scan.scan` turns the usual layout into columns with
array arithmetic, so no Python object is made per point. Both give equal
:class:`~searchkit.model.throughput.Throughput` values; :mod:`searchkit.model.index` is the
only caller.
"""

from __future__ import annotations

import bisect
import itertools
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec
import numpy as np
import pyarrow as pa

from searchkit.errors import InvalidResponseError
from searchkit.model._scan import WORKERS, scan
from searchkit.model.gotime import fast_parse, parse_to_nanos, string_buffers
from searchkit.model.throughput import EMPTY, NAT, Problem, Throughput

__all__ = ["decode_any", "decode_list", "decode_object", "read_raw_items", "read_vectors"]

_POINT_TYPE = pa.struct([("x", pa.string()), ("y", pa.float64())])


def _numeric(value: Any) -> float | None:
    """Read a JSON number or numeric text as a float; None when it is neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return float(value)
        except OverflowError:
            return None
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _refuse_booleans(vectors: list[Sequence[Any]], counts: list[int], values: np.ndarray) -> None:
    """Raise ArrowInvalid if a y that Arrow read as 0.0 or 1.0 was a JSON boolean."""
    maybe = np.flatnonzero((values == 0) | (values == 1))
    if not maybe.size:
        return
    if maybe.size * 8 > values.size:  # mostly zeros: one C-level pass over every y
        points: Iterable[Any] = itertools.chain.from_iterable(vectors)
        ys: Iterable[Any] = map(dict.get, points, itertools.repeat("y"))
    else:  # only the points read as 0 or 1
        ends = np.cumsum(counts)
        numbers = np.searchsorted(ends, maybe, side="right")
        offsets = maybe - (ends - np.asarray(counts))[numbers]
        ys = [vectors[n][j]["y"] for n, j in zip(numbers.tolist(), offsets.tolist(), strict=True)]
    if bool in set(map(type, ys)):
        raise pa.ArrowInvalid("a y is a boolean")


class _Batch:
    """Points of several indexes being read at once; split into one Throughput each."""

    def __init__(self) -> None:
        self.counts: list[int] = []
        # Per point, filled by the readers below (one entry per batch part).
        self.nanos: list[np.ndarray] = []
        self.values: list[np.ndarray] = []
        self.layout: list[pa.Array] = []  # the texts, from which keys are computed
        self.kept: list[dict[int, Any]] = []
        self.problems: list[list[tuple[int, int]]] = []
        self.texts: list[tuple[np.ndarray, pa.Array]] = []

    def add_objects(self, vectors: list[Sequence[Any]]) -> None:
        """Read decoded JSON: one Arrow pass over every point, Python only for odd ones."""
        counts = [len(v) for v in vectors]
        kept: dict[int, Any] = {}
        problems: dict[int, int] = {}
        try:
            # Arrow is more lenient than the rule, and both leniencies are closed here:
            # it takes the first point to say how all are given, and from a sequence of
            # (key, value) pairs (``""``, ``[]``, ``[["x", "..."]]``) it makes a point;
            # given a first dict it refuses any later non-dict.
            if type(next(itertools.chain.from_iterable(vectors), None)) is not dict:
                raise pa.ArrowInvalid("a point is not a dict")
            table = pa.array(vectors, type=pa.large_list(_POINT_TYPE)).flatten()
            if table.null_count:
                raise pa.ArrowInvalid("a point is not an object")
            texts, values = table.field("x"), table.field("y").to_numpy(zero_copy_only=False)
            # And it reads a boolean y as 1.0 or 0.0: only the indexes holding such
            # values have their y types looked at (one C-level pass each).
            _refuse_booleans(vectors, counts, values)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            texts, values = self._odd_points(vectors, kept, problems)
        if len(texts) and texts.null_count:
            missing = np.flatnonzero(texts.is_null().to_numpy(zero_copy_only=False))
            for position in missing.tolist():
                problems.setdefault(position, Problem.NO_TIME)
        offsets, data = string_buffers(texts)
        starts, lengths = offsets[:-1], offsets[1:] - offsets[:-1]
        # A frame needs no layout keys: each Throughput computes them from its texts if
        # ever asked (to_dict, equality, pickling).
        nanos, ok, _ = fast_parse(data, starts, lengths, wall_check=True, workers=WORKERS)
        slow = np.flatnonzero(~ok)
        slow_texts = texts.take(pa.array(slow)) if slow.size else pa.array([], pa.string())
        if slow.size:
            # Texts the fast path does not read (a monotonic suffix, a long zone name,
            # garbage) go through the one parser's general path and are kept as sent.
            nanos[slow] = parse_to_nanos(slow_texts, errors="coerce")
            present = slow_texts.is_valid().to_numpy(zero_copy_only=False)
            for row in slow[present & (nanos[slow] == NAT)].tolist():
                problems.setdefault(row, Problem.BAD_TIME)
        self._split(counts, nanos, values, texts, kept, problems, slow, slow_texts)

    def _odd_points(
        self, vectors: list[Sequence[Any]], kept: dict[int, Any], problems: dict[int, int]
    ) -> tuple[pa.Array, np.ndarray]:
        texts: list[str | None] = []
        values: list[float] = []
        for position, point in enumerate(itertools.chain.from_iterable(vectors)):
            if not isinstance(point, Mapping):
                kept[position] = point
                problems[position] = Problem.NOT_OBJECT
                texts.append(None)
                values.append(math.nan)
                continue
            x, y = point.get("x"), point.get("y")
            number = _numeric(y)
            if x is not None and not isinstance(x, str):
                problems[position] = Problem.TIME_NOT_TEXT
            elif number is None and y is not None:
                problems[position] = Problem.BAD_VALUE
            if position in problems or not isinstance(y, int | float | None):
                kept[position] = dict(point)
            texts.append(x if isinstance(x, str) else None)
            values.append(math.nan if number is None else number)
        return pa.array(texts, pa.string()), np.array(values, dtype=np.float64)

    def _split(
        self,
        counts: list[int],
        nanos: np.ndarray,
        values: np.ndarray,
        texts: pa.Array,
        kept: dict[int, Any],
        problems: dict[int, int],
        slow: np.ndarray,
        slow_texts: pa.Array,
    ) -> None:
        ends = np.cumsum(counts).tolist()
        text_ends = np.searchsorted(slow, ends).tolist()
        nanos[[p for p, r in problems.items() if r != Problem.BAD_VALUE]] = NAT
        # Odd points go to their index by bisection: one pass, however many there are.
        kept_of: list[dict[int, Any]] = [{} for _ in counts]
        problems_of: list[list[tuple[int, int]]] = [[] for _ in counts]
        for position, raw in kept.items():
            item = bisect.bisect_right(ends, position)
            kept_of[item][position - (ends[item] - counts[item])] = raw
        for position, reason in sorted(problems.items()):
            item = bisect.bisect_right(ends, position)
            problems_of[item].append((position - (ends[item] - counts[item]), reason))
        self.counts += counts
        for item, (count, end) in enumerate(zip(counts, ends, strict=True)):
            start = end - count
            self.nanos.append(nanos[start:end])
            self.values.append(values[start:end])
            self.layout.append(texts.slice(start, count))
            self.kept.append(kept_of[item])
            self.problems.append(problems_of[item])
            first = text_ends[item - 1] if item else 0
            self.texts.append(
                (
                    slow[first : text_ends[item]] - start,
                    slow_texts.slice(first, text_ends[item] - first),
                )
            )

    def throughputs(self) -> list[Throughput]:
        out = []
        for i, count in enumerate(self.counts):
            if count == 0 and not self.kept[i]:
                out.append(EMPTY)
                continue
            out.append(
                Throughput(
                    self.nanos[i],
                    self.values[i],
                    self.layout[i],
                    self.kept[i],
                    tuple(self.problems[i]),
                    *self.texts[i],
                )
            )
        return out


_RAW_LIST = msgspec.json.Decoder(list[dict[str, msgspec.Raw]])
_RAW_OBJECT = msgspec.json.Decoder(dict[str, msgspec.Raw])


def _decode(raw: msgspec.Raw) -> Any:
    try:
        return msgspec.json.decode(raw)
    except msgspec.ValidationError:
        # Older msgspec (0.18, the floor) refuses a number past the float range ("Number out of
        # range"); JSON's own reading, as json.loads and newer msgspec do, is +-inf.
        return json.loads(bytes(raw))


def _decode_body(body: bytes, decoder: Any) -> Any:
    """Decode a body with ``decoder``; None when it is JSON of another shape."""
    try:
        return decoder.decode(body)
    except msgspec.ValidationError:
        return None
    except msgspec.DecodeError as exc:
        raise InvalidResponseError(f"the body is not JSON ({exc})") from None


def read_raw_items(
    body: bytes, items: list[dict[str, msgspec.Raw]]
) -> tuple[list[dict[str, Any]], dict[int, Throughput]]:
    """Decode objects whose fields are still raw JSON inside ``body``.

    Returns:
        Each object's fields, decoded, and the throughput read in place for the objects
        whose points are in the usual layout; the others keep ``throughput_vector``
        decoded among their fields, for :func:`read_vectors`.
    """
    buffer = np.frombuffer(body, dtype=np.uint8)
    origin = buffer.__array_interface__["data"][0]
    fields_of: list[dict[str, Any]] = []
    arrays: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    for number, item in enumerate(items):
        fields = {k: _decode(v) for k, v in item.items() if k != "throughput_vector"}
        raw = item.get("throughput_vector")
        if raw is not None:
            view = np.frombuffer(raw, dtype=np.uint8)
            start = view.__array_interface__["data"][0] - origin if view.size else -1
            if start >= 0 and start + view.size <= buffer.size and view[0] == ord("["):
                arrays.append(number)
                starts.append(start)
                ends.append(start + view.size)
            else:
                fields["throughput_vector"] = _decode(raw)
        fields_of.append(fields)
    scanned = scan(buffer, np.array(starts, np.int64), np.array(ends, np.int64)) if arrays else []
    throughputs: dict[int, Throughput] = {}
    for number, result in zip(arrays, scanned, strict=True):
        if result is None:
            fields_of[number]["throughput_vector"] = _decode(items[number]["throughput_vector"])
        else:
            throughputs[number] = result
    return fields_of, throughputs


def read_vectors(vectors: list[Sequence[Any]]) -> list[Throughput]:
    """Read the decoded points of several indexes in one pass; one Throughput each."""
    batch = _Batch()
    batch.add_objects(vectors)
    return batch.throughputs()


def decode_list(body: bytes) -> list[dict[str, msgspec.Raw]] | None:
    """Decode a list body leaving every field raw; None if it is not an array of objects.

    Raises:
        InvalidResponseError: the body is not JSON (the message gives the byte position).
    """
    result: list[dict[str, msgspec.Raw]] | None = _decode_body(body, _RAW_LIST)
    return result


def decode_object(body: bytes) -> dict[str, msgspec.Raw] | None:
    """Decode an object body leaving every field raw; None if it is not an object."""
    result: dict[str, msgspec.Raw] | None = _decode_body(body, _RAW_OBJECT)
    return result


def decode_any(body: bytes) -> Any:
    """Decode any JSON body into Python objects.

    Raises:
        InvalidResponseError: the body is not JSON. A typed decode can fail on the shape
            before it reaches malformed bytes (``0\x00``), so this is checked again here.
    """
    try:
        return msgspec.json.decode(body)
    except msgspec.DecodeError as exc:
        raise InvalidResponseError(f"the body is not JSON ({exc})") from None
