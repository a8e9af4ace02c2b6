"""The create form and the index browser, used as a person uses them: in JupyterLab.

Each test opens a fresh notebook in headless Chromium whose cells show the create form and
the index browser, works them with the keyboard and the mouse, and checks both what the
page shows and what the emulator received.
"""

from __future__ import annotations

import base64
import re
import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from searchkit.ui.form import TYPE_LABELS

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from playwright.sync_api import BrowserContext, Locator, Page

    from searchkit.emulator import Emulator

    from .conftest import Expect, JupyterLab, RequestLog

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

#: How long the emulator takes to answer while a double click is tested, in seconds.
SLOW_ANSWER_S = 1.5
#: How long the page answers a create in, at most, with the emulator's delay and a busy CPU.
CREATE_TIMEOUT_MS = 30_000


@dataclass(frozen=True)
class Form:
    """The parts of one create form on the page."""

    root: Locator

    @classmethod
    def first_on(cls, page: Page) -> Form:
        # The first cell's form; the index browser embeds a second one.
        return cls(page.locator(".jp-CodeCell").first.locator(".sk-create-form"))

    @property
    def name(self) -> Locator:
        return self.root.locator(".sk-name input")

    @property
    def region(self) -> Locator:
        return self.root.locator(".sk-region select")

    @property
    def plan(self) -> Locator:
        return self.root.locator(".sk-type select")

    @property
    def create(self) -> Locator:
        return self.root.locator(".sk-create-button")

    @property
    def output(self) -> Locator:
        return self.root.locator(".sk-output")


def _indexes_by_id(emulator: Emulator) -> dict[str, dict]:
    return {index["id"]: index for index in emulator.store.list_indexes(emulator.account)}


def _secrets(emulator: Emulator) -> list[str]:
    """Every text that would betray a secret: each index's tokens and the account login."""
    texts = [emulator.password]
    texts.append(base64.b64encode(f"{emulator.username}:{emulator.password}".encode()).decode())
    for index in emulator.store.list_indexes(emulator.account):
        texts += [index["token"], index["read_only_token"]]
    return [text for text in texts if text]


def test_create_makes_exactly_the_typed_index_and_shows_its_card_with_tokens_masked(
    notebook: Page,
    expect: Expect,
    lab_emulator: Emulator,
    request_log: RequestLog,
    save_screenshot: Callable[[Locator, str], Path],
) -> None:
    form = Form.first_on(notebook)
    before = _indexes_by_id(lab_emulator)
    posts = request_log.count("POST")

    form.name.click()
    form.name.press_sequentially("browser-docs", delay=20)
    form.region.select_option("us-central1")
    form.plan.select_option(TYPE_LABELS["payg"])
    form.create.click()

    card = form.output.locator(".sk-card")
    expect(card).to_be_visible(timeout=CREATE_TIMEOUT_MS)
    after = _indexes_by_id(lab_emulator)
    created = [index for key, index in after.items() if key not in before]
    assert [(i["name"], i["region"], i["type"]) for i in created] == [
        ("browser-docs", "us-central1", "payg")
    ]
    assert len(after) == len(before) + 1
    assert request_log.count("POST") == posts + 1
    index = created[0]
    expect(card.locator("h4")).to_have_text("browser-docs")
    expect(card).to_contain_text(index["endpoint"])
    expect(card).to_contain_text(index["id"])
    expect(card.locator(".sk-masked")).to_have_count(2)
    expect(form.output.locator(".sk-success")).to_contain_text("browser-docs")

    page_html = notebook.content()
    leaked = [secret for secret in _secrets(lab_emulator) if secret in page_html]
    assert not leaked, f"{len(leaked)} secret(s) of the emulator appear in the page's HTML"
    assert save_screenshot(form.root, "create-form").stat().st_size > 0


def test_double_click_on_create_sends_one_request_and_makes_one_index(
    notebook: Page, expect: Expect, lab_emulator: Emulator, request_log: RequestLog
) -> None:
    form = Form.first_on(notebook)
    form.name.fill("browser-double-click")
    before = _indexes_by_id(lab_emulator)
    posts = request_log.count("POST")

    lab_emulator.delay = SLOW_ANSWER_S
    try:
        form.create.dblclick()
        # The button is disabled while the slow request runs.
        expect(form.create).to_be_disabled()
        expect(form.output.locator(".sk-card")).to_be_visible(timeout=CREATE_TIMEOUT_MS)
    finally:
        lab_emulator.delay = 0.0
    # A second request, had the second click sent one, would start right after the first.
    notebook.wait_for_timeout(1_000)

    assert request_log.count("POST") == posts + 1
    after = _indexes_by_id(lab_emulator)
    assert [i["name"] for key, i in after.items() if key not in before] == ["browser-double-click"]


def test_empty_or_blank_name_shows_the_validation_message_and_sends_nothing(
    notebook: Page, expect: Expect, lab_emulator: Emulator, request_log: RequestLog
) -> None:
    form = Form.first_on(notebook)
    count = lab_emulator.store.count_indexes()
    posts = request_log.count("POST")
    error = form.output.locator(".sk-error")

    form.create.click()
    expect(error).to_be_visible()
    expect(error).to_contain_text(re.compile(r"\bname\b", re.IGNORECASE))

    form.name.fill("   ")
    form.create.click()
    expect(error).to_contain_text(re.compile(r"\bblank\b", re.IGNORECASE))
    expect(form.create).to_be_enabled()

    assert request_log.count("POST") == posts
    assert lab_emulator.store.count_indexes() == count


def test_enter_creates_and_an_old_error_clears_when_the_name_is_fixed(
    notebook: Page, expect: Expect, lab_emulator: Emulator, request_log: RequestLog
) -> None:
    form = Form.first_on(notebook)
    error = form.output.locator(".sk-error")
    form.name.fill("   ")
    form.name.press("Enter")
    expect(error).to_contain_text(re.compile(r"\bblank\b", re.IGNORECASE))
    posts = request_log.count("POST")

    form.name.fill("browser-enter")
    expect(error).to_have_count(0)  # the error was about the name as it was
    form.name.press("Enter")
    expect(form.output.locator(".sk-card h4")).to_have_text(
        "browser-enter", timeout=CREATE_TIMEOUT_MS
    )
    assert request_log.count("POST") == posts + 1


def test_index_browser_plots_the_selected_indexes_as_an_image(
    notebook: Page, expect: Expect, save_screenshot: Callable[[Locator, str], Path]
) -> None:
    browser = notebook.locator(".sk-browser")
    plot = browser.locator(".sk-plot img.sk-plot-light")
    indexes = browser.locator(".sk-select select")
    hint = browser.locator(".sk-plot-hint")

    indexes.select_option([])
    expect(plot).to_be_hidden()
    expect(hint).to_be_visible()

    indexes.select_option(["product-catalog", "news-archive"])
    expect(plot).to_be_visible()
    expect(plot).to_have_attribute("src", re.compile(r"^(blob:|data:image/)"))
    notebook.wait_for_function(
        "img => img.complete && img.naturalWidth > 0 && img.naturalHeight > 0",
        arg=plot.element_handle(),
    )
    width, height = plot.evaluate("img => [img.naturalWidth, img.naturalHeight]")
    assert width > 100 and height > 100
    expect(hint).to_be_hidden()
    assert save_screenshot(browser, "index-browser").stat().st_size > 0


# --- issue 12.6: the browser fits, says what it waits for and what went wrong -----------


def test_browser_table_fits_the_widget_and_details_open_on_demand(
    notebook: Page, expect: Expect, save_screenshot: Callable[[Locator, str], Path]
) -> None:
    browser = notebook.locator(".sk-browser")
    table = browser.locator(".sk-table")
    expect(table.locator("th", has_text="queries / day")).to_be_visible()
    expect(table.locator("th", has_text="writes / s")).to_be_visible()
    # No horizontal scroll: the columns that matter fit in the widget's width.
    scroll, client = table.evaluate("el => [el.scrollWidth, el.clientWidth]")
    assert scroll <= client, f"the table is {scroll} px wide in a {client} px box"
    # One line per row: no cell wraps.
    heights = table.locator("tbody tr").evaluate_all("rows => rows.map(r => r.offsetHeight)")
    assert heights and max(heights) < 2 * min(heights), heights

    details = browser.locator(".sk-details")
    expect(details.locator(".sk-card")).to_be_hidden()
    details.get_by_text("Details of the selected indexes").click()
    expect(details.locator(".sk-card").first).to_be_visible()
    expect(details.locator(".sk-card h4").first).to_have_text("docs-search")
    save_screenshot(browser, "index-browser-details")


def test_refresh_shows_a_busy_state_while_it_waits(
    notebook: Page, expect: Expect, lab_emulator: Emulator, request_log: RequestLog
) -> None:
    browser = notebook.locator(".sk-browser")
    refresh = browser.locator(".sk-refresh")
    lists = request_log.count("GET")
    lab_emulator.delay = SLOW_ANSWER_S
    try:
        refresh.click()
        expect(browser.locator(".sk-status .sk-busy")).to_contain_text("Listing the indexes")
        expect(refresh).to_be_disabled()
        # The kernel is free meanwhile: the time zone can change while the list is awaited.
        browser.locator(".sk-tz select").select_option("Asia/Tokyo")
        expect(browser.locator(".sk-status .sk-info")).to_contain_text(
            "indexes at", timeout=CREATE_TIMEOUT_MS
        )
    finally:
        lab_emulator.delay = 0.0
    expect(refresh).to_be_enabled()
    assert request_log.count("GET") == lists + 1


BAD_CREDENTIALS_CELL = """import os

import searchkit as sk

wrong = sk.Client(
    base_url=os.environ["SEARCHKIT_BASE_URL"],
    username=os.environ["SEARCHKIT_USERNAME"],
    password="not-the-password",
)
sk.index_browser(wrong)"""


def test_bad_credentials_show_one_message_no_broken_image_and_no_create_form(
    jupyterlab: JupyterLab,
    browser_context: BrowserContext,
    expect: Expect,
    save_screenshot: Callable[[Locator, str], Path],
) -> None:
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(BAD_CREDENTIALS_CELL)]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nbformat.write(notebook, str(jupyterlab.root / "bad-credentials.ipynb"))
    page = browser_context.new_page()
    try:
        page.goto(f"{jupyterlab.url}/doc/workspaces/bad-credentials/tree/bad-credentials.ipynb")
        page.locator(".jp-Notebook .jp-CodeCell").first.wait_for()
        status = page.locator(".jp-StatusBar-TextItem").filter(
            has_text=re.compile(r"^(?!No Kernel).+ \| Idle$")
        )
        expect(status).to_have_count(1, timeout=90_000)
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        browser = page.locator(".sk-browser")
        error = browser.locator(".sk-status .sk-error")
        expect(error).to_contain_text(
            "did not accept the username and password", timeout=CREATE_TIMEOUT_MS
        )
        expect(browser.locator(".sk-create-form")).to_be_hidden()
        expect(browser.locator(".sk-table")).to_be_hidden()
        assert browser.locator("img").count() == 0, "an image is shown though nothing was listed"
        assert "not-the-password" not in browser.inner_html()  # (the cell source has it)
        save_screenshot(browser, "index-browser-bad-credentials")
    finally:
        page.close()


# --- issue 12.4: a saved notebook opened untrusted from disk still reads well ------------


@pytest.fixture
def untrusted(
    jupyterlab: JupyterLab, browser_context: BrowserContext, screenshots: Path
) -> Callable[[str], Page]:
    """Return ``open(name)``: the saved example notebook, copied and opened, not run.

    The copy is untrusted: the test server has its own notebook-signing secret, so no
    saved output is trusted, as for a notebook a colleague sent.
    """
    from pathlib import Path

    pages: list[Page] = []
    source = Path(__file__).parents[2] / "notebooks"

    def open_saved(name: str) -> Page:
        shutil.copy(source / name, jupyterlab.root / f"untrusted-{name}")
        page = browser_context.new_page()
        pages.append(page)
        page.goto(f"{jupyterlab.url}/doc/workspaces/untrusted-{name[:2]}/tree/untrusted-{name}")
        page.locator(".jp-Notebook .jp-OutputArea-output").first.wait_for()
        return page

    yield open_saved
    for page in pages:
        page.close()


def test_untrusted_quickstart_shows_its_tables_with_their_layout(
    untrusted: Callable[[str], Page],
    expect: Expect,
    save_screenshot: Callable[[Locator, str], Path],
) -> None:
    page = untrusted("01-quickstart.ipynb")
    table = page.locator(".sk-list").first
    expect(table).to_be_visible()
    # The inline styles survived the sanitizer that strips <style> blocks.
    assert table.locator("td").first.evaluate("td => getComputedStyle(td).whiteSpace") == ("nowrap")
    heights = table.locator("tbody tr").evaluate_all("rows => rows.map(r => r.offsetHeight)")
    assert heights and max(heights) < 2 * min(heights), heights
    card = page.locator(".sk-card").first
    expect(card).to_be_visible()
    assert card.evaluate("el => getComputedStyle(el).borderTopStyle") == "solid"
    save_screenshot(table, "untrusted-quickstart-table")
    save_screenshot(card, "untrusted-quickstart-card")


def test_untrusted_create_notebook_shows_pictures_of_the_widgets(
    untrusted: Callable[[str], Page],
    expect: Expect,
    save_screenshot: Callable[[Locator, str], Path],
) -> None:
    page = untrusted("03-create-index.ipynb")
    form = page.locator(".sk-create-form-static").first
    expect(form).to_be_visible()
    expect(form).to_contain_text("Creates indexes at")
    browser = page.locator(".sk-browser-static").first
    expect(browser).to_be_visible()
    expect(browser.locator(".sk-list")).to_be_visible()
    image = browser.locator("img")
    expect(image).to_be_visible()
    width = image.evaluate("img => img.complete ? img.naturalWidth : 0")
    assert width > 100, "the saved plot is a broken image"
    assert not page.get_by_text("CreateIndexForm(base_url=").count()
    save_screenshot(form, "untrusted-create-form")
    save_screenshot(browser, "untrusted-index-browser")


# --- issue 12.7: readable in the dark theme too (keep this test last: it switches back) --


def _luminance(rgb: tuple[float, float, float]) -> float:
    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _colour(text: str) -> tuple[tuple[float, float, float], float]:
    """Parse a computed CSS colour: rgb()/rgba() or color(srgb r g b [/ a])."""
    numbers = [float(n) for n in re.findall(r"[\d.]+", text)]
    if text.startswith("color("):
        rgb = tuple(n * 255 for n in numbers[:3])
        alpha = numbers[3] if len(numbers) > 3 else 1.0
    else:
        rgb = tuple(numbers[:3])
        alpha = numbers[3] if len(numbers) > 3 else 1.0
    return (rgb[0], rgb[1], rgb[2]), alpha


_COLOURS_JS = """el => {
    let background = null;
    for (let node = el; node; node = node.parentElement) {
        const colour = getComputedStyle(node).backgroundColor;
        if (colour && colour !== 'rgba(0, 0, 0, 0)' && colour !== 'transparent') {
            background = colour; break;
        }
    }
    return [getComputedStyle(el).color, background || 'rgb(255, 255, 255)'];
}"""


def _contrast(cell: Locator) -> float:
    text, background = cell.evaluate(_COLOURS_JS)
    (fg, alpha), (bg, _) = _colour(text), _colour(background)
    shown = tuple(alpha * f + (1 - alpha) * b for f, b in zip(fg, bg, strict=True))
    lighter, darker = sorted((_luminance(shown), _luminance(bg)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def _switch_theme(page: Page, name: str) -> None:
    def item(label: str) -> Locator:
        # Lumino's menus: one .lm-Menu-item per entry, its text in .lm-Menu-itemLabel.
        return page.locator(f".lm-Menu-item:has(.lm-Menu-itemLabel:text-is('{label}'))")

    page.locator(".lm-MenuBar-itemLabel", has_text="Settings").click()
    item("Theme").first.hover()
    item(name).first.click()
    light = "true" if name == "JupyterLab Light" else "false"
    page.locator(f'body[data-jp-theme-light="{light}"]').wait_for(state="attached")


def test_browser_reads_well_in_the_light_and_the_dark_theme(
    notebook: Page, expect: Expect, save_screenshot: Callable[[Locator, str], Path]
) -> None:
    browser = notebook.locator(".sk-browser")
    browser.locator(".sk-select select").select_option(["docs-search", "news-archive"])
    light_plot = browser.locator(".sk-plot img.sk-plot-light")
    dark_plot = browser.locator(".sk-plot img.sk-plot-dark")
    expect(light_plot).to_be_visible()
    expect(dark_plot).to_be_hidden()
    # The new plot is there (its alt text names what it shows), not the one before.
    expect(light_plot).to_have_attribute("alt", re.compile("docs-search, news-archive"))
    unlimited = browser.locator(".sk-table .sk-unl").first
    expect(unlimited).to_be_visible()
    contrasts = {"light": _contrast(unlimited)}
    save_screenshot(browser, "index-browser-light")
    try:
        _switch_theme(notebook, "JupyterLab Dark")
        expect(dark_plot).to_be_visible()
        expect(light_plot).to_be_hidden()
        notebook.wait_for_function(
            "img => img.complete && img.naturalWidth > 0", arg=dark_plot.element_handle()
        )
        contrasts["dark"] = _contrast(unlimited)
        save_screenshot(browser, "index-browser-dark")
    finally:
        _switch_theme(notebook, "JupyterLab Light")
    print(f"contrast of 'unlimited': {contrasts}")
    assert min(contrasts.values()) >= 4.5, contrasts
