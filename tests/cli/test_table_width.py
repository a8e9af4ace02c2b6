"""``searchkit list`` fits the terminal (issue 28, item 11): 188 columns were printed whatever
its width. Columns are left out by a stated priority (the name, the daily limits, type,
region, id, ...), the name is cut last, a line says what was left out, ``--wide`` shows
every column and ``--columns`` chooses them. Exact output, against the demo emulator.
"""

from __future__ import annotations

import pytest

from searchkit.cli.main import main
from tests.conftest import FIXED_CLOCK

pytestmark = pytest.mark.emulator(demo=True, seed=7, clock=FIXED_CLOCK, shared=True)

AT_80 = """\
name             id        type   region       updates/day  queries/day
docs-search      cbc83b95  payg   eu-west-1      unlimited    unlimited
product-catalog  afc578cf  free   us-central1       10,000       10,000
support-tickets  693544b1  free   eu-west-1         10,000       10,000
news-archive     ed22932e  fixed  us-central1    unlimited    unlimited
code-snippets    f78acd8e  free   us-central1       10,000       10,000
legal-contracts  fad2d1ff  payg   eu-west-1      unlimited    unlimited
8 columns left out to fit 80 columns: created (UTC), vectors, reranks/month,
bandwidth/month, writes/s, queries/s, reads/request, writes/request.
`searchkit list --wide` shows every column, `--columns A,B` the ones named.
"""

AT_120 = """\
name             id        type   region             vectors  reranks/month  updates/day  queries/day  bandwidth/month
docs-search      cbc83b95  payg   eu-west-1    2,000,000,000      unlimited    unlimited    unlimited        unlimited
product-catalog  afc578cf  free   us-central1         10,000              0       10,000       10,000            50 GB
support-tickets  693544b1  free   eu-west-1           10,000              0       10,000       10,000            50 GB
news-archive     ed22932e  fixed  us-central1    100,000,000      1,000,000    unlimited    unlimited        unlimited
code-snippets    f78acd8e  free   us-central1         10,000              0       10,000       10,000            50 GB
legal-contracts  fad2d1ff  payg   eu-west-1    2,000,000,000      unlimited    unlimited    unlimited        unlimited
5 columns left out to fit 120 columns: created (UTC), writes/s, queries/s, reads/request, writes/request.
`searchkit list --wide` shows every column, `--columns A,B` the ones named.
"""  # noqa: E501

ALL = """\
name             id        type   region       created (UTC)           vectors  reranks/month  updates/day  queries/day  bandwidth/month  writes/s  queries/s  reads/request  writes/request
docs-search      cbc83b95  payg   eu-west-1    2025-10-04 10:57  2,000,000,000      unlimited    unlimited    unlimited        unlimited    10,000     10,000          1,000           1,000
product-catalog  afc578cf  free   us-central1  2026-04-03 21:49         10,000              0       10,000       10,000            50 GB     1,000      1,000          1,000           1,000
support-tickets  693544b1  free   eu-west-1    2026-08-15 09:50         10,000              0       10,000       10,000            50 GB     1,000      1,000          1,000           1,000
news-archive     ed22932e  fixed  us-central1  2026-10-10 03:34    100,000,000      1,000,000    unlimited    unlimited        unlimited     5,000      5,000          5,000           5,000
code-snippets    f78acd8e  free   us-central1  2026-11-11 08:34         10,000              0       10,000       10,000            50 GB     1,000      1,000          1,000           1,000
legal-contracts  fad2d1ff  payg   eu-west-1    2026-11-18 10:47  2,000,000,000      unlimited    unlimited    unlimited        unlimited    10,000     10,000          1,000           1,000
"""  # noqa: E501


@pytest.mark.parametrize(("columns", "expected"), [("80", AT_80), ("120", AT_120), ("250", ALL)])
def test_the_table_fits_the_terminal_s_columns(configured, capsys, monkeypatch, columns, expected):
    monkeypatch.setenv("COLUMNS", columns)
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert out == expected
    assert max(len(line) for line in out.splitlines()) <= int(columns)


def test_wide_shows_every_column_whatever_the_terminal(configured, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["list", "--wide"]) == 0
    assert capsys.readouterr().out == ALL


def test_output_to_a_file_or_a_program_gets_every_column(configured, capsys):
    # No COLUMNS, and standard output is no terminal (pytest captures it).
    assert main(["list"]) == 0
    assert capsys.readouterr().out == ALL


def test_columns_chooses_them_in_the_table_s_order_the_name_always_first(
    configured, capsys, monkeypatch
):
    monkeypatch.setenv("COLUMNS", "40")
    assert main(["list", "--columns", "queries/day, region,created"]) == 0
    assert capsys.readouterr().out == (
        "name             region       created (UTC)     queries/day\n"
        "docs-search      eu-west-1    2025-10-04 10:57    unlimited\n"
        "product-catalog  us-central1  2026-04-03 21:49       10,000\n"
        "support-tickets  eu-west-1    2026-08-15 09:50       10,000\n"
        "news-archive     us-central1  2026-10-10 03:34    unlimited\n"
        "code-snippets    us-central1  2026-11-11 08:34       10,000\n"
        "legal-contracts  eu-west-1    2026-11-18 10:47    unlimited\n"
    )


def test_an_unknown_column_is_a_usage_error_naming_them_all(configured, capsys):
    assert main(["list", "--columns", "queries,region"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "searchkit list: no column 'queries': the columns are name, id, type, region, "
        "created (UTC), vectors, reranks/month, updates/day, queries/day, bandwidth/month, "
        "writes/s, queries/s, reads/request, writes/request\n"
    )


@pytest.mark.emulator(seed=7, clock=FIXED_CLOCK)
def test_a_long_name_is_cut_last_and_keeps_the_daily_limits_beside_it(
    configured, capsys, monkeypatch
):
    with configured.client() as client:
        made = client.create_index(
            "quarterly-report-archive-of-the-legal-department", region="eu-west-1", type="free"
        )
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == [
        "name                         id        type  region     updates/day  queries/day",
        f"quarterly-report-archive-o…  {made.id[:8]}  free  eu-west-1       10,000       10,000",
    ]
    assert all(len(line) <= 80 for line in lines)


def test_the_help_states_the_priority_and_both_ways_to_see_more(capsys):
    with pytest.raises(SystemExit):
        main(["list", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert (
        "--wide the table with every column, however wide (default: fit the terminal, "
        "COLUMNS or its width, leaving out columns last in this order: name, queries/day, "
        "updates/day, type, region, id, vectors, bandwidth/month, reranks/month, queries/s, "
        "writes/s, created (UTC), reads/request, writes/request)"
    ) in text
    assert "--columns A,B,... the table with these columns only (the name always)" in text


def test_columns_is_the_terminal_s_width_for_standard_output_only(monkeypatch):
    import io

    from searchkit.cli.table import terminal_columns

    monkeypatch.setenv("COLUMNS", "77")
    assert terminal_columns() == 77  # standard output (pytest's, no terminal) and COLUMNS
    assert terminal_columns(io.StringIO()) is None  # a buffer is read whole by a program
    monkeypatch.delenv("COLUMNS")
    assert terminal_columns() is None


def test_the_help_reads_the_priority_without_loading_the_table_drawing():
    # `searchkit --help` states the priority (above) but draws no table: the text module
    # and what it loads (formats, numbers) cost it ~5% of its start-up (bench/startup.py).
    import json
    import subprocess
    import sys

    probe = (
        "import contextlib, io, json, sys\n"
        "from searchkit.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main(['--help'])\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('searchkit.render'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded == ["searchkit.render", "searchkit.render.table_width"]
