"""``searchkit forecast --store LOCATION [--backtest]`` on a collected history."""

from __future__ import annotations

import datetime as dt

import searchkit as sk
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
    assert out[0] == (
        "forecast as of 2026-11-19 09:00 UTC, to the reset at 2026-11-20 00:00 UTC; "
        "max_daily_queries+max_daily_updates (operations)"
    )
    header = out[2].split()
    assert header[:6] == ["index", "used", "projected", "10-90", "band", "limit"]
    rows = {line.split()[0]: line for line in out[3:9]}
    names = ["docs-search", "product-catalog", "support-tickets", "news-archive"]
    assert sorted(rows) == sorted([*names, "code-snippets", "legal-contracts"])
    assert rows["docs-search"].split()[-3:] == ["unlimited", "0%", "—"]
    assert rows["support-tickets"].split()[-1] == "00:08"  # past the limit since 00:08
    assert "backtest:" in "\n".join(out)
    methods = [line.split()[0] for line in out[-5:]]
    assert methods == ["forecast", "last_hour_pace", "yesterday", "mean_7_days", "ratio_7_days"]


def test_forecast_of_an_empty_store_says_so(tmp_path, capsys):
    assert main(["forecast", "--store", str(tmp_path / "none")]) == 0
    assert capsys.readouterr().out == "no indexes in the history\n"
