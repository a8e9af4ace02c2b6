"""The package's import graph has no circles.

Every module of ``searchkit`` is parsed (``ast``, nothing is imported) and each import it
makes when it is loaded becomes an edge: statements at module level, in class bodies and in
``if``/``try``/``with`` blocks count; imports under ``if TYPE_CHECKING:`` never do.
``from package import name`` is an edge to the submodule when ``name`` is one, else to the
package. A circle among these load-time edges means a module can see a half-initialised
other module depending on which is imported first: there must be none.

Imports deferred into functions hide a circle from the interpreter but not from a reader:
two modules that need each other are one idea in two places. There must be none of those
either.
"""

from __future__ import annotations

import ast
import pathlib
from collections.abc import Iterator

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "searchkit"


def module_names(root: pathlib.Path = PACKAGE) -> dict[str, pathlib.Path]:
    """Return every module of the package by dotted name (packages by their own name)."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _deferred_too(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import of the module, also inside functions, except under TYPE_CHECKING."""
    yield from _load_time_imports(body, functions=True)


def _load_time_imports(
    body: list[ast.stmt], *, functions: bool = False
) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _load_time_imports(node.body, functions=functions)
            yield from _load_time_imports(node.orelse, functions=functions)
        elif isinstance(node, ast.Try):
            for block in (node.body, *(h.body for h in node.handlers), node.orelse):
                yield from _load_time_imports(block, functions=functions)
            yield from _load_time_imports(node.finalbody, functions=functions)
        elif isinstance(node, ast.With | ast.ClassDef):
            yield from _load_time_imports(node.body, functions=functions)
        elif functions:
            # Function bodies (run later, when called), loops and other compound statements.
            for field in ("body", "orelse", "finalbody"):
                yield from _load_time_imports(getattr(node, field, []), functions=functions)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def lazy_exports(root: pathlib.Path = PACKAGE) -> dict[str, str]:
    """Return the ``_EXPORTS`` table of the package's ``__init__`` (name -> module), if any."""
    tree = ast.parse((root / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        if isinstance(target, ast.Name) and target.id == "_EXPORTS":
            return ast.literal_eval(node.value)
    return {}


def import_graph(root: pathlib.Path = PACKAGE, *, deferred: bool = False) -> dict[str, set[str]]:
    """Return each module's load-time imports (with ``deferred``, all) of its siblings."""
    modules = module_names(root)
    lazy = {f"{root.name}.{name}": module for name, module in lazy_exports(root).items()}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in (_deferred_too if deferred else _load_time_imports)(tree.body):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                source = _resolve(name, path.name == "__init__.py", node)
                targets = [
                    f"{source}.{alias.name}"
                    if f"{source}.{alias.name}" in modules
                    else lazy.get(f"{source}.{alias.name}", source)
                    for alias in node.names
                ]
            graph[name] |= {t for t in targets if t in modules and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Return one circle per strongly connected group of two or more modules (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_the_package_has_no_import_circle():
    found = cycles(import_graph())
    assert found == [], "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_no_circle_even_through_imports_deferred_into_functions():
    found = cycles(import_graph(deferred=True))
    assert found == [], "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_every_module_is_in_the_graph():
    graph = import_graph()
    for name in (
        "searchkit",
        "searchkit.cli.main",
        "searchkit.render.html",
        "searchkit.emulator.server",
    ):
        assert name in graph
    assert "searchkit.errors" in graph["searchkit.model.index"]
    assert lazy_exports()["Client"] == "searchkit.api.client"


def test_a_circle_is_found(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text('_EXPORTS = {"Thing": "pkg.f"}\n')
    (package / "a.py").write_text("from pkg import b\n")
    (package / "b.py").write_text("import pkg.sub.c\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "c.py").write_text("from ..a import thing\n")
    (package / "d.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pkg import e\n"
        "def later():\n    from pkg import e\n"
    )
    (package / "e.py").write_text("from pkg.d import later\n")
    # A lazily exported name loads its module: f -> g -> (pkg.Thing is f) f is a circle.
    (package / "f.py").write_text("from pkg.g import other\nThing = 1\n")
    (package / "g.py").write_text("from pkg import Thing\nother = 2\n")
    graph = import_graph(package)
    assert graph["pkg.a"] == {"pkg.b"}
    assert graph["pkg.sub.c"] == {"pkg.a"}
    assert graph["pkg.d"] == set()  # TYPE_CHECKING and function bodies do not count
    assert graph["pkg.g"] == {"pkg.f"}
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.sub.c"], ["pkg.f", "pkg.g"]]
    everything = import_graph(package, deferred=True)
    assert everything["pkg.d"] == {"pkg.e"}  # the function's import, not TYPE_CHECKING's
    assert cycles(everything) == [
        ["pkg.a", "pkg.b", "pkg.sub.c"],
        ["pkg.d", "pkg.e"],
        ["pkg.f", "pkg.g"],
    ]
