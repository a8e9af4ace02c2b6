"""The counting rules are written once: in ``searchkit/frames/counting.py`` and nowhere else.

Every module of the package is parsed (nothing imported). A name of the rules may be
imported anywhere, but defined (a function, a class, an assignment) only in the counting
module; and the rules' arithmetic is not written out again under another name: no
``Timedelta(minutes=1)`` (the default interval), no hour or day written in nanoseconds, no
``isinf(v) | (v < 0)`` (the invalid-value rule), no instant put in its hour or quarter-hour
by hand (``(t - start) // HOUR_NS``, ``HOUR_NS // 4``), no values summed into bins by hand
(``np.bincount(..., weights=values)``, ``np.add.at(sums, bins, clean)``) and no median's
middle ranks (``(n - 1) // 2``).
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
    "add_binned",
    "bin_slots",
    "binned",
    "check_value_unit",
    "clean_values",
    "index_codes",
    "index_intervals",
    "interval_seconds",
    "invalid_values",
    "median_ranks",
    "median_spacing",
    "midpoint",
    "one_per_instant",
    "run_sums",
    "spacings",
    "sums_in_order",
    "tie_key",
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


def _is_bin_by_hand(node: ast.AST) -> bool:
    """``x // HOUR_NS``, ``x // QUARTER_NS`` or ``HOUR_NS // 4``: a bin of an instant."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv)):
        return False
    names = {getattr(side, "id", getattr(side, "attr", "")) for side in (node.left, node.right)}
    return bool(names & {"HOUR_NS", "QUARTER_NS"})


def _is_sum_by_hand(node: ast.AST) -> bool:
    """Values summed into bins: ``bincount(..., weights=<values>)`` or ``add.at(_, _,
    <values>)``, the values named as such (``clean``, ``values``, ``nan_to_num(v)``)."""
    if not isinstance(node, ast.Call):
        return False
    name = getattr(node.func, "attr", getattr(node.func, "id", ""))
    if name == "bincount":
        summed = [k.value for k in node.keywords if k.arg == "weights"]
    elif name == "at" and getattr(node.func, "value", None) is not None:
        owner = node.func.value  # type: ignore[attr-defined]
        summed = node.args[2:3] if getattr(owner, "attr", "") == "add" else []
    else:
        return False
    text = " ".join(ast.unparse(value) for value in summed)
    return any(word in text for word in ("clean", "value", "nan_to_num"))


def _is_tie_break(node: ast.AST) -> bool:
    """``where(isnan(v), -inf, v)``: the tie-break of one point per instant, written again."""
    if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "where"):
        return False
    text = ast.unparse(node).replace(" ", "")
    return "isnan(" in text and "-np.inf" in text


def _is_median_rank(node: ast.AST) -> bool:
    """``(n - 1) // 2``: the lower middle rank of a median, written again."""
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.FloorDiv)
        and isinstance(node.right, ast.Constant)
        and node.right.value == 2
        and isinstance(node.left, ast.BinOp)
        and isinstance(node.left.op, ast.Sub)
        and isinstance(node.left.right, ast.Constant)
        and node.left.right.value == 1
    )


def _exported(tree: ast.Module) -> set[str]:
    """The names a module's ``__all__`` lists."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            getattr(target, "id", "") == "__all__" for target in node.targets
        ):
            return set(ast.literal_eval(node.value))
    return set()


def findings(root: pathlib.Path = PACKAGE) -> list[str]:
    found = []
    for name, path in module_names(root).items():
        if name == HOME.replace("searchkit", root.name, 1):
            continue
        tree = parsed(path)
        for rule in sorted(_defined(tree) & RULES):
            found.append(f"{name} defines {rule}")
        for rule in sorted(_exported(tree) & RULES):  # a second name for it: import it
            found.append(f"{name} exports {rule}")
        for node in ast.walk(tree):
            for check, what in (
                (_is_minute, "the default interval"),
                (_is_hour_in_ns, "an hour or a day in nanoseconds"),
                (_is_invalid_rule, "the invalid-value rule"),
                (_is_bin_by_hand, "an hour or quarter-hour bin by hand"),
                (_is_sum_by_hand, "values summed into bins by hand"),
                (_is_median_rank, "a median's middle rank"),
                (_is_tie_break, "the tie-break of one point per instant"),
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
        "def hours(t, start):\n    return (t - start) // HOUR_NS\n"
        "def quarters(n):\n    return n * (HOUR_NS // 4)\n"
        "def sums(codes, clean, n):\n    return np.bincount(codes, weights=clean, minlength=n)\n"
        "def extend(sums, flat, values):\n    np.add.at(sums, flat, values)\n"
        "def spans(inside, lo):\n    np.add.at(inside, lo, 1)\n"  # a count, not a sum: fine
        "def middle(total):\n    return (total - 1) // 2\n"
        "def key(v):\n    return np.where(np.isnan(v), -np.inf, v)\n"
    )
    (package / "bins.py").write_text(
        "from pkg.frames.counting import HOUR_NS\n__all__ = ['HOUR_NS', 'Bins']\n"
    )
    assert findings(package) == [
        "pkg.bins exports HOUR_NS",
        "pkg.usage defines invalid_values",
        "pkg.usage:11 writes an hour or quarter-hour bin by hand again",
        "pkg.usage:13 writes values summed into bins by hand again",
        "pkg.usage:15 writes values summed into bins by hand again",
        "pkg.usage:19 writes a median's middle rank again",
        "pkg.usage:21 writes the tie-break of one point per instant again",
        "pkg.usage:4 writes the default interval again",
        "pkg.usage:6 writes the invalid-value rule again",
        "pkg.usage:7 writes an hour or a day in nanoseconds again",
        "pkg.usage:9 writes an hour or quarter-hour bin by hand again",
    ]
