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
