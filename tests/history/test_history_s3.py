"""The same history code against an S3 API: moto's server on loopback, no cloud account."""

from __future__ import annotations

import datetime as dt
import threading

import pytest

from searchkit.history.usage_history import History

# moto and boto3 (dev dependencies) are imported by the ``s3_endpoint`` fixture, which
# skips without them: not while collecting, in every worker (tests/history/s3server.py).
from tests.history.s3server import new_bucket, options

NOON = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)


@pytest.fixture
def bucket(s3_endpoint, request):
    return new_bucket(s3_endpoint, request.node.name)


# ``emulator`` (tests/conftest.py, options in tests/history/conftest.py) with an hour of
# points a list.
pytestmark = pytest.mark.emulator(demo=True, seed=3, clock=NOON, window_minutes=60)


def keys(s3, bucket: str) -> list[str]:
    listed = s3.list_objects_v2(Bucket=bucket).get("Contents", [])
    return sorted(item["Key"] for item in listed)


def test_collect_read_and_compact_on_s3(s3_endpoint, bucket, emulator):
    s3, name = bucket
    hist = History(f"s3://{name}/usage", storage_options=options(s3_endpoint))
    with emulator.client() as client:
        first = hist.collect(client, now=emulator.now())
        again = hist.collect(client, now=emulator.now())
        emulator.advance(1800)
        later = hist.collect(client, now=emulator.now())

    assert (first.new_points, again.new_points, later.new_points) == (360, 0, 180)
    stored = keys(s3, name)
    assert len([k for k in stored if k.startswith("usage/throughput/day=2026-11-20/")]) == 2
    assert len([k for k in stored if k.startswith("usage/limits/day=2026-11-20/")]) == 1
    # Data files, or the folder markers S3FileSystem leaves where it deleted a replaced
    # rollup; no temporary file.
    assert all(k.endswith((".parquet", "/")) and "/." not in k for k in stored)
    frame = hist.throughput(names="docs-search")
    assert len(frame) == 90
    assert hist.limits()["name"].tolist()[0] == "docs-search"

    result = hist.compact()

    assert result["files_removed"] == 2  # two throughput files; one limits snapshot (unchanged)
    assert len([k for k in keys(s3, name) if "/throughput/" in k and k.endswith(".parquet")]) == 1
    assert len(hist.throughput()) == 540
    info = hist.info()  # every object under the prefix, by kind: sizes as S3 lists them
    listed = s3.list_objects_v2(Bucket=name)["Contents"]
    sizes = {item["Key"]: item["Size"] for item in listed if not item["Key"].endswith("/")}
    assert {kind: stored.files for kind, stored in info.by_kind.items()} == {
        "throughput": 1,
        "limits": 1,
        "rollups": 1,
        "other": 1,
    }
    assert info.other_files == ("_newest.parquet",)
    assert (info.files, info.bytes) == (len(sizes), sum(sizes.values()))


def test_two_concurrent_collectors_on_one_bucket_see_each_point_once(s3_endpoint, bucket, emulator):
    _, name = bucket
    location = f"s3://{name}/shared"
    barrier = threading.Barrier(2)
    results = []

    def run() -> None:
        with emulator.client() as own:
            listed = own.list_indexes()
            barrier.wait()
            hist = History(location, storage_options=options(s3_endpoint))
            results.append(hist.collect(own, indexes=listed))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    frame = History(location, storage_options=options(s3_endpoint)).throughput()
    assert len(results) == 2
    assert len(frame) == 360
    assert not frame.duplicated(["account", "index_id", "time"]).any()


# -- credentials and buckets named in the location (issue 18, items 5 and 14) --------------

SECRET = "sEcReT-Kx9/q+Zr4"  # a "/" once printed the whole location in pyarrow's parse error


def uri(endpoint: str, bucket: str, secret: str) -> str:
    from urllib.parse import quote

    host = endpoint.partition("://")[2]
    return (
        f"s3://AKIDEXAMPLE:{quote(secret, safe='')}@{bucket}/usage"
        f"?endpoint_override={host}&scheme=http&region=us-east-1"
    )


def test_credentials_in_the_location_never_show(s3_endpoint, bucket, emulator, capsys):
    from urllib.parse import quote

    from searchkit.cli.main import main

    _, name = bucket
    location = uri(s3_endpoint, name, SECRET)
    hist = History(location)
    with emulator.client() as client:
        assert hist.collect(client, now=emulator.now()).new_points == 360
    assert main(["history", "--store", location]) == 0
    printed = capsys.readouterr().out
    shown = (
        f"s3://***@{name}/usage?endpoint_override={s3_endpoint.partition('://')[2]}"
        "&scheme=http&region=us-east-1"
    )
    assert repr(hist) == f"History({shown!r})"
    assert str(hist.info()).splitlines()[0] == f"history at {shown}"
    assert printed.splitlines()[0] == f"history at {shown}"
    texts = [repr(hist), str(hist.info()), printed, hist.location]
    for secret in (SECRET, quote(SECRET, safe=""), "AKIDEXAMPLE"):
        assert not [text for text in texts if secret in text]


def test_a_secret_with_a_slash_is_refused_without_showing_it():
    from searchkit.errors import HistoryError

    with pytest.raises(HistoryError) as info:
        History(f"s3://AKIDEXAMPLE:{SECRET}@bucket/usage?region=us-east-1")
    assert str(info.value) == (
        "cannot open history location 's3://***@bucket/usage?region=us-east-1' "
        "(ArrowInvalid); pass credentials as storage_options={'access_key': ..., "
        "'secret_key': ...} or in the AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
        "environment variables, not in the location"
    )
    assert info.value.__cause__ is None  # pyarrow's text, which repeats the secret, is gone


def test_history_of_a_missing_bucket_says_so_and_exits_1(s3_endpoint, capsys):
    from searchkit.cli.main import main

    location = uri(s3_endpoint, "no-such-bucket", "testing")
    assert main(["history", "--store", location]) == 1
    shown = location.replace("AKIDEXAMPLE:testing", "***")
    assert capsys.readouterr().err == (
        f"searchkit: no history at {shown!r}: the bucket 'no-such-bucket' does not exist. "
        "[HistoryError]\n"
    )


# -- credentials beside storage_options, and secrets holding "@" (issue 29, item 1) ---------

AT_SECRET = "sEcR@eT-Kx9@q"


def test_credentials_in_the_location_are_not_the_path_when_storage_options_are_given(
    s3_endpoint, bucket, emulator
):
    s3, name = bucket
    given = {k: v for k, v in options(s3_endpoint).items() if k not in ("access_key", "secret_key")}
    hist = History(f"s3://testing:{AT_SECRET}@{name}/usage", storage_options=given)

    assert hist.root == f"{name}/usage"
    assert repr(hist) == f"History('s3://***@{name}/usage')"
    with emulator.client() as client:
        assert hist.collect(client, now=emulator.now()).new_points == 360
    info = str(hist.info())
    assert info.splitlines()[0] == f"history at s3://***@{name}/usage"
    assert [k for k in keys(s3, name) if k.startswith("usage/limits/")]
    for text in (repr(hist), hist.root, hist.location, info):
        assert "sEcR" not in text and "testing:" not in text


def test_a_user_part_alone_is_masked_and_not_the_path(s3_endpoint, bucket, emulator):
    _, name = bucket
    hist = History(f"s3://TOKENONLY42@{name}/usage", storage_options=options(s3_endpoint))

    assert (hist.root, hist.location) == (f"{name}/usage", f"s3://***@{name}/usage")
    with emulator.client() as client:
        assert hist.collect(client, now=emulator.now()).new_points == 360
    assert "TOKENONLY42" not in str(hist.info())


@pytest.mark.parametrize("userinfo", [f"AKIDEXAMPLE:{AT_SECRET}", "TOKENONLY42"])
def test_the_cli_never_prints_a_secret_holding_an_at_or_a_user_part(
    s3_endpoint, bucket, userinfo, capsys
):
    from searchkit.cli.main import main

    _, name = bucket
    host = s3_endpoint.partition("://")[2]
    query = f"?endpoint_override={host}&scheme=http&region=us-east-1"
    location = f"s3://{userinfo}@{name}/usage{query}"
    for command in ("history", "forecast"):
        main([command, "--store", location])
        captured = capsys.readouterr()
        printed = captured.out + captured.err
        assert f"s3://***@{name}/usage" in printed
        for piece in ("sEcR", "eT-Kx9", "TOKENONLY42", "AKIDEXAMPLE"):
            assert piece not in printed, (command, printed)


def test_a_listing_kept_for_a_call_survives_a_compaction_in_the_middle_of_it(
    s3_endpoint, bucket, emulator
):
    # Issue 30 item 3: one LIST per dataset per call, which the reader's guard can still
    # trust. A call's listing names the day's two files; another process compacts the day
    # meanwhile (the merged file uploaded, named to sort after both, then both deleted).
    # The call's next read of that day meets a deleted file, lists again, and reads the
    # merged one: every point, once.
    s3, name = bucket
    location = f"s3://{name}/usage"
    hist = History(location, storage_options=options(s3_endpoint))
    with emulator.client() as client:
        hist.collect(client, now=emulator.now(), compact=False)
        emulator.advance(1800)
        hist.collect(client, now=emulator.now(), compact=False)
    other = History(location, storage_options=options(s3_endpoint))
    with hist.reading():
        before = hist.throughput()
        kept = [k for k in keys(s3, name) if "/throughput/" in k and k.endswith(".parquet")]
        assert other.compact()["files_removed"] == 2
        merged = [k for k in keys(s3, name) if "/throughput/" in k and k.endswith(".parquet")]
        after = hist.throughput()
    assert len(kept) == 2 and len(merged) == 1
    assert all(merged[0].rpartition("/")[2] > path.rpartition("/")[2] for path in kept)
    assert len(before) == 540
    assert after.equals(before)
