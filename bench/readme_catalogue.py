"""The README's benchmark figures: where each is quoted, what it says, which bench key
measures it (``bench/figures.py``), and the range it states.

A figure the README gives as one number is checked against that number +-10%; one it gives
as a range, against the range. ``on_ratio``: the README's number is the ratio to the
baseline measured in the same run (what a shared machine disturbs least), not the time.
``better``: which way is better ("same": decided by the code, not the machine: an accuracy
figure must come out as the README says, to its rounding).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    section: str
    what: str
    readme: str  # what the README says, in its words
    key: str  # the emitted figure ("*": every case, shown as their range)
    range: tuple[float, float] | None  # None: a figure the README does not quote (CPU time)
    baseline: str | None = None  # the key of the figure it is compared with in the same run
    on_ratio: bool = False
    better: str = "lower"  # "higher", "same" or "none" (a baseline's own time)
    unit: str = " s"
    fmt: str = ".2f"


def about(value: float) -> tuple[float, float]:
    """A single figure: within 10% of it."""
    return (value * 0.9, value * 1.1)


def rounded(value: float, digits: int) -> tuple[float, float]:
    """A figure given to ``digits`` decimals: what rounds to it."""
    half = 0.5 * 10**-digits * 1.001  # 2.635 is given as 2.64: the half is in
    return (value - half, value + half)


def job_of(key: str) -> str:
    """The runner's job whose script emits ``key``."""
    if key.startswith("forecast.accuracy") or key.startswith("forecast.trace"):
        return "accuracy"
    if key.startswith("alerts.accuracy"):
        return "alerts-accuracy"
    if key.startswith("history.collect_empty"):
        return "collect"
    if key.startswith("today.rounds"):
        return "midnight"
    return key.split(".")[0]


S = "Development: start-up"
P = "Benchmark figures: parsing"
W = "From the wire"
H = "Usage history at scale"
F = "Forecast: speed"
A = "Forecast: accuracy"
T = "Forecast: each real trace"
AL = "Alerts: why the default rule"
AS = "Alerts: speed"
S3 = "History on S3"
TD = "History: today's rollup"
PR = "Row-group pruning"
L = "The layout 10-minute collects leave"
Y = "A year"

FIGURES: list[Figure] = [
    Figure(
        S,
        "python -c pass (the baseline)",
        "38 ms",
        "startup.pass",
        about(38),
        None,
        better="none",
        unit=" ms",
        fmt=".0f",
    ),
    Figure(
        S,
        "import searchkit",
        "40 ms",
        "startup.import",
        about(40),
        "startup.pass",
        unit=" ms",
        fmt=".0f",
    ),
    Figure(
        S,
        "searchkit --help",
        "102 ms",
        "startup.help",
        about(102),
        "startup.pass",
        unit=" ms",
        fmt=".0f",
    ),
]
CPU = "(CPU time; not in the README)"
for case in ("import", "help"):  # the same, in CPU time: what a busy machine disturbs least
    FIGURES.append(
        Figure(
            S,
            f"{case}: CPU",
            CPU,
            f"startup.{case}.cpu",
            None,
            "startup.pass.cpu",
            unit=" ms",
            fmt=".0f",
        )
    )

for points, loads, frame, ratio, naive, speedup in (
    (10_000, 0.004, 0.005, 1.29, 0.039, 8.6),
    (100_000, 0.047, 0.025, 0.53, 0.514, 20.7),
    (1_000_000, 0.547, 0.254, 0.46, None, None),
):
    FIGURES += [
        Figure(
            P,
            f"json.loads, {points:,} points",
            f"{loads} s",
            f"throughput.loads.{points}",
            rounded(loads, 3),
            better="none",
            fmt=".3f",
        ),
        Figure(
            P,
            f"throughput_frame / json.loads, {points:,}",
            f"{frame} s, ratio {ratio}",
            f"throughput.frame.{points}",
            about(ratio),
            f"throughput.loads.{points}",
            on_ratio=True,
            fmt=".3f",
        ),
    ]
    FIGURES.append(
        Figure(
            P,
            f"the same, CPU time, {points:,}",
            CPU,
            f"throughput.frame.{points}.cpu",
            None,
            f"throughput.loads.{points}.cpu",
            on_ratio=True,
            fmt=".3f",
        )
    )
    if naive is not None:
        FIGURES.append(
            Figure(
                P,
                f"naive pandas / throughput_frame, {points:,}",
                f"{naive} s, {speedup}x",
                f"throughput.naive.{points}",
                about(speedup),
                f"throughput.frame.{points}",
                on_ratio=True,
                better="higher",
                fmt=".3f",
            )
        )

FIGURES += [
    Figure(
        W,
        "list + frame CPU / requests.get().json(), 1,000 x 1,440",
        "0.53x (0.564 s against 1.071 s; quiet, load 1-3)",
        "list.cpu.ours.1000",
        about(0.53),
        "list.cpu.get_json.1000",
        on_ratio=True,
        fmt=".3f",
    ),
    Figure(
        W,
        "the same, ebb8985 (before the redesign)",
        "0.58x in the same run",
        "list.cpu.ebb8985.ours.1000",
        about(0.58),
        "list.cpu.ebb8985.get_json.1000",
        on_ratio=True,
        better="none",
        fmt=".3f",
    ),
    Figure(
        W,
        "list + frame CPU / requests.get().json(), 5,000",
        "0.47x-0.53x",
        "list.cpu.ours.5000",
        (0.47, 0.53),
        "list.cpu.get_json.5000",
        on_ratio=True,
        fmt=".3f",
    ),
    Figure(
        W,
        "the same, ebb8985, 5,000",
        "0.51x",
        "list.cpu.ebb8985.ours.5000",
        about(0.51),
        "list.cpu.ebb8985.get_json.5000",
        on_ratio=True,
        better="none",
        fmt=".3f",
    ),
    Figure(
        W,
        "wall time ratio, 1,000 (quiet)",
        "0.38x",
        "list.wall_ratio.1000",
        about(0.38),
        unit="x",
    ),
    Figure(
        W,
        "bytes per point the list holds",
        "25.8",
        "list.bytes_per_point",
        about(25.8),
        unit=" B",
        fmt=".1f",
    ),
    Figure(
        W, "peak while listing / the answer", "1.65x", "list.peak_x_body", about(1.65), unit="x"
    ),
    Figure(
        H,
        "one index x 30 days vs DuckDB",
        "328 ms vs 303 ms, 1.08x",
        "history.one-index.ms",
        about(1.08),
        "history.one-index.duckdb_ms",
        on_ratio=True,
        unit=" ms",
        fmt=".0f",
    ),
    Figure(
        H,
        "one index x 30 days: memory",
        "+61 MiB (DuckDB +72)",
        "history.one-index.mib",
        about(61),
        "history.one-index.duckdb_mib",
        unit=" MiB",
        fmt=".0f",
    ),
    Figure(
        H,
        "all indexes x one day vs DuckDB",
        "739 ms vs 3,717 ms, 0.20x",
        "history.one-day.ms",
        about(0.20),
        "history.one-day.duckdb_ms",
        on_ratio=True,
        unit=" ms",
        fmt=".0f",
    ),
    Figure(
        H,
        "all indexes x one day: memory",
        "+266 MiB (DuckDB +934)",
        "history.one-day.mib",
        about(266),
        "history.one-day.duckdb_mib",
        unit=" MiB",
        fmt=".0f",
    ),
    Figure(
        H,
        "usage_frame, 43.2M points, no rollups",
        "13.4 s (12.3 s when last measured)",
        "history.usage.s",
        (12.3, 13.4),
        fmt=".1f",
    ),
    Figure(
        H,
        "usage_frame: memory",
        "+1,618 MiB (+757 MiB when last measured)",
        "history.usage.mib",
        (757, 1618),
        unit=" MiB",
        fmt=".0f",
    ),
    Figure(
        H,
        "collect, steady round, 1,000 indexes on 28 days (collect_steady.py; runs' medians)",
        "1.12-1.18 s",
        "steady.wall",
        (1.12, 1.18),
    ),
    Figure(H, "the same round's CPU (median of 15)", "1.33 s of CPU", "steady.cpu", about(1.33)),
    Figure(
        H,
        "its CPU / one plain list's CPU",
        "1.26x",
        "steady.vs_list",
        about(1.26),
        unit="x",
    ),
    Figure(
        H,
        "its CPU / 22d64ca's, by the medians of all rounds",
        "0.992x",
        "steady.vs_baseline",
        about(0.992),
        unit="x",
        fmt=".3f",
    ),
    Figure(
        H,
        "on disk, MiB per million points",
        "3.8",
        "history.disk_mib_per_million",
        about(3.8),
        unit=" MiB",
    ),
    Figure(
        H,
        "forecast_limits at 14 days (row of the table)",
        "0.37 s; 0.23x the read (1.58 s)",
        "forecast.limits.s",
        about(0.23),
        "forecast.limits.plain_s",
        on_ratio=True,
    ),
    Figure(
        F,
        "forecast_limits, 14 days, as collect leaves it",
        "0.37 s, 0.23x pq.read_table (1.58 s); 22d64ca 0.35 s, 0.23x",
        "forecast.limits.s",
        about(0.23),
        "forecast.limits.plain_s",
        on_ratio=True,
    ),
    Figure(
        F,
        "forecast_limits from the points alone",
        "1.56 s, 0.99x the read (22d64ca 1.91 s, 1.25x)",
        "forecast.limits_points.s",
        about(0.99),
        "forecast.limits.plain_s",
        on_ratio=True,
    ),
    Figure(
        F,
        "writing a day's rollup, 1,000 indexes",
        "about 0.20 s",
        "forecast.rollup_per_day.s",
        about(0.20),
    ),
    Figure(
        F,
        "backtest_forecast, 1,000 x 28 days x 7 hours",
        "1.54 s, 1.52 s of CPU (22d64ca 4.15 s)",
        "forecast.backtest.s",
        about(1.54),
    ),
]

FIGURES += [
    Figure(
        H,
        "one index x 30 days, CPU",
        CPU,
        "history.one-index.cpu_ms",
        None,
        "history.one-index.duckdb_cpu_ms",
        unit=" ms",
        fmt=".0f",
    ),
    Figure(
        H,
        "all indexes x one day, CPU",
        CPU,
        "history.one-day.cpu_ms",
        None,
        "history.one-day.duckdb_cpu_ms",
        unit=" ms",
        fmt=".0f",
    ),
    Figure(H, "usage_frame, 43.2M points, CPU", CPU, "history.usage.cpu", None, fmt=".1f"),
]

FIGURES += [
    Figure(
        F,
        "forecast_limits, 14 days, CPU",
        CPU,
        "forecast.limits.cpu",
        None,
        "forecast.limits.plain_cpu",
        on_ratio=True,
    ),
    Figure(
        F,
        "forecast_limits from the points, CPU",
        CPU,
        "forecast.limits_points.cpu",
        None,
        "forecast.limits.plain_cpu",
        on_ratio=True,
    ),
    Figure(F, "backtest_forecast, CPU", CPU, "forecast.backtest.cpu", None),
]

for name, label, mean, median, f1, coverage in (
    ("real", "real traces", 7.8, 2.3, 0.866, 78.8),
    ("synthetic", "synthetic traces", 4.5, 1.4, 0.919, 81.0),
):
    key = f"forecast.accuracy.{name}.forecast"
    FIGURES += [
        Figure(
            A,
            f"{label}: forecast mean error",
            f"{mean}%",
            f"{key}.mean_error",
            rounded(mean, 1),
            better="same",
            unit="%",
            fmt=".1f",
        ),
        Figure(
            A,
            f"{label}: forecast median error",
            f"{median}%",
            f"{key}.median_error",
            rounded(median, 1),
            better="same",
            unit="%",
            fmt=".1f",
        ),
        Figure(
            A,
            f"{label}: forecast breach F1",
            f"{f1}",
            f"{key}.f1",
            rounded(f1, 3),
            better="same",
            unit="",
            fmt=".3f",
        ),
        Figure(
            A,
            f"{label}: 10-90 coverage",
            f"{coverage}%",
            f"{key}.coverage",
            rounded(coverage, 1),
            better="same",
            unit="%",
            fmt=".1f",
        ),
    ]
for name, label, mean, median, f1 in (
    ("real", "real traces", 12.4, 4.6, 0.825),
    ("synthetic", "synthetic traces", 7.9, 3.6, 0.882),
):
    key = f"forecast.accuracy.{name}.best_baseline"
    FIGURES += [
        Figure(
            A,
            f"{label}: best baseline mean error",
            f"{mean}%",
            f"{key}.mean_error",
            rounded(mean, 1),
            better="same",
            unit="%",
            fmt=".1f",
        ),
        Figure(
            A,
            f"{label}: best baseline median error",
            f"{median}%",
            f"{key}.median_error",
            rounded(median, 1),
            better="same",
            unit="%",
            fmt=".1f",
        ),
        Figure(
            A,
            f"{label}: best baseline F1",
            f"{f1}",
            f"{key}.f1",
            rounded(f1, 3),
            better="same",
            unit="",
            fmt=".3f",
        ),
    ]
for trace, label, ratio, f1_diff, coverage in (
    ("nab_elb_request_count_8c0756", "load balancer", 0.77, 0.009, 82),
    ("nab_nyc_taxi", "taxi", 0.67, 0.028, 75),
    ("nab_twitter_volume_aapl", "Twitter AAPL", 0.56, 0.009, 82),
    ("nab_twitter_volume_goog", "Twitter GOOG", 0.75, 0.014, 80),
    ("taylor_electricity_demand", "electricity", 0.32, 0.061, 79),
    ("uci_bike_sharing_dc_hourly", "bike rentals", 1.06, 0.006, 89),
    ("synthetic", "synthetic", 0.57, 0.037, 81),
):
    key = f"forecast.trace.{trace}"
    FIGURES += [
        Figure(
            T,
            f"{label}: mean error / best baseline's",
            f"{ratio}x",
            f"{key}.mae_ratio",
            rounded(ratio, 2),
            better="same",
            unit="x",
        ),
        Figure(
            T,
            f"{label}: F1 - best baseline's",
            f"{f1_diff:+}",
            f"{key}.f1_diff",
            rounded(f1_diff, 3),
            better="same",
            unit="",
            fmt="+.3f",
        ),
        Figure(
            T,
            f"{label}: coverage",
            f"{coverage}%",
            f"{key}.coverage",
            rounded(coverage, 0),
            better="same",
            unit="%",
            fmt=".0f",
        ),
    ]

for level, rule, label, alerted, lead, p10, false in (
    ("median", "default", "default (forecast band)", 218, 13.9, 1.6, 0.23),
    ("median", "used50", "used >= 50%", 218, 8.5, 5.7, 3.31),
    ("median", "used70", "used >= 70%", 218, 4.6, 3.0, 2.94),
    ("median", "used80", "used >= 80%", 218, 3.0, 2.1, 2.64),
    ("median", "used90", "used >= 90%", 217, 1.5, 1.0, 1.62),
    ("p80", "default", "p80 limits: default", 85, 12.2, None, 0.21),
    ("p80", "used90", "p80 limits: used >= 90%", 85, 1.5, None, 2.44),
):
    key = f"alerts.accuracy.{level}.{rule}"
    digits = 1 if level == "p80" and rule == "used90" else 2
    FIGURES += [
        Figure(
            AL,
            f"{label}: breaches alerted before",
            f"{alerted}",
            f"{key}.alerted",
            rounded(alerted, 0),
            better="same",
            unit="",
            fmt=".0f",
        ),
        Figure(
            AL,
            f"{label}: median lead (h)",
            f"{lead}",
            f"{key}.lead_median",
            rounded(lead, 1),
            better="same",
            unit=" h",
            fmt=".1f",
        ),
        Figure(
            AL,
            f"{label}: false alerts per index-week",
            f"{false}",
            f"{key}.false_per_week",
            rounded(false, digits),
            better="same",
            unit="",
            fmt=".3f",
        ),
    ]
    if p10 is not None:
        FIGURES.append(
            Figure(
                AL,
                f"{label}: 10th pct lead (h)",
                f"{p10}",
                f"{key}.lead_p10",
                rounded(p10, 1),
                better="same",
                unit=" h",
                fmt=".1f",
            )
        )

FIGURES += [
    Figure(
        AS,
        "backtest_alerts, 1,000 x 28 days, every 10 min",
        "28 s (target 60 s)",
        "alerts.backtest.s",
        about(28),
        fmt=".1f",
    ),
    Figure(
        AS,
        "evaluating the rules after a collect round",
        "0.34 s, adds 9%",
        "alerts.evaluate.s",
        about(0.34),
    ),
    Figure(
        AS,
        "the evaluation's share of the round",
        "9%",
        "alerts.evaluate.share",
        about(9),
        unit="%",
        fmt=".0f",
    ),
    Figure(
        AS,
        "the whole alert round's share of the collect round",
        "14% (0.20 s after 1.45 s)",
        "alerts.round.share",
        about(14),
        unit="%",
        fmt=".0f",
    ),
    Figure(AS, "the alert round", "0.20 s", "alerts.round.s", about(0.20)),
    Figure(AS, "the collect round it follows", "1.45 s", "alerts.round.collect_s", about(1.45)),
    Figure(
        AS,
        "journal, records and delivery",
        "0.01 s",
        "alerts.round.rest_s",
        (0.0, 0.015),
        fmt=".3f",
    ),
    Figure(
        S3,
        "forecast_limits: requests",
        "35 (22d64ca 39)",
        "s3.forecast_limits.requests",
        rounded(35, 0),
        better="lower",
        unit="",
        fmt=".0f",
    ),
    Figure(
        S3,
        "forecast_limits on S3",
        "0.23 s (22d64ca 0.28 s)",
        "s3.forecast_limits.s3",
        (0.23 * 0.9, 0.23 * 1.1),
        "s3.forecast_limits.local",
    ),
    Figure(
        S3,
        "forecast_limits on S3: CPU",
        "0.13 s (0.19 s)",
        "s3.forecast_limits.s3_cpu",
        (0.13 * 0.9, 0.13 * 1.1),
        "s3.forecast_limits.local_cpu",
    ),
    Figure(
        S3,
        "usage_frame: requests",
        "33 (37)",
        "s3.usage_frame.requests",
        rounded(33, 0),
        unit="",
        fmt=".0f",
    ),
    Figure(
        S3,
        "usage_frame on S3",
        "0.22 s (0.23 s)",
        "s3.usage_frame.s3",
        (0.22 * 0.9, 0.22 * 1.1),
        "s3.usage_frame.local",
    ),
    Figure(
        S3,
        "usage_frame on S3: CPU",
        "0.13 s (0.13 s)",
        "s3.usage_frame.s3_cpu",
        (0.13 * 0.9, 0.13 * 1.1),
        "s3.usage_frame.local_cpu",
    ),
    Figure(
        S3,
        "info(): requests",
        "29 (29)",
        "s3.info.requests",
        rounded(29, 0),
        unit="",
        fmt=".0f",
    ),
    Figure(
        S3,
        "info() on S3",
        "0.13 s (0.52 s)",
        "s3.info.s3",
        (0.13 * 0.9, 0.13 * 1.1),
        "s3.info.local",
    ),
    Figure(
        S3,
        "info() on S3: CPU",
        "0.06 s (0.41 s)",
        "s3.info.s3_cpu",
        (0.06 * 0.9, 0.06 * 1.1),
        "s3.info.local_cpu",
    ),
    Figure(
        S3,
        "the year on S3: usage_frame requests",
        "67",
        "s3year.usage_frame.requests",
        rounded(67, 0),
        unit="",
        fmt=".0f",
    ),
    Figure(
        S3,
        "the year on S3: usage_frame, UTC",
        "1.41 s on S3 in UTC",
        "s3year.usage_frame.s3",
        about(1.41),
        "s3year.usage_frame.local",
    ),
    Figure(
        S3,
        "the year on S3: usage_frame, UTC: CPU",
        "1.25 s of CPU",
        "s3year.usage_frame.s3_cpu",
        about(1.25),
    ),
    Figure(
        S3,
        "the year on S3: usage_frame, every zone: the server's CPU",
        "0.38-0.54 s",
        "s3year.usage_frame.*.server_cpu",
        (0.38 * 0.9, 0.54 * 1.1),
    ),
    Figure(
        S3,
        "the year on S3: forecast_limits requests",
        "47",
        "s3year.forecast_limits.requests",
        rounded(47, 0),
        unit="",
        fmt=".0f",
    ),
    Figure(
        S3,
        "the year on S3: forecast_limits, every zone",
        "0.54-0.56 s",
        "s3year.forecast_limits.*.s3",
        (0.54 * 0.9, 0.56 * 1.1),
    ),
    Figure(
        S3,
        "the year on S3: info() requests",
        "64",
        "s3year.info.requests",
        rounded(64, 0),
        unit="",
        fmt=".0f",
    ),
    Figure(
        S3,
        "the year on S3: info()",
        "0.87 s",
        "s3year.info.s3",
        about(0.87),
    ),
    Figure(
        TD,
        "usage_frame at 23:50, today from its rollup",
        "0.19 s (0.70 s from its points)",
        "today.usage.rollup",
        about(0.19),
        "today.usage.points",
    ),
    Figure(
        TD,
        "forecast_limits at 23:50, today from its rollup",
        "0.27 s (0.55 s from its points)",
        "today.forecast.rollup",
        about(0.27),
        "today.forecast.points",
    ),
    Figure(
        TD,
        "keeping today's rollup current, a round",
        "36 ms",
        "today.round_rollup.median",
        about(0.036),
        fmt=".3f",
    ),
    Figure(
        TD,
        "the round across midnight / one plain list, wall",
        "1.24-1.27x",
        "today.rounds.midnight",
        (1.24, 1.27),
        unit="x",
    ),
    Figure(
        TD,
        "the round across midnight / one plain list, CPU",
        "1.18-1.23x",
        "today.rounds.midnight_cpu",
        (1.18, 1.23),
        unit="x",
    ),
    Figure(
        TD,
        "the merge the midnight round leaves on its thread, CPU",
        "0.56-0.64 s",
        "today.rounds.merge_cpu",
        (0.56, 0.64),
    ),
    Figure(
        PR,
        "choosing row groups, the walk (cold), every case",
        "1.0-2.4 ms",
        "pruning.walk_cold.*",
        (1.0, 2.4),
        unit=" ms",
    ),
    Figure(
        PR,
        "ParquetFileFragment.subset (cold), every case",
        "8-152 ms",
        "pruning.subset_cold.*",
        (8, 152),
        better="none",
        unit=" ms",
        fmt=".1f",
    ),
    Figure(
        PR,
        "subset / walk, every case",
        "5-79x",
        "pruning.ratio_cold.*",
        (5, 79),
        better="higher",
        unit="x",
        fmt=".1f",
    ),
    Figure(
        L,
        "usage_frame, uncompacted (collector's rollups)",
        "0.65 s, +59 MiB",
        "layouts.rolled.s",
        about(0.65),
        "layouts.compacted.s",
    ),
    Figure(
        L, "the same / compacted", "1.29x", "layouts.rolled_vs_compacted", about(1.29), unit="x"
    ),
    Figure(
        L,
        "usage_frame, after compact() (rollups)",
        "0.50 s, +58 MiB",
        "layouts.compacted.s",
        about(0.50),
        "layouts.plain.s",
    ),
    Figure(
        L,
        "usage_frame, after compact(): memory",
        "+58 MiB",
        "layouts.compacted.mib",
        about(58),
        unit=" MiB",
        fmt=".0f",
    ),
    Figure(
        L,
        "MiB per million points, uncompacted",
        "4.21",
        "layouts.mib_per_million.before",
        about(4.21),
        unit=" MiB",
    ),
    Figure(
        L,
        "MiB per million points, compacted",
        "3.83",
        "layouts.mib_per_million.after",
        about(3.83),
        unit=" MiB",
    ),
    Figure(
        L,
        "steady collect round / one plain list (--collect, median of 7)",
        "1.23x-1.37x (2 runs)",
        "history.collect_empty.vs_list",
        (1.23, 1.37),
        unit="x",
    ),
    Figure(
        L,
        "the collector's rollups of 30 days, at once",
        "28.6 s",
        "layouts.refresh.s",
        about(28.6),
        fmt=".1f",
    ),
    Figure(
        L,
        "usage_frame without rollups",
        "48.75 s",
        "layouts.uncompacted_bare.s",
        about(48.75),
        fmt=".1f",
    ),
    Figure(
        L,
        "plain pyarrow + pandas day totals (the floor)",
        "29.1 s",
        "layouts.plain.s",
        about(29.1),
        better="none",
        fmt=".1f",
    ),
    Figure(
        Y, "the store on disk", "2.53 GiB", "year.disk_gib", about(2.53), better="none", unit=" GiB"
    ),
    Figure(
        Y, "usage_frame(hist), UTC", "0.90-1.42 s", "year.usage.s", (0.90 - 0.005, 1.42 + 0.005)
    ),
    Figure(
        Y,
        "usage_frame, UTC: memory",
        "+268-304 MiB",
        "year.usage.mib",
        (268 - 0.5, 304 + 0.5),
        unit=" MiB",
        fmt=".0f",
    ),
    Figure(
        Y, "usage_frame, UTC: CPU", "1.01-1.64 s", "year.usage.cpu", (1.01 - 0.005, 1.64 + 0.005)
    ),
]
# Wall and CPU seconds and memory each zone took, as printed (a range holds what rounds to
# it; quiet, load 2.8 -> 1.9, 2026-11-27; make bench ONLY=year-usage BASE=732bb4b).
for zone, wall, cpu, mib in (
    ("America/New_York", (1.40, 1.97), (1.36, 1.40), (303, 312)),
    ("Asia/Kolkata", (2.16, 2.17), (2.29, 2.34), (488, 540)),
    ("Pacific/Chatham", (2.22, 2.35), (2.39, 2.55), (426, 546)),
):
    FIGURES += [
        Figure(
            Y,
            f"usage_frame, {zone}",
            f"{wall[0]:.2f}-{wall[1]:.2f} s",
            f"year.usage.{zone}.s",
            (wall[0] - 0.005, wall[1] + 0.005),
        ),
        Figure(
            Y,
            f"usage_frame, {zone}: memory",
            f"+{mib[0]}-{mib[1]} MiB",
            f"year.usage.{zone}.mib",
            (mib[0] - 0.5, mib[1] + 0.5),
            unit=" MiB",
            fmt=".0f",
        ),
        Figure(
            Y,
            f"usage_frame, {zone}: CPU",
            f"{cpu[0]:.2f}-{cpu[1]:.2f} s",
            f"year.usage.{zone}.cpu",
            (cpu[0] - 0.005, cpu[1] + 0.005),
        ),
    ]
for what, label, cases in (
    (
        "plot",
        "plot_utilization drawn",
        (("", (1.45, 1.92), (1.52, 1.58)), ("America/New_York", (1.79, 2.60), (1.77, 1.85)),
         ("Asia/Kolkata", (2.61, 2.90), (2.76, 3.04)),
         ("Pacific/Chatham", (2.66, 2.86), (2.83, 3.02))),
    ),
    (
        "cockpit",
        "quota_cockpit ready",
        (("", (1.28, 1.31), (1.28, 1.33)), ("America/New_York", (1.14, 1.74), (1.18, 1.79)),
         ("Asia/Kolkata", (1.21, 1.42), (1.26, 1.46)),
         ("Pacific/Chatham", (1.26, 1.28), (1.29, 1.32))),
    ),
):  # fmt: skip
    for zone, wall, cpu in cases:
        key = f"year.{what}" + (f".{zone}" if zone else "")
        FIGURES += [
            Figure(
                Y,
                f"{label}, {zone or 'UTC'}",
                f"{wall[0]:.2f}-{wall[1]:.2f} s",
                f"{key}.s",
                (wall[0] - 0.005, wall[1] + 0.005),
            ),
            Figure(
                Y,
                f"{label}, {zone or 'UTC'}: CPU",
                f"{cpu[0]:.2f}-{cpu[1]:.2f} s",
                f"{key}.cpu",
                (cpu[0] - 0.005, cpu[1] + 0.005),
            ),
        ]
FIGURES += [
    Figure(Y, "History.info()", "1.12 s (22d64ca 86.05 s)", "year.info.s", about(1.12)),
    Figure(
        Y,
        "History.info(): memory",
        "+220 MiB",
        "year.info.mib",
        about(220),
        unit=" MiB",
        fmt=".0f",
    ),
    Figure(Y, "forecast_limits(hist)", "0.79 s", "year.forecast.s", about(0.79)),
    Figure(
        Y,
        "forecast_limits: memory",
        "+254 MiB",
        "year.forecast.mib",
        about(254),
        unit=" MiB",
        fmt=".0f",
    ),
    Figure(
        Y,
        "forecast_limits / pq.read_table of its 41 days",
        "0.38x (2.06 s)",
        "year.forecast.s",
        about(0.38),
        "year.forecast.plain_s",
        on_ratio=True,
    ),
    Figure(
        Y,
        "forecast_limits / History.throughput of them",
        "0.11x (7.19 s)",
        "year.forecast.s",
        about(0.11),
        "year.forecast.read_s",
        on_ratio=True,
    ),
    Figure(Y, "throughput(start='2026-06-01') refused", "in 0.13 s", "year.refusal.s", about(0.13)),
]

#: README figures that `make bench` does not produce, and why.
NOT_PRODUCED: list[tuple[str, str]] = [
    (
        "From the wire at 10M points (25.8 bytes a point, peak 1.47x a 560 MiB answer)",
        "run on its own: bench/list.py --indexes 1000 --memory-indexes 6945 (about 2 GB)",
    ),
    (
        "Start-up before lazy loading (540, 565 ms); forecast_limits before the arrays "
        "(7.4-7.7 s, 16.3 s); backtest_forecast from the points (4.4-5.7 s) and before the "
        "arrays (14.4-14.7 s)",
        "history: code long gone, kept as the README's record",
    ),
    (
        "The layout table's 'before' column (94.5 s, 28 s, 4,320 files, 10.4 / 4.0, 3.2x) "
        "and its 'limits snapshot files, 30 days: 1'",
        "measured on code before rollups, not in the same run (the README says so); the "
        "file count is not timed",
    ),
    (
        "S3 before requests were counted (181 requests, 110 of them LISTs; 386), before a "
        "midnight forecast read each rollup once (65) and a call each limits file once (37), "
        "and the requests per call on D days; the figures with 20 ms a request "
        "(bench/s3.py --baseline SRC --rounds 2 --latency 20)",
        "the code before those changes; the counts per call are tests "
        "(tests/history/test_history_requests.py), not timings",
    ),
    (
        "Alerts 'before' (49%, 2.26 s; 62%, 1.80 s); the synthetic traces' 5 of 423 late "
        "breaches; Twitter's 2.1 h against 1.4 h",
        "history (before today's rollup); per-family lines bench/alerts.py --accuracy "
        "prints, not checked here",
    ),
    (
        "usage_frame on the year with every rollup rejected (+0.55 GiB, 67 s of CPU; +16.5 GiB "
        "before)",
        "measured by hand (notes/today.md): make bench's year refuses a store whose rollups "
        "it would not take",
    ),
    (
        "S3 with 50 ms a request, 200 indexes x 90 days: usage_frame 1.87-2.18 s fetching 32 "
        "files at a time against 3.00-3.20 s at 8",
        "bench/s3.py --latency 50 --days 90 measures the first; the second needs "
        "history/reader.py's _READERS set to 8: how 32 was chosen, kept as the record",
    ),
    (
        "The column-projected ranged read on S3 (25 KB of each 680 KB rollup, 32 MB against "
        "240 MB; moto 2.4-2.5 s of CPU against 2.0-2.3 s) and moto's cost per request (2.4 ms "
        "a HEAD, 2.5-2.9 ms a GET)",
        "an experiment on code not adopted (2026-11-27, not kept in the code); the server's CPU "
        "per call is printed by bench/s3.py --store as 'server'",
    ),
    (
        "statsmodels ETS/STL (3.0% and 3.3% against 1.9%, 0.2 s a fit)",
        "bench/forecast.py --statsmodels needs statsmodels, not a dependency",
    ),
    (
        "Each real trace's 'before' and the 'tried and dropped' figures",
        "history: earlier versions of the forecaster",
    ),
    (
        "The year's 'before' (22d64ca) figures; 21.1 s, +1.6 GiB before the rollup hours",
        "the year job's own --baseline with BASE=22d64ca and --year-base-store; the last "
        "is history",
    ),
]
