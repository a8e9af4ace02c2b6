"""Limits snapshots are stored only when they change, and answer as if every collect stored one."""

from __future__ import annotations

import pandas as pd

import searchkit as sk
from searchkit.history.usage_history import History
from tests.history.conftest import data_files as files


def hourly(hist: History, client: sk.Client, raw: list[dict], change_at: int) -> list[dict]:
    """Collect at 10:00..14:00; at ``change_at`` the first index gets a 50,000 query limit."""
    listings = []
    for hour in range(5):
        if hour == change_at:
            raw = [dict(item) for item in raw]
            raw[0]["max_daily_queries"] = 50_000
        listings.append(raw)
        hist.collect(client, indexes=raw, now=f"2026-11-20 1{hour}:00", compact=False)
    return listings


def test_a_snapshot_is_stored_only_when_the_limits_change(tmp_path, emulator, client):
    hist = History(tmp_path / "h")

    hourly(hist, client, client.list_indexes().to_dicts(), change_at=3)

    stored = [p.name.split("-")[1] for p in files(tmp_path / "h", "limits")]
    ten, one = (str(pd.Timestamp(f"2026-11-20 {h}", tz="UTC").value) for h in ("10:00", "13:00"))
    assert sorted(stored) == sorted([ten, one])


def test_limits_in_force_are_those_each_collect_listed(tmp_path, emulator, client):
    hist = History(tmp_path / "h")
    listings = hourly(hist, client, client.list_indexes().to_dicts(), change_at=3)

    for hour, listed in enumerate(listings):
        at = f"2026-11-20 1{hour}:30"
        got = hist.limits(at=at)
        expected = sk.limits_frame(listed).sort_values(["created", "index_id"], kind="stable")
        pd.testing.assert_frame_equal(
            got.drop(columns=["account", "collected_at"]), expected, check_exact=True
        )
        since = "13:00" if hour >= 3 else "10:00"
        assert got["collected_at"].unique().tolist() == [
            pd.Timestamp(f"2026-11-20 {since}", tz="UTC")
        ]


def test_an_index_gone_or_renamed_is_stored_and_reported_once(tmp_path, emulator, client):
    hist = History(tmp_path / "h")
    raw = client.list_indexes().to_dicts()
    hist.collect(client, indexes=raw, now="2026-11-20 10:00")
    gone = raw.pop()
    raw[0] = {**raw[0], "name": "docs-search-v2"}

    first = hist.collect(client, indexes=raw, now="2026-11-20 10:10")
    again = hist.collect(client, indexes=raw, now="2026-11-20 10:20")

    assert sum("no longer listed" in w or "renamed" in w for w in first.warnings) == 2
    assert [w for w in again.warnings if "no longer listed" in w or "renamed" in w] == []
    assert len(files(tmp_path / "h", "limits")) == 2
    assert gone["id"] in hist.limits().index  # its last snapshot is kept
    assert hist.limits().loc[raw[0]["id"], "name"] == "docs-search-v2"


def test_usage_compares_each_period_with_the_limits_at_its_end(tmp_path, emulator, client):
    hist = History(tmp_path / "h")
    raw = client.list_indexes().to_dicts()
    # Every index's limits change at 12:00 on 2026-11-20, before the days its points are on.
    changed = [{**item, "max_daily_queries": 50_000, "max_daily_updates": 7} for item in raw]
    hist.collect(client, indexes=raw, now="2026-11-20 10:00", compact=False)
    hist.collect(client, indexes=raw, now="2026-11-20 11:00", compact=False)
    hist.collect(client, indexes=changed, now="2026-11-20 12:00", compact=False)

    daily = sk.usage_frame(hist)
    hourly = sk.usage_frame(hist, freq="h")

    assert set(daily["limit"]) == {50_007.0}  # each day's limits are those at its end
    # An hour is not the period a daily limit counts: no limit beside it, and the reason why.
    assert hourly["limit"].isna().all()
    assert set(hourly["reason"]) == {
        "max_daily_queries+max_daily_updates is a limit per UTC day; these periods are h"
    }
    assert len(files(tmp_path / "h", "limits")) == 2
