"""Indexes -> the limits frame: one row per index, its limits and settings.

:func:`limits_frame` takes a ``source``, what a notebook has at hand: an
:class:`~searchkit.model.index.IndexList`, a sequence of
:class:`~searchkit.model.index.SearchIndex`, or the raw API JSON (a list of dicts, e.g. a saved
dump); one index or one dict works too; so do a :class:`~searchkit.History` and a frame
searchkit returned (see :mod:`searchkit.frames.sources`). The frame is indexed by
``index_id``, ``name`` beside it. Raw JSON is converted to models first, in one pass
(:meth:`IndexList.from_json`), so both give the same frame.

Decisions (see DESIGN.md): a limit of -1 is ``inf`` in a float64 column and an absent one is
NaN, as is a limit the service garbled (see :mod:`searchkit.model.index`: it is kept in
``index.invalid``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from searchkit._deprecation import legacy_arguments
from searchkit.errors import ValidationError
from searchkit.frames.sources import INDEX_KEY, Source, as_indexes, is_recorded, limits_from_frame
from searchkit.model.gotime import nanos_to_index
from searchkit.model.limits import LIMIT_FIELDS, REGIONS, TYPES, UNLIMITED
from searchkit.model.secret import secret_value
from searchkit.model.throughput import NAT

__all__ = ["LIMITS_COLUMNS", "limits_frame"]

#: Columns of :func:`limits_frame` without secrets, in order (the index is ``index_id``).
LIMITS_COLUMNS: tuple[str, ...] = (
    "name",
    "short_id",
    "type",
    "region",
    "endpoint",
    "created",
    "input_enrichment_enabled",
    "partner_email",
    *LIMIT_FIELDS,
)

_SECRET_COLUMNS = ("token", "read_only_token")
_TEXT_COLUMNS = ("name", "short_id", "endpoint", "partner_email")


@legacy_arguments(renamed={"indexes": "source"})
def limits_frame(source: Source, *, include_secrets: bool = False) -> pd.DataFrame:
    """Return the limits and settings of indexes as a DataFrame, one row per index.

    Args:
        source: An IndexList, a sequence of SearchIndex, or the raw API JSON (a list of
            dicts); a single index or dict is read as a list of one. A History gives its
            latest limits (``History.limits()``), a limits frame is given back indexed by
            ``index_id``.
        include_secrets: Add the ``token`` and ``read_only_token`` columns (real text).

    Returns:
        A frame indexed by ``index_id`` (``str``) with the columns of :data:`LIMITS_COLUMNS`:
        ``name``, ``short_id`` (the id's first 8 characters, to tell same-named indexes
        apart), ``endpoint`` and ``partner_email`` as ``str``; ``type`` and ``region`` as
        categoricals whose categories are the spec's values plus any unknown ones seen;
        ``created`` as ``datetime64[ns, UTC]``; ``input_enrichment_enabled`` as nullable
        ``boolean``; the nine ``max_*`` limits as ``float64``, where -1 (unlimited) is
        ``inf`` and an absent limit is NaN. A value the service garbled (a limit of
        ``"lots"``, ``true``, ``12.5`` or beyond int64 such as ``10**400``) is missing
        here, as on the model, which keeps what was sent in ``index.invalid``. An empty
        input gives an empty frame with the same columns and dtypes.

    Raises:
        ValidationError: ``source`` is not one of the accepted shapes, or secrets are asked
            of a History or a frame (neither holds them).

    Example:
        >>> frame = limits_frame([{"id": "a1", "name": "docs", "max_daily_queries": -1}])
        >>> frame.loc["a1", "max_daily_queries"]
        np.float64(inf)
    """
    if is_recorded(source) or isinstance(source, pd.DataFrame):
        if include_secrets:
            raise ValidationError(
                "include_secrets needs the indexes: a History or a frame holds no tokens"
            )
        if isinstance(source, pd.DataFrame):
            return limits_from_frame(source)
        return source.limits()
    items = as_indexes(source)
    columns: dict[str, Any] = {
        name: pd.array([getattr(i, name) for i in items], dtype="str") for name in _TEXT_COLUMNS
    }
    columns["type"] = _categorical([_text(i.type) for i in items], TYPES)
    columns["region"] = _categorical([_text(i.region) for i in items], REGIONS)
    columns["created"] = _created([i.creation_time for i in items])
    columns["input_enrichment_enabled"] = pd.array(
        [i.input_enrichment_enabled for i in items], dtype="boolean"
    )
    for name in LIMIT_FIELDS:
        column = np.array(
            [np.nan if (v := getattr(i, name)) is None else float(v) for i in items],
            dtype=np.float64,
        )
        column[column == UNLIMITED] = np.inf
        columns[name] = column
    order = list(LIMITS_COLUMNS)
    if include_secrets:
        for name in _SECRET_COLUMNS:
            columns[name] = pd.array([secret_value(getattr(i, name)) for i in items], dtype="str")
        order += _SECRET_COLUMNS
    index = pd.Index([i.id for i in items], dtype="str", name=INDEX_KEY)
    return pd.DataFrame({name: columns[name] for name in order}, index=index)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _categorical(values: list[str | None], known: tuple[str, ...]) -> pd.Categorical:
    # Unknown values (a new region, a type "paid") are kept as extra categories.
    unknown = sorted({v for v in values if v is not None and v not in known})
    categories = pd.Index([*known, *unknown], dtype="str")
    return pd.Categorical(values, dtype=pd.CategoricalDtype(categories))


def _created(values: list[int | None]) -> pd.DatetimeIndex:
    nanos = np.full(len(values), NAT, dtype=np.int64)
    for position, seconds in enumerate(values):
        # Out of datetime64[ns] range (a garbled value) reads as unknown, not as an error.
        if seconds is not None and abs(seconds) < 9_200_000_000:
            nanos[position] = seconds * 1_000_000_000
    return nanos_to_index(nanos)
