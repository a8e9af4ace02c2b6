"""Light and dark looks for the static plots, and the colour and style of each line.

A static matplotlib figure is a picture: it cannot follow JupyterLab's theme by itself, so
in the dark theme a default figure was a white block. A plot that names no theme now takes
the notebook's (:func:`~searchkit.render.lab_theme.notebook_theme`: what JupyterLab's
settings say it shows; ``SEARCHKIT_PLOT_THEME`` overrides). ``theme="dark"`` on a plotting
function (or ``with sk.plot_theme("dark"):`` around several) draws it for a dark page:
a near-black background, light text and grid, and the line colours made lighter so that
each keeps its hue. Nothing global changes: rcParams are left alone, and the context
manager's choice lives in a context variable that only searchkit's plots read.

Lines: ten qualitative colours (matplotlib's tab10, the dark theme's lighter variants),
then the same ten dashed, dotted and dash-dotted, so every one of up to 40 lines has a
look of its own; ``plot_throughput`` draws at most 20 by default.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import zlib
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Literal

from searchkit.errors import ValidationError
from searchkit.render.lab_theme import notebook_theme

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "LINE_STYLES",
    "THEMES",
    "Theme",
    "ThemeName",
    "apply_theme",
    "index_colour",
    "index_slots",
    "line_look",
    "plot_theme",
    "theme_of",
]

ThemeName = Literal["light", "dark"]

#: Line styles after the colours run out: solid, dashed, dotted, dash-dotted.
LINE_STYLES = ("-", "--", ":", "-.")


@dataclasses.dataclass(frozen=True)
class Theme:
    """Colours of one look: text, muted text, grid, background and the line colours."""

    name: str
    text: str
    muted: str
    grid: str
    face: str
    colours: tuple[str, ...]


_LIGHT_COLOURS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)  # fmt: skip
# The same hues made lighter: each line keeps its colour's identity on a dark background.
# Chosen so that each pair stays apart on #111111 (blue from cyan, red from pink and
# orange, brown from orange: brown stays dark and grey mid-grey, not the text's white).
_DARK_COLOURS = (
    "#5fa8ff", "#ffad33", "#5cd65c", "#ff5c5c", "#b58cff",
    "#b8835a", "#ff8fd8", "#9a9a9a", "#c8e03a", "#3fe0e0",
)  # fmt: skip

#: The looks by name. Dark's background is JupyterLab Dark's own (#111111).
THEMES: dict[str, Theme] = {
    "light": Theme("light", "#1a1a1a", "#595959", "#9a9a9a", "#ffffff", _LIGHT_COLOURS),
    "dark": Theme("dark", "#e8e8e8", "#b0b0b0", "#8a8a8a", "#111111", _DARK_COLOURS),
}

_chosen: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "searchkit_plot_theme", default=None
)


def theme_of(theme: str | None) -> Theme | None:
    """Return the Theme named ``theme``, else the one ``plot_theme`` chose, else the
    notebook's (``SEARCHKIT_PLOT_THEME``, else JupyterLab's: :mod:`~searchkit.render.lab_theme`),
    else None.

    None means matplotlib's own look (light), left as it is.

    Raises:
        ValidationError: ``theme`` (or ``SEARCHKIT_PLOT_THEME``) is not "light" or "dark".
    """
    name = theme if theme is not None else _chosen.get()
    if name is None:
        name = notebook_theme()
    if name is None:
        return None
    if name not in THEMES:
        raise ValidationError(f"theme must be 'light' or 'dark', got {name!r}")
    return THEMES[name]


@contextlib.contextmanager
def plot_theme(theme: ThemeName) -> Iterator[None]:
    """Draw every searchkit plot in the block in ``theme``, unless a call names another.

    Example:
        >>> with sk.plot_theme("dark"):  # doctest: +SKIP
        ...     sk.plot_throughput(indexes)
        ...     sk.plot_limits(indexes)
    """
    theme_of(theme)  # refuse a wrong name before the block runs
    token = _chosen.set(theme)
    try:
        yield
    finally:
        _chosen.reset(token)


def line_look(slot: int, theme: Theme | None) -> dict[str, Any]:
    """Return the colour and line style of the line in ``slot`` (0 first): unique up to 40."""
    colours = (theme or THEMES["light"]).colours
    return {
        "color": colours[slot % len(colours)],
        "linestyle": LINE_STYLES[(slot // len(colours)) % len(LINE_STYLES)],
    }


def apply_theme(ax: Axes, theme: Theme, *, figure: bool = True) -> None:
    """Recolour a drawn Axes (and, with ``figure``, its figure's background) for ``theme``.

    Text, ticks, spines, grid, legend and annotations take the theme's colours; lines and
    bars keep theirs (they were drawn from the theme's palette).
    """
    ax.set_facecolor(theme.face)
    if figure:
        ax.figure.set_facecolor(theme.face)
    # The ticks and their labels, those made and those to come (the labels are not asked
    # for here: that would work the ticks out once more before the drawing does).
    ax.tick_params(colors=theme.text, grid_color=theme.grid, which="both")
    for spine in ax.spines.values():
        spine.set_color(theme.grid)
    for text in (ax.title, ax.xaxis.label, ax.yaxis.label, ax.xaxis.get_offset_text()):
        text.set_color(theme.text)
    for child in ax.texts:
        child.set_color(theme.text)
    legend = ax.get_legend()
    if legend is not None:
        legend.get_title().set_color(theme.text)
        for entry in legend.get_texts():
            entry.set_color(theme.text)


def index_slots(keys: Iterable[str], *, taken: Iterable[int] = ()) -> dict[str, int]:
    """Return each index's colour slot: the same for an index in every figure.

    An index's slot comes from its key (the index id, else its name) alone, so it keeps
    its colour whatever else a figure draws and in both themes. Two indexes of one figure
    whose keys land on the same colour are told apart: the one later in key order takes
    the next free slot (after the ten colours, the same ones restyled, see LINE_STYLES).
    ``taken`` are slots already given to other indexes (a widget keeps its lines' looks).
    """
    size = len(THEMES["light"].colours)
    used: set[int] = set(taken)
    slots: dict[str, int] = {}
    for key in sorted({str(k) for k in keys}):
        base = zlib.crc32(key.encode("utf-8")) % size
        free = (
            style * size + (base + step) % size
            for style in range(len(LINE_STYLES))
            for step in range(size)
        )
        slot = next((s for s in free if s not in used), base)
        used.add(slot)
        slots[key] = slot
    return slots


def index_colour(key: str, theme: Theme | None) -> str:
    """Return the colour of one index (by id, else name) in ``theme``: see index_slots."""
    colours = (theme or THEMES["light"]).colours
    return colours[zlib.crc32(str(key).encode("utf-8")) % len(colours)]
