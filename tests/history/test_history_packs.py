"""Month packs (searchkit/history/packs.py): a closed month's day rollups in one file. They
answer only as their day rollups would, figures equal to the points' to the bit; a tampered
pack, or a day whose points changed since, is read from its day rollup or its points."""

from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import searchkit as sk
from searchkit.history import reader
from tests.analytics.test_forecast_bins import series, write
from tests.stores import copy_store

# Two closed months (a pack each), whatever day the tests run on.
DAYS = ["2025-09-28", "2025-09-29", "2025-09-30", "2025-10-01", "2025-10-02"]
ZONES = ["UTC", "Asia/Kolkata"]


def points(root: pathlib.Path, day: str, seed: int, name: str = "main") -> None:
    rng = np.random.default_rng(seed)
    start = pd.Timestamp(day, tz="UTC")
    done = start + pd.Timedelta(days=1, minutes=5)
    rows = series(rng, "acct", "id-a", "alpha", start, np.arange(0, 1440, 5), done)
    rows += series(rng, "acct", "id-b", "beta", start, np.arange(7, 1440, 15), done)
    write(root, day, rows, f"{done.value}-{name}")


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> tuple[pathlib.Path, pathlib.Path]:
    """The same points with rollups and packs, and without either."""
    base = tmp_path_factory.mktemp("packs")
    plain = base / "plain"
    for number, day in enumerate(DAYS):
        points(plain, day, number)
    packed = base / "packed"
    copy_store(plain, packed)
    assert sk.History(str(packed)).refresh_rollups(DAYS) == len(DAYS)
    return packed, plain


def months(root: pathlib.Path) -> list[str]:
    return sorted(p.parent.name for p in (root / "rollups" / "_months").glob("*/*.parquet"))


def read_kinds(monkeypatch) -> list[tuple[str, str]]:
    """Each file a read opens: (kind, path), recorded as it is planned."""
    opened: list[tuple[str, str]] = []
    plan = reader.plan_file

    def spy(layout, kind, path, *args, **kwargs):
        opened.append((kind, path))
        return plan(layout, kind, path, *args, **kwargs)

    monkeypatch.setattr(reader, "plan_file", spy)
    return opened


@pytest.mark.parametrize("zone", ZONES)
def test_a_closed_month_s_days_are_read_from_its_pack_with_the_points_figures(
    stores, monkeypatch, zone
):
    packed, plain = stores
    want = sk.usage_frame(sk.History(str(plain)), freq="h", tz=zone)
    opened = read_kinds(monkeypatch)

    got = sk.usage_frame(sk.History(str(packed)), freq="h", tz=zone)

    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert months(packed) == ["month=2025-09", "month=2025-10"]
    rollup_files = sorted(
        path.rpartition("/rollups/")[2][:13] for kind, path in opened if kind == "rollups"
    )
    assert rollup_files == ["_months/month", "_months/month"]  # no day rollup file read
    assert not any(kind == "throughput" for kind, _ in opened)  # no point read


def test_info_from_packs_is_the_scan_of_every_point(stores):
    packed, plain = stores
    got, want = sk.History(str(packed)).info(), sk.History(str(plain)).info()
    assert (got.indexes, got.points, got.first, got.last, got.gaps) == (
        want.indexes, want.points, want.first, want.last, want.gaps)  # fmt: skip
    # The packs are counted with the rollups, not as files that are not the layout's.
    assert "_months" not in str(got)
    assert got.by_kind["rollups"].files == len(DAYS) + 2 and got.other_files == ()


def test_a_value_changed_in_a_pack_makes_its_day_read_from_its_points(stores, tmp_path):
    packed, plain = stores
    root = tmp_path / "tampered"
    copy_store(packed, root)
    (path,) = (root / "rollups" / "_months" / "month=2025-09").glob("*.parquet")
    table = pq.read_table(path)
    sums = table["value_sum"].to_numpy().copy()
    sums[0] += 1.0  # the first row: alpha on 2025-09-28
    pq.write_table(
        table.set_column(table.schema.get_field_index("value_sum"), "value_sum", pa.array(sums)),
        path,
    )

    with pytest.warns(sk.HistoryWarning, match="2025-09-28.*rows removed, added or changed"):
        got = sk.usage_frame(sk.History(str(root)), freq="D")

    pd.testing.assert_frame_equal(
        got, sk.usage_frame(sk.History(str(plain)), freq="D"), check_exact=True
    )


def test_late_points_in_a_packed_month_count_and_its_pack_is_written_again(stores, tmp_path):
    packed, plain = stores
    root, points_only = tmp_path / "late", tmp_path / "late-plain"
    copy_store(packed, root)
    copy_store(plain, points_only)
    for store in (root, points_only):
        points(store, DAYS[1], 99, name="late")  # more points on 2025-09-29, after its pack
    hist = sk.History(str(root))
    want = sk.usage_frame(sk.History(str(points_only)), freq="D")

    # The pack's day no longer names the day's files: the day is read from its points.
    pd.testing.assert_frame_equal(sk.usage_frame(hist, freq="D"), want, check_exact=True)
    (old,) = (root / "rollups" / "_months" / "month=2025-09").glob("*.parquet")
    assert hist.refresh_rollups([DAYS[1]]) == 1  # its rollup anew; the month packed again
    (new,) = (root / "rollups" / "_months" / "month=2025-09").glob("*.parquet")

    assert new != old
    pd.testing.assert_frame_equal(sk.usage_frame(hist, freq="D"), want, check_exact=True)


def test_on_s3_a_closed_month_is_one_head_and_get_whatever_its_days(stores, s3_server, monkeypatch):
    pytest.importorskip("moto")
    from tests.history.s3server import new_bucket, options

    _, plain = stores
    s3, bucket = new_bucket(s3_server.endpoint, "packs-requests")
    for path in sorted(p for p in plain.rglob("*") if p.is_file()):
        s3.upload_file(str(path), bucket, f"usage/{path.relative_to(plain).as_posix()}")
    location, storage = f"s3://{bucket}/usage", options(s3_server.endpoint)
    assert sk.History(location, storage_options=storage).refresh_rollups(DAYS) == len(DAYS)
    assert sorted(k["Key"].split("/")[3] for k in s3.list_objects_v2(Bucket=bucket)["Contents"]
                  if "/_months/" in k["Key"]) == ["month=2025-09", "month=2025-10"]  # fmt: skip

    s3_server.reset()
    got = sk.usage_frame(sk.History(location, storage_options=storage), freq="D")
    usage = s3_server.counted()
    s3_server.reset()
    sk.History(location, storage_options=storage).info()
    info = s3_server.counted()

    pd.testing.assert_frame_equal(
        got, sk.usage_frame(sk.History(str(plain)), freq="D"), check_exact=True
    )
    # 5 days in two packs: 2 HEAD + GET pairs, where the day rollups took 5.
    assert usage == {"LIST": 3, "HEAD": 2, "GET": 2}
    assert info == {"LIST": 1, "HEAD": 2, "GET": 2}
    # Read two days at a time (a year is read 32 days at a time): each pack fetched once.
    from searchkit.analytics import periods

    monkeypatch.setattr(periods, "BATCH_DAYS", 2)
    s3_server.reset()
    zoned = sk.usage_frame(sk.History(location, storage_options=storage), tz="Asia/Kolkata")
    assert s3_server.counted() == {"LIST": 3, "HEAD": 2, "GET": 2}
    want = sk.usage_frame(sk.History(str(plain)), tz="Asia/Kolkata")
    pd.testing.assert_frame_equal(zoned, want, check_exact=True)
