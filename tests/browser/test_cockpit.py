"""The quota cockpit in JupyterLab, in both themes, as a user drives it (issue 27).

A notebook collects three days of the demo into a History in the test's folder and opens
``sk.quota_cockpit`` on it. In the Light and then the Dark theme the test sorts, filters,
selects the index that crosses its limit this evening and reads its hit time from the
page; then, as a collector in another process would, it collects ten more minutes into the
same store, presses Refresh and sees the new newest point; and it exports the CSV and
compares it with ``forecast_limits`` on the same store. Screenshots of each step are kept in
tests/browser/artifacts/ (cockpit-*.png).
"""

from __future__ import annotations

import datetime as dt
import io
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat
import pandas as pd
import pytest

import searchkit as sk
from searchkit.emulator import Emulator

from .conftest import NOTEBOOK_TIMEOUT_MS, JupyterLab, _kernel_idle
from .test_notebook_look import _switch_theme

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Locator, Page

    from .conftest import Expect

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

#: The demo's clock when the notebook collects: three days, each up to 19:00 UTC.
START = dt.datetime(2026, 11, 17, 19, 0, tzinfo=dt.timezone.utc)
DAYS = 3


def collect(store: Path, *, days: int, clock: dt.datetime) -> None:
    """Collect the demo into ``store`` once a day for ``days`` days after ``clock``."""
    with Emulator(demo=True, seed=2026, clock=clock, window_minutes=1440) as emu:
        with emu.client() as client:
            hist = sk.History(store)
            for _ in range(days):
                emu.advance(86_400)
                hist.collect(client, now=emu.now())


def cells(store: Path, root: Path) -> list[str]:
    empty, broken = root / "cockpit-empty", root / "cockpit-broken"
    return [
        "import datetime as dt\nimport searchkit as sk\nfrom searchkit.emulator import Emulator\n"
        f"start = dt.datetime.fromisoformat({START.isoformat()!r})\n"
        f"with Emulator(demo=True, seed=2026, clock=start, window_minutes=1440) as emu:\n"
        "    with emu.client() as client:\n"
        f"        hist = sk.History({str(store)!r})\n"
        f"        for _ in range({DAYS}):\n"
        "            emu.advance(86_400)\n"
        "            hist.collect(client, now=emu.now())",
        "cockpit = sk.quota_cockpit(hist)\ncockpit",
        # The calm messages: an empty store, a stale one (read five hours after its newest
        # point), a corrupt one (a copy whose newest file is not Parquet any more).
        "import pathlib, shutil\n"
        f"empty = sk.quota_cockpit(sk.History({str(empty)!r}))\n"
        "later = hist.newest_time() + dt.timedelta(hours=5)\n"
        "stale = sk.quota_cockpit(hist, now=later)\n"
        f"shutil.copytree(hist.location, {str(broken)!r})\n"
        f"broken = sk.History({str(broken)!r})\n"
        "corrupt = sk.quota_cockpit(broken)\n"
        "corrupt.wait()\n"
        f"newest = sorted(pathlib.Path({str(broken)!r}).glob('throughput/day=*/*.parquet'))[-1]\n"
        "newest.write_bytes(b'PAR1 not parquet PAR1')\n"
        "corrupt.refresh(force=True)\n"
        "display(empty, stale, corrupt)",
    ]


@pytest.fixture(scope="module")
def store(jupyterlab: JupyterLab) -> Path:
    return jupyterlab.root / "cockpit-store"


@pytest.fixture(scope="module")
def page(jupyterlab: JupyterLab, browser_context: BrowserContext, store: Path) -> Iterator[Page]:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells(store, jupyterlab.root)]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nbformat.write(notebook, str(jupyterlab.root / "cockpit.ipynb"))
    shown = browser_context.new_page()
    shown.set_viewport_size({"width": 1500, "height": 2000})
    try:
        shown.goto(f"{jupyterlab.url}/doc/workspaces/cockpit/tree/cockpit.ipynb")
        shown.locator(".jp-Notebook .jp-CodeCell").first.wait_for(timeout=NOTEBOOK_TIMEOUT_MS)
        _kernel_idle(shown)
        shown.get_by_role("menuitem", name="Run", exact=True).click()
        shown.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        picture = shown.locator(".sk-cockpit .sk-cockpit-picture img").first
        picture.wait_for(state="attached", timeout=NOTEBOOK_TIMEOUT_MS)
        shown.locator(".sk-cockpit").nth(3).wait_for(timeout=NOTEBOOK_TIMEOUT_MS)
        _kernel_idle(shown)
        yield shown
    finally:
        shown.close()


def cockpit(page: Page) -> Locator:
    return page.locator(".sk-cockpit").first


def rows(page: Page) -> Locator:
    return cockpit(page).locator(".sk-cockpit-rows select option")


def names_shown(page: Page) -> list[str]:
    """The index names of the table's rows, in the order the page shows them."""
    return [text.split()[0] for text in rows(page).all_inner_texts()]


def evening_row(store: Path) -> pd.Series:
    """The forecast row of the index that crosses its limit later today (from the store)."""
    forecast = sk.forecast_limits(sk.History(store))
    ahead = forecast[forecast["hit_at"] > forecast["as_of"]].sort_values("hit_at")
    assert len(ahead), "no demo index crosses its limit later today"
    return ahead.iloc[0]


@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_sort_filter_select_and_read_the_evening_hit_time(
    page: Page,
    expect: Expect,
    store: Path,
    theme: str,
    save_screenshot: Callable[[Locator, str], Path],
) -> None:
    label = theme.split()[-1].lower()
    _switch_theme(page, theme)
    try:
        shown = f".sk-cockpit-picture img.sk-plot-{label}"
        expect(cockpit(page).locator(shown)).to_be_visible()
        save_screenshot(cockpit(page), f"cockpit-{label}-opened")
        names = sorted(sk.forecast_limits(sk.History(store))["name"])
        header = cockpit(page).locator("button.sk-sort-name")
        header.click()  # the index column's header: by name
        expect(header).to_have_text("index ▲")
        expect(rows(page).first).to_contain_text(names[0])
        assert names_shown(page) == names[: len(names_shown(page))]
        header.focus()
        page.keyboard.press("Enter")  # the keyboard: the same header, the other way
        expect(header).to_have_text("index ▼")
        expect(rows(page).first).to_contain_text(names[-1])
        assert names_shown(page) == names[::-1][: len(names_shown(page))]
        save_screenshot(cockpit(page), f"cockpit-{label}-sorted-by-name")
        row = evening_row(store)
        cockpit(page).locator(".sk-filter input").fill(row["name"][:6].upper())
        expect(rows(page)).to_have_count(1)
        rows(page).first.click()
        hit = f"{row['hit_at']:%H:%M}"
        detail = cockpit(page).locator(".sk-detail .sk-hit")
        expect(detail).to_contain_text(f"hit at {hit} (")
        expect(cockpit(page).locator(shown)).to_have_attribute(
            "alt", f"Today: {row['name']} as of {row['as_of']:%H:%M} UTC ({label} theme)"
        )
        save_screenshot(cockpit(page), f"cockpit-{label}-evening-breach")
        rows(page).first.focus()
        page.keyboard.press("ArrowDown")  # one row: the selection stays, no error
        expect(detail).to_contain_text(f"hit at {hit} (")
    finally:
        cockpit(page).locator(".sk-filter input").fill("")
        cockpit(page).locator("button.sk-sort-urgency").click()
        _switch_theme(page, "JupyterLab Light")


def test_refresh_after_a_collect_into_the_same_store_shows_the_new_point(
    page: Page, expect: Expect, store: Path, save_screenshot: Callable[[Locator, str], Path]
) -> None:
    status = cockpit(page).locator(".sk-status")
    newest = sk.History(store).newest_time()
    assert newest is not None
    expect(status).to_contain_text(f"newest point {newest:%Y-%m-%d %H:%M} UTC")
    # A collector in another process: the same demo, ten minutes later.
    later = START + dt.timedelta(days=DAYS - 1, minutes=10)
    collect(store, days=1, clock=later)
    after = sk.History(store).newest_time()
    assert after is not None and after > newest
    cockpit(page).locator(".sk-refresh").click()
    expect(status).to_contain_text(f"newest point {after:%Y-%m-%d %H:%M} UTC")
    as_of = sk.forecast_limits(sk.History(store))["as_of"].iloc[0]
    picture = cockpit(page).locator(".sk-cockpit-picture img.sk-plot-light")
    expect(picture).to_have_attribute("alt", re.compile(f" as of {as_of:%H:%M} UTC "))
    save_screenshot(cockpit(page), "cockpit-light-after-refresh")


def test_the_exported_csv_is_forecast_limits_of_the_rows_shown(
    page: Page, expect: Expect, store: Path
) -> None:
    cockpit(page).locator(".sk-export").click()
    link = cockpit(page).locator(".sk-download a.sk-csv-link")
    expect(link).to_be_visible()
    with page.expect_download() as caught:
        link.click()
    text = Path(caught.value.path()).read_text(encoding="utf-8")
    frame = pd.read_csv(io.StringIO(text), index_col="index_id")
    expected = sk.forecast_limits(sk.History(store))
    assert sorted(frame.index) == sorted(expected.index)
    for column in ("used", "projected", "limit"):
        assert frame[column].tolist() == expected.loc[frame.index, column].tolist(), column
    hits = pd.to_datetime(frame["hit_at"], utc=True)
    assert hits.tolist() == expected.loc[frame.index, "hit_at"].tolist()


def test_an_empty_a_stale_and_a_corrupt_store_each_say_so_calmly(
    page: Page, expect: Expect, save_screenshot: Callable[[Locator, str], Path]
) -> None:
    empty, stale, corrupt = (page.locator(".sk-cockpit").nth(n) for n in (1, 2, 3))
    expect(empty.locator(".sk-status")).to_contain_text("Nothing to forecast: the history at ")
    # (read before the refresh test collected ten more minutes into the store)
    expect(stale.locator(".sk-status")).to_contain_text(
        re.compile(r"Stale: the newest point is from \S+ \S+ UTC, 5 h before \S+ UTC")
    )
    expect(corrupt.locator(".sk-status")).to_contain_text("truncated or corrupt")
    expect(corrupt.locator(".sk-status")).to_contain_text("The previous table stays.")
    expect(corrupt.locator(".sk-cockpit-rows select option").first).to_be_attached()
    assert (
        page.locator(
            ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
        ).count()
        == 0
    )
    save_screenshot(page.locator(".jp-Cell").nth(2), "cockpit-light-calm-messages")
