"""Spark reads the history as the README says: the README's Spark snippet, run as written,
over the throughput, rollups and limits datasets, agrees with searchkit's own figures.

Spark is the `spark` extra (``pip install 'searchkit[spark]'``) and needs Java 17. Where
either is missing this test skips, except under ``SEARCHKIT_REQUIRE_SPARK=1`` (set by
``.ci/run``), where a missing Spark fails: CI must run it.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import searchkit as sk
from searchkit.history.layout import THROUGHPUT_SCHEMA, WRITE_OPTIONS
from searchkit.history.usage_history import History
from tests.history.conftest import collect_across_midnight

README = pathlib.Path(__file__).parents[2] / "README.md"
STORE = "usage-history"


def readme_snippet() -> str:
    """The README's Spark code block (the one that reads ``usage-history`` with Spark)."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    spark = [block for block in blocks if "spark.read.parquet" in block]
    assert len(spark) == 1, "the README holds exactly one Spark snippet"
    return spark[0]


def require_spark() -> None:
    """Skip where Spark cannot run, or fail under SEARCHKIT_REQUIRE_SPARK=1 (CI)."""
    reason = None
    try:
        import pyspark  # noqa: F401
    except ImportError:
        reason = "pyspark is not installed (pip install 'searchkit[spark]')"
    if reason is None and shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        reason = "Spark needs Java 17 (java is not on PATH and JAVA_HOME is unset)"
    if reason is None:
        return
    if os.environ.get("SEARCHKIT_REQUIRE_SPARK") == "1":
        pytest.fail(f"{reason} (SEARCHKIT_REQUIRE_SPARK=1: the Spark test must run)")
    pytest.skip(reason)


def test_the_readme_snippet_is_this_tests_code():
    snippet = readme_snippet()
    for name in ("points", "daily", "hours", "limits"):
        assert re.search(rf"^{name} = ", snippet, re.M), f"the snippet defines {name}"
    assert 'spark.read.parquet("usage-history/throughput")' in snippet
    assert 'spark.read.parquet("usage-history/rollups")' in snippet
    assert 'spark.read.parquet("usage-history/limits")' in snippet


@pytest.mark.slow
def test_the_readme_spark_snippet_agrees_with_searchkit(tmp_path, monkeypatch, emulator, client):
    require_spark()
    from pyspark.sql import SparkSession

    hist = History(tmp_path / STORE)
    collect_across_midnight(hist, emulator, client)
    # A minute of the open day written again later with another value: the latest wins.
    # (The closed day is left as compacted, so its rollup stays current.)
    first = hist.throughput().iloc[-1]
    revised = pa.table(
        {
            "account": [hist.snapshots()["account"].iloc[0]],
            "index_id": [str(first["index_id"])],
            "name": [str(first["name"])],
            "time": [first["time"].value],
            "value": [1234.5],
            "collected_at": [pd.Timestamp("2026-11-21 02:00", tz="UTC").value],
        },
        schema=THROUGHPUT_SCHEMA,
    )
    day = tmp_path / STORE / f"throughput/day={first['time']:%Y-%m-%d}"
    pq.write_table(revised, day / "part-9-revised.parquet", **WRITE_OPTIONS)  # as collect writes
    assert hist.throughput().iloc[-1]["value"] == 1234.5

    monkeypatch.chdir(tmp_path)
    spark = SparkSession.builder.master("local[1]").appName("searchkit-test").getOrCreate()
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    try:
        scope: dict[str, object] = {}
        exec(compile(readme_snippet(), "README.md (Spark)", "exec"), scope)  # noqa: S102 (our README)
        points = scope["points"].toPandas()  # type: ignore[attr-defined]
        daily = scope["daily"].toPandas()  # type: ignore[attr-defined]
        hours = scope["hours"].toPandas()  # type: ignore[attr-defined]
        limits = scope["limits"].toPandas()  # type: ignore[attr-defined]
    finally:
        spark.stop()
    # Spark hands instants to pandas as naive datetimes in its session's zone (UTC here).
    points["time"] = points["time"].dt.tz_localize("UTC")
    hours["period"] = hours["period"].dt.tz_localize("UTC")

    # The points: the ones throughput() gives, each with its latest value.
    ours = hist.throughput()
    assert len(points) == len(ours) == 6 * 240  # 6 indexes, 21:00 to 01:00
    theirs = points.set_index(["index_id", "time"])["value"].sort_index()
    mine = ours.astype({"index_id": str}).set_index(["index_id", "time"])["value"].sort_index()
    assert theirs.loc[(str(first["index_id"]), first["time"])] == 1234.5
    assert theirs.index.tolist() == mine.index.tolist()
    assert theirs.tolist() == mine.tolist()

    # Each index's UTC day: the same operations as usage_frame's, from the same points.
    usage = sk.usage_frame(hist)
    expected = usage.groupby([usage["index_id"].astype(str), "period"])["operations"].sum()
    got = daily.set_index(["index_id", "day"])["operations"].sort_index()
    assert len(got) == len(expected) == 6 * 2
    assert got.round(6).tolist() == expected.sort_index().round(6).tolist()

    # The closed day's hours, from the rollups: searchkit's, hour by hour.
    rolled = hist.rollups(columns=["index_id", "period", "hourly_value_sum"])
    assert len(hours) == 24 * len(rolled) == 24 * 6
    for row in rolled.itertuples():
        own = hours[(hours["index_id"] == row.index_id) & (hours["period"] == row.period)]
        assert own.sort_values("hour")["value_sum"].tolist() == list(row.hourly_value_sum)

    # Each index's newest limits: what hist.limits() says.
    stored = hist.limits()
    assert sorted(limits["id"]) == sorted(stored.index)
    assert dict(zip(limits["id"], limits["name"], strict=True)) == stored["name"].to_dict()
