"""Copying a store in a test: only once no merge of this process is changing it.

A collect that closes a day leaves the day's merge on a thread (history/compaction.py:
merge_later); it deletes the day's small files when it has written the merged one. A copy
made meanwhile can list a file and then not find it ("No such file or directory", CI on
2026-11-27). Readers are guarded against that (they see every point once); a copy is not,
so a test copies a store with :func:`copy_store`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from typing import Any


def copy_store(
    source: str | os.PathLike[str],
    target: str | os.PathLike[str],
    *,
    ignore: Callable[[Any, list[str]], set[str]] | None = None,
) -> Any:
    """``shutil.copytree(source, target, ignore=ignore)`` after the merges this process's
    collects left running have ended."""
    from searchkit.history.compaction import settle_all

    settle_all()
    return shutil.copytree(source, target, ignore=ignore)
