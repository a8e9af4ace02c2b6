"""A create is sent once: a lost answer is reconciled through a list, never re-POSTed."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt

import pytest

import searchkit as sk
from searchkit.emulator import Emulator
from searchkit.errors import IndexExistsError

from .conftest import PASSWORD, SHORT_READ, USERNAME, harness_client, stored_names
from .harness import FaultServer, drop, forward, hang, refused_port, reply, reset

CREATE = {"region": "eu-west-1", "type": "payg"}


def unpointed(index: sk.SearchIndex) -> sk.SearchIndex:
    """``index`` without its points. The emulator here runs on the real clock, so the same
    index listed a moment after its create can carry the next minute's points (CI,
    2026-11-27: equal reprs, unequal indexes, when a 0.3 s list crossed a minute): every
    other field must match exactly."""
    return dataclasses.replace(index, throughput=None)


LOST_ANSWERS = {
    "dropped": drop(),
    "reset": reset(),
    "timeout": hang(),
    "502": reply(502, "<html>Bad Gateway</html>"),
    "503": reply(503, {"error": "upstream timed out"}),
    "truncated": reply(200, b'{"id": "0000', {"Content-Length": "500"}),
}


@pytest.mark.parametrize("lost", LOST_ANSWERS.values(), ids=LOST_ANSWERS.keys())
def test_create_whose_answer_is_lost_returns_the_index_it_created(proxy, emulator, lost):
    proxy.script("POST", forward(then=lost))
    with harness_client(proxy.url, timeout=SHORT_READ) as client:
        index = client.create_index("docs", **CREATE)
    assert proxy.count("POST") == 1
    assert stored_names(emulator) == ["docs"]
    (stored,) = emulator.store.list_indexes(emulator.account)
    assert index.id == stored["id"]
    assert index.token.get_secret_value() == stored["token"]


def test_existing_name_is_refused_by_default_naming_the_index_and_creating_nothing(
    proxy, proxied, emulator
):
    older = proxied.create_index("docs", **CREATE)
    with pytest.raises(IndexExistsError) as info:
        proxied.create_index("docs", region="us-central1", type="free")
    assert str(info.value) == (
        f"create index 'docs': an index named 'docs' already exists (id {older.id}, region "
        "eu-west-1, type payg); nothing was created. Pass if_exists='return' to get it, or "
        "if_exists='create' to make another"
    )
    assert tuple(map(unpointed, info.value.existing)) == (unpointed(older),)
    assert isinstance(info.value, sk.ValidationError)
    assert proxy.count("POST") == 1  # the first create only
    assert stored_names(emulator) == ["docs"]


def test_if_exists_return_gives_back_the_existing_index_without_a_post(proxy, proxied, emulator):
    older = proxied.create_index("docs", **CREATE)
    again = proxied.create_index("docs", if_exists="return", **CREATE)
    assert unpointed(again) == unpointed(older)
    assert (proxy.count("GET"), proxy.count("POST")) == (3, 1)  # list, create, check
    assert stored_names(emulator) == ["docs"]


def test_if_exists_return_with_two_of_that_name_refuses_to_choose(proxy, proxied, emulator):
    a = proxied.create_index("docs", **CREATE)
    b = proxied.create_index("docs", if_exists="create", **CREATE)
    with pytest.raises(IndexExistsError, match="2 indexes named 'docs' exist") as info:
        proxied.create_index("docs", if_exists="return", **CREATE)
    assert {i.id for i in info.value.existing} == {a.id, b.id}
    assert proxy.count("POST") == 2


def test_if_exists_create_makes_a_duplicate_with_exactly_one_request(proxy, proxied, emulator):
    proxied.create_index("docs", **CREATE)
    before = proxy.count()
    second = proxied.create_index("docs", if_exists="create", **CREATE)
    assert proxy.count() - before == 1
    assert proxy.seen()[-1].method == "POST"
    assert stored_names(emulator) == ["docs", "docs"]
    assert second.name == "docs"


def test_if_exists_create_reconciles_a_lost_answer_by_name_and_creation_time(
    proxy, proxied, emulator
):
    proxy.script("POST", forward(then=drop()))
    index = proxied.create_index("docs", if_exists="create", **CREATE)
    (stored,) = emulator.store.list_indexes(emulator.account)
    assert index.id == stored["id"]
    assert (proxy.count("POST"), proxy.count("GET")) == (1, 1)  # the list after, only


def test_if_exists_create_cannot_tell_its_index_from_a_recent_one_of_the_same_name(
    proxy, proxied, emulator
):
    # Without a list made first, an index of that name created moments before is inside
    # the creation-time window too: the client must say it cannot tell, not guess.
    proxied.create_index("docs", **CREATE)
    proxy.script("POST", forward(then=drop()))
    with pytest.raises(sk.AmbiguousCreateError, match="2 indexes of that name created within"):
        proxied.create_index("docs", if_exists="create", **CREATE)
    assert proxy.count("POST") == 2  # one per call, never re-sent
    assert stored_names(emulator) == ["docs", "docs"]


def test_bad_if_exists_is_refused_before_any_request(proxy, proxied):
    with pytest.raises(sk.ValidationError, match="if_exists must be 'raise', 'return' or"):
        proxied.create_index("docs", if_exists="replace", **CREATE)  # type: ignore[arg-type]
    assert proxy.count() == 0


def test_lost_answer_with_a_failing_list_is_ambiguous_and_not_repeated(proxy, proxied, emulator):
    proxy.script("GET", forward(), then=reply(503, {"error": "down"}))
    proxy.script("POST", forward(then=drop()))
    with pytest.raises(sk.AmbiguousCreateError) as info:
        proxied.create_index("docs", **CREATE)
    assert proxy.count("POST") == 1
    assert stored_names(emulator) == ["docs"]
    assert str(info.value) == (
        "create index 'docs' (POST /v2/search): the request was sent, then failed "
        "(POST /v2/search to "
        f"{proxy.url}: the connection was reset or closed before an answer), and listing to "
        "check also failed (GET /v2/search -> 503: down after 2 retries); the index may or "
        "may not exist: list the indexes before trying again"
    )


def test_lost_answer_without_reconciling_is_ambiguous_at_once(proxy, emulator):
    proxy.script("POST", forward(then=hang()))
    client = harness_client(proxy.url, timeout=SHORT_READ)
    with pytest.raises(sk.AmbiguousCreateError, match=r"no answer within 0\.5 s"):
        client.create_index("docs", reconcile=False, if_exists="create", **CREATE)
    assert (proxy.count("POST"), proxy.count("GET")) == (1, 0)
    assert stored_names(emulator) == ["docs"]


def test_request_abandoned_before_its_body_was_read_is_ambiguous_and_creates_nothing(
    proxy, proxied, emulator
):
    proxy.script("POST", reset(before_body=True))
    with pytest.raises(sk.AmbiguousCreateError, match="no new index of that name is listed yet"):
        proxied.create_index("docs", **CREATE)
    assert proxy.count("POST") == 1
    assert stored_names(emulator) == []


def test_a_second_new_index_of_the_same_name_makes_the_create_ambiguous(proxy, proxied, emulator):
    # Someone else created "docs" while this call's answer was lost: the client cannot
    # tell which one is its own, so it must not guess.
    # The other index is made before the answer is dropped: made after, the client's
    # check could list before it exists (it did, on a busy machine) and see only its own.
    def raced_then_dropped(exchange):
        emulator.store.create_index(emulator.account, name="docs", **CREATE)
        drop()(exchange)

    proxy.script("POST", forward(then=raced_then_dropped))
    with pytest.raises(sk.AmbiguousCreateError, match="2 new indexes of that name are listed"):
        proxied.create_index("docs", **CREATE)
    assert proxy.count("POST") == 1
    assert stored_names(emulator) == ["docs", "docs"]


def test_server_error_on_create_without_a_new_index_is_server_error(proxy, proxied, emulator):
    proxy.script("POST", reply(500, {"error": "database unavailable"}))
    with pytest.raises(
        sk.ServerError,
        match=r"^create index \'docs\' \(POST /v2/search -> 500\): database unavailable$",
    ):
        proxied.create_index("docs", **CREATE)
    assert proxy.count("POST") == 1
    assert proxy.count("GET") == 2  # before and after: nothing new, so really not created
    assert stored_names(emulator) == []


def test_create_refused_before_sending_is_safe_to_repeat(emulator):
    with refused_port() as port:
        client = harness_client(f"http://127.0.0.1:{port}")
        with pytest.raises(sk.TransportError) as info:
            client.create_index("docs", reconcile=False, if_exists="create", **CREATE)
    assert info.value.sent is False
    assert info.value.method == "POST"
    assert stored_names(emulator) == []
    # The same port, now answering: the repeat creates the one and only index.
    with FaultServer(upstream=emulator.url, port=port) as back:
        assert client.create_index("docs", **CREATE).name == "docs"
        assert back.count("POST") == 1
    assert stored_names(emulator) == ["docs"]


def test_list_before_a_create_failing_to_connect_sends_no_post(emulator):
    with refused_port() as port, pytest.raises(sk.TransportError) as info:
        harness_client(f"http://127.0.0.1:{port}").create_index("docs", **CREATE)
    assert info.value.sent is False
    assert stored_names(emulator) == []


@pytest.fixture
def skewed_proxy():
    """The harness in front of an emulator whose clock stands two days in the past."""
    past = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=2)
    with (
        Emulator(users=[(USERNAME, PASSWORD)], clock=past, window_minutes=5) as emulator,
        FaultServer(upstream=emulator.url) as proxy,
    ):
        yield proxy, emulator


@pytest.mark.parametrize(
    ("if_exists", "listed"),
    [("raise", "1 new index(es) of that name are"), ("create", "1 index(es) of that name are")],
)
@pytest.mark.parametrize(
    "lost", [drop(), reply(502, "<html>Bad Gateway</html>")], ids=["dropped", "502"]
)
def test_lost_create_on_a_service_with_a_distant_clock_is_ambiguous_not_a_failure(
    skewed_proxy, lost, if_exists, listed
):
    # The index was created, but its creation_time cannot prove it is this call's. Saying
    # "failed" here would invite a retry and a second index.
    proxy, emulator = skewed_proxy
    proxy.script("POST", forward(then=lost))
    with pytest.raises(sk.AmbiguousCreateError) as info:
        harness_client(proxy.url).create_index("docs", if_exists=if_exists, **CREATE)
    assert (
        f"{listed} listed, but none with a creation_time within 300 s of this call "
        "(do the clocks differ?)"
    ) in str(info.value)
    assert proxy.count("POST") == 1
    assert stored_names(emulator) == ["docs"]


def test_create_whose_reconciling_list_times_out_names_the_create(proxy, emulator):
    # Before, the error named "GET /v2/search", an operation the user never asked for.
    proxy.script("POST", forward(then=hang()))
    proxy.script("GET", forward(), then=hang())
    client = harness_client(proxy.url, timeout=SHORT_READ, max_retries=0)
    with pytest.raises(sk.AmbiguousCreateError) as info:
        client.create_index("docs", **CREATE)
    assert info.value.operation == "create index 'docs'"
    assert str(info.value).startswith("create index 'docs' (POST /v2/search): the request was")
    assert "listing to check also failed (GET /v2/search to" in str(info.value)
    assert sk.errors.describe_failure(info.value).startswith(
        "The service did not confirm whether index 'docs' was created (no answer within 0.5 s)"
    )


def test_create_whose_first_list_fails_names_the_create_and_that_nothing_was_created(
    proxy, emulator
):
    proxy.script("GET", then=reply(503, {"error": "maintenance"}))
    with pytest.raises(sk.ServerError) as info:
        harness_client(proxy.url).create_index("docs", **CREATE)
    assert str(info.value) == (
        "create index 'docs' (GET /v2/search -> 503): maintenance after 2 retries"
    )
    assert sk.errors.describe_failure(info.value) == (
        "The service failed to create index 'docs' after 2 retries (HTTP 503: maintenance); "
        "nothing was created."
    )
    assert proxy.count("POST") == 0


# -- one name, one index (issue 29, item 4) -------------------------------------------------


def test_eight_threads_creating_one_name_make_one_index(proxy, emulator):
    # Each list is held 0.3 s by the harness: without serialising, all eight lists come
    # back empty before any create lands, and eight indexes are made.
    import threading

    from .harness import slow

    proxy.script("GET", then=slow(0.3, forward()))
    start = threading.Barrier(8)
    created, refused, failed = [], [], []

    def run() -> None:
        with harness_client(proxy.url) as own:
            start.wait()
            try:
                created.append(own.create_index("same-name", **CREATE))
            except IndexExistsError as exc:
                refused.append(exc)
            except Exception as exc:  # reported by the assertion below
                failed.append(exc)

    threads = [threading.Thread(target=run) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert (len(created), len(refused), failed) == (1, 7, [])
    assert stored_names(emulator) == ["same-name"]
    assert {tuple(map(unpointed, exc.existing)) for exc in refused} == {(unpointed(created[0]),)}
    assert proxy.count("POST") == 1


def gathered(parties: int):
    """An action holding each request until ``parties`` of them have arrived, then
    forwarding them: every caller's list lands in the same window (overlapping cron jobs)."""
    import threading

    barrier = threading.Barrier(parties, timeout=120)
    onward = forward()

    def action(ex) -> None:
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait()
        onward(ex)

    action.__name__ = f"gathered({parties})"
    return action


def test_parallel_create_processes_each_say_a_duplicate_was_made_naming_the_ids(
    proxy, emulator, tmp_path
):
    import os
    import re
    import subprocess
    import sys

    # Three processes (each pays a Python start-up and searchkit's imports): enough for
    # every one to name two others; the eight-way race is the threads' test above.
    parties = 3
    proxy.script("GET", then=gathered(parties))
    env = {
        **os.environ,
        "SEARCHKIT_BASE_URL": proxy.url,
        "SEARCHKIT_USERNAME": USERNAME,
        "SEARCHKIT_PASSWORD": PASSWORD,
        "SEARCHKIT_TIMEOUT": "10,150",
    }
    command = [sys.executable, "-m", "searchkit", "create", "cli-name"]
    command += ["--region", "eu-west-1", "--type", "payg"]
    processes = [
        subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(parties)
    ]
    results = [(p.wait(timeout=300), *p.communicate()) for p in processes]

    stored = {i["id"] for i in emulator.store.list_indexes(emulator.account)}
    assert len(stored) == parties  # across processes nothing can be locked: all created
    for code, out, err in results:
        own = re.search(r"created index 'cli-name' \(([0-9a-f-]{36})\)", out)
        assert own is not None, (code, out, err)
        assert code == 1, (out, err)
        (line,) = err.splitlines()
        assert line.startswith(
            f"searchkit: warning: created index 'cli-name' ({own.group(1)}), but 2 other "
            "index(es) of that name ("
        ), line
        assert set(re.findall(r"[0-9a-f-]{36}", line)) == stored
        assert line.endswith("the name now has 3 indexes; delete the ones you do not want")
