"""The quota cockpit: which index runs out first today, when, and how sure we are.

One widget over a History (or anything :func:`~searchkit.forecast_limits` takes): the
table of urgency (one row per index for the chosen limit, sorted by when it runs out),
and the picture of the selected index (today against the limit with the forecast fan, or
its daily usage over 7, 30 or 90 days or between two dates). Refresh (a button, or an
interval while a collector writes the same store) reads only the files written since the
last read (:func:`~searchkit.render.cockpit_data.read_by_refresh`), and keeps the
selection, the sort and the filter.

Threads: the model of :mod:`searchkit.ui._worker`: handlers only read the controls and
submit a job; reading and drawing run on the cockpit's one worker thread; widget state
changes inside ``with self._state:``.

Secrets: the widget state holds the rows' text and the pictures; no token, password or
URL credential (an IndexList's tokens never leave it). Errors show as one calm sentence in
the status line, never as a traceback in the cell; the previous table stays.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pandas as pd
import traitlets

from searchkit._units import format_duration
from searchkit.errors import SearchKitError, ValidationError, describe_failure, mask_url
from searchkit.frames.counting import ValueUnit
from searchkit.frames.sources import Source
from searchkit.frames.zones import Instant, TimeZone, zone_name
from searchkit.render import cockpit_data as data
from searchkit.render import cockpit_pictures as pictures
from searchkit.render import cockpit_table as table
from searchkit.render.html import message_html
from searchkit.ui._cockpit_view import CockpitView
from searchkit.ui._worker import Worker, log

__all__ = ["QuotaCockpit", "quota_cockpit"]

#: Refresh intervals offered: label -> seconds (0: only on request).
INTERVALS: tuple[tuple[str, int], ...] = (
    ("off", 0),
    ("1 min", 60),
    ("5 min", 300),
    ("10 min", 600),
)
_STALE = pd.Timedelta(hours=2)


class QuotaCockpit(CockpitView):
    """The table of urgency and the picture of one index; see :func:`quota_cockpit`.

    Observable traits: ``busy`` (a read or drawing runs), ``message`` (the status line).
    """

    busy = traitlets.Bool(False, read_only=True, help="Whether a read or drawing runs.")
    message = traitlets.Unicode("", read_only=True, help="The status line, as plain text.")

    def __init__(
        self,
        source: Source,
        *,
        now: Instant | Callable[[], Instant] | None = None,
        field: str | None = None,
        tz: TimeZone = None,
        value_unit: ValueUnit = "per_second",
        refresh_every: float | None = None,
    ) -> None:
        name = zone_name(tz)  # an unknown zone is refused here, before anything is built
        self._source = source
        self._reading = data.read_by_refresh(source)  # a refresh reads only what is new
        self._now = now
        self._value_unit = value_unit
        self._state = threading.RLock()
        self._worker = Worker("searchkit-quota-cockpit")
        self._jobs = 0
        self._generation = 0
        self._day: Any = None  # the analytics DayForecast of the last read
        self._scores: pd.DataFrame | None = None
        self._scored_day: str | None = None
        self._usage: pd.DataFrame | None = None
        self._rows = pd.DataFrame()
        self._newest: pd.Timestamp | None = None
        self._read_newest: pd.Timestamp | None = None
        self._timer: threading.Timer | None = None
        super().__init__(field=field, tz=name)
        threading.Thread(target=pictures.warm_up, name="searchkit-cockpit-warm-up").start()
        self.refresh(wait=False, force=True)
        if refresh_every:
            self.refresh_every = refresh_every

    # -- public API ----------------------------------------------------------------------

    @property
    def rows(self) -> pd.DataFrame:
        """Every row (not only those shown): forecast_limits' frame and the backtest's
        columns (``band_held``, ``calls_right``, ``backtested``), by ``index_id``."""
        with self._state:
            return self._rows.copy()

    @property
    def shown(self) -> pd.DataFrame:
        """The rows the table shows now (filtered and sorted; all pages)."""
        with self._state:
            return self.filtered(self._rows)

    @property
    def refresh_every(self) -> float | None:
        """Seconds between automatic refreshes, or None; assign to change it."""
        return float(self._interval.value) or None

    @refresh_every.setter
    def refresh_every(self, seconds: float | None) -> None:
        seconds = float(seconds or 0)
        if seconds < 0 or seconds != seconds:
            raise ValidationError(f"refresh_every must be seconds >= 0, got {seconds!r}")
        options = dict(self._interval.options)
        if seconds and seconds not in options.values():
            label = format_duration(seconds) if seconds >= 1 else f"{seconds:g} s"
            self._interval.options = (*self._interval.options, (label, seconds))
        self._interval.value = seconds

    def refresh(
        self, *, wait: bool = True, timeout: float | None = None, force: bool = False
    ) -> pd.DataFrame:
        """Read the source again (only when it holds a newer point) and redraw.

        Args:
            wait: Wait until the table and the picture are shown.
            timeout: Seconds to wait at most; forever when None.
            force: Read even when the newest point did not change.

        Returns:
            The rows (see :attr:`rows`), as they are when this returns.

        Raises:
            RuntimeError: The cockpit was closed.
        """
        if self._worker.closed:
            raise RuntimeError("this cockpit was closed; make another with sk.quota_cockpit()")
        with self._state:
            self._begin_job()
            self.show_status("Reading " + mask_url(data.source_text(self._source)) + "…", "busy")
        self._worker.submit(self._read_job, force)
        if wait and not self._worker.on_worker():
            self._worker.wait(timeout)
        return self.rows

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until no read or drawing runs; False when ``timeout`` passed first."""
        return self._worker.wait(timeout)

    def csv(self) -> str:
        """The rows shown (filtered and sorted, every page) as CSV: see rows_csv."""
        return table.rows_csv(self.shown)

    def close(self) -> None:
        """Stop the interval and the worker thread, and close the widgets."""
        if "_worker" not in vars(self):  # its arguments were refused: nothing started
            return
        self._stop_timer()
        self._worker.close()
        super().close()

    def __enter__(self) -> QuotaCockpit:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"QuotaCockpit(rows={len(self._rows)}, selected={self.selected_id!r})"

    # -- jobs (worker thread) ------------------------------------------------------------

    def _read_job(self, force: bool) -> None:
        try:
            self._read(force)
        except Exception as exc:  # shown in the widget; the previous rows stay
            if not isinstance(exc, SearchKitError | OSError):
                log.exception("the quota cockpit could not read its source")
            with self._state:
                self.show_status(_failure_text(exc), "error")
        finally:
            with self._state:
                self._end_job()

    def _read(self, force: bool) -> None:
        newest = data.newest_point(self._reading)
        with self._state:
            field = self.field
            unchanged = not force and newest is not None and newest == self._read_newest
        if unchanged:
            with self._state:
                self.show_status(self._summary(newest, fresh=False), self._kind(newest))
            return
        now = self._now() if callable(self._now) else self._now
        day = _twice(
            lambda: data.cockpit_forecast(
                self._reading, now=now, field=field, value_unit=self._value_unit
            )
        )
        with self._state:
            self._day, self._read_newest, self._newest = day, newest, newest
            self._usage = None
            self._rows = table.with_scores(day.rows, self._scores_for(day))
            self.show_rows()
            self.show_status(self._summary(newest, fresh=True), self._kind(newest))
            self.redraw()  # queued before the backtest: the picture does not wait for it
            self._begin_job()
        self._worker.submit(self._score_job, day, field)

    def _score_job(self, day: Any, field: str | None) -> None:
        try:
            self._score(day, field)
        finally:
            with self._state:
                self._end_job()

    def _score(self, day: Any, field: str | None) -> None:
        """The backtest's columns, once per UTC day and limit (they change when one closes)."""
        key = f"{day.as_of:%Y-%m-%d} {field}"
        if key == self._scored_day:
            return
        try:
            scores = table.backtest_scores(day)
        except Exception as exc:  # the forecast stands without its backtest
            log.warning("backtest for the quota cockpit failed: %s", describe_failure(exc))
            scores = pd.DataFrame(columns=list(table.SCORE_COLUMNS))
        with self._state:
            self._scores, self._scored_day = scores, key
            if self._day is day:
                self._rows = table.with_scores(day.rows, scores)
                self.show_rows()

    def _scores_for(self, day: Any) -> pd.DataFrame | None:
        key = f"{day.as_of:%Y-%m-%d} {self.field}"
        return self._scores if key == self._scored_day else None

    def draw_job(self, generation: int, options: dict[str, Any]) -> None:
        """Draw the selected index's picture (called by the view on the worker)."""
        try:
            with self._state:
                if generation != self._generation or self._day is None:
                    return
                day, index_id = self._day, options["index_id"]
            if options["view"] == "today":
                light, dark = pictures.day_pngs(day, index_id, tz=options["tz"])
            else:
                usage = self._usage
                if usage is None:
                    usage = data.cockpit_usage(
                        self._source, field=options["field"], value_unit=self._value_unit
                    )
                    with self._state:
                        self._usage = usage
                light, dark = pictures.daily_pngs(
                    usage,
                    index_id,
                    name=options["name"],
                    field=str(day.rows["field"].iloc[0]),
                    days=options["days"],
                    dates=options["dates"],
                )
            about = f"{options['name']} as of {day.as_of:%H:%M} UTC"
            if options["view"] != "today" and options["dates"] is not None:
                about += " from {} to {}".format(*options["dates"])
            with self._state:
                if generation == self._generation:
                    # The instant drawn is in the picture's text: a refresh shows in it.
                    self.show_picture(light, dark, about)
        except Exception as exc:
            log.warning("the quota cockpit could not draw: %s", describe_failure(exc))
            with self._state:
                self.show_picture_error(_failure_text(exc))
        finally:
            with self._state:
                self._end_job()

    # -- the view's hooks (called with self._state held) -------------------------------------

    def submit_draw(self, options: dict[str, Any]) -> None:
        self._generation += 1
        self._begin_job()
        self._worker.submit(self.draw_job, self._generation, options)

    def reload(self) -> None:
        """The limit field changed: read again for it."""
        self.refresh(wait=False, force=True)

    def set_interval(self, seconds: float) -> None:
        self._stop_timer()
        if seconds > 0 and not self._worker.closed:
            self._timer = threading.Timer(seconds, self._tick, args=(seconds,))
            self._timer.daemon = True
            self._timer.start()

    # -- internals -----------------------------------------------------------------------

    def _tick(self, seconds: float) -> None:
        if self._worker.closed:
            return
        if not self.busy:
            self.refresh(wait=False)
        self.set_interval(seconds)

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _begin_job(self) -> None:
        self._jobs += 1
        self.set_trait("busy", True)

    def _end_job(self) -> None:
        self._jobs -= 1
        if self._jobs == 0:
            self.set_trait("busy", False)

    def show_status(self, text: str, kind: str) -> None:
        self.set_trait("message", text)
        self.status_widget.value = message_html(text, kind)

    def _kind(self, newest: pd.Timestamp | None) -> str:
        return "error" if self._is_stale(newest) else "info"

    def _is_stale(self, newest: pd.Timestamp | None) -> bool:
        if newest is None or self._day is None:
            return False
        return bool(self._day.as_of - newest > _STALE)

    def _summary(self, newest: pd.Timestamp | None, *, fresh: bool) -> str:
        day = self._day
        if day is None or day.rows.empty:
            return (
                f"Nothing to forecast: {data.source_text(self._source)} holds no index yet "
                "(collect first: searchkit collect --store LOCATION)."
            )
        count = f"{len(day.rows):,} index" + ("" if len(day.rows) == 1 else "es")
        point = "" if newest is None else f"; newest point {newest:%Y-%m-%d %H:%M} UTC"
        if newest is not None and self._is_stale(newest):
            return (
                f"Stale: the newest point is from {newest:%Y-%m-%d %H:%M} UTC, "
                f"{format_duration((day.as_of - newest).total_seconds())} before "
                f"{day.as_of:%H:%M} UTC; today is not "
                "forecast until a collector writes again."
            )
        again = "" if fresh else " (nothing new since the last read)"
        return f"{count}, forecast as of {day.as_of:%Y-%m-%d %H:%M} UTC{point}{again}."


def _twice(read: Callable[[], Any]) -> Any:
    """Read; once more when a file vanished under the read (a compaction replaced it)."""
    try:
        return read()
    except FileNotFoundError:
        return read()


def _failure_text(exc: BaseException) -> str:
    if isinstance(exc, SearchKitError):
        return f"Could not read the usage: {describe_failure(exc)} The previous table stays."
    if isinstance(exc, OSError):
        return (
            "Could not read the store (a file is missing or unreadable; is it being "
            f"compacted or copied?): {mask_url(str(exc))}. The previous table stays; "
            "refresh to try again."
        )
    return (
        f"Could not read the store: {describe_failure(exc)} (corrupt file?) "
        "The previous table stays; refresh to try again."
    )


def quota_cockpit(
    source: Source,
    *,
    now: Instant | Callable[[], Instant] | None = None,
    field: str | None = None,
    tz: TimeZone = None,
    value_unit: ValueUnit = "per_second",
    refresh_every: float | None = None,
) -> QuotaCockpit:
    """Return a live view of which index runs out of its daily limit first, and when.

    The table lists each index's forecast for the limit (the rows of
    :func:`~searchkit.forecast_limits` on the same source and ``now``, beside how its
    forecasts fared in :func:`~searchkit.backtest_forecast`), soonest hit first; it sorts
    by any column, filters by name, pages 25 rows at a time, and exports what it shows
    as CSV. Selecting a row (click, or the arrow keys) draws that index's day: today's
    operations against the limit with the forecast fan to the reset, the past days faint
    behind, the hit marked; or its daily usage over 7, 30 or 90 days or between two
    dates. Both JupyterLab
    themes are drawn for; a saved notebook keeps a picture of it.

    Args:
        source: A :class:`~searchkit.History` (refreshes read it again when it holds a
            newer point), an IndexList, raw API JSON or a throughput frame: anything
            :func:`~searchkit.forecast_limits` takes.
        now: The instant to forecast from (as ``forecast_limits`` takes it), or a
            function returning it at each refresh (``emulator.now``); default the present.
        field: The limit (as ``forecast_limits`` takes it); selectable in the widget.
        tz: Time zone of the times shown, an IANA name or its ``ZoneInfo``; None is UTC
            (the limits still reset at UTC midnight).
        value_unit: See :func:`~searchkit.usage_frame`.
        refresh_every: Seconds between automatic refreshes (None: on request only).

    Returns:
        The cockpit (an ``ipywidgets.VBox``); it reads on its worker thread: call
        ``.wait()`` to wait from code.

    Raises:
        ValidationError: ``tz`` or ``field`` is not understood.

    Example:
        >>> cockpit = sk.quota_cockpit(sk.History("usage-history"), refresh_every=600)
        >>> cockpit  # doctest: +SKIP
    """
    return QuotaCockpit(
        source, now=now, field=field, tz=tz, value_unit=value_unit, refresh_every=refresh_every
    )
