"""Which theme the notebook is shown in, so that the static plots can follow it.

A matplotlib figure in a notebook is a PNG: it cannot change with the page, and a default
one is a white block in JupyterLab Dark. The kernel cannot ask the browser, but JupyterLab
keeps the theme it shows in its settings, in files beside the server the kernel was started
by: ``<JUPYTER_CONFIG_DIR or ~/.jupyter>/lab/user-settings/@jupyterlab/apputils-extension/
themes.jupyterlab-settings`` (``JUPYTERLAB_SETTINGS_DIR`` moves the folder) and, for a
default an administrator chose, ``<sys.prefix>/share/jupyter/lab/settings/overrides.json``.
JupyterLab writes the first as soon as the theme is changed in its menu, so a plot drawn
after the change follows it; one drawn before stays as it was (run its cell again).

``SEARCHKIT_PLOT_THEME`` (``light``, ``dark`` or ``auto``, the default) decides instead,
for a kernel that is not JupyterLab's (VS Code, a remote server whose files are elsewhere)
or to pin one look (``make notebooks`` pins ``light``, so the saved pictures do not depend
on the machine that ran them).
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import sys
from typing import Literal

from searchkit.errors import ValidationError

__all__ = ["THEME_VARIABLE", "jupyterlab_theme", "notebook_theme"]

#: The environment variable that chooses the plots' theme: ``light``, ``dark`` or ``auto``.
THEME_VARIABLE = "SEARCHKIT_PLOT_THEME"
_PLUGIN = "@jupyterlab/apputils-extension"
_COMMENT = re.compile(r"^\s*//.*$", re.MULTILINE)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def notebook_theme() -> Literal["light", "dark"] | None:
    """Return the theme searchkit's plots take when they name none: the notebook's.

    ``SEARCHKIT_PLOT_THEME`` when it says ``light`` or ``dark``; else (``auto``, the
    default) the theme JupyterLab shows this kernel's notebook in, read from its settings
    files (see the module's notes): ``"dark"`` for a theme whose name says dark (JupyterLab
    Dark and the like), ``"light"`` for another. None outside a kernel a Jupyter server
    started, when no setting names a theme, or when JupyterLab follows the system's theme
    (the kernel cannot see the system's choice): matplotlib's own look. A figure drawn by
    hand can follow it too, e.g. with ``plt.style.context("dark_background")``.

    Raises:
        ValidationError: ``SEARCHKIT_PLOT_THEME`` is not light, dark or auto.

    Example:
        >>> sk.notebook_theme()  # doctest: +SKIP
        'dark'
    """
    value = os.environ.get(THEME_VARIABLE, "").strip().lower()
    if value == "light":
        return "light"
    if value == "dark":
        return "dark"
    if value not in ("", "auto"):
        raise ValidationError(
            f"{THEME_VARIABLE} must be 'light', 'dark' or 'auto', got "
            f"{os.environ[THEME_VARIABLE]!r}"
        )
    if "ipykernel" not in sys.modules or not (
        os.environ.get("JPY_SESSION_NAME") or os.environ.get("JPY_PARENT_PID")
    ):
        return None  # no kernel a Jupyter server started: its settings say nothing of us
    return jupyterlab_theme()


def jupyterlab_theme() -> Literal["light", "dark"] | None:
    """Return the theme JupyterLab's settings here choose (see :func:`notebook_theme`).

    For a kernel, or for ``searchkit lab`` before it starts JupyterLab with the same
    settings. None when no setting names one, or JupyterLab follows the system's theme.
    """
    for settings in (_user_settings(), _overrides()):
        if settings.get("adaptive-theme") is True:
            return None
        name = settings.get("theme")
        if isinstance(name, str) and name:
            return "dark" if "dark" in name.lower() else "light"
    return None


def _user_settings() -> dict[str, object]:
    folder = os.environ.get("JUPYTERLAB_SETTINGS_DIR")
    if not folder:
        config = os.environ.get("JUPYTER_CONFIG_DIR") or str(pathlib.Path.home() / ".jupyter")
        folder = str(pathlib.Path(config) / "lab" / "user-settings")
    return _read(pathlib.Path(folder) / _PLUGIN / "themes.jupyterlab-settings")


def _overrides() -> dict[str, object]:
    path = pathlib.Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    found = _read(path).get(f"{_PLUGIN}:themes")
    return found if isinstance(found, dict) else {}


def _read(path: pathlib.Path) -> dict[str, object]:
    """A settings file's JSON (JupyterLab's are JSON5: ``//`` comments, trailing commas)."""
    try:
        text = path.read_text(encoding="utf-8")
        found = json.loads(_TRAILING_COMMA.sub(r"\1", _COMMENT.sub("", text)))
    except (OSError, ValueError):  # absent, unreadable or not JSON: it says nothing
        return {}
    return found if isinstance(found, dict) else {}
