"""A closed month that cannot be packed (history/pack_writer.py): none of its days has a
current rollup. Compaction tries its closed months every day; such a month is read once,
then not again while its days list the same, and packed as soon as a day of it can be."""

from __future__ import annotations

import pathlib

import pandas as pd
import pyarrow.fs as pafs
import pytest

import searchkit as sk
from searchkit.history import pack_writer, reader
from searchkit.history.layout import Layout
from tests.history.test_history_packs import DAYS, months, points
from tests.stores import copy_store

SEPTEMBER = [day for day in DAYS if day.startswith("2025-09")]
TODAY = "2025-10-03"  # compaction's day: September closed


@pytest.fixture
def unpackable(tmp_path) -> pathlib.Path:
    """September's days with rollups that no longer name their files (late points came
    after them, none summed yet) and no pack; October packed."""
    base = tmp_path / "base"
    for number, day in enumerate(DAYS):
        points(base, day, number)
    assert sk.History(str(base)).refresh_rollups(DAYS) == len(DAYS)
    root = tmp_path / "store"
    copy_store(base, root, ignore=lambda folder, names: {"month=2025-09"} & set(names))
    for number, day in enumerate(SEPTEMBER):
        points(root, day, 50 + number, name="late")
    assert months(root) == ["month=2025-10"]
    return root


def rollup_reads(monkeypatch) -> list[str]:
    """The rollup files each read opens (day rollups and packs), as they are planned."""
    opened: list[str] = []
    plan = reader.plan_file

    def spy(layout, kind, path, *args, **kwargs):
        if kind == "rollups":
            opened.append(path.rpartition("/rollups/")[2].partition("/part-")[0])
        return plan(layout, kind, path, *args, **kwargs)

    monkeypatch.setattr(reader, "plan_file", spy)
    return opened


def layout_of(root: pathlib.Path) -> Layout:
    """A layout of its own, as compaction's thread makes one each day."""
    return Layout(str(root), pafs.LocalFileSystem(), str(root))


def test_a_month_that_cannot_be_packed_is_not_read_again_while_its_days_list_the_same(
    unpackable, monkeypatch
):
    opened = rollup_reads(monkeypatch)

    assert pack_writer.pack_closed(layout_of(unpackable), DAYS, TODAY) == 0
    tried = sorted(opened)
    opened.clear()
    for _ in range(3):  # the days after: nothing changed
        assert pack_writer.pack_closed(layout_of(unpackable), DAYS, TODAY) == 0

    assert tried == [f"day={day}" for day in SEPTEMBER]  # read once, found not current
    assert opened == []  # then nothing read
    assert months(unpackable) == ["month=2025-10"]


def test_points_added_to_a_month_that_could_not_be_packed_make_it_tried_again(
    unpackable, monkeypatch
):
    assert pack_writer.pack_closed(layout_of(unpackable), DAYS, TODAY) == 0
    points(unpackable, SEPTEMBER[0], 77, name="later")  # its listing changes
    opened = rollup_reads(monkeypatch)

    assert pack_writer.pack_closed(layout_of(unpackable), DAYS, TODAY) == 0

    assert sorted(opened) == [f"day={day}" for day in SEPTEMBER]


def test_a_month_that_could_not_be_packed_is_packed_once_a_day_of_it_can_be(
    unpackable, monkeypatch
):
    assert pack_writer.pack_closed(layout_of(unpackable), DAYS, TODAY) == 0
    hist = sk.History(str(unpackable))
    want = sk.usage_frame(hist, freq="D")

    # A day's rollup written anew (what the next compaction of the day does) packs the month.
    assert hist.refresh_rollups([SEPTEMBER[1]]) == 1

    assert months(unpackable) == ["month=2025-09", "month=2025-10"]
    opened = rollup_reads(monkeypatch)
    got = sk.usage_frame(sk.History(str(unpackable)), freq="D")
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    # 2025-09-29 from September's pack; the other two September days' rollups are read (and
    # found not current: their points answer); October from its pack.
    assert sorted(opened) == [
        "_months/month=2025-09", "_months/month=2025-10",
        "day=2025-09-28", "day=2025-09-30"]  # fmt: skip
