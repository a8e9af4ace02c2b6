"""Plots follow the notebook's theme (issue 28, item 9): a plot that names no theme takes
the one JupyterLab's settings say it shows, or ``SEARCHKIT_PLOT_THEME``'s."""

from __future__ import annotations

import json
import sys
import types

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

import searchkit as sk
from searchkit.errors import ValidationError
from tests.index_json import index_json

SETTINGS = "@jupyterlab/apputils-extension/themes.jupyterlab-settings"
POINTS = [{"x": f"2026-11-20 00:0{m}:00 +0000 UTC", "y": 1.0 + m} for m in range(5)]


def write_settings(folder, theme: str, **more) -> None:
    path = folder / "lab" / "user-settings" / SETTINGS
    path.parent.mkdir(parents=True, exist_ok=True)
    body = json.dumps({"theme": theme, **more}, indent=4)
    # As JupyterLab writes it: JSON5, with comments and a trailing comma.
    path.write_text(
        "{\n    // Theme\n    // @jupyterlab/apputils-extension:themes\n"
        + body.strip("{}").rstrip()
        + ",\n}\n",
        encoding="utf-8",
    )


@pytest.fixture
def kernel(monkeypatch, tmp_path):
    """As inside a kernel JupyterLab started: ipykernel loaded, JPY_* set, its config here."""
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))
    monkeypatch.setenv("JPY_SESSION_NAME", "/notebooks/04-usage-history.ipynb")
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("JUPYTERLAB_SETTINGS_DIR", raising=False)
    monkeypatch.delenv("SEARCHKIT_PLOT_THEME", raising=False)
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "prefix"))
    return tmp_path / "config"


def face_of_a_plot() -> str:
    ax = sk.plot_throughput([index_json("docs", id="i-1", throughput_vector=POINTS)])
    face = matplotlib.colors.to_hex(ax.figure.get_facecolor())
    plt.close(ax.figure)
    return face


def test_in_jupyterlab_dark_a_plot_naming_no_theme_is_drawn_dark(kernel):
    write_settings(kernel, "JupyterLab Dark")
    assert sk.notebook_theme() == "dark"
    assert face_of_a_plot() == "#111111"  # JupyterLab Dark's own background


def test_in_jupyterlab_light_it_is_drawn_light_and_a_switch_is_followed(kernel):
    write_settings(kernel, "JupyterLab Light")
    assert sk.notebook_theme() == "light"
    assert face_of_a_plot() == "#ffffff"
    write_settings(kernel, "JupyterLab Dark")  # the menu's Settings > Theme writes the file
    assert face_of_a_plot() == "#111111"


def test_a_theme_named_on_the_call_or_the_block_still_wins(kernel):
    write_settings(kernel, "JupyterLab Dark")
    ax = sk.plot_throughput([index_json("docs", id="i-1", throughput_vector=POINTS)], theme="light")
    assert matplotlib.colors.to_hex(ax.figure.get_facecolor()) == "#ffffff"
    plt.close(ax.figure)
    with sk.plot_theme("light"):
        assert face_of_a_plot() == "#ffffff"


def test_an_administrator_s_default_counts_when_the_user_chose_none(kernel, tmp_path):
    overrides = tmp_path / "prefix" / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    overrides.parent.mkdir(parents=True)
    overrides.write_text(
        json.dumps({"@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"}}),
        encoding="utf-8",
    )
    assert sk.notebook_theme() == "dark"


@pytest.mark.parametrize(
    ("setup", "why"),
    [
        ("nothing", "no settings file: matplotlib's own look"),
        ("adaptive", "JupyterLab follows the system's theme, which the kernel cannot see"),
        ("garbled", "a settings file that is no JSON says nothing"),
        ("no kernel", "a script, not a kernel JupyterLab started"),
    ],
)
def test_when_the_notebook_s_theme_cannot_be_told_plots_keep_matplotlib_s_look(
    kernel, monkeypatch, setup, why
):
    if setup == "adaptive":
        write_settings(kernel, "JupyterLab Dark", **{"adaptive-theme": True})
    elif setup == "garbled":
        write_settings(kernel, "JupyterLab Dark")
        path = kernel / "lab" / "user-settings" / SETTINGS
        path.write_text("{ theme: ", encoding="utf-8")
    elif setup == "no kernel":
        write_settings(kernel, "JupyterLab Dark")
        monkeypatch.delenv("JPY_SESSION_NAME")
        monkeypatch.delenv("JPY_PARENT_PID", raising=False)
    assert sk.notebook_theme() is None, why
    assert face_of_a_plot() == "#ffffff"


def test_the_environment_variable_decides_and_a_wrong_value_is_named(kernel, monkeypatch):
    write_settings(kernel, "JupyterLab Light")
    monkeypatch.setenv("SEARCHKIT_PLOT_THEME", "dark")
    assert face_of_a_plot() == "#111111"
    monkeypatch.setenv("SEARCHKIT_PLOT_THEME", "Light ")
    assert face_of_a_plot() == "#ffffff"
    monkeypatch.setenv("SEARCHKIT_PLOT_THEME", "purple")
    with pytest.raises(ValidationError) as refused:
        face_of_a_plot()
    assert str(refused.value) == (
        "SEARCHKIT_PLOT_THEME must be 'light', 'dark' or 'auto', got 'purple'"
    )
