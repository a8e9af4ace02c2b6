"""The history tests' emulator: the demo set at a fixed noon, two hours of points a list.

``emulator`` and ``client`` are tests/conftest.py's; here the emulator has these options.
"""

from __future__ import annotations

import datetime as dt
import os
import pathlib

import pytest

NOON = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)


@pytest.fixture
def emulator_options():
    """The demo set at a fixed noon, two hours of points a list."""
    return {"demo": True, "seed": 3, "clock": NOON, "window_minutes": 120}


@pytest.fixture
def emu(emulator):
    """The history tests' name for ``emulator``."""
    return emulator


def data_files(root: pathlib.Path, kind: str = "throughput") -> list[pathlib.Path]:
    """The Parquet files of one kind in a history folder, in path order."""
    return sorted((root / kind).glob("day=*/*.parquet"))


def stored_files(root: pathlib.Path) -> list[pathlib.Path]:
    """Every regular file under a history folder (links not followed), in path order."""
    return sorted(
        pathlib.Path(folder, name)
        for folder, _, names in os.walk(root)
        for name in names
        if pathlib.Path(folder, name).is_file() and not pathlib.Path(folder, name).is_symlink()
    )
