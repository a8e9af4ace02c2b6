"""The open day's rollup: each collect round extends it with the points it wrote, and it
gives exactly what the day's points give, or it is not trusted."""

from __future__ import annotations

import itertools
import os
import pathlib
import shutil

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

import searchkit as sk
from searchkit.frames.counting import median_spacing
from searchkit.history.checks import seal
from searchkit.history.layout import THROUGHPUT_SCHEMA
from searchkit.history.open_day import extend
from searchkit.history.rollups import rollup
from searchkit.history.spacings import WINDOW, Spacings
from searchkit.history.usage_history import History
from tests.history.conftest import data_files as files
from tests.stores import copy_store

DAY = "2026-11-20"
MIDNIGHT = pd.Timestamp(DAY, tz="UTC").value
ZONES = ("UTC", "America/New_York", "Asia/Kolkata", "Pacific/Chatham")
#: The throughput columns with plain texts, as another writer's files hold them.
PLAIN = pa.schema(
    [(f.name, pa.string() if pa.types.is_dictionary(f.type) else f.type) for f in THROUGHPUT_SCHEMA]
)


def points(ids: np.ndarray, times: np.ndarray, values: np.ndarray, stamp: int) -> pa.Table:
    """Stored points of one account, collected at ``stamp``."""
    size = len(times)
    return pa.table(
        {
            "account": ["acct"] * size,
            "index_id": ids,
            "name": [f"name-{i}" for i in ids],
            "time": times,
            "value": values,
            "collected_at": np.full(size, stamp),
        },
        schema=PLAIN,
    )


def jittery_day(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """40 indexes sampled at uneven instants of one day, with missing, negative and
    infinite values among them."""
    rng = np.random.default_rng(seed)
    ids, times = [], []
    for index in range(40):
        count = int(rng.integers(1, 300))
        seconds = np.sort(rng.choice(86_400, size=count, replace=False))
        ids += [f"id-{index:02d}"] * count
        times += list(MIDNIGHT + seconds * 10**9 + rng.integers(0, 10**6, size=count))
    values = rng.uniform(0, 50, len(times))
    values[::37], values[::53], values[::71] = -1.0, np.nan, np.inf
    return np.asarray(ids), np.asarray(times, np.int64), values


def test_a_rollup_extended_round_by_round_is_the_rollup_of_all_the_points():
    ids, times, values = jittery_day(seed=1)
    whole = rollup(points(ids, times, values, 99), DAY, "all")
    cuts = [MIDNIGHT + hours * 3_600 * 10**9 + 123 for hours in (0.5, 3, 11, 20, 24)]
    first = times < cuts[0]
    table = rollup(points(ids[first], times[first], values[first], 1), DAY, "first")
    for low, high in itertools.pairwise(cuts):
        part = (times >= low) & (times < high)  # indexes appear in later rounds too
        extended = extend(table, points(ids[part], times[part], values[part], 2), DAY, "all")
        assert extended is not None
        table = extended

    # Every figure; the spacings kept around the median may differ (trimmed around each
    # round's median, not only the last one), never their median; the gaps of the indexes
    # whose threshold fell below an old step that was no gap then are unknown (null):
    # info() reads such a day's points. The seal covers the gaps, so it differs too: the
    # extended rollup is sealed as it is.
    apart = ["spacing_values", "spacing_counts", "spacings_below", "spacings_above", "gaps"]
    assert table.drop_columns([*apart, "digest"]).equals(whole.drop_columns([*apart, "digest"]))
    assert seal(table).equals(table)
    unknown = table["gaps"].is_null()
    assert table["gaps"].filter(pc.invert(unknown)).equals(whole["gaps"].filter(pc.invert(unknown)))
    assert 0 < pc.sum(unknown).as_py() < 40


def steady_day(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """20 indexes, a point a minute all day (some values missing or invalid)."""
    rng = np.random.default_rng(seed)
    minutes = MIDNIGHT + np.arange(1_440, dtype=np.int64) * 60 * 10**9
    ids = np.repeat([f"id-{index:02d}" for index in range(20)], 1_440)
    values = rng.uniform(0, 50, len(ids))
    values[::37], values[::53] = -1.0, np.nan
    return ids, np.tile(minutes, 20), values


def limits_of(ids: np.ndarray, values: np.ndarray) -> dict[str, list[float]]:
    """Per index: limits its day reaches early, late, and never (operations at 60 s)."""
    clean = np.where(np.isfinite(values) & (values >= 0), values, 0.0)
    totals = pd.Series(clean * 60).groupby(ids).sum()
    return {i: [0.2 * total, 0.95 * total, 10 * total] for i, total in totals.items()}


def test_the_crossings_kept_round_by_round_are_those_of_all_the_points():
    ids, times, values = steady_day(seed=4)
    limits = limits_of(ids, values)
    whole = rollup(points(ids, times, values, 99), DAY, "all", limits=limits)
    cuts = [MIDNIGHT + hours * 3_600 * 10**9 for hours in (0, 2, 7, 13, 23.5, 24)]
    table = None
    for low, high in itertools.pairwise(cuts):
        part = (times >= low) & (times < high)
        new = points(ids[part], times[part], values[part], 2)
        table = (
            rollup(new, DAY, "first", limits=limits)
            if table is None
            else extend(table, new, DAY, "all", limits=limits)
        )
        assert table is not None

    assert table.equals(whole)
    times_of = whole["crossing_times"].to_pylist()
    assert all(len(t) == 3 and t[0] and t[1] and t[2] is None for t in times_of)


def test_a_regular_collector_s_rollup_extends_with_its_gaps_every_round():
    # Every minute, three indexes, holes of 5 and 40 minutes and a step at a round's edge:
    # each round extends the rollup; its gaps are those of the day read whole.
    minutes = np.delete(np.arange(0, 1440), np.r_[100:105, 600:640, 719:722])
    ids = np.repeat(["id-a", "id-b", "id-c"], len(minutes))
    times = MIDNIGHT + np.tile(minutes, 3).astype(np.int64) * 60 * 10**9
    values = np.linspace(1, 9, len(times))
    order = np.argsort(times, kind="stable")  # as collected: by time, all indexes
    ids, times, values = ids[order], times[order], values[order]
    cuts = [MIDNIGHT + hours * 3_600 * 10**9 for hours in (1, 4, 12, 12.5, 24)]
    first = times < cuts[0]
    table = rollup(points(ids[first], times[first], values[first], 1), DAY, "first")
    for low, high in itertools.pairwise(cuts):
        part = (times >= low) & (times < high)
        extended = extend(table, points(ids[part], times[part], values[part], 2), DAY, "all")
        assert extended is not None
        table = extended

    assert table.equals(rollup(points(ids, times, values, 9), DAY, "all"))
    gaps = [(g["stored_until"], g["listed_from"]) for g in table["gaps"].to_pylist()[0]]
    shown = [(f"{start:%H:%M}", f"{end:%H:%M}") for start, end in gaps]
    assert shown == [("01:39", "01:45"), ("09:59", "10:40"), ("11:58", "12:02")]


def test_a_point_at_or_before_one_summarised_cannot_extend_the_rollup():
    ids, times, values = jittery_day(seed=2)
    early = times < MIDNIGHT + 12 * 3_600 * 10**9
    table = rollup(points(ids[early], times[early], values[early], 1), DAY, "first")
    late = np.flatnonzero(early)[-1:]  # the last summarised point, written again

    assert extend(table, points(ids[late], times[late], values[late] + 1, 2), DAY, "x") is None


def test_the_median_of_the_kept_spacings_is_the_median_spacing():
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 30, 5_000)
    nanos = rng.integers(0, 10**12, 5_000)
    nanos[:50] = nanos[50:100]  # repeated instants: spacings of 0

    medians, held = Spacings.of_points(codes, nanos, 31).medians()  # group 30: no instant

    expected = median_spacing(codes, nanos, pd.Index(range(31)))
    np.testing.assert_array_equal(medians, expected.to_numpy().view(np.int64))
    assert held.all()


def test_spacings_kept_around_the_median_extend_it_while_it_stays_among_them():
    rng = np.random.default_rng(5)
    codes = np.repeat(np.arange(3), 400)  # 400 distinct spacings each: more than kept
    nanos = np.concatenate([np.cumsum(rng.integers(1, 10**9, 400)) for _ in range(3)])
    kept = Spacings.of_points(codes[:300], nanos[:300], 3)
    assert np.bincount(kept.groups).tolist() == [WINDOW]  # row 0 trimmed; 1, 2: none yet

    groups = np.repeat(np.arange(3), 99)
    spacing = np.concatenate(
        [np.diff(nanos[299:399]), np.diff(nanos[400:500]), np.diff(nanos[800:900])]
    )
    kept.add(groups, spacing)
    medians, held = kept.medians()

    everything = np.concatenate([nanos[:399], nanos[400:500], nanos[800:900]])
    owners = np.concatenate([codes[:399], codes[400:500], codes[800:900]])
    expected = median_spacing(owners, everything, pd.Index(range(3)))
    np.testing.assert_array_equal(medians, expected.to_numpy().view(np.int64))
    assert held.all()
    lopsided = Spacings.of_points(codes[:300], nanos[:300], 1)
    lopsided.add(np.zeros(200, np.int64), np.full(200, 10**12))  # all far above
    assert not lopsided.medians()[1][0]  # the median left what was kept: not told


def collect_every_ten_minutes(hist: History, emu: sk.Emulator, client: sk.Client) -> None:
    """Collect at noon (two hours of points), then every 10 minutes until 14:00."""
    for _ in range(13):
        hist.collect(client, now=emu.now())
        emu.advance(600)


def rolled_up_from_points(tmp_path: pathlib.Path, root: pathlib.Path) -> History:
    """A copy of the store whose rollups are rolled up again from the points."""
    copy = tmp_path / "from-points"
    copy_store(root, copy, ignore=shutil.ignore_patterns("rollups"))
    hist = History(copy)
    assert hist.refresh_rollups([DAY]) == 1
    return hist


def points_only(tmp_path: pathlib.Path, root: pathlib.Path) -> History:
    """A copy of the store without rollups: every figure from the points."""
    copy = tmp_path / "points-only"
    shutil.rmtree(copy, ignore_errors=True)
    copy_store(root, copy, ignore=shutil.ignore_patterns("rollups"))
    return History(copy)


def test_each_collect_keeps_the_open_days_rollup_current(tmp_path, emulator, client):
    hist = History(tmp_path / "h")

    collect_every_ten_minutes(hist, emulator, client)

    assert len(files(tmp_path / "h")) == 13  # the day's files as collected, not merged
    assert len(files(tmp_path / "h", "rollups")) == 1
    schema = pq.read_schema(files(tmp_path / "h", "rollups")[0])
    # refresh_rollups knows no limits: the crossings the collector keeps are apart, and so
    # the seal, which covers them
    columns = [c for c in schema.names if not c.startswith("crossing") and c != "digest"]
    kept = hist.rollups(columns=columns)
    assert kept["source"].str.startswith("13 files sha256:").all() and len(kept) == 6
    expected = rolled_up_from_points(tmp_path, tmp_path / "h").rollups(columns=columns)
    pd.testing.assert_frame_equal(kept, expected, check_exact=True)


def test_usage_of_the_open_day_from_its_rollup_equals_the_points(tmp_path, emulator, client):
    hist = History(tmp_path / "h")
    collect_every_ten_minutes(hist, emulator, client)
    assert not hist.rollups().empty
    raw = points_only(tmp_path, tmp_path / "h")

    for tz in ZONES:
        for freq in ("D", "h"):
            pd.testing.assert_frame_equal(
                sk.usage_frame(hist, freq=freq, tz=tz),
                sk.usage_frame(raw, freq=freq, tz=tz),
                check_exact=True,
            )


def late_point(hist: History, root: pathlib.Path) -> None:
    """Another writer's file: a point of a summarised hour written again, later."""
    stored = hist.throughput(start="2026-11-20 12:30", end="2026-11-20 12:31")
    row = stored.iloc[0]
    table = points(
        np.asarray([row["index_id"]]),
        np.asarray([row["time"].value]),
        np.asarray([row["value"] + 1_000.0]),
        pd.Timestamp("2026-11-20 15:00", tz="UTC").value,
    ).set_column(0, "account", pa.array([str(row["account"])]))
    pq.write_table(table, root / f"throughput/day={DAY}/part-1-late.parquet")


def test_a_late_point_in_a_summarised_hour_is_counted_never_the_stale_rollup(
    tmp_path, emulator, client
):
    hist = History(tmp_path / "h")
    collect_every_ten_minutes(hist, emulator, client)
    late_point(hist, tmp_path / "h")

    assert hist.rollups().empty  # the day's files changed: its rollup is not trusted
    for tz in ("UTC", "Asia/Kolkata"):
        pd.testing.assert_frame_equal(
            sk.usage_frame(hist, freq="h", tz=tz),
            sk.usage_frame(points_only(tmp_path, tmp_path / "h"), freq="h", tz=tz),
            check_exact=True,
        )

    hist.collect(client, now=emulator.now())  # rolls the day up from its points again

    assert len(hist.rollups()) == 6
    pd.testing.assert_frame_equal(
        sk.usage_frame(hist, freq="h", tz="Asia/Kolkata"),
        sk.usage_frame(points_only(tmp_path, tmp_path / "h"), freq="h", tz="Asia/Kolkata"),
        check_exact=True,
    )


def rewritten_in_place(path: pathlib.Path) -> None:
    """Another process rewrites a file under its own name: its first point's value changed
    (the file's size may stay; its modification time moves on by a few seconds)."""
    table = pq.read_table(path)
    values = table["value"].to_numpy(zero_copy_only=False).copy()
    values[0] += 1_000.0
    table = table.set_column(table.schema.get_field_index("value"), "value", pa.array(values))
    stamp = path.stat().st_mtime + 5
    pq.write_table(table, path)
    os.utime(path, (stamp, stamp))


def test_a_file_rewritten_behind_the_collector_s_back_is_counted_never_the_rows_it_kept(
    tmp_path, emulator, client
):
    hist = History(tmp_path / "h")
    for _ in range(3):  # the rows of the last round are kept, to be extended by the next
        hist.collect(client, now=emulator.now())
        emulator.advance(600)
    rewritten_in_place(files(tmp_path / "h")[0])

    hist.collect(client, now=emulator.now())  # new points, and a file it did not write

    schema = pq.read_schema(files(tmp_path / "h", "rollups")[0])
    columns = [c for c in schema.names if not c.startswith("crossing") and c != "digest"]
    kept = hist.rollups(columns=columns)
    assert kept["source"].str.startswith("4 files sha256:").all()
    expected = rolled_up_from_points(tmp_path, tmp_path / "h").rollups(columns=columns)
    pd.testing.assert_frame_equal(kept, expected, check_exact=True)
    pd.testing.assert_frame_equal(
        sk.usage_frame(hist, freq="h"),
        sk.usage_frame(points_only(tmp_path, tmp_path / "h"), freq="h"),
        check_exact=True,
    )
