"""The committed example notebooks: run top to bottom, no stray output, no secret anywhere.

They are committed with outputs so that readers see them on the web; nbval checks that the
outputs still match a fresh run. These tests check what nbval does not: that the saved
outputs and widget state hold no token or password, and nothing a reader should not see.
"""

from __future__ import annotations

import json
import re
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import pytest

from searchkit.emulator import Emulator

if TYPE_CHECKING:
    # Imported where a test reads a notebook (notebook_format), not by every xdist worker
    # that only collects this file.
    import nbformat

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
EXPECTED = (
    "01-quickstart.ipynb",
    "02-throughput.ipynb",
    "03-create-index.ipynb",
    "04-usage-history.ipynb",
    "05-alerts.ipynb",
    "06-cockpit.ipynb",
)
# 03 to 06 start sk.Emulator themselves: 03 creates indexes, 04 to 06 advance its clock.
CONNECTING = EXPECTED[:2]
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
CONNECT_NOTICE = re.compile(
    r"searchkit: SEARCHKIT_BASE_URL is not set, so a demo emulator was started at "
    r"http://127\.0\.0\.1:\d+ \(synthetic data, nothing leaves this machine\)"
)
SEED = re.compile(r"sk\.(?:connect|Emulator)\((?:\s*demo=True,)?\s*seed=(\d+)")
# More indexes than any notebook creates on top of the demo set.
EXTRA_INDEXES = 20


def notebook_format() -> ModuleType:
    """nbformat, imported without the IRI grammar jsonschema would build for its ``iri``
    format check (rfc3987-syntax, about 2 s of CPU): the notebook schema has no ``format``
    and nbformat validates without a format checker, so what it validates is the same."""
    if "nbformat" not in sys.modules and "rfc3987_syntax" not in sys.modules:
        sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]  # an ImportError
        try:
            import nbformat
        finally:
            del sys.modules["rfc3987_syntax"]
    import nbformat

    return nbformat


def load(name: str) -> nbformat.NotebookNode:
    return notebook_format().read(NOTEBOOKS / name, as_version=4)


def code_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [cell for cell in nb.cells if cell.cell_type == "code"]


def outputs(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [output for cell in code_cells(nb) for output in cell.outputs]


def output_texts(nb: nbformat.NotebookNode) -> list[str]:
    texts = []
    for output in outputs(nb):
        if output.output_type == "stream":
            texts.append(output.text)
        for mime, value in output.get("data", {}).items():
            if mime.startswith("text/"):
                texts.append(value if isinstance(value, str) else "".join(value))
    return texts


@cache
def demo_secrets(seed: int) -> frozenset[str]:
    """Every password and token a demo emulator with ``seed`` hands out to the notebooks.

    Ids, endpoints and tokens of a seeded emulator depend only on the seed and the order of
    creation, so the demo set plus a few more creates covers what the notebooks saw.
    """
    emulator = Emulator(demo=True, seed=seed)
    try:
        for n in range(EXTRA_INDEXES):
            emulator.store.create_index(
                emulator.account, name=f"extra-{n}", region="eu-west-1", type="free"
            )
        rows = emulator.store.list_indexes(emulator.account)
        secrets = {emulator.password}
        for row in rows:
            secrets.update((row["token"], row["read_only_token"]))
    finally:
        emulator.stop()
    assert all(secrets) and len(secrets) == 1 + 2 * len(rows)
    return frozenset(secrets)


def notebook_seed(nb: nbformat.NotebookNode) -> int:
    seeds = {int(m) for cell in code_cells(nb) for m in SEED.findall(cell.source)}
    assert len(seeds) == 1, f"expected one sk.connect(seed=...) call, found seeds {seeds}"
    return seeds.pop()


def test_the_example_notebooks_are_there():
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == list(EXPECTED)


@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_is_valid_and_was_run_top_to_bottom(name):
    nb = load(name)
    notebook_format().validate(nb)
    counts = [cell.execution_count for cell in code_cells(nb)]
    assert counts == list(range(1, len(counts) + 1)), counts


@pytest.mark.parametrize("name", CONNECTING)
def test_notebook_connects_to_a_seeded_demo_with_a_fixed_clock(name):
    nb = load(name)
    first = code_cells(nb)[0].source
    assert "sk.connect(seed=" in first and "clock=dt.datetime(" in first
    assert "tzinfo=dt.timezone.utc" in first


@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_uses_only_the_public_package_names(name):
    for cell in code_cells(load(name)):
        assert not re.search(r"(from|import) searchkit\.", cell.source), cell.source
        assert "._" not in cell.source.replace("sk._", ""), cell.source


@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_has_no_error_traceback_or_warning(name):
    nb = load(name)
    assert not [o for o in outputs(nb) if o.output_type == "error"]
    for text in output_texts(nb):
        assert "Traceback (most recent call last)" not in text
        assert "Warning" not in text, text[:300]


@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_writes_nothing_to_stderr_and_notes_the_demo_calmly(name):
    nb = load(name)
    stderr = [o.text for o in outputs(nb) if o.output_type == "stream" and o.name == "stderr"]
    assert stderr == []  # JupyterLab shows stderr in red, which reads as an error
    notes = [
        o.data
        for o in outputs(nb)
        if o.output_type == "display_data" and 'class="sk-note"' in o.data.get("text/html", "")
    ]
    if name not in CONNECTING:
        assert notes == []
        return
    assert len(notes) == 1
    assert CONNECT_NOTICE.fullmatch(notes[0]["text/plain"]), notes[0]["text/plain"]
    assert notes[0]["text/html"].endswith(f">{notes[0]['text/plain']}</div>")


@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_shows_no_local_path(name):
    for text in output_texts(load(name)):
        for folder in ("/work/", "/home/", "/root/", "/tmp/", "site-packages"):
            assert folder not in text, text[:300]


@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_file_holds_no_token_or_password(name):
    nb = load(name)
    raw = (NOTEBOOKS / name).read_text(encoding="utf-8")
    leaked = [s for s in demo_secrets(notebook_seed(nb)) if s in raw]
    assert not leaked, f"{len(leaked)} secret(s) of the demo emulator are in {name}"
    assert "Authorization" not in raw and "Basic " not in raw


@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_widget_state_holds_no_token_or_password(name):
    nb = load(name)
    shows_widgets = any(WIDGET_VIEW in o.get("data", {}) for o in outputs(nb))
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE)
    if not shows_widgets:
        assert state is None or not state.get("state")
        return
    assert state and state["state"], "widgets are shown, so their state should be saved"
    text = json.dumps(state, ensure_ascii=False)
    assert not [s for s in demo_secrets(notebook_seed(nb)) if s in text]
    if name == "03-create-index.ipynb":  # the created index's card is there, tokens masked
        assert "••••••••" in text


def test_the_notebook_that_creates_indexes_never_talks_to_the_configured_service():
    # With SEARCHKIT_BASE_URL set, sk.connect() made 03 create a payg (paid) index on the
    # user's service, and its second run stopped at IndexExistsError.
    nb = load("03-create-index.ipynb")
    sources = [cell.source for cell in code_cells(nb)]
    assert "sk.Emulator(demo=True, seed=2026, clock=dt.datetime(" in sources[0]
    assert "client = emu.client()" in sources[0]
    assert not [source for source in sources if "sk.connect(" in source]


def test_create_notebook_creates_with_the_form_and_shows_the_browser():
    nb = load("03-create-index.ipynb")
    sources = "\n".join(cell.source for cell in code_cells(nb))
    assert "sk.create_index_form(client)" in sources and ".submit()" in sources
    assert "sk.index_browser(client" in sources
    plain = "\n".join(output_texts(nb))
    assert "Created index 'from-the-form' in us-central1 on the free plan." in plain
