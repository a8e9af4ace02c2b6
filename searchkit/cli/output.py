"""Standard output that fails loudly: a full disk or a closed pipe is one line, not a trace.

``searchkit forecast > /dev/full`` raised ``OSError: [Errno 28]`` from a ``print`` deep in
the command, and ``searchkit --help > /dev/full`` lost its text and exited 0. :func:`guarded`
wraps ``sys.stdout`` so that a failed write surfaces as :class:`OutputError`, which the
command line turns into one error line and exit 1 (a closed pipe, ``| head``, stays exit 0:
the reader wanted no more).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO

__all__ = ["OutputError", "guarded", "silence"]


class OutputError(Exception):
    """Writing the command's output to standard output failed (not a closed pipe)."""

    def __init__(self, cause: OSError) -> None:
        super().__init__(cause.strerror or str(cause))
        self.cause = cause


class _Guarded:
    """``sys.stdout`` whose write and flush errors are :class:`OutputError`."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(exc) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def guarded() -> Iterator[None]:
    """Route the command's output through :class:`_Guarded`, flushing it at the end."""
    real = sys.stdout
    if real is None:
        yield
        return
    sys.stdout = _Guarded(real)
    try:
        try:
            yield
        except SystemExit:  # argparse's --help and usage errors: their text must get out too
            sys.stdout.flush()
            raise
        sys.stdout.flush()
    finally:
        sys.stdout = real


def silence() -> None:
    """Point standard output at the null device, so the interpreter's own flush at exit
    cannot fail again (and print "Exception ignored") with what is still buffered."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
