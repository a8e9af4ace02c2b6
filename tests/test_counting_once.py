"""The counting rules are written once: in ``searchkit/frames/counting.py`` and nowhere else.

Every module of the package is parsed (nothing imported). A name of the rules may be
imported anywhere, but defined (a function, a class, an assignment) only in the counting
module; and the rules' arithmetic is not written out again under another name: no
``Timedelta(minutes=1)`` (the default interval), no hour or day written in nanoseconds, no
``isinf(v) | (v < 0)`` (the invalid-value rule).
"""

from __future__ import annotations

import ast
import pathlib

from tests.test_import_graph import PACKAGE, module_names, parsed

HOME = "searchkit.frames.counting"
#: The rules' names (issue 26 item 1): defined in HOME only.
RULES = {
    "DAY_NS",
    "DEFAULT_INTERVAL",
    "DEFAULT_SECONDS",
    "HOURS",
    "HOUR_NS",
    "QUARTERS",
    "QUARTER_NS",
    "VALUE_UNITS",
    "ValueUnit",
    "binned",
    "check_value_unit",
    "clean_values",
    "index_codes",
    "index_intervals",
    "interval_seconds",
    "invalid_values",
    "median_spacing",
    "one_per_instant",
    "run_sums",
    "unit_scales",
}


def _defined(tree: ast.Module) -> set[str]:
    """Names a module defines at any depth (functions, classes, assigned names)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def _is_minute(node: ast.AST) -> bool:
    """``Timedelta(minutes=1)`` in any spelling of the call."""
    return (
        isinstance(node, ast.Call)
        and getattr(node.func, "attr", getattr(node.func, "id", "")) == "Timedelta"
        and any(
            k.arg == "minutes" and isinstance(k.value, ast.Constant) and k.value.value == 1
            for k in node.keywords
        )
    )


def _is_hour_in_ns(node: ast.AST) -> bool:
    """``3_600 * 10**9`` or ``86_400 * 10**9`` (an hour or a day in nanoseconds)."""
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Mult)
        and isinstance(node.left, ast.Constant)
        and node.left.value in (3_600, 86_400)
        and ast.unparse(node.right).replace(" ", "") == "10**9"
    ) or (isinstance(node, ast.Constant) and node.value in (3_600 * 10**9, 86_400 * 10**9))


def _is_invalid_rule(node: ast.AST) -> bool:
    """``isinf(v) | (v < 0)``: the invalid-value rule written out."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr)):
        return False
    text = ast.unparse(node).replace(" ", "")
    return "isinf(" in text and "<0" in text


def findings(root: pathlib.Path = PACKAGE) -> list[str]:
    found = []
    for name, path in module_names(root).items():
        if name == HOME.replace("searchkit", root.name, 1):
            continue
        tree = parsed(path)
        for rule in sorted(_defined(tree) & RULES):
            found.append(f"{name} defines {rule}")
        for node in ast.walk(tree):
            for check, what in (
                (_is_minute, "the default interval"),
                (_is_hour_in_ns, "an hour or a day in nanoseconds"),
                (_is_invalid_rule, "the invalid-value rule"),
            ):
                if check(node):
                    found.append(f"{name}:{node.lineno} writes {what} again")  # type: ignore[attr-defined]
    return sorted(found)


def test_the_counting_rules_are_defined_once():
    assert findings() == []


def test_the_counting_module_defines_every_rule():
    tree = parsed(module_names()[HOME])
    assert _defined(tree) >= RULES


def test_a_second_definition_is_found(tmp_path):
    package = tmp_path / "pkg"
    (package / "frames").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "frames" / "__init__.py").write_text("")
    (package / "frames" / "counting.py").write_text("HOUR_NS = 3_600 * 10**9\n")
    (package / "usage.py").write_text(
        "import numpy as np\nimport pandas as pd\n"
        "from pkg.frames.counting import HOUR_NS\n"  # an import is no definition
        "_M = pd.Timedelta(minutes=1)\n"
        "def invalid_values(v):\n    return np.isinf(v) | (v < 0)\n"
        "DAY = 86_400 * 10**9\n"
    )
    assert findings(package) == [
        "pkg.usage defines invalid_values",
        "pkg.usage:4 writes the default interval again",
        "pkg.usage:6 writes the invalid-value rule again",
        "pkg.usage:7 writes an hour or a day in nanoseconds again",
    ]
