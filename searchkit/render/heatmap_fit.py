"""Fit the heatmap's words and marks to the size its cells are drawn at.

A week of a few indexes has room for every cell's number, every date and every name; 30 or
90 days, or hundreds of rows, do not: the numbers would run together ("1,064%753%..."),
the dates would overlap and the crosses merge into a bar. So the figure is laid out once
(its layout engine's pass, as drawing it starts with: the sizes are the ones it is drawn
at; nothing is drawn) and each kind of word is measured against its cells:

- the cells' numbers stay only if every one fits inside its cell, else none is drawn
  (half of them would be a puzzle) and the legend says why;
- dates and names are thinned to a step at which neighbours keep a gap;
- the "unlimited" words stay only if they fit in a row;
- the crosses shrink to the lower half of a cell.

The decision is made for the figure's size when it is drawn; a figure resized later is
drawn again by calling the plot again.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.axis import Axis
    from matplotlib.figure import Figure
    from matplotlib.text import Text
    from matplotlib.transforms import Transform

__all__ = [
    "DAY_STEPS",
    "GAP_PT",
    "Fit",
    "first_day_step",
    "fit_cells",
    "name_step",
    "numbers_may_fit",
    "under_the_axis",
]

#: The least room, in points, between two words (and between a word and its cell's edge).
GAP_PT = 2.0
#: The steps dates are thinned to: every day, every other day, weeks, fortnights, ...
DAY_STEPS = (1, 2, 7, 14, 28, 56, 91, 182, 364)
#: Largest cross, in points squared (matplotlib's scatter ``s``).
CROSS_SIZE = 30.0
#: Smallest side of a cross, in points: a smaller one reads as a dot, and is left out.
SMALLEST_CROSS_PT = 4.0
#: Height, in points, the legend may take from the Axes after the cells were measured.
LEGEND_ROOM_PT = 36.0


@dataclasses.dataclass(frozen=True)
class Fit:
    """What fitted: whether the numbers and words stayed, the steps of the ticks."""

    numbers: bool
    words: bool
    day_step: int
    row_step: int
    cross_size: float  # 0: no crosses (the cells are too small for them)
    below_pt: float  # how far the x axis's dates and label reach under the Axes, in points


def fit_cells(ax: Axes, *, days: int, rows: int, numbers: list[Text], words: list[Text]) -> Fit:
    """Lay the figure out, then remove or thin what does not fit; return what stayed.

    Args:
        ax: The heatmap's Axes, with one tick per day and per row, labelled.
        days: Columns of the heatmap.
        rows: Rows of the heatmap.
        numbers: The cells' numbers (removed when any does not fit its cell).
        words: The words across rows ("unlimited"; removed when a row is too low).
    """
    figure = _figure(ax)
    _lay_out(figure)
    points = 72.0 / figure.dpi  # a pixel in points
    cell_w = ax.bbox.width / max(days, 1) * points
    cell_h = max(ax.bbox.height * points - LEGEND_ROOM_PT, 0.0) / max(rows, 1)
    gap = GAP_PT
    # A number sits in the upper half of its cell (the cross in the lower half).
    fits = all(w + 2 * gap <= cell_w and h + gap <= cell_h / 2 for w, h in _sizes(numbers))
    if not fits:
        _remove(numbers)
    stay = all(h + gap <= cell_h for _, h in _sizes(words))
    if not stay:
        _remove(words)
    widest = max((w for w, _ in _sizes(ax.get_xticklabels())), default=0.0)
    day_step = next((s for s in DAY_STEPS if widest + 2 * gap <= s * cell_w), days)
    highest = max((h for _, h in _sizes(ax.get_yticklabels())), default=0.0)
    row_step = max(1, math.ceil((highest + gap) / cell_h)) if cell_h > 0 else rows
    _thin(ax.xaxis, day_step)
    _thin(ax.yaxis, row_step)
    axis = ax.xaxis.get_tightbbox()
    below = (ax.bbox.y0 - axis.y0) * points if axis is not None else 0.0
    # A cross of at most a third of the cell's height, under the number; none at all
    # where it would be a dot (the colour past 100 % still says "over").
    side = min(cell_w - 2 * gap, cell_h / 3)
    cross = min(CROSS_SIZE, side * side) if side >= SMALLEST_CROSS_PT else 0.0
    return Fit(fits, stay, day_step, row_step, cross, below)


def name_step(ax: Axes, rows: int) -> int:
    """Return a first step for the rows' names, before the figure is laid out.

    Measuring a thousand names takes seconds; the Axes before its layout is at least as
    high as after it, so this step is never more than fit_cells would take.
    """
    import matplotlib as mpl
    from matplotlib.font_manager import FontProperties

    points = ax.get_position().height * _figure(ax).get_figheight() * 72.0
    size = FontProperties(size=mpl.rcParams["ytick.labelsize"]).get_size_in_points()
    return max(1, math.floor((size + GAP_PT) / (points / max(rows, 1))))


def first_day_step(ax: Axes, days: int, first_label: str) -> int:
    """Return a first step for the dates, before the figure is laid out: 1 or a week.

    Laying out a year of dates, one tick each, takes seconds (a tick is several artists,
    each measured by the layout). The Axes before its layout is at least as wide as after
    it, and the first date is one of those :func:`fit_cells` measures, so the step from
    them is never more than the one fit_cells takes; every step of :data:`DAY_STEPS` from
    a week on is a multiple of a week, so fit_cells thins weekly dates to exactly the
    dates it would have kept of every day's.
    """
    import matplotlib as mpl

    position, figure = ax.get_position(), _figure(ax)
    cell_w = position.width * figure.get_figwidth() * 72.0 / max(days, 1)
    probe = ax.text(0, 0, first_label, fontsize=mpl.rcParams["xtick.labelsize"])
    width = probe.get_window_extent().width * 72.0 / figure.dpi
    probe.remove()
    step = next((s for s in DAY_STEPS if width + 2 * GAP_PT <= s * cell_w), days)
    return 7 if step >= 7 else 1


def numbers_may_fit(ax: Axes, shape: tuple[int, int], widest: str, fontsize: str) -> bool:
    """Say whether ``widest`` could fit a cell of a (rows, days) grid, before the layout.

    The Axes before its layout is at least as large as after it: when the number does not
    fit even then, the thousands of numbers are not written (and measured) at all.
    """
    position, figure = ax.get_position(), _figure(ax)
    width = position.width * figure.get_figwidth() * 72.0 / max(shape[1], 1)
    height = position.height * figure.get_figheight() * 72.0 / max(shape[0], 1)
    probe = ax.text(0, 0, widest, fontsize=fontsize)
    box = probe.get_window_extent()
    probe.remove()
    scale = 72.0 / figure.dpi
    return box.width * scale + 2 * GAP_PT <= width and box.height * scale + GAP_PT <= height / 2


def under_the_axis(ax: Axes, below_pt: float) -> Transform:
    """Return a transform of Axes fractions moved ``below_pt`` (and a gap) further down.

    A legend anchored at (0, 0) with it hangs under the axis's dates and label
    (``Fit.below_pt``), never on them: their height is in points, which a later layout of
    the figure leaves alone.
    """
    from matplotlib.transforms import ScaledTranslation

    drop = (below_pt + 2 * GAP_PT) / 72.0
    return ax.transAxes + ScaledTranslation(0, -drop, _figure(ax).dpi_scale_trans)


def _lay_out(figure: Figure) -> None:
    """Place the Axes as drawing the figure would (its layout engine's pass, the first
    step of ``Figure.draw``), without drawing its artists: what is measured next is the
    Axes' box and the words' sizes, which need no picture (the cells' image, resampled
    for each draw, was most of the cost of a drawing pass that renders nothing)."""
    engine = figure.get_layout_engine()
    if figure.axes and engine is not None:
        engine.execute(figure)


def _figure(ax: Axes) -> Figure:
    """The figure the Axes is drawn in (the outermost, for an Axes in a subfigure)."""
    figure = ax.get_figure(root=True)
    if figure is None:
        raise ValueError("the Axes is in no figure")
    return figure


def _sizes(texts: list[Text]) -> list[tuple[float, float]]:
    """Each drawn text's width and height in points."""
    out = []
    for text in texts:
        if not text.get_text():
            continue
        box = text.get_window_extent()
        scale = 72.0 / text.figure.dpi if text.figure is not None else 1.0
        out.append((box.width * scale, box.height * scale))
    return out


def _remove(texts: list[Text]) -> None:
    for text in texts:
        text.remove()
    texts.clear()


def _thin(axis: Axis, step: int) -> None:
    """Keep ticks ``step`` cells apart at least (some may be that far already)."""
    ticks = list(axis.get_majorticklocs())
    apart = ticks[1] - ticks[0] if len(ticks) > 1 else 1
    keep = math.ceil(step / apart)
    if keep > 1:
        labels = [t.get_text() for t in axis.get_ticklabels()]
        axis.set_ticks(ticks[::keep], labels[::keep])
