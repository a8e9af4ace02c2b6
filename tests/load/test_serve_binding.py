"""``searchkit serve`` binds loopback unless told otherwise, and says where it listens."""

from __future__ import annotations

import subprocess
import sys

import pytest
import requests

from .conftest import PASSWORD, USER, serve


@pytest.mark.timeout(60)
def test_serve_binds_loopback_by_default_and_says_so(tmp_path):
    with serve("--port", "0", "--user", f"{USER}:{PASSWORD}") as server:
        assert server.banner[0].startswith("searchkit emulator listening on http://127.0.0.1:")
        answer = requests.get(f"{server.url}/v2/search", auth=(USER, PASSWORD), timeout=10)
    assert answer.status_code == 200
    assert answer.json() == []


def serve_on_all_interfaces() -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "searchkit", "serve", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=30,
    )


@pytest.mark.timeout(60)
def test_serve_refuses_all_interfaces_without_the_explicit_flag_in_one_clear_line():
    result = serve_on_all_interfaces()
    assert result.returncode != 0
    assert "listening" not in result.stdout
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert "refusing to bind '0.0.0.0'" in line
    assert "--allow-remote" in line
