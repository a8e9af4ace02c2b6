"""The notebook browser of an account's indexes: a table, a throughput plot, a create form.

Secrets: the widgets hold no token or password in any synced state or display data. Cards
show tokens masked; the password stays inside the client.

Saved notebooks: both widgets add a static HTML picture of themselves to their display
data, so a notebook opened without its kernel (or untrusted) shows what they looked like.

Threads: see :mod:`searchkit.ui._worker`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import traitlets

from searchkit.errors import (
    SearchKitError,
    UnknownIndexError,
    describe_failure,
)
from searchkit.frames.zones import TimeZone, zone_name
from searchkit.model.index import IndexList, SearchIndex
from searchkit.render.formats import KEY_LIMITS
from searchkit.render.html import (
    index_browser_html,
    index_cards_html,
    index_list_html,
    message_html,
    themed_images_html,
)
from searchkit.render.themes import index_slots
from searchkit.ui._plot import LIGHT_COLOURS, NoData, throughput_pngs
from searchkit.ui._worker import StaticPicture, Worker, hide, log
from searchkit.ui.form import CreateIndexForm, choice_of

if TYPE_CHECKING:
    from searchkit.api.client import Client

__all__ = [
    "BROWSER_ROWS",
    "RESAMPLE_CHOICES",
    "TIME_ZONES",
    "IndexBrowser",
    "index_browser",
]

#: Time zones the browser offers; another one given to it is added to the list.
TIME_ZONES: tuple[str, ...] = (
    "UTC",
    "Europe/London",
    "Europe/Berlin",
    "America/New_York",
    "America/Chicago",
    "America/Los_Angeles",
    "America/Sao_Paulo",
    "Asia/Kolkata",
    "Asia/Kathmandu",
    "Asia/Tokyo",
    "Australia/Sydney",
)
#: Resampling choices of the browser: label -> pandas frequency ("" plots every point;
#: "auto" picks the finest of the others that draws at most ``_plot.AUTO_POINTS`` per line).
RESAMPLE_CHOICES: tuple[tuple[str, str], ...] = (
    ("auto", "auto"),
    ("every point", ""),
    ("5-minute mean", "5min"),
    ("15-minute mean", "15min"),
    ("hourly mean", "1h"),
)
#: Rows the browser's table shows at most (it scrolls); the caption counts the others.
BROWSER_ROWS = 500


class IndexBrowser(StaticPicture, widgets.VBox):
    """The account's indexes: a table, a selection, a throughput plot, a create form.

    Build it with :func:`index_browser`. The browser lists the indexes on its worker
    thread (it shows "Listing…" meanwhile, also after Refresh); choosing indexes, a time
    zone or a resampling redraws the plot there too. The table shows the columns people
    compare (name, short id, plan, region and the daily and per-second limits); "Details"
    opens the full card of each selected index. Each index keeps one colour for the life
    of the browser, and the plot is drawn for JupyterLab's light and dark themes alike.
    An index created with the embedded form joins the list and the selection without
    listing again. Until the indexes could be listed, the form is not offered.

    Observable traits: ``busy`` (a listing or drawing is running), ``message``.

    Example:
        >>> browser = index_browser(client)
        >>> browser.wait()
        >>> browser.select(["docs-search", "news-archive"])
        >>> browser.tz = "Europe/Berlin"
    """

    busy = traitlets.Bool(False, read_only=True, help="Whether a listing or drawing runs.")
    message = traitlets.Unicode("", read_only=True, help="The status line, as plain text.")

    def __init__(self, client: Client, *, tz: TimeZone = None, **kwargs: Any) -> None:
        tz = zone_name(tz)  # an unknown zone is refused here, before anything is built
        self._client = client
        self._indexes = IndexList()
        self._listed = False
        self._status_kind = "info"
        self._png: bytes | None = None
        self._png_dark: bytes | None = None
        self._hint_text = ""
        self._state = threading.RLock()
        self._worker = Worker("searchkit-index-browser")
        self._jobs = 0  # pending listings and drawings, for ``busy``
        self._generation = 0  # of the drawing asked for last; older ones are dropped
        self._colour_slots: dict[str, int] = {}
        self._quiet = False

        self._build(client, tz)
        for widget, css in (
            (self._status, "sk-status"),
            (self._refresh, "sk-refresh"),
            (self._table, "sk-table"),
            (self._details_box, "sk-details"),
            (self._select, "sk-select"),
            (self._tz, "sk-tz"),
            (self._resample, "sk-resample"),
            (self._plot, "sk-plot"),
            (self._plot_status, "sk-plot-status"),
            (self._hint, "sk-plot-hint"),
            (self._form_box, "sk-create-section"),
        ):
            widget.add_class(css)
        super().__init__(
            children=[
                widgets.HBox([self._refresh, self._status]),
                self._data_box,
                self._form_box,
            ],
            **kwargs,
        )
        self.add_class("sk-browser")
        hide(self._data_box, True)
        hide(self._form_box, True)
        hide(self._plot, True)

        self._refresh.on_click(self._on_refresh_click)
        self._select.observe(self._on_select_change, names="value")
        self._tz.observe(self._on_plot_option_change, names="value")
        self._resample.observe(self._on_plot_option_change, names="value")
        self.refresh(wait=False)

    def _build(self, client: Client, tz: str) -> None:
        """Make the child widgets (the layout and the handlers are set by __init__)."""
        zones = list(TIME_ZONES)
        if tz not in zones:
            zones.append(tz)
        self._status = widgets.HTML()
        self._refresh = widgets.Button(
            description="Refresh", icon="refresh", tooltip="List the indexes again"
        )
        # The compact table fits the widget; it scrolls inside rather than wrapping cells.
        self._table = widgets.HTML(
            layout=widgets.Layout(overflow="auto", max_height="320px", width="100%")
        )
        self._details = widgets.HTML()
        self._details_box = widgets.Accordion(children=[self._details], selected_index=None)
        self._details_box.set_title(0, "Details of the selected indexes")
        self._select = widgets.SelectMultiple(
            description="Indexes", options=[], rows=6, layout=widgets.Layout(width="420px")
        )
        self._tz = widgets.Dropdown(description="Time zone", options=zones, value=tz)
        self._resample = widgets.Dropdown(
            description="Resample", options=list(RESAMPLE_CHOICES), value="auto"
        )
        self._plot_status = widgets.HTML()
        self._plot = widgets.HTML(layout=widgets.Layout(width="100%"))
        self._hint = widgets.HTML()
        self._form = CreateIndexForm(client, on_created=self._on_form_created)
        self._form_box = widgets.VBox([widgets.HTML("<b>Create an index</b>"), self._form])
        self._data_box = widgets.VBox(
            [
                self._table,
                self._details_box,
                widgets.HBox([self._select, widgets.VBox([self._tz, self._resample])]),
                self._plot_status,
                self._hint,
                self._plot,
            ]
        )

    # -- public API ----------------------------------------------------------------------

    @property
    def indexes(self) -> IndexList:
        """The indexes as last listed (plus those created with the embedded form)."""
        return self._indexes

    @property
    def selected(self) -> IndexList:
        """The indexes chosen for the plot, in list order."""
        with self._state:
            chosen = set(self._select.value)
            return IndexList(i for i in self._indexes if i.id in chosen)

    @property
    def tz(self) -> str:
        """The plot's time zone (an IANA name); assign to change it."""
        return str(self._tz.value)

    @tz.setter
    def tz(self, zone: TimeZone) -> None:
        zone = zone_name(zone)  # ValidationError, with a suggestion, for an unknown zone
        with self._state:
            if zone not in self._tz.options:
                self._tz.options = (*self._tz.options, zone)
            self._tz.value = zone

    @property
    def resample(self) -> str:
        """The plot's resampling: ``"auto"``, ``""`` (every point) or a pandas frequency."""
        return str(self._resample.value)

    @resample.setter
    def resample(self, choice: str) -> None:
        allowed = [value for _, value in RESAMPLE_CHOICES]
        self._resample.value = choice_of(choice, tuple(allowed), "resample")

    @property
    def form(self) -> CreateIndexForm:
        """The embedded create form."""
        return self._form

    @property
    def colours(self) -> dict[str, str]:
        """The colour of each listed index's line (light theme), by id, fixed for life."""
        with self._state:
            palette = LIGHT_COLOURS
            return {
                str(i.id): palette[self._colour_slots[str(i.id)] % len(palette)]
                for i in self._indexes
            }

    @property
    def plot_png(self) -> bytes | None:
        """The PNG bytes of the plot shown now (light theme); None when no plot is shown."""
        return self._png

    @property
    def plot_png_dark(self) -> bytes | None:
        """The same plot drawn for a dark theme; None when no plot is shown."""
        return self._png_dark

    def refresh(self, *, wait: bool = True, timeout: float | None = None) -> IndexList:
        """List the indexes again and redraw; keep the selection of indexes still there.

        The listing runs on the browser's worker thread (the Refresh button does the same
        without waiting). A failure keeps the previous data and shows one sentence in the
        status line.

        Args:
            wait: Wait until the list and the plot are shown.
            timeout: Seconds to wait at most; forever when None.

        Returns:
            The indexes shown (the previous ones when not waiting or on failure).

        Raises:
            RuntimeError: The browser was closed.
        """
        if self._worker.closed:
            raise RuntimeError("this browser was closed; make another with sk.index_browser()")
        with self._state:
            self._begin_job()
            self._refresh.disabled = True
            self._refresh.description, self._refresh.icon = "Listing…", "hourglass-half"
            where = getattr(self._client, "base_url", "the service")
            self._set_status(f"Listing the indexes at {where}…", "busy")
        self._worker.submit(self._list_job)
        if wait and not self._worker.on_worker():
            self._worker.wait(timeout)
        return self._indexes

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until no listing or drawing runs (the embedded form is not waited for).

        Args:
            timeout: Seconds to wait at most; forever when None.

        Returns:
            True when the browser is idle, False when the timeout passed first.
        """
        return self._worker.wait(timeout)

    def select(self, names_or_ids: Iterable[str] | str) -> None:
        """Choose the indexes to plot, by name or id.

        Args:
            names_or_ids: Names or ids of listed indexes; a name picks every index so named.

        Raises:
            UnknownIndexError: One of them names no listed index (also a ``KeyError``).
        """
        wanted = [names_or_ids] if isinstance(names_or_ids, str) else list(names_or_ids)
        ids: list[str] = []
        for key in wanted:
            found = [i.id for i in self._indexes if key in (i.id, i.name)]
            if not found:
                raise UnknownIndexError(f"no listed index has the name or id {key!r}")
            ids += [i for i in found if i is not None and i not in ids]
        self._select.value = tuple(ids)

    def static_html(self) -> str:
        """Return a static HTML picture of the browser as it looks now (no token in it)."""
        with self._state:
            return index_browser_html(
                status=(self._status_kind, self.message),
                indexes=self._indexes,
                selected=[i.name or "—" for i in self.selected],
                png=self._png,
                hint=self._hint_text,
            )

    def close(self) -> None:
        """Close the browser and its form, and stop their worker threads."""
        if "_worker" not in vars(self):  # its arguments were refused: nothing started
            return
        self._worker.close()
        if "_form" in vars(self):
            self._form.close()
        super().close()

    def __repr__(self) -> str:
        return (
            f"IndexBrowser(base_url={getattr(self._client, 'base_url', None)!r}, "
            f"indexes={len(self._indexes)}, selected={len(self._select.value)})"
        )

    # -- handlers (kernel thread: quick, no I/O) -----------------------------------------

    def _on_refresh_click(self, _button: widgets.Button) -> None:
        self.refresh(wait=False)

    def _on_select_change(self, _change: dict[str, Any]) -> None:
        if not self._quiet:
            with self._state:
                self._show_details()
            self._redraw()

    def _on_plot_option_change(self, _change: dict[str, Any]) -> None:
        self._redraw()

    def _on_form_created(self, index: SearchIndex) -> None:
        # On the form's worker. The create answer is the index: add it here rather than
        # listing again (a create from the browser costs the create's requests only).
        with self._state:
            others = [i for i in self._indexes if i.id != index.id]
            self._indexes = IndexList([*others, index])
            self._assign_colours()
            previous = [i for i in self._select.value if i != index.id]
            self._show_list(selected=[*previous, index.id] if index.id else previous)
        self._redraw()

    # -- jobs (worker thread) ------------------------------------------------------------

    def _list_job(self) -> None:
        try:
            indexes = self._client.list_indexes()
        except Exception as exc:
            if not isinstance(exc, SearchKitError):
                log.exception("listing indexes for the browser failed unexpectedly")
            with self._state:
                self._set_status(describe_failure(exc), "error")
                if not self._listed:
                    # Nothing to show, and a create would fail the same way: say so only.
                    hide(self._data_box, True)
                    hide(self._form_box, True)
                self._end_job()
            return
        with self._state:
            self._indexes = indexes
            self._listed = True
            self._assign_colours()
            keep = [i for i in self._select.value if any(x.id == i for x in indexes)]
            if not keep and len(indexes) and indexes[0].id is not None:
                keep = [indexes[0].id]
            self._show_list(selected=keep)
            count = f"{len(indexes):,} index" + ("" if len(indexes) == 1 else "es")
            self._set_status(f"{count} at {getattr(self._client, 'base_url', '?')}", "info")
            hide(self._data_box, False)
            hide(self._form_box, False)
            self._end_job()
        self._redraw()

    def _draw_job(self, generation: int, snapshot: dict[str, Any]) -> None:
        try:
            with self._state:
                if generation != self._generation:
                    return  # a newer drawing was asked for: this one would be stale
            try:
                light, dark, note = throughput_pngs(**snapshot)
            except NoData:
                with self._state:
                    if generation == self._generation:
                        self._show_hint(
                            "The selected indexes have no throughput data yet: nothing to plot."
                        )
                return
            except SearchKitError as exc:
                with self._state:
                    if generation == self._generation:
                        self._show_hint(f"Could not plot the throughput: {describe_failure(exc)}")
                return
            with self._state:
                if generation != self._generation:
                    return
                self._png, self._png_dark, self._hint_text = light, dark, ""
                names = [str(i.name) for i in snapshot["indexes"]]
                self._plot.value = themed_images_html(light, dark, note, names)
                self._plot_status.value = ""
                hide(self._plot, False)
                hide(self._hint, True)
        finally:
            with self._state:
                self._end_job()

    # -- internals (called with self._state held) ----------------------------------------

    def _begin_job(self) -> None:
        self._jobs += 1
        self.set_trait("busy", True)

    def _end_job(self) -> None:
        self._jobs -= 1
        if self._jobs == 0:
            self.set_trait("busy", False)
            self._refresh.disabled = False
            self._refresh.description, self._refresh.icon = "Refresh", "refresh"

    def _redraw(self) -> None:
        """Ask the worker for a drawing of the current selection; return at once."""
        if self._worker.closed:
            return
        with self._state:
            self._generation += 1
            generation = self._generation
            selected = self.selected
            if not len(selected):
                self._show_hint("Select one or more indexes to plot their throughput.")
                return
            snapshot = {
                "indexes": selected,
                "tz": self.tz,
                "resample": self.resample,
                "colours": {i.id: self._colour_slots.get(str(i.id), 0) for i in selected},
            }
            self._begin_job()
            self._plot_status.value = message_html("Drawing the throughput…", "busy")
        self._worker.submit(self._draw_job, generation, snapshot)

    def _assign_colours(self) -> None:
        # Each index's colour in every plot (from its id), kept for the life of the browser.
        new = [str(i.id) for i in self._indexes if str(i.id) not in self._colour_slots]
        self._colour_slots.update(index_slots(new, taken=self._colour_slots.values()))

    def _show_list(self, *, selected: list[str]) -> None:
        self._table.value = index_list_html(
            self._indexes, limits=KEY_LIMITS, details=False, max_rows=BROWSER_ROWS
        )
        self._quiet = True
        try:
            self._select.options = _labelled(self._indexes)
            self._select.value = tuple(selected)
        finally:
            self._quiet = False
        self._show_details()

    def _show_details(self) -> None:
        self._details.value = (
            index_cards_html(self.selected)
            if len(self.selected)
            else message_html("Select indexes to see their details.", "info")
        )

    def _set_status(self, text: str, kind: str) -> None:
        self._status_kind = kind
        self.set_trait("message", text)
        self._status.value = message_html(text, kind)

    def _show_hint(self, text: str) -> None:
        self._png = self._png_dark = None
        self._hint_text = text
        self._hint.value = message_html(text, "info")
        self._plot_status.value = ""
        self._plot.value = ""
        hide(self._hint, False)
        hide(self._plot, True)


def _labelled(indexes: IndexList) -> list[tuple[str, str]]:
    names = [i.name or "(no name)" for i in indexes]
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return [
        (name if counts[name] == 1 else f"{name} ({i.short_id})", str(i.id))
        for name, i in zip(names, indexes, strict=True)
    ]


def index_browser(client: Client, *, tz: TimeZone = None) -> IndexBrowser:
    """Return a browser of the account's indexes with a throughput plot and a create form.

    The browser returns at once and lists the indexes on its worker thread; call
    ``.wait()`` to wait for them from code.

    Args:
        client: The client to list (and create) with.
        tz: Initial time zone of the plot, an IANA name such as ``"Europe/Berlin"`` or
            its ``ZoneInfo``; None is UTC, the zone the service's instants are in.

    Returns:
        The browser (an ``ipywidgets.VBox``), listing, the first index to be selected.

    Raises:
        ValidationError: ``tz`` is not a known time zone.

    Example:
        >>> browser = sk.index_browser(client, tz="Europe/Berlin")
        >>> browser  # shows it in a notebook
    """
    return IndexBrowser(client, tz=tz)
