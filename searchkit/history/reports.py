"""What a collect stored and what a history holds, as reports for people."""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import pandas as pd

from searchkit._units import binary_size
from searchkit.history.gaps import Gap
from searchkit.model.hooks import notebook_html

__all__ = ["CollectSummary", "HistoryInfo", "StoredFiles"]


class StoredFiles(NamedTuple):
    """How many files of one kind a history holds, and the bytes they take."""

    files: int
    bytes: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class CollectSummary:
    """What one :meth:`History.collect` stored and noticed."""

    collected_at: pd.Timestamp
    indexes: int
    new_points: int
    points_by_index: dict[str, int]
    gaps: tuple[Gap, ...] = ()
    warnings: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    #: Points left out per index name: no id, a time missing, unreadable or out of range, or
    #: a negative or infinite value (each also named in ``warnings``).
    skipped_by_index: dict[str, int] = dataclasses.field(default_factory=dict)

    @property
    def skipped_points(self) -> int:
        """How many listed points were left out (see ``skipped_by_index``)."""
        return sum(self.skipped_by_index.values())

    def _skipped_text(self) -> str:
        return f" ({self.skipped_points:,} skipped)" if self.skipped_points else ""

    @property
    def problems(self) -> list[str]:
        """Gaps and warnings as sentences."""
        return [str(gap) for gap in self.gaps] + list(self.warnings)

    def __repr__(self) -> str:
        head = (
            f"CollectSummary({self.collected_at:%Y-%m-%d %H:%M:%S} UTC: {self.indexes} indexes, "
            f"{self.new_points:,} new points{self._skipped_text()}, {len(self.gaps)} gaps, "
            f"{len(self.warnings)} warnings)"
        )
        return "\n".join([head, *(f"  - {line}" for line in self.problems)])

    def _repr_html_(self) -> str | None:
        return notebook_html(self)


@dataclasses.dataclass(frozen=True, kw_only=True)
class HistoryInfo:
    """A summary of what a history holds (``searchkit history`` prints it).

    ``files`` and ``bytes`` count every file under the location; ``by_kind`` splits them
    into ``throughput``, ``limits`` and ``rollups`` (the data files readers read) and
    ``other`` (the record of each index's newest point, ``_newest.parquet``, and anything
    else stored there, named in ``other_files``).
    """

    location: str
    indexes: int
    points: int
    first: pd.Timestamp | None
    last: pd.Timestamp | None
    files: int
    bytes: int
    gaps: tuple[Gap, ...]
    by_kind: dict[str, StoredFiles] = dataclasses.field(default_factory=dict)
    other_files: tuple[str, ...] = ()

    def __str__(self) -> str:
        span = (
            f"{self.first:%Y-%m-%d %H:%M} .. {self.last:%Y-%m-%d %H:%M} UTC"
            if self.first is not None and self.last is not None
            else "empty"
        )
        lines = [
            f"history at {self.location}",
            f"  indexes   {self.indexes}",
            f"  time span {span}",
            f"  points    {self.points:,}",
            f"  on disk   {binary_size(self.bytes)} in {_files(self.files)}",
            *self._kind_lines(),
            f"  gaps      {len(self.gaps)}",
        ]
        lines += [f"    - {gap}" for gap in self.gaps]
        return "\n".join(lines)

    def _kind_lines(self) -> list[str]:
        """One line per kind that has files: its bytes and count, naming a few others."""
        lines = []
        for kind, (files, size) in self.by_kind.items():
            if not files:
                continue
            line = f"    {kind:<10} {binary_size(size):>10} in {_files(files)}"
            if kind == "other" and self.other_files:
                shown = self.other_files[:_SHOWN]
                more = len(self.other_files) - len(shown)
                line += ": " + ", ".join(shown) + (f" and {more:,} more" if more else "")
            lines.append(line)
        return lines


#: How many ``other`` files ``searchkit history`` names.
_SHOWN = 3


def _files(count: int) -> str:
    return f"{count:,} file" if count == 1 else f"{count:,} files"
