"""Go time texts -> exact UTC instants, vectorised.

The service renders throughput times with Go's ``time.Time.String()``, whose layout is
``2006-01-02 15:04:05.999999999 -0700 MST``: the fraction loses its trailing zeros (and its
dot when it is zero), the numeric offset is authoritative, the zone name is only a label
(and may itself be numeric, ``-03`` or ``+0545``), and a monotonic clock reading
`` m=+0.000123`` may follow. Everything is parsed to ``int64`` nanoseconds since the epoch.

Two paths share one validation and one calendar computation:

* the fast path reads the Arrow string buffer as bytes: one gather copies the first bytes
  of every text into a fixed-width ``uint8`` matrix, and columns of digits become numbers
  with NumPy arithmetic. It covers the layout above with any fraction width and a zone
  name of up to five printable ASCII characters (``UTC``, ``CEST``, ``-03``, ``+0545``);
* every other text (a monotonic suffix, a long zone name, garbage) goes through one RE2
  regex over just those rows, with ``pyarrow.compute.extract_regex``.

No Python code runs per row, except to word the error message of the first bad text.
"""

from __future__ import annotations

import calendar
import concurrent.futures
import re
from collections.abc import Iterable
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from searchkit.errors import TimestampError, ValidationError

__all__ = ["GO_LAYOUT", "ErrorsMode", "check_errors", "parse_timestamps"]

#: The Go layout of the texts this module reads (``time.Time.String()`` without ``m=``).
GO_LAYOUT = "2006-01-02 15:04:05.999999999 -0700 MST"

ErrorsMode = Literal["raise", "coerce"]
#: A time zone as users give it: an IANA name such as ``"Europe/Berlin"`` or a ``tzinfo``.

# Width of the byte window the fast path copies per text. The longest text it accepts is
# 19 (date and time) + 10 (dot and nine digits) + 7 (" -0700 ") + 5 (zone name) = 41 bytes.
_WINDOW = 44
_MAX_FAST_ZONE = 5
_ZERO = 48  # ord("0")
_BLOCK = 1 << 17
_DATE_FIELDS = {
    "year": range(0, 4),
    "month": range(5, 7),
    "day": range(8, 10),
    "hour": range(11, 13),
    "minute": range(14, 16),
    "second": range(17, 19),
}
_DATE_SEPARATORS = [(4, ord("-")), (7, ord("-")), (10, ord(" ")), (13, ord(":")), (16, ord(":"))]

# The general path: RE2 syntax (pyarrow), anchored, ASCII digits only.
_GO_PATTERN = (
    r"^(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})"
    r" (?P<hour>\d{2}):(?P<minute>\d{2}):(?P<second>\d{2})(?:\.(?P<fraction>\d{1,9}))?"
    r" (?P<sign>[+-])(?P<off_h>\d{2})(?P<off_m>\d{2})"
    r" (?P<zone>[^\s]+)"
    r"(?: m=[+-]\d+(?:\.\d+)?)?$"
)
# The same in Python syntax, used only to word an error message.
_GO_RE = re.compile(_GO_PATTERN, re.ASCII)

# Days from the epoch to the first of each month, and month lengths, for every month that
# datetime64[ns] can reach (1677-09 to 2262-04), computed by NumPy's own calendar.
_FIRST_YEAR, _LAST_YEAR = 1677, 2262
_MONTH_BOUNDS = np.arange(f"{_FIRST_YEAR}-01", f"{_LAST_YEAR + 1}-02", dtype="M8[M]")
_MONTH_STARTS = _MONTH_BOUNDS[:-1].astype("M8[D]").astype(np.int64)
_MONTH_LENGTHS = np.diff(_MONTH_BOUNDS.astype("M8[D]").astype(np.int64))

# datetime64[ns] holds int64 nanoseconds; int64's minimum is NaT, so the range is one short.
_NS = 1_000_000_000
_UTC = pd.DatetimeTZDtype("ns", "UTC")
_MIN_S, _MIN_F = divmod(np.iinfo(np.int64).min + 1, _NS)
_MAX_S, _MAX_F = divmod(np.iinfo(np.int64).max, _NS)


def parse_timestamps(
    texts: Iterable[str | None] | str, *, errors: ErrorsMode = "raise"
) -> pd.DatetimeIndex:
    """Parse Go time texts into a UTC ``DatetimeIndex``, exact to the nanosecond.

    The numeric offset decides the instant; the zone name is ignored. Missing values
    (``None``, NaN) become NaT, as with :func:`pandas.to_datetime`.

    Args:
        texts: Texts in the layout ``2006-01-02 15:04:05.999999999 -0700 MST`` (0 to 9
            fraction digits or none, any zone name, an optional `` m=±<seconds>`` suffix): a
            list, NumPy array, pandas Series or Index, or Arrow array. A single string is
            read as a list of one.
        errors: ``"raise"`` to raise on the first text that does not parse, ``"coerce"`` to
            return NaT for it.

    Returns:
        A ``datetime64[ns, UTC]`` index, one entry per text, in order; it keeps the name of a
        Series or Index.

    Raises:
        TimestampError: A text does not parse (``errors="raise"``); the message quotes the
            text and gives its position.
        ValidationError: ``errors`` is not ``"raise"`` or ``"coerce"``.

    Example:
        >>> times = parse_timestamps(
        ...     ["2026-03-29 01:59:59.5 +0100 CET", "2026-03-29 03:00:00 +0200 CEST"]
        ... )
        >>> [str(t) for t in times]
        ['2026-03-29 00:59:59.500000+00:00', '2026-03-29 01:00:00+00:00']
    """
    check_errors(errors)
    name = getattr(texts, "name", None) if isinstance(texts, pd.Series | pd.Index) else None
    strings = to_arrow_strings(texts, errors=errors)
    nanos = parse_to_nanos(strings, errors=errors)
    return nanos_to_index(nanos, name=name)


def check_errors(errors: str) -> None:
    """Refuse an ``errors`` argument that is not ``"raise"`` or ``"coerce"`` (ValidationError)."""
    if errors not in ("raise", "coerce"):
        raise ValidationError(f"errors must be 'raise' or 'coerce', got {errors!r}")


def nanos_to_index(nanos: np.ndarray, *, name: Any = None) -> pd.DatetimeIndex:
    """Wrap int64 epoch nanoseconds (NaT as int64 min) as a UTC ``DatetimeIndex``."""
    # Naive datetime64 values given a UTC dtype are read as UTC wall times: no conversion.
    return pd.DatetimeIndex(nanos.view("M8[ns]"), dtype=_UTC, name=name, copy=False)


def to_arrow_strings(
    texts: Any, *, errors: ErrorsMode = "raise", describe: Any = None
) -> pa.StringArray:
    """Return ``texts`` as one Arrow string array (nulls for missing values).

    Raises:
        TimestampError: an element is neither text nor missing (``errors="raise"``).
    """
    if isinstance(texts, str | bytes):
        texts = [texts]
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks() if texts.num_chunks else pa.array([], pa.string())
    if isinstance(texts, pa.Array):
        if pa.types.is_null(texts.type):
            return pa.array([None] * len(texts), pa.string())
        if not (pa.types.is_string(texts.type) or pa.types.is_large_string(texts.type)):
            try:
                texts = texts.cast(pa.string())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                return _strings_slowly(texts.to_pylist(), errors, describe)
        return texts
    if isinstance(texts, pd.Series | pd.Index):
        texts = texts.array
    if not isinstance(texts, np.ndarray | pd.api.extensions.ExtensionArray | list | tuple):
        texts = list(texts)
    try:
        return pa.array(texts, type=pa.string(), from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return _strings_slowly(list(texts), errors, describe)


def _strings_slowly(items: list[Any], errors: ErrorsMode, describe: Any) -> pa.StringArray:
    # Only reached when some element is not text: find it to say where, or blank it out.
    out: list[str | None] = []
    for position, item in enumerate(items):
        if item is None or isinstance(item, str):
            out.append(item)
        elif (isinstance(item, float) and item != item) or errors == "coerce":  # NaN or junk
            out.append(None)
        else:
            where = describe(position) if describe else f"at position {position}"
            raise TimestampError(
                f"cannot parse timestamp {_shorten(item)} {where}: "
                f"expected text, got {type(item).__name__}"
            )
    return pa.array(out, type=pa.string())


def parse_to_nanos(
    strings: pa.Array, *, errors: ErrorsMode = "raise", describe: Any = None
) -> np.ndarray:
    """Parse an Arrow string array into int64 epoch nanoseconds (NaT for missing ones).

    Args:
        strings: Arrow ``string`` or ``large_string`` array.
        errors: ``"raise"`` or ``"coerce"``.
        describe: Optional callable ``position -> str`` wording where a bad text sits
            (e.g. "at position 3 of index 'docs'"); default "at position N".

    Raises:
        TimestampError: a non-missing text does not parse and ``errors="raise"``.
    """
    n = len(strings)
    if n == 0:
        return np.empty(0, dtype=np.int64)
    nanos, ok = _fast_nanos(strings)
    slow = np.flatnonzero(~ok)
    if slow.size:
        fields, matched = _regex_fields(strings.take(pa.array(slow)))
        nanos[slow], ok[slow] = _to_nanos(fields, matched)
    missing = strings.is_null().to_numpy(zero_copy_only=False)
    bad = ~(ok | missing)
    if errors == "raise" and bad.any():
        position = int(np.argmax(bad))
        text = strings[position].as_py()
        where = describe(position) if describe else f"at position {position}"
        raise TimestampError(f"cannot parse timestamp {_shorten(text)} {where}: {_why(text)}")
    nanos[~ok | missing] = np.iinfo(np.int64).min
    return nanos


def explain(text: Any) -> str:
    """Return why a text is not a Go time text (for an error message; not on a hot path)."""
    if not isinstance(text, str):
        return f"expected text, got {type(text).__name__}"
    return _why(text)


def string_buffers(strings: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Return (offsets, data bytes) of an Arrow string array, honouring its slice offset."""
    return _string_buffers(strings)


def _string_buffers(strings: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Return (offsets, data bytes) of an Arrow string array, honouring its slice offset."""
    if pa.types.is_string_view(strings.type):
        strings = strings.cast(pa.string())
    _, offsets_buf, data_buf = strings.buffers()[:3]
    offset_type = np.int64 if pa.types.is_large_string(strings.type) else np.int32
    offsets = np.frombuffer(offsets_buf, dtype=offset_type)[
        strings.offset : strings.offset + len(strings) + 1
    ]
    data = (
        np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.empty(0, np.uint8)
    )
    return offsets.astype(np.int64, copy=False), data


def _fast_nanos(strings: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Read the common layout with NumPy; return epoch nanoseconds and which rows it read."""
    offsets, data = _string_buffers(strings)
    nanos, ok, _ = fast_parse(data, offsets[:-1], offsets[1:] - offsets[:-1])
    return nanos, ok


def fast_parse(
    data: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    *,
    layout: bool = False,
    wall_check: bool = False,
    workers: int = 1,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Read texts at ``data[starts[i] : starts[i] + lengths[i]]`` laid out as ``GO_LAYOUT``.

    The texts may sit anywhere in ``data`` (an Arrow string buffer, or a JSON body read in
    place), so no text is copied out first.

    Args:
        data: The bytes, as a ``uint8`` array.
        starts: Where each text starts (``int64``).
        lengths: The length of each text in bytes.
        layout: Also return each text's layout key (see :func:`format_layout`).
        wall_check: Leave to the general path, as ``layout`` does, the texts whose wall
            time could not be rebuilt (near the ends of datetime64[ns]), without the keys.
        workers: Threads to parse blocks on (NumPy releases the GIL on whole arrays).

    Returns:
        Epoch nanoseconds, which rows the fast path read (the others need
        :func:`parse_to_nanos`), and the layout keys (None unless asked).
    """
    # A strided view whose element i is the _WINDOW bytes starting at byte i: indexing it
    # with the start offsets copies every text's head into a fixed-width matrix in one
    # memcpy-like pass. Texts starting in the last _WINDOW bytes read from a padded copy
    # of just that tail, so the big buffer itself is never copied.
    tail_from = max(data.size - _WINDOW, 0)
    padded_tail = np.zeros(data.size - tail_from + _WINDOW, dtype=np.uint8)
    padded_tail[: data.size - tail_from] = data[tail_from:]
    head = _windows(data, _WINDOW)
    in_tail = starts >= tail_from if head is not None else np.ones(starts.size, dtype=bool)

    nanos = np.empty(starts.size, dtype=np.int64)
    ok = np.empty(starts.size, dtype=bool)
    keys = np.zeros(starts.size, dtype=np.uint64) if layout else None

    # Blocks keep the byte matrix and its temporaries in cache and bound peak memory;
    # each writes its own slice of the results, so blocks may run on several threads.
    def parse_block(lo: int) -> None:
        hi = min(lo + _BLOCK, starts.size)
        block_starts = starts[lo:hi]
        block_tail = in_tail[lo:hi]
        if head is not None and not block_tail.any():
            rows = head[block_starts]
        else:
            rows = np.empty(hi - lo, dtype=f"V{_WINDOW}")
            if head is not None:
                rows[~block_tail] = head[block_starts[~block_tail]]
            padded = _windows(padded_tail, _WINDOW)
            assert padded is not None  # the padded tail is always a window long
            rows[block_tail] = padded[block_starts[block_tail] - tail_from]
        matrix = rows.view(np.uint8).reshape(hi - lo, _WINDOW)
        fields, block_ok = _read_rows(matrix, lengths[lo:hi], layout)
        nanos[lo:hi], ok[lo:hi] = _to_nanos(fields, block_ok)
        if keys is not None:
            keys[lo:hi] = fields["layout"]
        if keys is not None or wall_check:
            # The wall time must itself be a datetime64[ns] to be written back exactly:
            # only blocks reaching the ends of the range need the check.
            block = nanos[lo:hi]  # rows not read hold anything: they only cost a check
            if block.size and (block.min() < _WALL_LOW or block.max() > _WALL_HIGH):
                offset = fields["sign"] * (fields["off_h"] * 60 + fields["off_m"]) * 60.0 * _NS
                wall = nanos[lo:hi].astype(np.float64) + offset
                ok[lo:hi] &= np.abs(wall) < 2.0**63 - _WALL_MARGIN

    blocks = range(0, starts.size, _BLOCK)
    if workers > 1 and len(blocks) > 1:
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            list(pool.map(parse_block, blocks))
    else:
        for lo in blocks:
            parse_block(lo)
    return nanos, ok, keys


# A layout key packs what, beside the instant, makes a fast-path text: the zone label (up
# to 5 bytes, bits 0-39), its length (40-42), the fraction width (43-46), the offset's
# minutes (47-58) and its sign (59, so "-0000" stays itself). Storing it costs 8 bytes a
# point instead of the text.
_LABEL_BITS, _WIDTH_SHIFT, _OFFSET_SHIFT, _SIGN_SHIFT = 40, 43, 47, 59
# Wall times this close to the ends of datetime64[ns] are left to the general path.
_WALL_MARGIN = 2.0 * 86400 * _NS
_WALL_LOW, _WALL_HIGH = -(2**63) + 4 * 86400 * _NS, 2**63 - 1 - 4 * 86400 * _NS
_LABEL_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(_MAX_FAST_ZONE + 1)], dtype=np.uint64)


def format_layout(nanos: np.ndarray, keys: np.ndarray) -> list[str]:
    """Return the Go texts that :func:`fast_parse` read as ``nanos`` with layout ``keys``.

    The inverse of the fast path: the same bytes come back, trailing fraction zeros
    included, so a text survives being stored as (instant, layout).
    """
    keys = keys.astype(np.uint64, copy=False)
    minutes = ((keys >> np.uint64(_OFFSET_SHIFT)) & np.uint64(4095)).astype(np.int64)
    minutes *= 1 - 2 * (keys >> np.uint64(_SIGN_SHIFT)).astype(np.int64)
    local = (nanos + minutes * 60 * _NS).view("M8[ns]")
    walls = np.datetime_as_string(local, unit="ns")
    tails: dict[int, tuple[int, str]] = {}
    out = []
    for wall, key, minute in zip(walls.tolist(), keys.tolist(), minutes.tolist(), strict=True):
        found = tails.get(key)
        if found is None:
            size = (key >> _LABEL_BITS) & 7
            label = (key & ((1 << _LABEL_BITS) - 1)).to_bytes(5, "little")[:size].decode()
            sign = "-" if key >> _SIGN_SHIFT else "+"
            hours, mins = divmod(abs(minute), 60)
            found = tails[key] = (
                (key >> _WIDTH_SHIFT) & 15,
                f" {sign}{hours:02d}{mins:02d} {label}",
            )
        width, tail = found
        fraction = "." + wall[20 : 20 + width] if width else ""
        out.append(f"{wall[:10]} {wall[11:19]}{fraction}{tail}")
    return out


def _windows(data: np.ndarray, width: int) -> np.ndarray | None:
    """Return a view of ``data`` whose element i is the ``width`` bytes from byte i."""
    if data.size < width:
        return None
    return np.ndarray(buffer=data, dtype=f"V{width}", shape=(data.size - width + 1,), strides=(1,))


def _digit(rows: np.ndarray, column: int | np.ndarray) -> np.ndarray:
    """Return a column of bytes as digit values: 0-9, any other byte >= 10 (uint8 wraps)."""
    return rows[:, column] - np.uint8(_ZERO)


def _number(rows: np.ndarray, columns: range, worst: np.ndarray) -> np.ndarray:
    """Read digit columns (most significant first) as int32 numbers.

    ``worst`` keeps the largest digit value seen, so one comparison with 9 at the end
    validates every digit column at once.
    """
    first = _digit(rows, columns[0])
    np.maximum(worst, first, out=worst)
    value = first.astype(np.int32)
    for column in columns[1:]:
        digit = _digit(rows, column)
        np.maximum(worst, digit, out=worst)
        value *= 10
        value += digit
    return value


def _read_rows(
    rows: np.ndarray, lengths: np.ndarray, layout: bool = False
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Parse a block of fixed-width byte rows laid out as ``GO_LAYOUT``."""
    worst = np.zeros(rows.shape[0], dtype=np.uint8)
    fields = {name: _number(rows, columns, worst) for name, columns in _DATE_FIELDS.items()}
    ok = worst <= 9
    for column, byte in _DATE_SEPARATORS:
        ok &= rows[:, column] == byte

    # Fraction: "." then 1-9 digits, or no dot at all (Go drops it when the fraction is 0).
    # ``run`` stays 1 while the digits go on; their count is the width.
    dot = rows[:, 19] == ord(".")
    run = dot.view(np.uint8).copy()
    width = np.zeros(rows.shape[0], dtype=np.int32)
    fraction = np.zeros(rows.shape[0], dtype=np.int32)
    for k in range(9):
        digit = _digit(rows, 20 + k)
        run &= digit <= 9
        width += run
        fraction *= 10
        fraction += digit * run
    fields["fraction"] = fraction
    ok &= ~dot | (width > 0)

    # " ±hhmm " and the zone name follow, at column 19 or 20 + width: a second window
    # gather fetches them per row without an (n, k) index matrix.
    at = np.where(dot, width + 20, 19)
    flat = _windows(rows.reshape(-1), 7 + _MAX_FAST_ZONE)
    assert flat is not None  # rows are _WINDOW bytes wide, more than the window
    tail = flat[np.arange(rows.shape[0]) * _WINDOW + at].view(np.uint8).reshape(-1, 12)
    ok &= (tail[:, 0] == ord(" ")) & (tail[:, 6] == ord(" "))
    sign = tail[:, 1]
    ok &= (sign == ord("+")) | (sign == ord("-"))
    fields["sign"] = 1 - 2 * (sign == ord("-")).view(np.int8)
    worst[:] = 0
    fields["off_h"] = _number(tail, range(2, 4), worst)
    fields["off_m"] = _number(tail, range(4, 6), worst)
    ok &= worst <= 9

    # Zone name: a label only, so any 1-5 printable ASCII bytes (letters, or numeric like
    # -03 and +0545). Longer or non-ASCII names and the monotonic suffix go to the regex,
    # which accepts any non-space label too.
    zone_len = lengths - at - 7
    worst[:] = 0
    for k in range(_MAX_FAST_ZONE):
        # Printable non-space ASCII (0x21-0x7E) maps to 0-0x5D; bytes past the end count 0.
        shifted = tail[:, 7 + k] - np.uint8(0x21)
        shifted *= zone_len > k
        np.maximum(worst, shifted, out=worst)
    ok &= (zone_len >= 1) & (zone_len <= _MAX_FAST_ZONE) & (worst <= 0x5D)
    if not layout:
        return fields, ok
    # The label's bytes as one little-endian integer, cut to its length: an unaligned
    # 8-byte view at column 7 of each 12-byte row (the last row from a padded copy).
    count = rows.shape[0]
    zone = np.clip(zone_len, 0, _MAX_FAST_ZONE)
    label = np.empty(count, dtype=np.uint64)
    if count > 1:
        label[:-1] = np.ndarray(
            buffer=tail, dtype="<u8", shape=(count - 1,), strides=(12,), offset=7
        )
    last = np.zeros(8, dtype=np.uint8)
    last[:_MAX_FAST_ZONE] = tail[-1, 7 : 7 + _MAX_FAST_ZONE]
    label[-1] = last.view("<u8")[0]
    label &= _LABEL_MASKS[zone]
    # The small fields in one int32 first: fewer passes over 8-byte words.
    meta = zone.astype(np.int32)
    meta |= width << 3
    meta |= np.clip(fields["off_h"] * 60 + fields["off_m"], 0, 4095) << 7
    meta |= (sign == ord("-")).view(np.int8).astype(np.int32) << 19
    label |= meta.astype(np.uint64) << np.uint64(_LABEL_BITS)
    fields["layout"] = label
    return fields, ok


def _regex_fields(strings: pa.Array) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Read any Go time text with one RE2 pass; return the fields and which rows matched."""
    if pa.types.is_large_string(strings.type) or pa.types.is_string_view(strings.type):
        strings = strings.cast(pa.string())
    parts = pc.extract_regex(strings, _GO_PATTERN)
    matched = parts.is_valid().to_numpy(zero_copy_only=False)

    def number(name: str) -> np.ndarray:
        column = parts.field(name)
        # Unmatched rows carry "" (or null): make them parseable, they are masked anyway.
        column = pc.if_else(pc.equal(column, ""), "0", column).fill_null("0")
        result: np.ndarray = column.cast(pa.int64()).to_numpy(zero_copy_only=False)
        return result

    fields = {
        name: number(name)
        for name in ("year", "month", "day", "hour", "minute", "second", "off_h", "off_m")
    }
    # A fraction "5" means 500 ms: pad on the right to nine digits before reading it.
    fraction = pc.utf8_rpad(parts.field("fraction").fill_null(""), 9, "0")
    fields["fraction"] = fraction.cast(pa.int64()).to_numpy(zero_copy_only=False)
    sign = parts.field("sign").fill_null("+")
    fields["sign"] = np.where(pc.equal(sign, "-").to_numpy(zero_copy_only=False), -1, 1)
    return fields, matched


def _to_nanos(fields: dict[str, np.ndarray], ok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Validate the calendar fields and compute epoch nanoseconds (exact, int64)."""
    year, month, day = fields["year"], fields["month"], fields["day"]
    # One table lookup per row gives the month's first day and length; years outside the
    # table cannot be nanosecond timestamps anyway.
    month_index = (year.astype(np.int64) - _FIRST_YEAR) * 12 + (month - 1)
    ok = ok & (month_index >= 0) & (month_index < _MONTH_STARTS.size) & (month >= 1)
    ok &= month <= 12
    month_index[~ok] = 0
    ok &= (day >= 1) & (day <= _MONTH_LENGTHS[month_index])
    ok &= (fields["hour"] <= 23) & (fields["minute"] <= 59) & (fields["second"] <= 59)
    ok &= (fields["off_h"] <= 23) & (fields["off_m"] <= 59)

    seconds = _MONTH_STARTS[month_index] + (day - 1)
    seconds *= 86400
    seconds += fields["hour"] * 3600 + fields["minute"] * 60 + fields["second"]
    seconds -= fields["sign"] * (fields["off_h"] * 3600 + fields["off_m"] * 60)
    fraction = fields["fraction"]
    # Only the table's first and last months reach the limits of datetime64[ns]: check
    # those rows exactly, so int64 arithmetic below cannot wrap for a kept row.
    if seconds.size and (seconds.min() <= _MIN_S or seconds.max() >= _MAX_S):
        ok &= (seconds < _MAX_S) | ((seconds == _MAX_S) & (fraction <= _MAX_F))
        ok &= (seconds > _MIN_S) | ((seconds == _MIN_S) & (fraction >= _MIN_F))
    nanos = seconds * _NS
    nanos += fraction
    return nanos, ok


def _shorten(text: Any, limit: int = 60) -> str:
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def _why(text: str) -> str:
    # Only the first bad text gets here, so plain Python is fine.
    match = _GO_RE.match(text)
    if match is None:
        return f"expected Go layout {GO_LAYOUT!r}"
    parts = {k: int(v) for k, v in match.groupdict().items() if v and v.isdigit()}
    if not 1 <= parts["month"] <= 12:
        return "month out of range"
    if parts["day"] < 1 or parts["day"] > calendar.monthrange(parts["year"], parts["month"])[1]:
        return "day out of range for the month"
    if parts["hour"] > 23 or parts["minute"] > 59 or parts["second"] > 59:
        return "time of day out of range"
    if parts["off_h"] > 23 or parts["off_m"] > 59:
        return "UTC offset out of range"
    return "outside the range of nanosecond timestamps (1677-09-21 to 2262-04-11)"
