"""Locations that cannot hold a history: refused at once, in one line naming what is wrong."""

from __future__ import annotations

import pytest

import searchkit as sk
from searchkit.cli.main import main
from searchkit.history.usage_history import History
from tests.conftest import FIXED_CLOCK

# ``configured`` (tests/conftest.py) points the environment at this emulator.
pytestmark = pytest.mark.emulator(seed=7, clock=FIXED_CLOCK)


def test_an_empty_location_is_refused_not_the_current_folder(
    configured, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(sk.ValidationError) as info:
        History("")
    assert str(info.value) == (
        "location is empty: give a folder, or an s3://BUCKET/PREFIX URL (an empty location "
        "would write into the current folder)"
    )
    # On the command line it is a usage error: exit 2, argparse's line naming the option.
    with pytest.raises(SystemExit) as exit_info:
        main(["collect", "--store", ""])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "searchkit collect: error: argument --store: location is empty: give a folder, or an "
        "s3://BUCKET/PREFIX URL (an empty location would write into the current folder)"
    )
    assert list(tmp_path.iterdir()) == []


def test_an_s3_location_without_a_bucket_is_a_usage_error(configured, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["collect", "--store", "s3://"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "searchkit collect: error: argument --store: location 's3://' names no bucket: use "
        "s3://BUCKET/PREFIX"
    )


@pytest.mark.parametrize("location", ["gs://b/p", "hdfs://host/p", "ftp://host/p"])
def test_an_unsupported_scheme_fails_at_once(location):
    with pytest.raises(sk.ValidationError) as info:
        History(location)
    scheme = location.partition("://")[0]
    assert str(info.value) == (
        f"location {location!r}: the scheme '{scheme}://' is not supported; give a folder, "
        "file:// or s3://BUCKET/PREFIX, or pass filesystem= (a pyarrow FileSystem) for "
        "another store"
    )


def test_history_of_a_missing_folder_says_so_and_exits_1(tmp_path, capsys):
    missing = tmp_path / "never-collected"
    assert main(["history", "--store", str(missing)]) == 1
    assert capsys.readouterr().err == (
        f"searchkit: no history at {str(missing)!r}: nothing is there (collect into it "
        "first). [HistoryError]\n"
    )


def test_history_of_a_regular_file_says_so_and_exits_1(tmp_path, capsys):
    regular = tmp_path / "notes.txt"
    regular.write_text("not a history")
    assert main(["history", "--store", str(regular)]) == 1
    assert capsys.readouterr().err == (
        f"searchkit: no history at {str(regular)!r}: it is a file, not a history folder. "
        "[HistoryError]\n"
    )
    assert regular.read_text() == "not a history"


@pytest.mark.parametrize(
    ("location", "shown"),
    [
        ("file://user:sE@cRt9@localhost/tmp/usage", "file://***@localhost/tmp/usage"),
        ("file://TOKENONLY42@localhost/tmp/usage", "file://***@localhost/tmp/usage"),
    ],
)
def test_credentials_in_a_local_location_are_masked_in_the_error(location, shown):
    from searchkit.errors import HistoryError

    with pytest.raises(HistoryError) as info:
        History(location)
    assert shown in str(info.value)
    assert "cRt9" not in str(info.value) and "TOKENONLY42" not in str(info.value)
