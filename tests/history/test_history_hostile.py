"""Collect under hostile data from a real loopback server: one bad point or index never
costs the others, and one account keeps one key whatever the service omits (issue 18)."""

from __future__ import annotations

import json

import matplotlib
import pandas as pd
import pytest

matplotlib.use("Agg")

import searchkit as sk
from searchkit.cli.main import main
from searchkit.history.usage_history import History
from tests.faults.harness import FaultServer, reply
from tests.index_json import index_json


def go(minute: int) -> str:
    return f"2026-11-20 10:{minute:02d}:00 +0000 UTC"


def good_points(minutes: range) -> list[dict[str, object]]:
    return [{"x": go(m), "y": 2.0} for m in minutes]


def client_of(url: str, username: str = "collector") -> sk.Client:
    return sk.Client(username=username, password="pw-123456789", base_url=url, max_retries=0)


def serve(server: FaultServer, *lists: object) -> None:
    """Answer each list call with the next body (the last one from then on)."""
    bodies = [json.dumps(body).encode() if not isinstance(body, bytes) else body for body in lists]
    server.script("GET", *(reply(200, body) for body in bodies[:-1]), then=reply(200, bodies[-1]))


# -- item 1: a hostile point ---------------------------------------------------------------

HOSTILE = [
    {"x": "0001-01-01 00:00:00 +0000 UTC", "y": 1.0},  # Go's zero time
    {"x": None, "y": 1.0},
    {"x": "2300-01-01 00:00:00 +0000 UTC", "y": 1.0},
    {"x": go(3), "y": 5.0},
]


def test_hostile_points_are_skipped_counted_and_named_and_the_rest_is_stored(server, tmp_path):
    serve(
        server,
        [
            index_json("docs", id="id-docs", throughput_vector=good_points(range(3))),
            index_json("hostile", id="id-hostile", throughput_vector=HOSTILE),
        ],
    )
    hist = History(tmp_path / "h")
    with client_of(server.url) as client:
        summary = hist.collect(client)
        assert len(client.list_indexes()) == 2  # list keeps working too
    assert summary.new_points == 4
    assert summary.skipped_by_index == {"hostile": 3}
    assert summary.skipped_points == 3
    assert summary.warnings == (
        "skipped 3 points of 'hostile' (id-hostile): 3 points with a time that is missing, "
        "unreadable or outside 1677-2262",
    )
    assert "4 new points (3 skipped), 0 gaps, 1 warnings)" in repr(summary)
    stored = hist.throughput()
    assert stored[["index_id", "time", "value"]].astype({"index_id": str}).to_dict("list") == {
        "index_id": ["id-docs"] * 3 + ["id-hostile"],
        "time": [pd.Timestamp(go(m)[:19], tz="UTC") for m in (0, 1, 2, 3)],
        "value": [2.0, 2.0, 2.0, 5.0],
    }
    assert sorted(hist.limits().index) == ["id-docs", "id-hostile"]


def test_searchkit_collect_names_the_skipped_points(server, tmp_path, monkeypatch, capsys):
    serve(server, [index_json("hostile", id="id-hostile", throughput_vector=HOSTILE)])
    monkeypatch.setenv("SEARCHKIT_BASE_URL", server.url)
    monkeypatch.setenv("SEARCHKIT_USERNAME", "collector")
    monkeypatch.setenv("SEARCHKIT_PASSWORD", "pw-123456789")
    assert main(["collect", "--store", str(tmp_path / "h")]) == 0
    captured = capsys.readouterr()
    assert captured.out.endswith(", 1 indexes, 1 new points (3 skipped), 0 gaps, 1 warnings\n")
    assert captured.err == (
        "  warning: skipped 3 points of 'hostile' (id-hostile): 3 points with a time that is "
        "missing, unreadable or outside 1677-2262\n"
    )
    assert main(["list", "--format", "csv"]) == 0


# -- item 8: an index without an id --------------------------------------------------------


def test_an_index_without_an_id_is_skipped_and_named(server, tmp_path):
    serve(
        server,
        [
            index_json("docs", id="id-docs", throughput_vector=good_points(range(3))),
            index_json("orphan", id=None, throughput_vector=good_points(range(5))),
        ],
    )
    hist = History(tmp_path / "h")
    with client_of(server.url) as client:
        summary = hist.collect(client)
    assert (summary.indexes, summary.new_points, summary.skipped_by_index) == (1, 3, {"orphan": 5})
    assert summary.warnings == (
        "index 'orphan' has no id (None): it was not stored, nor its 5 points and limits",
    )
    assert hist.limits().index.tolist() == ["id-docs"]
    assert len(hist.throughput()) == 3


# -- item 9: negative and infinite values --------------------------------------------------


def test_negative_and_infinite_values_are_skipped_never_stored(server, tmp_path):
    points = (
        b'[{"x": "' + go(0).encode() + b'", "y": 1.5}, {"x": "' + go(1).encode() + b'", "y": -300},'
        b' {"x": "'
        + go(2).encode()
        + b'", "y": -1e400}, {"x": "'
        + go(3).encode()
        + b'", "y": null}]'
    )
    body = json.dumps([index_json("neg", id="id-neg", throughput_vector=[])]).encode()
    serve(server, body.replace(b'"throughput_vector": []', b'"throughput_vector": ' + points))
    hist = History(tmp_path / "h")
    with client_of(server.url) as client:
        summary = hist.collect(client)
    assert summary.skipped_by_index == {"neg": 2}
    assert summary.warnings == (
        "skipped 2 points of 'neg' (id-neg): 2 points with a negative or infinite value",
    )
    assert hist.throughput()["value"].tolist() == [1.5, pytest.approx(float("nan"), nan_ok=True)]
    # The stored points are 3 minutes apart: 1.5 per second over 180 s, and null is none.
    assert sk.usage_frame(hist)["operations"].tolist() == [270.0]


# -- item 3: one account, one key ----------------------------------------------------------


def without_customer(**fields: object) -> dict[str, object]:
    body = index_json("docs", id="id-docs", **fields)
    del body["customer_id"]
    return body


def check_one_row_per_point(hist: History, account: str, points: int) -> None:
    frame = hist.throughput()
    assert len(frame) == points
    assert frame["account"].astype(str).unique().tolist() == [account]
    assert not frame.duplicated(["index_id", "time"]).any()
    assert hist.limits().index.tolist() == ["id-docs"]
    usage = sk.usage_frame(hist)
    assert usage["points"].tolist() == [points]
    ax = sk.plot_utilization(hist)
    assert [label.get_text() for label in ax.get_yticklabels()] == ["docs"]
    assert sk.forecast_limits(hist, now="2026-11-20 11:00")["name"].tolist() == ["docs"]


def test_customer_id_present_then_absent_keeps_one_key(server, tmp_path):
    serve(
        server,
        [index_json("docs", id="id-docs", throughput_vector=good_points(range(0, 10)))],
        [without_customer(throughput_vector=good_points(range(5, 15)))],
    )
    hist = History(tmp_path / "h")
    with client_of(server.url) as client:
        hist.collect(client)
        second = hist.collect(client)
    assert second.new_points == 5
    check_one_row_per_point(hist, "cust-1", 15)


def test_two_collectors_with_different_usernames_keep_one_key(server, tmp_path):
    serve(server, [without_customer(throughput_vector=good_points(range(0, 10)))])
    hist = History(tmp_path / "h")
    with client_of(server.url, "alice") as alice, client_of(server.url, "bob") as bob:
        hist.collect(alice)
        assert hist.collect(bob).new_points == 0
    check_one_row_per_point(hist, "alice", 10)


def test_a_store_written_with_a_missing_account_reads_one_row_per_point(server, tmp_path):
    # An older collector stored the account as null (and one as the text "nan") for the
    # same points a newer one keys by customer_id.
    import pyarrow.parquet as pq

    serve(server, [index_json("docs", id="id-docs", throughput_vector=good_points(range(0, 10)))])
    hist = History(tmp_path / "h")
    with client_of(server.url) as client:
        hist.collect(client)
    root = tmp_path / "h"
    for path in sorted(
        [*root.glob("throughput/day=*/*.parquet"), *root.glob("limits/day=*/*.parquet")]
    ):
        table = pq.read_table(path)
        for n, old in enumerate([None, "nan"]):
            earlier = table.set_column(0, "account", pa_strings([old] * table.num_rows)).set_column(
                table.column_names.index("collected_at"),
                "collected_at",
                pa_times(table["collected_at"], -1000 - n),
            )
            pq.write_table(earlier, path.with_name(f"part-{n}-older-{path.name[5:]}"))
    check_one_row_per_point(hist, "cust-1", 10)


def pa_strings(values: list[object]):
    import pyarrow as pa

    return pa.array(values, pa.string())


def pa_times(column, shift_ns: int):
    import pyarrow as pa
    import pyarrow.compute as pc

    ints = pc.add(column.combine_chunks().cast(pa.int64()), shift_ns)
    return ints.cast(column.type)
