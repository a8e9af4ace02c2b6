"""The searchkit command: list in three formats, create, failures as one line."""

from __future__ import annotations

import csv
import io
import json
import math
import subprocess
import sys

import pytest

from searchkit.cli import main


@pytest.fixture
def configured(emulator, monkeypatch):
    monkeypatch.setenv("SEARCHKIT_BASE_URL", emulator.url)
    monkeypatch.setenv("SEARCHKIT_USERNAME", emulator.username)
    monkeypatch.setenv("SEARCHKIT_PASSWORD", emulator.password)
    with emulator.client() as client:
        client.create_index("docs", region="eu-west-1", type="payg")
        client.create_index("tiny", region="us-central1", type="free")
    return emulator


def test_list_table_shows_unlimited_and_hides_tokens(configured, capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["name", "type", "region", "created"]
    assert [line.split()[0] for line in lines[1:]] == ["docs", "tiny"]
    assert "unlimited" in out
    with configured.client() as client:
        for index in client.list_indexes():
            for token in (index.token, index.read_only_token):
                assert token.get_secret_value() not in out


def test_list_csv_is_the_limits_frame(configured, capsys):
    assert main(["list", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["name"] for r in rows] == ["docs", "tiny"]
    assert "token" not in rows[0]
    assert any(math.isinf(float(r["max_daily_queries"])) for r in rows)


def test_list_json_masks_tokens_unless_asked(configured, capsys):
    assert main(["list", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["name"] for d in data] == ["docs", "tiny"]
    assert {d["token"] for d in data} == {None}
    assert main(["list", "--format", "json", "--show-secrets"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert all(len(d["token"]) >= 32 for d in shown)


def test_create_prints_the_new_index(configured, capsys):
    assert main(["create", "news", "--region", "us-central1", "--type", "free"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("created index 'news' (")
    with configured.client() as client:
        assert client.list_indexes().names() == ["docs", "tiny", "news"]


def test_auth_failure_is_one_line_and_exit_1(configured, monkeypatch, capsys):
    monkeypatch.setenv("SEARCHKIT_PASSWORD", "definitely-wrong-pw")
    assert main(["list"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("searchkit: AuthenticationError: GET /v2/search -> 401")
    assert "definitely-wrong-pw" not in err


def test_missing_configuration_exits_2(capsys):
    assert main(["list"]) == 2
    assert capsys.readouterr().err.startswith("searchkit: configuration error: no credentials")


def test_unreachable_host_is_one_line(monkeypatch, capsys):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("SEARCHKIT_BASE_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("SEARCHKIT_USERNAME", "u")
    monkeypatch.setenv("SEARCHKIT_PASSWORD", "p")
    assert main(["create", "x", "--region", "eu-west-1", "--type", "free"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "TransportError" in err and "connection refused" in err


def test_bad_region_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["create", "x", "--region", "mars", "--type", "free"])
    assert info.value.code == 2
    assert "invalid choice: 'mars'" in capsys.readouterr().err


def test_demo_writes_both_pngs_from_a_subprocess(tmp_path):
    out = tmp_path / "demo"
    result = subprocess.run(
        [sys.executable, "-m", "searchkit", "demo", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    for name in ("throughput.png", "limits.png"):
        data = (out / name).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 10_000
        assert str((out / name).resolve()) in result.stdout
    assert "unlimited" in result.stdout
    assert "docs-search" in result.stdout
