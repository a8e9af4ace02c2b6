"""A History's forecast bins are read as arrays, and equal, to the last bit, the bins of its
throughput frames made the straightforward way (the way they were made before)."""

from __future__ import annotations

import itertools
import pathlib
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import searchkit as sk
from searchkit.analytics import bins as pb
from searchkit.analytics import forecast
from searchkit.analytics import profile as pf
from searchkit.frames import counting as ct
from searchkit.frames.counting import index_codes, index_intervals, interval_seconds, unit_scales
from searchkit.history.layout import LIMITS_SCHEMA, THROUGHPUT_SCHEMA, WRITE_OPTIONS

DAY = pd.Timedelta(days=1)
FIRST = pd.Timestamp("2026-11-16", tz="UTC")
NOW = pd.Timestamp("2026-11-19 17:30", tz="UTC")  # the store holds points after it too
MINUTE_NS = 60 * 10**9


# --- the oracle: per-day throughput frames, binned as profile.py binned them before ------


def oracle_bins(
    hist: sk.History,
    value_unit: str,
    first_day: pd.Timestamp,
    days: int,
    cut: int | None,
    beyond: bool,
) -> pb.Bins:
    """Bins of ``hist.throughput()`` one day at a time, accumulated point by point."""
    frames = [
        hist.throughput(start=first_day + d * DAY, end=first_day + (d + 1) * DAY)
        for d in range(days)
    ]
    if beyond:
        frames.append(hist.throughput(start=first_day + days * DAY))
    return oracle_frame_bins(frames, value_unit, first_day, days, cut)


def oracle_frame_bins(
    frames: list[pd.DataFrame],
    value_unit: str,
    first_day: pd.Timestamp,
    days: int,
    cut: int | None,
) -> pb.Bins:
    """The bins of throughput frames as profile.py made them before it read arrays."""
    ids: list[str] = []
    row: dict[str, int] = {}
    names: dict[str, object] = {}
    steps: dict[str, float] = {}
    parts = []
    for tp in frames:
        if tp.empty:
            continue
        codes, part_ids = index_codes(tp["index_id"])
        intervals = index_intervals(tp)
        # An hour's values summed in time order (invalid and missing ones as 0), then
        # times what a unit stands for at the part's interval; invalid points not counted.
        values = tp["value"].to_numpy(np.float64, na_value=np.nan)
        invalid = np.isinf(values) | (values < 0)
        clean = np.where(invalid, 0.0, np.nan_to_num(values))
        step = intervals.reindex(pd.Index(part_ids, name="index_id"))
        scale = unit_scales(value_unit, interval_seconds(step))
        seconds = step.fillna(pd.Timedelta(minutes=1)).dt.total_seconds().to_numpy(np.float64)
        for index_id, s in zip(part_ids, seconds, strict=True):
            if index_id not in row:
                row[index_id] = len(ids)
                ids.append(index_id)
            steps[index_id] = float(s)
        last = tp.drop_duplicates("index_id", keep="last")
        names.update(zip(last["index_id"].astype(str), last["name"], strict=True))
        rows = np.asarray([row[i] for i in part_ids], np.int64)[np.asarray(codes, np.int64)]
        times = pd.DatetimeIndex(tp["time"].array).tz_convert("UTC").as_unit("ns").asi8
        scale_of_row = np.zeros(len(ids))
        scale_of_row[np.asarray([row[i] for i in part_ids], np.int64)] = scale
        parts.append((rows, np.asarray(times, np.int64), clean, invalid, scale_of_row))
    count = len(ids)
    shape = (count, days, 24)
    ops_sum, points = np.zeros(shape), np.zeros(shape)
    newest = np.full(count, pb.NO_TIME, np.int64)
    future = np.zeros(count, np.int64)
    kept = []
    for rows, times, values, invalid, scale in parts:
        scale = np.pad(scale, (0, count - len(scale)))
        if cut is not None:
            late = times >= cut
            future += np.bincount(rows[late], minlength=count)
            rows, times, values, invalid = rows[~late], times[~late], values[~late], invalid[~late]
        np.maximum.at(newest, rows, times)
        offset = times - first_day.value
        day = offset // ct.DAY_NS
        keep = (day >= 0) & (day < days)
        flat = (rows[keep] * days + day[keep]) * 24 + (offset[keep] % ct.DAY_NS) // ct.HOUR_NS
        summed = np.bincount(flat, weights=values[keep], minlength=ops_sum.size).reshape(shape)
        ops_sum += summed * scale[:, None, None]
        valid = ~invalid[keep]
        points += np.bincount(flat[valid], minlength=ops_sum.size).reshape(shape)
        kept.append((rows, times, values * scale[rows], values, scale[rows]))
    seconds = np.asarray([steps[i] for i in ids], np.float64)
    cov = np.minimum(points * seconds[:, None, None] / 3600.0, 1.0)
    begin = first_day.value + (days - 1) * ct.DAY_NS
    end = begin + ct.DAY_NS if cut is None else min(begin + ct.DAY_NS, cut)
    kept = [
        tuple(c[k] for c in part) for part in kept for k in [(part[1] >= begin) & (part[1] < end)]
    ]
    # The last day's points: their operations, their values as summed, and the
    # operations a unit of value stands for that day (NaN: no point)
    last_scales = np.full(count, np.nan)
    if kept:
        r, t, v, clean, s = (np.concatenate(c) for c in zip(*kept, strict=True))
        order = np.lexsort((t, r))
        last_points = (r[order], t[order], v[order])
        last_values = clean[order]
        last_scales[r] = s
    else:
        last_points = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))
        last_values = np.zeros(0)
    return pb.Bins(
        ids,
        names,
        first_day,
        ops_sum,
        cov,
        seconds,
        newest,
        future,
        last_points,
        last_scales,
        last_values=last_values,
    )


def assert_same_bins(got: pb.Bins, want: pb.Bins) -> None:
    assert got.ids == want.ids
    assert got.names == want.names
    assert got.first_day == want.first_day
    for field in ("ops", "cov", "step", "newest", "future"):
        a, b = getattr(got, field), getattr(want, field)
        assert a.shape == b.shape and a.dtype == b.dtype, field
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), field
    for a, b in zip(got.last_points, want.last_points, strict=True):
        assert np.array_equal(a, b)
    assert np.array_equal(got.last_values, want.last_values)
    assert np.array_equal(got.last_scales, want.last_scales, equal_nan=True)


# --- a store as collectors leave it --------------------------------------------------------


def write(root: pathlib.Path, day: str, rows: list[tuple], name: str) -> None:
    """Write throughput rows (account, index_id, name, time ns, value, collected_at ns)."""
    columns = list(zip(*rows, strict=True))
    arrays = [
        pa.array(columns[0], pa.string()),
        pa.array(columns[1], pa.string()),
        pa.array(columns[2], pa.string()),
        pa.array(np.asarray(columns[3], np.int64), pa.int64()).cast(pa.timestamp("ns", "UTC")),
        pa.array(columns[4], pa.float64()),
        pa.array(np.asarray(columns[5], np.int64), pa.int64()).cast(pa.timestamp("ns", "UTC")),
    ]
    folder = root / "throughput" / f"day={day}"
    folder.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_arrays(arrays, schema=THROUGHPUT_SCHEMA)
    pq.write_table(table, folder / f"part-{name}.parquet", **WRITE_OPTIONS)


def series(
    rng: np.random.Generator,
    account: str,
    index_id: str,
    name: str,
    start: pd.Timestamp,
    minutes: np.ndarray,
    collected: pd.Timestamp,
) -> list[tuple]:
    """Points of one index at ``start`` + ``minutes``, random values with a daily shape."""
    times = start.value + minutes.astype(np.int64) * MINUTE_NS
    hour = (minutes % 1440) / 60
    values = np.round(
        (1.5 + np.sin(hour / 24 * 2 * np.pi)) * rng.lognormal(2, 0.4, len(minutes)), 3
    )
    return [
        (account, index_id, name, int(t), float(v), collected.value)
        for t, v in zip(times, values, strict=True)
    ]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> SimpleNamespace:
    """Four days of four indexes in two accounts as collectors leave them: several files
    a day, late points, repeated minutes (a later collect, and a tie broken by the larger
    value), an index stored under a key that is no account, a file not in key order, a
    gap, bad values, a renamed index, an index that starts late, points after NOW."""
    root = tmp_path_factory.mktemp("messy") / "h"
    rng = np.random.default_rng(20)
    kept: dict[tuple[str, int], float] = {}
    for d in range(4):
        start = FIRST + d * DAY
        day = f"{start:%Y-%m-%d}"
        done = start + DAY + pd.Timedelta(minutes=5)
        minutes = np.arange(1440) if d < 3 else np.arange(1440 - 60)  # the last: 23:00 on
        a1 = series(rng, "acct-1", "id-a1", "alpha", start, minutes, done)
        # Every 5 minutes, with a gap of three hours on the second day.
        five = minutes[minutes % 5 == 0]
        if d == 1:
            five = five[(five < 600) | (five >= 780)]
        a2 = series(rng, "acct-1", "id-a2", "beta", start, five, done)
        b1 = series(rng, "acct-2", "id-b1", "gamma", start, minutes, done)
        write(root, day, a1 + a2 + b1, f"{done.value}-main")
        if d >= 1:  # starts on the second day; half its points also under a key that is
            # no account, collected earlier with other values (they lose)
            c1 = series(rng, "acct-2", "id-c1", "delta", start, minutes[::2], done)
            other = [("nan", *p[1:4], p[4] + 100.0, p[5] - 1) for p in c1[: len(c1) // 2]]
            write(root, day, c1, f"{done.value}-c1")
            write(root, day, other, f"{done.value - 1}-older")
            kept.update(((p[1], p[3]), p[4]) for p in c1)
        if d == 2:
            # A later collect: the same minutes of b1 again with new values (the latest
            # wins), a tie at the same collected_at (the larger wins), and late points.
            later = done + pd.Timedelta(hours=1)
            again = [(*p[:4], p[4] + 1.25, later.value) for p in b1[100:160]]
            tie = [(*p[:4], p[4] + 0.5, p[5]) for p in b1[300:310]]
            lost = [(*p[:4], p[4] - 0.5, p[5]) for p in b1[400:410]]
            rows = again + tie + lost
            rng.shuffle(rows)  # not in key order: read in order of the rule, not the file
            write(root, day, rows, f"{later.value}-late")
            kept.update(((p[1], p[3]), p[4]) for p in b1)
            kept.update(((p[1], p[3]), p[4]) for p in again + tie)
        if d == 3:
            bad = [
                (
                    "acct-1",
                    "id-a1",
                    "alpha",
                    (start + pd.Timedelta(hours=23, minutes=m)).value,
                    v,
                    (start + DAY).value,
                )
                for m, v in ((1, float("nan")), (2, -5.0), (3, float("inf")), (4, 7.5))
            ]
            after = pd.Timestamp("2026-11-21 03:00", tz="UTC").value
            future = [("acct-2", "id-b1", "gamma", after, 3.0, (start + DAY).value)]
            write(root, day, bad, f"{(start + DAY).value}-bad")
            write(root, "2026-11-21", future, "9-future")
    limits = [
        {
            "account": account,
            "id": index_id,
            "name": name,
            "type": "free",
            "region": "eu-west-1",
            "created": FIRST.value - 10 * ct.DAY_NS,
            "max_daily_queries": 30_000.0,
            "max_daily_updates": 1_000.0,
            "collected_at": NOW.value,
        }
        for index_id, name, account in (
            ("id-a1", "alpha", "acct-1"),
            ("id-a2", "beta-renamed", "acct-1"),
            ("id-b1", "gamma", "acct-2"),
            ("id-c1", "delta", "acct-2"),
        )
    ]
    folder = root / "limits" / f"day={NOW:%Y-%m-%d}"
    folder.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(limits, schema=LIMITS_SCHEMA), folder / "part-1.parquet")
    return SimpleNamespace(hist=sk.History(str(root)), kept=kept)


@pytest.fixture
def messy(store) -> sk.History:
    return store.hist


# --- the tests ------------------------------------------------------------------------------


def test_the_store_holds_one_point_per_minute_the_one_the_rule_keeps(store):
    frame = store.hist.throughput()
    assert not frame.duplicated(["index_id", "time"]).any()  # "nan" relabelled: one key
    assert frame["account"].astype(str).unique().tolist() == ["acct-1", "acct-2"]
    names = frame.drop_duplicates("index_id").set_index("index_id")["name"].astype(str)
    assert names.to_dict() == {
        "id-a1": "alpha",
        "id-a2": "beta-renamed",
        "id-b1": "gamma",
        "id-c1": "delta",
    }
    stored = dict(
        zip(
            zip(frame["index_id"].astype(str), frame["time"].array.asi8, strict=True),
            frame["value"],
            strict=True,
        )
    )
    assert {key: stored[key] for key in store.kept} == store.kept
    assert frame["time"].max() == pd.Timestamp("2026-11-21 03:00", tz="UTC")


@pytest.mark.parametrize(
    ("first_day", "days", "cut", "beyond"),
    [
        (FIRST, 4, None, False),  # every stored day, every point
        (FIRST - 3 * DAY, 7, NOW.value, False),  # days before the first stored one
        (FIRST - 38 * DAY, 42, NOW.value, True),  # as forecast_limits reads, and after
        (FIRST + DAY, 2, (FIRST + DAY + pd.Timedelta(hours=9)).value, True),
    ],
)
@pytest.mark.parametrize("value_unit", ["per_second", "per_minute", "per_point"])
def test_history_bins_are_the_frames_bins_to_the_last_bit(
    messy, first_day, days, cut, beyond, value_unit
):
    got = pb.bins_from_history(messy, value_unit, first_day, days, cut, beyond)
    assert_same_bins(got, oracle_bins(messy, value_unit, first_day, days, cut, beyond))


def test_default_history_bins_span_the_stored_days(messy):
    got = pb.bins_from_history(messy, "per_second")
    assert got.first_day == FIRST and got.days == 6  # to the point on 2026-11-21
    assert_same_bins(got, oracle_bins(messy, "per_second", FIRST, 6, None, False))


@pytest.mark.parametrize("cut", [None, NOW.value])
def test_frame_bins_are_the_same_as_before(messy, cut):
    tp = messy.throughput()
    got = pb.bins_from_frame(tp, "per_second", FIRST - DAY, 5, cut)
    assert_same_bins(got, oracle_frame_bins([tp], "per_second", FIRST - DAY, 5, cut))


@pytest.mark.parametrize("now", ["2026-11-19 17:30", "2026-11-19 03:10", "2026-11-18 23:59"])
def test_forecast_limits_on_a_history_is_the_same_frame_as_before(messy, monkeypatch, now):
    new = sk.forecast_limits(messy, now=now)
    monkeypatch.setattr(forecast, "bins_from_history", oracle_bins_from_history)
    old = sk.forecast_limits(messy, now=now)
    assert new["projected"].notna().sum() == 4
    pd.testing.assert_frame_equal(new, old, check_exact=True)


def oracle_bins_from_history(
    source, value_unit, first_day=None, days=None, cut=None, beyond=False, *, reader=None, **_
) -> pb.Bins:
    return oracle_bins(source, value_unit, first_day, days, cut, beyond)


@pytest.mark.parametrize(
    ("start", "end"),
    [(None, None), ("2026-11-17 06:30", "2026-11-18 18:00"), ("2026-11-19 23:02", None)],
)
def test_points_are_the_throughput_frame_as_arrays(messy, start, end):
    frame = messy.throughput(start=start, end=end)
    points = messy.points(start=start, end=end)
    assert len(frame) > 0
    assert frame["index_id"].astype(str).tolist() == [points.ids[c] for c in points.codes]
    assert frame["account"].astype(str).tolist() == [
        points.accounts[c] for c in points.account_codes
    ]
    names = dict(zip(frame["index_id"].astype(str), frame["name"].astype(str), strict=True))
    assert dict(zip(points.ids, points.names, strict=True)) == names
    assert np.array_equal(frame["time"].array.asi8, points.times)
    assert np.array_equal(frame["value"].to_numpy(), points.values, equal_nan=True)


def test_nanmedian_is_numpy_s_masked_median_to_the_last_bit():
    rng = np.random.default_rng(3)
    for shape in [
        (40, 30, 7),
        (9, 10, 24, 4),
        (50, 8),
        (6, 1),
        (3, 0),
        *((300, n) for n in (2, 3, 5, 6)),
    ]:
        values = rng.lognormal(size=shape) * 10.0 ** rng.integers(-3, 300, shape)
        values[rng.random(shape) < 0.4] = np.nan
        values[rng.random(shape) < 0.03] = np.inf
        values[rng.random(shape) < 0.03] = -np.inf
        values[rng.random(shape) < 0.05] = np.finfo(np.float64).max  # (max + max) / 2 is inf
        masked = np.ma.masked_array(values, np.isnan(values))
        with np.errstate(all="ignore"):
            want = np.asarray(np.ma.median(masked, axis=-1).filled(np.nan))
        assert np.array_equal(pf.nanmedian(values), want, equal_nan=True)
    # The forecast's own shape: a window of 7 past days, a strided view of the days.
    days = rng.lognormal(size=(30, 12, 24))
    days[rng.random(days.shape) < 0.3] = np.nan
    view = pf.windows(days, pf.WINDOW)
    masked = np.ma.masked_array(np.ascontiguousarray(view), np.isnan(view))
    with np.errstate(all="ignore"):
        want = np.asarray(np.ma.median(masked, axis=-1).filled(np.nan))
    assert np.array_equal(pf.nanmedian(view), want, equal_nan=True)


def test_each_median_network_sorts_every_input_of_zeros_and_ones():
    """A network of comparators that sorts every 0-1 input sorts every input (Knuth's
    0-1 principle): so the short medians' networks sort."""
    for size, network in pf._NETWORKS.items():
        for bits in itertools.product((0, 1), repeat=size):
            placed = list(bits)
            for low, high in network:
                placed[low], placed[high] = (
                    min(placed[low], placed[high]),
                    max(placed[low], placed[high]),
                )
            assert placed == sorted(bits), (size, bits)


def test_a_reference_kept_for_the_same_past_days_is_the_one_worked_out_again():
    rng = np.random.default_rng(5)
    ops = rng.lognormal(size=(30, 40, 24)) * 100
    cov = np.minimum(rng.uniform(0.8, 1.3, ops.shape), 1.0)
    cov[3, 10:14] = 0.0  # a gap: days that are not complete
    ops[4, :5] = 0.0  # an idle start

    def fields(ref):
        return {name: np.array(value) for name, value in vars(ref).items()}

    def same(a, b):
        return all(np.array_equal(a[k], b[k], equal_nan=True) for k in a)

    pf._KEPT.clear()
    worked = pf.reference(ops, cov)
    first = fields(worked)
    later_ops, later_cov = ops.copy(), cov.copy()
    later_ops[:, -1, :15] *= 3.0  # today goes on: only the last day changes
    later_cov[:, -1] = 1.0  # ... and completes
    kept = pf.reference(later_ops, later_cov)
    assert kept.profile is worked.profile  # kept, not worked out again
    pf._KEPT.clear()
    fresh = fields(pf.reference(later_ops, later_cov))
    assert same(fields(kept), fresh)
    assert not np.array_equal(first["totals"], fresh["totals"], equal_nan=True)
    # A past day that changed (a late point) is worked out again, not kept.
    late_ops = later_ops.copy()
    late_ops[7, 20, 5] += 1.0
    pf._KEPT.clear()
    pf.reference(later_ops, later_cov)
    got = fields(pf.reference(late_ops, later_cov))
    pf._KEPT.clear()
    assert same(got, fields(pf.reference(late_ops, later_cov)))
    assert not same(got, fresh)
