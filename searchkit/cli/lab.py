"""``searchkit lab``: the example notebooks copied out of the package, JupyterLab on them.

JupyterLab runs as a child process that ends with ``searchkit lab``: SIGTERM or Ctrl-C to
searchkit stop it too, so no server is left on its port.
"""

from __future__ import annotations

import os
import pathlib
import sys
from typing import Any

from searchkit.cli.parser import DEFAULT_LAB_DIR
from searchkit.errors import ConfigError, ValidationError

__all__ = ["copy_notebooks", "lab_words", "run_jupyterlab"]


def copy_notebooks(
    folder: str | pathlib.Path, *, without_figures: bool = False
) -> tuple[list[str], list[str]]:
    """Copy the example notebooks shipped with searchkit into ``folder``.

    With ``without_figures`` the copies leave out their saved figures (pictures drawn in
    the light theme: white blocks in a dark JupyterLab, until the cells run again).

    Files already in ``folder`` are kept as they are (never overwritten). The folder
    the notebooks ship from is refused: in a clone that is the repository's
    ``notebooks/``, whose files the tests compare with, and opening them there would
    change them as they are saved.

    Returns:
        The names copied and the names kept.

    Raises:
        ConfigError: this installation of searchkit holds no notebooks.
        ValidationError: ``folder`` is the one they ship from.
        OSError: the folder cannot be created or written.
    """
    import importlib.resources

    shipped = importlib.resources.files("searchkit") / "notebooks"
    names = sorted(
        entry.name
        for entry in (shipped.iterdir() if shipped.is_dir() else ())
        if entry.name.endswith(".ipynb")
    )
    if not names:
        raise ConfigError("this installation of searchkit holds no example notebooks")
    target = pathlib.Path(folder)
    if _same_folder(target, shipped):
        raise ValidationError(
            f"{str(folder)!r} is where the example notebooks ship from: give another folder "
            f"for the copies (the default, {DEFAULT_LAB_DIR}/, is one a clone's git ignores)"
        )
    target.mkdir(parents=True, exist_ok=True)
    copied, kept = [], []
    for name in names:
        path = target / name
        if path.exists():
            kept.append(name)
            continue
        raw = (shipped / name).read_bytes()
        path.write_bytes(_without_figures(raw) if without_figures else raw)
        copied.append(name)
    return copied, kept


def _without_figures(raw: bytes) -> bytes:
    """A notebook's bytes without its figure outputs (PNG pictures); all else as it was."""
    import json

    notebook = json.loads(raw)
    for cell in notebook.get("cells", []):
        if "outputs" in cell:
            cell["outputs"] = [
                output for output in cell["outputs"] if "image/png" not in output.get("data", {})
            ]
    return (json.dumps(notebook, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def lab_words(
    folder: str | pathlib.Path, copied: list[str], kept: list[str], *, dark: bool = False
) -> list[str]:
    """Say what ``copy_notebooks`` did and where JupyterLab opens, one line each
    (``dark``: the copies were made without their figures, for a dark JupyterLab)."""
    where = pathlib.Path(folder).resolve()
    lines = []
    if copied:
        many = f"the {len(copied)} example notebooks" if len(copied) > 1 else copied[0]
        lines.append(
            f"copied {many} to {where}: the copies are yours to change, the shipped "
            "notebooks stay as they are"
        )
    if copied and dark:
        lines.append(
            "JupyterLab here shows a dark theme: the copies leave out their saved figures "
            "(drawn light); run the cells to draw them dark"
        )
    if kept:
        lines.append(
            f"kept your copies of {', '.join(kept)} in {where} as you left them "
            "(delete one to get the shipped version again)"
        )
    lines.append(f"opening JupyterLab on {where}")
    return lines


def _same_folder(target: pathlib.Path, shipped: Any) -> bool:
    """Whether ``target`` is the shipped notebooks' folder (through any symbolic link)."""
    try:
        return target.exists() and os.path.samefile(target, pathlib.Path(str(shipped)))
    except OSError:  # the package is in a zip: its folder is no folder of ours
        return False


def run_jupyterlab(folder: str) -> int:
    """Run JupyterLab on ``folder`` with this interpreter until it ends or is signalled.

    Returns:
        JupyterLab's exit status, or 0 when searchkit was told to stop it.
    """
    import subprocess

    command = [sys.executable, "-m", "jupyterlab", folder]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        # Containers and CI-like machines run as root, where JupyterLab refuses to start.
        print("searchkit: running as root, so JupyterLab gets --allow-root", file=sys.stderr)
        command.append("--allow-root")
    return _run_until_signalled(subprocess.Popen(command))


def _run_until_signalled(process: Any) -> int:
    """Wait for ``process``; SIGTERM or Ctrl-C here stop it too, so no server is left behind.

    JupyterLab shuts its kernels down on SIGTERM; it is killed only if it has not ended
    10 s later.
    """
    import signal
    import subprocess

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread: signals stay with whoever owns them
        previous = None
    try:
        return int(process.wait())
    except KeyboardInterrupt:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        print("searchkit: JupyterLab stopped", file=sys.stderr)
        return 0
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
