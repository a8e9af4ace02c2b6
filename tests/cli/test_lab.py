"""``make lab`` / ``searchkit lab`` open copies, never the tracked notebooks (issue 28, item 13).

Opening the repository's ``notebooks/`` in place made every save a change of the repository
and of the notebooks the tests compare with, while the command said it "kept your copies".
No JupyterLab is started here: ``run_jupyterlab`` is replaced by a recorder.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess

import pytest

import searchkit.cli.lab as lab
from searchkit.cli.lab import copy_notebooks
from searchkit.cli.main import main
from searchkit.errors import ValidationError

REPO = pathlib.Path(__file__).resolve().parents[2]
NAMES = sorted(p.name for p in (REPO / "notebooks").glob("*.ipynb"))


@pytest.fixture
def opened(monkeypatch):
    """The folders JupyterLab would have been opened on (none is started)."""
    pytest.importorskip("jupyterlab")
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
