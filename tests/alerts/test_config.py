"""The alerts file's channels and delivery tables: what they build, and hostile files."""

from __future__ import annotations

import textwrap

import pytest

from searchkit.alerts.channels import EmailChannel, LogChannel, WebhookChannel
from searchkit.alerts.config import load_alerts
from searchkit.errors import ValidationError

from .conftest import HOOK_TOKEN, SMTP_PASSWORD

RULE = '[[rule]]\nname = "forecast"\n'
ENV = {
    "OPS_HOOK": f"https://hooks.slack.com/services/{HOOK_TOKEN}",
    "SEARCHKIT_SMTP_USERNAME": "alerts@example.com",
    "SEARCHKIT_SMTP_PASSWORD": SMTP_PASSWORD,
}


def write(tmp_path, body: str):
    path = tmp_path / "alerts.toml"
    path.write_text(RULE + textwrap.dedent(body))
    return path


def test_channels_and_delivery_limits_are_read_from_the_file(tmp_path):
    path = write(
        tmp_path,
        """
        [[channel]]
        name = "ops"
        type = "webhook"
        url_env = "OPS_HOOK"
        format = "slack"
        timeout = "3s"

        [[channel]]
        type = "email"
        host = "smtp.example.com"
        sender = "searchkit@example.com"
        to = "ops@example.com"

        [[channel]]
        type = "log"
        level = "error"
        send_resolved = false

        [delivery]
        budget = "4s"
        lease = 90
        """,
    )
    config = load_alerts(path, environ=ENV)

    ops, mail, log = config.channels
    assert isinstance(ops, WebhookChannel) and isinstance(mail, EmailChannel)
    assert isinstance(log, LogChannel)
    assert [c.name for c in config.channels] == ["ops", "email-2", "log-3"]
    assert ops.describe() == "slack webhook https://hooks.slack.com/••••••••"
    assert ops.url.get_secret_value() == ENV["OPS_HOOK"] and ops.timeout == 3.0
    assert mail.describe() == (
        "e-mail via smtp.example.com:587 (STARTTLS, login alerts@example.com) to ops@example.com"
    )
    assert mail.password is not None and mail.password.get_secret_value() == SMTP_PASSWORD
    assert (log.level, log.send_resolved) == (40, False)
    assert (config.budget, config.lease) == (4.0, 90.0)
    assert [r.name for r in config.rules] == ["forecast"]
    assert HOOK_TOKEN not in repr(config) and SMTP_PASSWORD not in repr(config)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            '[[channel]]\ntype = "webhook"\nurl_env = "OPS_HOOK"\nretries = 3\n',
            "line 6: channel 1: unknown field 'retries' (a webhook channel takes name, type, "
            "timeout, send_resolved, url, url_env, format, receiver, external_url, allow_http)",
        ),
        (
            '[[channel]]\ntype = "pager"\n',
            "line 4: channel 1: type must be 'webhook', 'email' or 'log', got 'pager'",
        ),
        (
            '[[channel]]\ntype = "webhook"\nurl_env = "NOT_SET_ANYWHERE"\n',
            "line 5: channel 1: the environment variable NOT_SET_ANYWHERE (url_env) is not set",
        ),
        (
            '[[channel]]\ntype = "email"\nhost = "smtp.example.com"\nsender = "a@b.c"\n'
            'to = ["x@y.z"]\npassword = "hunter2"\n',
            "line 8: channel 1: a password is not written in the file: put it in an "
            "environment variable and name that with password_env (default "
            "SEARCHKIT_SMTP_PASSWORD)",
        ),
        (
            '[[channel]]\ntype = "webhook"\nurl_env = "OPS_HOOK"\ntimeout = 1e309\n',
            "line 6: channel 1: timeout must be a duration above 0 and at most 300 s "
            '("10s", "2min" or seconds), got inf',
        ),
        (
            '[[channel]]\ntype = "webhook"\nurl_env = "OPS_HOOK"\ntimeout = -1\n',
            "line 6: channel 1: timeout must be a duration above 0 and at most 300 s "
            '("10s", "2min" or seconds), got -1',
        ),
        (
            '[[channel]]\nname = "ops"\ntype = "log"\n\n[[channel]]\nname = "ops"\ntype = "log"\n',
            "line 8: channel 2: a second channel named 'ops'; names must be unique "
            "(deliveries are recorded by it)",
        ),
        (
            '[delivery]\nbudget = "forever"\n',
            'line 4: [delivery]: budget must be a duration above 0 and at most 300 s ("10s", '
            "\"2min\" or seconds), got 'forever'",
        ),
        (
            "[delivery]\nretry = 3\n",
            "line 4: [delivery]: unknown field 'retry' (it takes budget, lease)",
        ),
        (
            '[[channel]]\ntype = "webhook"\nurl_env = "OPS_HOOK"\nformat = "teams"\n',
            "line 6: channel 1: channel 'webhook-1': format must be 'alertmanager' or 'slack', "
            "got 'teams'",
        ),
        (
            '[[channel]]\ntype = "webhook"\nurl = "http://hooks.example.com/T0/B0/x"\n',
            "line 5: channel 1: channel 'webhook-1': the webhook URL "
            "http://hooks.example.com/•••••••• is plain http to another machine, which would "
            "send its token in clear: use https, or set allow_http = true for a receiver on a "
            "trusted network",
        ),
        (
            '[[channel]]\ntype = "email"\nhost = "smtp.example.com"\nsender = "a@b.c"\nto = []\n',
            "line 7: channel 1: channel 'email-1': to must list at least one address",
        ),
    ],
    ids=[
        "unknown-field",
        "unknown-type",
        "env-unset",
        "password-in-file",
        "timeout-1e309",
        "timeout-negative",
        "duplicate-name",
        "budget-text",
        "delivery-unknown",
        "format",
        "plain-http",
        "no-recipient",
    ],
)
def test_a_hostile_channel_table_is_an_error_naming_the_file_and_line(tmp_path, body, message):
    path = write(tmp_path, body)
    with pytest.raises(ValidationError) as caught:
        load_alerts(path, environ=ENV)
    assert str(caught.value) == f"{path}, {message}"
    assert "hunter2" not in str(caught.value)


def test_a_login_without_its_password_is_refused(tmp_path):
    path = write(
        tmp_path,
        """
        [[channel]]
        type = "email"
        host = "smtp.example.com"
        sender = "a@b.c"
        to = "x@y.z"
        """,
    )
    with pytest.raises(ValidationError) as caught:
        load_alerts(path, environ={"SEARCHKIT_SMTP_USERNAME": "u"})
    assert str(caught.value) == (
        f"{path}, line 4: channel 1: a login ('u') without a password: set the environment "
        "variable SEARCHKIT_SMTP_PASSWORD"
    )


def test_a_rule_naming_a_channel_that_is_not_there_is_refused(tmp_path):
    path = tmp_path / "alerts.toml"
    path.write_text(
        '[[rule]]\nname = "forecast"\nchannels = ["pager"]\n\n'
        '[[channel]]\nname = "ops"\ntype = "log"\n'
    )
    with pytest.raises(ValidationError) as caught:
        load_alerts(path, environ={})
    assert str(caught.value) == (
        f"{path}, line 1: rule 'forecast': channels ['pager'] are not among the [[channel]] "
        "tables (ops)"
    )


def test_one_line_finder_serves_rules_channels_and_delivery():
    from searchkit.alerts.rules import TableLines, table_lines

    text = textwrap.dedent(
        """\
        stalled_after = "30min"
        [[rule]]
        name = "forecast"
        [delivery]
        budget = "5s"
        [[channel]]
        "name" = "ops"
        type = "log"
        [[ rule ]]
        at = 0.8
        """
    )
    assert table_lines(text, "rule") == TableLines(
        [2, 9], {(0, "name"): 3, (1, "at"): 10}, {"stalled_after": 1}
    )
    assert table_lines(text, "channel")[:2] == ([6], {(0, "name"): 7, (0, "type"): 8})
    assert table_lines(text, "delivery")[:2] == ([4], {(0, "budget"): 5})
    assert table_lines(text, "nothing").starts == []
