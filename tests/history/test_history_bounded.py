"""A read that would not fit in memory is refused before it starts, saying how to bound it
(the limit lowered with SEARCHKIT_READ_LIMIT; by default it is the machine's memory)."""

from __future__ import annotations

import pandas as pd
import pytest

from searchkit.errors import HistoryError, ValidationError
from searchkit.history.usage_history import History


def test_an_unbounded_read_over_the_limit_is_refused_and_a_bounded_one_runs(
    tmp_path, across_midnight, monkeypatch
):
    hist = across_midnight()  # 1,080 points on the 20th, 360 on the 21st
    monkeypatch.setenv("SEARCHKIT_READ_LIMIT", "100kB")

    with pytest.raises(HistoryError) as caught:
        hist.throughput(start="2026-11-20 22:00")
    bounded = hist.throughput(start="2026-11-21", end="2026-11-22")

    assert str(caught.value) == (
        "reading the throughput history from 2026-11-20 to the last day would take about "
        "232 KiB of memory (1,440 rows), more than the 97.7 KiB allowed (this machine's "
        "memory, or SEARCHKIT_READ_LIMIT); nothing was read: give end= as well as start= "
        "(e.g. hist.throughput(start=..., end=...)), fewer names= or index_ids=, or read a "
        "day at a time"
    )
    assert len(bounded) == 360
    assert bounded["time"].min() == pd.Timestamp("2026-11-21 00:00", tz="UTC")


def test_the_default_limit_is_the_machines_memory_and_a_bad_limit_is_named(
    tmp_path, emulator, client, monkeypatch
):
    hist = History(tmp_path / "h")
    hist.collect(client)
    monkeypatch.delenv("SEARCHKIT_READ_LIMIT", raising=False)
    assert len(hist.throughput()) == 6 * 120

    monkeypatch.setenv("SEARCHKIT_READ_LIMIT", "lots")
    with pytest.raises(ValidationError) as caught:
        hist.throughput()
    assert str(caught.value) == (
        "SEARCHKIT_READ_LIMIT='lots' is no size: give bytes, e.g. 2000000000, 2GB or 512MiB"
    )


def test_a_rollups_read_is_estimated_by_its_lists_and_not_read_again_day_by_day(
    across_midnight, monkeypatch
):
    hist = across_midnight()  # rollups of six indexes on two days
    monkeypatch.setenv("SEARCHKIT_READ_LIMIT", "20kB")

    # 96 quarters a row (twice): about 4.5 KB a row (was taken for 0.7 KB: 1 KB a row, by
    # the share of the columns read), and refused as a whole, not read again in parts.
    with pytest.raises(HistoryError) as caught:
        hist.sums("2026-11-20", "2026-11-21", detail="quarter")
    days = hist.sums("2026-11-20", "2026-11-21", detail="day")  # the totals fit

    assert str(caught.value) == (
        "reading the rollups history from 2026-11-20 to 2026-11-21 would take about 52.7 KiB "
        "of memory (12 rows), more than the 19.5 KiB allowed (this machine's memory, or "
        "SEARCHKIT_READ_LIMIT); nothing was read: read a shorter span"
    )
    assert sorted(days) == ["2026-11-20", "2026-11-21"]
