"""Readers of throughput points: decoded JSON, or a list body's bytes read in place.

:func:`read_vectors` reads decoded JSON (one Arrow pass over every point of every index) and
:func:`read_raw_items` reads a list body in place: msgspec leaves each throughput array as
raw bytes and :func:`_scan` turns the usual layout into columns with array arithmetic, so no
Python object is made per point. Both give equal :class:`~searchkit.model.throughput.Throughput`
values; :mod:`searchkit.model.index` is the only caller.
"""

from __future__ import annotations

import bisect
import concurrent.futures
import itertools
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec
import numpy as np
import pyarrow as pa

from searchkit.errors import InvalidResponseError
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
        nanos, ok, _ = fast_parse(data, starts, lengths, wall_check=True, workers=_WORKERS)
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


# --- reading a JSON body in place ----------------------------------------------------------

_QUOTE, _BACKSLASH, _SPACE, _COMMA, _COLON = 34, 92, 32, 44, 58
_LBRACE, _RBRACE, _LBRACKET, _RBRACKET = 123, 125, 91, 93
_GROUP_BYTES = 2 << 20  # bytes of body scanned at once: bounds the temporaries
_WORKERS = min(4, os.cpu_count() or 1)
_MAX_NUMBER = 32  # longer y texts are read by the general path
_RAW_LIST = msgspec.json.Decoder(list[dict[str, msgspec.Raw]])
_RAW_OBJECT = msgspec.json.Decoder(dict[str, msgspec.Raw])


def _scan(body: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> list[Throughput | None]:
    """Read throughput arrays sent as ``[{"x":"<text>","y":<number|null>}, ...]`` in place.

    ``body[starts[i]:ends[i]]`` is one index's throughput_vector, valid JSON. Arrays in the
    layout services send (compact or ``json.dumps`` spacing, keys x then y, no escapes)
    become columns without a Python object per point: the quotes are found in one pass and
    every structural byte around them is checked with array arithmetic. Anything else
    gives None, for the general path.
    """
    groups = []
    first = 0
    while first < len(starts):
        last = first + 1
        while last < len(starts) and ends[last] - starts[first] <= _GROUP_BYTES:
            last += 1
        groups.append(slice(first, last))
        first = last

    def scan(group: slice) -> list[Throughput | None]:
        return _scan_group(body, starts[group], ends[group])

    if len(groups) < 2 or _WORKERS < 2:
        return [r for group in groups for r in scan(group)]
    # NumPy and Arrow release the GIL on whole arrays: groups read in parallel.
    with concurrent.futures.ThreadPoolExecutor(_WORKERS) as pool:
        return [r for part in pool.map(scan, groups) for r in part]


def _pattern(text: bytes) -> tuple[np.uint64, np.uint64]:
    """Return (value, mask) comparing the first len(text) bytes of an 8-byte window."""
    padded = text.ljust(8, b"\0")
    mask = (1 << (8 * len(text))) - 1
    return np.uint64(int.from_bytes(padded, "little")), np.uint64(mask)


# What surrounds a point, compact (",", ":") or as json.dumps spaces it (", ", ": "):
# before the x key's quote (window at a - 1), after the text (window at its closing quote)
# and between two points (window at the next point's a - 4).
_OPEN = (_pattern(b'{"x":"'), _pattern(b'{"x": "'))
_MIDDLE = (_pattern(b'","y":'), _pattern(b'", "y": '))
_BETWEEN = (_pattern(b'},{"')[0] << np.uint64(8), _pattern(b'}, {"'))
_BETWEEN_MASK = (np.uint64(0xFFFFFFFF00), np.uint64(0xFFFFFFFFFF))
_VALUE_AT = (6, 8)  # from the text's closing quote to the value
_VALUE_BACK = (3, 4)  # from the next point's x quote back to the value's "}"
_INLINE = 12  # Arrow string views hold texts up to 12 bytes inline


def _windows(data: np.ndarray, width: int) -> np.ndarray:
    """A view of ``data`` whose element i is the ``width`` bytes from byte i."""
    count = max(data.size - width + 1, 0)
    return np.ndarray(buffer=data, dtype=f"V{width}", shape=(count,), strides=(1,))


def _windows8(body: np.ndarray) -> np.ndarray:
    """A view of ``body`` whose element i is the little-endian uint64 of bytes i..i+7."""
    if body.size < 8:
        return np.zeros(0, dtype="<u8")
    return np.ndarray(buffer=body, dtype="<u8", shape=(body.size - 7,), strides=(1,))


def _scan_group(body: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> list[Throughput | None]:
    lo_byte, hi_byte = int(starts[0]), int(ends[-1])
    part = body[lo_byte:hi_byte]
    quotes = np.flatnonzero(part == _QUOTE)
    quotes += lo_byte
    del part
    lo, hi = np.searchsorted(quotes, starts), np.searchsorted(quotes, ends)
    count = hi - lo
    # memchr per array finds an escape far faster than a NumPy pass over the bytes.
    source = body.base if isinstance(body.base, bytes) else body.tobytes()
    escaped = np.array(
        [
            source.find(b"\\", s, e) >= 0
            for s, e in zip(starts.tolist(), ends.tolist(), strict=True)
        ],
        dtype=bool,
    )
    usable = (count > 0) & (count % 6 == 0) & ~escaped & (starts >= 1) & (ends - starts >= 16)
    usable &= (body[starts] == _LBRACKET) & (body[ends - 1] == _RBRACKET)
    spans = np.flatnonzero(usable)
    results: list[Throughput | None] = [None] * len(starts)
    if not spans.size:
        return results
    points = count[spans] // 6
    first_point = np.zeros(spans.size, dtype=np.int64)
    np.cumsum(points[:-1], out=first_point[1:])
    last_point = first_point + points - 1
    inside = np.zeros(quotes.size + 1, dtype=np.int8)
    np.add.at(inside, lo[spans], 1)
    np.add.at(inside, hi[spans], -1)
    points_quotes = quotes[np.cumsum(inside[:-1], dtype=np.int8).view(bool)].reshape(-1, 6)
    del quotes, inside
    a, d = points_quotes[:, 0], points_quotes[:, 3]  # the x key's quote, the text's end
    windows = _windows8(body)
    spaced = (windows[a - 1] & _OPEN[1][1]) == _OPEN[1][0]
    ok = spaced | ((windows[a - 1] & _OPEN[0][1]) == _OPEN[0][0])
    style = spaced.astype(np.intp)
    # A text's closing quote within the body's last 7 bytes means an odd array, not a
    # point: its window is read clipped and the point refused.
    ok &= d < windows.size
    middle = windows[np.minimum(d, windows.size - 1)]
    ok &= np.where(
        spaced, (middle & _MIDDLE[1][1]) == _MIDDLE[1][0], (middle & _MIDDLE[0][1]) == _MIDDLE[0][0]
    )
    ok &= points_quotes[:, 1] == a + 2
    ok &= points_quotes[:, 2] == a + 4 + style
    ok &= points_quotes[:, 4] == d + 2 + style
    ok &= points_quotes[:, 5] == d + 4 + style
    between = windows[a - 4]
    joined = np.where(
        spaced,
        (between & _BETWEEN_MASK[1]) == _BETWEEN[1][0],
        (between & _BETWEEN_MASK[0]) == _BETWEEN[0],
    )
    joined[first_point] = (body[a[first_point] - 2] == _LBRACKET) & (
        a[first_point] == starts[spans] + 2
    )
    ok &= joined
    value_start = d + np.where(spaced, _VALUE_AT[1], _VALUE_AT[0])
    value_end = np.empty_like(a)
    value_end[:-1] = a[1:] - np.where(spaced[1:], _VALUE_BACK[1], _VALUE_BACK[0])
    value_end[last_point] = ends[spans] - 2
    ok[last_point] &= body[value_end[last_point]] == _RBRACE
    lengths = value_end - value_start
    ok &= (lengths > 0) & (lengths <= _MAX_NUMBER)
    first_byte = body[np.minimum(value_start, body.size - 1)]
    ok &= (first_byte != ord("t")) & (first_byte != ord("f"))
    good = np.logical_and.reduceat(ok, first_point)
    values = _values(body, value_start, lengths, first_byte == ord("n"), spans, points, good)
    nanos, fast, keys = fast_parse(body, a + 5 + style, d - a - 5 - style, layout=True)
    assert keys is not None
    row_bounds = (first_point, last_point + 1)
    text_bounds = (a + 5 + style, d)  # where each point's time text starts and ends
    _fill_spans(results, body, spans, good, row_bounds, (nanos, fast, keys), values, text_bounds)
    return results


def _fill_spans(
    results: list[Throughput | None],
    body: np.ndarray,
    spans: np.ndarray,
    good: np.ndarray,
    row_bounds: tuple[np.ndarray, np.ndarray],
    parsed: tuple[np.ndarray, np.ndarray, np.ndarray],
    values: np.ndarray,
    text_bounds: tuple[np.ndarray, np.ndarray],
) -> None:
    """Put one Throughput per readable array into ``results`` (its rows of the columns).

    Times the fast parse did not read (``parsed``: nanos, read, layout keys) are read by the
    general path here and kept as sent.
    """
    first_row, end_row = row_bounds
    nanos, fast, keys = parsed
    text_starts, text_ends = text_bounds
    slow_rows = np.flatnonzero(~fast)
    for which, span in enumerate(spans.tolist()):
        if not good[which]:
            continue
        lo_row, hi_row = int(first_row[which]), int(end_row[which])
        span_rows = slice(lo_row, hi_row)
        problems: tuple[tuple[int, int], ...] = ()
        kept: pa.Array | None = None
        span_nanos, span_keys = nanos[span_rows], keys[span_rows]
        slow = slow_rows[np.searchsorted(slow_rows, lo_row) : np.searchsorted(slow_rows, hi_row)]
        if slow.size:
            span_nanos, span_keys = span_nanos.copy(), span_keys.copy()
            kept = _texts_at(body, text_starts[slow], text_ends[slow])
            # The general path of the one parser reads them; they are kept as sent.
            local = slow - lo_row
            span_nanos[local] = parse_to_nanos(kept, errors="coerce")
            span_keys[local] = 0
            problems = tuple(
                (row, Problem.BAD_TIME) for row in local[span_nanos[local] == NAT].tolist()
            )
        results[span] = Throughput(
            span_nanos,
            values[span_rows],
            span_keys,
            None,
            problems,
            None if kept is None else slow - lo_row,
            kept,
        )


def _values(
    body: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    null: np.ndarray,
    spans: np.ndarray,
    points: np.ndarray,
    good: np.ndarray,
) -> np.ndarray:
    """Read every point's y text as float64 (NaN for null); spans with a non-number go bad."""
    values = np.full(starts.size, np.nan)
    wanted = ~null & np.repeat(good, points)
    short = np.flatnonzero(wanted & (lengths <= _INLINE))
    long = np.flatnonzero(wanted & (lengths > _INLINE))
    short_reader = _short_numbers if hasattr(pa, "string_view") else _numbers  # pyarrow < 16
    for rows, reader in ((short, short_reader), (long, _numbers)):
        if not rows.size:
            continue
        parsed = reader(body, starts[rows], lengths[rows])
        if parsed is not None:
            values[rows] = parsed
            continue
        # Some text is no number (true, an object...): find which arrays, read them slowly.
        span_of = np.repeat(np.arange(spans.size), points)[rows]
        for which in np.unique(span_of):
            mine = rows[span_of == which]
            parsed = reader(body, starts[mine], lengths[mine])
            if parsed is None:
                good[which] = False
            else:
                values[mine] = parsed
    return values


def _short_numbers(body: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray | None:
    """Read texts of at most 12 bytes as float64 through Arrow string views built in place.

    A view is 16 bytes: the length, then up to 12 bytes inline. One gather copies the 16
    bytes from 4 before each text; the length overwrites the first 4 and a mask from a
    table zeroes what follows the text.
    """
    width = 4 + _INLINE
    firsts = starts - 4
    # Texts near the end of the body read from a padded copy of just its tail.
    tail_from = max(body.size - 2 * width, 0)
    near_end = firsts >= tail_from
    if near_end.any():
        tail = np.zeros(body.size - tail_from + width, dtype=np.uint8)
        tail[: body.size - tail_from] = body[tail_from:]
        views = np.empty(starts.size, dtype=f"V{width}")
        views[~near_end] = _windows(body, width)[firsts[~near_end]]
        views[near_end] = _windows(tail, width)[firsts[near_end] - tail_from]
    else:
        views = _windows(body, width)[firsts]
    words = views.view("<u8").reshape(-1, 2)
    words[:, 0] &= _VIEW_MASKS[0][lengths]
    words[:, 1] &= _VIEW_MASKS[1][lengths]
    words.view("<u4")[:, 0] = lengths
    texts = pa.Array.from_buffers(pa.string_view(), starts.size, [None, pa.py_buffer(views)])
    try:
        return np.asarray(texts.cast(pa.float64()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


# For a text of length n inline in a view: which bits of its two 8-byte words to keep.
_VIEW_MASKS = (
    np.array([(1 << (32 + 8 * min(n, 4))) - 1 for n in range(_INLINE + 1)], dtype=np.uint64),
    np.array([(1 << (8 * max(n - 4, 0))) - 1 for n in range(_INLINE + 1)], dtype=np.uint64),
)


def _gathered(body: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """Return body[starts:starts+lengths] as one Arrow string array, built by one gather."""
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    gather = np.repeat(starts - offsets[:-1], lengths) + np.arange(int(offsets[-1]))
    return pa.LargeStringArray.from_buffers(
        lengths.size, pa.py_buffer(offsets), pa.py_buffer(body[gather])
    )


def _numbers(body: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray | None:
    """Read JSON number texts at body[starts:starts+lengths] as float64 (None if one is not)."""
    texts = _gathered(body, starts, lengths)
    try:
        return np.asarray(texts.cast(pa.float64()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _texts_at(body: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> pa.Array:
    """Return the texts at body[starts:ends] as one Arrow string array (one gather)."""
    lengths = ends - starts
    texts = _gathered(body, starts, lengths)
    try:
        texts.validate(full=True)
    except pa.ArrowInvalid:  # not UTF-8: JSON says it must be; read it as json.loads would
        return pa.array(
            [
                bytes(body[s:e]).decode("utf-8", "replace")
                for s, e in zip(starts, ends, strict=True)
            ],
            pa.string(),
        )
    return texts.cast(pa.string())


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
            if start >= 0 and start + view.size <= buffer.size and view[0] == _LBRACKET:
                arrays.append(number)
                starts.append(start)
                ends.append(start + view.size)
            else:
                fields["throughput_vector"] = _decode(raw)
        fields_of.append(fields)
    scanned = _scan(buffer, np.array(starts, np.int64), np.array(ends, np.int64)) if arrays else []
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
