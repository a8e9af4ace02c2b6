"""Notebook widgets: a form that creates an index, and a browser of the account's indexes.

Threading, one model for both widgets:

* Each widget owns **one single-worker executor**. Everything slow (a request to the
  service, drawing a plot) runs there, one job after another, never on the kernel thread.
  A handler (a click, a dropdown change, Enter) only reads the fields, shows a busy state
  and submits a job; it returns at once.
* Widget state is changed in one way only: inside ``with self._state:`` (a short lock,
  never held across a request or a drawing), by the handler that starts a job and by the
  job when it ends. So the kernel thread and the worker never interleave half-updates.
  A job whose inputs went stale (a newer redraw was asked for) drops its result.
* ``wait()`` waits until the worker has nothing left to do; ``submit()`` (form) and
  ``refresh()`` (browser) run their job on the worker and wait for it, for code.

The form claims a request atomically: a click that arrives while one runs is ignored, and
once an index is created (or may have been, when the outcome is unknown) the same request
is not sent again until the name, region or plan changes, so a double click creates one
index however fast the service answers.

Secrets: the widgets hold no token or password in any synced state or display data. Cards
show tokens masked; the password stays inside the client.

Saved notebooks: both widgets add a static HTML picture of themselves to their display
data, so a notebook opened without its kernel (or untrusted) shows what they looked like.
"""

from __future__ import annotations

import concurrent.futures
import html
import io
import logging
import threading
import warnings
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import traitlets

from searchkit.errors import (
    AmbiguousCreateError,
    SearchKitError,
    ValidationError,
    describe_failure,
    redact,
)
from searchkit.frames.zones import resolve_zone
from searchkit.model.index import IndexList, SearchIndex
from searchkit.model.limits import REGIONS, TYPES
from searchkit.render.formats import KEY_LIMITS
from searchkit.render.html import (
    create_form_html,
    index_browser_html,
    index_card_html,
    index_list_html,
    message_html,
)

if TYPE_CHECKING:
    import pandas as pd

    from searchkit.api.client import Client

__all__ = ["CreateIndexForm", "IndexBrowser", "create_index_form", "index_browser"]

log = logging.getLogger("searchkit")

#: What the plan dropdown shows for each type; ``fixed`` is offered but may be refused.
TYPE_LABELS: dict[str, str] = {
    "free": "free",
    "payg": "payg (pay as you go)",
    "fixed": "fixed (may not be available)",
}
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
#: "auto" picks the finest of the others that draws at most AUTO_POINTS per line).
RESAMPLE_CHOICES: tuple[tuple[str, str], ...] = (
    ("auto", "auto"),
    ("every point", ""),
    ("5-minute mean", "5min"),
    ("15-minute mean", "15min"),
    ("hourly mean", "1h"),
)
AUTO_POINTS = 200
#: Rows the browser's table shows at most (it scrolls); the caption counts the others.
BROWSER_ROWS = 500
_AUTO_STEPS: tuple[tuple[str, str], ...] = (
    ("", "every point"),
    ("5min", "5-minute means"),
    ("15min", "15-minute means"),
    ("1h", "hourly means"),
    ("1D", "daily means"),
)

# Line colours, one slot per index for the life of a browser. The dark variants are the
# same hues made lighter, so a line keeps its colour's identity on a dark background.
_LIGHT_COLOURS = (
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
    "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22",
)  # fmt: skip
_DARK_COLOURS = (
    "#6cb4f0", "#ff7b7b", "#6fdc6f", "#ffb35c", "#c9a6ff",
    "#d9a38f", "#ffa3e0", "#5fe3f0", "#c8c8c8", "#e6e65c",
)  # fmt: skip
_THEMES = {
    # text and grid colours of the plot on a transparent background
    "light": {"text": "#1a1a1a", "grid": "#9a9a9a", "colours": _LIGHT_COLOURS},
    "dark": {"text": "#e8e8e8", "grid": "#8a8a8a", "colours": _DARK_COLOURS},
}


def _html_output(markup: str, text: str) -> dict[str, Any]:
    return {
        "output_type": "display_data",
        "data": {"text/html": markup, "text/plain": text},
        "metadata": {},
    }


def _hide(widget: widgets.Widget, hidden: bool) -> None:
    widget.layout.display = "none" if hidden else None


class _Worker:
    """A single-worker executor and a count of the jobs not finished yet."""

    def __init__(self, name: str) -> None:
        self._executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=name)
        self._lock = threading.Lock()
        self._pending = 0
        self._idle = threading.Event()
        self._idle.set()
        self._thread: threading.Thread | None = None
        self.closed = False

    def submit(self, job: Callable[..., Any], *args: Any) -> concurrent.futures.Future[Any]:
        with self._lock:
            self._pending += 1
            self._idle.clear()
        try:
            future = self._executor.submit(self._run, job, *args)
        except BaseException:
            self._done()
            raise
        return future

    def on_worker(self) -> bool:
        """Whether the calling thread is this worker (waiting for it would deadlock)."""
        return threading.current_thread() is self._thread

    def wait(self, timeout: float | None) -> bool:
        return self._idle.wait(timeout)

    def close(self) -> None:
        """Drop the jobs not started; the running one ends on its own (no new ones)."""
        self.closed = True
        self._executor.shutdown(wait=False, cancel_futures=True)

    def _run(self, job: Callable[..., Any], *args: Any) -> Any:
        self._thread = threading.current_thread()
        try:
            return job(*args)
        finally:
            self._done()

    def _done(self) -> None:
        with self._lock:
            self._pending -= 1
            if self._pending == 0:
                self._idle.set()


# --- the create form ---------------------------------------------------------------------


class CreateIndexForm(widgets.VBox):
    """A form that creates one search index: name, region, plan, a Create button, a result.

    Build it with :func:`create_index_form`. The form says which service it talks to,
    refuses an empty or blank name before sending anything, disables the button while the
    request runs (on the form's worker thread), and shows the created index's card (tokens
    masked) or one sentence saying what went wrong; it stays usable after any failure.
    Enter in the name field creates, as the button does.

    Observable traits (``form.observe(callback, names="busy")``; they change on the
    form's worker thread): ``busy``, ``message``, ``result``.

    Attributes:
        result: The last index this form created, or None.
        error: The exception of the last failed attempt (None after a success).
        message: The sentence the form shows now, as plain text.
        busy: Whether a request is running.

    Example:
        >>> form = create_index_form(client)
        >>> form.fill("docs", region="eu-west-1", type="free").submit()
        SearchIndex(id=..., name='docs', ...)
    """

    busy = traitlets.Bool(False, read_only=True, help="Whether a request is running.")
    message = traitlets.Unicode("", read_only=True, help="The sentence shown, as plain text.")
    result = traitlets.Any(None, read_only=True, help="The last index created, or None.")

    def __init__(
        self,
        client: Client,
        *,
        on_created: Callable[[SearchIndex], object] | None = None,
        **kwargs: Any,
    ) -> None:
        self._client = client
        self._callback = on_created
        self._error: BaseException | None = None
        self._parts: list[tuple[str, Any]] = []
        self._state = threading.RLock()
        self._worker = _Worker("searchkit-create-form")
        # The last request that created an index, or may have: not sent again as is.
        self._sent: tuple[str, str, str] | None = None

        base_url = html.escape(str(getattr(client, "base_url", "?")))
        username = html.escape(str(getattr(client, "username", "?")))
        self._service = widgets.HTML(
            f"Creates indexes at <code>{base_url}</code> as <b>{username}</b>"
        )
        self._name = widgets.Text(
            description="Name", placeholder="e.g. docs-search", continuous_update=True
        )
        self._region = widgets.Dropdown(
            description="Region", options=[(r, r) for r in REGIONS], value=REGIONS[0]
        )
        self._type = widgets.Dropdown(
            description="Plan",
            options=[(TYPE_LABELS.get(t, t), t) for t in TYPES],
            value="free",
        )
        self._create = widgets.Button(
            description="Create", button_style="primary", icon="plus", tooltip="Create the index"
        )
        self._output = widgets.Output()
        for widget, css in (
            (self._service, "sk-service"),
            (self._name, "sk-name"),
            (self._region, "sk-region"),
            (self._type, "sk-type"),
            (self._create, "sk-create-button"),
            (self._output, "sk-output"),
        ):
            widget.add_class(css)
        super().__init__(
            children=[
                self._service,
                self._name,
                self._region,
                self._type,
                self._create,
                self._output,
            ],
            **kwargs,
        )
        self.add_class("sk-create-form")

        self._create.on_click(self._on_create_click)
        with warnings.catch_warnings():
            # ipywidgets 8 deprecates on_submit in favour of observing the value, but a
            # value change is every keystroke (or a blur): Enter is only this message.
            warnings.simplefilter("ignore", DeprecationWarning)
            self._name.on_submit(self._on_name_submit)
        self._name.observe(self._on_field_change, names="value")
        self._region.observe(self._on_field_change, names="value")
        self._type.observe(self._on_field_change, names="value")

    # -- public API ----------------------------------------------------------------------

    @property
    def error(self) -> BaseException | None:
        """The exception of the last failed attempt; None after a success or before any."""
        return self._error

    def fill(
        self, name: str | None = None, *, region: str | None = None, type: str | None = None
    ) -> CreateIndexForm:
        """Set the fields, as a person would type and pick them.

        Args:
            name: The index name; unchanged when None.
            region: One of the spec's regions; unchanged when None.
            type: One of ``free``, ``payg``, ``fixed``; unchanged when None.

        Returns:
            The form, so that ``form.fill(...).submit()`` reads as one step.

        Raises:
            ValidationError: ``region`` or ``type`` is not one of the choices.

        Example:
            >>> form.fill("docs", region="us-central1", type="payg")
        """
        if region is not None:
            self._region.value = _choice(region, REGIONS, "region")
        if type is not None:
            self._type.value = _choice(type, TYPES, "type")
        if name is not None:
            self._name.value = name
        return self

    def submit(self, *, wait: bool = True, timeout: float | None = None) -> SearchIndex | None:
        """Create the index from the fields, as a click on Create does.

        The request runs on the form's worker thread, like a click's; the form shows the
        outcome exactly as after a click. Nothing is sent when a name is missing, when a
        request is already running, or when the fields are those of the last index
        created (change one to create another).

        Args:
            wait: Wait for the outcome (the ``on_created`` callback included); with False,
                return at once, as the button's handler does.
            timeout: Seconds to wait at most; forever when None.

        Returns:
            The created index, or None when nothing was created (or when not waiting).

        Example:
            >>> form.fill("docs").submit().name
            'docs'
        """
        if self._worker.closed:
            raise RuntimeError("this form was closed; make another with sk.create_index_form()")
        request = self._begin()
        if request is None:
            return None
        future = self._worker.submit(self._run, request)
        if not wait or self._worker.on_worker():
            return None
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            return None

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until no request runs (the ``on_created`` callback included).

        Args:
            timeout: Seconds to wait at most; forever when None.

        Returns:
            True when the form is idle, False when the timeout passed first.
        """
        return self._worker.wait(timeout)

    def close(self) -> None:
        """Close the form's widgets and stop its worker thread (a running request ends)."""
        self._worker.close()
        super().close()

    def __repr__(self) -> str:
        name = self.result.name if self.result is not None else None
        return (
            f"CreateIndexForm(base_url={getattr(self._client, 'base_url', None)!r}, "
            f"result={name!r})"
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        data = super()._repr_mimebundle_(**kwargs)
        if data is not None:
            data["text/html"] = self.static_html()
        return data

    def static_html(self) -> str:
        """Return a static HTML picture of the form as it looks now (no token in it)."""
        with self._state:
            return create_form_html(
                base_url=str(getattr(self._client, "base_url", "?")),
                username=str(getattr(self._client, "username", "?")),
                name=str(self._name.value),
                region=str(self._region.value),
                plan=str(self._type.value),
                messages=list(self._parts),
            )

    # -- handlers (kernel thread: quick, no I/O) -----------------------------------------

    def _on_create_click(self, _button: widgets.Button) -> None:
        self.submit(wait=False)

    def _on_name_submit(self, _text: widgets.Text) -> None:
        self.submit(wait=False)

    def _on_field_change(self, _change: dict[str, Any]) -> None:
        with self._state:
            if not self.busy and any(kind == "error" for kind, _ in self._parts):
                self._show([])  # the error was about the fields as they were
            self._update_button()

    # -- internals -----------------------------------------------------------------------

    def _fields(self) -> tuple[str, str, str]:
        # The name is sent as typed: " docs" is not "docs" (only a blank name is refused).
        return (str(self._name.value or ""), str(self._region.value), str(self._type.value))

    def _begin(self) -> tuple[str, str, str] | None:
        """Validate and claim the form for one request; None when nothing is to be sent."""
        with self._state:
            if self.busy:
                return None  # a request is running: this is the second of a double click
            request = self._fields()
            problem = _name_problem(request[0])
            if problem is not None:
                self._error = ValidationError(problem)
                self._show([("error", problem)])
                return None
            if request == self._sent:
                return None  # the index of these fields exists: change a field first
            self.set_trait("busy", True)
            self._update_button()
            name, region, plan = request
            self._show([("busy", f"Creating index {name!r} in {region} on the {plan} plan…")])
            return request

    def _run(self, request: tuple[str, str, str]) -> SearchIndex | None:
        """On the worker: send the create, show the outcome, call back; release the form."""
        name, region, plan = request
        try:
            try:
                index = self._client.create_index(name, region=region, type=plan)
            except Exception as exc:
                with self._state:
                    self._failed(request, exc)
                return None
            with self._state:
                self._created(request, index)
            self._call_back(index)
            return index
        finally:
            with self._state:
                self.set_trait("busy", False)
                self._update_button()

    def _created(self, request: tuple[str, str, str], index: SearchIndex) -> None:
        self._error, self._sent = None, request
        self.set_trait("result", index)
        region = index.region if index.region is not None else request[1]
        plan = index.type if index.type is not None else request[2]
        self._show(
            [
                ("success", f"Created index {index.name!r} in {region} on the {plan} plan."),
                ("card", index),
                ("info", "To create another index, change the name, region or plan."),
            ]
        )

    def _call_back(self, index: SearchIndex) -> None:
        if self._callback is None:
            return
        try:
            self._callback(index)
        except Exception as exc:
            log.exception("on_created callback of the create form failed")
            with self._state:
                parts = list(self._parts)
                parts.insert(
                    2,
                    (
                        "error",
                        f"The index was created, but on_created raised "
                        f"{type(exc).__name__}: {redact(str(exc))}.",
                    ),
                )
                self._show(parts)

    def _failed(self, request: tuple[str, str, str], exc: Exception) -> None:
        if not isinstance(exc, SearchKitError):
            log.exception("creating an index from the form failed unexpectedly")
        if isinstance(exc, AmbiguousCreateError):
            self._sent = request  # it may exist: do not send the same request again
        self._error = exc
        sentence = describe_failure(exc)
        if (
            request[2] == "fixed"
            and isinstance(exc, ValidationError)
            and exc.status is not None
            and "fixed" in exc.reason
        ):
            sentence = f"{sentence[:-1]}; choose the free or payg plan."
        self._show([("error", sentence)])

    def _show(self, parts: list[tuple[str, Any]]) -> None:
        """Replace the output area: ``(kind, text)`` messages and ``("card", index)``."""
        outputs = []
        for kind, value in parts:
            if kind == "card":
                outputs.append(_html_output(index_card_html(value), repr(value)))
            else:
                outputs.append(_html_output(message_html(value, kind), value))
        self._parts = list(parts)
        self.set_trait("message", next((v for k, v in parts if k != "card"), ""))
        self._output.outputs = tuple(outputs)

    def _update_button(self) -> None:
        if self.busy:
            self._create.disabled = True
            self._create.description, self._create.icon = "Creating…", "hourglass-half"
            self._create.tooltip = "The request is running"
        elif self._sent is not None and self._fields() == self._sent:
            self._create.disabled = True
            self._create.description, self._create.icon = "Created", "check"
            self._create.tooltip = "Change the name, region or plan to create another index"
        else:
            self._create.disabled = False
            self._create.description, self._create.icon = "Create", "plus"
            self._create.tooltip = "Create the index"


def _name_problem(name: str) -> str | None:
    """Return why a typed name cannot be sent, or None when it can."""
    if not name:
        return "Enter a name for the index."
    if not name.strip():
        return "The name is blank: enter a name for the index, not only spaces."
    return None


def _choice(value: Any, allowed: tuple[str, ...], what: str) -> str:
    text = getattr(value, "value", value)
    if text not in allowed:
        raise ValidationError(f"{what} {text!r} is not one of: {', '.join(allowed)}")
    return str(text)


def create_index_form(
    client: Client, *, on_created: Callable[[SearchIndex], object] | None = None
) -> CreateIndexForm:
    """Return a form that creates a search index with ``client``.

    Args:
        client: The client to create with; the form shows its base URL.
        on_created: Called with the new index after each create, on the form's worker
            thread.

    Returns:
        The form (an ``ipywidgets.VBox``); its ``.result`` holds the created index.

    Example:
        >>> form = sk.create_index_form(client, on_created=print)
        >>> form  # shows the form in a notebook
    """
    return CreateIndexForm(client, on_created=on_created)


# --- the index browser -------------------------------------------------------------------


class IndexBrowser(widgets.VBox):
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

    def __init__(self, client: Client, *, tz: str = "UTC", **kwargs: Any) -> None:
        resolve_zone(tz)  # an unknown zone is refused here, before anything is built
        self._client = client
        self._indexes = IndexList()
        self._listed = False
        self._status_kind = "info"
        self._png: bytes | None = None
        self._png_dark: bytes | None = None
        self._hint_text = ""
        self._state = threading.RLock()
        self._worker = _Worker("searchkit-index-browser")
        self._jobs = 0  # pending listings and drawings, for ``busy``
        self._generation = 0  # of the drawing asked for last; older ones are dropped
        self._colour_slots: dict[str, int] = {}
        self._quiet = False

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
        _hide(self._data_box, True)
        _hide(self._form_box, True)
        _hide(self._plot, True)

        self._refresh.on_click(self._on_refresh_click)
        self._select.observe(self._on_select_change, names="value")
        self._tz.observe(self._on_plot_option_change, names="value")
        self._resample.observe(self._on_plot_option_change, names="value")
        self.refresh(wait=False)

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
    def tz(self, zone: str) -> None:
        resolve_zone(zone)  # ValidationError, with a suggestion, for an unknown zone
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
        self._resample.value = _choice(choice, tuple(allowed), "resample")

    @property
    def form(self) -> CreateIndexForm:
        """The embedded create form."""
        return self._form

    @property
    def colours(self) -> dict[str, str]:
        """The colour of each listed index's line (light theme), by id, fixed for life."""
        with self._state:
            palette = _LIGHT_COLOURS
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
            KeyError: One of them names no listed index.
        """
        wanted = [names_or_ids] if isinstance(names_or_ids, str) else list(names_or_ids)
        ids: list[str] = []
        for key in wanted:
            found = [i.id for i in self._indexes if key in (i.id, i.name)]
            if not found:
                raise KeyError(f"no listed index has the name or id {key!r}")
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
        self._worker.close()
        self._form.close()
        super().close()

    def __repr__(self) -> str:
        return (
            f"IndexBrowser(base_url={getattr(self._client, 'base_url', None)!r}, "
            f"indexes={len(self._indexes)}, selected={len(self._select.value)})"
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        data = super()._repr_mimebundle_(**kwargs)
        if data is not None:
            data["text/html"] = self.static_html()
        return data

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
                    _hide(self._data_box, True)
                    _hide(self._form_box, True)
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
            _hide(self._data_box, False)
            _hide(self._form_box, False)
            self._end_job()
        self._redraw()

    def _draw_job(self, generation: int, snapshot: dict[str, Any]) -> None:
        try:
            with self._state:
                if generation != self._generation:
                    return  # a newer drawing was asked for: this one would be stale
            try:
                light, dark, note = _throughput_pngs(**snapshot)
            except _NoData:
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
                self._plot.value = _themed_images(light, dark, note, names)
                self._plot_status.value = ""
                _hide(self._plot, False)
                _hide(self._hint, True)
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
        for index in self._indexes:
            key = str(index.id)
            if key not in self._colour_slots:
                self._colour_slots[key] = len(self._colour_slots)

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
        cards = "".join(
            f'<div style="flex:0 1 420px">{index_card_html(i)}</div>' for i in self.selected
        )
        self._details.value = (
            f'<div style="display:flex;flex-wrap:wrap;gap:8px">{cards}</div>'
            if cards
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
        _hide(self._hint, False)
        _hide(self._plot, True)


def _labelled(indexes: IndexList) -> list[tuple[str, str]]:
    names = [i.name or "(no name)" for i in indexes]
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return [
        (name if counts[name] == 1 else f"{name} ({str(i.id)[:8]})", str(i.id))
        for name, i in zip(names, indexes, strict=True)
    ]


def _auto_resample(frame: pd.DataFrame) -> tuple[str | None, str]:
    """Pick the finest resampling that draws at most AUTO_POINTS points per line."""
    import pandas as pd

    if frame.empty:
        return None, "every point"
    most = int(frame.groupby("index_id", sort=False, observed=True).size().max())
    span = frame["time"].max() - frame["time"].min()
    for freq, label in _AUTO_STEPS:
        if freq == "":
            if most <= AUTO_POINTS:
                return None, label
            continue
        if span / pd.Timedelta(freq) <= AUTO_POINTS:
            return freq, label
    return "1D", "daily means"


def _throughput_pngs(
    *, indexes: IndexList, tz: str, resample: str, colours: dict[Any, int]
) -> tuple[bytes, bytes, str]:
    """Draw the throughput of ``indexes`` twice (light and dark theme) as PNG."""
    from matplotlib.figure import Figure

    from searchkit.frames.frames import throughput_frame
    from searchkit.render.plots import _draw_throughput

    frame = throughput_frame(indexes)
    if not frame["value"].notna().any():
        raise _NoData
    note = ""
    chosen: str | None = resample or None
    if resample == "auto":
        chosen, label = _auto_resample(frame)
        note = f"auto: {label}"
    pictures = []
    for theme in ("light", "dark"):
        palette = _THEMES[theme]
        colour_of = {
            str(key): palette["colours"][slot % len(palette["colours"])]
            for key, slot in colours.items()
        }
        # A bare Figure, not pyplot: nothing global, nothing shown by the inline backend.
        # Transparent, so it sits on the notebook's own background in either theme.
        figure = Figure(figsize=(9, 3.4), dpi=100, layout="constrained", facecolor="none")
        ax = figure.add_subplot(facecolor="none")
        _draw_throughput(frame, ax=ax, tz=tz, resample=chosen, colors=colour_of, linewidth=1.6)
        _theme_axes(ax, palette)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", metadata={"Software": None}, transparent=True)
        pictures.append(buffer.getvalue())
    return pictures[0], pictures[1], note


def _theme_axes(ax: Any, palette: dict[str, Any]) -> None:
    text, grid = palette["text"], palette["grid"]
    ax.tick_params(colors=text, which="both")
    for spine in ax.spines.values():
        spine.set_color(grid)
    ax.xaxis.label.set_color(text)
    ax.yaxis.label.set_color(text)
    ax.title.set_color(text)
    ax.grid(True, color=grid, linewidth=0.5, alpha=0.5)
    for label in (*ax.get_xticklabels(), *ax.get_yticklabels()):
        label.set_color(text)
    ax.xaxis.get_offset_text().set_color(text)
    for child in ax.texts:
        child.set_color(text)
    legend = ax.get_legend()
    if legend is not None:
        legend.get_title().set_color(text)
        for entry in legend.get_texts():
            entry.set_color(text)


class _NoData(Exception):
    """The indexes to plot have no throughput point with a value."""


def _themed_images(light: bytes, dark: bytes, note: str, names: list[str]) -> str:
    """HTML showing the light PNG in a light JupyterLab theme and the dark one in a dark."""
    import base64

    about = "throughput of " + ", ".join(names)

    def img(data: bytes, theme: str) -> str:
        encoded = base64.b64encode(data).decode("ascii")
        return (
            f'<img class="sk-plot-{theme}" alt="{html.escape(about)} ({theme} theme)" '
            f'style="max-width:100%" src="data:image/png;base64,{encoded}"/>'
        )

    # JupyterLab marks the page with data-jp-theme-light="true"/"false"; live widget output
    # is trusted, so this small style block applies (a saved picture uses the light image).
    style = (
        "<style>.sk-plot-dark{display:none}"
        'body[data-jp-theme-light="false"] .sk-plot-light{display:none}'
        'body[data-jp-theme-light="false"] .sk-plot-dark{display:inline}</style>'
    )
    caption = f'<div class="sk-plot-note">{html.escape(note)}</div>' if note else ""
    return f"{style}{img(light, 'light')}{img(dark, 'dark')}{caption}"


def index_browser(client: Client, *, tz: str = "UTC") -> IndexBrowser:
    """Return a browser of the account's indexes with a throughput plot and a create form.

    The browser returns at once and lists the indexes on its worker thread; call
    ``.wait()`` to wait for them from code.

    Args:
        client: The client to list (and create) with.
        tz: Initial time zone of the plot, an IANA name such as ``"Europe/Berlin"``.

    Returns:
        The browser (an ``ipywidgets.VBox``), listing, the first index to be selected.

    Raises:
        ValidationError: ``tz`` is not a known time zone.

    Example:
        >>> browser = sk.index_browser(client, tz="Europe/Berlin")
        >>> browser  # shows it in a notebook
    """
    return IndexBrowser(client, tz=tz)
