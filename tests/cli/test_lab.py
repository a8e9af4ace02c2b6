"""``make lab`` / ``searchkit lab`` open copies, never the tracked notebooks (issue 28, item 13).

Opening the repository's ``notebooks/`` in place made every save a change of the repository
and of the notebooks the tests compare with, while the command said it "kept your copies".
No JupyterLab is started here: ``run_jupyterlab`` is replaced by a recorder.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import shutil
import subprocess
import sys

import pytest

import searchkit.cli.lab as lab
from searchkit.cli.lab import copy_notebooks
from searchkit.cli.main import main
from searchkit.errors import ValidationError

REPO = pathlib.Path(__file__).resolve().parents[2]
NAMES = sorted(p.name for p in (REPO / "notebooks").glob("*.ipynb"))


@pytest.fixture
def opened(monkeypatch, tmp_path):
    """The folders JupyterLab would have been opened on (none is started).

    JupyterLab's settings are read from an empty folder (no theme chosen), not the user's.
    """
    if importlib.util.find_spec("jupyterlab") is None:  # found, not imported (~1.5 s)
        pytest.skip("JupyterLab is not installed")
    monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(tmp_path / "lab-settings"))
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "prefix"))
    folders: list[str] = []

    def record(folder: str) -> int:
        folders.append(folder)
        return 0

    monkeypatch.setattr(lab, "run_jupyterlab", record)
    return folders


def test_the_folder_the_notebooks_ship_from_is_refused(tmp_path):
    before = {name: (REPO / "notebooks" / name).read_bytes() for name in NAMES}
    with pytest.raises(ValidationError) as refused:
        copy_notebooks(REPO / "notebooks")
    assert str(refused.value) == (
        f"{str(REPO / 'notebooks')!r} is where the example notebooks ship from: give another "
        "folder for the copies (the default, searchkit-notebooks/, is one a clone's git ignores)"
    )
    assert {name: (REPO / "notebooks" / name).read_bytes() for name in NAMES} == before


def test_lab_on_the_tracked_notebooks_says_so_and_opens_nothing(opened, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    assert main(["lab", "--dir", "notebooks"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (
        "searchkit lab: 'notebooks' is where the example notebooks ship from: give another "
        "folder for the copies (the default, searchkit-notebooks/, is one a clone's git ignores)"
    )
    assert opened == []


def test_lab_copies_then_opens_the_copies_and_says_so_truthfully(opened, capsys, tmp_path):
    folder = tmp_path / "mine"
    assert main(["lab", "--dir", str(folder)]) == 0
    assert capsys.readouterr().err.splitlines() == [
        f"searchkit: copied the {len(NAMES)} example notebooks to {folder}: the copies are "
        "yours to change, the shipped notebooks stay as they are",
        f"searchkit: opening JupyterLab on {folder}",
    ]
    assert opened == [str(folder)]
    assert sorted(p.name for p in folder.iterdir()) == NAMES
    (folder / NAMES[0]).write_text("my edits", encoding="utf-8")
    (folder / NAMES[1]).unlink()
    assert main(["lab", "--dir", str(folder)]) == 0
    kept = ", ".join(n for n in NAMES if n != NAMES[1])
    assert capsys.readouterr().err.splitlines() == [
        f"searchkit: copied {NAMES[1]} to {folder}: the copies are yours to change, the "
        "shipped notebooks stay as they are",
        f"searchkit: kept your copies of {kept} in {folder} as you left them (delete one to "
        "get the shipped version again)",
        f"searchkit: opening JupyterLab on {folder}",
    ]
    assert (folder / NAMES[0]).read_text(encoding="utf-8") == "my edits"


@pytest.mark.skipif(not (shutil.which("make") and shutil.which("git")), reason="needs make, git")
def test_make_lab_copies_into_a_folder_git_ignores():
    plan = subprocess.run(
        ["make", "-n", "lab"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    (command,) = [line for line in plan if "searchkit lab" in line]
    assert command.endswith("/python -m searchkit lab --dir searchkit-notebooks")
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", "searchkit-notebooks/01-quickstart.ipynb"], cwd=REPO
    )
    assert ignored.returncode == 0


def figures(notebook: pathlib.Path) -> int:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return sum("image/png" in o.get("data", {}) for c in cells for o in c.get("outputs", []))


def test_for_a_dark_jupyterlab_the_copies_leave_out_their_light_figures(opened, capsys, tmp_path):
    # Saved figures are drawn light: in JupyterLab Dark they were white blocks until run.
    themes = tmp_path / "lab-settings" / "@jupyterlab" / "apputils-extension"
    themes.mkdir(parents=True)
    (themes / "themes.jupyterlab-settings").write_text(
        '{\n    // Theme\n    "theme": "JupyterLab Dark",\n}\n', encoding="utf-8"
    )
    folder = tmp_path / "mine"
    assert main(["lab", "--dir", str(folder)]) == 0
    assert capsys.readouterr().err.splitlines()[1] == (
        "searchkit: JupyterLab here shows a dark theme: the copies leave out their saved "
        "figures (drawn light); run the cells to draw them dark"
    )
    shipped = REPO / "notebooks" / "02-throughput.ipynb"
    copy = folder / "02-throughput.ipynb"
    assert (figures(shipped), figures(copy)) == (2, 0)
    before, after = (json.loads(p.read_text(encoding="utf-8"))["cells"] for p in (shipped, copy))
    assert [c["source"] for c in after] == [c["source"] for c in before]
    texts = [
        [o for o in c.get("outputs", []) if "image/png" not in o.get("data", {})] for c in before
    ]
    assert [c.get("outputs", []) for c in after] == texts
