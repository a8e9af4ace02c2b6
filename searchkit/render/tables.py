"""People-tables of limits: pandas frames to read, with "unlimited" said explicitly."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from searchkit._deprecation import legacy_arguments
from searchkit.model.limits import LIMIT_FIELDS, LIMIT_INFO
from searchkit.render.formats import format_limit

if TYPE_CHECKING:
    import pandas as pd

    from searchkit.frames.sources import Source

__all__ = ["display_limits_frame", "limits_summary", "limits_table"]


def display_limits_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Return a copy of a limits frame with its ``max_*`` columns as display text.

    Args:
        frame: A frame from :func:`~searchkit.limits_frame` (any subset of its
            columns).

    Returns:
        A copy where each limit reads "unlimited", "—", a number with thousands
        separators or (bandwidth) bytes in units; the other columns are unchanged.

    Example:
        >>> display_limits_frame(limits_frame([{"id": "a", "max_daily_queries": -1}]))[
        ...     "max_daily_queries"
        ... ].tolist()
        ['unlimited']
    """
    import pandas as pd

    shown = frame.copy()
    for name in LIMIT_FIELDS:
        if name in shown.columns:
            shown[name] = pd.array([format_limit(v, name) for v in shown[name]], dtype="str")
    return shown


@legacy_arguments(renamed={"indexes_or_frame": "source"})
def limits_table(source: Source) -> pd.DataFrame:
    """Return the limits as a table to read: name first, limits as display text.

    :func:`~searchkit.limits_frame` stays numeric for computing; this is its view for
    people: thousands separators, "unlimited", bandwidth in byte units, "—" for a limit the
    service did not send, columns labelled in words. It is a plain DataFrame of text, so
    it displays the same in any notebook, trusted or not, and prints well.

    Args:
        source: Indexes in any form ``limits_frame`` accepts, a History (its latest
            limits), or a frame of ``limits_frame`` (its ``index_id`` index and ``name``,
            ``type``, ``region`` columns are used when present).

    Returns:
        A frame indexed by ``index_id`` (so it joins any other frame), with the columns
        ``name``, ``type``, ``region`` and one per limit labelled as in
        :data:`~searchkit.model.limits.LIMIT_INFO` (``"queries / day"``...).

    Example:
        >>> sk.limits_table(client.list_indexes())  # doctest: +SKIP
    """
    import pandas as pd

    frame = _limits(source)
    columns: dict[str, Any] = {}
    for name in ("name", "type", "region"):
        if name in frame.columns:
            values = frame[name].astype(object)
            columns[name] = [("—" if v is None or v != v else str(v)) for v in values]
    for field in LIMIT_FIELDS:
        if field in frame.columns:
            columns[LIMIT_INFO[field].label] = [format_limit(v, field) for v in frame[field]]
    index = pd.Index([str(i) for i in frame.index], dtype="str", name="index_id")
    return pd.DataFrame(columns, index=index, dtype="str")


@legacy_arguments(renamed={"indexes_or_frame": "source"})
def limits_summary(source: Source, *, numeric: bool = False) -> pd.DataFrame:
    """Return statistics of each limit that treat "unlimited" explicitly.

    ``limits_frame(...).describe()`` mixes ``inf`` into the statistics (NaN medians and a
    RuntimeWarning per column when most limits are unlimited). Here the statistics are over
    the finite values only, beside a count of the unlimited and of the absent ones.

    Args:
        source: Indexes in any form ``limits_frame`` accepts, a History, or a frame of
            ``limits_frame``.
        numeric: Give the statistics as numbers (nullable ``Int64``, ``<NA>`` when there
            are none) to compute with; by default they are text to read, as in
            :func:`limits_table`: "1,050,000,000", bandwidth in byte units ("50 GB"), "—"
            when there are none.

    Returns:
        A frame with one row per limit (indexed by field name, in
        :data:`~searchkit.model.limits.LIMIT_FIELDS` order) and the columns ``label``,
        ``indexes`` (how many rows), ``unlimited``, ``missing``, ``limited`` (finite
        values, all four whole numbers) and ``min``, ``median``, ``mean``, ``max`` of the
        finite values, rounded to whole numbers as the limits are, with no warning raised.

    Example:
        >>> sk.limits_summary(client.list_indexes()).loc["max_daily_queries", "unlimited"]
        ...  # doctest: +SKIP
    """
    import numpy as np
    import pandas as pd

    frame = _limits(source)
    rows = []
    for field in LIMIT_FIELDS:
        if field not in frame.columns:
            continue
        values = pd.to_numeric(frame[field], errors="coerce").to_numpy(
            dtype=np.float64, na_value=np.nan
        )
        finite = values[np.isfinite(values)]
        empty = finite.size == 0
        rows.append(
            {
                "field": field,
                "label": LIMIT_INFO[field].label,
                "indexes": int(values.size),
                "unlimited": int(np.count_nonzero(np.isposinf(values))),
                "missing": int(np.count_nonzero(np.isnan(values))),
                "limited": int(finite.size),
                "min": np.nan if empty else float(finite.min()),
                "median": np.nan if empty else float(np.median(finite)),
                "mean": np.nan if empty else float(finite.mean()),
                "max": np.nan if empty else float(finite.max()),
            }
        )
    columns = ["label", "indexes", "unlimited", "missing", "limited", "min", "median"]
    columns += ["mean", "max"]
    if not rows:
        return pd.DataFrame(columns=columns, index=pd.Index([], name="field", dtype="str"))
    summary = pd.DataFrame(rows).set_index("field")[columns]
    # Limits are whole numbers: so are their statistics.
    for name in ("min", "median", "mean", "max"):
        summary[name] = summary[name].round().astype("Int64")
        if not numeric:
            summary[name] = pd.array(
                [
                    "—" if value is pd.NA else format_limit(int(value), field)
                    for field, value in zip(summary.index, summary[name], strict=True)
                ],
                dtype="str",
            )
    return summary


def _limits(source: Source) -> pd.DataFrame:
    from searchkit.frames.limits_frames import limits_frame  # pandas only when a table is asked for

    return limits_frame(source)
