"""The emulator under load: 640 concurrent creates with lists alongside, in one process
and in two processes sharing one database file. Every create lands once, nothing fails.

The work is bounded by count: the verdict is the same on an idle machine and on a busy one
(another test run beside this one); only a hang meets the timeout. The rate is printed."""

from __future__ import annotations

import logging

import pytest

import searchkit as sk
from searchkit.emulator import Emulator

from .conftest import CREATES_PER_THREAD, PASSWORD, THREADS, USER, run_workload, serve

TOTAL = THREADS * CREATES_PER_THREAD


def report(where: str, outcome) -> None:
    print(
        f"\nload held ({where}): {len(outcome.created_ids)} creates, "
        f"{len(set(outcome.created_ids))} unique ids, {outcome.server_errors()} 5xx, "
        f"{outcome.lists} lists alongside (up to {outcome.max_listed} indexes), "
        f"wall time {outcome.wall_time:.1f} s, {outcome.creates_per_second():.1f} creates/s"
    )


# Timeouts: a ceiling only a hang reaches (about ten times an idle 2-core run).
@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("storage", ["file", "memory"])
def test_one_emulator_takes_640_concurrent_creates_with_lists_alongside(tmp_path, caplog, storage):
    caplog.set_level(logging.WARNING, logger="searchkit.emulator")
    db = str(tmp_path / "load.db") if storage == "file" else None
    with Emulator(db=db, users=[(USER, PASSWORD)], window_minutes=10) as emulator:
        outcome = run_workload([emulator.url])
        stored = emulator.store.list_indexes(emulator.account)
    report(f"one process, {storage} store", outcome)
    assert outcome.errors == [] and outcome.list_errors == []
    assert len(outcome.created_ids) == TOTAL
    assert len(set(outcome.created_ids)) == TOTAL
    assert sorted(i["id"] for i in stored) == sorted(outcome.created_ids)
    assert outcome.lists >= 1
    assert [r.getMessage() for r in caplog.records] == []  # no "database is locked", no 500


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_two_emulator_processes_share_one_database_file_under_load(tmp_path):
    db = str(tmp_path / "shared.db")
    args = ("--db", db, "--port", "0", "--user", f"{USER}:{PASSWORD}")
    with serve(*args) as first, serve(*args) as second:
        # Lists of hundreds of indexes with a day of throughput each are heavy: pace them.
        outcome = run_workload([first.url, second.url], list_pause_s=0.5)
        seen = []
        for process in (first, second):
            with sk.Client(
                username=USER, password=PASSWORD, base_url=process.url, timeout=(30, 120)
            ) as client:
                seen.append(sorted(i.id for i in client.list_indexes()))
    stderr = first.process.stderr.read() + second.process.stderr.read()
    report("two processes, one --db file", outcome)
    assert outcome.errors == [] and outcome.list_errors == []
    assert len(outcome.created_ids) == TOTAL
    assert len(set(outcome.created_ids)) == TOTAL
    assert seen[0] == seen[1] == sorted(outcome.created_ids)
    assert "locked" not in stderr and "Traceback" not in stderr
    assert (first.process.returncode, second.process.returncode) == (0, 0)
