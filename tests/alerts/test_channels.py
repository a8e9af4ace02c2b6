"""Channels against real receivers on loopback: what is sent, and how failures are judged."""

from __future__ import annotations

import email
import email.policy
import json
import logging

import pytest

from searchkit.alerts.channels import EmailChannel, LogChannel, WebhookChannel, masked_url
from searchkit.alerts.notices import notice_text
from searchkit.errors import ValidationError
from tests.faults.harness import FaultServer, drop, hang, refused_port, reply

from .conftest import HOOK_TOKEN, SMTP_PASSWORD, SMTP_USER, firing

DESCRIPTION = (
    "[FIRING] code-snippets max_daily_queries: expected to hit the limit at 16:40 UTC\n"
    "Index code-snippets (6f1c-evening), limit max_daily_queries: used 612,000 of "
    "1,000,000 (61%).\n"
    "Expected to hit the limit at 2026-11-20 16:40 UTC (band 15:50 UTC to 17:30 UTC).\n"
    "Data collected at 2026-11-20 09:10 UTC.\n"
    "Backtest: its breach calls were right on 26 of 28 past days.\n"
    "Rule forecast-default; incident inc-1."
)


def hook(server: FaultServer, **options) -> WebhookChannel:
    return WebhookChannel(f"{server.url}/services/{HOOK_TOKEN}", name="ops", **options)


def test_the_webhook_posts_alertmanager_version_4_with_the_key_as_fingerprint(server):
    server.script("POST", then=reply(200, {"ok": True}))
    outcome = hook(server).send(firing(), timeout=5)

    assert (outcome.result, outcome.status) == ("sent", 200)
    [seen] = server.seen("POST")
    assert seen.path == f"/services/{HOOK_TOKEN}"
    assert seen.header("content-type") == "application/json"
    labels = {
        "alertname": "SearchkitLimit",
        "rule": "forecast-default",
        "index_id": "6f1c-evening",
        "index": "code-snippets",
        "field": "max_daily_queries",
        "period": "2026-11-20",
    }
    annotations = {
        "summary": DESCRIPTION.partition("\n")[0],
        "description": DESCRIPTION,
        "state": "firing",
        "used": "612,000",
        "limit": "1,000,000",
        "utilization": "61%",
        "hit_at": "2026-11-20 16:40 UTC",
        "hit_at_earliest": "2026-11-20 15:50 UTC",
        "hit_at_latest": "2026-11-20 17:30 UTC",
        "data_collected_at": "2026-11-20 09:10 UTC",
        "backtest": "its breach calls were right on 26 of 28 past days",
    }
    assert json.loads(seen.body) == {
        "version": "4",
        "groupKey": '{}:{fingerprint="inc-1"}',
        "truncatedAlerts": 0,
        "status": "firing",
        "receiver": "ops",
        "groupLabels": labels,
        "commonLabels": labels,
        "commonAnnotations": annotations,
        "externalURL": "",
        "alerts": [
            {
                "status": "firing",
                "labels": labels,
                "annotations": annotations,
                "startsAt": "2026-11-20T09:10:00Z",
                "endsAt": "0001-01-01T00:00:00Z",
                "generatorURL": "",
                "fingerprint": "inc-1",
            }
        ],
    }


def test_a_resolved_incident_is_status_resolved_with_its_end(server):
    server.script("POST", then=reply(200))
    notice = firing(state="resolved", at=firing().at.replace(hour=18))
    hook(server).send(notice, timeout=5)
    body = json.loads(server.seen("POST")[0].body)
    assert body["status"] == "resolved"
    assert body["alerts"][0]["startsAt"] == "2026-11-20T09:10:00Z"
    assert body["alerts"][0]["endsAt"] == "2026-11-20T18:10:00Z"
    assert body["alerts"][0]["fingerprint"] == "inc-1"


def test_the_slack_format_sends_the_same_words_as_incoming_webhook_text(server):
    server.script("POST", then=reply(200, "ok"))
    outcome = hook(server, format="slack").send(firing(), timeout=5)
    assert outcome.result == "sent"
    first, _, rest = DESCRIPTION.partition("\n")
    assert json.loads(server.seen("POST")[0].body) == {"text": f"*{first}*\n{rest}"}


def test_slack_markup_in_an_index_name_is_escaped(server):
    server.script("POST", then=reply(200, "ok"))
    hook(server, format="slack").send(firing(name="<!channel> & co"), timeout=5)
    text = json.loads(server.seen("POST")[0].body)["text"]
    assert "&lt;!channel&gt; &amp; co" in text
    assert "<!channel>" not in text


@pytest.mark.parametrize(
    ("action", "result", "detail"),
    [
        (reply(500, {"error": "down"}), "failed", "HTTP 500: the receiver could not take it now"),
        (reply(429), "failed", "HTTP 429: the receiver could not take it now"),
        (
            reply(404, "no such hook"),
            "misconfigured",
            "HTTP 404: the receiver refused the message; check the URL and the format "
            "(not retried)",
        ),
        (
            reply(302, "", {"Location": "http://127.0.0.1:1/elsewhere"}),
            "misconfigured",
            "HTTP 302: the receiver redirects, and alerts do not follow redirects (the "
            "URL's token would go elsewhere): configure the final URL",
        ),
        (hang(), "failed", "no answer within 0.5 s"),
        (drop(), "failed", "the connection was dropped before an answer"),
    ],
    ids=["500", "429", "404", "302", "hang", "drop"],
)
def test_a_receiver_that_fails_is_judged_retry_or_misconfigured(server, action, result, detail):
    server.script("POST", then=action)
    outcome = hook(server).send(firing(), timeout=0.5)
    assert (outcome.result, outcome.detail) == (result, detail)
    assert server.count("POST") == 1  # one attempt: retries happen in later rounds


def test_a_refused_connection_is_a_failure_to_retry():
    with refused_port() as port:
        channel = WebhookChannel(f"http://127.0.0.1:{port}/hook/{HOOK_TOKEN}")
        outcome = channel.send(firing(), timeout=2)
    assert (outcome.result, outcome.detail) == (
        "failed",
        "could not connect (refused or unreachable)",
    )


def test_the_send_timeout_is_the_smaller_of_the_channel_s_and_the_round_s(server):
    server.script("POST", then=hang())
    assert hook(server, timeout=0.3).send(firing(), timeout=60).detail == ("no answer within 0.3 s")


def test_a_webhook_url_shows_only_its_scheme_and_host():
    channel = WebhookChannel(f"https://hooks.slack.com/services/{HOOK_TOKEN}", format="slack")
    assert (
        repr(channel) == "WebhookChannel('webhook', slack webhook https://hooks.slack.com/••••••••)"
    )
    assert HOOK_TOKEN not in repr(channel.__dict__)
    assert masked_url("https://[::1]:8443/x?y=1") == "https://[::1]:8443/••••••••"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            f"http://hooks.example.com/{HOOK_TOKEN}",
            "channel 'webhook': the webhook URL http://hooks.example.com/•••••••• is plain "
            "http to another machine, which would send its token in clear: use https, or set "
            "allow_http = true for a receiver on a trusted network",
        ),
        (
            f"ftp://hooks.example.com/{HOOK_TOKEN}",
            "channel 'webhook': the webhook URL ftp://hooks.example.com/•••••••• must be an "
            "http:// or https:// URL with a host",
        ),
        (
            "https://user:hookTokenXyZ123@hooks.example.com/x",
            "channel 'webhook': the webhook URL https://hooks.example.com/•••••••• carries a "
            "user name or password; put the credential in the path or query the receiver reads",
        ),
        (
            f"https://hooks.example.com:notaport/{HOOK_TOKEN}",
            "channel 'webhook': the webhook URL •••••••• is not a URL",
        ),
    ],
)
def test_a_bad_webhook_url_is_refused_with_the_url_masked(url, message):
    with pytest.raises(ValidationError) as caught:
        WebhookChannel(url)
    assert str(caught.value) == message
    assert "hookTokenXyZ123" not in str(caught.value)


def test_an_email_is_sent_over_smtp_with_the_login(smtp):
    controller, inbox = smtp
    channel = EmailChannel(
        "127.0.0.1",
        port=controller.port,
        sender="searchkit@example.test",
        to=["ops@example.test", "oncall@example.test"],
        username=SMTP_USER,
        password=SMTP_PASSWORD,
    )
    outcome = channel.send(firing(), timeout=5)

    assert (outcome.result, outcome.detail) == ("sent", "accepted by the server")
    assert inbox.logins == [(SMTP_USER, SMTP_PASSWORD)]
    [(sender, recipients, raw)] = inbox.messages
    assert (sender, recipients) == (
        "searchkit@example.test",
        ["ops@example.test", "oncall@example.test"],
    )
    message = email.message_from_bytes(raw, policy=email.policy.default)
    assert message["Subject"] == DESCRIPTION.partition("\n")[0]
    assert message["X-Searchkit-Incident"] == "inc-1"
    assert message.get_content().replace("\r\n", "\n") == DESCRIPTION + "\n"
    assert channel.starttls is False  # loopback: no STARTTLS
    assert SMTP_PASSWORD not in repr(channel)


def test_a_wrong_smtp_password_is_misconfigured_not_retried(smtp):
    controller, inbox = smtp
    channel = EmailChannel(
        "127.0.0.1", port=controller.port, sender="a@example.test", to=["b@example.test"],
        username=SMTP_USER, password="wrong-password",
    )  # fmt: skip
    outcome = channel.send(firing(), timeout=5)
    assert (outcome.result, outcome.detail) == (
        "misconfigured",
        "the server refused the login (535)",
    )
    assert inbox.messages == []


def test_an_smtp_without_starttls_gets_nothing_when_starttls_is_asked(smtp):
    controller, inbox = smtp
    channel = EmailChannel(
        "127.0.0.1", port=controller.port, sender="a@example.test", to=["b@example.test"],
        username=SMTP_USER, password=SMTP_PASSWORD, starttls=True,
    )  # fmt: skip
    outcome = channel.send(firing(), timeout=5)
    assert (outcome.result, outcome.detail) == (
        "misconfigured",
        "127.0.0.1 offers no STARTTLS; not sending in clear",
    )
    assert (inbox.logins, inbox.messages) == ([], [])


def test_an_smtp_that_is_down_is_a_failure_to_retry():
    with refused_port() as port:
        channel = EmailChannel("127.0.0.1", port=port, sender="a@x.test", to=["b@x.test"])
        outcome = channel.send(firing(), timeout=2)
    assert (outcome.result, outcome.detail) == (
        "failed",
        "could not connect (ConnectionRefusedError)",
    )


def test_starttls_is_on_by_default_towards_another_machine():
    channel = EmailChannel("smtp.example.com", sender="a@x.test", to=["b@x.test"])
    assert (channel.starttls, channel.port) == (True, 587)
    with pytest.raises(ValidationError, match="would send the password in clear"):
        EmailChannel(
            "smtp.example.com", sender="a@x.test", to=["b@x.test"], username="u",
            password="p", starttls=False,
        )  # fmt: skip


def test_the_log_channel_writes_the_notice_on_one_line(caplog):
    caplog.set_level(logging.WARNING, logger="searchkit.alerts")
    outcome = LogChannel().send(firing(), timeout=1)
    assert outcome.result == "sent"
    assert [r.getMessage() for r in caplog.records] == [DESCRIPTION.replace("\n", " | ")]
    assert notice_text(firing()) == DESCRIPTION
