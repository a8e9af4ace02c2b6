"""What a rollup must pass before it answers for its day: checked, not trusted.

A rollup (:mod:`searchkit.history.rollups`) is derived from its day's points, so nothing it
says may differ from what the points say. It answers only while its ``source`` names the
day's throughput files as they are (each file's name, size and modification time: a file
rewritten under its name, by another tool's deletion say, makes it stale; see
:func:`~searchkit.history.rollups.current`), and while its rows pass these checks, none of
which reads a point:

- **The seal.** Every row of a day holds ``digest``, a digest of that day's rows as they
  were written (their keys, day figures, gaps and limit crossings: :data:`SEALED`),
  whatever their order: a row removed, a phantom row added, a row moved to another index,
  a day figure, a gap or a crossing changed, even together with the figures derived from
  it, gives another digest.
- **The period** is a UTC midnight (a rollup summarises one UTC day).
- **The figures add up**: the operations are the value sum times the interval (the
  counting rule), the quarters' sums add up to the value sum exactly
  (:func:`~searchkit.frames.counting.run_sums`) and their points to the points, the hours'
  points to the points and their sums to the value sum (summed in another order: to a
  billionth).
- **No figure is impossible**: no sum of valid values negative, infinite or NaN, no count
  negative, the day's first and last point inside the day.

A day whose rollup fails is read from its points; a failure only a change after writing
explains (the seal, the period, figures that disagree) is named in a
:class:`~searchkit.errors.HistoryWarning`, and :func:`~searchkit.history.rollups.is_current`
calls the day stale, so the next collect, compaction or
:meth:`~searchkit.History.refresh_rollups` rewrites it. A rollup without a seal (written by
an older searchkit) is stale too, without a warning.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from searchkit.errors import HistoryWarning
from searchkit.frames.counting import DAY_NS, HOURS, QUARTERS, interval_seconds, run_sums
from searchkit.history import text_columns
from searchkit.history.arrays import Bins, int64_values, null_mask

__all__ = [
    "CHECKED",
    "DAY_FIGURES",
    "SEALED",
    "UNKNOWN_WHEN_NULL",
    "changed",
    "changed_any",
    "day_digests",
    "figures",
    "on_days",
    "seal",
    "stale",
    "usable",
    "warn_changed",
    "whole_days",
]

#: The columns a day's seal covers (see the module).
SEALED = [
    "account",
    "index_id",
    "period",
    "operations",
    "value_sum",
    "points",
    "invalid",
    "interval_seconds",
    "first_point",
    "last_point",
    "gaps",
    "crossing_limits",
    "crossing_times",
]
#: Sealed columns whose null means "not known" (the day's points answer for it, as
#: ``info()`` does for gaps not known, the forecast for crossings not known): a null adds
#: nothing to the seal, so a rollup written before the column was sealed keeps its seal,
#: and one whose figure was nulled by hand only makes its day read from its points.
UNKNOWN_WHEN_NULL = ("gaps", "crossing_limits", "crossing_times")
#: What a read of rollups needs beside its figures for the checks.
CHECKED = [*SEALED, "digest"]
#: The figures of a whole UTC day (:func:`figures` with these reads no list).
DAY_FIGURES = ["value_sum", "points", "invalid"]
#: How far the hours' sums may be from the day's (the same values summed in another order).
_HOURS_TOLERANCE = 1e-9
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(values: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser: every bit of the result depends on every bit of the input."""
    with np.errstate(over="ignore"):
        values = (values ^ (values >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        values = (values ^ (values >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    mixed: np.ndarray = values ^ (values >> np.uint64(31))
    return mixed


def _words(table: pa.Table, name: str) -> np.ndarray:
    """One column of :data:`SEALED` as a 64-bit word per row (see :func:`_array_words`)."""
    column = table[name]
    return _array_words(column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column)


def _array_words(array: pa.Array) -> np.ndarray:
    """A 64-bit word per value of ``array``: texts by a digest of the text, floats by their
    bits, instants as stored (microseconds, WRITE_OPTIONS), a list by its length and its
    items in order, a struct by its fields; a null by a word of its own."""
    kind = array.type
    if text_columns.is_text(kind):
        codes, distinct = text_columns.codes(array)
        hashed = _text_words(distinct.to_pylist())
        words: np.ndarray = np.asarray([*hashed, 1], dtype=np.uint64)[codes]  # null: -1
        return words
    if pa.types.is_list(kind):
        lengths = pc.fill_null(pc.list_value_length(array), -1).to_numpy(zero_copy_only=False)
        items = _array_words(pc.list_flatten(array))
        sized = np.maximum(lengths, 0)
        holder = np.repeat(np.arange(len(array)), sized)
        place = np.arange(len(items)) - np.repeat(np.cumsum(sized) - sized, sized)
        sums = np.zeros(len(array), dtype=np.uint64)
        with np.errstate(over="ignore"):
            np.add.at(sums, holder, _mix(items + _GOLDEN * place.astype(np.uint64)))
        return _mix(sums ^ _mix(lengths.astype(np.int64).view(np.uint64)))
    if pa.types.is_struct(kind):
        combined = np.zeros(len(array), dtype=np.uint64)
        for number in range(kind.num_fields):
            combined = _mix(combined ^ _array_words(array.field(number)))
        nulls = null_mask(array)
        combined[nulls] = np.uint64(2)
        return combined
    if pa.types.is_floating(kind):
        values = pc.fill_null(array, np.nan).to_numpy(zero_copy_only=False)
        return np.asarray(values, dtype=np.float64).view(np.uint64)
    if pa.types.is_timestamp(kind):  # as stored: microseconds (WRITE_OPTIONS)
        array = array.cast(pa.timestamp("us", kind.tz), safe=False)
    values = pc.fill_null(array.cast(pa.int64()), np.iinfo(np.int64).min)
    return np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.int64).view(np.uint64)


# Each text's word, remembered: a collector seals the same ids, names and accounts round
# after round, and a read checks them day after day. Emptied past _TEXTS_KEPT texts.
_TEXT_WORDS: dict[str, int] = {}
_TEXTS_KEPT = 50_000


def _text_words(texts: list[str]) -> list[int]:
    """Each text's word: the first 8 bytes of its BLAKE2b digest (UTF-8), little-endian."""
    known = _TEXT_WORDS
    if len(known) > _TEXTS_KEPT:
        known.clear()
    words = []
    for text in texts:
        word = known.get(text)
        if word is None:
            digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
            word = known[text] = int.from_bytes(digest, "little")
        words.append(word)
    return words


def day_digests(table: pa.Table) -> np.ndarray:
    """Each row's day's seal (int64): the sum, modulo 2**64, of a digest of each of the
    day's rows (:data:`SEALED`), so the rows' order does not matter and their set does."""
    rows = np.zeros(table.num_rows, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for number, name in enumerate(SEALED, start=1):
            mixed = _mix(rows ^ _mix(_words(table, name) + _GOLDEN * np.uint64(number)))
            if name in UNKNOWN_WHEN_NULL:
                mixed = np.where(null_mask(table[name]), rows, mixed)
            rows = mixed
    days = int64_values(table["period"]) // DAY_NS
    distinct, day_of = np.unique(days, return_inverse=True)
    sums = np.zeros(len(distinct), dtype=np.uint64)
    np.add.at(sums, day_of, rows)  # wraps around: a sum modulo 2**64
    digests: np.ndarray = sums[day_of].view(np.int64)
    return digests


def seal(table: pa.Table) -> pa.Table:
    """``table`` (rollup rows, any days) with its ``digest`` column set to each row's day's
    seal: what a writer does last, after every sealed figure is final."""
    digests = pa.array(day_digests(table), pa.int64())
    return table.set_column(table.schema.get_field_index("digest"), "digest", digests)


def figures(table: pa.Table, lists: list[str]) -> tuple[list[Bins], np.ndarray]:
    """The figures of ``lists`` per row [rows, bins] (views of each file's column where
    it can: :class:`~searchkit.history.arrays.Bins`), and which rows have none or figures
    no sum of valid values has."""
    bad = np.zeros(table.num_rows, dtype=bool)
    found: list[Bins] = []
    for name in lists:
        column = table[name]
        if name == "invalid" and lists is not DAY_FIGURES:  # by quarter: days without any
            bad |= pc.fill_null(column, 1).to_numpy() != 0
            continue
        if lists is DAY_FIGURES:
            bad |= null_mask(column)
            found.append(Bins([pc.fill_null(column.combine_chunks(), 0).to_numpy()[:, None]]))
            continue
        size = HOURS if name.startswith("hourly") else QUARTERS
        parts, low = [], 0
        for chunk in column.chunks if isinstance(column, pa.ChunkedArray) else [column]:
            part, wrong = _bins(chunk, size)
            parts.append(part)
            bad[low : low + len(part)] |= wrong
            low += len(part)
        found.append(Bins(parts))
    # No sum of valid values is negative, infinite or NaN, no count negative: checked on
    # each file's extremes, then each row's where those fail (no flag per figure).
    # Each file's figures are gone through once while they are in the CPU's cache: their
    # extremes, and each row's total (what _changed compares with the day's), kept.
    sums, points, *invalid = found
    with np.errstate(invalid="ignore"):
        bad |= sums.each(_impossible_sums)
    bad |= points.each(_negative)
    if invalid:
        bad |= invalid[0].each(_negative)
    return found, bad


def _impossible_sums(part: np.ndarray) -> np.ndarray:
    """Which rows of ``part`` hold a sum no valid values have (negative, infinite, NaN):
    the whole part's extremes first (one pass), each row's only when those fail."""
    if part.size and part.min() >= 0 and np.isfinite(part.max()):
        return np.zeros(len(part), dtype=bool)
    wrong: np.ndarray = ~((part.min(axis=1) >= 0) & np.isfinite(part.max(axis=1)))
    return wrong


def _negative(part: np.ndarray) -> np.ndarray:
    """Which rows of ``part`` hold a negative count (the whole part's least first)."""
    if part.size and part.min() >= 0:
        return np.zeros(len(part), dtype=bool)
    wrong: np.ndarray = part.min(axis=1) < 0
    return wrong


def _totals(bins: Bins) -> np.ndarray:
    """Each row's total of its bins: its quarters added left to right (as a day read by
    quarters adds them up), its hours by NumPy's sum (compared to a billionth)."""
    if bins.width == QUARTERS:
        return bins.each(lambda part: run_sums(part, [0])[:, 0])
    return bins.each(lambda part: part.sum(axis=1))


def _bins(chunk: pa.ListArray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """One file's list column as figures [rows, size] (a view of its values when every row
    has ``size`` of them), and which rows have none or not ``size``, or a bin without one
    (those rows' figures are zeros)."""
    lengths = pc.fill_null(pc.list_value_length(chunk), 0).to_numpy()
    whole = lengths == size
    bad = ~whole  # none (points of other days), or not a day's bins
    flat = pc.list_flatten(chunk)
    if flat.null_count:  # a bin without a figure: its row has none
        holder = np.repeat(np.arange(len(lengths)), lengths)
        bad[holder[null_mask(flat)]] = True
        flat = pc.fill_null(flat, 0)
    numbers = flat.to_numpy()
    if whole.all():
        return numbers.reshape(-1, size), bad  # a view: no copy
    values = np.zeros((len(chunk), size), dtype=numbers.dtype)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])[whole]
    values[whole] = numbers[(starts[:, None] + np.arange(size)).ravel()].reshape(-1, size)
    return values, bad  # rows of other lengths: zeros, and bad


def usable(table: pa.Table, lists: list[str], *, warn: bool) -> tuple[list[Bins], np.ndarray]:
    """The figures of ``lists`` (see :func:`figures`) of rollup rows read with
    :data:`CHECKED`, and which rows may not answer for their day's points: figures
    missing or impossible, :func:`stale`, or :func:`changed` (with ``warn``, those days
    named in a :class:`HistoryWarning`)."""
    found, bad = figures(table, lists)
    bad |= stale(table)
    reasons = _changed(table, found, ~bad)
    if warn:
        warn_changed(reasons, stacklevel=4)
    return found, bad | on_days(table, reasons)


def warn_changed(reasons: dict[str, str], stacklevel: int = 3) -> None:
    """Name the days of rollups changed since written (:func:`changed`) in a
    :class:`HistoryWarning`, if any."""
    if not reasons:
        return
    named = "; ".join(f"{day} ({why})" for day, why in sorted(reasons.items()))
    warnings.warn(
        HistoryWarning(
            f"rollups that do not add up ignored: {named}: changed since they were "
            "written; their days are read from their points, and the next collect or "
            "refresh_rollups() rewrites them"
        ),
        stacklevel=stacklevel,
    )


def on_days(table: pa.Table, days: Iterable[str]) -> np.ndarray:
    """Which rollup rows are of one of ``days`` (``YYYY-MM-DD``)."""
    numbers = [np.datetime64(day, "D").astype(np.int64) for day in days]
    if not numbers:
        return np.zeros(table.num_rows, dtype=bool)
    return np.isin(int64_values(table["period"]) // DAY_NS, numbers)


def stale(table: pa.Table) -> np.ndarray:
    """Which rows an older searchkit wrote: without quarters, hours or seal, or counting
    points of other days (which every reader now leaves out)."""
    first, last = int64_values(table["first_point"]), int64_values(table["last_point"])
    begin = (int64_values(table["period"]) // DAY_NS) * DAY_NS
    bad: np.ndarray = null_mask(table["first_point"]) | null_mask(table["last_point"])
    bad |= null_mask(table["digest"])
    return bad | (first < begin) | (last >= begin + DAY_NS)


def changed(table: pa.Table, lists: list[str]) -> dict[str, str]:
    """The days of rollup rows (read with :data:`CHECKED` and ``lists``) changed since
    they were written, each with the first reason found (see the module)."""
    found, bad = figures(table, lists)
    return _changed(table, found, ~(bad | stale(table)))


def changed_any(table: pa.Table, lists: Sequence[list[str]]) -> bool:
    """Whether :func:`changed` finds a day of the rows changed by any of ``lists`` (each
    read with the rows): the rows' own checks, the seal among them, made once for all."""
    checks = _row_checks(table)
    for names in lists:
        found, bad = figures(table, names)
        checks += _bins_checks(table, found, ~(bad | stale(table)))
    return any(bool(wrong.any()) for wrong, _ in checks)


def _changed(table: pa.Table, found: list[Bins], held: np.ndarray) -> dict[str, str]:
    """The days whose rows were changed since written, each with the first reason found:
    the period, the seal, or figures that disagree (of the rows ``held``'s bins)."""
    period = int64_values(table["period"])
    reasons: dict[str, str] = {}
    for wrong, why in [*_row_checks(table), *_bins_checks(table, found, held)]:
        for day in np.unique(period[wrong] // DAY_NS).tolist():
            reasons.setdefault(str(np.datetime64(int(day), "D")), why)
    return reasons


def _row_checks(table: pa.Table) -> list[tuple[np.ndarray, str]]:
    """The rows that fail a check of their own (the period, the seal, the operations),
    each check with its reason."""
    period = int64_values(table["period"])
    value_sum = pc.fill_null(table["value_sum"].combine_chunks(), np.nan).to_numpy()
    seconds = interval_seconds(table["interval_seconds"].to_numpy().astype(np.float64))
    operations = pc.fill_null(table["operations"].combine_chunks(), np.nan).to_numpy()
    stored = table["digest"].combine_chunks()
    sealed = ~null_mask(stored) & ~stale(table)  # an older writer's rollup is stale, not changed
    return [
        (period % DAY_NS != 0, "a period not at midnight UTC"),
        (
            sealed & (pc.fill_null(stored, 0).to_numpy() != day_digests(table)),
            "rows removed, added or changed",
        ),
        (operations != value_sum * seconds, "operations that are not the value sum x interval"),
    ]


def _bins_checks(
    table: pa.Table, found: list[Bins], held: np.ndarray
) -> list[tuple[np.ndarray, str]]:
    """The rows ``held`` whose bins (``found``: sums and points by hour or by quarter) do
    not add up to their day, with the reason; none for the day figures."""
    if not (len(found) >= 2 and found[0].width in (HOURS, QUARTERS)):
        return []
    value_sum = pc.fill_null(table["value_sum"].combine_chunks(), np.nan).to_numpy()
    points = pc.fill_null(table["points"].combine_chunks(), -1).to_numpy()
    bins, counted = found[0], found[1]
    total = _totals(bins)
    if bins.width == QUARTERS:
        wrong = total != value_sum
    else:
        with np.errstate(invalid="ignore"):
            wrong = ~(np.abs(total - value_sum) <= _HOURS_TOLERANCE * value_sum)
    counts = counted.each(lambda part: part.sum(axis=1))
    return [(held & (wrong | (counts != points)), "bins not the day")]


def whole_days(table: pa.Table, bad: np.ndarray) -> np.ndarray:
    """Which rows belong to a day with a ``bad`` row (a day answers whole or not at all)."""
    days = int64_values(table["period"]) // DAY_NS
    return np.isin(days, days[bad])
