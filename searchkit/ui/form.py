"""The notebook form that creates an index: name, region and plan, one request per click.

The form claims a request atomically: a click that arrives while one runs is ignored, and
once an index is created (or may have been, when the outcome is unknown) the same request
is not sent again until the name, region or plan changes, so a double click creates one
index however fast the service answers.

Secrets: the widgets hold no token or password in any synced state or display data. Cards
show tokens masked; the password stays inside the client.

Threads: see :mod:`searchkit.ui._worker`.
"""

from __future__ import annotations

import concurrent.futures
import html
import threading
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import traitlets

from searchkit.errors import (
    AmbiguousCreateError,
    IndexExistsError,
    SearchKitError,
    ValidationError,
    describe_failure,
    redact,
)
from searchkit.model.index import SearchIndex
from searchkit.model.limits import REGIONS, TYPES
from searchkit.render.html import (
    create_form_html,
    index_card_html,
    message_html,
)
from searchkit.ui._worker import StaticPicture, Worker, html_output, log

if TYPE_CHECKING:
    from searchkit.api.client import Client

__all__ = ["TYPE_LABELS", "CreateIndexForm", "choice_of", "create_index_form"]

#: What the type (plan) dropdown shows for each type; ``fixed`` is offered but may be refused.
TYPE_LABELS: dict[str, str] = {
    "free": "free",
    "payg": "payg (pay as you go)",
    "fixed": "fixed (may not be available)",
}


class CreateIndexForm(StaticPicture, widgets.VBox):
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
        self._worker = Worker("searchkit-create-form")
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
            description="Type",
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
            self._region.value = choice_of(region, REGIONS, "region")
        if type is not None:
            self._type.value = choice_of(type, TYPES, "type")
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
            result: SearchIndex | None = future.result(timeout)
            return result
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
        if isinstance(exc, IndexExistsError):
            sentence = _exists_sentence(exc)  # a form has no if_exists argument to pass
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
                outputs.append(html_output(index_card_html(value), repr(value)))
            else:
                outputs.append(html_output(message_html(value, kind), value))
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


def choice_of(value: Any, allowed: tuple[str, ...], what: str) -> str:
    """Return ``value`` if it is one of ``allowed``; else raise ValidationError naming ``what``."""
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


def _exists_sentence(exc: IndexExistsError) -> str:
    """The refusal of an existing name in words for the form's user (no ``if_exists``)."""
    ids = ", ".join(str(getattr(index, "id", None)) for index in exc.existing)
    return (
        f"An index named {exc.name!r} already exists (id {ids}); nothing was created. "
        "Choose another name, or use the existing index: "
        f"client.list_indexes()[{exc.name!r}]."
    )
