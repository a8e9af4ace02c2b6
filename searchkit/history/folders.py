"""Listing a local day folder so that a compaction replacing its files is never missed.

A local listing reads the folder's names (one ``readdir``), then each file's size and time
(a ``stat`` per name). pyarrow's own listing (``LocalFileSystem.get_file_info`` with a
``FileSelector``) does the same and leaves out, without a word, a name gone by its stat.
A compaction renames its merged file in and then deletes the files it replaces: a listing
whose ``readdir`` came just before the rename and whose stats came after the deletes
listed none of them, an empty day to its reader (0 points, 2026-11-27: a reader beside
``compact()`` under load). Here a data file named by the ``readdir`` and gone by its stat
means the folder changed under the listing: it is listed again, and a folder that keeps
changing is a :class:`~searchkit.errors.HistoryError` (never a short listing).

One ``readdir`` of a folder is one snapshot of it while its entries fit one read (a few
hundred names; the kernel holds the folder meanwhile); a larger folder is read in several,
and :func:`searchkit.history.reader.read` lists it again after reading it.
"""

from __future__ import annotations

import os

import pyarrow.fs as pafs

from searchkit.errors import HistoryError

__all__ = ["day_files"]


def day_files(
    fs: pafs.FileSystem,
    folder: str,
    *,
    attempts: int,
    location: str,
) -> tuple[list[pafs.FileInfo], list[str]]:
    """The :class:`pyarrow.fs.FileInfo` of each finished data file in the local ``folder``
    (``*.parquet``, not a writer's temporary ``.``/``_`` name), by path (none when the
    folder is gone), and the names of the links among them, left out (never followed out
    of the store). Each file's stat goes through ``fs`` (the store's filesystem).

    Raises:
        HistoryError: The folder changed under each of ``attempts`` listings, or cannot
            be read.
    """
    for _ in range(attempts):
        names: list[str] = []
        links: list[str] = []
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    name = entry.name
                    if not name.endswith(".parquet") or name.startswith((".", "_")):
                        continue  # a temporary file of a writer still at work, or not ours
                    (links if entry.is_symlink() else names).append(name)
        except (FileNotFoundError, NotADirectoryError):
            return [], []
        except OSError as exc:
            raise HistoryError(f"cannot list the history at {location!r}: {exc}") from exc
        infos = fs.get_file_info([f"{folder}/{name}" for name in sorted(names)])
        if all(info.type != pafs.FileType.NotFound for info in infos):
            return [info for info in infos if info.type == pafs.FileType.File], sorted(links)
        # A file read by name was gone by its stat: replaced (by a compaction), so its
        # replacement may have come after the names were read. Read them again.
    raise HistoryError(
        f"the history at {location!r} kept changing while it was listed ({folder}); "
        "nothing is lost: try again"
    )
