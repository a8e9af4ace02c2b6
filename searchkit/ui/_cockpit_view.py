"""The quota cockpit's controls: the table's filter, sort, pages and selection, the view.

:class:`CockpitView` lays the widgets out and keeps what is shown consistent (the page
holding the selection, the selection across refreshes); :class:`~searchkit.ui.cockpit.
QuotaCockpit` reads and draws. The table is a listbox of aligned rows, so the keyboard
moves through it (Tab to it, the arrow keys to select, each selection draws).
"""

from __future__ import annotations

import base64
import datetime as dt
from typing import Any

import ipywidgets as widgets
import pandas as pd

from searchkit.errors import UnknownIndexError, ValidationError
from searchkit.frames.zones import TimeZone, resolve_zone, zone_name
from searchkit.render import cockpit_pictures as pictures
from searchkit.render import cockpit_table as table
from searchkit.render.html import message_html, png_tag
from searchkit.ui._worker import StaticPicture, hide
from searchkit.ui.browser import TIME_ZONES

__all__ = ["DAY_RANGES", "PAGE_ROWS", "VIEWS", "CockpitView"]

#: Rows per page of the table.
PAGE_ROWS = 25
#: The daily view's ranges: label -> days (0: the days between two dates chosen).
DAY_RANGES: tuple[tuple[str, int], ...] = (
    ("7 days", 7),
    ("30 days", 30),
    ("90 days", 90),
    ("dates", 0),
)
#: The two pictures of the selected index.
VIEWS: tuple[tuple[str, str], ...] = (("Today", "today"), ("Daily usage", "daily"))
_NBSP = "\u00a0"  # an option's text collapses spaces; these keep the columns aligned
_STYLE = (
    "<style>.sk-cockpit-rows select,.sk-cockpit .sk-sort-header{font-family:"
    "var(--jp-code-font-family,monospace);font-size:12px}"
    # The headers are buttons as wide as their columns (in characters of the same font).
    ".sk-cockpit .sk-sort-header{margin:0;padding:0 0 0 1px;height:22px;text-align:left;"
    "overflow:hidden;white-space:pre;flex:0 0 auto}"
    ".sk-cockpit .sk-sort-header.sk-sort-right{text-align:right;padding:0 1ch 0 0}"
    ".sk-cockpit .sk-sort-header.sk-sorted{font-weight:bold}"
    ".sk-cockpit-picture .sk-plot-dark{display:none}"
    'body[data-jp-theme-light="false"] .sk-cockpit-picture .sk-plot-light{display:none}'
    'body[data-jp-theme-light="false"] .sk-cockpit-picture .sk-plot-dark{display:inline}'
    "</style>"
)


class CockpitView(StaticPicture, widgets.VBox):
    """The cockpit's widgets and what they show; subclasses read and draw."""

    _rows: pd.DataFrame
    _state: Any

    def __init__(self, *, field: str | None, tz: str) -> None:
        self._page = 0
        self._quiet = False
        self._png: bytes | None = None
        self._picture_about = ""
        self._filling = False  # the date range being filled in: no drawing per date
        self._offered: pd.DataFrame | None = None  # the rows the download link holds
        self._build(field, tz)
        super().__init__(children=self._layout())
        self.add_class("sk-cockpit")
        self._wire()

    def _build(self, field: str | None, tz: str) -> None:
        zones = list(TIME_ZONES) + ([tz] if tz not in TIME_ZONES else [])
        fields = [(table.field_words(f), f) for f in table.FIELD_CHOICES]
        chosen = table.check_cockpit_field(field)
        self.status_widget = widgets.HTML()
        self._refresh_button = widgets.Button(
            description="Refresh", icon="refresh", tooltip="Read what is new in the store"
        )
        self._interval = widgets.Dropdown(
            description="Auto",
            options=[("off", 0.0), ("1 min", 60.0), ("5 min", 300.0), ("10 min", 600.0)],
            value=0.0,
            layout=widgets.Layout(width="160px"),
        )
        self._field = widgets.Dropdown(description="Limit", options=fields, value=chosen)
        self._tz = widgets.Dropdown(description="Time zone", options=zones, value=tz)
        self._filter = widgets.Text(
            description="Filter", placeholder="part of a name", continuous_update=True
        )
        self._sort_key, self._descending = "urgency", False
        self._headers = {
            key: self._header_button(title, width, key, right)
            for title, width, key, right in table.HEADERS
        }
        self._previous = widgets.Button(
            description="Previous", layout=widgets.Layout(width="110px")
        )
        self._next = widgets.Button(description="Next", layout=widgets.Layout(width="110px"))
        self._page_label = widgets.HTML()
        self._export = widgets.Button(
            description="Export CSV",
            icon="download",
            tooltip="The rows shown (all pages) as a CSV file",
        )
        self._download = widgets.HTML()
        self._header = widgets.HBox(
            list(self._headers.values()), layout=widgets.Layout(margin="0 0 0 4px")
        )
        self._select = widgets.Select(
            options=[], rows=PAGE_ROWS, layout=widgets.Layout(width="100%")
        )
        self._detail = widgets.HTML()
        self._view = widgets.ToggleButtons(options=list(VIEWS), value="today")
        self._days = widgets.Dropdown(
            description="Range",
            options=list(DAY_RANGES),
            value=30,
            layout=widgets.Layout(width="180px"),
        )
        self._first = widgets.DatePicker(description="From", layout=widgets.Layout(width="220px"))
        self._last = widgets.DatePicker(description="To", layout=widgets.Layout(width="220px"))
        self._picture = widgets.HTML(layout=widgets.Layout(width="100%"))
        for widget, css in (
            (self.status_widget, "sk-status"),
            (self._refresh_button, "sk-refresh"),
            (self._interval, "sk-interval"),
            (self._field, "sk-field"),
            (self._tz, "sk-tz"),
            (self._filter, "sk-filter"),
            (self._previous, "sk-previous"),
            (self._next, "sk-next"),
            (self._page_label, "sk-page"),
            (self._export, "sk-export"),
            (self._download, "sk-download"),
            (self._header, "sk-cockpit-header"),
            (self._select, "sk-cockpit-rows"),
            (self._detail, "sk-detail"),
            (self._view, "sk-view"),
            (self._days, "sk-days"),
            (self._first, "sk-first-day"),
            (self._last, "sk-last-day"),
            (self._picture, "sk-cockpit-picture"),
        ):
            widget.add_class(css)

    @staticmethod
    def _header_button(title: str, width: int, key: str, right: bool) -> widgets.Button:
        """A column's header: a button as wide as the column that sorts by it."""
        words = next(k for k, v in table.SORT_KEYS.items() if v == key)
        button = widgets.Button(
            description=title,
            tooltip=f"Sort by {words} (again: the other way)",
            layout=widgets.Layout(width=f"{width + 1}ch"),
        )
        button.add_class("sk-sort-header")
        button.add_class(f"sk-sort-{key}")
        if right:
            button.add_class("sk-sort-right")
        return button

    def _layout(self) -> list[widgets.Widget]:
        row = widgets.HBox
        return [
            widgets.HTML(_STYLE),
            row([self._refresh_button, self._interval, self._field, self._tz]),
            self.status_widget,
            self._filter,
            self._header,
            self._select,
            row([self._previous, self._page_label, self._next, self._export, self._download]),
            self._detail,
            row([self._view, self._days, self._first, self._last]),
            self._picture,
        ]

    def _wire(self) -> None:
        self._refresh_button.on_click(lambda _b: self.refresh(wait=False))
        self._previous.on_click(lambda _b: self._turn(-1))
        self._next.on_click(lambda _b: self._turn(1))
        self._export.on_click(lambda _b: self._offer_csv())
        self._select.observe(self._on_select, names="value")
        self._filter.observe(self._on_table_option, names="value")
        for key, button in self._headers.items():
            button.on_click(lambda _b, key=key: self._on_header(key))
        for control in (self._tz, self._view, self._days):
            control.observe(lambda _c: self._redraw_locked(), names="value")
        for picker in (self._first, self._last):
            picker.observe(self._on_date, names="value")
        self._tz.observe(lambda _c: self._show_rows_locked(), names="value")
        self._field.observe(lambda _c: self.reload(), names="value")
        self._interval.observe(lambda c: self.set_interval(float(c["new"])), names="value")
        for control in (self._days, self._first, self._last):
            hide(control, True)

    # -- what subclasses provide ----------------------------------------------------------

    def refresh(
        self, *, wait: bool = True, timeout: float | None = None, force: bool = False
    ) -> Any:
        raise NotImplementedError

    def reload(self) -> None:
        raise NotImplementedError

    def set_interval(self, seconds: float) -> None:
        raise NotImplementedError

    def submit_draw(self, options: dict[str, Any]) -> None:
        raise NotImplementedError

    # -- public API ----------------------------------------------------------------------

    @property
    def field(self) -> str:
        """The limit compared with (a field or a sum of fields); assign to change it."""
        return str(self._field.value)

    @field.setter
    def field(self, value: str | None) -> None:
        self._field.value = table.check_cockpit_field(value)

    @property
    def tz(self) -> str:
        """The time zone of the times shown; assign to change it."""
        return str(self._tz.value)

    @tz.setter
    def tz(self, zone: TimeZone) -> None:
        zone = zone_name(zone)  # an IANA name; a bare offset or an unknown zone is refused
        if zone not in self._tz.options:
            self._tz.options = (*self._tz.options, zone)
        self._tz.value = zone

    @property
    def selected_id(self) -> str | None:
        """The ``index_id`` of the selected row, or None."""
        value = self._select.value
        return None if value is None else str(value)

    @property
    def page_lines(self) -> list[str]:
        """The text of the rows on the page shown (as the listbox shows them)."""
        return [str(label).replace(_NBSP, " ") for label, _ in self._select.options]

    @property
    def picture_png(self) -> bytes | None:
        """The picture shown (light theme) as PNG bytes; None when none is shown."""
        return self._png

    def filter(self, text: str) -> None:
        """Show only the rows whose name holds ``text`` (any case)."""
        self._filter.value = text

    @property
    def sorted_by(self) -> tuple[str, bool]:
        """The sort: its key (a value of ``SORT_KEYS``) and whether it is descending."""
        return self._sort_key, self._descending

    def sort(self, by: str, *, descending: bool = False) -> None:
        """Sort the table by a column (a label or a key of ``SORT_KEYS``), as clicking
        its header does."""
        key = table.SORT_KEYS.get(by, by)
        if key not in table.SORT_KEYS.values():
            raise ValidationError(f"cannot sort by {by!r}; choose one of {list(table.SORT_KEYS)}")
        with self._state:
            self._sort_key, self._descending = key, descending
        self._on_table_option({})

    def select(self, name_or_id: str) -> None:
        """Select the row of an index (by name or id), turning to its page.

        Raises:
            UnknownIndexError: No row shown has that name or id (also a ``KeyError``).
        """
        with self._state:
            rows = self.filtered(self._rows)
            found = rows.index[
                (rows.index.astype(str) == name_or_id) | (rows["name"] == name_or_id)
            ]
            if not len(found):
                raise UnknownIndexError(f"no row shown has the name or id {name_or_id!r}")
            self._page = int(list(rows.index).index(found[0])) // PAGE_ROWS
            self.show_rows(selected=str(found[0]))
        self._redraw_locked()

    def static_html(self) -> str:
        """A static picture of the cockpit as it looks now (no secret in it)."""
        with self._state:
            return pictures.cockpit_html(
                status=("info", str(getattr(self, "message", ""))),
                header=table.table_header(),
                lines=self.page_lines,
                png=self._png,
                about=self._picture_about,
            )

    # -- showing (called with self._state held) ------------------------------------------

    def filtered(self, rows: pd.DataFrame) -> pd.DataFrame:
        if rows.empty:
            return rows
        return table.shown_rows(
            rows,
            text=self._filter.value,
            sort=self._sort_key,
            descending=self._descending,
        )

    def show_rows(self, selected: str | None = None) -> None:
        """Show the page of the filtered, sorted rows holding the selection; withdraw the
        CSV link when the rows shown are not the ones it holds any more (a refresh, a
        filter, a sort, the backtest's columns): it never offers figures no longer shown."""
        rows = self.filtered(self._rows)
        if self._offered is not None and not rows.equals(self._offered):
            self._offered = None
            self._download.value = ""
        keep = selected or self.selected_id
        ids = [str(i) for i in rows.index]
        if keep in ids and selected is None:
            self._page = ids.index(keep) // PAGE_ROWS
        pages = max(1, -(-len(rows) // PAGE_ROWS))
        self._page = min(max(self._page, 0), pages - 1)
        page = rows.iloc[self._page * PAGE_ROWS : (self._page + 1) * PAGE_ROWS]
        zone = resolve_zone(self.tz, default=dt.timezone.utc) or dt.timezone.utc
        options = [
            (table.row_label(r, zone).replace(" ", _NBSP), str(i)) for i, r in page.iterrows()
        ]
        value = keep if keep in [v for _, v in options] else (options[0][1] if options else None)
        self._quiet = True
        try:
            self._select.options = options
            self._select.rows = max(min(PAGE_ROWS, len(options)), 2)
            self._select.value = value
        finally:
            self._quiet = False
        self._show_headers()
        self._page_label.value = f"page {self._page + 1} of {pages} · {len(rows):,} rows"
        self._previous.disabled = self._page == 0
        self._next.disabled = self._page >= pages - 1
        self._show_detail()

    def _show_headers(self) -> None:
        """Mark the sorted column's header with the direction of the sort."""
        for (title, _, key, _), button in zip(table.HEADERS, self._headers.values(), strict=True):
            sorted_here = key == self._sort_key
            arrow = (" ▼" if self._descending else " ▲") if sorted_here else ""
            button.description = title + arrow
            (button.add_class if sorted_here else button.remove_class)("sk-sorted")

    def _show_detail(self) -> None:
        index_id = self.selected_id
        if index_id is None or index_id not in self._rows.index:
            text = "No row matches the filter." if len(self._rows) else "No index to show yet."
            self._detail.value = message_html(text, "info")
            return
        zone = resolve_zone(self.tz, default=dt.timezone.utc) or dt.timezone.utc
        row: Any = self._rows.loc[index_id]
        self._detail.value = table.detail_html(row, zone)

    def show_picture(self, light: bytes, dark: bytes, name: str) -> None:
        self._png = light
        view = dict((v, k) for k, v in VIEWS)[str(self._view.value)]
        self._picture_about = f"{view}: {name}"
        self._picture.value = png_tag(
            light, self._picture_about + " (light theme)", "sk-plot-light"
        ) + png_tag(dark, self._picture_about + " (dark theme)", "sk-plot-dark")

    def show_picture_error(self, text: str) -> None:
        self._png = None
        self._picture.value = message_html(text, "error")

    def redraw(self) -> None:
        """Ask for the selected index's picture; return at once."""
        index_id = self.selected_id
        if index_id is None or index_id not in self._rows.index:
            self._png = None
            self._picture.value = message_html("Select a row to draw its day.", "info")
            return
        daily = self._view.value == "daily"
        dates = daily and not self._days.value
        hide(self._days, not daily)
        for picker in (self._first, self._last):
            hide(picker, not dates)
        if dates and self._first.value is None and self._last.value is None:
            self._fill_dates()
        if dates and (self._first.value is None or self._last.value is None):
            self._png = None
            self._picture.value = message_html("Choose the first and the last day.", "info")
            return
        if dates and self._first.value > self._last.value:
            self._png = None
            self._picture.value = message_html(
                f"The range ends ({self._last.value}) before it starts ({self._first.value}).",
                "error",
            )
            return
        self.submit_draw(
            {
                "index_id": index_id,
                "name": str(self._rows.loc[index_id, "name"]),
                "view": self._view.value,
                "tz": self.tz,
                "field": self.field,
                "days": int(self._days.value),
                "dates": (self._first.value, self._last.value) if dates else None,
            }
        )

    def _fill_dates(self) -> None:
        """First offer of a date range: the 30 UTC days up to today's."""
        last = pd.Timestamp(self._rows["period"].iloc[0]).date()
        self._filling = True
        try:
            self._last.value = last
            self._first.value = last - dt.timedelta(days=29)
        finally:
            self._filling = False

    # -- handlers (kernel thread) --------------------------------------------------------

    def _on_date(self, _change: dict[str, Any]) -> None:
        if not self._filling:
            self._redraw_locked()

    def _on_select(self, _change: dict[str, Any]) -> None:
        if not self._quiet:
            with self._state:
                self._show_detail()
            self._redraw_locked()

    def _on_table_option(self, _change: dict[str, Any]) -> None:
        if self._quiet:
            return
        with self._state:
            self._page = 0
            before = self.selected_id
            self.show_rows()
            changed = self.selected_id != before
        if changed:
            self._redraw_locked()

    def _on_header(self, key: str) -> None:
        """A header clicked: sort by its column, or the other way when sorted by it."""
        with self._state:
            same = key == self._sort_key
            self._sort_key, self._descending = key, (not self._descending) if same else False
        self._on_table_option({})

    def _turn(self, step: int) -> None:
        with self._state:
            self._page += step
            self.show_rows(selected="")
        self._redraw_locked()

    def _show_rows_locked(self) -> None:
        with self._state:
            self.show_rows()

    def _redraw_locked(self) -> None:
        with self._state:
            self.redraw()

    def _offer_csv(self) -> None:
        with self._state:  # the rows and their link together (show_rows withdraws it)
            shown = self.filtered(self._rows)
            text = table.rows_csv(shown)
            encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
            self._offered = shown
            self._download.value = (
                f'<a class="sk-csv-link" download="quota-cockpit.csv" '
                f'href="data:text/csv;charset=utf-8;base64,{encoded}">Download {len(shown):,} '
                "rows as CSV</a>"
            )
