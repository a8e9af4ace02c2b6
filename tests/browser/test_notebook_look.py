"""What a new user sees in JupyterLab (issue 19): the demo notice is a calm note, the index
table fits the notebook with every limit one click away, the limit statistics read with
separators, and a plot drawn with ``theme="dark"`` is no white block in JupyterLab Dark.

Each test leaves a screenshot in tests/browser/artifacts/ to look at.
"""

from __future__ import annotations

import base64
import io
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat
import numpy as np
import pytest

from .conftest import NOTEBOOK_TIMEOUT_MS, JupyterLab, _kernel_idle

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Locator, Page

    from .conftest import Expect

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

CELLS = (
    # As a user without a configured service: the demo emulator, and its notice.
    "import os\n"
    "for name in ('SEARCHKIT_BASE_URL', 'SEARCHKIT_USERNAME', 'SEARCHKIT_PASSWORD'):\n"
    "    os.environ.pop(name, None)\n"
    "import datetime as dt\n"
    "import searchkit as sk\n"
    "client = sk.connect(seed=7, clock=dt.datetime(2026, 11, 20, 12, tzinfo=dt.timezone.utc))",
    "indexes = client.list_indexes()\nindexes",
    "sk.limits_summary(indexes)",
    "ax = sk.plot_throughput(indexes, resample='15min', theme='dark')",
)
#: Narrower than a laptop screen: the default table must fit even here.
VIEWPORT = {"width": 1100, "height": 2200}


@pytest.fixture(scope="module")
def page(jupyterlab: JupyterLab, browser_context: BrowserContext) -> Iterator[Page]:
    """One notebook of CELLS, every cell run, shown at VIEWPORT."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nbformat.write(notebook, str(jupyterlab.root / "look.ipynb"))
    shown = browser_context.new_page()
    shown.set_viewport_size(VIEWPORT)
    try:
        shown.goto(f"{jupyterlab.url}/doc/workspaces/look/tree/look.ipynb")
        shown.locator(".jp-Notebook .jp-CodeCell").first.wait_for(timeout=NOTEBOOK_TIMEOUT_MS)
        _kernel_idle(shown)
        shown.get_by_role("menuitem", name="Run", exact=True).click()
        shown.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        last = shown.locator(".jp-CodeCell").nth(len(CELLS) - 1)
        last.locator(".jp-OutputArea-output img").wait_for(timeout=NOTEBOOK_TIMEOUT_MS)
        _kernel_idle(shown)
        yield shown
    finally:
        shown.close()


def output_of(page: Page, cell: int) -> Locator:
    return page.locator(".jp-CodeCell").nth(cell).locator(".jp-OutputArea")


def test_the_demo_notice_is_a_calm_note_not_a_red_stderr_box(
    page: Page, expect: Expect, save_screenshot: Callable[[Locator, str], Path]
) -> None:
    first = output_of(page, 0)
    note = first.locator(".sk-note")
    expect(note).to_have_text(
        re.compile(
            r"^searchkit: SEARCHKIT_BASE_URL is not set, so a demo emulator was started at "
            r"http://127\.0\.0\.1:\d+ \(synthetic data, nothing leaves this machine\)$"
        )
    )
    assert page.locator("[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
    red, green, blue = _rgb(note.evaluate("el => getComputedStyle(el).color"))
    assert not (red > 150 and green < 100 and blue < 100), "the note is drawn in red"
    save_screenshot(first, "demo-notice-note")


def test_the_index_table_fits_the_notebook_and_opens_every_limit_on_demand(
    page: Page, expect: Expect, save_screenshot: Callable[[Locator, str], Path]
) -> None:
    area = output_of(page, 1)
    compact = area.locator("table.sk-list").first
    expect(compact).to_be_visible()
    heads = compact.locator("th").all_inner_texts()
    assert heads == [
        "name", "id", "type", "region",
        "queries / day", "updates / day", "queries / s", "writes / s",
    ]  # fmt: skip
    room = area.bounding_box()
    table = compact.bounding_box()
    assert room is not None and table is not None
    print(f"index table {table['width']:.0f} px wide in an output {room['width']:.0f} px wide")
    assert table["x"] + table["width"] <= room["x"] + room["width"]
    full = area.locator("details.sk-details table.sk-list")
    expect(full).to_be_hidden()
    save_screenshot(area, "index-table-fits")
    area.locator("details.sk-details summary").click()
    expect(full).to_be_visible()
    assert len(full.locator("th").all_inner_texts()) == 15
    save_screenshot(area, "index-table-details-open")


def test_limit_statistics_read_with_separators_and_units(
    page: Page, save_screenshot: Callable[[Locator, str], Path]
) -> None:
    area = output_of(page, 2)
    text = area.inner_text()
    assert re.search(r"\d{1,3}(,\d{3}){2,}", text), text  # e.g. 1,000,000,000
    assert re.search(r"\d+(\.\d+)? [KMGT]?B\b", text), text  # bandwidth in byte units
    assert not re.search(r"\d{7,}", text), text  # no 1050000000
    save_screenshot(area, "limits-summary")


def test_a_dark_themed_plot_is_no_white_block_in_jupyterlab_dark(
    page: Page, save_screenshot: Callable[[Locator, str], Path]
) -> None:
    from matplotlib.image import imread

    image = output_of(page, 3).locator("img").first
    source = image.get_attribute("src") or ""
    assert source.startswith("data:image/png;base64,")
    pixels = imread(io.BytesIO(base64.b64decode(source.split(",", 1)[1])), format="png")
    corner = np.round(pixels[2, 2, :3] * 255).astype(int).tolist()
    assert corner == [17, 17, 17]  # JupyterLab Dark's own background, #111111
    try:
        _switch_theme(page, "JupyterLab Dark")
        shot = save_screenshot(output_of(page, 3), "plot-theme-dark-in-jupyterlab-dark")
        seen = imread(shot)[..., :3]
        print(f"mean brightness of the dark plot in JupyterLab Dark: {seen.mean():.3f}")
        assert seen.mean() < 0.3  # a white block would be near 1
    finally:
        _switch_theme(page, "JupyterLab Light")


def _switch_theme(page: Page, name: str) -> None:
    def item(label: str) -> Locator:
        return page.locator(f".lm-Menu-item:has(.lm-Menu-itemLabel:text-is('{label}'))")

    page.locator(".lm-MenuBar-itemLabel", has_text="Settings").click()
    item("Theme").first.hover()
    item(name).first.click()
    light = "true" if name == "JupyterLab Light" else "false"
    page.locator(f'body[data-jp-theme-light="{light}"]').wait_for(state="attached")


def _rgb(css: str) -> tuple[int, int, int]:
    red, green, blue = (int(float(v)) for v in re.findall(r"[\d.]+", css)[:3])
    return red, green, blue
