"""Wall time in tests: a verdict never depends on how busy the machine is.

A test that waits bounds its work by count or by state, never by a stopwatch. Where a
wall-time bound is needed to catch a hang, it is ``HANG_S``: far above what the slowest
honest run takes on a loaded 2-core machine, and far below what the broken behaviour
would take. Figures (rates, durations) are printed for the reader, not asserted.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: A ceiling only a hang (or the behaviour under test being broken) reaches.
HANG_S = 30.0


class Stopwatch:
    """Elapsed seconds of a ``with`` block, to print."""

    seconds: float = 0.0


@contextmanager
def stopwatch(label: str | None = None) -> Iterator[Stopwatch]:
    """Time the block; print ``label: N.NN s`` after it when a label is given."""
    watch = Stopwatch()
    started = time.monotonic()
    try:
        yield watch
    finally:
        watch.seconds = time.monotonic() - started
        if label is not None:
            print(f"\n{label}: {watch.seconds:.2f} s")


@contextmanager
def held(emulator: Any) -> Iterator[None]:
    """Hold every API request of ``emulator`` until the block ends (a delay of minutes).

    What a test looks at while a request is in flight is then there however slowly the
    machine runs; leaving the block releases the held requests at once.
    """
    emulator.delay = 4 * HANG_S
    try:
        yield
    finally:
        emulator.delay = 0
