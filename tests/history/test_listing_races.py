"""A read beside a compaction replacing a day's files: every point, or a HistoryError.

A reader lists a day's files, reads them, and lists them again (history/reader.py); a
compaction writes the day's merged file, renames it in, then deletes the files it replaces
(history/compaction.py). Each interleaving of the two is forced here, with no sleeps: a
filesystem handler runs the compaction at one point of the reader's listing.

The local listing is taken as pyarrow's LocalFileSystem takes it (arrow/filesystem/
localfs.cc, StatSelector): the folder's names first (``readdir``), then a ``stat`` per
name, a name gone by then left out. The stores here are local folders read through that
handler, so the History is told its folder is local (``_layout.local``): it lists and
locks as it does on a LocalFileSystem. The last test reads one as an object store (one
listing, then each file fetched whole) and replaces a file as it is fetched.
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Callable

import pandas as pd
import pyarrow.fs as pafs
import pytest

import searchkit as sk
from searchkit.history.seen_history import SeenHistory
from searchkit.history.usage_history import History
from tests.history.conftest import data_files
from tests.local_fs import LocalHandler

DAY = "day=2026-11-20"


class Listing(LocalHandler):
    """The local filesystem, listing a folder as pyarrow's LocalFileSystem does (names, then
    a stat each, a name gone by then left out); ``between`` runs once, the next time a
    throughput day folder's names have been read and not yet stat'ed (by this listing, or
    by the History's own reading of a folder: names through ``os.scandir``, stats here),
    after ``passes`` such listings went by untouched."""

    def __init__(self, passes: int = 0) -> None:
        super().__init__()
        self.between: Callable[[], None] | None = None
        self.passes = passes

    def _window(self, path: str) -> None:
        step = self.between
        if step is None or f"/throughput/{DAY}" not in path:
            return
        if self.passes:
            self.passes -= 1
            return
        self.between = None
        step()

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        base = selector.base_dir
        if selector.recursive or not os.path.isdir(base):
            return super().get_file_info_selector(selector)
        with os.scandir(base) as entries:
            names = sorted(entry.name for entry in entries)
        self._window(base)
        infos = self._fs.get_file_info([f"{base}/{name}" for name in names])
        return [info for info in infos if info.type != pafs.FileType.NotFound]

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        if paths:
            self._window(paths[0])
        return super().get_file_info(paths)


def collected(root: pathlib.Path, emulator, client, rounds: int = 3) -> pd.DataFrame:
    """``rounds`` collects 20 minutes apart into ``root`` (a file each in one day); what
    the store holds after them."""
    hist = History(root)
    for _ in range(rounds):
        hist.collect(client, now=emulator.now())
        emulator.advance(20 * 60)
    return hist.throughput()


def local(handler: LocalHandler, root: pathlib.Path) -> History:
    hist = History(str(root), filesystem=pafs.PyFileSystem(handler))
    hist._layout.local = True  # a local folder (see the module)
    return hist


def test_a_listing_whose_names_were_read_before_compact_and_stats_after_sees_every_point(
    tmp_path, emulator, client
):
    """The reader read the day's names (three collect files), compact() then merged them
    and deleted them, and the reader's stats found none: the listing was empty and the
    read returned 0 points (2026-11-27, test_history.py::
    test_readers_see_every_point_while_compact_replaces_files under load)."""
    root = tmp_path / "h"
    expected = collected(root, emulator, client)
    handler = Listing()
    compacted: list[dict[str, int]] = []
    handler.between = lambda: compacted.append(History(root).compact())

    read = local(handler, root).throughput()

    assert [(c["partitions"], c["files_removed"]) for c in compacted] == [(1, 3)]
    assert len(data_files(root)) == 1  # the merged file: every point the read shows
    assert len(read) == 6 * (120 + 20 + 20)  # the first list's two hours, then 20 minutes
    pd.testing.assert_frame_equal(read, expected, check_exact=True)


def test_info_counts_a_day_whose_files_compact_replaced_while_its_days_were_listed(
    tmp_path, emulator, client
):
    """info() takes the days from a listing, then reads each (or its rollup): a listing
    that lost the day to compact() (names before, stats after) is no day without points.
    The read's own check (reader.py) never sees it: the day is never read."""
    root = tmp_path / "h"
    collected(root, emulator, client)
    handler = Listing(passes=1)  # the files counted first (history/footprint.py), then the days
    handler.between = lambda: History(root).compact()

    seen = local(handler, root).info()

    assert handler.between is None  # compact() ran in the window
    assert (seen.points, seen.indexes) == (6 * (120 + 20 + 20), 6)
    assert (seen.first, seen.last) == (History(root).info().first, History(root).info().last)


def test_a_listing_before_compact_and_a_read_after_it_sees_every_point(tmp_path, emulator, client):
    """Listed whole before compact(), read after it: the files listed are gone when
    opened, so the day is listed again."""
    root = tmp_path / "h"
    expected = collected(root, emulator, client)
    opened: list[str] = []

    class Opening(Listing):
        def open_input_file(self, path: str):
            if not opened:
                opened.append(path)
                History(root).compact()
            return super().open_input_file(path)

    read = local(Opening(), root).throughput()

    assert len(opened) == 1 and not os.path.exists(opened[0])
    pd.testing.assert_frame_equal(read, expected, check_exact=True)


class Missing(Listing):
    """As :class:`Listing`, except that the folder's ``readdir`` leaves out ``name`` on the
    listings numbered in ``hidden`` (counted from 1): a ``readdir`` read in several parts
    while a compaction renamed that file in behind where it had reached, and deleted the
    files it replaces ahead of it (neither is seen)."""

    def __init__(self, name: str, hidden: Callable[[int], bool]) -> None:
        super().__init__()
        self.name, self.hidden, self.listings = name, hidden, 0


def hide_in_readdir(monkeypatch, handler: Missing) -> None:
    """Every ``readdir`` of the day folder (the handler's and the History's own) counts as
    one listing of it, and leaves out ``handler.name`` on the hidden ones."""
    scandir = os.scandir

    class Entries:
        def __init__(self, folder):
            self._inner = scandir(folder)
            handler.listings += 1
            self._hide = handler.hidden(handler.listings)

        def __enter__(self):
            return (e for e in self._inner if not (self._hide and e.name == handler.name))

        def __exit__(self, *exc):
            self._inner.close()

    def patched(folder=None):
        if folder is not None and str(folder).endswith(f"/throughput/{DAY}"):
            return Entries(folder)
        return scandir(folder) if folder is not None else scandir()

    monkeypatch.setattr(os, "scandir", patched)


def test_a_listing_that_missed_the_merged_file_and_those_it_replaced_is_taken_again(
    tmp_path, emulator, client, monkeypatch
):
    """A listing that shows no file of a day that has one is no empty day: it was listed
    while a compaction replaced its files (the reader's second listing shows the file)."""
    root = tmp_path / "h"
    expected = collected(root, emulator, client)
    History(root).compact()
    (merged,) = data_files(root)
    handler = Missing(merged.name, hidden=lambda listing: listing == 1)
    hide_in_readdir(monkeypatch, handler)

    read = local(handler, root).throughput()

    pd.testing.assert_frame_equal(read, expected, check_exact=True)
    assert handler.listings == 3  # missed, listed again (read), and the same after the read


def test_a_read_whose_listings_keep_missing_a_file_is_a_history_error_not_fewer_points(
    tmp_path, emulator, client, monkeypatch
):
    """Every other listing misses the merged file (a compaction at work at each): the
    reader's retries run out with the last listing short of it. It says so; it never
    returns the points of the newer file alone."""
    root = tmp_path / "h"
    collected(root, emulator, client)
    History(root).compact()
    (merged,) = data_files(root)
    newer = collected(root, emulator, client, rounds=1)  # a collect's file beside it
    assert len(newer) == 6 * (120 + 20 + 20 + 20)
    handler = Missing(merged.name, hidden=lambda listing: listing % 2 == 1)
    hide_in_readdir(monkeypatch, handler)

    with pytest.raises(sk.HistoryError) as info:
        local(handler, root).throughput()

    assert str(info.value) == (
        f"the throughput history at {str(root)!r} kept changing while it was read "
        f"({merged} was listed after the read); nothing is lost: try again"
    )
    assert handler.listings == 6  # five reads, each listed before and after


def test_a_folder_whose_files_keep_going_under_each_listing_is_a_history_error(tmp_path):
    """A file named by each readdir and gone by its stat, listing after listing: the
    listing says so rather than leave the file out."""
    day = tmp_path / "h" / "throughput" / DAY
    day.mkdir(parents=True)
    (day / "part-1-a.parquet").write_bytes(b"PAR1")

    class Going(LocalHandler):
        def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
            return [
                pafs.FileInfo(path, pafs.FileType.NotFound)
                if path.endswith("part-1-a.parquet")
                else info
                for path, info in zip(paths, super().get_file_info(paths), strict=True)
            ]

    with pytest.raises(sk.HistoryError) as info:
        local(Going(), tmp_path / "h").throughput()

    assert str(info.value) == (
        f"the history at {str(tmp_path / 'h')!r} kept changing while it was listed "
        f"({day}); nothing is lost: try again"
    )


def test_a_refresh_whose_new_file_a_compaction_replaced_meanwhile_counts_its_points(
    tmp_path, emulator, client
):
    """A SeenHistory refresh adds the points of the files written since its last read to
    the open day's rows it kept (history/seen_history.py). One of those files replaced
    between the refresh's listing and its read (merged into a file it did not list): its
    points are in no file the read reads; the rows must not claim the day's files then."""
    root = tmp_path / "h"
    collected(root, emulator, client)  # three files, and the day's rollup
    day = "2026-11-20"

    class Replacing(LocalHandler):
        """An object store (through PyFileSystem) whose file ``replaced`` is merged into
        another, under a new name, as it is first opened."""

        replaced: str | None = None

        def open_input_file(self, path: str):
            if path == self.replaced:
                self.replaced = None
                folder, _, name = path.rpartition("/")
                os.rename(path, f"{folder}/part-9{name[5:]}")  # named after the ones it replaces
            return super().open_input_file(path)

    handler = Replacing()
    seen = SeenHistory(History(str(root), filesystem=pafs.PyFileSystem(handler)))
    before = seen.sums(day, day)[day]  # the open day's rows, kept
    collected(root, emulator, client, rounds=2)  # two files written since
    handler.replaced = str(data_files(root)[-2])  # the first of them

    got = seen.sums(day, day)[day]

    assert handler.replaced is None  # it was opened, and replaced
    afresh = History(root)
    assert afresh.refresh_rollups([day]) == 1  # the day's rollup, from its points as they are
    fresh = afresh.sums(day, day)[day]
    assert int(before.points.sum()) == 6 * (120 + 20 + 20)
    assert int(fresh.points.sum()) == 6 * (120 + 20 + 20 + 20 + 20)
    assert int(got.points.sum()) == int(fresh.points.sum())
    assert got.ids == fresh.ids
    assert got.value_sums.tolist() == fresh.value_sums.tolist()
