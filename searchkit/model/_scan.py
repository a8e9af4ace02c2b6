"""Throughput arrays read in place from a list body's bytes: columns, no object per point.

The API sends each index's ``throughput_vector`` as ``[{"x":"<text>","y":<number|null>}, ...]``.
:func:`scan` finds every point's quotes in one pass over the body and checks the structural
bytes around them with array arithmetic, so a million points cost a few array operations,
not a million dicts. An array in any other layout (escapes, other key order or spacing) is
left to the general path of :mod:`searchkit.model._decode`, which gives equal values.
"""

from __future__ import annotations

import concurrent.futures
import os

import numpy as np
import pyarrow as pa

from searchkit.model.gotime import fast_parse, parse_to_nanos
from searchkit.model.throughput import NAT, Problem, Throughput

__all__ = ["WORKERS", "scan"]

_QUOTE, _BACKSLASH, _SPACE, _COMMA, _COLON = 34, 92, 32, 44, 58
_LBRACE, _RBRACE, _LBRACKET, _RBRACKET = 123, 125, 91, 93
_GROUP_BYTES = 2 << 20  # bytes of body scanned at once: bounds the temporaries
#: Threads reading at once (NumPy and Arrow release the GIL on whole arrays).
WORKERS = min(4, os.cpu_count() or 1)
_MAX_NUMBER = 32  # longer y texts are read by the general path


def scan(body: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> list[Throughput | None]:
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

    if len(groups) < 2 or WORKERS < 2:
        return [r for group in groups for r in scan(group)]
    # NumPy and Arrow release the GIL on whole arrays: groups read in parallel.
    with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
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
