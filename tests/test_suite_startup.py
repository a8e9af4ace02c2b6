"""The suite's start-up: every pytest-xdist worker imports every test module while it collects
(``make test-fast`` starts four), so a library only some tests need is imported where they use
it, not at a test module's top: moto and boto3 (the S3 server, about 0.5 s of CPU a worker) by
the ``s3_server``/``s3_endpoint`` fixtures (tests/conftest.py), duckdb inside its tests."""

from __future__ import annotations

import ast
import pathlib

TESTS = pathlib.Path(__file__).resolve().parent
#: Imported by the tests that use them, never at a test module's top.
LATE = ("moto", "boto3", "duckdb")


def imported_at_the_top(path: pathlib.Path) -> list[str]:
    """The LATE libraries ``path`` imports (or pytest.importorskip's) when it is imported."""
    found = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif (
            isinstance(node, ast.Expr | ast.Assign)
            and isinstance(node.value, ast.Call)
            and ast.unparse(node.value.func) == "pytest.importorskip"
            and node.value.args
            and isinstance(node.value.args[0], ast.Constant)
        ):
            names = [str(node.value.args[0].value)]
        found += [
            f"{path.relative_to(TESTS.parent)}:{node.lineno} {name}"
            for name in names
            if name.partition(".")[0] in LATE
        ]
    return found


def test_no_test_module_imports_the_s3_server_or_duckdb_while_collecting():
    modules = [p for p in sorted(TESTS.rglob("*.py")) if "browser" not in p.parts]
    assert [hit for path in modules for hit in imported_at_the_top(path)] == []


def test_a_top_level_import_or_importorskip_is_found(tmp_path, monkeypatch):
    module = tmp_path / "tests" / "test_x.py"
    module.parent.mkdir()
    module.write_text(
        "import pytest\nimport boto3\nfrom moto.server import ThreadedMotoServer\n"
        'pytest.importorskip("moto")\nduckdb = pytest.importorskip("duckdb")\n'
        "def test():\n    import duckdb\n"
    )
    monkeypatch.setattr(f"{__name__}.TESTS", tmp_path / "tests")
    assert imported_at_the_top(module) == [
        "tests/test_x.py:2 boto3",
        "tests/test_x.py:3 moto.server",
        "tests/test_x.py:4 moto",
        "tests/test_x.py:5 duckdb",
    ]
