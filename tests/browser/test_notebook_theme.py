"""The example notebooks in JupyterLab Dark show no white figure blocks (issue 28, item 9).

A shipped notebook (its saved outputs cleared, as a first run has none) is opened in a
JupyterLab whose settings say "JupyterLab Dark", and every cell is run: each figure must be
drawn on the dark page's own background, not as a white block (a pixel check on a
screenshot of each figure). Then the theme is switched to JupyterLab Light from the menu
and the cells run again: the figures follow, light. The screenshots are kept in
tests/browser/artifacts/ (theme-*.png) to look at.
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat
import numpy as np
import pytest

from .conftest import NOTEBOOK_TIMEOUT_MS, JupyterLab, _kernel_idle
from .test_notebook_look import _switch_theme

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Locator, Page

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

REPO = pathlib.Path(__file__).resolve().parents[2]
#: Two figures: one plot of its own, and two plots on the Axes of one figure of the user's.
NOTEBOOK = "02-throughput.ipynb"
THEMES = "@jupyterlab/apputils-extension/themes.jupyterlab-settings"
_FIGURES = ".jp-OutputArea-output img"


def figures_in(name: str) -> int:
    notebook = nbformat.read(REPO / "notebooks" / name, as_version=4)
    return sum(
        "image/png" in output.get("data", {})
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
    )


@pytest.fixture(scope="module")
def dark_lab(chromium: str, browser_dir: Path) -> Iterator[JupyterLab]:
    """A JupyterLab whose user settings choose JupyterLab Dark, serving a copy of NOTEBOOK.

    No SEARCHKIT_* variables: the notebook starts its demo emulator, as a new user's does.
    """
    lab = JupyterLab(browser_dir / "theme-lab", {})
    settings = browser_dir / "theme-lab" / "jupyter" / "config" / "lab" / "user-settings"
    (settings / THEMES).parent.mkdir(parents=True, exist_ok=True)
    (settings / THEMES).write_text(json.dumps({"theme": "JupyterLab Dark"}), encoding="utf-8")
    notebook = nbformat.read(REPO / "notebooks" / NOTEBOOK, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbformat.write(notebook, str(lab.root / NOTEBOOK))
    try:
        yield lab.start()
    finally:
        lab.stop()


def run_all(page: Page, figures: int, before: list[str]) -> list[Locator]:
    """Run every cell; wait for ``figures`` new pictures (none of ``before``) and idleness."""
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    page.wait_for_function(
        """([count, old]) => {
            const shown = [...document.querySelectorAll('.jp-OutputArea-output img')];
            return shown.length === count && shown.every(i => !old.includes(i.src.slice(-80)));
        }""",
        arg=[figures, [source[-80:] for source in before]],
        timeout=NOTEBOOK_TIMEOUT_MS * 2,
    )
    _kernel_idle(page)
    traceback = page.locator("[data-mime-type='application/vnd.jupyter.stderr']").filter(
        has_text="Traceback"
    )
    assert traceback.count() == 0, "\n".join(traceback.all_inner_texts())
    return page.locator(_FIGURES).all()


def looks(shot: Path) -> tuple[list[int], float]:
    """The top-left pixel's colour and the share of near-white pixels of a screenshot."""
    from matplotlib.image import imread

    pixels = imread(shot)[..., :3]
    corner = np.round(pixels[3, 3] * 255).astype(int).tolist()
    return corner, float((pixels.min(axis=2) > 0.94).mean())


def test_the_notebook_s_figures_follow_jupyterlab_dark_then_light(
    dark_lab: JupyterLab,
    browser_context: BrowserContext,
    save_screenshot: Callable[[Locator, str], Path],
) -> None:
    expected = figures_in(NOTEBOOK)
    assert expected == 2
    page = browser_context.new_page()
    page.set_viewport_size({"width": 1300, "height": 1600})
    try:
        page.goto(f"{dark_lab.url}/doc/workspaces/theme/tree/{NOTEBOOK}")
        page.locator(".jp-Notebook .jp-CodeCell").first.wait_for(timeout=NOTEBOOK_TIMEOUT_MS)
        page.locator('body[data-jp-theme-light="false"]').wait_for(state="attached")
        _kernel_idle(page)
        dark = run_all(page, expected, [])
        seen = []
        for n, figure in enumerate(dark):
            figure.scroll_into_view_if_needed()
            seen.append(looks(save_screenshot(figure, f"theme-dark-{NOTEBOOK[:2]}-figure-{n}")))
        print(f"dark: top-left pixel and share of near-white pixels per figure: {seen}")
        assert [corner for corner, _ in seen] == [[17, 17, 17]] * expected  # #111111
        assert all(white < 0.01 for _, white in seen), seen  # no white block, no white frame
        save_screenshot(page.locator(".jp-Notebook"), f"theme-dark-{NOTEBOOK[:2]}-page")

        before = [figure.get_attribute("src") or "" for figure in dark]
        _switch_theme(page, "JupyterLab Light")
        light = run_all(page, expected, before)
        seen = []
        for n, figure in enumerate(light):
            figure.scroll_into_view_if_needed()
            seen.append(looks(save_screenshot(figure, f"theme-light-{NOTEBOOK[:2]}-figure-{n}")))
        print(f"light: top-left pixel and share of near-white pixels per figure: {seen}")
        assert [corner for corner, _ in seen] == [[255, 255, 255]] * expected
        assert all(white > 0.5 for _, white in seen), seen  # a light page's figure
    finally:
        page.close()
