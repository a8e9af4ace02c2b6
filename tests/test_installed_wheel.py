"""The package as a user gets it: the built wheel, installed with its ``notebooks`` extra
into a fresh virtual environment, runs every example notebook it ships.

Nothing of the repository is on the path there: the notebooks are the ones inside the
installed package, run from an empty folder with the venv's own kernel.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


def run(*argv: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, (
        f"{argv} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A fresh venv holding the built wheel with ``[notebooks]``, and an environment for it."""
    work = tmp_path_factory.mktemp("wheel")
    run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--quiet",
        "-w",
        work / "dist",
        ROOT,
        cwd=work,
    )
    (wheel,) = (work / "dist").glob("searchkit-*.whl")
    run(sys.executable, "-m", "venv", work / "venv", cwd=work)
    python = work / "venv" / "bin" / "python"
    # The dependencies come from this test run's environment, added at the end of the new
    # venv's path (a .pth line: that folder's own .pth files, the editable searchkit among
    # them, are not read), so only the wheel itself is installed. A fresh install of the
    # Jupyter stack took 3 of this test's 5 minutes on 2 cores; that the wheel declares
    # what it needs is checked below against its own metadata instead.
    site_packages = Path(
        run(
            python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=work
        ).strip()
    )
    (site_packages / "_test_dependencies.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8"
    )
    run(python, "-m", "pip", "install", "--quiet", "--no-deps", wheel, cwd=work)
    # Jupyter's per-user folders point into the test's folder, so a kernel registered by the
    # developer (another Python) cannot stand in for the venv's own.
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SEARCHKIT_", "PYTHON", "JUPYTER"))
    }
    env.update(
        JUPYTER_DATA_DIR=str(work / "jupyter-data"),
        JUPYTER_CONFIG_DIR=str(work / "jupyter-config"),
        JUPYTER_RUNTIME_DIR=str(work / "jupyter-runtime"),
        PATH=f"{python.parent}{os.pathsep}{env.get('PATH', '')}",
        MPLBACKEND="Agg",
    )
    return python, env


#: Run in the venv: each requirement of the installed searchkit and of its ``notebooks``
#: extra, as "name: what satisfies it" (a version, or "missing" / "too old or new").
REQUIREMENTS = """
from importlib.metadata import PackageNotFoundError, requires, version
from packaging.requirements import Requirement

for text in requires("searchkit") or ():
    requirement = Requirement(text)
    if requirement.marker and not any(
        requirement.marker.evaluate({"extra": extra}) for extra in ("", "notebooks")
    ):
        continue
    try:
        found = version(requirement.name)
    except PackageNotFoundError:
        found = "missing"
    else:
        if not requirement.specifier.contains(found, prereleases=True):
            found = f"{found} is not {requirement.specifier}"
        else:
            found = "ok"
    print(f"{requirement.name.lower()}: {found}")
"""


def test_the_wheel_declares_what_it_and_its_notebooks_need(installed, tmp_path):
    python, env = installed
    lines = run(python, "-c", REQUIREMENTS, cwd=tmp_path, env=env).splitlines()
    assert sorted(lines) == [
        "duckdb: ok",
        "ipykernel: ok",
        "ipywidgets: ok",
        "jupyterlab: ok",
        "matplotlib: ok",
        "msgspec: ok",
        "numpy: ok",
        "pandas: ok",
        "pyarrow: ok",
        "requests: ok",
        "urllib3: ok",
        "wcwidth: ok",
        "werkzeug: ok",
    ]


def test_installed_wheel_runs_every_shipped_notebook(installed, tmp_path):
    python, env = installed
    where = run(
        python,
        "-c",
        "import searchkit, pathlib; print(pathlib.Path(searchkit.__file__).parent)",
        cwd=tmp_path,
        env=env,
    ).strip()
    package = Path(where)
    assert package.is_relative_to(python.parent.parent), f"imported {package}, not the venv's"
    shipped = sorted(p.name for p in (package / "notebooks").glob("*.ipynb"))
    assert (
        shipped
        == NOTEBOOKS
        == [
            "01-quickstart.ipynb",
            "02-throughput.ipynb",
            "03-create-index.ipynb",
            "04-usage-history.ipynb",
            "05-alerts.ipynb",
            "06-cockpit.ipynb",
        ]
    )

    for name in shipped:
        run(
            python,
            "-m",
            "nbconvert",
            "--to",
            "notebook",
            "--execute",
            "--ExecutePreprocessor.kernel_name=python3",
            "--ExecutePreprocessor.timeout=600",
            "--output-dir",
            tmp_path / "out",
            package / "notebooks" / name,
            cwd=tmp_path,
            env=env,
        )
        executed = json.loads((tmp_path / "out" / name).read_text(encoding="utf-8"))
        errors = [
            o
            for c in executed["cells"]
            for o in c.get("outputs", ())
            if o["output_type"] == "error"
        ]
        assert errors == [], f"{name}: {errors}"
        code = [c for c in executed["cells"] if c["cell_type"] == "code"]
        assert all(c["execution_count"] is not None for c in code), name
