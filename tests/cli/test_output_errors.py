"""Output that cannot be written is one error line and exit 1 (issue 29, item 14)."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys

import pytest

import searchkit as sk
from searchkit.cli.main import main
from searchkit.emulator import Emulator

NOON = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    store = tmp_path_factory.mktemp("out") / "store"
    with Emulator(demo=True, seed=3, clock=NOON, window_minutes=60) as emu:
        with emu.client() as client:
            sk.History(store).collect(client, now=emu.now())
        env = {
            **os.environ,
            "SEARCHKIT_BASE_URL": emu.url,
            "SEARCHKIT_USERNAME": emu.username,
            "SEARCHKIT_PASSWORD": emu.password,
        }
        yield env, store


FULL_DISK = "searchkit: cannot write the output: No space left on device [OSError]\n"


@pytest.mark.parametrize(
    "command",
    [["--help"], ["forecast", "--help"], ["list"]],
    ids=lambda c: " ".join(c),
)
def test_a_full_disk_is_one_error_line_and_exit_1(service, command):
    # As real processes: nothing more reaches stderr when the interpreter flushes at exit.
    env, store = service
    argv = [part.format(store=store) for part in command]
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "searchkit", *argv],
            env=env,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
        )

    assert (done.returncode, done.stderr) == (1, FULL_DISK)


@pytest.mark.parametrize(
    "command",
    [
        ["list", "--format", "csv"],
        ["create", "full-disk", "--region", "eu-west-1", "--type", "free"],
        ["collect", "--store", "{store}-2", "--count", "1"],
        ["history", "--store", "{store}"],
        ["forecast", "--store", "{store}"],
    ],
    ids=lambda c: " ".join(c),
)
def test_every_command_s_output_on_a_full_disk_is_one_error_line_and_exit_1(
    service, command, monkeypatch, capsys
):
    # Each command's own way to its output, in this process (main()): the real processes
    # above show the interpreter's exit adds nothing.
    env, store = service
    for name in ("SEARCHKIT_BASE_URL", "SEARCHKIT_USERNAME", "SEARCHKIT_PASSWORD"):
        monkeypatch.setenv(name, env[name])
    argv = [part.format(store=store) for part in command]
    with open("/dev/full", "w") as full, monkeypatch.context() as patched:
        patched.setattr(sys, "stdout", full)
        status = main(argv)

    assert (status, capsys.readouterr().err) == (1, FULL_DISK)
