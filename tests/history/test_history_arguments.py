"""Bad arguments to History's readers and usage_frame: ValidationErrors naming the argument
(issue 18, item 20)."""

from __future__ import annotations

import datetime as dt

import pytest

import searchkit as sk
from searchkit.emulator import Emulator
from searchkit.history.usage_history import History

NOON = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)
RANGE = "1677-09-21 to 2262-04-11"


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    hist = History(tmp_path_factory.mktemp("args") / "h")
    with Emulator(demo=True, seed=3, clock=NOON, window_minutes=60) as emu, emu.client() as c:
        hist.collect(c, now=emu.now())
        first = c.list_indexes()[0]
    return hist, str(first.id), first.name


def test_one_index_id_as_text_is_one_id_not_its_letters(stored):
    hist, index_id, name = stored
    frame = hist.throughput(index_ids=index_id)
    assert frame["index_id"].astype(str).unique().tolist() == [index_id]
    assert len(frame) == 60
    assert frame.equals(hist.throughput(index_ids=[index_id]))
    assert frame.equals(hist.throughput(names=name))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"names": [None]}, "names must hold texts only: item 0 is None"),
        ({"names": ["docs", 5]}, "names must hold texts only: item 1 is 5"),
        ({"names": 5}, "names must be a text or several texts, got int"),
        ({"index_ids": [b"x"]}, "index_ids must hold texts only: item 0 is b'x'"),
        ({"start": "1600"}, f"start must be a time from {RANGE}, got '1600'"),
        ({"end": "2300-01-01"}, f"end must be a time from {RANGE}, got '2300-01-01'"),
        ({"start": "junk"}, f"start must be a time from {RANGE}, got 'junk'"),
        ({"start": float("nan")}, f"start must be a time from {RANGE}, got nan"),
        ({"start": True}, "start must be a time, got True"),
        (
            {"start": 1_763_640_000_000},
            f"start must be a time from {RANGE}, got 1763640000000 (a number this large is "
            "not epoch seconds: milliseconds?)",
        ),
        (
            {"start": "2026-11-21", "end": "2026-11-20"},
            "end (2026-11-20 00:00:00+00:00) is before start (2026-11-21 00:00:00+00:00)",
        ),
    ],
)
def test_bad_throughput_arguments_are_validation_errors_naming_them(stored, kwargs, message):
    hist, _, _ = stored
    with pytest.raises(sk.ValidationError) as info:
        hist.throughput(**kwargs)
    assert str(info.value) == message


def test_limits_at_out_of_range_is_a_validation_error(stored):
    hist, _, _ = stored
    with pytest.raises(sk.ValidationError) as info:
        hist.limits(at="1600")
    assert str(info.value) == f"at must be a time from {RANGE}, got '1600'"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"freq": "bogus"},
            "freq must be a pandas frequency such as 'D', '6h' or 'W', got 'bogus'",
        ),
        ({"freq": "0D"}, "freq must be a positive period such as 'D', got '0D'"),
        ({"freq": "-1D"}, "freq must be a positive period such as 'D', got '-1D'"),
        ({"freq": None}, "freq must be a positive period such as 'D', got None"),
        (
            {"field": "max_daily_kisses"},
            "field must be a limit field, one of max_vector_count, max_monthly_reranks, "
            "max_daily_updates, max_daily_queries, max_monthly_bandwidth, "
            "max_writes_per_second, max_query_per_second, max_reads_per_request, "
            "max_writes_per_request; got 'max_daily_kisses'",
        ),
        ({"tz": "Mars/Base"}, "unknown time zone 'Mars/Base'"),
    ],
)
def test_bad_usage_arguments_are_validation_errors_naming_them(stored, kwargs, message):
    hist, _, _ = stored
    with pytest.raises(sk.ValidationError) as info:
        sk.usage_frame(hist, **kwargs)
    assert str(info.value).startswith(message)


# -- the rollup readers' days and columns (issue 29, item 13) -------------------------------

DAY_HINT = "is not a UTC day: give a 'YYYY-MM-DD' text (e.g. '2026-11-20') or a date"


@pytest.mark.parametrize(
    ("first", "last", "message"),
    [
        ("2026-13-01", "2026-11-20", f"first: '2026-13-01' {DAY_HINT}"),
        ("x", "y", f"first: 'x' {DAY_HINT}"),
        (20261120, "2026-11-20", f"first: 20261120 {DAY_HINT}"),
        ("2026-11-19", "2026-02-30", f"last: '2026-02-30' {DAY_HINT}"),
    ],
)
def test_sums_names_a_day_that_is_not_one(stored, first, last, message):
    hist, _, _ = stored
    with pytest.raises(sk.ValidationError) as info:
        hist.sums(first, last, detail="hour")
    assert info.value.message == message


@pytest.mark.parametrize(
    ("days", "message"),
    [
        ("2026-11-20", "days: give a list of UTC days (e.g. ['2026-11-20']), not '2026-11-20'"),
        (["2026-11-19", "20-11-2026"], f"days[1]: '20-11-2026' {DAY_HINT}"),
        (20261120, "days: give a list of UTC days (e.g. ['2026-11-20']), not 20261120"),
    ],
)
def test_refresh_rollups_names_days_that_are_not_a_list_of_days(stored, days, message):
    hist, _, _ = stored
    with pytest.raises(sk.ValidationError) as info:
        hist.refresh_rollups(days)
    assert info.value.message == message


def test_rollups_names_an_unknown_column(stored):
    hist, _, _ = stored
    with pytest.raises(sk.ValidationError) as info:
        hist.rollups(columns=["operations", "nope"])
    assert info.value.message.startswith(
        "columns: no such column 'nope'; the columns are account, index_id, name, period, "
    )
    assert hist.rollups(columns=["index_id", "operations"]).columns.tolist() == [
        "index_id",
        "operations",
    ]
