"""A CSV read back as written: every float to the last bit, at every pandas searchkit supports.

searchkit writes a frame's floats as ``repr`` does (``to_csv``: 17 significant digits where
the shortest text needs them, ``10883.400000000001``). pandas 3.0's own parsers (the C
engine's default "high" precision, and the python engine) read some such texts one unit
in the last place off (that one as ``10883.4``: about one random float in seven); its
round-trip parser reads each exactly, and from pandas 3.1 the default does (3.1 deprecates
``float_precision``). A test that compares figures read back from a CSV to the bit reads
them with :func:`read_csv_exact`, or its verdict is the parser's, not searchkit's.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

#: The first pandas whose default CSV parser reads every float exactly.
EXACT_DEFAULT = (3, 1)


def read_csv_exact(source: Any, **options: Any) -> pd.DataFrame:
    """:func:`pandas.read_csv` of ``source`` with ``options``, each float read exactly."""
    if _version(pd.__version__) < EXACT_DEFAULT:
        options.setdefault("float_precision", "round_trip")
    return pd.read_csv(source, **options)


def _version(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int("".join(c for c in minor if c.isdigit()) or 0)
