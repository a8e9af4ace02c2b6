"""What a collect stored and what a history holds, as reports for people."""

from __future__ import annotations

import dataclasses

import pandas as pd

from searchkit._units import binary_size
from searchkit.history.gaps import Gap
from searchkit.model.hooks import notebook_html

__all__ = ["CollectSummary", "HistoryInfo"]


@dataclasses.dataclass(frozen=True)
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


@dataclasses.dataclass(frozen=True)
class HistoryInfo:
    """A summary of what a history holds (``searchkit history`` prints it)."""

    location: str
    indexes: int
    points: int
    first: pd.Timestamp | None
    last: pd.Timestamp | None
    files: int
    bytes: int
    gaps: tuple[Gap, ...]

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
            f"  on disk   {binary_size(self.bytes)} in {self.files} files",
            f"  gaps      {len(self.gaps)}",
        ]
        lines += [f"    - {gap}" for gap in self.gaps]
        return "\n".join(lines)
