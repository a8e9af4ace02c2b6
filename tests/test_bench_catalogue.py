"""`make bench`'s table (bench/readme_figures.py) covers the README's figures as they are.

Its catalogue (bench/readme_catalogue.py) names, per README figure, the key a bench script
emits and what the README says. These tests read the sources only (no benchmark runs): every
key is emitted by some script's ``emit(...)``, and every number the catalogue says the README
gives is in the README, so neither side can change without the other.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"


@pytest.fixture(scope="module")
def catalogue() -> Iterator[ModuleType]:
    sys.path.insert(0, str(BENCH))
    try:
        import readme_catalogue

        yield readme_catalogue
    finally:
        sys.path.remove(str(BENCH))


def emitted_patterns() -> list[re.Pattern[str]]:
    """Each ``emit(key, ...)`` of the bench scripts as a pattern: an f-string's fields match
    any text."""
    patterns = []
    for script in sorted(BENCH.glob("*.py")):
        for node in ast.walk(ast.parse(script.read_text(), str(script))):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "emit"
                and node.args
            ):
                continue
            key = node.args[0]
            if isinstance(key, ast.Constant):
                patterns.append(re.compile(re.escape(key.value)))
            elif isinstance(key, ast.JoinedStr):
                parts = [
                    re.escape(part.value) if isinstance(part, ast.Constant) else ".*"
                    for part in key.values
                ]
                patterns.append(re.compile("".join(parts)))
    return patterns


def test_every_catalogued_figure_is_emitted_by_a_bench_script(catalogue: ModuleType) -> None:
    patterns = emitted_patterns()
    assert len(patterns) > 50
    keys = {f.key for f in catalogue.FIGURES} | {f.baseline for f in catalogue.FIGURES}
    keys.discard(None)
    missing = [
        key for key in sorted(keys) if not any(p.fullmatch(key.replace("*", "x")) for p in patterns)
    ]
    assert missing == []


def test_every_number_the_catalogue_quotes_is_in_the_readme(catalogue: ModuleType) -> None:
    readme = " ".join((ROOT / "README.md").read_text().split())
    stale = [
        (figure.what, number)
        for figure in catalogue.FIGURES
        if figure.range is not None
        for number in re.findall(r"\d[\d,]*(?:\.\d+)?(?: ?(?:ms|s|x|%|MiB|GiB)\b)?", figure.readme)
        if not re.search(rf"(?<![\d.]){re.escape(number)}(?![\d])", readme)
    ]
    assert stale == []


def test_every_catalogued_figure_belongs_to_a_job_the_runner_knows(catalogue: ModuleType) -> None:
    sys.path.insert(0, str(BENCH))
    try:
        import readme_figures
    finally:
        sys.path.remove(str(BENCH))
    jobs = {catalogue.job_of(figure.key) for figure in catalogue.FIGURES}
    assert jobs <= set(readme_figures.JOBS)


def test_differ_lists_only_the_readme_figures_a_run_did_not_reproduce(
    catalogue: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # After a quiet run, the lead edits the README sentences whose figure moved: --differ
    # names those and only those (a figure in its range, or not measured, is left out).
    sys.path.insert(0, str(BENCH))
    try:
        import readme_figures
    finally:
        sys.path.remove(str(BENCH))
    (tmp_path / "meta.json").write_text('{"now": "abc1234", "base": null}')
    (tmp_path / "runs.jsonl").write_text(
        '{"job": "year", "side": "now", "code": 0, "wall": 1, "cpu": 1, "load": "0.5 -> 0.7"}\n'
    )
    figure = {f.key: f for f in catalogue.FIGURES}
    kept = figure["year.refusal.s"].range
    assert kept is not None
    # one figure far outside its README range, one at the middle of its own, one a baseline
    emitted = {"startup.pass": 38.0, "year.usage.s": 99.0, "year.refusal.s": sum(kept) / 2}
    (tmp_path / "now.jsonl").write_text(
        "".join(f'{{"key": "{k}", "value": {v}, "unit": "s"}}\n' for k, v in emitted.items())
    )
    assert readme_figures.differ(tmp_path) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"README figures of {tmp_path} (this code abc1234, load 0.5 -> 0.7): 2 reproduced, "
        "1 differ",
        f"  [OUTSIDE] A year / usage_frame(hist), UTC: README {figure['year.usage.s'].readme!r}, "
        "this run 99.00 s",
    ]
