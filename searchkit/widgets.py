"""Notebook widgets: a form that creates an index, and a browser of the account's indexes.

Threading, decided here: clicking **Create** validates the fields at once (an empty or blank
name is refused before anything is sent), disables the button, and runs the request on a
worker thread, so the kernel stays free while the service answers (the client's read timeout
is 30 s by default) and the disabled state reaches the page immediately. A lock guards the
request: a click that arrives while one runs is ignored. Once an index is created (or may
have been, when the outcome is unknown) the button stays disabled and the same request is
not sent again until the name, region or plan changes, so a double click creates one index
however fast the service answers. ``CreateIndexForm.submit()`` does the same on the calling
thread, for driving the form from code; ``CreateIndexForm.wait()`` waits for a click's work.

Secrets: the widgets hold no token or password in any synced state. Cards show tokens
masked; the password stays inside the client.
"""

from __future__ import annotations

import html
import io
import logging
import re
import threading
import zoneinfo
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from searchkit.display import index_card_html, index_list_html, message_html
from searchkit.errors import (
    AmbiguousCreateError,
    AuthenticationError,
    InvalidResponseError,
    PermissionDeniedError,
    RateLimitError,
    SearchKitError,
    ServerError,
    TransportError,
    ValidationError,
    redact,
)
from searchkit.models import REGIONS, TYPES, IndexList, SearchIndex

if TYPE_CHECKING:
    from searchkit.client import Client

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
#: Resampling choices of the browser: label -> pandas frequency ("" plots every point).
RESAMPLE_CHOICES: tuple[tuple[str, str], ...] = (
    ("every point", ""),
    ("5-minute mean", "5min"),
    ("15-minute mean", "15min"),
    ("hourly mean", "1h"),
)

# "POST /v2/search -> 403: " or "GET /v2/search to http://host:port: " before the reason.
_PREFIX = re.compile(r"^(?:GET|POST|PUT|PATCH|DELETE|HEAD) \S+(?: -> \d{3}| to \S+)?: ")


# --- plain-words errors ------------------------------------------------------------------


def _detail(exc: BaseException) -> str:
    """Return the reason inside an error, without the method, path and status prefix."""
    server = getattr(exc, "server_message", None)
    if server:
        return str(server)
    text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return _PREFIX.sub("", " ".join(str(text).split()), count=1)


def _sentence(text: str) -> str:
    text = " ".join(text.split()).rstrip(". ")
    return f"{text[:1].upper()}{text[1:]}."


def _failure_sentence(
    exc: BaseException, client: Any, *, action: str, name: str = "", plan: str = ""
) -> str:
    """Say in one sentence why listing (``action="list"``) or creating failed."""
    base_url = getattr(client, "base_url", "the service")
    username = getattr(client, "username", "?")
    reason = _detail(exc).rstrip(". ")
    creating = action == "create"
    nothing = "; nothing was created" if creating else ""
    if isinstance(exc, AmbiguousCreateError):
        cause = exc.__cause__
        why = f" ({_detail(cause).rstrip('. ')})" if isinstance(cause, SearchKitError) else ""
        return (
            f"The service did not confirm whether index {name!r} was created{why}: refresh "
            "the list of indexes before trying again."
        )
    if isinstance(exc, ValidationError) and exc.status is None:
        return _sentence(reason)  # the client's own check: nothing was sent
    if isinstance(exc, ValidationError | PermissionDeniedError):
        hint = "; choose the free or payg plan" if plan == "fixed" and "fixed" in reason else ""
        what = "create the index" if creating else "list the indexes"
        return f"The service refused to {what}: {reason}{hint}."
    if isinstance(exc, AuthenticationError):
        return f"The service did not accept the username and password of {username!r}{nothing}."
    if isinstance(exc, RateLimitError):
        when = f"in {exc.retry_after:.0f} s" if exc.retry_after is not None else "shortly"
        return f"The service is limiting the rate of requests; try again {when}{nothing}."
    if isinstance(exc, TransportError):
        return f"Could not reach the service at {base_url} ({reason}){nothing}."
    if isinstance(exc, ServerError):
        status = f"HTTP {exc.status}: " if exc.status else ""
        return f"The service failed ({status}{reason}){nothing}."
    if isinstance(exc, InvalidResponseError):
        return f"The service sent an answer that could not be read ({reason}){nothing}."
    if isinstance(exc, SearchKitError):
        what = "The index could not be created" if creating else "Could not list the indexes"
        return f"{what}: {reason}."
    what = "The index could not be created" if creating else "Could not list the indexes"
    return f"{what}: unexpected {type(exc).__name__}: {redact(reason)}."


def _html_output(markup: str, text: str) -> dict[str, Any]:
    return {
        "output_type": "display_data",
        "data": {"text/html": markup, "text/plain": text},
        "metadata": {},
    }


def _hide(widget: widgets.Widget, hidden: bool) -> None:
    widget.layout.display = "none" if hidden else None


# --- the create form ---------------------------------------------------------------------


class CreateIndexForm(widgets.VBox):
    """A form that creates one search index: name, region, plan, a Create button, a result.

    Build it with :func:`create_index_form`. The form says which service it talks to,
    refuses an empty or blank name before sending anything, disables the button while the
    request runs, and shows the created index's card (tokens masked) or one sentence
    saying what went wrong; it stays usable after any failure.

    Attributes:
        result: The last index this form created, or None.
        error: The exception of the last failed attempt (None after a success).
        message: The sentence the form shows now, as plain text.

    Example:
        >>> form = create_index_form(client)
        >>> form.fill("docs", region="eu-west-1", type="free").submit()
        SearchIndex(id=..., name='docs', ...)
    """

    def __init__(
        self,
        client: Client,
        *,
        on_created: Callable[[SearchIndex], object] | None = None,
        **kwargs: Any,
    ) -> None:
        self._client = client
        self._callback = on_created
        self._result: SearchIndex | None = None
        self._error: BaseException | None = None
        self._message = ""
        # Held for the whole life of one request (validation to callback included).
        self._lock = threading.Lock()
        self._idle = threading.Event()
        self._idle.set()
        self._running = False
        # The last request that created an index, or may have: not sent again as is.
        self._sent: tuple[str, str, str] | None = None
        self._worker: threading.Thread | None = None

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
        self._name.observe(self._on_name_change, names="value")
        self._region.observe(self._on_region_change, names="value")
        self._type.observe(self._on_type_change, names="value")

    # -- public API ----------------------------------------------------------------------

    @property
    def result(self) -> SearchIndex | None:
        """The last index this form created, or None."""
        return self._result

    @property
    def error(self) -> BaseException | None:
        """The exception of the last failed attempt; None after a success or before any."""
        return self._error

    @property
    def message(self) -> str:
        """The sentence the form shows now, as plain text ("" before any attempt)."""
        return self._message

    @property
    def busy(self) -> bool:
        """Whether a request is running."""
        return self._running

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

    def submit(self) -> SearchIndex | None:
        """Create the index from the fields on this thread, as a click does on a worker.

        The form shows the outcome exactly as after a click. Nothing is sent when a name is
        missing, when a request is already running, or when the fields are those of the last
        index created (change one to create another).

        Returns:
            The created index, or None when nothing was created.

        Example:
            >>> form.fill("docs").submit().name
            'docs'
        """
        request = self._begin()
        if request is None:
            return None
        self._run(request)
        return self._result if self._error is None else None

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until no request runs (the ``on_created`` callback included).

        Args:
            timeout: Seconds to wait at most; forever when None.

        Returns:
            True when the form is idle, False when the timeout passed first.
        """
        return self._idle.wait(timeout)

    def __repr__(self) -> str:
        name = self._result.name if self._result is not None else None
        return (
            f"CreateIndexForm(base_url={getattr(self._client, 'base_url', None)!r}, "
            f"result={name!r})"
        )

    # -- handlers ------------------------------------------------------------------------

    def _on_create_click(self, _button: widgets.Button) -> None:
        request = self._begin()
        if request is None:
            return
        self._worker = threading.Thread(
            target=self._run, args=(request,), name="searchkit-create-index", daemon=True
        )
        self._worker.start()

    def _on_name_change(self, _change: dict[str, Any]) -> None:
        self._update_button()

    def _on_region_change(self, _change: dict[str, Any]) -> None:
        self._update_button()

    def _on_type_change(self, _change: dict[str, Any]) -> None:
        self._update_button()

    # -- internals -----------------------------------------------------------------------

    def _fields(self) -> tuple[str, str, str]:
        return (str(self._name.value or "").strip(), str(self._region.value), str(self._type.value))

    def _begin(self) -> tuple[str, str, str] | None:
        """Validate and claim the form for one request; None when nothing is to be sent."""
        if not self._lock.acquire(blocking=False):
            return None  # a request is running: this click is the second of a double click
        try:
            problem = _name_problem(str(self._name.value or ""))
            if problem is not None:
                self._error = ValidationError(problem)
                self._show([("error", problem)])
            request = self._fields()
            if problem is not None or request == self._sent:
                # Invalid, or the index of these fields exists: change a field to make another.
                self._lock.release()
                return None
            self._running = True
            self._idle.clear()
            self._update_button()
            name, region, plan = request
            self._show([("info", f"Creating index {name!r} in {region} on the {plan} plan…")])
            return request
        except BaseException:
            self._running = False
            self._idle.set()
            self._lock.release()
            raise

    def _run(self, request: tuple[str, str, str]) -> None:
        """Send the create, show the outcome, call back; always release the form."""
        name, region, plan = request
        try:
            try:
                index = self._client.create_index(name, region=region, type=plan)
            except Exception as exc:
                self._failed(request, exc)
            else:
                self._created(request, index)
        finally:
            self._running = False
            self._update_button()
            self._lock.release()
            self._idle.set()

    def _created(self, request: tuple[str, str, str], index: SearchIndex) -> None:
        self._result, self._error, self._sent = index, None, request
        region = index.region if index.region is not None else request[1]
        plan = index.type if index.type is not None else request[2]
        done = f"Created index {index.name!r} in {region} on the {plan} plan."
        parts: list[tuple[str, Any]] = [
            ("success", done),
            ("card", index),
            ("info", "To create another index, change the name, region or plan."),
        ]
        self._show(parts)
        if self._callback is None:
            return
        try:
            self._callback(index)
        except Exception as exc:
            log.exception("on_created callback of the create form failed")
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
        sentence = _failure_sentence(
            exc, self._client, action="create", name=request[0], plan=request[2]
        )
        self._show([("error", sentence)])

    def _show(self, parts: list[tuple[str, Any]]) -> None:
        """Replace the output area: ``(kind, text)`` messages and ``("card", index)``."""
        outputs = []
        for kind, value in parts:
            if kind == "card":
                outputs.append(_html_output(index_card_html(value), repr(value)))
            else:
                outputs.append(_html_output(message_html(value, kind), value))
        self._message = next((v for k, v in parts if k != "card"), "")
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
        on_created: Called with the new index after each create, on the worker thread
            when the button was clicked (on the caller's thread with ``submit()``).

    Returns:
        The form (an ``ipywidgets.VBox``); its ``.result`` holds the created index.

    Example:
        >>> form = sk.create_index_form(client, on_created=print)
        >>> form  # shows the form in a notebook
    """
    return CreateIndexForm(client, on_created=on_created)


# --- the index browser -------------------------------------------------------------------


class IndexBrowser(widgets.VBox):
    """The account's indexes: a limits table, a selection, a throughput plot, a create form.

    Build it with :func:`index_browser`. Refresh lists the indexes again; choosing indexes,
    a time zone or a resampling redraws the plot (a PNG image); creating an index with the
    embedded form refreshes the list and adds the new index to the selection.

    Example:
        >>> browser = index_browser(client)
        >>> browser.select(["docs-search", "news-archive"])
        >>> browser.tz = "Europe/Berlin"
    """

    def __init__(self, client: Client, *, tz: str = "UTC", **kwargs: Any) -> None:
        self._client = client
        self._indexes = IndexList()
        self._message = ""
        self._png: bytes | None = None
        self._lock = threading.RLock()
        self._quiet = False

        zones = list(TIME_ZONES)
        if tz not in zones:
            _check_zone(tz)
            zones.append(tz)
        self._status = widgets.HTML()
        self._refresh = widgets.Button(
            description="Refresh", icon="refresh", tooltip="List the indexes again"
        )
        # Wide tables scroll inside the widget instead of wrapping every cell.
        self._table = widgets.HTML(
            layout=widgets.Layout(overflow="auto", max_height="320px", width="100%")
        )
        self._select = widgets.SelectMultiple(
            description="Indexes",
            options=[],
            rows=6,
            layout=widgets.Layout(width="420px"),
        )
        self._tz = widgets.Dropdown(description="Time zone", options=zones, value=tz)
        self._resample = widgets.Dropdown(
            description="Resample", options=list(RESAMPLE_CHOICES), value=""
        )
        self._plot = widgets.Image(format="png", layout=widgets.Layout(max_width="100%"))
        self._hint = widgets.HTML()
        self._form = CreateIndexForm(client, on_created=self._on_form_created)
        for widget, css in (
            (self._status, "sk-status"),
            (self._refresh, "sk-refresh"),
            (self._table, "sk-table"),
            (self._select, "sk-select"),
            (self._tz, "sk-tz"),
            (self._resample, "sk-resample"),
            (self._plot, "sk-plot"),
            (self._hint, "sk-plot-hint"),
        ):
            widget.add_class(css)
        super().__init__(
            children=[
                widgets.HBox([self._refresh, self._status]),
                self._table,
                widgets.HBox([self._select, widgets.VBox([self._tz, self._resample])]),
                self._hint,
                self._plot,
                widgets.HTML("<b>Create an index</b>"),
                self._form,
            ],
            **kwargs,
        )
        self.add_class("sk-browser")

        self._refresh.on_click(self._on_refresh_click)
        self._select.observe(self._on_select_change, names="value")
        self._tz.observe(self._on_tz_change, names="value")
        self._resample.observe(self._on_resample_change, names="value")
        self.refresh()

    # -- public API ----------------------------------------------------------------------

    @property
    def indexes(self) -> IndexList:
        """The indexes as last listed."""
        return self._indexes

    @property
    def selected(self) -> IndexList:
        """The indexes chosen for the plot, in list order."""
        chosen = set(self._select.value)
        return IndexList(i for i in self._indexes if i.id in chosen)

    @property
    def tz(self) -> str:
        """The plot's time zone (an IANA name); assign to change it."""
        return str(self._tz.value)

    @tz.setter
    def tz(self, zone: str) -> None:
        if zone not in self._tz.options:
            _check_zone(zone)
            self._tz.options = (*self._tz.options, zone)
        self._tz.value = zone

    @property
    def form(self) -> CreateIndexForm:
        """The embedded create form."""
        return self._form

    @property
    def message(self) -> str:
        """The status line, as plain text."""
        return self._message

    @property
    def plot_png(self) -> bytes | None:
        """The PNG bytes of the plot shown now; None when nothing is selected."""
        return self._png

    def refresh(self) -> IndexList:
        """List the indexes again and redraw; keep the selection of indexes still there.

        A failure keeps the previous data and shows one sentence in the status line.

        Returns:
            The indexes now shown.
        """
        with self._lock:
            try:
                indexes = self._client.list_indexes()
            except Exception as exc:
                if not isinstance(exc, SearchKitError):
                    log.exception("listing indexes for the browser failed unexpectedly")
                self._set_status(_failure_sentence(exc, self._client, action="list"), "error")
                return self._indexes
            self._indexes = indexes
            self._table.value = index_list_html(indexes)
            keep = [i for i in self._select.value if any(x.id == i for x in indexes)]
            if not keep and len(indexes):
                keep = [indexes[0].id]
            with self._hushed():
                self._select.options = _labelled(indexes)
                self._select.value = tuple(keep)
            count = f"{len(indexes)} index" + ("" if len(indexes) == 1 else "es")
            self._set_status(f"{count} at {getattr(self._client, 'base_url', '?')}", "info")
            self._render()
            return indexes

    def select(self, names_or_ids: Iterable[str]) -> None:
        """Choose the indexes to plot, by name or id.

        Args:
            names_or_ids: Names or ids of listed indexes; a name picks every index so named.

        Raises:
            KeyError: One of them names no listed index.
        """
        wanted = list(names_or_ids) if not isinstance(names_or_ids, str) else [names_or_ids]
        ids: list[str] = []
        for key in wanted:
            found = [i.id for i in self._indexes if key in (i.id, i.name)]
            if not found:
                raise KeyError(f"no listed index has the name or id {key!r}")
            ids += [i for i in found if i is not None and i not in ids]
        self._select.value = tuple(ids)

    def __repr__(self) -> str:
        return (
            f"IndexBrowser(base_url={getattr(self._client, 'base_url', None)!r}, "
            f"indexes={len(self._indexes)}, selected={len(self._select.value)})"
        )

    # -- handlers ------------------------------------------------------------------------

    def _on_refresh_click(self, _button: widgets.Button) -> None:
        self.refresh()

    def _on_select_change(self, _change: dict[str, Any]) -> None:
        if not self._quiet:
            self._render()

    def _on_tz_change(self, _change: dict[str, Any]) -> None:
        self._render()

    def _on_resample_change(self, _change: dict[str, Any]) -> None:
        self._render()

    def _on_form_created(self, index: SearchIndex) -> None:
        # Runs on the form's worker thread after a click; the lock orders it with refresh.
        with self._lock:
            previous = tuple(self._select.value)
            self.refresh()
            if index.id is not None and any(i.id == index.id for i in self._indexes):
                self._select.value = (*[i for i in previous if i != index.id], index.id)

    # -- internals -----------------------------------------------------------------------

    @contextmanager
    def _hushed(self) -> Iterator[None]:
        self._quiet = True
        try:
            yield
        finally:
            self._quiet = False

    def _set_status(self, text: str, kind: str) -> None:
        self._message = text
        self._status.value = message_html(text, kind)

    def _render(self) -> None:
        with self._lock:
            selected = self.selected
            if not len(selected):
                self._show_hint("Select one or more indexes to plot their throughput.")
                return
            try:
                self._png = _throughput_png(selected, self.tz, self._resample.value or None)
            except SearchKitError as exc:
                self._show_hint(f"Could not plot the throughput: {_detail(exc).rstrip('. ')}.")
                return
            self._plot.value = self._png
            _hide(self._plot, False)
            _hide(self._hint, True)

    def _show_hint(self, text: str) -> None:
        self._png = None
        self._hint.value = message_html(text, "info")
        _hide(self._hint, False)
        _hide(self._plot, True)


def _labelled(indexes: IndexList) -> list[tuple[str, str]]:
    names = [i.name or "(no name)" for i in indexes]
    return [
        (name if names.count(name) == 1 else f"{name} ({str(i.id)[:8]})", str(i.id))
        for name, i in zip(names, indexes, strict=True)
    ]


def _check_zone(zone: str) -> None:
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, TypeError) as exc:
        raise ValidationError(f"unknown time zone {zone!r}") from exc


def _throughput_png(indexes: IndexList, tz: str, resample: str | None) -> bytes:
    """Draw the throughput of ``indexes`` on a figure of its own and return it as PNG."""
    from matplotlib.figure import Figure

    from searchkit.plotting import plot_throughput

    # A bare Figure, not pyplot: nothing global, nothing shown by the inline backend.
    figure = Figure(figsize=(9, 3.4), dpi=100, layout="constrained")
    plot_throughput(indexes, ax=figure.add_subplot(), tz=tz, resample=resample)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def index_browser(client: Client, *, tz: str = "UTC") -> IndexBrowser:
    """Return a browser of the account's indexes with a throughput plot and a create form.

    Args:
        client: The client to list (and create) with.
        tz: Initial time zone of the plot, an IANA name such as ``"Europe/Berlin"``.

    Returns:
        The browser (an ``ipywidgets.VBox``), already listed, the first index selected.

    Raises:
        ValidationError: ``tz`` is not a known time zone.

    Example:
        >>> browser = sk.index_browser(client, tz="Europe/Berlin")
        >>> browser  # shows it in a notebook
    """
    return IndexBrowser(client, tz=tz)
