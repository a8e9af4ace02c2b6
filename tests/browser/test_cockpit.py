"""The quota cockpit in JupyterLab, in both themes, as a user drives it (issue 27).

A notebook collects three days of the demo into a History in the test's folder and opens
``sk.quota_cockpit`` on it. In the Light and then the Dark theme the test sorts, filters,
selects the index that crosses its limit this evening and reads its hit time from the
page; then, as a collector in another process would, it collects ten more minutes into the
same store, presses Refresh and sees the new newest point; and it exports the CSV and
compares it with ``forecast_limits`` on the same store, every column. A copy of the store
is then compacted while its cockpit refreshes (in both themes): the widget says so calmly,
and once the compaction is done a refresh reads the store again with nothing lost.
Screenshots of each step are kept in tests/browser/artifacts/ (cockpit-*.png).
"""

from __future__ import annotations

import datetime as dt
import io
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat
import numpy as np
import pandas as pd
import pytest

import searchkit as sk
from searchkit.emulator import Emulator
from tests.csv_read import read_csv_exact

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


#: A module the kernel imports: the local filesystem, except that while the flag file
#: exists a compaction is replacing the day's files under every read (each listing of a
#: day's throughput shows a file that is gone when it is opened).
COMPACTING_FS = """
import os

import pyarrow.fs as pafs


class Compacting(pafs.FileSystemHandler):
    def __init__(self, flag):
        self._fs = pafs.LocalFileSystem()
        self._flag = flag

    def get_type_name(self):
        return "compacting"

    def equals(self, other):
        return other is self

    def normalize_path(self, path):
        return path

    def get_file_info(self, paths):
        return self._fs.get_file_info(paths)

    def get_file_info_selector(self, selector):
        infos = self._fs.get_file_info(selector)
        if not os.path.exists(self._flag) or "/throughput" not in selector.base_dir:
            return infos
        folders = [selector.base_dir, *(i.path for i in infos if i.type == pafs.FileType.Directory)]
        days = [f for f in folders if f.rpartition("/")[2].startswith("day=")]
        if days:  # the newest day (a recursive listing holds them all): its compaction
            ghost = max(days) + "/part-1-replaced-by-a-compaction.parquet"
            infos.append(pafs.FileInfo(ghost, pafs.FileType.File, size=100))
        return infos

    def open_input_file(self, path):
        return self._fs.open_input_file(path)

    def open_input_stream(self, path):
        return self._fs.open_input_stream(path)

    def create_dir(self, path, recursive):
        self._fs.create_dir(path, recursive=recursive)

    def delete_dir(self, path):
        self._fs.delete_dir(path)

    def delete_dir_contents(self, path, missing_dir_ok=False):
        self._fs.delete_dir_contents(path, missing_dir_ok=missing_dir_ok)

    def delete_root_dir_contents(self):
        raise OSError("not here")

    def delete_file(self, path):
        self._fs.delete_file(path)

    def move(self, src, dest):
        self._fs.move(src, dest)

    def copy_file(self, src, dest):
        self._fs.copy_file(src, dest)

    def open_output_stream(self, path, metadata=None):
        return self._fs.open_output_stream(path)

    def open_append_stream(self, path, metadata=None):
        return self._fs.open_append_stream(path)
"""


def cells(store: Path, root: Path) -> list[str]:
    empty, broken = root / "cockpit-empty", root / "cockpit-broken"
    copy, flag = root / "cockpit-compacting", root / "compacting.flag"
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
        # A copy of the store, read through a filesystem a compaction can be made to
        # replace files under (see COMPACTING_FS).
        "import sys\nimport pyarrow.fs as pafs\n"
        f"sys.path.insert(0, {str(root)!r})\n"
        "from compacting_fs import Compacting\n"
        f"shutil.copytree(hist.location, {str(copy)!r})\n"
        f"files = pafs.PyFileSystem(Compacting({str(flag)!r}))\n"
        f"compacting = sk.quota_cockpit(sk.History({str(copy)!r}, filesystem=files))\n"
        "compacting",
    ]


@pytest.fixture(scope="module")
def store(jupyterlab: JupyterLab) -> Path:
    return jupyterlab.root / "cockpit-store"


@pytest.fixture(scope="module")
def page(jupyterlab: JupyterLab, browser_context: BrowserContext, store: Path) -> Iterator[Page]:
    (jupyterlab.root / "compacting_fs.py").write_text(COMPACTING_FS, encoding="utf-8")
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
        shown.locator(".sk-cockpit").nth(4).wait_for(timeout=NOTEBOOK_TIMEOUT_MS)
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


def exported(page: Page, expect: Expect, widget: Locator) -> pd.DataFrame:
    """The rows a cockpit exports as CSV (the Export button, then the download link).

    A link offered before the rows changed is withdrawn (it held rows no longer shown):
    clicked before the kernel answered the next Export, it gave the rows of before (the
    dark theme's compacted store in one CI run: ``used`` ten minutes short)."""
    link = widget.locator(".sk-download a.sk-csv-link")
    expect(link).to_have_count(0)
    widget.locator(".sk-export").click()
    expect(link).to_be_visible()
    with page.expect_download() as caught:
        link.click()
    text = Path(caught.value.path()).read_text(encoding="utf-8")
    return read_csv_exact(io.StringIO(text), index_col="index_id", keep_default_na=False)


def assert_forecast_limits(frame: pd.DataFrame, expected: pd.DataFrame) -> None:
    """The exported rows are ``expected``'s, every column: numbers exactly, instants to
    the second (as the CSV writes them), texts as they are."""
    assert sorted(frame.index) == sorted(expected.index)
    expected = expected.loc[frame.index]
    for column in expected.columns:
        got, want = frame[column], expected[column]
        if pd.api.types.is_datetime64_any_dtype(want):
            when = pd.to_datetime(got.replace("", None), utc=True)
            assert when.tolist() == want.dt.floor("s").tolist(), column
        elif pd.api.types.is_float_dtype(want):
            numbers = pd.to_numeric(got.replace("", np.nan)).to_numpy(np.float64)
            np.testing.assert_array_equal(numbers, want.to_numpy(np.float64), err_msg=column)
        else:
            assert got.astype(str).tolist() == want.astype(str).tolist(), column


def test_the_exported_csv_is_forecast_limits_of_the_rows_shown(
    page: Page, expect: Expect, store: Path
) -> None:
    frame = exported(page, expect, cockpit(page))
    assert_forecast_limits(frame, sk.forecast_limits(sk.History(store)))


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


@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_a_store_compacted_while_it_refreshes_says_so_and_loses_nothing(
    page: Page,
    expect: Expect,
    jupyterlab: JupyterLab,
    theme: str,
    save_screenshot: Callable[[Locator, str], Path],
) -> None:
    label = theme.split()[-1].lower()
    copy, flag = jupyterlab.root / "cockpit-compacting", jupyterlab.root / "compacting.flag"
    widget = page.locator(".sk-cockpit").nth(4)
    status = widget.locator(".sk-status")
    _switch_theme(page, theme)
    try:
        expect(widget.locator(f".sk-cockpit-picture img.sk-plot-{label}")).to_be_visible()
        before = status.inner_text()
        # A collector writes ten (twenty) more minutes, then a compaction starts: every
        # listing of a day shows a file it already replaced.
        minutes = 10 if label == "light" else 20
        collect(copy, days=1, clock=START + dt.timedelta(days=DAYS - 1, minutes=minutes))
        flag.write_text("compacting")
        widget.locator(".sk-refresh").click()
        expect(status).to_contain_text("kept changing while it was read")
        expect(status).to_contain_text("nothing is lost: try again")
        expect(status).to_contain_text("The previous table stays.")
        expect(widget.locator(".sk-cockpit-rows select option").first).to_be_attached()
        assert before != status.inner_text()
        save_screenshot(widget, f"cockpit-{label}-compacting")
        # The compaction ends (the day's files merged into one); a refresh reads them.
        flag.unlink()
        sk.History(copy).compact()
        widget.locator(".sk-refresh").click()
        newest = sk.History(copy).newest_time()
        assert newest is not None
        expect(status).to_contain_text(f"newest point {newest:%Y-%m-%d %H:%M} UTC")
        fresh = sk.forecast_limits(sk.History(copy))
        assert_forecast_limits(exported(page, expect, widget), fresh)
        # The picture too is drawn again as of the new instant (the screenshot shows it).
        picture = widget.locator(f".sk-cockpit-picture img.sk-plot-{label}")
        as_of = fresh["as_of"].iloc[0]
        expect(picture).to_have_attribute("alt", re.compile(f" as of {as_of:%H:%M} UTC "))
        save_screenshot(widget, f"cockpit-{label}-compacted")
        no_traceback = "[data-mime-type='application/vnd.jupyter.stderr']"
        assert page.locator(f".jp-OutputArea-output{no_traceback}").count() == 0
    finally:
        flag.unlink(missing_ok=True)
        _switch_theme(page, "JupyterLab Light")
