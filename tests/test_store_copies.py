"""A test copies a store through tests/stores.py's ``copy_store`` (which first waits for
the merges a collect left on threads), never with ``shutil.copytree`` directly: CI failed
once on a copy made while a closed day was being merged."""

from __future__ import annotations

import ast
import pathlib

TESTS = pathlib.Path(__file__).resolve().parent
#: copy_store itself, and made_once, which copies a folder it settled when it made it.
ALLOWED = {"tests/stores.py", "tests/conftest.py"}


def copytree_calls(path: pathlib.Path) -> list[int]:
    """The lines where ``path`` calls ``copytree`` (as ``shutil.copytree`` or by name)."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and ast.unparse(node.func).rpartition(".")[2] == "copytree"
    ]


def test_the_finder_sees_a_copytree_call(tmp_path):
    (tmp_path / "t.py").write_text("import shutil\n\nshutil.copytree('a', 'b')\n")
    assert copytree_calls(tmp_path / "t.py") == [3]


def test_no_test_copies_a_store_but_through_copy_store():
    calls = [
        f"{name}:{line}"
        for path in sorted(TESTS.rglob("*.py"))
        if (name := str(path.relative_to(TESTS.parent))) not in ALLOWED
        for line in copytree_calls(path)
    ]
    assert calls == []
