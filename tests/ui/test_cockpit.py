"""The quota cockpit, driven headlessly: its rows, table, pictures, refresh and errors.

Sources are real: raw API JSON with known rates (so hit times are exact), and a History
collected from the emulator. Children are found by their CSS class, as the browser tests
find them.
"""

from __future__ import annotations

import base64
import datetime as dt
import io
import pathlib
import re
import threading

import matplotlib
import numpy as np
import pandas as pd
import pyarrow.fs as pafs
import pytest

import searchkit as sk
from searchkit.analytics.forecast import FORECAST_COLUMNS
from searchkit.emulator import Emulator
from searchkit.history import compaction
from searchkit.history.compaction import settle_all
from searchkit.render.cockpit_table import row_label, rows_csv, shown_rows, table_header
from searchkit.ui.cockpit import QuotaCockpit
from tests.analytics.test_forecast import busy_days, days_of
from tests.csv_read import read_csv_exact
from tests.local_fs import OpenedHandler
from tests.stores import copy_store
from tests.ui.test_widgets import PNG_MAGIC, display_data, part, shown, synced_state
from tests.wall import HANG_S

matplotlib.use("Agg")

UTC = "UTC"
NOW = "2026-11-21 06:00"


def quiet_days(hour: int, when: pd.Timestamp) -> float:
    return 0.1


@pytest.fixture(scope="module")
def raw():
    return [
        days_of("shaped", 12, busy_days, today_until=6),  # hits 100,000 at 14:35:33
        days_of("early", 12, busy_days, today_until=6, queries=50_000),
        days_of("quiet", 12, quiet_days, today_until=6),
        days_of("unlimited", 12, busy_days, today_until=6, queries=-1),
    ]


@pytest.fixture
def cockpit(raw):
    made = sk.quota_cockpit(raw, now=NOW)
    assert made.wait(HANG_S)
    yield made
    made.close()


def test_the_rows_are_forecast_limits_on_the_same_source_and_now(cockpit, raw):
    expected = sk.forecast_limits(raw, now=NOW)
    pd.testing.assert_frame_equal(cockpit.rows[list(FORECAST_COLUMNS)], expected, check_exact=True)
    # The backtest's columns beside them: 12 days stored, 7 of warm-up, 5 replayed x 7 hours.
    assert cockpit.rows.loc["id-shaped", ["band_held", "calls_right", "backtested"]].tolist() == [
        1.0,
        1.0,
        35,
    ]


def test_the_table_is_sorted_by_when_each_index_runs_out(cockpit):
    names = [line.split()[0] for line in cockpit.page_lines]
    assert names == ["early", "shaped", "quiet", "unlimited"]
    shaped = cockpit.page_lines[1]
    assert "14:35 (14:35-14:35)" in shaped
    assert "100,000" in shaped and "201,600" in shaped and "202%" in shaped
    unlimited = cockpit.page_lines[3]
    assert "unlimited" in unlimited and "never (unlimited)" in unlimited
    assert re.search(r"(?<!\d)0%", unlimited) is None  # unlimited is not 0%
    assert cockpit.selected_id == "id-early"  # the first row is selected and drawn
    assert cockpit.picture_png is not None and cockpit.picture_png.startswith(PNG_MAGIC)


def test_sorting_by_another_column_and_filtering_by_name(cockpit):
    cockpit.sort("name", descending=True)
    assert [line.split()[0] for line in cockpit.page_lines] == [
        "unlimited",
        "shaped",
        "quiet",
        "early",
    ]
    cockpit.filter("A")  # any case
    assert [line.split()[0] for line in cockpit.page_lines] == ["shaped", "early"]
    assert list(cockpit.shown.index) == ["id-shaped", "id-early"]
    cockpit.sort("projected utilization")
    assert [line.split()[0] for line in cockpit.page_lines] == ["shaped", "early"]


def test_clicking_a_header_sorts_by_its_column_and_again_the_other_way(cockpit):
    names = part(cockpit, "sk-sort-name")
    assert part(cockpit, "sk-sort-urgency").description == "hit at (earliest-latest) ▲"
    names.click()
    assert [line.split()[0] for line in cockpit.page_lines] == [
        "early",
        "quiet",
        "shaped",
        "unlimited",
    ]
    assert names.description == "index ▲" and "sk-sorted" in names._dom_classes
    assert part(cockpit, "sk-sort-urgency").description == "hit at (earliest-latest)"
    names.click()
    assert [line.split()[0] for line in cockpit.page_lines] == [
        "unlimited",
        "shaped",
        "quiet",
        "early",
    ]
    assert names.description == "index ▼" and cockpit.sorted_by == ("name", True)
    part(cockpit, "sk-sort-used").click()  # another column: ascending first
    assert cockpit.sorted_by == ("used", False)
    assert part(cockpit, "sk-sort-used").description == "used ▲"


def test_unlimited_sorts_last_by_utilization_either_way(cockpit):
    for descending in (False, True):
        cockpit.sort("projected utilization", descending=descending)
        assert cockpit.page_lines[-1].split()[0] == "unlimited"


def test_the_csv_is_what_is_shown_and_reads_back_as_forecast_limits(cockpit, raw):
    cockpit.filter("ED")  # shaped, unlimited
    cockpit.sort("name", descending=True)
    frame = read_csv_exact(io.StringIO(cockpit.csv()), index_col="index_id")
    assert list(frame.index) == ["id-unlimited", "id-shaped"]
    expected = sk.forecast_limits(raw, now=NOW).loc[list(frame.index)]
    for column in ("used", "projected", "projected_low", "projected_high", "limit"):
        assert frame[column].tolist() == expected[column].tolist(), column
    assert frame.loc["id-unlimited", "limit"] == float("inf")
    assert pd.to_datetime(frame.loc["id-shaped", "hit_at"]) == pd.Timestamp(
        "2026-11-21 14:35:33", tz=UTC
    )
    part(cockpit, "sk-export").click()
    link = part(cockpit, "sk-download").value
    assert 'download="quota-cockpit.csv"' in link and "Download 2 rows as CSV" in link


def offered(cockpit) -> pd.DataFrame | None:
    """The rows the cockpit's download link holds (its CSV read back), or None: no link."""
    link = part(cockpit, "sk-download").value
    if not link:
        return None
    (encoded,) = re.findall(r"base64,([A-Za-z0-9+/=]+)", link)
    text = base64.b64decode(encoded).decode("utf-8")
    return read_csv_exact(io.StringIO(text), index_col="index_id", keep_default_na=False)


def test_the_csv_holds_every_figure_and_reads_back_to_the_bit():
    """CI at the lowest versions (pandas 3.0): the cockpit wrote ``used`` 10883.400000000001
    (a refresh's figure, the same as forecast_limits') and pandas 3.0's ``read_csv`` read it
    back as 10883.4, failing a test that compares to the bit. The text is exact; the tests
    read it with :func:`~tests.csv_read.read_csv_exact` (pandas 3.0's round-trip parser)."""
    rng = np.random.default_rng(2026)
    figures = [10883.400000000001, 363976.19999999995, *(rng.random(2_000) * 1e6).tolist()]
    rows = pd.DataFrame(
        {"used": figures},
        index=pd.Index([f"id-{n}" for n in range(len(figures))], "str", name="index_id"),
    )
    text = rows_csv(rows)
    assert "id-0,10883.400000000001\nid-1,363976.19999999995\n" in text
    pd.testing.assert_frame_equal(
        read_csv_exact(io.StringIO(text), index_col="index_id"), rows, check_exact=True
    )


def test_the_csv_link_is_withdrawn_when_the_rows_shown_change(cockpit):
    """The download link holds the rows shown when Export was pressed: a filter or a sort
    that changes them withdraws it (it would offer rows no longer shown); a refresh that
    gives the same rows, or a page turn, keeps it."""
    part(cockpit, "sk-export").click()
    assert list(offered(cockpit).index) == ["id-early", "id-shaped", "id-quiet", "id-unlimited"]
    cockpit.refresh()  # the same source read again: the same rows
    part(cockpit, "sk-next").click()  # one page: nothing turns
    assert list(offered(cockpit).index) == ["id-early", "id-shaped", "id-quiet", "id-unlimited"]
    cockpit.filter("ED")
    assert offered(cockpit) is None
    part(cockpit, "sk-export").click()
    assert list(offered(cockpit).index) == ["id-shaped", "id-unlimited"]
    cockpit.sort("name", descending=True)
    assert offered(cockpit) is None


def test_selecting_a_row_shows_its_hit_time_and_draws_it(cockpit):
    cockpit.select("shaped")
    assert cockpit.wait(HANG_S)
    detail = part(cockpit, "sk-detail").value
    assert "hit at 14:35 (14:35-14:35)" in detail
    assert cockpit.selected_id == "id-shaped"
    cockpit.tz = "Asia/Kolkata"  # +05:30
    assert "hit at 20:05 (20:05-20:05)" in part(cockpit, "sk-detail").value


def test_the_daily_view_between_two_dates(cockpit):
    """The daily view's range of dates: offered as the 30 days up to today, drawn for the
    days chosen, refused calmly when it ends before it starts."""
    cockpit.select("shaped")
    part(cockpit, "sk-view").value = "daily"
    assert cockpit.wait(HANG_S)
    first, last = part(cockpit, "sk-first-day"), part(cockpit, "sk-last-day")
    assert not shown(first) and not shown(last)
    part(cockpit, "sk-days").value = 0  # "dates"
    assert cockpit.wait(HANG_S)
    assert shown(first) and shown(last)
    assert (first.value, last.value) == (dt.date(2026, 10, 23), dt.date(2026, 11, 21))
    first.value = dt.date(2026, 11, 12)
    last.value = dt.date(2026, 11, 15)
    assert cockpit.wait(HANG_S)
    picture = part(cockpit, "sk-cockpit-picture").value
    assert 'alt="Daily usage: shaped as of 06:00 UTC from 2026-11-12 to 2026-11-15' in picture
    first.value = dt.date(2026, 11, 16)
    assert cockpit.wait(HANG_S)
    assert (
        "The range ends (2026-11-15) before it starts (2026-11-16)."
        in part(cockpit, "sk-cockpit-picture").value
    )
    assert cockpit.picture_png is None


def test_pages_of_25_rows_keep_the_selection_on_its_page():
    raw = [
        days_of(f"ix-{i:03d}", 2, busy_days, today_until=6, queries=40_000 + i) for i in range(60)
    ]
    with QuotaCockpit(raw, now="2026-11-11 06:00") as cockpit:
        assert cockpit.wait(HANG_S)
        assert len(cockpit.page_lines) == 25
        assert part(cockpit, "sk-page").value == "page 1 of 3 · 60 rows"
        cockpit.select("ix-055")
        assert part(cockpit, "sk-page").value == "page 3 of 3 · 60 rows"
        assert len(cockpit.page_lines) == 10
        cockpit.refresh(force=True)
        assert cockpit.selected_id == "id-ix-055"  # kept through a refresh


def test_header_and_rows_line_up(raw):
    rows = shown_rows(sk.forecast_limits(raw, now=NOW))
    header = table_header()
    line = row_label(rows.iloc[0], dt.timezone.utc)
    assert header.index("limit") + len("limit") == line.index("50,000") + len("50,000")


@pytest.mark.emulator(demo=True, seed=2026, window_minutes=3 * 1440)
def test_the_widget_state_and_display_hold_no_token(client):
    indexes = client.list_indexes()
    cockpit = sk.quota_cockpit(indexes)
    try:
        assert cockpit.wait(HANG_S)
        state, shown = synced_state(cockpit), display_data(cockpit)
        for index in indexes:
            for secret in (index.token, index.read_only_token):
                if secret is not None:
                    assert secret.get_secret_value() not in state
                    assert secret.get_secret_value() not in shown
        assert "sk-cockpit-static" in shown  # the saved notebook's picture
    finally:
        cockpit.close()


# --- a History: refresh, stale, empty, corrupt, compacted -----------------------------------

START = dt.datetime(2026, 11, 17, 12, 0, tzinfo=dt.timezone.utc)


#: The demo set, a day of points a list, from START on a clock the tests move.
EMULATOR = {"demo": True, "seed": 2026, "clock": START, "window_minutes": 1440}
pytestmark = pytest.mark.emulator(**EMULATOR)  # ``emulator`` here, unless a test says else


def three_days(folder: pathlib.Path) -> None:
    """Collect the three days after START, once a day, into ``folder``."""
    with Emulator(**EMULATOR) as emu, emu.client() as client:
        hist = sk.History(folder)
        for _ in range(3):
            emu.advance(86_400)
            hist.collect(client, now=emu.now())


@pytest.fixture
def store(tmp_path, made_once, emulator, client):
    """Three days collected (``made_once``), with the emulator's clock where they left it."""
    hist = sk.History(made_once("cockpit-three-days", three_days, tmp_path / "store"))
    emulator.advance(3 * 86_400)
    return hist, emulator, client


def test_refresh_reads_a_new_collect_and_keeps_the_selection(store):
    hist, emu, client = store
    cockpit = sk.quota_cockpit(hist, now=emu.now)
    try:
        assert cockpit.wait(HANG_S)
        assert cockpit.message.endswith("newest point 2026-11-20 11:59 UTC.")
        cockpit.select("code-snippets")
        assert cockpit.wait(HANG_S)
        assert "Today: code-snippets as of 12:00 UTC" in part(cockpit, "sk-cockpit-picture").value
        used = cockpit.rows.loc[cockpit.selected_id, "used"]
        cockpit.refresh()
        assert "(nothing new since the last read)" in cockpit.message
        emu.advance(600)
        hist.collect(client, now=emu.now())
        cockpit.refresh()
        assert cockpit.message.endswith("newest point 2026-11-20 12:09 UTC.")
        # The picture is drawn again as of the new instant (it said 12:00 before).
        assert "Today: code-snippets as of 12:10 UTC" in part(cockpit, "sk-cockpit-picture").value
        assert cockpit.selected_id is not None
        assert cockpit.rows.loc[cockpit.selected_id, "name"] == "code-snippets"
        assert cockpit.rows.loc[cockpit.selected_id, "used"] > used
        # The refreshed rows are a fresh forecast_limits' at the same instant, to the bit.
        fresh = sk.forecast_limits(hist, now=emu.now())
        pd.testing.assert_frame_equal(cockpit.rows[list(FORECAST_COLUMNS)], fresh, check_exact=True)
    finally:
        cockpit.close()


def test_after_a_refresh_the_csv_offered_is_the_new_rows_never_the_old(store):
    """The browser test's failure (tests/browser/test_cockpit.py, the dark theme's compacted
    store): a link exported before a collect stayed on the page after the refresh, and a
    click on it before the kernel answered the next Export downloaded the rows of before
    (used 10 minutes short). A refresh that changes the rows withdraws the link."""
    hist, emu, client = store
    cockpit = sk.quota_cockpit(hist, now=emu.now)
    try:
        assert cockpit.wait(HANG_S)
        part(cockpit, "sk-export").click()
        before = offered(cockpit)
        assert before is not None and len(before) == len(cockpit.rows)
        emu.advance(600)
        hist.collect(client, now=emu.now())
        cockpit.refresh()
        assert cockpit.message.endswith("newest point 2026-11-20 12:09 UTC.")
        assert offered(cockpit) is None
        part(cockpit, "sk-export").click()
        after = offered(cockpit)
        fresh = sk.forecast_limits(hist, now=emu.now()).loc[after.index]
        assert after["used"].tolist() == fresh["used"].tolist()
        assert (after["used"] > before.loc[after.index, "used"]).any()
    finally:
        cockpit.close()


@pytest.mark.parametrize(
    "options", [{}, {"field": "max_daily_queries", "value_unit": "per_minute", "now": True}]
)
def test_a_refresh_reads_only_the_collect_written_since_and_gives_forecast_limits(store, options):
    """After a collect, a refresh opens one file: the collect's new points (not today's
    rollup, the closed days, the limits); its rows are forecast_limits' on the store read
    afresh, to the bit (the present, or the collector's clock)."""
    hist, emu, client = store
    handler = OpenedHandler()
    now = emu.now if options.pop("now", False) else None
    seen = sk.History(hist.root, filesystem=pafs.PyFileSystem(handler))
    cockpit = sk.quota_cockpit(seen, now=now, **options)
    try:
        assert cockpit.wait(HANG_S)
        assert handler.opened  # the first read: the store
        today = pathlib.Path(hist.root, "throughput", "day=2026-11-20")
        before = set(today.glob("*.parquet"))
        emu.advance(600)
        hist.collect(client, now=emu.now())
        (written,) = set(today.glob("*.parquet")) - before
        handler.opened.clear()
        cockpit.refresh()
        assert cockpit.message.endswith("newest point 2026-11-20 12:09 UTC.")
        assert handler.opened == [str(written)]
        fresh = sk.forecast_limits(hist, now=None if now is None else now(), **options)
        pd.testing.assert_frame_equal(cockpit.rows[list(FORECAST_COLUMNS)], fresh, check_exact=True)
    finally:
        cockpit.close()


def test_across_midnight_a_day_read_while_its_merge_ran_is_read_from_its_rollup_after(
    store, monkeypatch
):
    """A notebook refreshing across midnight: the round at 00:01 closes 2026-11-20 (its
    last points, and the new day's first) and leaves the day's merge on a thread. The
    refresh comes while the merge has replaced the day's files but not yet written their
    rollup: the closed day is read from its points (the figures are right). Once the
    rollup is written, the next refresh reads that day from it, not from every point again
    (it did until the day's files changed, which a closed day's do not); at every step the
    message names the newest point and the rows are forecast_limits' to the bit."""
    hist, emu, client = store
    reached, go = threading.Event(), threading.Event()
    write_rollup = compaction._write_rollup

    def held(*args, **kwargs):  # the merge's rollup, once the refresh below has read
        if threading.current_thread().name == "searchkit-compaction":
            reached.set()
            go.wait(HANG_S)
        return write_rollup(*args, **kwargs)

    monkeypatch.setattr(compaction, "_write_rollup", held)
    handler = OpenedHandler()
    cockpit = sk.quota_cockpit(
        sk.History(hist.root, filesystem=pafs.PyFileSystem(handler)), now=emu.now
    )

    def shows(newest: str) -> None:
        assert cockpit.message.endswith(f"newest point {newest} UTC."), cockpit.message
        fresh = sk.forecast_limits(hist, now=emu.now())
        pd.testing.assert_frame_equal(cockpit.rows[list(FORECAST_COLUMNS)], fresh, check_exact=True)

    try:
        emu.advance(11 * 3600 + 50 * 60)
        hist.collect(client, now=emu.now())
        cockpit.refresh()
        shows("2026-11-20 23:49")
        emu.advance(11 * 60)
        hist.collect(client, now=emu.now())  # 00:01: the day closes, its merge starts
        assert reached.wait(HANG_S)
        cockpit.refresh()
        shows("2026-11-21 00:00")
        go.set()
        settle_all()
        emu.advance(600)
        hist.collect(client, now=emu.now())
        today = pathlib.Path(hist.root, "throughput", "day=2026-11-21")
        (written,) = sorted(today.glob("*.parquet"))[-1:]
        handler.opened.clear()
        cockpit.refresh()
        shows("2026-11-21 00:10")
        assert [p for p in handler.opened if "/throughput/" in p] == [str(written)]
    finally:
        go.set()
        cockpit.close()
        settle_all()


def test_a_stale_store_says_so_with_the_newest_point(store):
    hist, emu, _ = store
    later = pd.Timestamp(emu.now(), unit="s", tz=UTC) + pd.Timedelta(hours=5)
    cockpit = sk.quota_cockpit(hist, now=later)
    try:
        assert cockpit.wait(HANG_S)
        assert cockpit.message == (
            "Stale: the newest point is from 2026-11-20 11:59 UTC, 5 h before 17:00 UTC; "
            "today is not forecast until a collector writes again."
        )
        assert "sk-error" in part(cockpit, "sk-status").value
    finally:
        cockpit.close()


def test_an_empty_store_is_a_calm_message(tmp_path):
    cockpit = sk.quota_cockpit(sk.History(tmp_path / "nothing"), now=NOW)
    try:
        assert cockpit.wait(HANG_S)
        assert cockpit.message.startswith("Nothing to forecast: the history at ")
        assert cockpit.page_lines == []
        assert "No index to show yet." in part(cockpit, "sk-detail").value  # not "the filter"
        assert "Select a row" in part(cockpit, "sk-cockpit-picture").value
    finally:
        cockpit.close()


def test_a_corrupt_file_is_a_message_and_the_previous_rows_stay(store):
    hist, emu, _ = store
    cockpit = sk.quota_cockpit(hist, now=emu.now)
    try:
        assert cockpit.wait(HANG_S)
        before = cockpit.rows
        newest = sorted(pathlib.Path(hist.location, "throughput").glob("day=*/*.parquet"))[-1]
        newest.write_bytes(b"PAR1 this is not parquet PAR1")
        cockpit.refresh(force=True)
        assert cockpit.message.startswith("Could not read the usage: ")
        assert "truncated or corrupt: move it out of the history" in cockpit.message
        assert cockpit.message.endswith("The previous table stays.")
        pd.testing.assert_frame_equal(cockpit.rows, before)
    finally:
        cockpit.close()


def test_a_store_compacted_while_the_cockpit_refreshes_is_read_again(store):
    hist, emu, client = store
    cockpit = sk.quota_cockpit(hist, now=emu.now)
    try:
        assert cockpit.wait(HANG_S)
        emu.advance(600)
        hist.collect(client, now=emu.now())
        hist.compact()
        cockpit.refresh()
        assert cockpit.message.endswith("newest point 2026-11-20 12:09 UTC.")
    finally:
        cockpit.close()


def test_a_copy_of_the_store_gives_the_same_rows(store, tmp_path):
    hist, emu, _ = store
    copy = tmp_path / "copy"
    copy_store(hist.location, copy)
    now = emu.now()
    with QuotaCockpit(sk.History(copy), now=now) as cockpit:
        assert cockpit.wait(HANG_S)
        expected = sk.forecast_limits(hist, now=now)
        pd.testing.assert_frame_equal(
            cockpit.rows[list(FORECAST_COLUMNS)], expected, check_exact=True
        )


def test_tz_is_taken_as_every_function_takes_it_and_a_zone_without_a_name_refused(raw):
    # tz means and types the same everywhere (issue 26 item 4): a name or its ZoneInfo.
    # The widgets' zone menus show a name, so a bare offset (which has none) is refused at
    # once, not carried as "UTC+02:00" into a refresh that cannot read it back.
    import zoneinfo

    made = sk.quota_cockpit(raw, now=NOW, tz=zoneinfo.ZoneInfo("Asia/Kolkata"))
    try:
        assert made.wait(HANG_S)
        assert made.tz == "Asia/Kolkata"
    finally:
        made.close()
    offset = dt.timezone(dt.timedelta(hours=2))
    with pytest.raises(sk.ValidationError, match=r"an IANA name .* got datetime.timezone"):
        sk.quota_cockpit(raw, now=NOW, tz=offset)
    with pytest.raises(sk.ValidationError, match=r"unknown time zone 'Berlin'"):
        sk.quota_cockpit(raw, now=NOW, tz="Berlin")


def test_a_refresh_interval_of_its_own_is_named_as_every_duration_is(cockpit):
    # One way to write a duration for people (issue 26 item 6): format_duration's.
    cockpit.refresh_every = 90
    try:
        interval = part(cockpit, "sk-interval")
        assert interval.options[-1] == ("1 min 30 s", 90.0) and interval.value == 90.0
    finally:
        cockpit.refresh_every = None


def test_selecting_an_unknown_index_is_an_unknown_index_error_naming_it(cockpit):
    # An unknown name or id is an UnknownIndexError everywhere (also a KeyError).
    with pytest.raises(sk.UnknownIndexError, match="no row shown has the name or id 'nope'"):
        cockpit.select("nope")
