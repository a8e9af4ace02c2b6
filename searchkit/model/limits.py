"""The service's limits and enums: the nine limit fields, their labels, regions and types.

The one table of what a limit is called and counts (:data:`LIMIT_INFO`); frames, plots and
tables read their labels from here. A limit of ``-1`` (:data:`UNLIMITED`) means no limit.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import NamedTuple

from searchkit.errors import ValidationError

__all__ = [
    "LIMIT_FIELDS",
    "LIMIT_INFO",
    "REGIONS",
    "TYPES",
    "UNLIMITED",
    "IndexType",
    "LimitInfo",
    "Region",
    "check_limit_field",
]


class Region(str, enum.Enum):
    """Regions the spec names; responses may carry others, kept as plain text."""

    EU_WEST_1 = "eu-west-1"
    US_CENTRAL1 = "us-central1"

    def __str__(self) -> str:
        return self.value


class IndexType(str, enum.Enum):
    """Payment plans the spec names; ``fixed`` is listed but may not be available."""

    FREE = "free"
    PAYG = "payg"
    FIXED = "fixed"

    def __str__(self) -> str:
        return self.value


REGIONS: tuple[str, ...] = tuple(r.value for r in Region)
TYPES: tuple[str, ...] = tuple(t.value for t in IndexType)

#: The nine usage and rate limits, in the spec's order.
LIMIT_FIELDS: tuple[str, ...] = (
    "max_vector_count",
    "max_monthly_reranks",
    "max_daily_updates",
    "max_daily_queries",
    "max_monthly_bandwidth",
    "max_writes_per_second",
    "max_query_per_second",
    "max_reads_per_request",
    "max_writes_per_request",
)


class LimitInfo(NamedTuple):
    """How to show one limit: a short label, a title for plots, its unit and period."""

    label: str  #: short column label with its unit, e.g. "queries / day"
    title: str  #: plot title, e.g. "Queries per day"
    unit: str  #: what is counted, e.g. "queries" ("bytes" for the bandwidth)
    period: str | None  #: "day", "month", "second", "request", or None for a total


#: The one label table of the nine limits, in LIMIT_FIELDS order.
LIMIT_INFO: Mapping[str, LimitInfo] = {
    "max_vector_count": LimitInfo("vectors", "Vectors", "vectors", None),
    "max_monthly_reranks": LimitInfo("reranks / month", "Reranks per month", "reranks", "month"),
    "max_daily_updates": LimitInfo("updates / day", "Updates per day", "updates", "day"),
    "max_daily_queries": LimitInfo("queries / day", "Queries per day", "queries", "day"),
    "max_monthly_bandwidth": LimitInfo(
        "bandwidth / month", "Bandwidth per month", "bytes", "month"
    ),
    "max_writes_per_second": LimitInfo("writes / s", "Writes per second", "writes", "second"),
    "max_query_per_second": LimitInfo("queries / s", "Queries per second", "queries", "second"),
    "max_reads_per_request": LimitInfo("reads / request", "Reads per request", "reads", "request"),
    "max_writes_per_request": LimitInfo(
        "writes / request", "Writes per request", "writes", "request"
    ),
}

#: The value the service sends for "no limit".
UNLIMITED = -1


def check_limit_field(field: str) -> str:
    """Return ``field`` if it names one of the nine limits.

    Raises:
        ValidationError: it does not; the message lists the limits.
    """
    if field not in LIMIT_FIELDS:
        raise ValidationError(f"unknown limit {field!r}; limits are: {', '.join(LIMIT_FIELDS)}")
    return field
