"""The create form and the index browser, used as a person uses them: in JupyterLab.

Each test opens a fresh notebook in headless Chromium whose cells show the create form and
the index browser, works them with the keyboard and the mouse, and checks both what the
page shows and what the emulator received.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from searchkit.widgets import TYPE_LABELS

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from playwright.sync_api import Locator, Page

    from searchkit.emulator import Emulator

    from .conftest import Expect, RequestLog

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]

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


def test_index_browser_plots_the_selected_indexes_as_an_image(
    notebook: Page, expect: Expect, save_screenshot: Callable[[Locator, str], Path]
) -> None:
    browser = notebook.locator(".sk-browser")
    plot = browser.locator("img.sk-plot")
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
