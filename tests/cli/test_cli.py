"""The searchkit command: list in three formats, create, serve, demo, lab; failures as one line."""

from __future__ import annotations

import argparse
import csv
import importlib.util
import io
import json
import math
import os
import pathlib
import re
import signal
import subprocess
import sys
import unicodedata

import pandas as pd
import pytest

from searchkit import limits_frame
from searchkit._version import __version__
from searchkit.cli.lab import copy_notebooks
from searchkit.cli.main import main
from searchkit.model.index import SearchIndex
from searchkit.model.limits import LIMIT_FIELDS
from searchkit.model.secret import MASK
from searchkit.render.text import limits_text_table, terminal_safe, text_width
from tests.conftest import FIXED_CLOCK
from tests.faults.harness import FaultServer, hang, reply
from tests.wall import HANG_S, stopwatch

REPO = pathlib.Path(__file__).resolve().parents[2]

#: Any C0/C1 control character or bidi control: none may reach the terminal raw.
RAW_CONTROL = re.compile(
    r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def two_indexes(emulator):
    with emulator.client() as client:
        client.create_index("docs", region="eu-west-1", type="payg")
        client.create_index("tiny", region="us-central1", type="free")


# ``configured`` (tests/conftest.py) points the environment at this emulator.
pytestmark = pytest.mark.emulator(seed=7, clock=FIXED_CLOCK, setup=two_indexes)


def _run(*argv: str, timeout: float = 60, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "searchkit", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **kwargs,
    )


# --- list -----------------------------------------------------------------------------------


def test_list_table_shows_unlimited_and_hides_tokens(configured, capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split()[:6] == ["name", "id", "type", "region", "created", "(UTC)"]
    with configured.client() as client:
        indexes = client.list_indexes()
    assert [line.split()[:4] for line in lines[1:]] == [
        ["docs", indexes[0].id[:8], "payg", "eu-west-1"],
        ["tiny", indexes[1].id[:8], "free", "us-central1"],
    ]
    assert "unlimited" in out
    for index in indexes:
        assert index.token.get_secret_value() not in out
        assert index.read_only_token.get_secret_value() not in out


def test_list_table_formats_limits_like_the_html(configured, capsys):
    assert main(["list"]) == 0
    header, docs, _ = capsys.readouterr().out.splitlines()
    with configured.client() as client:
        index = client.list_indexes()[0]
    assert "bandwidth/month" in header and "queries/day" in header
    # Grouped thousands, "unlimited", bytes in units: the same text as the HTML table shows.
    from searchkit.render.formats import format_limit

    expected = [format_limit(getattr(index, field), field) for field in LIMIT_FIELDS]
    assert "unlimited" in expected and "2,000,000,000" in expected
    # The emulator's clock stands still at 12:00 UTC; the nine limits follow, in order.
    assert docs.split(" 12:00 ", 1)[1].split() == " ".join(expected).split()


def test_list_csv_writes_numbers_unlimited_as_inf_index_id_and_the_json_s_names(configured, capsys):
    assert main(["list", "--format", "csv"]) == 0
    out = capsys.readouterr().out
    rows = list(csv.DictReader(io.StringIO(out)))
    with configured.client() as client:
        indexes = client.list_indexes()
    assert [r["name"] for r in rows] == ["docs", "tiny"]
    # the index key is index_id, as in every frame (the JSON's "id")
    assert list(rows[0])[:2] == ["index_id", "name"]
    assert [r["index_id"] for r in rows] == [i.id for i in indexes]
    assert "token" not in rows[0] and "id" not in rows[0]
    for row, index in zip(rows, indexes, strict=True):
        for field in LIMIT_FIELDS:
            value = getattr(index, field)
            assert row[field] == ("inf" if value == -1 else str(value)), field
    assert "unlimited" not in out and ".0," not in out
    # numbers stay numbers: pandas reads the limits as numbers, unlimited as inf
    frame = pd.read_csv(io.StringIO(out))
    assert frame["max_daily_queries"].dtype.kind in "if"
    assert math.inf in frame["max_daily_queries"].tolist()
    # it joins any frame searchkit makes on index_id, with name beside it
    keys = limits_frame(indexes).reset_index()[["index_id", "name", "type"]]
    joined = frame.merge(keys.astype({"type": str}), on=["index_id", "name"])
    assert joined["type_x"].tolist() == joined["type_y"].tolist() == ["payg", "free"]
    # the other columns: the names of --format json (the API's fields)
    assert main(["list", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert set(rows[0]) - {"index_id"} <= set(listed[0])
    assert rows[0]["creation_time"].endswith("+00:00")


def test_list_csv_with_secrets_has_the_real_tokens(configured, capsys):
    assert main(["list", "--format", "csv", "--show-secrets"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    with configured.client() as client:
        tokens = [i.token for i in client.list_indexes()]
    assert [r["token"] for r in rows] == [
        getattr(t, "get_secret_value", lambda t=t: t)() for t in tokens
    ]


def test_list_json_masks_tokens_as_text_unless_asked(configured, capsys):
    assert main(["list", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["name"] for d in data] == ["docs", "tiny"]
    # Masked is not the same as absent: a token that exists shows as the mask, not null.
    assert {d["token"] for d in data} == {MASK}
    assert {d["read_only_token"] for d in data} == {MASK}
    assert main(["list", "--format", "json", "--show-secrets"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert all(len(d["token"]) >= 32 and d["token"] != MASK for d in shown)


def test_list_json_leaves_throughput_out_unless_asked(configured, capsys):
    assert main(["list", "--format", "json"]) == 0
    small = capsys.readouterr().out
    assert all("throughput_vector" not in d for d in json.loads(small))
    assert main(["list", "--format", "json", "--with-throughput"]) == 0
    full = capsys.readouterr().out
    with configured.client() as client:
        counts = [len(i.throughput) for i in client.list_indexes()]
    assert [len(d["throughput_vector"]) for d in json.loads(full)] == counts
    assert min(counts) > 0 and len(full) > 10 * len(small)


def test_with_throughput_needs_json(configured, capsys):
    assert main(["list", "--with-throughput"]) == 2
    assert capsys.readouterr().err == "searchkit list: --with-throughput goes with --format json\n"


# --- create ---------------------------------------------------------------------------------


def test_create_prints_the_new_index(configured, capsys):
    assert main(["create", "news", "--region", "us-central1", "--type", "free"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("created index 'news' (")
    assert out.splitlines()[2].split()[0] == "news"
    with configured.client() as client:
        assert client.list_indexes().names() == ["docs", "tiny", "news"]


def _ids(emulator, name):
    with emulator.client() as client:
        return [i.id for i in client.list_indexes() if i.name == name]


def test_create_twice_refuses_the_second_and_names_the_existing_index(configured, capsys):
    (docs_id,) = _ids(configured, "docs")
    assert main(["create", "docs", "--region", "eu-west-1", "--type", "payg"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"searchkit: An index named 'docs' already exists ({docs_id}); nothing was created. "
        "Use --if-exists return to use it, or --if-exists create to make another of the same "
        "name. [ValidationError]\n"
    )
    assert _ids(configured, "docs") == [docs_id]


def test_create_if_exists_return_prints_the_existing_index(configured, capsys):
    (docs_id,) = _ids(configured, "docs")
    args = ["create", "docs", "--region", "eu-west-1", "--type", "payg", "--if-exists"]
    assert main([*args, "return"]) == 0
    assert capsys.readouterr().out.startswith(f"found existing index 'docs' ({docs_id}) in ")
    assert _ids(configured, "docs") == [docs_id]


def test_create_if_exists_return_notes_another_region_and_plan(configured, capsys):
    (tiny_id,) = _ids(configured, "tiny")
    args = ["create", "tiny", "--region", "eu-west-1", "--type", "payg", "--if-exists", "return"]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith(f"found existing index 'tiny' ({tiny_id}) in us-central1")
    assert captured.err == (
        "searchkit: note: an index named 'tiny' exists in us-central1 on the free plan, not "
        "in eu-west-1 on the payg plan as asked; it was returned as it is "
        "(if_exists='return')\n"
    )


def test_create_if_exists_create_makes_a_second_index_on_purpose(configured, capsys):
    args = ["create", "docs", "--region", "eu-west-1", "--type", "payg", "--if-exists"]
    assert main([*args, "create"]) == 0
    assert capsys.readouterr().out.startswith("created index 'docs' (")
    assert len(_ids(configured, "docs")) == 2
    assert main([*args, "return"]) == 1
    err = capsys.readouterr().err
    assert "2 indexes named 'docs' exist" in err and "cannot choose one" in err


# --- failures as one line -------------------------------------------------------------------


def test_auth_failure_is_one_line_and_exit_1(configured, monkeypatch, capsys):
    monkeypatch.setenv("SEARCHKIT_PASSWORD", "definitely-wrong-pw")
    assert main(["list"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("searchkit: ")
    assert err == (
        "searchkit: The service did not accept the username and password: invalid username "
        f"or password; the service refused user {configured.username!r}, whose credentials "
        "come from the environment variables SEARCHKIT_USERNAME and SEARCHKIT_PASSWORD. "
        "[AuthenticationError, GET /v2/search -> 401]\n"
    )


def test_nothing_configured_names_the_variables_and_the_demo(capsys):
    assert main(["list"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(
        "searchkit: configuration error: no service address: set SEARCHKIT_BASE_URL"
    )
    for words in ("SEARCHKIT_USERNAME", "SEARCHKIT_PASSWORD", "searchkit serve --demo"):
        assert words in err
    assert "username=" not in err and "base_url=" not in err


def test_the_address_is_checked_before_the_credentials(monkeypatch, capsys):
    monkeypatch.setenv("SEARCHKIT_BASE_URL", "http://api.example.com")
    assert main(["list"]) == 2
    err = capsys.readouterr().err
    assert "refusing to send credentials over plain http to 'api.example.com'" in err

    monkeypatch.setenv("SEARCHKIT_BASE_URL", "http://127.0.0.1:9")
    assert main(["list"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("searchkit: configuration error: no credentials: set SEARCHKIT_USERNAME")
    assert "SEARCHKIT_PASSWORD" in err


def test_half_set_credentials_name_the_missing_variable(monkeypatch, capsys):
    monkeypatch.setenv("SEARCHKIT_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("SEARCHKIT_USERNAME", "ann")
    assert main(["list"]) == 2
    assert "SEARCHKIT_PASSWORD" in capsys.readouterr().err


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


@pytest.mark.timeout(60)
def test_timeout_bounds_a_hung_service(monkeypatch, capsys):
    with FaultServer() as server:
        server.script("GET", then=hang())
        monkeypatch.setenv("SEARCHKIT_BASE_URL", server.url)
        monkeypatch.setenv("SEARCHKIT_USERNAME", "u")
        monkeypatch.setenv("SEARCHKIT_PASSWORD", "p")
        assert main(["list", "--timeout", "0.2"]) == 1
        assert server.count("GET") >= 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "TransportError" in err


@pytest.mark.parametrize("value", ["0", "-1", "abc", "inf"])
def test_timeout_must_be_a_positive_number(value, capsys):
    with pytest.raises(SystemExit) as info:
        main(["list", "--timeout", value])
    assert info.value.code == 2
    assert "--timeout" in capsys.readouterr().err


def test_bad_region_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["create", "x", "--region", "mars", "--type", "free"])
    assert info.value.code == 2
    assert "invalid choice: 'mars'" in capsys.readouterr().err


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"searchkit {__version__}\n"


def test_serve_flags_have_help_and_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for text in (
        "--host HOST address to bind",
        "(default: 127.0.0.1)",
        "(default: 8787)",
        "--db FILE SQLite file",
        "(default: in memory, lost on exit)",
        "--seed SEED make ids",
        "--demo start with a set of demo indexes",
    ):
        assert text in out, text


# --- hostile text from the service ------------------------------------------------------------

HOSTILE_NAME = (
    "docs\x1b[2J\x1b[H"  # clear the screen, cursor home
    "\x1b]0;pwned\x07"  # set the window title
    "\x1b]52;c;cm0gLXJmIH4=\x07"  # write the clipboard (OSC 52)
    "\u202egnp.exe"  # bidi override: reads as "exe.png"
    "\x9b31m\r\nfake-row"  # C1 CSI, carriage return, line feed
)


def _hostile_index(**changes) -> dict:
    index = {
        "id": "0b0e7e57-1d00-4d00-8000-00000000beef",
        "name": HOSTILE_NAME,
        "customer_id": "c1",
        "endpoint": "https://evil.example/\x1b]8;;http://x\x07link",
        "type": "payg\x1b[31m",
        "region": "eu-west-1",
        "token": "t" * 32,
        "read_only_token": "r" * 32,
        "creation_time": 1_700_000_000,
        "max_vector_count": 2_000_000_000,
        "max_daily_queries": -1,
        "throughput_vector": [],
    }
    index.update(changes)
    return index


@pytest.fixture
def hostile(monkeypatch):
    with FaultServer() as server:
        server.script("GET", then=reply(200, [_hostile_index()]))
        server.script("POST", then=reply(400, {"error": "boom\x1b[2J\x1b]52;c;aGk=\x07\u202eevil"}))
        monkeypatch.setenv("SEARCHKIT_BASE_URL", server.url)
        monkeypatch.setenv("SEARCHKIT_USERNAME", "u")
        monkeypatch.setenv("SEARCHKIT_PASSWORD", "p")
        yield server


@pytest.mark.parametrize("fmt", ["table", "csv"])
def test_control_characters_from_the_service_never_reach_the_terminal(hostile, fmt, capsys):
    assert main(["list", "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert not RAW_CONTROL.search(out), ascii(out)
    assert "\\x1b[2J\\x1b[H" in out  # shown, visibly
    assert "\\x1b]52;c;cm0gLXJmIH4=\\x07" in out
    assert "<U+202E>gnp.exe" in out
    assert "\\x9b31m\\r\\nfake-row" in out
    assert len(out.strip().splitlines()) == 2  # the header and one row: no injected line


def test_json_output_escapes_control_characters_and_keeps_the_exact_name(hostile, capsys):
    assert main(["list", "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert not RAW_CONTROL.search(out)
    assert json.loads(out)[0]["name"] == HOSTILE_NAME


def test_error_lines_neutralise_control_characters(hostile, capsys):
    assert main(["create", "x", "--region", "eu-west-1", "--type", "free"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert not RAW_CONTROL.search(err), ascii(err)
    assert "boom" in err and "evil" in err  # the service's words, shown harmlessly


def test_hostile_list_through_the_installed_command(hostile):
    env = {**os.environ}
    result = _run("list", env=env)
    assert result.returncode == 0, result.stderr
    assert not RAW_CONTROL.search(result.stdout)
    assert "<U+202E>" in result.stdout


def test_terminal_safe_escapes_every_control_and_keeps_other_text():
    controls = "".join(map(chr, [*range(0x20), *range(0x7F, 0xA0)]))
    shown = terminal_safe(controls)
    assert not RAW_CONTROL.search(shown) and "\n" not in shown
    assert shown.startswith("\\x00\\x01") and "\\t\\n\\x0b\\x0c\\r" in shown
    assert terminal_safe("a\u2066b\u2069c\u2028") == "a<U+2066>b<U+2069>c<U+2028>"
    kept = "Grüße 文書 🚀 e\u0301 — \\ ok"
    assert terminal_safe(kept) == kept


# --- wide characters ----------------------------------------------------------------------------


def test_wide_and_emoji_names_keep_the_table_aligned():
    names = ["docs", "🚀 launch", "文書検索", "ｶﾀｶﾅ", "cafe\u0301"]
    table = limits_text_table(
        [
            SearchIndex.from_dict({"id": f"{n:0>2}id-{i}", "name": n, "type": "free"})
            for i, n in enumerate(names)
        ]
    )
    lines = table.splitlines()
    # Where the id column starts, in terminal columns: the same on every line.
    starts = set()
    for line, name in zip(lines, ["name", *names], strict=True):
        assert line.startswith(name)
        rest = line[len(name) :]
        starts.add(text_width(name) + len(rest) - len(rest.lstrip(" ")))
    assert len(starts) == 1, (starts, table)
    assert text_width("🚀") == 2 and text_width("文書検索") == 8 and text_width("e\u0301") == 1
    assert unicodedata.east_asian_width("ｶ") == "H" and text_width("ｶﾀｶﾅ") == 4


def test_a_limit_beyond_int64_is_shown_as_missing():
    # The models read an integer the service cannot hold as missing (kept in .invalid).
    index = SearchIndex.from_dict({"name": "x", "max_vector_count": 10**400})
    table = limits_text_table([index])
    header, row = table.splitlines()
    vectors = header.index("vectors")
    assert row[vectors : vectors + len("vectors")].strip() == "—"
    assert dict(index.invalid) == {"max_vector_count": 10**400}


# --- serve ------------------------------------------------------------------------------------


def test_serve_with_a_user_given_twice_is_one_line():
    result = _run("serve", "--port", "0", "--user", "a:b", "--user", "a:c")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        "searchkit serve: account 'a' is given more than once (--user and --read-only-user "
        "names must be unique)"
    ]


def test_serve_with_a_db_in_a_missing_folder_is_one_line():
    result = _run("serve", "--port", "0", "--db", "/nonexistent/x.db")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "searchkit serve: cannot open --db '/nonexistent/x.db': the folder '/nonexistent' "
        "does not exist"
    ]


def test_serve_on_a_port_in_use_is_one_line():
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = _run("serve", "--port", str(port))
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"searchkit serve: cannot listen on 127.0.0.1:{port}: ")


@pytest.mark.timeout(90)
def test_serve_stops_cleanly_on_sigterm_and_keeps_its_database(tmp_path):
    import requests

    db = tmp_path / "state.db"
    command = [sys.executable, "-m", "searchkit", "serve", "--port", "0", "--db", str(db)]
    command += ["--user", "ann:pw-123456"]

    def start() -> tuple[subprocess.Popen, str]:
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        banner = process.stdout.readline()
        assert banner.startswith("searchkit emulator listening on "), process.stderr.read()
        return process, banner.split()[4]

    process, url = start()
    try:
        answer = requests.post(
            f"{url}/v2/search",
            json={"name": "kept", "region": "eu-west-1", "type": "free"},
            auth=("ann", "pw-123456"),
            timeout=10,
        )
        assert answer.status_code in (200, 201)
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "stopping" in out and "Traceback" not in err

    process, url = start()
    try:
        names = [
            i["name"]
            for i in requests.get(f"{url}/v2/search", auth=("ann", "pw-123456"), timeout=10).json()
        ]
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    assert names == ["kept"]
    assert process.returncode == 0


# --- demo -------------------------------------------------------------------------------------


def demo_wrote(stdout: str, out: pathlib.Path) -> None:
    """The pictures the demo writes to ``out``, and what it says of each (``stdout``)."""
    for name in ("throughput.png", "limits.png"):
        data = (out / name).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 10_000
        assert str((out / name).resolve()) in stdout
    assert "unlimited" in stdout
    assert "docs-search" in stdout
    # The written files' paths stand in one column, whatever the longest label.
    wrote = stdout.split("wrote:\n", 1)[1].splitlines()
    assert [line.split()[0] for line in wrote] == [
        "throughput",
        "limits",
        "forecast",
        "utilization",
        "cockpit",
    ]
    assert {line.index(str(out.resolve())) for line in wrote} == {len("  utilization ")}
    assert (out / "cockpit.png").read_bytes().startswith(b"\x89PNG")
    assert "the quota cockpit's picture of " in stdout
    # Each says which limit it draws: limits.png the queries, the others queries + updates.
    assert [line.rsplit("  ", 1)[1] for line in wrote] == [
        "(15-minute means per index, operations/s (assumed))",
        "(limit max_daily_queries per index)",
        "(today against max_daily_queries + max_daily_updates)",
        "(each UTC day against max_daily_queries + max_daily_updates)",
        "(today's forecast against max_daily_queries + max_daily_updates)",
    ]


# The whole demo as a process (about 3 s of CPU, 5-9 s on two busy cores): `make test`, which
# CI runs, runs it; the edit loop checks what it wrote and said of it on the demo run
# in-process below (all but the limits table's fit to 80 columns: tests/cli/test_table_width.py
# checks that of the function the demo prints it with).
@pytest.mark.slow
def test_demo_writes_both_pngs_from_a_subprocess(tmp_path):
    out = tmp_path / "demo"
    # An 80-column terminal: the limits table fits it, as `searchkit list`'s does.
    result = _run("demo", "--out", str(out), timeout=120, env={**os.environ, "COLUMNS": "80"})
    assert result.returncode == 0, result.stderr
    table = result.stdout.split("limits per index:\n\n", 1)[1].split("\n\n", 1)[0]
    assert table.splitlines()[0] == (
        "name             id        type   region       updates/day  queries/day"
    )
    assert table.splitlines()[-1] == (
        "`searchkit list --wide` shows every column, `--columns A,B` the ones named."
    )
    assert max(len(line) for line in table.splitlines()) <= 80
    demo_wrote(result.stdout, out)


def test_demo_into_an_unwritable_place_is_one_line():
    result = _run("demo", "--out", "/proc/x")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("searchkit demo: cannot create the folder '/proc/x': ")


@pytest.fixture(scope="module")
def demo_in_process(tmp_path_factory):
    """``run_demo`` run once in this process (the demo as a process is the test above), the
    user's matplotlib backend set to svg before it: (the files written, what it printed, the
    backend after it). The tests below read the one run."""
    import matplotlib

    from searchkit.cli.demo import run_demo

    folder = tmp_path_factory.mktemp("demo")
    stream = io.StringIO()
    before = matplotlib.get_backend()
    matplotlib.use("svg")
    try:
        files = run_demo(folder, stream=stream)
        backend = matplotlib.get_backend()
    finally:
        matplotlib.use(before)
    return files, stream.getvalue(), backend


def test_demo_writes_its_pictures_and_says_where_and_of_what(demo_in_process):
    files, out, _ = demo_in_process
    demo_wrote(out, files["limits"].parent)


def test_demo_keeps_the_users_matplotlib_backend(demo_in_process):
    # The user's backend is set before the demo runs, and put back afterwards whatever the
    # demo did.
    files, _, backend = demo_in_process
    assert backend == "svg"
    assert sorted(files) == ["cockpit", "forecast", "limits", "throughput", "utilization"]
    assert files["limits"].read_bytes().startswith(b"\x89PNG")


def test_demo_writes_the_forecast_table_and_the_utilization_png(demo_in_process):
    written, out, _ = demo_in_process
    assert "forecast to the next reset at UTC midnight" in out
    # The table `searchkit forecast` prints: the most urgent first, unlimited by name.
    table = out.split("forecast to the next reset at UTC midnight:\n\n", 1)[1].splitlines()
    # support-tickets and code-snippets every day; product-catalog, under its limit, on the
    # days it goes over (about one in six: the demo runs on the wall clock's day)
    assert table[1] in [
        f"{n} of 6 indexes hit their limit before the reset; the most urgent first" for n in (2, 3)
    ]
    # (the widths follow today's figures, which follow the clock)
    assert table[3].split() == [
        "index", "used", "projected", "10-90", "band", "limit", "projected", "%", "hits", "the",
        "limit", "at",
    ]  # fmt: skip
    assert [line.split()[0] for line in table[4:10]] == [
        "support-tickets",
        "code-snippets",
        "product-catalog",
        "docs-search",
        "legal-contracts",
        "news-archive",
    ]
    # unlimited: the share of a limit says "unlimited" too (never 0%), no hit time
    assert [line.split()[-3:] for line in table[7:10]] == [["unlimited", "unlimited", "—"]] * 3
    png = written["utilization"].read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000
    forecast = pd.read_csv(written["forecast"], index_col="index_id")
    assert forecast.set_index("name").loc["support-tickets", "projected"] > 20_000
    assert pd.isna(forecast.set_index("name").loc["docs-search", "projected_utilization"])
    assert set(forecast["unit"]) == {"operations"}


def test_demo_module_does_not_import_the_cli():
    import ast

    tree = ast.parse((REPO / "searchkit" / "cli" / "demo.py").read_text())
    imported = {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    assert "searchkit.cli.main" not in imported


# --- lab ----------------------------------------------------------------------------------------


def test_the_example_notebooks_ship_with_the_package():
    import importlib.resources

    shipped = importlib.resources.files("searchkit") / "notebooks"
    names = sorted(e.name for e in shipped.iterdir() if e.name.endswith(".ipynb"))
    assert names == sorted(p.name for p in (REPO / "notebooks").glob("*.ipynb"))
    assert len(names) >= 3


def test_lab_copies_the_notebooks_and_never_overwrites_the_users(tmp_path):
    folder = tmp_path / "nb"
    copied, kept = copy_notebooks(folder)
    expected = sorted(p.name for p in (REPO / "notebooks").glob("*.ipynb"))
    assert (sorted(copied), kept) == (expected, [])
    for name in expected:
        assert (folder / name).read_bytes() == (REPO / "notebooks" / name).read_bytes()
    (folder / expected[0]).write_text("my edits")
    (folder / expected[1]).unlink()
    copied, kept = copy_notebooks(folder)
    assert copied == [expected[1]]
    assert sorted(kept) == sorted(set(expected) - {expected[1]})
    assert (folder / expected[0]).read_text() == "my edits"


def test_lab_into_an_unwritable_place_is_one_line(capsys):
    if importlib.util.find_spec("jupyterlab") is None:  # found, not imported (~1.5 s)
        pytest.skip("JupyterLab is not installed")
    assert main(["lab", "--dir", "/proc/x/notebooks"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("searchkit lab: cannot copy the notebooks to '/proc/x/notebooks': ")


# --- one loopback check ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("localhost", True),
        ("LOCALHOST.", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.0.0.1", False),
        ("evil.localhost", False),
        ("example.com", False),
    ],
)
def test_cli_and_emulator_share_one_loopback_check(host, loopback):
    from searchkit._net import is_loopback_host
    from searchkit.emulator import Emulator

    assert is_loopback_host(host) is loopback
    if loopback:
        Emulator(host=host).stop()  # accepted (not started: nothing binds)
    else:
        with pytest.raises(ValueError, match="refusing to bind non-loopback address"):
            Emulator(host=host)
        result = main(["serve", "--host", host, "--port", "0"])
        assert result == 2


# --- help, timeouts and addresses as a terminal user meets them ------------------------------


@pytest.mark.parametrize(
    "command", ["list", "create", "serve", "collect", "history", "demo", "lab"]
)
def test_every_option_of_every_command_says_its_default_or_that_it_is_required(command):
    from searchkit.cli.parser import build_parser

    (sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    undocumented = [
        action.dest
        for action in sub.choices[command]._actions
        if action.dest != "help"
        and not ("default" in (action.help or "") or "required" in (action.help or ""))
    ]
    assert undocumented == []


EMPTY_STORE = (
    "location is empty: give a folder, or an s3://BUCKET/PREFIX URL (an empty location "
    "would write into the current folder)"
)


@pytest.mark.parametrize("blank", ["", "  "])
@pytest.mark.parametrize(
    ("argv", "option", "message"),
    [
        (["collect", "--store", "{}"], "--store", EMPTY_STORE),
        (["history", "--store", "{}"], "--store", EMPTY_STORE),
        (["forecast", "--store", "{}"], "--store", EMPTY_STORE),
        (["collect", "--store", "h", "--every", "{}"], "--every",
         "expected a duration such as 30s, 10m, 1h or 1h30m: {!r}"),
        (["collect", "--store", "h", "--count", "{}"], "--count", "invalid int value: {!r}"),
        (["list", "--timeout", "{}"], "--timeout",
         "expected seconds, one number or 'connect,read' (e.g. '10' or '5,30'), got {!r}"),
        (["create", "{}", "--region", "eu-west-1", "--type", "free"], "NAME",
         "expected the index's name (not blank), got {!r}"),
        (["serve", "--host", "{}"], "--host",
         "expected an address to bind, such as 127.0.0.1, got {!r}"),
        (["serve", "--db", "{}"], "--db",
         "expected a file name (leave --db out to keep the indexes in memory), got {!r}"),
        (["serve", "--user", "{}"], "--user", "expected NAME:PASSWORD with both parts non-empty"),
        (["demo", "--out", "{}"], "--out",
         "expected a folder (an empty one would write into the current folder), got {!r}"),
        (["lab", "--dir", "{}"], "--dir",
         "expected a folder (an empty one would copy into the current folder), got {!r}"),
    ],
)  # fmt: skip
def test_an_empty_or_blank_value_is_a_usage_error_naming_the_option(
    argv, option, message, blank, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    given = [blank if arg == "{}" else arg for arg in argv]
    with pytest.raises(SystemExit) as exit_info:
        main(given)
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"searchkit {argv[0]}: error: argument {option}: {message.format(blank)}"
    )
    assert list(tmp_path.iterdir()) == []  # nothing written into the current folder


def test_collect_with_nothing_configured_speaks_command_line(tmp_path, capsys):
    assert main(["collect", "--store", str(tmp_path / "h")]) == 2
    err = capsys.readouterr().err
    assert err == (
        "searchkit: configuration error: no service address: set SEARCHKIT_BASE_URL to the "
        "API's address (e.g. https://api.example.com), SEARCHKIT_USERNAME and "
        "SEARCHKIT_PASSWORD to your account; to try searchkit offline, run `searchkit serve "
        "--demo` and set the values it prints\n"
    )
    assert not (tmp_path / "h").exists()


@pytest.mark.parametrize("given", [["--timeout", "1,2"], ["--timeout", " 3 "]])
def test_timeout_flag_takes_what_the_variable_takes(configured, capsys, given):
    assert main(["list", "--format", "csv", *given]) == 0
    assert capsys.readouterr().out.startswith("index_id,name,")


@pytest.mark.parametrize("value", ["1,2,3", "0,2", "a,b"])
def test_timeout_flag_refuses_what_the_variable_refuses(value, capsys):
    with pytest.raises(SystemExit) as info:
        main(["list", "--timeout", value])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.endswith(
        "error: argument --timeout: expected seconds, one number or 'connect,read' (e.g. '10' "
        f"or '5,30'), got {value!r}\n"
    )


@pytest.mark.timeout(120)
def test_list_timeout_against_a_silent_server_bounds_the_whole_call(monkeypatch, capsys):
    # The call's deadline is the timeout: one wait of 2 s, no retries begun past it. Without
    # it, three waits and their backoff took 8-9 s; HANG_S is the ceiling, the figure printed.
    with FaultServer(max_hang=4 * HANG_S) as server:
        server.script("GET", then=hang())
        monkeypatch.setenv("SEARCHKIT_BASE_URL", server.url)
        monkeypatch.setenv("SEARCHKIT_USERNAME", "u")
        monkeypatch.setenv("SEARCHKIT_PASSWORD", "pw-123456")
        with stopwatch("list --timeout 2 against a silent server") as took:
            assert main(["list", "--timeout", "2"]) == 1
        assert server.count("GET") == 1  # no retry begun past the deadline
    err = capsys.readouterr().err
    assert err.startswith(f"searchkit: Could not reach the service at {server.url} to list indexes")
    assert 2.0 <= took.seconds < HANG_S


def test_a_base_url_ending_in_the_api_path_is_stripped(configured, monkeypatch, capsys):
    monkeypatch.setenv("SEARCHKIT_BASE_URL", f"{configured.url}/v2/search/")
    assert main(["list", "--format", "csv"]) == 0
    assert capsys.readouterr().out.count("\n") == 3  # header, docs, tiny


@pytest.mark.timeout(120)
def test_the_try_line_of_serve_can_be_pasted_into_a_shell():
    password = "pw with 'quotes' & $dollars"
    command = [sys.executable, "-m", "searchkit", "serve", "--port", "0", "--demo"]
    process = subprocess.Popen(
        [*command, "--user", f"ann:{password}"], stdout=subprocess.PIPE, text=True
    )
    try:
        banner = process.stdout.readline()
        tried = process.stdout.readline()
        url = banner.split()[4]
        assert tried == (
            f"try: SEARCHKIT_BASE_URL={url} SEARCHKIT_USERNAME=ann "
            "SEARCHKIT_PASSWORD='pw with '\"'\"'quotes'\"'\"' & $dollars' searchkit list\n"
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("SEARCHKIT_")}
        env["PATH"] = f"{os.path.dirname(sys.executable)}{os.pathsep}{env['PATH']}"
        pasted = subprocess.run(
            ["sh", "-c", tried.removeprefix("try: ")],
            env=env,
            capture_output=True,
            text=True,
            timeout=HANG_S,
            check=False,
        )
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=HANG_S)
    assert pasted.returncode == 0, pasted.stderr
    assert "docs-search" in pasted.stdout


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="finds the child in /proc")
def test_sigterm_to_searchkit_lab_stops_jupyterlab_too(tmp_path):
    env = {**os.environ, "BROWSER": "true", "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt")}
    process = subprocess.Popen(
        [sys.executable, "-m", "searchkit", "lab", "--dir", str(tmp_path / "nb")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    lab_pid = None
    try:
        # JupyterLab says where it serves once it is up.
        for line in process.stderr:
            if "http://127.0.0.1:" in line or "http://localhost:" in line:
                break
        children = pathlib.Path(f"/proc/{process.pid}/task/{process.pid}/children")
        (lab_pid,) = [int(p) for p in children.read_text().split()]
        process.send_signal(signal.SIGTERM)
        process.wait(HANG_S)
        lab_left = running(lab_pid)
    finally:
        for pid in (process.pid, lab_pid):
            if pid is not None and running(pid):
                os.kill(pid, signal.SIGKILL)
    assert not lab_left, "JupyterLab still ran after searchkit lab got SIGTERM"
    assert process.returncode == 0
    assert "searchkit: JupyterLab stopped" in process.stderr.read()


def running(pid: int) -> bool:
    """Whether ``pid`` is alive (a zombie waiting to be reaped counts as ended)."""
    try:
        return pathlib.Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except FileNotFoundError:
        return False


# --- a 10,000-character name (issue 29, item 11) ---------------------------------------------


def test_a_huge_name_is_cut_with_an_ellipsis_and_pads_no_row(
    configured, monkeypatch, capsys, tmp_path
):
    # The emulator refuses names over 128 characters; a service sending one is a real server
    # answering the list with it.
    import searchkit as sk
    from tests.index_json import index_json

    huge = "n" * 10_000
    listing = [index_json("docs"), index_json(huge)]
    with FaultServer() as server:
        server.script("GET", then=reply(200, listing))
        monkeypatch.setenv("SEARCHKIT_BASE_URL", server.url)
        assert main(["list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    with configured.client() as client:
        indexes = sk.IndexList.from_json(listing)
        sk.History(tmp_path / "h").collect(client, indexes=indexes, now=configured.now())
    assert main(["forecast", "--store", str(tmp_path / "h")]) == 0
    forecast = capsys.readouterr().out.splitlines()

    assert max(len(line) for line in listed) < 300
    (row,) = [line for line in listed if line.startswith("nnn")]
    assert row.startswith("n" * 99 + "… ")
    assert max(len(line) for line in forecast) < 300
    assert [line[:101] for line in forecast if line.startswith("nnn")] == ["n" * 99 + "… "]
