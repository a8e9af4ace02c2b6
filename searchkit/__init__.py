"""searchkit: manage search indexes from Jupyter notebooks.

List and create indexes of the Search Index Management API, look at their limits as a
pandas DataFrame, parse and plot their throughput, create indexes from a notebook form,
and run all of it offline against the bundled emulator.
"""

from searchkit._version import __version__
from searchkit.client import Client, connect
from searchkit.emulator import Emulator
from searchkit.errors import (
    AmbiguousCreateError,
    AuthenticationError,
    ConfigError,
    InvalidResponseError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    SearchKitError,
    ServerError,
    TimestampError,
    TransportError,
    ValidationError,
)
from searchkit.frames import limits_frame, throughput_frame, throughput_series
from searchkit.history import History, HistoryError
from searchkit.models import LIMIT_FIELDS, REGIONS, TYPES, IndexList, IndexType, Region, SearchIndex
from searchkit.plotting import plot_limits, plot_throughput
from searchkit.timestamps import parse_timestamps
from searchkit.usage import forecast_limits, plot_utilization, usage_frame
from searchkit.widgets import create_index_form, index_browser

__all__ = [  # noqa: RUF022 - plain sorted(), as tests/test_public_api.py checks
    "AmbiguousCreateError",
    "AuthenticationError",
    "Client",
    "ConfigError",
    "Emulator",
    "History",
    "HistoryError",
    "IndexList",
    "IndexType",
    "InvalidResponseError",
    "LIMIT_FIELDS",
    "NotFoundError",
    "PermissionDeniedError",
    "REGIONS",
    "RateLimitError",
    "Region",
    "SearchIndex",
    "SearchKitError",
    "ServerError",
    "TYPES",
    "TimestampError",
    "TransportError",
    "ValidationError",
    "__version__",
    "connect",
    "create_index_form",
    "forecast_limits",
    "index_browser",
    "limits_frame",
    "parse_timestamps",
    "plot_limits",
    "plot_throughput",
    "plot_utilization",
    "throughput_frame",
    "throughput_series",
    "usage_frame",
]
