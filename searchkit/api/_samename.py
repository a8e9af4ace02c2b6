"""One name, one index: creates of one name wait for each other, and are checked after.

``create_index`` refuses a name in use by listing first, but a list then a create is not
atomic: two callers can both find the name free and both create. Within a process the
list-create pair of one name (per service and account) holds a lock, so the second caller
lists after the first created and is refused (or given the index, ``if_exists="return"``).
Across processes nothing can be locked: the client lists once more after creating and warns
(:class:`~searchkit.errors.DuplicateIndexWarning`) naming both ids when another index of
that name is listed, so a duplicate is never silent.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence

from searchkit.errors import DuplicateIndexWarning
from searchkit.model.index import SearchIndex

__all__ = ["duplicate_warning", "one_create_at_a_time"]

_GUARD = threading.Lock()
# One lock per (service, account, name) ever created in this process: a few bytes per name.
_LOCKS: dict[tuple[str, str, str], threading.Lock] = {}


@contextlib.contextmanager
def one_create_at_a_time(base_url: str, username: str, name: str) -> Iterator[None]:
    """Hold the process-wide lock of one index name of one account while creating it."""
    key = (base_url, username, name)
    with _GUARD:
        lock = _LOCKS.setdefault(key, threading.Lock())
    with lock:
        yield


def duplicate_warning(
    created: SearchIndex, listed: Sequence[SearchIndex]
) -> DuplicateIndexWarning | None:
    """Return the warning for indexes of ``created``'s name listed besides it, if any.

    Called with the list made right after creating, when the list made before showed no
    index of that name: any other of that name appeared while this call ran.
    """
    others = [i for i in listed if i.name == created.name and i.id != created.id]
    if not others:
        return None
    ids = ", ".join(str(i.id) for i in others)
    return DuplicateIndexWarning(
        f"created index {created.name!r} ({created.id}), but {len(others)} other index(es) of "
        f"that name ({ids}) appeared while it was being created (another process created "
        "the same name at the same time): the name now has "
        f"{len(others) + 1} indexes; delete the ones you do not want",
        created,
        others,
    )
