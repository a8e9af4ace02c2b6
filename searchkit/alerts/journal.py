"""The alerts journal: incident transitions and deliveries, an append-only Parquet dataset.

Layout, beside the history's ``throughput/`` (readable by DuckDB, Polars, Spark, Dask)::

    <location>/alerts/day=YYYY-MM-DD/part-<recorded_at ns>-<uuid>.parquet

``day`` is the UTC day the rows were recorded. Files are written whole and never changed
(the history's own writer: a temporary name then a rename, one PUT on an object store).
Each row is a *transition* (an incident entered a state: ``record = "transition"``), a
*delivery* (one attempt to send a transition to one channel: ``record = "delivery"``,
``outcome`` ``sent``, ``failed`` or ``misconfigured``), an incident's *state* as the
evaluation left it (``record = "state"``, reloaded each round; ``state = "quiet"`` when
an incident left the map), or an index's backtest *hit rate* of the day
(``record = "hit_rate"``). A transition is identified by its
incident ``key`` and ``seq`` (its number among the incident's transitions): two
collectors that see the same change record it under the same ``(key, seq)``, and readers
keep the first recorded. A delivery is identified by ``(key, seq, channel, attempt)``.

Secrets never enter a record: channels are named and described with their URLs masked,
outcomes are worded by searchkit, and notices carry no token.

Example (DuckDB)::

    SELECT key, state, at, channel, outcome FROM
      read_parquet('usage-history/alerts/day=*/*.parquet', hive_partitioning = true)
    ORDER BY recorded_at
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from searchkit.alerts.notices import Notice
from searchkit.errors import HistoryError
from searchkit.history.layout import TIMESTAMP, Layout

if TYPE_CHECKING:
    from searchkit.history.usage_history import History

__all__ = [
    "ALERTS_SCHEMA",
    "KIND",
    "Delivery",
    "Journal",
    "accuracy_text",
    "alert_records",
    "notice_of",
    "transition_row",
]

#: The dataset's folder under the store.
KIND = "alerts"

_TEXT = pa.string()
#: One schema for every row: a transition, a delivery, an incident's state, a hit rate.
ALERTS_SCHEMA = pa.schema(
    [
        ("record", _TEXT),  # transition | delivery | state | hit_rate
        ("key", _TEXT),
        ("seq", pa.int64()),
        ("state", _TEXT),
        ("at", TIMESTAMP),
        # the incident (Transition and IncidentState fields)
        ("rule", _TEXT),
        ("basis", _TEXT),
        ("threshold", pa.float64()),
        ("band", _TEXT),
        ("index_id", _TEXT),
        ("name", _TEXT),
        ("field", _TEXT),
        ("period", TIMESTAMP),
        ("limit", pa.float64()),
        ("used", pa.float64()),
        ("projected", pa.float64()),
        ("projected_low", pa.float64()),
        ("projected_high", pa.float64()),
        ("hit_at", TIMESTAMP),
        ("hit_at_earliest", TIMESTAMP),
        ("hit_at_latest", TIMESTAMP),
        ("breached_at", TIMESTAMP),
        ("fired_at", TIMESTAMP),
        ("collected_at", TIMESTAMP),
        ("hit_rate", pa.float64()),
        ("reason", _TEXT),
        ("over_since", TIMESTAMP),
        ("under_since", TIMESTAMP),
        ("episode_at", TIMESTAMP),
        ("resolved_at", TIMESTAMP),
        ("fired", pa.int64()),
        ("updated_at", TIMESTAMP),
        # a delivery
        ("channel", _TEXT),
        ("target", _TEXT),
        ("attempt", pa.int64()),
        ("outcome", _TEXT),
        ("status", pa.int64()),
        ("message", _TEXT),
        ("next_try", TIMESTAMP),
        # who wrote the row, when
        ("collector", _TEXT),
        ("recorded_at", TIMESTAMP),
    ]
)


_RANK = {"state": 0, "hit_rate": 1, "transition": 2, "delivery": 3}


@dataclasses.dataclass(frozen=True)
class Delivery:
    """One attempt to send a transition to a channel, as recorded."""

    key: str
    seq: int
    channel: str
    target: str
    attempt: int
    outcome: str
    message: str
    status: int | None = None
    next_try: pd.Timestamp | None = None


def transition_row(record: Mapping[str, Any], seq: int) -> dict[str, Any]:
    """The journal row of a transition (``Transition.to_record()``) and its number."""
    return {**record, "record": "transition", "seq": seq}


def accuracy_text(hit_rate: float) -> str:
    """How often the index's forecasts were right, as a message says it.

    Example:
        >>> accuracy_text(0.9286)
        'its forecasts called the day right 93% of the time'
        >>> accuracy_text(float("nan"))
        'none yet: too few complete days are stored before today to replay'
    """
    if hit_rate is None or not math.isfinite(hit_rate):
        return "none yet: too few complete days are stored before today to replay"
    return f"its forecasts called the day right {hit_rate:.0%} of the time"


def notice_of(row: Mapping[str, Any]) -> Notice:
    """The notice a transition row tells (a row of :meth:`Journal.read`)."""
    period = _instant(row.get("period"))
    hit_at = _instant(row.get("hit_at"))
    breached = _instant(row.get("breached_at"))
    if _text(row.get("state")) == "breached" and breached is not None:
        hit_at = breached
    return Notice(
        key=_text(row.get("key")),
        state=_text(row.get("state")),
        at=_instant(row.get("at")) or pd.Timestamp(0, tz="UTC"),
        rule=_text(row.get("rule")),
        index_id=_text(row.get("index_id")),
        name=_text(row.get("name")),
        field=_text(row.get("field")),
        period=period if _text(row.get("index_id")) else None,
        used=_number(row.get("used")),
        limit=_number(row.get("limit")),
        hit_at=hit_at,
        hit_at_earliest=_instant(row.get("hit_at_earliest")),
        hit_at_latest=_instant(row.get("hit_at_latest")),
        as_of=_instant(row.get("collected_at")),
        started_at=_instant(row.get("fired_at")),
        accuracy=accuracy_text(_number(row.get("hit_rate"))) if _text(row.get("index_id")) else "",
        detail=_text(row.get("reason")),
    )


def _text(value: Any) -> str:
    return "" if value is None or (not isinstance(value, str) and pd.isna(value)) else str(value)


def _number(value: Any) -> float:
    return math.nan if value is None or pd.isna(value) else float(value)


def _instant(value: Any) -> pd.Timestamp | None:
    if value is None or pd.isna(value):
        return None
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


class Journal:
    """The ``alerts/`` dataset of one store: read it, append to it.

    Args:
        history: The store (a :class:`~searchkit.History`) the journal lives in.
        collector: Who writes (recorded in each row); default ``host:pid``.
    """

    def __init__(self, history: History, *, collector: str | None = None) -> None:
        self.layout = Layout(history.location, history.filesystem, history.root)
        if collector is None:
            import os
            import socket

            collector = f"{socket.gethostname()}:{os.getpid()}"
        self.collector = collector

    def read(self, since: pd.Timestamp | None = None) -> pd.DataFrame:
        """Return the records written on or after ``since``'s UTC day (all by default).

        Returns:
            The columns of :data:`ALERTS_SCHEMA` (times aware UTC), in the order written.

        Raises:
            HistoryError: A file is not the journal's (named), or cannot be read.
        """
        first = None if since is None else f"{pd.Timestamp(since):%Y-%m-%d}"
        tables = [self._read_file(path) for _, path, _ in self.layout.files(KIND, first)]
        table = pa.concat_tables(tables) if tables else ALERTS_SCHEMA.empty_table()
        frame: pd.DataFrame = table.to_pandas()
        if not frame.empty:  # rows of one instant: what was decided before what was done
            rank = frame["record"].map(_RANK).fillna(len(_RANK))
            order = frame.assign(_rank=rank).sort_values(["recorded_at", "_rank"], kind="stable")
            frame = frame.loc[order.index].reset_index(drop=True)
        return frame

    def _read_file(self, path: str) -> pa.Table:
        try:
            table = pq.read_table(path, filesystem=self.layout.fs)
        except (OSError, pa.ArrowException) as exc:
            raise HistoryError(f"cannot read the alerts journal file {path}: {exc}") from exc
        missing = [
            n for n in ("record", "key", "seq", "recorded_at") if n not in table.schema.names
        ]
        if missing:
            raise HistoryError(
                f"{path} was not written by searchkit's alerts (missing column(s) "
                f"{', '.join(missing)}); move it out of the alerts folder to continue"
            )
        columns = []
        for field in ALERTS_SCHEMA:
            if field.name in table.schema.names:
                columns.append(table.column(field.name).cast(field.type))
            else:  # written by an older searchkit: reads as nulls
                columns.append(pa.nulls(table.num_rows, field.type))
        return pa.Table.from_arrays(columns, schema=ALERTS_SCHEMA)

    def append(self, rows: Sequence[dict[str, Any]], *, now: float | None = None) -> pd.DataFrame:
        """Append rows (transitions, deliveries, states) as one file; return them as read.

        Args:
            rows: Records by column name (``period_start`` is read as ``period``); a
                column left out is null.
            now: The recording instant in epoch seconds (default: the clock).

        Raises:
            HistoryError: The store cannot be written; nothing of these rows was stored.
        """
        if not rows:
            empty: pd.DataFrame = ALERTS_SCHEMA.empty_table().to_pandas()
            return empty
        stamp = time.time_ns() if now is None else int(now * 1e9)
        recorded = pd.Timestamp(stamp, unit="ns", tz="UTC").floor("us")
        table = _table(rows, recorded, self.collector)
        self.layout.write(KIND, f"{recorded:%Y-%m-%d}", table, int(recorded.value))
        frame: pd.DataFrame = table.to_pandas()
        return frame


def alert_records(history: History, *, since: Any = None) -> pd.DataFrame:
    """Return the store's alert journal: incident transitions, deliveries and states.

    Args:
        history: The store (a :class:`~searchkit.History`) the collector writes.
        since: Only the rows recorded on or after this instant's UTC day (default all).

    Returns:
        One row per record, oldest first, in the columns of :data:`ALERTS_SCHEMA`:
        ``record`` says what a row is (``transition``, ``delivery``, ``state`` or
        ``hit_rate``); transitions carry the incident's ``key``, ``state``, ``at``, the
        index, the limit and the forecast's figures; deliveries the ``channel`` (its URL
        masked in ``target``), ``attempt``, ``outcome`` and ``message``.

    Example:
        >>> rows = sk.alert_records(sk.History("usage-history"))  # doctest: +SKIP
        >>> rows[rows["record"] == "transition"][["name", "state", "at"]]  # doctest: +SKIP
    """
    return Journal(history).read(since=since)


def _table(rows: Iterable[dict[str, Any]], recorded: pd.Timestamp, collector: str) -> pa.Table:
    """Rows as a table of :data:`ALERTS_SCHEMA` (missing values null)."""
    rows = list(rows)
    columns = []
    for field in ALERTS_SCHEMA:
        if field.name == "recorded_at":
            values: list[Any] = [recorded] * len(rows)
        elif field.name == "collector":
            values = [collector] * len(rows)
        elif field.name == "period":
            values = [_stored(row.get("period", row.get("period_start"))) for row in rows]
        else:
            values = [_stored(row.get(field.name)) for row in rows]
        columns.append(pa.array(values, type=field.type, from_pandas=True))
    return pa.Table.from_arrays(columns, schema=ALERTS_SCHEMA)


def _stored(value: Any) -> Any:
    """A value as Arrow takes it: NaT and empty texts as nulls."""
    if value is None or value is pd.NaT:
        return None
    if isinstance(value, pd.Timestamp):
        return value.tz_convert("UTC") if value.tzinfo else value.tz_localize("UTC")
    if isinstance(value, str) and value == "":
        return None
    return value
