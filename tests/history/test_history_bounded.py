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
