"""What a year's read on an object store holds of the month packs it fetches
(history/packs.py, Layout.fetch): each pack is fetched once, decoded, and let go, but the
two used last (the next batch of days asks for them again); at most two are fetched at
once. So a read holds four packs at most, whatever its months (a year's 13 packs held to
the call's end took some 225 MB).

The packs are fetched through a filesystem that hands each its bytes in an object of its
own, and counts those alive: what the read holds, not a figure of the machine's memory."""

from __future__ import annotations

import gc
import pathlib
import threading
import weakref

import pandas as pd
import pyarrow as pa
import pyarrow.fs as pafs
import pytest

import searchkit as sk
from tests.history.test_history_packs import points
from tests.local_fs import LocalHandler

# Seven closed months, two days each (a pack each), whatever day the tests run on.
DAYS = [f"2025-{month:02d}-{day}" for month in range(3, 10) for day in (10, 20)]
MONTHS = [f"month=2025-{month:02d}" for month in range(3, 10)]


class _Bytes(bytearray):
    """A fetched pack's bytes (a bytearray can be watched by a weak reference)."""


class Counting(LocalHandler):
    """The local filesystem, handing each month pack opened its bytes in memory (as an
    object store's whole fetch does) and counting the packs whose bytes are alive."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()
        self.alive = self.most = 0
        self.opened: list[str] = []

    def get_type_name(self) -> str:
        return "counting"  # not "local": read as an object store is, each file fetched whole

    def open_input_file(self, path: str) -> pa.NativeFile:
        if "/_months/" not in path:
            return super().open_input_file(path)
        with open(path, "rb") as handle:
            data = _Bytes(handle.read())
        with self.lock:
            self.opened.append(path.rpartition("/_months/")[2].partition("/")[0])
            self.alive += 1
            self.most = max(self.most, self.alive)
        weakref.finalize(data, self._let_go)
        return pa.BufferReader(pa.py_buffer(data))

    def _let_go(self) -> None:
        with self.lock:
            self.alive -= 1


@pytest.fixture(scope="module")
def packed(tmp_path_factory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("pack-memory") / "h"
    for number, day in enumerate(DAYS):
        points(root, day, number)
    assert sk.History(str(root)).refresh_rollups(DAYS) == len(DAYS)
    assert sorted(p.parent.name for p in (root / "rollups/_months").glob("*/*")) == MONTHS
    return root


@pytest.mark.parametrize(
    ("zone", "freq", "batch"),
    [
        ("UTC", "D", None),  # one read of every month
        # 3 days a batch: a month's second day begins the next batch, which asks for it again
        ("Asia/Kolkata", "D", 3),
        # each batch read twice, by whole days and by hours (a week's boundary splits one day)
        ("America/New_York", "W", 3),
    ],
)
def test_a_read_of_many_months_holds_four_fetched_packs_at_most_each_fetched_once(
    packed, monkeypatch, zone, freq, batch
):
    from searchkit.analytics import periods

    if batch is not None:
        monkeypatch.setattr(periods, "BATCH_DAYS", batch)
    want = sk.usage_frame(sk.History(str(packed)), tz=zone, freq=freq)
    handler = Counting()
    hist = sk.History(str(packed), filesystem=pafs.PyFileSystem(handler))

    got = sk.usage_frame(hist, tz=zone, freq=freq)

    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert handler.opened == MONTHS or sorted(handler.opened) == MONTHS  # each once
    # Two being fetched and decoded, the two used last: four (before: all seven, to the end).
    assert 1 <= handler.most <= 4
    del got, hist
    gc.collect()
    assert handler.alive == 0  # nothing kept once the call returned
