"""``searchkit forecast --store LOCATION [--backtest]`` on a collected history."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

import searchkit as sk
from searchkit.cli.forecast import forecast_text, stale_note
from searchkit.cli.main import main
from searchkit.emulator import Emulator


def test_forecast_prints_today_per_index_and_the_backtest_summary(tmp_path, capsys):
    start = dt.datetime(2026, 11, 10, tzinfo=dt.timezone.utc)
    hist = sk.History(tmp_path / "h")
    with Emulator(demo=True, seed=2026, clock=start, window_minutes=1440) as emu:
        with emu.client() as client:
            for _ in range(9):
                emu.advance(86_400)
                hist.collect(client, now=emu.now())
            emu.advance(9 * 3600)
            hist.collect(client, now=emu.now())

    assert main(["forecast", "--store", str(tmp_path / "h"), "--backtest"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:12] == [
        "forecast as of 2026-11-19 09:00 UTC, to the reset at 2026-11-20 00:00 UTC; "
        "max_daily_queries+max_daily_updates (operations)",
        "2 of 6 indexes hit their limit before the reset; the most urgent first",
        "",
        "index                  used   projected               10-90 band      limit  "
        "projected %  hits the limit at",
        # past the limit since 06:32, so first; then the one that hits it later today
        "support-tickets      24,853      49,849          49,102 - 50,867     20,000         "
        "249%  since 06:32",
        "code-snippets         8,973      28,065          26,447 - 30,806     20,000         "
        "140%  19:35 (earliest 18:48)",
        # under its limit: by projected share
        "product-catalog       8,824      17,641          17,149 - 18,094     20,000          "
        "88%  not before the reset",
        # unlimited: no share of a limit, no hit time; by name
        "docs-search         121,725     493,934        430,427 - 619,801  unlimited    unlimited  "
        "—",
        "legal-contracts     247,949     578,502        550,283 - 633,369  unlimited    unlimited  "
        "—",
        "news-archive     17,188,099  55,027,804  51,556,779 - 57,852,987  unlimited    unlimited  "
        "—",
        "",
        "notes:",
    ]
    assert out[12] == (
        "  all 6 indexes: band from only 8 past day(s) at this hour (9 or more calibrate it): "
        "widened"
    )
    # the store ends on 2026-11-19, days before the wall clock's today (how long ago varies)
    assert out[14].startswith("note: the history ends at 2026-11-19 09:00 UTC, ")
    assert out[14].endswith(" ago: this is the forecast for that day; collect to forecast today")
    assert out[16].startswith("backtest: 84 past forecasts replayed")
    methods = [line.split()[0] for line in out[-5:]]
    assert methods == ["forecast", "last_hour_pace", "yesterday", "mean_7_days", "ratio_7_days"]
    # Not every method scores F1 1.00 (all did when the free indexes ran at 87x their limit)
    assert [line.split()[6] for line in out[-5:]] == ["1.00", "0.81", "1.00", "1.00", "1.00"]
    # "used" is the day's points so far, each value x 60 s
    points = hist.throughput(start="2026-11-19", end="2026-11-19 09:00")
    used = (points["value"] * 60).groupby(points["name"], observed=True).sum()
    assert [f"{used[name]:,.0f}" for name in ("support-tickets", "product-catalog")] == [
        "24,853",
        "8,824",
    ]


def test_forecast_of_an_empty_store_says_so(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["forecast", "--store", str(tmp_path / "empty"), "--backtest"]) == 0
    assert capsys.readouterr().out == (
        "no indexes in the history\n\nbacktest: no past day to replay yet (a complete day is "
        "replayed once 7 days are stored before it)\n"
    )


def test_forecast_of_a_missing_store_is_an_error_naming_it(tmp_path, capsys):
    missing = str(tmp_path / "typo")
    assert main(["forecast", "--store", missing]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"searchkit: no history at {missing!r}: nothing is there (collect into it first). "
        "[HistoryError]\n"
    )


def test_forecast_of_an_empty_location_is_a_usage_error_naming_the_option(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["forecast", "--store", ""])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "searchkit forecast: error: argument --store: location is empty: give a folder, or an "
        "s3://BUCKET/PREFIX URL (an empty location would write into the current folder)"
    )


def _forecast(rows: list[dict[str, object]]) -> pd.DataFrame:
    as_of = pd.Timestamp("2026-11-19 09:00", tz="UTC")
    frame = pd.DataFrame(rows)
    frame["projected_low"] = frame["projected"] * 0.9
    frame["projected_high"] = frame["projected"] * 1.1
    frame["projected_utilization"] = frame["projected"] / frame["limit"]
    for column in ("hit_at", "hit_at_earliest"):
        frame[column] = pd.to_datetime(frame[column], utc=True, format="ISO8601")
    return frame.assign(
        as_of=as_of,
        reset=pd.Timestamp("2026-11-20", tz="UTC"),
        field="max_daily_queries+max_daily_updates",
    )


def test_forecast_text_shows_the_most_urgent_and_counts_the_rest():
    inf, nat = float("inf"), None
    forecast = _forecast(
        [
            # name, used, projected, limit, hit_at, hit_at_earliest, reason
            dict(
                name="calm",
                used=10.0,
                projected=50.0,
                limit=1000.0,
                hit_at=nat,
                hit_at_earliest=nat,
                reason="",
            ),
            dict(
                name="文書検索",
                used=900.0,
                projected=3000.0,
                limit=1000.0,
                hit_at="2026-11-19 12:00:30",
                hit_at_earliest="2026-11-19 12:00:10",
                reason="stale",
            ),
            dict(
                name="busy\x1b[2J",
                used=2000.0,
                projected=4000.0,
                limit=1000.0,
                hit_at="2026-11-19 03:00",
                hit_at_earliest="2026-11-19 02:00",
                reason="stale",
            ),
            dict(
                name="warm",
                used=400.0,
                projected=800.0,
                limit=1000.0,
                hit_at=nat,
                hit_at_earliest="2026-11-19 23:00",
                reason="stale",
            ),
            dict(
                name="free",
                used=1.0,
                projected=2.0,
                limit=inf,
                hit_at=nat,
                hit_at_earliest=nat,
                reason="",
            ),
        ]
    )
    assert forecast_text(forecast, shown=3).splitlines() == [
        "forecast as of 2026-11-19 09:00 UTC, to the reset at 2026-11-20 00:00 UTC; "
        "max_daily_queries+max_daily_updates (operations)",
        "2 of 5 indexes hit their limit before the reset; the most urgent first",
        "",
        "index         used  projected     10-90 band  limit  projected %  hits the limit at",
        "busy\\x1b[2J  2,000      4,000  3,600 - 4,400  1,000         400%  "
        "since 03:00 (earliest 02:00)",
        "文書検索       900      3,000  2,700 - 3,300  1,000         300%  12:00",
        "warm           400        800      720 - 880  1,000          80%  not before the reset",
        "... 2 more indexes (0 of them hit their limit); --all shows every one",
        "",
        "notes:",
        "  busy\\x1b[2J, 文書検索, warm: stale",
    ]


def test_forecast_text_without_a_bound_shows_every_index_unlimited_last():
    inf = float("inf")
    forecast = _forecast(
        [
            dict(name="free", used=1.0, projected=2.0, limit=inf, hit_at=None,
                 hit_at_earliest=None, reason=""),
            dict(name="calm", used=10.0, projected=50.0, limit=1000.0, hit_at=None,
                 hit_at_earliest=None, reason="stale"),
        ]
    )  # fmt: skip
    assert forecast_text(forecast).splitlines()[1:] == [
        "0 of 2 indexes hit their limit before the reset; the most urgent first",
        "",
        "index  used  projected  10-90 band      limit  projected %  hits the limit at",
        "calm     10         50     45 - 55      1,000           5%  not before the reset",
        "free      1          2       2 - 2  unlimited    unlimited  —",
        "",
        "notes:",
        "  calm: stale",
    ]


def test_a_forecast_older_than_two_hours_is_said_not_to_be_today_s():
    as_of = pd.Timestamp("2026-11-19 09:00", tz="UTC")
    assert stale_note(as_of, as_of + pd.Timedelta(hours=2)) is None
    assert stale_note(as_of, as_of + pd.Timedelta(hours=3, minutes=59)) == (
        "note: the history ends at 2026-11-19 09:00 UTC, 3 h 59 min ago: this is the forecast "
        "for that day; collect to forecast today"
    )
    assert stale_note(as_of, as_of + pd.Timedelta(days=1, hours=1)).split(", ")[1] == (
        "1 d 1 h ago: this is the forecast for that day; collect to forecast today"
    )


def test_forecast_of_a_store_without_limits_says_what_is_missing_and_exits_1(tmp_path, capsys):
    # Issue 29 item 7: a first collect killed between its points and its limits leaves
    # throughput/ without limits/; `history` reports the indexes, `forecast` said "no
    # indexes in the history" and exited 0.
    import shutil

    store = tmp_path / "h"
    noon = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)
    with Emulator(demo=True, seed=3, clock=noon, window_minutes=60) as emu:
        with emu.client() as client:
            sk.History(store).collect(client, now=emu.now())
    shutil.rmtree(store / "limits")

    assert main(["history", "--store", str(store)]) == 0
    assert "  indexes   6\n" in capsys.readouterr().out
    assert main(["forecast", "--store", str(store)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"searchkit: the history at {store} holds throughput points but no limits (its "
        "limits/ folder is missing or empty, as a first collect stopped before writing them "
        "leaves it): collect once more (searchkit collect --store LOCATION) to store the "
        "limits, then forecast. [HistoryError]\n"
    )
    with pytest.raises(sk.HistoryError, match="holds throughput points but no limits"):
        sk.forecast_limits(sk.History(store))


def test_forecast_text_fits_a_narrow_terminal_leaving_out_the_band_and_used_first():
    # Issue 28, item 11: the forecast table fits the terminal too (the demo prints it).
    forecast = _forecast(
        [
            dict(name="support-tickets", used=8762.0, projected=50216.0, limit=20000.0,
                 hit_at="2026-11-19 12:00", hit_at_earliest="2026-11-19 11:40",
                 reason="band from only 5 past day(s) at this hour (9 or more calibrate it)"),
            dict(name="docs-search", used=27680.0, projected=460892.0, limit=float("inf"),
                 hit_at=None, hit_at_earliest=None, reason=""),
        ]
    )  # fmt: skip
    lines = forecast_text(forecast, width=60).splitlines()
    assert lines == [
        "forecast as of 2026-11-19 09:00 UTC, to the reset at",
        "2026-11-20 00:00 UTC; max_daily_queries+max_daily_updates",
        "(operations)",
        "1 of 2 indexes hit their limit before the reset; the most",
        "urgent first",
        "",
        "index            projected %  hits the limit at",
        "support-tickets         251%  12:00 (earliest 11:40)",
        "docs-search        unlimited  —",
        "4 columns left out to fit 60 columns: used, projected, 10-90",
        "band, limit (--wide shows them)",
        "",
        "notes:",
        "  support-tickets: band from only 5 past day(s) at this hour",
        "    (9 or more calibrate it)",
    ]
    assert max(len(line) for line in lines) <= 60
    assert forecast_text(forecast).splitlines()[3].split() == [
        "index", "used", "projected", "10-90", "band", "limit", "projected", "%", "hits",
        "the", "limit", "at",
    ]  # fmt: skip
