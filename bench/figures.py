"""One line per figure, for ``bench/readme_figures.py`` to put beside the README's.

A bench script prints its figures for people; each one the README quotes it also hands to
:func:`emit`. When the environment names a file in ``SEARCHKIT_BENCH_FIGURES`` (the
runner sets it), :func:`emit` appends a JSON line there::

    {"key": "list.cpu_ratio.1000", "value": 0.5, "unit": "x", "script": "list.py"}

and otherwise does nothing, so a script run by hand prints exactly what it printed before.
The keys are what ``bench/readme_figures.py``'s catalogue names; a script measures the code
that ``import searchkit`` finds (the runner puts a tree first on ``PYTHONPATH`` to measure
another commit), so the same line means the same figure whichever code it measured.

``SEARCHKIT_BENCH_FIGURES`` is inherited by the fresh processes a script starts to measure
in; only the script's own process emits (the one that prints the figure).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ENV = "SEARCHKIT_BENCH_FIGURES"


def emit(key: str, value: float | int | bool | None, unit: str = "s") -> None:
    """Append ``key``'s ``value`` (in ``unit``) to the file ``SEARCHKIT_BENCH_FIGURES`` names."""
    path = os.environ.get(ENV)
    if not path:
        return
    line = {
        "key": key,
        "value": None if value is None else float(value),
        "unit": unit,
        "script": Path(sys.argv[0]).name,
    }
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")
