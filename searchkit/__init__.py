"""searchkit: manage search indexes from Jupyter notebooks.

List and create indexes of the Search Index Management API, look at their limits as a
pandas DataFrame, parse and plot their throughput, create indexes from a notebook form,
and run all of it offline against the bundled emulator.

The public names load on first use (PEP 562): ``import searchkit`` stays fast, and pandas,
requests, ipywidgets and werkzeug are imported only when a name that needs them is used.
"""

from __future__ import annotations

import importlib as _importlib
from typing import TYPE_CHECKING, Any

from searchkit._version import __version__
from searchkit.model import hooks as _hooks

if TYPE_CHECKING:
    from searchkit.alerts.backtest import AlertBacktest, backtest_alerts
    from searchkit.alerts.config import AlertsConfig, load_alerts
    from searchkit.alerts.journal import alert_records
    from searchkit.alerts.rules import AlertRule, load_rules
    from searchkit.alerts.watch import RoundReport, alert_round
    from searchkit.analytics.backtest import Backtest, backtest_forecast
    from searchkit.analytics.forecast import forecast_limits
    from searchkit.analytics.usage import usage_frame
    from searchkit.api.client import Client
    from searchkit.connection import close_demo, connect
    from searchkit.emulator import Emulator
    from searchkit.errors import (
        AmbiguousCreateError,
        AmbiguousNameError,
        AuthenticationError,
        ConfigError,
        DuplicateIndexWarning,
        HistoryError,
        HistoryWarning,
        IndexExistsError,
        IndexMismatchWarning,
        InvalidResponseError,
        NotFoundError,
        PermissionDeniedError,
        RateLimitError,
        SearchKitError,
        ServerError,
        TimestampError,
        TransportError,
        UnknownIndexError,
        ValidationError,
    )
    from searchkit.frames.limits_frames import limits_frame
    from searchkit.frames.throughput_frames import (
        throughput_frame,
        throughput_intervals,
        throughput_series,
    )
    from searchkit.history.dedupe import Points
    from searchkit.history.reports import CollectSummary, HistoryInfo
    from searchkit.history.rollups import DaySums
    from searchkit.history.usage_history import History
    from searchkit.model.gotime import parse_timestamps
    from searchkit.model.index import IndexList, SearchIndex
    from searchkit.model.limits import LIMIT_FIELDS, REGIONS, TYPES, IndexType, Region
    from searchkit.model.secret import Secret
    from searchkit.render.forecast_plot import plot_forecast
    from searchkit.render.lab_theme import notebook_theme
    from searchkit.render.limit_bars import plot_limits
    from searchkit.render.plots import plot_throughput
    from searchkit.render.tables import limits_summary, limits_table
    from searchkit.render.themes import plot_theme
    from searchkit.render.utilization import plot_utilization
    from searchkit.ui.browser import IndexBrowser, index_browser
    from searchkit.ui.cockpit import QuotaCockpit, quota_cockpit
    from searchkit.ui.form import CreateIndexForm, create_index_form

#: Each public name and the module that defines it; a name is imported on first access.
_EXPORTS: dict[str, str] = {
    "AlertBacktest": "searchkit.alerts.backtest",
    "AlertRule": "searchkit.alerts.rules",
    "AlertsConfig": "searchkit.alerts.config",
    "AmbiguousCreateError": "searchkit.errors",
    "AmbiguousNameError": "searchkit.errors",
    "AuthenticationError": "searchkit.errors",
    "Backtest": "searchkit.analytics.backtest",
    "Client": "searchkit.api.client",
    "CollectSummary": "searchkit.history.reports",
    "ConfigError": "searchkit.errors",
    "CreateIndexForm": "searchkit.ui.form",
    "DaySums": "searchkit.history.rollups",
    "DuplicateIndexWarning": "searchkit.errors",
    "Emulator": "searchkit.emulator",
    "History": "searchkit.history.usage_history",
    "HistoryError": "searchkit.errors",
    "HistoryInfo": "searchkit.history.reports",
    "HistoryWarning": "searchkit.errors",
    "IndexBrowser": "searchkit.ui.browser",
    "IndexExistsError": "searchkit.errors",
    "IndexList": "searchkit.model.index",
    "IndexMismatchWarning": "searchkit.errors",
    "IndexType": "searchkit.model.limits",
    "InvalidResponseError": "searchkit.errors",
    "LIMIT_FIELDS": "searchkit.model.limits",
    "NotFoundError": "searchkit.errors",
    "PermissionDeniedError": "searchkit.errors",
    "Points": "searchkit.history.dedupe",
    "QuotaCockpit": "searchkit.ui.cockpit",
    "REGIONS": "searchkit.model.limits",
    "RateLimitError": "searchkit.errors",
    "Region": "searchkit.model.limits",
    "RoundReport": "searchkit.alerts.watch",
    "SearchIndex": "searchkit.model.index",
    "SearchKitError": "searchkit.errors",
    "Secret": "searchkit.model.secret",
    "ServerError": "searchkit.errors",
    "TYPES": "searchkit.model.limits",
    "TimestampError": "searchkit.errors",
    "TransportError": "searchkit.errors",
    "UnknownIndexError": "searchkit.errors",
    "ValidationError": "searchkit.errors",
    "alert_records": "searchkit.alerts.journal",
    "alert_round": "searchkit.alerts.watch",
    "backtest_alerts": "searchkit.alerts.backtest",
    "backtest_forecast": "searchkit.analytics.backtest",
    "close_demo": "searchkit.connection",
    "connect": "searchkit.connection",
    "create_index_form": "searchkit.ui.form",
    "forecast_limits": "searchkit.analytics.forecast",
    "index_browser": "searchkit.ui.browser",
    "limits_frame": "searchkit.frames.limits_frames",
    "limits_summary": "searchkit.render.tables",
    "limits_table": "searchkit.render.tables",
    "load_alerts": "searchkit.alerts.config",
    "load_rules": "searchkit.alerts.rules",
    "notebook_theme": "searchkit.render.lab_theme",
    "parse_timestamps": "searchkit.model.gotime",
    "plot_forecast": "searchkit.render.forecast_plot",
    "plot_limits": "searchkit.render.limit_bars",
    "plot_theme": "searchkit.render.themes",
    "plot_throughput": "searchkit.render.plots",
    "plot_utilization": "searchkit.render.utilization",
    "quota_cockpit": "searchkit.ui.cockpit",
    "throughput_frame": "searchkit.frames.throughput_frames",
    "throughput_intervals": "searchkit.frames.throughput_frames",
    "throughput_series": "searchkit.frames.throughput_frames",
    "usage_frame": "searchkit.analytics.usage",
}

__all__ = [  # noqa: RUF022 - plain sorted(), as tests/test_public_api.py checks
    "AlertBacktest",
    "AlertRule",
    "AlertsConfig",
    "AmbiguousCreateError",
    "AmbiguousNameError",
    "AuthenticationError",
    "Backtest",
    "Client",
    "CollectSummary",
    "ConfigError",
    "CreateIndexForm",
    "DaySums",
    "DuplicateIndexWarning",
    "Emulator",
    "History",
    "HistoryError",
    "HistoryInfo",
    "HistoryWarning",
    "IndexBrowser",
    "IndexExistsError",
    "IndexList",
    "IndexMismatchWarning",
    "IndexType",
    "InvalidResponseError",
    "LIMIT_FIELDS",
    "NotFoundError",
    "PermissionDeniedError",
    "Points",
    "QuotaCockpit",
    "REGIONS",
    "RateLimitError",
    "Region",
    "RoundReport",
    "SearchIndex",
    "SearchKitError",
    "Secret",
    "ServerError",
    "TYPES",
    "TimestampError",
    "TransportError",
    "UnknownIndexError",
    "ValidationError",
    "__version__",
    "alert_records",
    "alert_round",
    "backtest_alerts",
    "backtest_forecast",
    "close_demo",
    "connect",
    "create_index_form",
    "forecast_limits",
    "index_browser",
    "limits_frame",
    "limits_summary",
    "limits_table",
    "load_alerts",
    "load_rules",
    "notebook_theme",
    "parse_timestamps",
    "plot_forecast",
    "plot_limits",
    "plot_theme",
    "plot_throughput",
    "plot_utilization",
    "quota_cockpit",
    "throughput_frame",
    "throughput_intervals",
    "throughput_series",
    "usage_frame",
]


def _notebook_html(model: object) -> str:
    """Render a SearchIndex or IndexList as notebook HTML (loads render on first use)."""
    from searchkit.render.html import model_html

    return model_html(model)


# The model shows itself through this hook, so it never imports the layer above it.
_hooks.set_html_renderer(_notebook_html)


def __getattr__(name: str) -> Any:
    """Import a public name's module on first access and cache the name here."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'searchkit' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names, loaded or not, and the module's dunders: nothing private."""
    return sorted({name for name in globals() if name.startswith("__")} | set(__all__))
