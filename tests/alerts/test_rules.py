"""Alert rules: their checks, and rules files whose errors name the line."""

from __future__ import annotations

import pathlib
import textwrap

import pandas as pd
import pytest

import searchkit as sk
from searchkit.alerts.rules import DEFAULT_RULE, THRESHOLD_RULES, check_indexes, load_rules


def write(tmp_path, text):
    path = tmp_path / "alerts.toml"
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def test_a_rule_is_named_from_its_basis_and_threshold():
    assert sk.AlertRule(basis="used", at=0.8).name == "used >= 80%"
    assert sk.AlertRule(band="projected_high").name == "projected high >= 100%"
    assert [r.name for r in THRESHOLD_RULES] == [
        "used >= 50%",
        "used >= 70%",
        "used >= 80%",
        "used >= 90%",
    ]


def test_durations_are_read_from_text():
    rule = sk.AlertRule(hold="90min", pending="10min")
    assert (rule.hold, rule.pending) == (pd.Timedelta(minutes=90), pd.Timedelta(minutes=10))


def test_the_default_rule_forecasts_the_sum_of_the_daily_limits():
    assert (DEFAULT_RULE.basis, DEFAULT_RULE.field, DEFAULT_RULE.label) == (
        "forecast",
        None,
        "max_daily_queries+max_daily_updates",
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"at": -1}, "at must be a share of the limit above 0 and at most 10 (0.8 is 80%), got -1"),
        ({"at": float("inf")}, "got inf"),
        ({"basis": "spend"}, "basis must be one of ['forecast', 'used'], got 'spend'"),
        (
            {"basis": "used", "band": "projected_high"},
            "band='projected_high' needs basis=\"forecast\"",
        ),
        ({"field": "max_vectors"}, "field must be None"),
        ({"hold": "forever"}, "hold must be a duration such as \"2h\", got 'forever'"),
    ],
)
def test_a_bad_value_is_refused_saying_which(kwargs, message):
    with pytest.raises(sk.ValidationError) as caught:
        sk.AlertRule(**kwargs)
    assert message in str(caught.value)


def test_a_rules_file_is_read_in_order(tmp_path):
    path = write(
        tmp_path,
        """
        stalled_after = "30min"

        [[rule]]
        name = "early"
        band = "projected_high"

        [[rule]]
        basis = "used"
        at = 0.8
        indexes = "prod-*"
        hold = "1h"
        """,
    )
    rules, stalled = load_rules(path)
    assert stalled == pd.Timedelta(minutes=30)
    assert rules == (
        sk.AlertRule(name="early", band="projected_high"),
        sk.AlertRule(basis="used", at=0.8, indexes="prod-*", hold="1h"),
    )
    assert rules[1].source == f"{path}, line 7"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('[[rule]]\nname = "a"\nthresold = 0.8\n', "line 3: rule 1: unknown field 'thresold'"),
        ('[[rule]]\nname = "a"\n\n[[rule]]\nat = -1\n', "line 5: rule 2: at must be a share"),
        (
            "[[rule]]\nat = 1e309\n",
            "line 2: rule 1: at must be a share of the limit above 0 and at most 10 "
            "(0.8 is 80%), got inf",
        ),
        (
            '[[rule]]\nbasis = "used"\nband = "projected_low"\n',
            "line 3: rule 1: band='projected_low' needs",
        ),
        ("[[rules]]\nat = 0.5\n", "line 1: unknown table or key 'rules'"),
        (
            '[[rule]]\nname = "x"\n[[rule]]\nname = "x"\n',
            "line 3: a second rule named 'x' (the first: ",
        ),
        ('stalled_after = "0s"\n', "line 1: stalled_after must be above 0"),
        ("[[rule]\n", "not a TOML file"),
    ],
)
def test_a_bad_rules_file_is_refused_naming_the_line(tmp_path, body, message):
    path = write(tmp_path, body)
    with pytest.raises(sk.ValidationError) as caught:
        load_rules(path)
    assert f"{path}" in str(caught.value)
    assert message in str(caught.value)


def test_a_glob_that_matches_no_index_is_refused_naming_the_line(tmp_path):
    path = write(tmp_path, '[[rule]]\nname = "prod"\nindexes = "prod-*"\n')
    rules, _ = load_rules(path)
    check_indexes(rules, ["prod-search"])
    with pytest.raises(sk.ValidationError) as caught:
        check_indexes(rules, ["docs", "code-snippets"])
    assert str(caught.value) == (
        f"{path}, line 1: rule 'prod': indexes='prod-*' matches none of the 2 indexes "
        "(code-snippets, docs)"
    )


def test_the_shipped_rules_file_is_the_readme_s_two_rules():
    # README.md shows examples/alerts.toml and says load_rules reads it as these rules.
    example = pathlib.Path(__file__).resolve().parents[2] / "examples" / "alerts.toml"
    rules, stalled_after = sk.load_rules(example)
    assert stalled_after == pd.Timedelta(minutes=30)
    assert [(r.name, r.basis, r.at, r.indexes) for r in rules] == [
        ("forecast", "forecast", 1.0, "*"),
        ("80% used", "used", 0.8, "support-*"),
    ]
    assert rules[0] == sk.AlertRule(name="forecast")  # the default rule, spelled out


def test_the_shipped_rules_file_runs_against_the_demo_the_readme_offers():
    # `searchkit collect --alerts examples/alerts.toml` against `searchkit serve --demo`
    # stopped at once: its "prod-*" matched none of the demo's indexes.
    from searchkit.emulator.demo import DEMO_INDEXES

    example = pathlib.Path(__file__).resolve().parents[2] / "examples" / "alerts.toml"
    rules, _ = sk.load_rules(example)
    names = [name for name, *_ in DEMO_INDEXES]
    check_indexes(rules, names)  # raises when a glob matches none
    assert [name for name in names if rules[1].matches([name])[0]] == ["support-tickets"]
