"""``searchkit collect --alerts`` and ``searchkit alerts`` as real processes.

The service is the demo emulator on the real clock (the demo's ``support-tickets`` is over
its daily limit from a quarter past midnight and projected over it before, so a rule
watching it fires in the first round at any hour); the receiver is a real HTTP server on
loopback; collectors are ``searchkit collect`` subprocesses, killed with SIGKILL between
sending and recording where the test says.
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import textwrap
import warnings

import pytest

from searchkit.alerts.journal import Journal
from searchkit.emulator import Emulator
from searchkit.history.usage_history import History
from tests.alerts.conftest import HOOK_TOKEN
from tests.alerts.smtp import SMTP_PASSWORD, SMTP_USER
from tests.cli.processes import finish, searchkit, service_env
from tests.faults.harness import FaultServer, reply

PAUSE = "SEARCHKIT_ALERTS_TEST_PAUSE_BEFORE_RECORD"


def answers_ok(receiver: FaultServer) -> None:
    receiver.script("POST", then=reply(200, {"status": "ok"}))


pytestmark = [
    # ``emulator`` (tests/conftest.py): the demo set on the real clock, one for the module.
    pytest.mark.emulator(demo=True, seed=11, shared=True),
    # ``server``: the webhook receiver, answering 200.
    pytest.mark.server(setup=answers_ok),
]


def rules_file(tmp_path: pathlib.Path, extra: str = "", lease: str = "2min") -> pathlib.Path:
    path = tmp_path / "alerts.toml"
    path.write_text(
        textwrap.dedent(
            f"""\
            [[rule]]
            name = "forecast"
            indexes = "support-tickets"

            [[channel]]
            name = "ops"
            type = "webhook"
            url_env = "ALERTS_TEST_HOOK"
            {extra}
            [delivery]
            budget = "5s"
            lease = "{lease}"
            """
        )
    )
    return path


def environment(demo: Emulator, receiver: FaultServer, **more: str) -> dict[str, str]:
    hook = f"{receiver.url}/hook/{HOOK_TOKEN}"
    return service_env(demo.url, demo.username, demo.password, ALERTS_TEST_HOOK=hook, **more)


def mail_channel(port: int, name: str = "mail", login: str = "") -> str:
    """A ``[[channel]]`` table sending e-mail to the SMTP server on loopback at ``port``."""
    return (
        textwrap.dedent(
            f"""
        [[channel]]
        name = "{name}"
        type = "email"
        host = "127.0.0.1"
        port = {port}
        sender = "searchkit@example.test"
        to = ["ops@example.test"]
        """
        )
        + login
    )


def in_process(monkeypatch, capsys, env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """``searchkit ARGS`` run in this process (``main``) with ``env``: status, out, err.

    For what a process of its own proves nothing more: refusals before or after the first
    round. Killed, racing and secret-keeping collectors run as ``searchkit`` processes.
    """
    from searchkit.cli.main import main

    for name, value in env.items():
        if os.environ.get(name) != value:
            monkeypatch.setenv(name, value)
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def fingerprints(receiver: FaultServer) -> list[str]:
    return [json.loads(s.body)["alerts"][0]["fingerprint"] for s in receiver.seen("POST")]


def test_a_collector_killed_between_send_and_record_resends_with_the_same_key(
    emulator, server, tmp_path, monkeypatch, capsys
):
    store = str(tmp_path / "store")
    rules = str(rules_file(tmp_path, lease="0.001s"))
    paused = searchkit(
        environment(emulator, server, **{PAUSE: "1"}),
        "collect", "--store", store, "--alerts", rules,
    )  # fmt: skip
    try:
        line = paused.stderr.readline()
        assert line == "alerts: paused after 1 send(s), before recording them\n"
        assert server.count("POST") == 1
    finally:
        paused.send_signal(signal.SIGKILL)
        finish(paused)
    assert paused.returncode == -signal.SIGKILL
    records = Journal(History(store)).read()
    assert sorted(set(records["record"])) == ["hit_rate", "state", "transition"]  # none sent

    # The collector started again (in this process: the killed one had to be a process).
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        status, out, err = in_process(
            monkeypatch, capsys, environment(emulator, server),
            "collect", "--store", store, "--alerts", rules,
        )  # fmt: skip
        status_again, again, _ = in_process(
            monkeypatch, capsys, environment(emulator, server),
            "collect", "--store", store, "--alerts", rules,
        )  # fmt: skip
    assert (status, status_again) == (0, 0)
    assert [str(w.message) for w in warned] == []  # a process would have printed them

    first, second = server.seen("POST")
    assert first.body == second.body  # the same message, the same key: the receiver drops it
    assert fingerprints(server) == [records.query("record == 'transition'")["key"].iloc[0]] * 2
    assert "alerts: no change; " in out and out.rstrip().endswith("sent 1, failed 0")
    assert err == ""
    assert again.rstrip().endswith("sent 0, failed 0") and server.count("POST") == 2
    sent = Journal(History(store)).read().query("record == 'delivery'")
    assert sent[["attempt", "outcome", "channel"]].values.tolist() == [[2, "sent", "ops"]]


def test_two_collectors_on_one_store_send_one_notification(emulator, server, tmp_path):
    store = str(tmp_path / "store")
    rules = str(rules_file(tmp_path))
    env = environment(emulator, server)
    first = searchkit(env, "collect", "--store", store, "--alerts", rules)
    second = searchkit(env, "collect", "--store", store, "--alerts", rules)
    outputs = [finish(first), finish(second)]

    assert (first.returncode, second.returncode) == (0, 0)
    assert len(fingerprints(server)) == 1
    assert all("round 1: alerts: " in out for out, _ in outputs)
    deliveries = Journal(History(store)).read().query("record == 'delivery'")
    assert deliveries["outcome"].tolist() == ["sent"]


def test_a_hostile_rules_file_stops_the_collector_before_it_collects(
    emulator, server, tmp_path, monkeypatch, capsys
):
    store = tmp_path / "store"
    bad = tmp_path / "bad.toml"
    bad.write_text('[[rule]]\nname = "x"\nat = -1\n')
    status, out, err = in_process(
        monkeypatch, capsys, environment(emulator, server),
        "collect", "--store", str(store), "--alerts", str(bad),
    )  # fmt: skip
    assert (status, out) == (2, "")
    assert err.startswith(f"searchkit: configuration error: {bad}, line 3: rule 1: at ")
    assert err.count("\n") == 1
    assert not store.exists()


def test_a_glob_that_matches_no_index_stops_the_collector_naming_the_line(
    emulator, server, tmp_path, monkeypatch, capsys
):
    rules = tmp_path / "alerts.toml"
    rules.write_text('[[rule]]\nname = "typo"\nindexes = "suport-*"\n')
    status, out, err = in_process(
        monkeypatch, capsys, environment(emulator, server),
        "collect", "--store", str(tmp_path / "store"), "--alerts", str(rules),
    )  # fmt: skip
    assert status == 2 and out.startswith("round 1: ")
    assert err == (
        f"searchkit: configuration error: --alerts: {rules}, line 1: rule 'typo': "
        "indexes='suport-*' matches none of the 6 indexes (code-snippets, docs-search, "
        "legal-contracts, news-archive, product-catalog, ...)\n"
    )


def test_alerts_test_sends_one_message_to_each_channel(emulator, server, tmp_path, smtp):
    controller, inbox = smtp
    extra = mail_channel(controller.port) + '\n[[channel]]\ntype = "log"\n'
    rules = str(rules_file(tmp_path, extra=extra))
    env = environment(
        emulator, server, SEARCHKIT_SMTP_USERNAME=SMTP_USER, SEARCHKIT_SMTP_PASSWORD=SMTP_PASSWORD
    )
    out, err = finish(
        searchkit(env, "alerts", "--store", str(tmp_path), "--rules", rules, "--test")
    )

    assert out.splitlines() == [
        f"ops (alertmanager webhook http://127.0.0.1:{server.port}/••••••••): sent: HTTP 200",
        f"mail (e-mail via 127.0.0.1:{controller.port} (no TLS (loopback), login "
        f"{SMTP_USER}) to ops@example.test): sent: accepted by the server",
        "log-3 (log line (WARNING, logger searchkit.alerts)): sent: logged",
    ]
    assert err.startswith("[TEST] searchkit alerts: a test message | This is a test")
    [body] = [json.loads(s.body) for s in server.seen("POST")]
    assert body["alerts"][0]["annotations"]["state"] == "test"
    assert len(inbox.messages) == 1


@pytest.mark.server(setup=lambda receiver: receiver.script("POST", then=reply(404)))
def test_alerts_test_exits_1_when_a_channel_refuses(
    emulator, server, tmp_path, monkeypatch, capsys
):
    rules = str(rules_file(tmp_path))
    status, out, _ = in_process(
        monkeypatch, capsys, environment(emulator, server),
        "alerts", "--store", str(tmp_path), "--rules", rules, "--test",
    )  # fmt: skip
    assert status == 1
    assert out == (
        f"ops (alertmanager webhook http://127.0.0.1:{server.port}/••••••••): misconfigured: "
        "HTTP 404: the receiver refused the message; check the URL and the format (not retried)\n"
    )


def test_no_secret_reaches_a_payload_a_record_a_log_or_the_output(emulator, tmp_path, smtp):
    """Webhook tokens and SMTP passwords stay masked; index tokens never enter anything."""
    controller, inbox = smtp
    with emulator.client() as client:
        indexes = client.list_indexes()
    index_tokens = [
        str(getattr(i, f).get_secret_value()) for i in indexes for f in ("token", "read_only_token")
    ]
    wrong = 'username_env = "WRONG_USER"\npassword_env = "WRONG_PASSWORD"\n'
    extra = (
        mail_channel(controller.port)
        + mail_channel(controller.port, "broken-mail", login=wrong)
        + '\n[[channel]]\ntype = "log"\n'
    )
    rules = str(rules_file(tmp_path, extra=extra))
    store = str(tmp_path / "store")
    outputs: list[str] = []
    with FaultServer() as receiver:
        receiver.script("POST", reply(500, {"error": f"down {HOOK_TOKEN}"}), then=reply(404))
        env = environment(
            emulator,
            receiver,
            SEARCHKIT_SMTP_USERNAME=SMTP_USER,
            SEARCHKIT_SMTP_PASSWORD=SMTP_PASSWORD,
            WRONG_USER=SMTP_USER,
            WRONG_PASSWORD=f"{SMTP_PASSWORD}-wrong",
        )
        for args in (
            ("collect", "--store", store, "--alerts", rules, "--every", "1s", "--count", "2"),
            ("alerts", "--store", store, "--rules", rules),
            ("alerts", "--store", store, "--rules", rules, "--test"),
        ):
            process = searchkit(env, *args)
            outputs += finish(process)
        bodies = [s.body.decode() + json.dumps(s.headers) for s in receiver.seen("POST")]
        paths = [s.path for s in receiver.seen("POST")]
    stored = [p.read_bytes() for p in pathlib.Path(store).rglob("*") if p.is_file()]
    mails = [raw.decode() for _, _, raw in inbox.messages]

    assert len(bodies) >= 2 and len(mails) >= 2 and stored  # something was sent and kept
    assert all(path == f"/hook/{HOOK_TOKEN}" for path in paths)  # the token went on the wire
    assert "failed" in outputs[1] and "misconfigured" in "".join(outputs)
    for secret in (HOOK_TOKEN, SMTP_PASSWORD, *index_tokens):
        assert not any(secret in text for text in outputs), secret
        assert not any(secret.encode() in data for data in stored), secret
        assert not any(secret in text for text in mails), secret
    for secret in (SMTP_PASSWORD, *index_tokens):
        assert not any(secret in text for text in bodies), secret
    assert not any(HOOK_TOKEN in body for body in bodies)
