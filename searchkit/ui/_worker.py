"""The widgets' worker thread and small helpers they share.

Threading, one model for both widgets (the form and the browser):

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
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

if TYPE_CHECKING:
    pass

__all__ = ["StaticPicture", "Worker", "hide", "html_output", "log"]

log = logging.getLogger("searchkit")


def html_output(markup: str, text: str) -> dict[str, Any]:
    return {
        "output_type": "display_data",
        "data": {"text/html": markup, "text/plain": text},
        "metadata": {},
    }


class StaticPicture(widgets.DOMWidget):
    """A widget whose display also carries a static HTML picture of itself (no secret in
    it): JupyterLab shows the live widget, a saved notebook read without a kernel (or
    GitHub, nbviewer) the picture. Subclasses say what it shows in :meth:`static_html`."""

    def static_html(self) -> str:
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        bundle: dict[str, Any] | None = super()._repr_mimebundle_(**kwargs)
        if bundle is not None:
            bundle["text/html"] = self.static_html()
        return bundle


def hide(widget: widgets.Widget, hidden: bool) -> None:
    widget.layout.display = "none" if hidden else None


class Worker:
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
