"""The spec's field table, transcribed from SPEC.md: the tests' oracle.

Kept apart from both implementations (the client's models and the emulator) so each is
checked against the spec itself, not against the other.
"""

from __future__ import annotations

REGIONS = ("eu-west-1", "us-central1")
TYPES = ("free", "payg", "fixed")
LIMIT_FIELDS = (
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
SPEC_FIELDS = frozenset(
    {
        "customer_id",
        "id",
        "name",
        "endpoint",
        "type",
        "region",
        "partner_email",
        "token",
        "read_only_token",
        *LIMIT_FIELDS,
        "creation_time",
        "input_enrichment_enabled",
        "throughput_vector",
    }
)
