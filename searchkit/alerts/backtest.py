"""Replay alert rules on the stored past: what each would have said, and when.

:func:`backtest_alerts` evaluates the rules at every ``every`` of every replayed day from
only the data before that instant (the forecast as :func:`~searchkit.backtest_forecast`
makes it, from the same hourly bins), steps the incidents through the one state machine
(:mod:`searchkit.alerts.machine`) the collector uses, and scores them against when each
day really hit its limit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from searchkit.alerts import machine as mc
from searchkit.alerts.rules import DEFAULT_RULE, THRESHOLD_RULES, AlertRule, check_indexes
from searchkit.analytics import profile as pf
from searchkit.analytics.backtest import backtest_forecast, day_limits, hour_forecast, source_bins
from searchkit.analytics.bins import Bins
from searchkit.errors import ValidationError
from searchkit.frames.counting import DAY_NS, HOUR_NS, ValueUnit, check_value_unit
from searchkit.frames.zones import utc_instant

if TYPE_CHECKING:
    from searchkit.frames.sources import Source

__all__ = [
    "INCIDENT_COLUMNS",
    "SUMMARY_COLUMNS",
    "AlertBacktest",
    "backtest_alerts",
    "hit_rates",
    "replay_alerts",
    "score",
    "summarise",
]

#: Columns of :attr:`AlertBacktest.incidents`.
INCIDENT_COLUMNS: tuple[str, ...] = (
    "index_id",
    "name",
    "field",
    "day",
    "rule",
    "limit",
    "fired_at",
    "breached_at",
    "lead_time",
    "resolved_at",
    "fired",
)
#: Columns of :attr:`AlertBacktest.summary` (one row per rule).
SUMMARY_COLUMNS: tuple[str, ...] = (
    "basis",
    "at",
    "band",
    "index_days",
    "breaches",
    "alerted",
    "missed",
    "lead_time_median",
    "lead_time_p10",
    "false_alerts",
    "false_per_index_week",
    "repeats",
)
_NO_LEAD = np.timedelta64("NaT", "ns")
# How often rules may be evaluated: a collector's round, at most 4 a day.
_SHORTEST, _LONGEST = pd.Timedelta("1min"), pd.Timedelta("6h")


@dataclass(frozen=True)
class AlertBacktest:
    """What :func:`backtest_alerts` found.

    Attributes:
        incidents: One row per rule, index and day that fired or breached (see
            :func:`backtest_alerts`).
        summary: One row per rule (the rules given first, then the threshold rules).
    """

    incidents: pd.DataFrame
    summary: pd.DataFrame

    def table(self) -> pd.DataFrame:
        """The summary as people read it: lead times in hours, rates rounded."""
        out = self.summary.copy()
        for column in ("lead_time_median", "lead_time_p10"):
            out[column] = (out[column].dt.total_seconds() / 3600).round(2)
        out = out.rename(
            columns={"lead_time_median": "lead_h_median", "lead_time_p10": "lead_h_p10"}
        )
        out["false_per_index_week"] = out["false_per_index_week"].round(3)
        return out

    def __repr__(self) -> str:
        return f"Alert backtest of {len(self.incidents)} incidents\n{self.table().to_string()}"

    def _repr_html_(self) -> str:
        return f"<p>Alert backtest of {len(self.incidents)} incidents</p>{self.table().to_html()}"


def _rules(rules: Sequence[AlertRule] | AlertRule | None) -> list[AlertRule]:
    if rules is None or isinstance(rules, AlertRule):
        chosen = [DEFAULT_RULE if rules is None else rules]
    else:
        chosen = list(rules)
    for rule in chosen:
        if not isinstance(rule, AlertRule):
            raise ValidationError(f"rules must be AlertRule objects, got {rule!r}")
    names = [rule.name for rule in chosen]
    if len(set(names)) != len(names):
        raise ValidationError(f"rule names must be unique, got {names}")
    return chosen + [rule for rule in THRESHOLD_RULES if rule.name not in names]


def _every(every: Any) -> int:
    try:
        step = pd.Timedelta(every)
    except (ValueError, TypeError) as exc:
        raise ValidationError(f'every must be a duration such as "10min", got {every!r}') from exc
    if pd.isna(step) or not _SHORTEST <= step <= _LONGEST:
        raise ValidationError(f"every must be from 1 minute to 6 hours, got {every!r}")
    return int(step.value)


def backtest_alerts(
    source: Source,
    *,
    rules: Sequence[AlertRule] | AlertRule | None = None,
    every: str | pd.Timedelta = "10min",
    limit: float | str | None = None,
    value_unit: ValueUnit = "per_second",
    warmup: int = pf.WINDOW,
) -> AlertBacktest:
    """Replay alert rules on the stored past, each instant from only the data before it.

    Every complete past day with ``warmup`` days stored before it is replayed: at
    00:00, 00:00 + ``every``, ... the forecast is made as
    :func:`~searchkit.backtest_forecast` makes it (points spread evenly within an hour),
    each rule is evaluated and its incidents stepped through the collector's state
    machine. Beside the rules given (default: :data:`~searchkit.alerts.rules.DEFAULT_RULE`)
    the threshold rules at 50, 70, 80 and 90% used are replayed, so that you see what the
    forecast buys on your own history.

    Args:
        source: An IndexList, raw API JSON, a :class:`~searchkit.History` or a throughput
            frame whose points span days.
        rules: The rules to replay (names unique), each on the indexes its ``indexes``
            glob watches, as the collector evaluates it.
        every: How often the collector evaluates (1 minute to 6 hours).
        limit: What breaches are judged against: None (default) each index's latest
            limit of each rule's field; ``"median"`` each index's median daily total; or
            a number of operations.
        value_unit: See :func:`~searchkit.usage_frame`.
        warmup: Days stored before a day for it to be replayed.

    Returns:
        An :class:`AlertBacktest`. ``incidents``: one row per rule, index and day that
        fired or breached: ``index_id``, ``name``, ``field``, ``day``, ``rule``,
        ``limit``, ``fired_at`` (first firing, NaT if never), ``breached_at`` (when the
        limit was hit, NaT when the day stayed under), ``lead_time`` (breached_at minus
        the start of the firing in effect when it was hit; NaT when the breach was not
        alerted before it happened), ``resolved_at``, ``fired`` (times fired; over 1 is
        a repeat). ``summary``, per rule: ``index_days`` replayed, ``breaches``,
        ``alerted`` (before they happened), ``missed``, ``lead_time_median`` and
        ``lead_time_p10`` (its 10th percentile), ``false_alerts`` (days fired that did
        not breach), ``false_per_index_week``, ``repeats``.

    Raises:
        ValidationError: A rule or ``every`` is not understood, or ``limit`` is not; a
            rule's glob matches no index.

    Example:
        >>> sk.backtest_alerts(sk.History("usage-history")).summary  # doctest: +SKIP
    """
    chosen = _rules(rules)
    step = _every(every)
    check_value_unit(value_unit)
    bins, limits = source_bins(source, value_unit)
    # Each rule is judged on the indexes its glob watches, as the collector evaluates it:
    # the others are given no limit, so they are neither replayed nor counted.
    names = [str(bins.names.get(i, "")) for i in bins.ids]
    if names:
        check_indexes(chosen, names)
    per_rule = [
        np.where(rule.matches(names), day_limits(bins, limits, rule.label, limit), np.nan)
        for rule in chosen
    ]
    return replay_alerts(bins, chosen, per_rule, step, warmup)


def _forecasts(bins: Bins, ref: pf.Reference, tau: float) -> dict[str, np.ndarray]:
    """Used so far and the forecast's centre and band at ``tau`` hours, every day."""
    fc, low, high, _, _ = hour_forecast(bins, ref, tau)
    rest = np.where(fc.usable, fc.rest, np.nan)
    return {
        "used": fc.used,
        "projected": fc.used + rest,
        "projected_low": fc.used + rest * low,
        "projected_high": fc.used + rest * high,
    }


def replay_alerts(
    bins: Bins,
    rules: Sequence[AlertRule],
    limits: Sequence[np.ndarray],
    every: int,
    warmup: int = pf.WINDOW,
) -> AlertBacktest:
    """The alert backtest of binned data: ``limits[k]`` per index for ``rules[k]``;
    ``every`` in nanoseconds (what bench/alerts.py runs)."""
    ref = pf.reference(bins.ops, bins.cov)
    evaluable = ref.complete & (np.arange(bins.days) >= warmup)[None, :]
    ii, jj = np.nonzero(evaluable)
    day_ns = bins.first_day.value + jj.astype(np.int64) * DAY_NS
    cells = len(ii)
    ops = bins.ops[ii, jj]
    outcomes, slots = [], []
    for limit in limits:
        cell_limit = limit[ii]
        hours = pf.crossing(np.zeros(cells), ops, cell_limit, 0.0)
        # Reached at the reset is not a breach, as forecast_limits' hit_at says (NaT).
        hours = np.where(hours < 24.0, hours, np.nan)
        hit = np.where(np.isfinite(hours), day_ns + np.round(hours * 3600) * 10**9, np.nan)
        outcomes.append((cell_limit, np.where(np.isnan(hit), mc.NO_TIME, hit).astype(np.int64)))
        slots.append(mc.Slots.quiet(cells))
    for tau_ns in range(0, DAY_NS, every):
        figures = _forecasts(bins, ref, tau_ns / HOUR_NS)
        now = day_ns + tau_ns
        for rule, (cell_limit, hit_at), state in zip(rules, outcomes, slots, strict=True):
            used = rule.basis == "used"
            value = figures["used" if used else rule.band][ii, jj]
            clear = figures["used" if used else rule.clear][ii, jj]
            finite = np.isfinite(cell_limit) & (cell_limit > 0)
            known = finite & np.isfinite(value) & np.isfinite(clear)
            with np.errstate(invalid="ignore"):
                condition = value >= rule.at * cell_limit
                cleared = clear < rule.at * cell_limit
            hit = np.where(hit_at <= now, hit_at, mc.NO_TIME)
            hit = np.where(finite, hit, mc.NO_TIME)
            pending, hold = rule.pending_ns, rule.hold_ns
            mc.step(state, now, known, condition, hit, pending, hold, cleared)
    frames, rows = [], []
    for rule, (cell_limit, hit_at), state in zip(rules, outcomes, slots, strict=True):
        mc.close(state, day_ns + DAY_NS, hit_at, np.ones(cells, bool))
        frame = _incidents(bins, rule, ii, day_ns, cell_limit, state)
        frames.append(frame)
        rows.append(score(rule, frame, int((np.isfinite(cell_limit) & (cell_limit > 0)).sum())))
    incidents = pd.concat(frames, ignore_index=True)[list(INCIDENT_COLUMNS)]
    return AlertBacktest(incidents, summarise(rows, [r.name for r in rules]))


def summarise(rows: list[dict[str, Any]], names: list[str]) -> pd.DataFrame:
    """The summary frame of :func:`score` rows, one per rule (named ``names``)."""
    summary = pd.DataFrame(rows, index=pd.Index(names, name="rule"))[list(SUMMARY_COLUMNS)]
    for column in ("lead_time_median", "lead_time_p10"):
        summary[column] = summary[column].astype("timedelta64[ns]")
    return summary


def _times(values: np.ndarray) -> pd.DatetimeIndex:
    return pd.DatetimeIndex(values.view("M8[ns]")).tz_localize("UTC")


def _incidents(
    bins: Bins,
    rule: AlertRule,
    ii: np.ndarray,
    day_ns: np.ndarray,
    limit: np.ndarray,
    state: mc.Slots,
) -> pd.DataFrame:
    """One row per index and day that fired or breached."""
    keep = (state.fired > 0) | (state.breached_at != mc.NO_TIME)
    episode, breached = state.episode_at[keep], state.breached_at[keep]
    alerted = (
        (episode != mc.NO_TIME)
        & (breached != mc.NO_TIME)
        & (episode < breached)
        & (state.resolved_at[keep] < episode)
    )
    lead = np.where(alerted, breached - episode, mc.NO_TIME)
    ids = np.asarray(bins.ids, dtype=object)[ii[keep]]
    return pd.DataFrame(
        {
            "index_id": pd.array(ids, dtype="str"),
            "name": pd.array([str(bins.names.get(i, "")) for i in ids], dtype="str"),
            "field": rule.label,
            "day": _times(day_ns[keep]),
            "rule": rule.name,
            "limit": limit[keep],
            "fired_at": _times(state.fired_at[keep]),
            "breached_at": _times(breached),
            "lead_time": pd.TimedeltaIndex(lead.view("m8[ns]")),
            "resolved_at": _times(state.resolved_at[keep]),
            "fired": state.fired[keep].astype(np.int64),
        }
    )


def score(rule: AlertRule, frame: pd.DataFrame, index_days: int) -> dict[str, Any]:
    """One summary row: ``rule``'s incidents (of ``index_days`` replayed) scored."""
    breached = frame["breached_at"].notna()
    alerted = frame["lead_time"].notna()
    lead = frame.loc[alerted, "lead_time"]
    false = int(((frame["fired"] > 0) & ~breached).sum())
    weeks = index_days / 7
    return {
        "basis": rule.basis,
        "at": rule.at,
        "band": rule.band if rule.basis == "forecast" else "",
        "index_days": index_days,
        "breaches": int(breached.sum()),
        "alerted": int(alerted.sum()),
        "missed": int((breached & ~alerted).sum()),
        "lead_time_median": lead.median() if len(lead) else _NO_LEAD,
        "lead_time_p10": lead.quantile(0.1) if len(lead) else _NO_LEAD,
        "false_alerts": false,
        "false_per_index_week": false / weeks if weeks else np.nan,
        "repeats": int((frame["fired"] - 1).clip(lower=0).sum()),
    }


def hit_rates(
    source: Source,
    *,
    index_ids: Sequence[str] | None = None,
    now: Any = None,
    field: str | None = None,
    value_unit: ValueUnit = "per_second",
) -> dict[str, float]:
    """How often each index's forecasts were right in its backtest, for alert messages.

    The share of :func:`~searchkit.backtest_forecast`'s forecasts of the index (made at
    its usual hours of every complete past day before ``now``) whose breach call
    (projected over the limit or not) matched the day's outcome. An index with no
    replayed day is left out.
    """
    results = backtest_forecast(source, field=field, value_unit=value_unit).results
    moment = utc_instant(now, "now")
    if moment is not None:
        results = results[results["period"] < moment.normalize()]
    if index_ids is not None:
        results = results[results["index_id"].isin([str(i) for i in index_ids])]
    results = results[results["projected"].notna() & np.isfinite(results["limit"])]
    outcome = results["used_at_reset"] > results["limit"]
    right = (results["projected"] > results["limit"]) == outcome
    rates = right.groupby(results["index_id"].astype(str)).mean()
    return {str(k): float(v) for k, v in rates.items()}
