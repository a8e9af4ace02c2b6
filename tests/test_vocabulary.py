"""The README's vocabulary table is the code's: signatures via inspect, columns on the demo.

The table (README.md, "## Vocabulary") says, per word, what kind of thing it is, its
default and where it is used. This test reads it and checks every cell against the code,
and the other way round: every public function that has one of these options (or a first
argument taking indexes) is listed, with the same default, so a new function cannot speak
another dialect unnoticed.
"""

from __future__ import annotations

import ast
import datetime as dt
import inspect
import pathlib
import re
import typing
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest

import searchkit as sk
from searchkit.frames.counting import ValueUnit

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
OPTIONS = ("tz", "ax", "field", "value_unit", "names", "max_indexes")
#: First arguments that once meant "something with indexes in it"; none may remain.
OLD_FIRST = {"indexes", "indexes_or_frame", "frame", "data"}


def vocabulary() -> list[dict[str, Any]]:
    """The rows of the README's vocabulary table, cells parsed."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Vocabulary\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    header = [cell.strip() for cell in rows[0].strip("|").split("|")]
    assert header == ["word", "kind", "default", "meaning", "where"]
    out = []
    for line in rows[1:]:
        if set(line) <= set("|- "):
            continue  # the separator row
        cells = dict(
            zip(header, (c.strip() for c in line.strip().strip("|").split("|")), strict=True)
        )
        cells["word"] = cells["word"].strip("`")
        cells["where"] = re.findall(r"`([^`]+)`", cells["where"])
        out.append(cells)
    return out


def callables() -> dict[str, Callable[..., Any]]:
    """Every public function of the package and every public method of History."""
    found = {
        name: getattr(sk, name) for name in sk.__all__ if inspect.isfunction(getattr(sk, name))
    }
    for name, member in vars(sk.History).items():
        if not name.startswith("_") and inspect.isfunction(member):
            found[f"History.{name}"] = member
    return found


def parameters(function: Callable[..., Any]) -> list[inspect.Parameter]:
    """The caller's parameters (``self`` left out)."""
    params = list(inspect.signature(function).parameters.values())
    return params[1:] if params and params[0].name == "self" else params


@pytest.fixture(scope="module")
def frames(tmp_path_factory) -> dict[str, pd.DataFrame]:
    """Every frame the table names, made on the demo (a day and a half of history)."""
    noon = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)
    with sk.Emulator(demo=True, seed=5, clock=noon) as emu, emu.client() as client:
        indexes = client.list_indexes()
        hist = sk.History(tmp_path_factory.mktemp("vocabulary") / "h")
        hist.collect(client, indexes=indexes, now=emu.now())
    return {
        "limits_frame": sk.limits_frame(indexes),
        "limits_table": sk.limits_table(indexes),
        "throughput_frame": sk.throughput_frame(indexes),
        "usage_frame": sk.usage_frame(hist),
        "forecast_limits": sk.forecast_limits(hist, now=emu.now()),
        "Backtest.results": sk.backtest_forecast(hist).results,
        "History.limits": hist.limits(),
        "History.throughput": hist.throughput(),
        "History.snapshots": hist.snapshots(),
        "History.rollups": hist.rollups(),
    }


def test_the_table_is_there_and_names_each_word_once_per_kind():
    rows = vocabulary()
    keys = [(row["word"], row["kind"]) for row in rows]
    assert len(keys) == len(set(keys))
    assert {"source", *OPTIONS, "index_id", "name", "period", "type"} <= {w for w, _ in keys}


@pytest.mark.parametrize("row", [r for r in vocabulary() if r["kind"] == "first argument"])
def test_a_first_argument_is_first_and_required_wherever_the_table_says(row):
    public = callables()
    for name in row["where"]:
        first = parameters(public[name])[0]
        assert first.name == row["word"], name
        assert first.default is inspect.Parameter.empty, name
        assert first.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD, name
    takers = {n for n, f in public.items() if parameters(f) and parameters(f)[0].name == "source"}
    assert takers == set(row["where"])


@pytest.mark.parametrize("row", [r for r in vocabulary() if r["kind"] == "option"])
def test_an_option_is_keyword_only_with_one_default_wherever_it_appears(row):
    word = row["word"]
    having = {
        name: param
        for name, function in callables().items()
        for param in parameters(function)
        if param.name == word
    }
    assert set(having) == set(row["where"]), word
    for name, param in having.items():
        assert param.kind is inspect.Parameter.KEYWORD_ONLY, name
        if row["default"] != "varies":
            assert param.default == ast.literal_eval(row["default"].strip("`")), name


def test_value_unit_is_one_literal_type_everywhere():
    assert typing.get_args(ValueUnit) == ("per_second", "per_minute", "per_point")
    for name, function in callables().items():
        for param in parameters(function):
            if param.name == "value_unit":
                assert param.annotation == "ValueUnit", name


def test_every_option_after_the_first_argument_is_keyword_only():
    # An option has a default; a second required argument (alert_round's config, the last
    # day of a range) may stay positional.
    loose = [
        f"{name}({param.name})"
        for name, function in callables().items()
        for param in parameters(function)[1:]
        if param.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
        and param.default is not inspect.Parameter.empty
    ]
    assert loose == []


def test_no_function_calls_its_indexes_by_an_old_name():
    old = {
        name: parameters(function)[0].name
        for name, function in callables().items()
        if parameters(function) and parameters(function)[0].name in OLD_FIRST
    }
    assert old == {}


@pytest.mark.parametrize("row", [r for r in vocabulary() if r["kind"] in ("index", "column")])
def test_a_frame_word_is_where_the_table_says_on_the_demo(row, frames):
    for name in row["where"]:
        frame = frames[name]
        if row["kind"] == "index":
            assert frame.index.name == row["word"], name
        else:
            assert row["word"] in frame.columns, (name, list(frame.columns))


def test_every_frame_keys_an_index_as_index_id_with_name_beside_it(frames):
    for name, frame in frames.items():
        keys = {frame.index.name, *frame.columns}
        assert {"index_id", "name"} <= keys, name
        assert "id" not in keys, name


def test_frames_of_one_source_join_on_index_id_and_name_without_suffixes(frames):
    usage, limits = frames["usage_frame"], frames["limits_frame"]
    joined = usage.merge(limits, on=["index_id", "name"])
    assert len(joined) == len(usage) > 0
    assert not [c for c in joined.columns if c.endswith(("_x", "_y"))]
    assert (joined["type"].notna()).all()
    across = usage.merge(frames["forecast_limits"].drop(columns="name"), on="index_id")
    assert len(across) == len(usage)


def test_forecast_limits_shows_its_instants_in_tz_and_forecasts_the_same_utc_day(frames):
    from tests.analytics.test_usage import index

    raw = [index("steady", "2026-11-20 00:00", 360, 1.0, queries=10_000, updates=0)]
    utc = sk.forecast_limits(raw, now="2026-11-20 06:00")
    berlin = sk.forecast_limits(raw, now="2026-11-20 06:00", tz="Europe/Berlin")
    assert berlin.loc["id-steady", "period"] == pd.Timestamp("2026-11-20 01:00", tz="Europe/Berlin")
    hit, hit_utc = berlin.loc["id-steady", "hit_at"], utc.loc["id-steady", "hit_at"]
    assert pd.notna(hit_utc) and str(hit.tz) == "Europe/Berlin"
    assert hit.tz_localize(None) == hit_utc.tz_localize(None) + pd.Timedelta(hours=1)
    for column in ("period", "reset", "hit_at", "as_of"):
        assert (berlin[column] == utc[column]).all(), column  # the same instants
    pd.testing.assert_frame_equal(
        berlin.drop(
            columns=["period", "reset", "hit_at", "hit_at_earliest", "hit_at_latest", "as_of"]
        ),
        utc.drop(
            columns=["period", "reset", "hit_at", "hit_at_earliest", "hit_at_latest", "as_of"]
        ),
    )


def _history_members_in_readme() -> list[str]:
    """The members the README's paragraph on a History names, in its order."""
    text = README.read_text(encoding="utf-8")
    paragraph = text.split("A `History` has these members and no others", 1)[1].split("\n\n")[0]
    return re.findall(r"`(\w+)(?:\(|`)", paragraph)


def test_what_is_public_on_history_is_what_the_readme_says_a_user_calls():
    # Issue 26: what stays public on History is what a user calls, documented. A member
    # kept one release for old notebooks says "Deprecated" first and is left out.
    public = {
        name
        for name, member in vars(sk.History).items()
        if not name.startswith("_") and not (inspect.getdoc(member) or "").startswith("Deprecated")
    }
    named = _history_members_in_readme()
    assert len(named) == len(set(named))
    assert set(named) == public


def test_history_hourly_is_sums_by_hour_with_a_deprecation(tmp_path):
    hist = sk.History(tmp_path / "h")
    with pytest.warns(DeprecationWarning, match=r'hist.sums\(first, last, detail="hour"\)'):
        assert hist.hourly("2026-11-01", "2026-11-02") == {}


def test_no_source_is_typed_any():
    # Issue 26 item 2: analytics (and everything else) read a source through its type,
    # never through Any: the ``Source`` union holds no Any, and no function's source or
    # history parameter (nor a dataclass field of that name) is annotated with it.
    from searchkit.frames.sources import Recorded, Source
    from tests.test_import_graph import module_names

    assert Any not in typing.get_args(Source) and Recorded in typing.get_args(Source)
    loose = []
    for module, path in module_names().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                named = [(a.arg, a.annotation) for a in (*node.args.args, *node.args.kwonlyargs)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                named = [(node.target.id, node.annotation)]
            else:
                continue
            for name, annotation in named:
                words = re.findall(r"\w+", ast.unparse(annotation)) if annotation else []
                if name in ("source", "history") and "Any" in words:
                    loose.append(f"{module}:{node.lineno} {name}: {ast.unparse(annotation)}")
    assert loose == []


def test_the_methods_of_every_public_class_take_their_options_by_keyword():
    # "Options after the first argument are keyword-only" holds for the methods of the
    # classes searchkit exports too (Client, IndexList, Emulator, the widgets ...), not
    # only for its functions (exceptions keep Python's own constructor convention).
    loose = []
    for name in sk.__all__:
        cls = getattr(sk, name)
        if not inspect.isclass(cls) or issubclass(cls, BaseException):
            continue
        for attr, member in vars(cls).items():
            if attr.startswith("_") and attr != "__init__":
                continue
            function = getattr(member, "__func__", member)
            if not inspect.isfunction(function):
                continue
            loose += [
                f"{name}.{attr}({param.name})"
                for param in parameters(function)[1:]
                if param.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
                and param.default is not inspect.Parameter.empty
            ]
    assert loose == []
