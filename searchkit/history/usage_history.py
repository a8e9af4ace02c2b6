"""Usage history: throughput and limits kept past the service's window, as a Parquet dataset.

Layout (readable without searchkit by DuckDB, Polars, Spark or Dask)::

    <location>/throughput/day=YYYY-MM-DD/part-<collected_at ns>-<uuid>.parquet
    <location>/limits/day=YYYY-MM-DD/part-<collected_at ns>-<uuid>.parquet

``throughput`` holds ``account, index_id, name, time, value, collected_at`` (``day`` is the
UTC day of ``time``); ``limits`` holds one row per index per collect: ``account, id`` and the
columns of :func:`~searchkit.limits_frame`, plus ``collected_at`` (``day`` is its UTC
day). Files are only ever added, each written whole (a temporary name, then a rename; on an
object store one PUT, which is atomic) and never changed. Two collectors may write the same
points; readers keep one row per ``(account, index_id, time)``, the one with the latest
``collected_at``, so nothing is lost and nothing shows twice. :meth:`History.compact` merges
a day's files into one, writing the new file before deleting the old ones, so a reader
running meanwhile sees every point (at worst twice, and drops the copy).

The package splits the job: :mod:`~searchkit.history.layout` (paths, partitions, listing,
writing), :mod:`~searchkit.history.reader` (reads, row-group pruning),
:mod:`~searchkit.history.dedupe` (the one "latest write wins" rule),
:mod:`~searchkit.history.gaps` (the one gap rule), :mod:`~searchkit.history.snapshots`
(limits rows), :mod:`~searchkit.history.collect_round` (a collect),
:mod:`~searchkit.history.compaction` (merging days), :mod:`~searchkit.history.scan` and
:mod:`~searchkit.history.reports` (what ``info()`` finds and says); this module holds
:class:`History`, their face, and its reads.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs

from searchkit._deprecation import legacy_arguments, warn_deprecated
from searchkit.errors import mask_url
from searchkit.frames.sources import Indexes
from searchkit.frames.zones import Instant, TimeZone, resolve_zone, utc_instant
from searchkit.history import accounts, dedupe, reader
from searchkit.history.arguments import check_columns, check_day, check_days
from searchkit.history.bounds import Bounds
from searchkit.history.collect_round import collect_round
from searchkit.history.compaction import compact_all, settle
from searchkit.history.gaps import Gap
from searchkit.history.layout import (
    LIMITS_SCHEMA,
    ROLLUP_SCHEMA,
    THROUGHPUT_SCHEMA,
    Layout,
    one_listing,
)
from searchkit.history.location import open_location, require_folder
from searchkit.history.pack_writer import pack_closed
from searchkit.history.points import read_points, refuse_unknown, selection, span
from searchkit.history.reports import CollectSummary, HistoryInfo
from searchkit.history.rollups import (
    DaySums,
    Detail,
    day_sums,
    refresh,
    trusted,
)
from searchkit.history.scan import history_info
from searchkit.history.snapshots import snapshot_frame

if TYPE_CHECKING:
    from searchkit.api.client import Client

__all__ = [
    "LIMITS_SCHEMA",
    "THROUGHPUT_SCHEMA",
    "CollectSummary",
    "Gap",
    "History",
    "HistoryInfo",
]


class History:
    """A usage history at a local folder or an object store, as a Parquet dataset.

    Args:
        location: A folder (created on the first collect), or a URL pyarrow understands,
            e.g. ``"s3://bucket/prefix"``.
        filesystem: A ``pyarrow.fs.FileSystem`` to use instead of deriving one from
            ``location`` (then ``location`` is the path inside it).
        storage_options: Keyword arguments for ``pyarrow.fs.S3FileSystem`` when
            ``location`` is an ``s3://`` URL, e.g. ``endpoint_override``, ``access_key``,
            ``secret_key``, ``region``, ``scheme``.

    Example:
        >>> hist = History("usage-history")  # doctest: +SKIP
        >>> hist.collect(client)  # doctest: +SKIP
        >>> hist.throughput(start="2026-11-01", names=["docs"])  # doctest: +SKIP
    """

    def __init__(
        self,
        location: str | os.PathLike[str],
        *,
        filesystem: pafs.FileSystem | None = None,
        storage_options: dict[str, Any] | None = None,
    ) -> None:
        text = os.fspath(location)
        # Credentials written in the location never show: not in repr, info() or errors.
        self._location = mask_url(text)
        fs, root = open_location(text, filesystem, storage_options)
        self._layout = Layout(self._location, fs, root)
        self._fs, self._root = fs, root
        self._names_cache: tuple[tuple[str, ...], dict[str, str]] | None = None

    @property
    def location(self) -> str:
        """Where the history lives, as given (credentials in it masked)."""
        return self._location

    @property
    def filesystem(self) -> pafs.FileSystem:
        """The pyarrow filesystem holding the dataset."""
        return self._fs

    @property
    def root(self) -> str:
        """The dataset's path inside :attr:`filesystem`."""
        return self._root

    def __repr__(self) -> str:
        return f"History({self._location!r})"

    # --- files -------------------------------------------------------------------------
    def reading(self) -> contextlib.AbstractContextManager[None]:
        """Share one listing of the store among the reads inside ``with hist.reading():``.

        Each call lists what it reads once; inside this, on an object store, each dataset
        is listed once (one LIST request) for every call made in it (``forecast_limits``
        and ``usage_frame`` read a History so). Files written meanwhile by another
        collector show in the next scope.
        """
        return self._layout.listing()

    def _read(self, kind: str, **kwargs: Any) -> pa.Table:
        return reader.read(self._layout, kind, **kwargs)

    def _files(self, kind: str) -> list[tuple[str, str, int]]:
        return self._layout.files(kind)

    # --- collect -----------------------------------------------------------------------

    @one_listing
    def collect(
        self,
        client: Client,
        *,
        indexes: Indexes | None = None,
        now: Instant | None = None,
        compact: bool = True,
    ) -> CollectSummary:
        """Take one snapshot: every index's limits and the throughput points not stored yet.

        Collecting twice in a row stores nothing new the second time. The limits are
        stored only when they differ from the latest stored snapshot (a plan or name
        changed, an index appeared or went), so plan changes show with the time of the
        collect that saw them. Points missing between what is
        stored and what the service still returns are reported as gaps, never filled in.

        Args:
            client: A :class:`~searchkit.Client` (its account's indexes are listed).
            indexes: Use this list instead of calling ``client.list_indexes()`` (e.g. one
                you already have); ``client`` still names the account.
            now: The collect's own time (``collected_at``); the machine's clock by default.
                Give the emulator's when its clock is advanced (notebooks, tests).
            compact: Also compact the closed UTC days this collect wrote to, and yesterday
                (merge their files, thin their snapshots, write their rollups), so the
                layout stays one file per day whatever the collect interval; the day this
                collect closes (across midnight) is merged on a thread after it returns,
                which the next collect waits for. With False, those days' files stay as
                written and only their rollups are written.

        Returns:
            A :class:`CollectSummary`.

        Raises:
            HistoryError: The location cannot be written, or a stored file is foreign or
                corrupt; the message says what this collect stored before it failed.
        """
        return collect_round(self._layout, client, indexes=indexes, now=now, compact=compact)

    # --- read --------------------------------------------------------------------------

    @legacy_arguments(positional=("start", "end", "names", "tz"))
    @one_listing
    def throughput(
        self,
        *,
        start: Instant | None = None,
        end: Instant | None = None,
        names: Iterable[str] | str | None = None,
        tz: TimeZone = None,
        index_ids: Iterable[str] | str | None = None,
    ) -> pd.DataFrame:
        """Return stored throughput in the columns of :func:`~searchkit.throughput_frame`.

        Only the day partitions between ``start`` and ``end`` are opened, and the name
        filter is pushed down to the Parquet row groups.

        Args:
            start: First instant (inclusive): anything ``pd.Timestamp`` reads; a naive one
                is UTC. None is the beginning.
            end: Last instant (exclusive); None is the end.
            names: Only these index names (one name or several).
            tz: Time zone of the ``time`` column; None is UTC, the zone stored.
            index_ids: Only these index ids (one id or several).

        Returns:
            Columns ``index_id``, ``name`` (categoricals; the name an index has at its
            newest point, so a renamed index stays one line), ``time``
            (``datetime64[ns, tz]``), ``value`` (``float64``) and ``account``
            (categorical), one row per (account, index, time), sorted by index then time.
            No ``attrs`` (it saves to Parquet as is); :func:`~searchkit.throughput_intervals`
            gives each index's sampling interval.

        Raises:
            HistoryError: A stored file is foreign or corrupt.
            ValidationError: ``tz`` is unknown, ``start`` or ``end`` is no time of
                1677-2262 or ``end`` comes before ``start``, or ``names`` or ``index_ids``
                holds something other than text.
            UnknownIndexError: A name or id in ``names``/``index_ids`` no stored index had.
        """
        zone = resolve_zone(tz, default=dt.timezone.utc) or dt.timezone.utc
        days, condition = selection(start, end, names=names, index_ids=index_ids)
        # One set of bounds: the row groups are chosen by it, then the rows filtered by it.
        table = self._read("throughput", days=days, filter=condition)
        current = self._current_names()
        refuse_unknown(self._layout, table, current, names=names, index_ids=index_ids)
        return dedupe.tidy(table, zone, current)

    @legacy_arguments(positional=("start", "end"))
    @one_listing
    def points(self, *, start: Instant | None = None, end: Instant | None = None) -> dedupe.Points:
        """Return the points :meth:`throughput` would, as arrays instead of a frame.

        The same points (one per account, index and time), order and names, read without
        a text per point: for code that sums a day at a time (``forecast_limits`` does).

        Args:
            start: First instant (inclusive), as for :meth:`throughput`.
            end: Last instant (exclusive).

        Returns:
            A :class:`~searchkit.history.dedupe.Points`: ``ids`` and ``names`` (one per
            index), and per point its index's position in them (``codes``), its ``times``
            (epoch ns, UTC) and ``values``.

        Raises:
            HistoryError: A stored file is foreign or corrupt, or the read would not fit
                in memory (:mod:`searchkit.history.budget`).
            ValidationError: ``start`` or ``end`` is no time, or ``end`` comes before
                ``start``.
        """
        lo, hi, _, _ = span(start, end)
        return read_points(self._layout, lo, hi, self._current_names())

    @one_listing
    def days(self, kind: str = "throughput") -> list[str]:
        """Return the UTC days (``YYYY-MM-DD``) holding files of ``kind``, oldest first.

        Args:
            kind: ``"throughput"`` (default) or ``"limits"``.
        """
        return sorted({day for day, _, _ in self._files(kind)})

    @one_listing
    def snapshots(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """Return every stored limits snapshot (one row per index and collect).

        Args:
            columns: Only these columns of the limits dataset (default all of them).

        Returns:
            The rows as stored, in no particular order, but for the index key: the files'
            ``id`` is ``index_id`` here, as in every frame (ask for either in
            ``columns``); ``collected_at`` says when each snapshot was taken.
        """
        stored = None if columns is None else ["id" if c == "index_id" else c for c in columns]
        frame: pd.DataFrame = self._read("limits", columns=stored).to_pandas()
        return frame.rename(columns={"id": "index_id"})

    @one_listing
    def newest_time(self) -> pd.Timestamp | None:
        """Return the newest stored point's time (reading only the newest day)."""
        newest = self._layout.newest_day("throughput")
        if newest is None:
            return None
        table = self._read("throughput", days=(newest, newest), columns=["time"])
        if table.num_rows == 0:
            return None
        return pd.Timestamp(pc.max(table["time"]).value, unit="ns", tz="UTC")

    def _current_names(self) -> dict[str, str]:
        """Map index ids to their names in the newest limits snapshot (so renames show)."""
        newest = self._layout.newest_day("limits")
        if newest is None:
            return {}
        # The same newest files answer the same: a day-by-day reader asks once per day.
        paths = tuple(path for _, path, _ in self._layout.files("limits", newest, newest))
        if self._names_cache is not None and self._names_cache[0] == paths:
            return self._names_cache[1]
        table = self._read("limits", days=(newest, newest), columns=["id", "name", "collected_at"])
        latest = dedupe.latest_snapshots(table.to_pandas(), ["id"])
        names = {
            str(i): str(n)
            for i, n in zip(latest["id"], latest["name"], strict=True)
            if n is not None
        }
        self._names_cache = (paths, names)
        return names

    @legacy_arguments(positional=("at",))
    @one_listing
    def limits(self, *, at: Instant | None = None) -> pd.DataFrame:
        """Return the limits as of an instant: each index's latest snapshot up to ``at``.

        Args:
            at: The instant (a naive one is UTC); None is now (the latest snapshot).

        Returns:
            The columns of :func:`~searchkit.limits_frame` indexed by ``index_id``, plus
            ``account`` and ``collected_at`` (when that snapshot was taken). Indexes no
            longer listed keep their last snapshot.
        """
        when = utc_instant(at, "at")
        condition = None
        days: tuple[str | None, str | None] = (None, None)
        if when is not None:
            condition = Bounds(ranges=(("collected_at", None, when.value + 1),))
            days = (None, f"{when:%Y-%m-%d}")
        table = accounts.canonical(self._read("limits", days=days, filter=condition))
        frame = table.to_pandas()
        # One row per index: an index stored under two account keys is one index.
        frame = dedupe.latest_snapshots(frame, ["id"])
        frame = frame.sort_values(["created", "id"], kind="stable")
        return snapshot_frame(frame)

    # --- maintenance ---------------------------------------------------------------------

    @one_listing
    def compact(self) -> dict[str, int]:
        """Merge each day's files into one, dropping duplicate points (the latest wins).

        Limits snapshots that repeat the one before and after them (no plan change) are
        dropped too, keeping the first and last of each unchanged run, so ``limits(at=)``
        answers the same and a month of 10-minute collects stays small.

        Safe while readers read and collectors write: the merged file is written whole
        before the files it replaces are deleted, and a file written meanwhile is left
        alone. Two compactions of one day do not both run: one of this process (a
        thread's) is waited for, another process's makes this one skip the day. Each
        compacted day also gets its daily rollup (:meth:`rollups`). Temporary files older
        than an hour (a writer killed mid-write) are deleted.

        Returns:
            ``{"partitions": merged days, "files_removed": n (deleted by this call),
            "duplicates_dropped": n, "snapshots_thinned": n, "rollups_written": n,
            "days_skipped": n (another process's compactor held them),
            "stale_temporaries_removed": n}``.
        """
        settle(self._layout)  # a merge a collect left running finishes first
        return compact_all(self._layout)

    @one_listing
    def refresh_rollups(self, days: Iterable[str] | None = None) -> int:
        """Write the daily rollup of each day whose rollup is missing or stale.

        Each day's files stay as they are (unlike :meth:`compact`): what ``collect(
        compact=False)`` does for the closed days it touched, for a store compacted by
        other means. A day whose files change meanwhile keeps a stale rollup. Each month
        of ``days`` that has closed gets its pack (:mod:`searchkit.history.packs`) if it
        has none: its day rollups in one file, for reads of many days on an object store.

        Args:
            days: UTC days (``YYYY-MM-DD``); default every stored day before today (UTC).

        Returns:
            The number of rollups written.
        """
        settle(self._layout)  # a merge a collect left running finishes first
        today = f"{pd.Timestamp.now(tz='UTC'):%Y-%m-%d}"
        if days is None:
            days = [day for day in self._layout.days("throughput") if day < today]
        days = check_days(days, "days")
        written = sum(refresh(self._layout, day) for day in days)
        pack_closed(self._layout, days, today)  # each closed month's days in one file
        return written

    @one_listing
    def rollups(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """Return the daily rollups that still summarise their day's points exactly.

        Args:
            columns: The columns to return (default all but the lists: ``hourly_*``,
                ``quarter_*``, ``spacing_*``, ``gaps`` and ``crossing_*``, the day's seal,
                ``digest``, and what keeps the open day's rollup current,
                ``spacings_*`` and ``running_value``).

        Returns:
            One row per (account, index, UTC day) of every day whose points did not change
            since its rollup and whose rollup passes its checks
            (:mod:`searchkit.history.checks`; a day whose rollup was changed is named in a
            :class:`~searchkit.errors.HistoryWarning`): ``account, index_id, name, period,
            operations, value_sum, points, invalid, interval_seconds, source, last_point,
            first_point`` and the lists and seal when named (see
            :mod:`searchkit.history.rollups`). Days not listed must be read from the points.
        """
        lists = ("hourly", "quarter", "spacing", "digest", "gaps", "running", "crossing")
        wanted = [c for c in ROLLUP_SCHEMA.names if not c.startswith(lists)]
        if columns is not None:
            wanted = check_columns(columns, ROLLUP_SCHEMA.names, "columns") or wanted
        table = trusted(self._layout, (None, None), wanted)
        return table.to_pandas()  # type: ignore[no-any-return]

    def hourly(self, first: str, last: str) -> dict[str, DaySums]:
        """Deprecated: ``sums(first, last, detail="hour")``, the one read of a rollup's sums."""
        warn_deprecated('History.hourly is deprecated: call hist.sums(first, last, detail="hour")')
        return self.sums(first, last, detail="hour")

    @one_listing
    def sums(self, first: str, last: str, *, detail: Detail = "day") -> dict[str, DaySums]:
        """Return what each UTC day's points sum to, from ``first`` to ``last``
        (``YYYY-MM-DD``), for the days whose rollup is current and holds valid figures.

        Args:
            first: The first UTC day.
            last: The last UTC day (inclusive).
            detail: ``"day"`` (default: one sum per index and day), ``"hour"`` (24) or
                ``"quarter"`` (96 quarter-hours: what a period in any zone is made of).

        Returns:
            :class:`~searchkit.history.rollups.DaySums` by day; the days left out are read
            from their points (``usage_frame`` and ``forecast_limits`` do so): the same
            figures, to the last bit.
        """
        first, last = check_day(first, "first"), check_day(last, "last")
        return day_sums(self._layout, first, last, self._current_names(), detail=detail)

    @one_listing
    def info(self) -> HistoryInfo:
        """Summarise the history: indexes, time span, points, files and bytes, gaps.

        A day whose rollup is current is summarised from it; any other is read on its own
        (the keys and times), so memory stays that of a day. A gap is a step between two
        stored points of an index longer than 1.5 times its usual sampling interval.

        Raises:
            HistoryError: Nothing is at the location (no folder, no bucket) or it is a
                file: a history that was never collected, or a mistyped location.
        """
        self.require_folder()
        return history_info(self._layout, self._location)

    def require_folder(self) -> None:
        """Raise a HistoryError saying what is wrong when the location holds no folder.

        Reading a location where nothing is finds no points, as an empty history does;
        call this first to tell a mistyped location from a history not collected yet.
        """
        require_folder(self._layout, self._location)
