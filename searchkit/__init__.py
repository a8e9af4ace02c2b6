"""searchkit: manage search indexes from Jupyter notebooks.

List and create indexes of the Search Index Management API, look at their limits as a
pandas DataFrame, parse and plot their throughput, create indexes from a notebook form,
and run all of it offline against the bundled emulator.
"""

from __future__ import annotations

from searchkit._version import __version__
from searchkit.client import Client, connect
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
from searchkit.models import LIMIT_FIELDS, REGIONS, TYPES, IndexList, IndexType, Region, SearchIndex

__all__ = [
    "LIMIT_FIELDS",
    "REGIONS",
    "TYPES",
    "AmbiguousCreateError",
    "AuthenticationError",
    "Client",
    "ConfigError",
    "IndexList",
    "IndexType",
    "InvalidResponseError",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "Region",
    "SearchIndex",
    "SearchKitError",
    "ServerError",
    "TimestampError",
    "TransportError",
    "ValidationError",
    "__version__",
    "connect",
]
