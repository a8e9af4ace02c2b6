"""Claims on S3 (moto's server on loopback): a conditional PUT that only one writer wins."""

from __future__ import annotations

import time

import pandas as pd
import pytest

from searchkit.alerts.channels import WebhookChannel
from searchkit.alerts.claims import Claims, claim_digest, s3_options
from searchkit.alerts.delivery import deliver
from searchkit.alerts.journal import Journal, transition_row
from searchkit.history.usage_history import History
from tests.faults.harness import FaultServer, reply

# moto and boto3 (dev dependencies) are imported by the ``s3_endpoint`` fixture, which
# skips without them: not while collecting, in every worker (tests/history/s3server.py).
from tests.history.s3server import new_bucket, options


@pytest.fixture
def s3_store(s3_endpoint, request):
    s3, name = new_bucket(s3_endpoint, request.node.name)
    return s3, name, History(f"s3://{name}/usage", storage_options=options(s3_endpoint))


def test_the_second_claim_of_an_attempt_on_s3_is_refused(s3_store):
    s3, bucket, store = s3_store
    claims = Claims(store.filesystem, store.root, store.location)
    digest = claim_digest("k", "1", "ops")

    first = claims.claim(digest, 1, {"who": "a"})
    second = Claims(store.filesystem, store.root, store.location).claim(digest, 1, {"who": "b"})
    other = claims.claim(digest, 2, {"who": "b"})

    assert (first, second, other) == (True, False, True)
    keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"])
    assert keys == [
        f"usage/alerts/_claims/{digest}/000001.claim",
        f"usage/alerts/_claims/{digest}/000002.claim",
    ]
    body = s3.get_object(Bucket=bucket, Key=keys[0])["Body"].read()
    assert b'"who": "a"' in body  # the loser's PUT changed nothing
    assert claims.age(digest, 1) is not None and claims.age(digest, 3) is None


def test_boto3_gets_the_store_s_endpoint_and_keys(s3_store, s3_endpoint):
    _, _, store = s3_store
    assert s3_options(store.filesystem) == {
        "endpoint_url": s3_endpoint,
        "region_name": "us-east-1",
        "aws_access_key_id": "testing",
        "aws_secret_access_key": "testing",
    }


def test_two_collectors_on_an_s3_store_send_once(s3_store):
    _, _, store = s3_store
    record = {
        "key": "k-s3",
        "state": "firing",
        "at": pd.Timestamp("2026-11-20 09:00", tz="UTC"),
        "rule": "forecast",
        "index_id": "i-1",
        "name": "docs",
        "field": "max_daily_queries",
    }
    with FaultServer() as receiver:
        receiver.script("POST", then=reply(200))
        hook = WebhookChannel(f"{receiver.url}/hook")
        Journal(store, collector="a").append([transition_row(record, 1)])
        one, two = Journal(store, collector="a"), Journal(store, collector="b")
        seen_by_both = one.read()
        first = deliver(one, [hook], records=seen_by_both)
        second = deliver(two, [hook], records=seen_by_both)
    assert (len(first.sent), len(second.sent), second.elsewhere) == (1, 0, 1)
    assert receiver.count("POST") == 1
    assert Journal(store).read().query("record == 'delivery'")["outcome"].tolist() == ["sent"]


def test_old_claims_on_s3_are_pruned_and_a_new_claim_is_kept(s3_store):
    s3, bucket, store = s3_store
    claims = Claims(store.filesystem, store.root, store.location)
    old = claim_digest("k-old", "1", "ops")
    assert claims.claim(old, 1, {"who": "a"}) and claims.claim(old, 2, {"who": "a"})
    later = time.time() + 5 * 86400  # S3 sets an object's time: the clock moves instead

    assert claims.prune(now=later) == 2
    assert claims.prune(now=later) is None  # once a day
    day = time.strftime("%Y-%m-%d", time.gmtime(later))
    keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"])
    assert keys == [f"usage/alerts/_claims/pruned-{day}.marker"]
    assert claims.claim(old, 1, {"who": "b"}) is True  # its transition is long gone
