"""SeenHistory: a forecast made again on it after the store changed is forecast_limits' on
the store read afresh, to the bit, whatever changed: a collect, a compaction, a rename,
another writer's late points."""

from __future__ import annotations

import datetime as dt
import pathlib
import shutil
import tempfile
import uuid

import pandas as pd
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import searchkit as sk
from searchkit.analytics.day_forecast import forecast_day
from searchkit.emulator import Emulator
from searchkit.history import pack_writer
from searchkit.history.checks import seal
from searchkit.history.compaction import settle_all
from searchkit.history.layout import PACKS, Layout
from searchkit.history.seen_history import SeenHistory
from tests.local_fs import LocalHandler, OpenedHandler
from tests.stores import copy_store

EVENING = dt.datetime(2026, 11, 20, 20, 0, tzinfo=dt.timezone.utc)


@pytest.fixture(scope="module")
def collected(tmp_path_factory) -> pathlib.Path:
    """The demo's week collected at 20:00 and 20:10 (today's rollup extended once)."""
    root = tmp_path_factory.mktemp("seen") / "h"
    with Emulator(demo=True, seed=2026, clock=EVENING, window_minutes=7 * 1440) as emu:
        with emu.client() as client:
            for _ in range(2):
                sk.History(root).collect(client, now=emu.now())
                emu.advance(600)
    return root


@pytest.fixture
def store(collected, tmp_path) -> pathlib.Path:
    root = tmp_path / "h"
    copy_store(collected, root)
    return root


def refreshed(root: pathlib.Path, change, **options) -> tuple[pd.DataFrame, ...]:
    """The rows of a forecast on a SeenHistory before ``change`` and asked again after it,
    and forecast_limits' on the store as it is then."""
    seen = SeenHistory(sk.History(root))
    first = forecast_day(seen, **options).rows
    change(root)
    again = forecast_day(seen, **options).rows
    return first, again, sk.forecast_limits(sk.History(root), **options)


def collect_again(root: pathlib.Path) -> None:
    later = EVENING + dt.timedelta(minutes=30)
    with Emulator(demo=True, seed=2026, clock=later, window_minutes=7 * 1440) as emu:
        with emu.client() as client:
            sk.History(root).collect(client, now=emu.now())


@pytest.mark.parametrize(
    "change",
    [
        collect_again,
        lambda root: sk.History(root).compact(),  # today's files merged: read again
        lambda root: (collect_again(root), sk.History(root).compact()),
    ],
    ids=["collect", "compaction", "collect-and-compaction"],
)
@pytest.mark.parametrize("options", [{}, {"now": "2026-11-20 20:40", "field": "max_daily_updates"}])
def test_a_forecast_asked_again_is_forecast_limits_on_the_store_as_it_is(store, change, options):
    first, got, fresh = refreshed(store, change, **options)
    pd.testing.assert_frame_equal(got, fresh, check_exact=True)
    if change is collect_again and not options:
        assert got["as_of"].iloc[0].floor("min") == pd.Timestamp("2026-11-20 20:30", tz="UTC")
        assert (got["used"] >= first["used"]).all() and (got["used"] > first["used"]).any()


def test_late_points_of_another_writer_are_read_as_the_store_holds_them(store):
    """A file holding a point before those today's rollup summarised (another writer, a
    re-collect with a new value) cannot extend it: the day is read again."""

    def late_point(root: pathlib.Path) -> None:
        folder = root / "throughput" / "day=2026-11-20"
        table = pq.read_table(sorted(folder.glob("*.parquet"))[0])
        first = table.slice(0, 1)
        value = pa.array([first["value"][0].as_py() * 3 + 1000.0])
        stamp = pa.array([pd.Timestamp("2026-11-20 20:25", tz="UTC")], first["collected_at"].type)
        first = first.set_column(first.schema.get_field_index("value"), "value", value)
        first = first.set_column(
            first.schema.get_field_index("collected_at"), "collected_at", stamp
        )
        pq.write_table(
            first, folder / f"part-{pd.Timestamp('2026-11-20 20:25').value}-late.parquet"
        )

    first, got, fresh = refreshed(store, late_point, now="2026-11-20 20:30")
    pd.testing.assert_frame_equal(got, fresh, check_exact=True)
    # The late value replaced the stored one: one index's use changed, upwards.
    assert (got["used"] != first["used"]).sum() == 1
    assert (got["used"] >= first["used"]).all()


class Counting(SeenHistory):
    """A SeenHistory noting the indexes whose points it is asked for."""

    def __init__(self, history) -> None:
        super().__init__(history)
        self.reads: list = []

    def throughput(self, **options):
        self.reads.append(options.get("index_ids"))
        return super().throughput(**options)


def test_the_points_read_for_a_crossing_are_read_once(store):
    """Today's rollup without crossings (a collector that knew no limit): the first
    forecast reads the points of the two indexes past their limit; after a collect, the
    next reads none (the instants they reached it are kept), and is still forecast_limits'."""
    (path,) = (store / "rollups" / "day=2026-11-20").glob("*.parquet")
    table = pq.read_table(path)
    for name in ("crossing_limits", "crossing_times"):
        empty = pa.array([[]] * table.num_rows, table.schema.field(name).type)
        table = table.set_column(table.schema.get_field_index(name), name, empty)
    pq.write_table(seal(table), path)
    seen = Counting(sk.History(store))

    first = forecast_day(seen).rows
    past = sorted(first[first["hit_at"] <= first["as_of"]].index)
    assert len(past) == 2
    assert seen.reads == [past]
    collect_again(store)
    seen.reads.clear()
    again = forecast_day(seen).rows

    assert seen.reads == []
    pd.testing.assert_frame_equal(again, sk.forecast_limits(sk.History(store)), check_exact=True)
    assert again.loc[past, "hit_at"].tolist() == first.loc[past, "hit_at"].tolist()


class Listed(LocalHandler):
    """The local filesystem, noting the folder of each listing. Through PyFileSystem a
    History reads it as an object store: one recursive listing is one LIST request."""

    def __init__(self) -> None:
        super().__init__()
        self.listed: list[str] = []

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        self.listed.append(selector.base_dir.rpartition("/")[2])
        return super().get_file_info_selector(selector)


def test_a_refresh_on_an_object_store_lists_each_dataset_once_per_call(store):
    """A refresh after a collect (the newest point, then the forecast, as the cockpit asks
    them) lists the throughput and the limits once per call, the rollups not at all (they
    were read once): one LIST request each on an object store. A forecast of a History
    read afresh lists each of the three datasets once."""
    handler = Listed()
    seen = SeenHistory(sk.History(str(store), filesystem=pafs.PyFileSystem(handler)))
    seen.newest_time()
    forecast_day(seen)
    collect_again(store)
    handler.listed.clear()
    seen.newest_time()
    assert handler.listed == ["throughput", "limits"]
    handler.listed.clear()
    rows = forecast_day(seen).rows
    assert handler.listed == ["limits", "throughput"]
    pd.testing.assert_frame_equal(rows, sk.forecast_limits(sk.History(store)), check_exact=True)
    afresh = Listed()
    forecast_day(sk.History(str(store), filesystem=pafs.PyFileSystem(afresh)))
    assert afresh.listed == ["limits", "throughput", "rollups"]


class Opened(Listed, OpenedHandler):
    """As Listed, noting too each file opened (through PyFileSystem: each file read)."""

    def points_read(self) -> list[str]:
        """The days whose points were read, one entry a file."""
        return [p.split("/day=")[1][:10] for p in self.opened if "/throughput/" in p]

    def clear(self) -> None:
        self.listed.clear()
        self.opened.clear()


CLOSED = [f"2026-11-{day}" for day in range(13, 20)]  # the collected store's closed days


def read_on(root: pathlib.Path) -> tuple[SeenHistory, Opened]:
    handler = Opened()
    return SeenHistory(sk.History(str(root), filesystem=pafs.PyFileSystem(handler))), handler


def test_closed_days_read_from_their_points_are_read_from_the_rollups_written_since(store):
    """The closed days had no rollup when a SeenHistory first read them (a collector that
    kept none), so it read their points; refresh_rollups() wrote them since. The next
    refresh reads them from their rollups, not every point again (the rollups listed once
    to see them), to the bit what the store read afresh gives; then the rollups are not
    listed any more."""
    for day in CLOSED:
        shutil.rmtree(store / "rollups" / f"day={day}")
    seen, handler = read_on(store)
    forecast_day(seen)
    assert sorted(set(handler.points_read())) == CLOSED  # today from its rollup
    assert sk.History(store).refresh_rollups() == len(CLOSED)
    collect_again(store)
    handler.clear()

    assert seen.newest_time() == sk.History(store).newest_time()
    handler.clear()
    rows = forecast_day(seen).rows

    assert set(handler.points_read()) <= {"2026-11-20"}  # the new collect's file at most
    assert handler.listed == ["limits", "throughput", "rollups"]
    pd.testing.assert_frame_equal(rows, sk.forecast_limits(sk.History(store)), check_exact=True)
    handler.clear()
    pd.testing.assert_frame_equal(forecast_day(seen).rows, rows, check_exact=True)
    assert handler.listed == ["limits", "throughput"]
    assert handler.points_read() == []


def test_a_month_pack_written_since_answers_the_days_read_from_their_points(store, tmp_path):
    """The same when a month pack, not a day rollup, comes to answer the closed days (their
    day rollups gone: a pack alone holds their rows)."""
    packed = tmp_path / "packed"
    copy_store(store, packed)
    assert pack_writer.pack(Layout(str(packed), pafs.LocalFileSystem(), str(packed)), "2026-11")
    for day in CLOSED:
        shutil.rmtree(store / "rollups" / f"day={day}")
    seen, handler = read_on(store)
    first = forecast_day(seen).rows
    copy_store(packed / "rollups" / PACKS, store / "rollups" / PACKS)
    handler.clear()

    rows = forecast_day(seen).rows

    assert handler.points_read() == []
    pd.testing.assert_frame_equal(rows, sk.forecast_limits(sk.History(store)), check_exact=True)
    pd.testing.assert_frame_equal(rows, first, check_exact=True)


class Compacting(Opened):
    """The local filesystem, except that while ``compacting`` a compaction is replacing the
    newest day's files under every read: each listing of the throughput shows a file that
    is gone when it is opened (as tests/browser/test_cockpit.py's kernel sees it)."""

    def __init__(self) -> None:
        super().__init__()
        self.compacting = False

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        infos = super().get_file_info_selector(selector)
        if not self.compacting or "/throughput" not in selector.base_dir:
            return infos
        folders = [selector.base_dir]
        folders += [i.path for i in infos if i.type == pafs.FileType.Directory]
        days = [f for f in folders if f.rpartition("/")[2].startswith("day=")]
        if days:
            ghost = max(days) + "/part-1-replaced-by-a-compaction.parquet"
            infos.append(pafs.FileInfo(ghost, pafs.FileType.File, size=100))
        return infos


#: The browser test's store: the demo collected once a day for three days, to 19:00 UTC.
START = dt.datetime(2026, 11, 17, 19, 0, tzinfo=dt.timezone.utc)


@pytest.fixture(scope="module")
def three_days(tmp_path_factory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("seen-steps") / "h"
    with Emulator(demo=True, seed=2026, clock=START, window_minutes=1440) as emu:
        with emu.client() as client:
            for _ in range(3):
                emu.advance(86_400)
                sk.History(root).collect(client, now=emu.now())
    return root


def late_point(root: pathlib.Path, minutes: int) -> None:
    """Another writer's file in the newest day: a point before those already stored."""
    folder = sorted((root / "throughput").glob("day=*"))[-1]
    table = pq.read_table(sorted(folder.glob("*.parquet"))[-1]).slice(0, 1)
    stamp = pa.array([pd.Timestamp(folder.name[4:], tz="UTC") + pd.Timedelta(minutes=minutes)])
    value = pa.array([table["value"][0].as_py() + 1000.0 + minutes])
    table = table.set_column(table.schema.get_field_index("value"), "value", value)
    at = table.schema.get_field_index("collected_at")
    table = table.set_column(at, "collected_at", stamp.cast(table.schema.field(at).type))
    pq.write_table(table, folder / f"part-{stamp[0].value}-late-{minutes}.parquet")


def unroll(root: pathlib.Path) -> None:
    """A closed day's files merged by a tool that keeps no summary (its rollup gone, the
    month's pack too): read from its points until a rollup is written."""
    folder = root / "throughput" / "day=2026-11-18"
    paths = sorted(folder.glob("*.parquet"))
    table = pa.concat_tables([pq.read_table(path) for path in paths])
    stamp = pd.Timestamp("2026-11-19").value
    pq.write_table(table, folder / f"part-{stamp}-{uuid.uuid4().hex}-unrolled.parquet")
    for path in paths:
        path.unlink()
    shutil.rmtree(root / "rollups" / "day=2026-11-18", ignore_errors=True)
    shutil.rmtree(root / "rollups" / PACKS, ignore_errors=True)


STEPS = ("collect", "compact", "refused", "refresh", "draw", "late", "unroll", "roll", "pack")


@pytest.mark.slow
@settings(max_examples=12, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.sampled_from(STEPS), min_size=1, max_size=7))
@example(steps=["unroll", "refresh", "roll"])  # a rollup written since a day's points were read
def test_any_sequence_of_collects_compactions_and_refused_reads_gives_a_fresh_read(
    three_days, steps
):
    """Whatever happened to the store between two reads (collects, compactions, a read
    refused while a compaction replaced files, drawings that read an index's points,
    another writer's late point, a closed day's rollup gone, rollups written again by
    refresh_rollups(), the month packed), a SeenHistory read again gives what the store
    read afresh gives, to the bit: the newest point (read first, as the cockpit does) and
    forecast_limits' rows."""
    with tempfile.TemporaryDirectory() as folder:
        root = pathlib.Path(folder) / "h"
        copy_store(three_days, root)
        handler = Compacting()
        seen = SeenHistory(sk.History(str(root), filesystem=pafs.PyFileSystem(handler)))
        day = forecast_day(seen)
        minutes = 0
        for step in [*steps, "settled"]:
            if step == "collect":
                minutes += 10
                clock = START + dt.timedelta(days=2, minutes=minutes)
                with Emulator(demo=True, seed=2026, clock=clock, window_minutes=1440) as emu:
                    with emu.client() as client:
                        emu.advance(86_400)
                        sk.History(root).collect(client, now=emu.now())
            elif step == "compact":
                sk.History(root).compact()
            elif step == "late":
                late_point(root, 60 + minutes)
            elif step == "unroll":
                unroll(root)
            elif step == "roll":
                sk.History(root).refresh_rollups()
            elif step == "pack":
                pack_writer.pack(Layout(str(root), pafs.LocalFileSystem(), str(root)), "2026-11")
            elif step == "refused":
                handler.compacting = True
                try:
                    with pytest.raises(sk.HistoryError, match="kept changing while it was read"):
                        seen.newest_time()
                        forecast_day(seen)
                finally:
                    handler.compacting = False
            elif step == "draw":
                for index_id in day.rows.index:
                    day.today(index_id)
            else:
                if step == "settled":
                    settle_all()  # no merge under the reads: the points each reads are fixed
                handler.clear()
                afresh = Opened()
                store = sk.History(str(root), filesystem=pafs.PyFileSystem(afresh))
                assert seen.newest_time() == store.newest_time()
                day = forecast_day(seen)
                fresh = sk.forecast_limits(store)
                pd.testing.assert_frame_equal(day.rows, fresh, check_exact=True)
                if step == "settled":  # and no day from its points that a summary answers
                    assert set(handler.points_read()) <= set(afresh.points_read())
        settle_all()  # the merges the steps' collects left, before their folder is removed
