"""Search index objects as the service sends them: the one place tests write one out.

``index_json()`` returns a complete object, every field of the spec's table present and
realistic; a test passes only the fields it is about (``index_json("docs", type="free")``).
"""

from __future__ import annotations

import uuid

#: Tokens of the objects below: distinctive, so a leak into output is unmistakable.
TOKEN = "tok-Q3vN8-index-secret-5Hw1"
READ_ONLY_TOKEN = "rot-M6pL2-index-secret-0Tc7"


def index_json(name: str = "docs", **fields: object) -> dict[str, object]:
    """Return one search index object with every spec field; ``fields`` override them.

    The id is a fresh UUID unless given.
    """
    return {
        "customer_id": "cust-1",
        "id": str(uuid.uuid4()),
        "name": name,
        "endpoint": "proud-otter-12345-eu1",
        "type": "payg",
        "region": "eu-west-1",
        "partner_email": "",
        "token": TOKEN,
        "read_only_token": READ_ONLY_TOKEN,
        "max_vector_count": 10_000,
        "max_monthly_reranks": -1,
        "max_daily_updates": -1,
        "max_daily_queries": 10_000,
        "max_monthly_bandwidth": -1,
        "max_writes_per_second": 1_000,
        "max_query_per_second": 1_000,
        "max_reads_per_request": 1_000,
        "max_writes_per_request": 1_000,
        "creation_time": 1_790_000_000,
        "input_enrichment_enabled": True,
        "throughput_vector": [{"x": "2026-11-20 12:00:00.000 +0000 UTC", "y": 1.5}],
        **fields,
    }
