"""History.info() from the rollups: the same report as a scan of every point, on a messy store.

The store: five UTC days of five indexes in two accounts, sampled every minute, every 5 or
every 15 minutes; gaps inside days and across midnights (an index silent for a day, one
that starts late); an index with a single point on a day; an index renamed mid-day; a
closed day that got late points after its rollup was written (stale: scanned); the open
day (no rollup: scanned); a day whose rollup was written by an older searchkit (no gaps:
scanned); and stray files (a text file in a day folder, a folder that is no day, a file
at the root). ``info()`` on it equals ``info()`` on a copy without rollups (every day
scanned), field by field, and reads the points of the scanned days only.
"""

from __future__ import annotations

import pathlib
import shutil

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import searchkit as sk
from searchkit.history import scan
from tests.analytics.test_forecast_bins import series, write
from tests.stores import copy_store

DAYS = ["2026-03-07", "2026-03-08", "2026-03-09", "2026-03-10", "2026-03-11"]
LATE, OLDER, OPEN = "2026-03-09", "2026-03-10", "2026-03-11"


def build(root: pathlib.Path) -> None:
    rng = np.random.default_rng(30)
    for number, day in enumerate(DAYS):
        start = pd.Timestamp(day, tz="UTC")
        done = start + pd.Timedelta(days=1, minutes=5)
        minutes = np.arange(0, 1440)
        rows = series(rng, "acct", "id-a", "alpha", start, np.delete(minutes, np.s_[600:640]), done)
        every5 = np.arange(0, 1440, 5)
        if number != 1:  # silent on the second day: a gap across two midnights
            rows += series(rng, "acct", "id-b", "beta", start, every5, done)
        quarters = np.arange(7, 1440, 15)
        if number == 2:  # starts late (a gap across midnight) and pauses twice
            quarters = np.delete(quarters[20:], [10, 11, 30])
        rows += series(rng, "other", "id-c", "gamma", start, quarters, done)
        if number == 3:
            rows += series(rng, "acct", "id-d", "delta", start, np.array([733]), done)
        every2 = np.arange(0, 1440, 2)
        if number == 2:
            every2 = np.delete(every2, np.s_[50:65])  # 01:40 to 02:08 missing
        renamed = series(rng, "acct", "id-e", "epsilon", start, every2, done)
        if number == 2:  # renamed at noon: the day's last name labels it (its gap too)
            renamed = [(*p[:2], "eps-2" if p[3] >= start.value + 43_200 * 10**9 else p[2],
                        *p[3:]) for p in renamed]  # fmt: skip
        write(root, day, rows + renamed, f"{done.value}-main")
    (root / "throughput" / f"day={DAYS[0]}" / "notes.txt").write_text("not a parquet file")
    (root / "throughput" / "day=notadate").mkdir()
    (root / "README.txt").write_text("kept here by a person")


def late_points(root: pathlib.Path) -> None:
    """Points of the closed day LATE written after its rollup: the rollup is stale."""
    rng = np.random.default_rng(31)
    start = pd.Timestamp(LATE, tz="UTC")
    done = start + pd.Timedelta(days=2)
    rows = series(rng, "acct", "id-a", "alpha", start, np.arange(600, 640), done)
    rows += series(rng, "acct", "id-f", "phi", start, np.array([100, 400]), done)
    write(root, LATE, rows, f"{done.value}-late")


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> tuple[pathlib.Path, pathlib.Path]:
    base = tmp_path_factory.mktemp("info")
    rolled = base / "rolled"
    build(rolled)
    with pytest.warns(sk.HistoryWarning, match="not its layout"):
        assert sk.History(str(rolled)).refresh_rollups(DAYS[:-1]) == len(DAYS) - 1
    # The day rollups answer here (tests/history/test_history_packs.py: a month's pack).
    shutil.rmtree(rolled / "rollups" / "_months")
    late_points(rolled)
    for path in (rolled / "rollups" / f"day={OLDER}").glob("*.parquet"):
        pq.write_table(pq.read_table(path).drop_columns(["gaps"]), path)  # an older writer's
    plain = base / "points-only"
    copy_store(rolled, plain, ignore=shutil.ignore_patterns("rollups"))
    return rolled, plain


def test_info_from_rollups_is_the_scan_of_every_point(stores, monkeypatch):
    rolled, plain = stores
    read: list[str] = []
    scanned = scan.reader.read

    def spy(layout, kind, *, days=(None, None), **kwargs):
        if kind == "throughput":
            read.append(days[0])
        return scanned(layout, kind, days=days, **kwargs)

    want = sk.History(str(plain)).info()
    monkeypatch.setattr(scan.reader, "read", spy)
    got = sk.History(str(rolled)).info()

    assert read == [LATE, OLDER, OPEN]  # the others from their rollups
    assert (got.indexes, got.points, got.first, got.last) == (
        want.indexes, want.points, want.first, want.last)  # fmt: skip
    assert got.gaps == want.gaps
    assert str(got).split("\n")[1:4] == str(want).split("\n")[1:4]
    # The store is as messy as it says: gaps inside days and across midnights, in order
    # (each day's across midnight first, then inside it, index after index).
    alpha, beta, gamma, delta, epsilon, phi = (
        5 * 1400 + 40,
        4 * 288,
        4 * 96 + 73,
        1,
        5 * 720 - 15,
        2,
    )
    assert want.indexes == 6 and want.points == alpha + beta + gamma + delta + epsilon + phi
    names = [(gap.name, f"{gap.stored_until:%m-%d %H:%M}", f"{gap.listed_from:%m-%d %H:%M}")
             for gap in want.gaps]  # fmt: skip
    assert names == [
        ("alpha", "03-07 09:59", "03-07 10:40"),
        ("alpha", "03-08 09:59", "03-08 10:40"),
        ("beta", "03-07 23:55", "03-09 00:00"),
        ("gamma", "03-08 23:52", "03-09 05:07"),
        ("eps-2", "03-09 01:38", "03-09 02:10"),
        ("gamma", "03-09 07:22", "03-09 08:07"),
        ("gamma", "03-09 12:22", "03-09 12:52"),
        ("alpha", "03-10 09:59", "03-10 10:40"),
        ("alpha", "03-11 09:59", "03-11 10:40"),
    ]


def test_a_gap_changed_in_a_rollup_breaks_its_seal_and_the_day_is_read(stores, tmp_path):
    # A gap removed by hand from a closed day's rollup: the seal says so, info() names the
    # day in a warning and reads its points, and reports the same as the full scan.
    rolled, plain = stores
    root = tmp_path / "tampered"
    copy_store(rolled, root)
    (path,) = (root / "rollups" / f"day={DAYS[0]}").glob("*.parquet")
    table = pq.read_table(path)
    gaps = table["gaps"].to_pylist()
    assert sum(map(len, gaps)) == 1  # alpha's, 09:59 to 10:40
    empty = pa.array([[] for _ in gaps], table.schema.field("gaps").type)
    pq.write_table(table.set_column(table.schema.get_field_index("gaps"), "gaps", empty), path)

    with pytest.warns(sk.HistoryWarning, match=f"{DAYS[0]}.*rows removed, added or changed"):
        got = sk.History(str(root)).info()

    assert got.gaps == sk.History(str(plain)).info().gaps
