"""Two compactors of one process on one day: the second waits for the first, then finds
the day merged. Neither skips it with a warning about a lock "held by pid <its own>" (the
suite's warnings, 2026-11-27: two collectors on threads, each round compacting the day the
other's merge held), nothing is merged twice, nothing is lost.

The first compactor is paused while it holds the day's lock, with no sleeps: a filesystem
handler holds its merged file's write, and the second's wait for the lock is observed.
"""

from __future__ import annotations

import threading
import types

import pandas as pd
import pyarrow.fs as pafs

from searchkit.errors import HistoryWarning
from searchkit.history import locks
from searchkit.history.usage_history import History
from tests.history.conftest import data_files
from tests.local_fs import LocalHandler

NOTHING = {
    "partitions": 0,
    "files_removed": 0,
    "duplicates_dropped": 0,
    "snapshots_thinned": 0,
    "rollups_written": 0,
    "days_skipped": 0,
    "stale_temporaries_removed": 0,
}


class Pausing(LocalHandler):
    """The local filesystem, except that the first file of points written (a compaction's
    merged file: it holds the day's lock) waits for ``go``; ``holding`` says it is there."""

    def __init__(self) -> None:
        super().__init__()
        self.holding, self.go = threading.Event(), threading.Event()

    def open_output_stream(self, path: str, metadata: object = None):
        if "/throughput/" in path and not self.holding.is_set():
            self.holding.set()
            if not self.go.wait(60):
                raise OSError("the test never let the compaction go on")
        return super().open_output_stream(path, metadata)


def observe_waits(monkeypatch, turn: threading.Event) -> None:
    """Set ``turn`` when a compactor of this process waits for the day's lock (the locks
    of history/locks.py, made after this)."""
    real = threading.Lock

    class Observed:
        def __init__(self) -> None:
            self._lock = real()

        def __enter__(self) -> Observed:
            if not self._lock.acquire(blocking=False):
                turn.set()  # a second compactor waits here for the first
                self._lock.acquire()
            return self

        def __exit__(self, *exc: object) -> None:
            self._lock.release()

    monkeypatch.setattr(locks, "threading", types.SimpleNamespace(Lock=Observed), raising=False)


def test_compact_beside_another_thread_s_compaction_of_the_day_waits_and_merges_nothing_twice(
    tmp_path, emulator, client, monkeypatch, recwarn
):
    root = tmp_path / "h"
    hist = History(root)
    for _ in range(3):  # three files in the day
        hist.collect(client, now=emulator.now())
        emulator.advance(20 * 60)
    before = hist.throughput()
    turn = threading.Event()  # the second compactor waits, or is done
    observe_waits(monkeypatch, turn)
    handler = Pausing()
    thread_s = History(str(root), filesystem=pafs.PyFileSystem(handler))
    thread_s._layout.local = True  # a local folder: it takes the day's lock as one
    results: dict[str, object] = {}

    def compact(name: str, history: History) -> None:
        try:
            results[name] = history.compact()
        except BaseException as exc:  # reported by the assertions below
            results[name] = exc
        finally:
            if name == "notebook":
                turn.set()

    first = threading.Thread(target=compact, args=("thread", thread_s))
    first.start()
    assert handler.holding.wait(60)  # the first holds the day's lock, mid-merge
    second = threading.Thread(target=compact, args=("notebook", History(root)))
    second.start()
    assert turn.wait(60)
    handler.go.set()
    first.join(60)
    second.join(60)

    assert results == {
        "thread": {**NOTHING, "partitions": 1, "files_removed": 3, "rollups_written": 1},
        "notebook": NOTHING,  # it waited; the day was merged, its rollup current
    }
    assert [str(w.message) for w in recwarn if issubclass(w.category, HistoryWarning)] == []
    assert len(data_files(root)) == 1
    pd.testing.assert_frame_equal(History(root).throughput(), before, check_exact=True)


def test_compact_right_after_the_midnight_collect_waits_for_its_merge_and_says_nothing(
    tmp_path, emulator, client, recwarn
):
    """A notebook collecting across midnight, then calling compact() at once: the collect
    left the closed day's merge on a thread, which compact() waits for (compaction.settle):
    the day is merged once, by the merge, and compact() finds nothing left to do."""
    root = tmp_path / "h"
    hist = History(root)
    emulator.advance(11 * 3600 + 30 * 60)  # 23:30
    for _ in range(4):  # 23:30, 23:40, 23:50, and the round at midnight
        hist.collect(client, now=emulator.now())
        emulator.advance(600)

    result = hist.compact()

    assert result == NOTHING
    assert [str(w.message) for w in recwarn if issubclass(w.category, HistoryWarning)] == []
    assert [p.parent.name for p in data_files(root)] == ["day=2026-11-20"]
    assert len(hist.throughput()) == 6 * 150  # 21:30 .. 23:59, each point once
