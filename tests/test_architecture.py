"""ARCHITECTURE.md lists every module of the package, under its own package, and no other.

The module tree at the top of ARCHITECTURE.md says each module's one job. A module added,
renamed or removed without the tree following makes the map lie; these tests read the tree
(the first fenced block) and compare it with the files.
"""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "searchkit"
_SECTION = re.compile(r"^(\w+)/\s")
_MODULE = re.compile(r"\b(_{0,2}\w+\.py)\b")


def listed_modules() -> set[str]:
    """Return the modules the tree names, as paths relative to the package."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    tree = text.split("```", 2)[1]
    listed: set[str] = set()
    package = ""
    for line in tree.splitlines():
        if line.strip() == "searchkit/":
            continue
        heading = _SECTION.match(line)
        if heading:
            package = heading.group(1) + "/"
            line = line[heading.end() :]
        listed.update(package + name for name in _MODULE.findall(line))
    return listed


def package_modules() -> set[str]:
    return {
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py" or path.parent == PACKAGE
    }


def test_every_module_is_in_the_architecture_tree():
    assert sorted(package_modules() - listed_modules()) == []


def test_the_architecture_tree_names_no_module_that_does_not_exist():
    assert sorted(listed_modules() - package_modules()) == []


def test_the_layer_table_is_the_import_graph_test_s():
    # "The table is LAYERS in tests/test_import_graph.py; change both together": a rule the
    # document states holds only if a test keeps the two equal (issue 26 item 8).
    from tests.test_import_graph import BOTTOM, LAYERS

    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("## Who may import whom", 1)[1].split("\n\n", 2)[1]
    rows = [line.strip().strip("|").split("|") for line in section.splitlines()]
    header, body = rows[0], [r for r in rows[2:] if len(r) == 2]
    assert set(re.findall(r"`(\w+)`", header[1])) == BOTTOM
    table: dict[str, set[str]] = {}
    for layers, allowed in body:
        names = [name.strip() for name in layers.split(",")]
        for name in names:
            if allowed.strip() == "nothing":
                table[name] = set()
            elif allowed.strip() == "everything":
                table[name] = set(LAYERS) - {name}
            else:
                table[name] = set(re.findall(r"\w+", allowed.split(" (")[0]))
    assert table == LAYERS
