"""Issue 28 item 4: every Python and shell block of the README runs, as written.

The blocks are taken from README.md in order. Python blocks run one after another in one
namespace (as a notebook would run them), in a scratch folder, with no service configured,
so ``sk.connect()`` starts the demo emulator. Shell blocks run with bash in a scratch folder
with the clone's ``.venv/bin`` first on the PATH (as after ``source .venv/bin/activate``),
against a demo emulator named by ``SEARCHKIT_BASE_URL``. The line before a block may say
more: ``<!-- readme-test: skip REASON -->`` (it cannot run here: skipped with that reason),
``<!-- readme-test: in-clone -->`` (a shell block run in the clone's own folder, as the
quick start's ``make demo`` is) or ``<!-- readme-test: file NAME -->`` (a file the other
blocks read, written to the scratch folder first).
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MARKER = re.compile(r"<!-- readme-test: (?P<what>skip|in-clone|file)\s*(?P<arg>.*?)\s*-->")
FENCE = re.compile(r"^```(?P<lang>\w*)\s*$")


class Block(NamedTuple):
    """One fenced block of the README."""

    lang: str
    line: int  #: the line of its opening fence, 1-based
    code: str
    marker: str  #: "skip", "in-clone", "file" or "" (the comment on the line before it)
    arg: str  #: the marker's reason or file name

    @property
    def id(self) -> str:
        return f"{self.lang}-line-{self.line}"


def readme_blocks(text: str) -> list[Block]:
    """The fenced blocks of ``text``, in order, each with its marker."""
    blocks: list[Block] = []
    lines = text.splitlines()
    number = 0
    while number < len(lines):
        fence = FENCE.match(lines[number])
        if not fence:
            number += 1
            continue
        end = next(i for i in range(number + 1, len(lines)) if lines[i].startswith("```"))
        before = lines[number - 1] if number else ""
        marker = MARKER.search(before)
        blocks.append(
            Block(
                fence["lang"],
                number + 1,
                "\n".join(lines[number + 1 : end]) + "\n",
                marker["what"] if marker else "",
                marker["arg"] if marker else "",
            )
        )
        number = end + 1
    return blocks


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))
PYTHON = [b for b in BLOCKS if b.lang == "python"]
SHELL = [b for b in BLOCKS if b.lang in ("sh", "bash", "shell")]


def test_the_readme_has_python_and_shell_blocks_and_every_fence_names_its_language():
    assert len(PYTHON) >= 3 and len(SHELL) >= 3
    assert all(b.lang for b in BLOCKS), [b.id for b in BLOCKS if not b.lang]


def test_a_skipped_block_says_why_and_the_notebook_block_runs():
    skipped = [b for b in BLOCKS if b.marker == "skip"]
    assert skipped and all(len(b.arg) > 10 for b in skipped)
    # The block new users paste first is not skipped (it used indexes["docs"]: a KeyError).
    notebook = next(b for b in PYTHON if "sk.connect()" in b.code)
    assert notebook.marker == "" and 'indexes["docs-search"]' in notebook.code


def test_the_quick_start_s_demo_weeks_go_to_a_store_of_their_own():
    # It collected into usage-history, which the history section then collects another
    # emulator (or the user's service) into: every index showed twice, under two ids.
    quick = next(b for b in PYTHON if "window_minutes=14 * 1440" in b.code)
    history = next(b for b in PYTHON if "hist.collect(client)" in b.code)
    assert 'sk.History("demo-history")' in quick.code
    assert 'sk.History("usage-history")' in history.code


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[pathlib.Path]:
    """A folder the blocks run in, holding the files the README shows (``file`` blocks)."""
    folder = tmp_path_factory.mktemp("readme")
    for block in BLOCKS:
        if block.marker == "file":
            (folder / block.arg).parent.mkdir(parents=True, exist_ok=True)
            (folder / block.arg).write_text(block.code, encoding="utf-8")
    yield folder


@pytest.fixture(scope="module")
def namespace(scratch: pathlib.Path) -> Iterator[dict[str, Any]]:
    """One namespace for the Python blocks, run in ``scratch`` with no service configured."""
    import matplotlib

    matplotlib.use("Agg")
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("SEARCHKIT_")}
    here = os.getcwd()
    os.chdir(scratch)
    names: dict[str, Any] = {"__name__": "__readme__"}
    try:
        yield names
    finally:
        import matplotlib.pyplot as plt

        plt.close("all")
        for value in names.values():
            close = getattr(value, "close", None)
            if type(value).__name__ == "Client" and callable(close):
                close()  # also stops a demo emulator sk.connect() started
        stop = getattr(names.get("emu"), "stop", None)
        if callable(stop):
            stop()
        os.chdir(here)
        os.environ.update(saved)


@pytest.mark.slow
@pytest.mark.parametrize("block", PYTHON, ids=[b.id for b in PYTHON])
def test_python_block_runs_as_written(block: Block, namespace: dict[str, Any]) -> None:
    if block.marker == "skip":
        pytest.skip(block.arg)
    code = compile(block.code, f"README.md:{block.line}", "exec")
    exec(code, namespace)  # noqa: S102 - the README's own code, the point of the test


@pytest.fixture(scope="module")
def demo_service() -> Iterator[dict[str, str]]:
    """The environment of a shell that talks to a demo emulator (as after `serve --demo`)."""
    from searchkit.emulator import Emulator

    with Emulator(demo=True, seed=2026, window_minutes=14 * 1440) as emu:
        yield {
            "SEARCHKIT_BASE_URL": emu.url,
            "SEARCHKIT_USERNAME": emu.username,
            "SEARCHKIT_PASSWORD": emu.password,
        }


@pytest.mark.slow
@pytest.mark.parametrize("block", SHELL, ids=[b.id for b in SHELL])
def test_shell_block_runs_as_written(
    block: Block, demo_service: dict[str, str], scratch: pathlib.Path
) -> None:
    if block.marker == "skip":
        pytest.skip(block.arg)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEARCHKIT_")}
    env.update(demo_service)
    env["PATH"] = f"{pathlib.Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["MPLBACKEND"] = "Agg"
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.code],
        cwd=ROOT if block.marker == "in-clone" else scratch,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, f"README.md:{block.line}\n{result.stdout}\n{result.stderr}"


def test_every_file_the_readme_shows_is_shipped_as_shown():
    """A file block (e.g. examples/alerts.toml) is in the repository, so blocks run as written."""
    files = [b for b in BLOCKS if b.marker == "file"]
    assert files
    for block in files:
        assert (ROOT / block.arg).read_text(encoding="utf-8") == block.code, block.arg
