"""The history tests' emulator: the demo set at a fixed noon, two hours of points a list.

``emulator`` and ``client`` are tests/conftest.py's; here the emulator has these options.
``across_midnight`` is a store collected every 10 minutes from 23:00 to 01:00 by that
emulator: collected once per worker (``made_once``), copied for each test.
"""

from __future__ import annotations

import datetime as dt
import os
import pathlib
from collections.abc import Callable
from typing import Any

import pytest

NOON = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)
HOUR = 3600

#: The history tests' emulator: the demo set at a fixed noon, two hours of points a list.
EMULATOR_OPTIONS = {"demo": True, "seed": 3, "clock": NOON, "window_minutes": 120}

#: The collects of :func:`collect_across_midnight`: every 10 minutes from 23:00 to 01:00.
ROUNDS, EVERY = 13, 600
#: How far :func:`collect_across_midnight` moves the emulator's clock: to 01:10.
ACROSS_MIDNIGHT_S = 11 * HOUR + ROUNDS * EVERY


@pytest.fixture
def emulator_options():
    """The demo set at a fixed noon, two hours of points a list."""
    return dict(EMULATOR_OPTIONS)


def collect_across_midnight(hist: Any, emu: Any, client: Any, **kw: Any) -> None:
    """Collect every 10 minutes from 23:00 to 01:00, as `collect --every 10m` would
    (``kw`` goes to each collect, e.g. ``compact=False``); the clock ends at 01:10."""
    emu.advance(11 * HOUR)  # 23:00
    for _ in range(ROUNDS):
        hist.collect(client, now=emu.now(), **kw)
        emu.advance(EVERY)


@pytest.fixture
def across_midnight(tmp_path, made_once) -> Callable[..., Any]:
    """``across_midnight(root=tmp_path / "h", compact=True, emulator=None)``: a History at ``root``
    holding what :func:`collect_across_midnight` collects (13 rounds of the demo set: its
    files, points and rollups), made once per worker and copied. Given ``emulator``, its clock
    is moved to where those collects leave it (a minute's value is the same whenever it is
    listed), so the test's next collect follows on."""
    from searchkit.emulator import Emulator
    from searchkit.history.usage_history import History

    def collected(compact: bool) -> Callable[[pathlib.Path], None]:
        def make(folder: pathlib.Path) -> None:
            with Emulator(**EMULATOR_OPTIONS) as emu, emu.client(max_retries=0) as client:
                collect_across_midnight(History(folder), emu, client, compact=compact)

        return make

    def copy(
        root: pathlib.Path | None = None, *, compact: bool = True, emulator: Any = None
    ) -> Any:
        root = tmp_path / "h" if root is None else root
        made_once(f"across-midnight-compact-{compact}", collected(compact), root)
        if emulator is not None:
            emulator.advance(ACROSS_MIDNIGHT_S)
        return History(root)

    return copy


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
