"""Transformers: the judging platform's default rules, overrides, and bad grades."""

from __future__ import annotations

import pytest

from rankscope.errors import OptionError, ScaleError
from rankscope.judgments import DEFAULT_RULES, Judgments, parse_rules, transform
from rankscope.judgments.scales import BINARY, GRADED, get_scale
from rankscope.judgments.transform import rules_for

# The defaults exactly as the issue (and the platform's source) list them.
SPELLED_OUT = {
    ("binary", "graded"): {0: 0, 1: 3},
    ("binary", "detail"): {0: 1, 1: 10},
    ("graded", "binary"): {0: 0, 1: 1, 2: 1, 3: 1},
    ("graded", "detail"): {0: 1, 1: 4, 2: 7, 3: 10},
    ("detail", "binary"): {1: 0, 2: 1, 3: 1, 4: 1, 5: 1, 6: 1, 7: 1, 8: 1, 9: 1, 10: 1},
    ("detail", "graded"): {1: 0, 2: 1, 3: 1, 4: 1, 5: 2, 6: 2, 7: 2, 8: 3, 9: 3, 10: 3},
}


def test_default_rules_match_the_platform():
    assert {k: {int(g): int(v) for g, v in r.items()} for k, r in DEFAULT_RULES.items()} == (
        SPELLED_OUT
    )


@pytest.mark.parametrize(("pair", "rules"), sorted(SPELLED_OUT.items()))
def test_transform_every_grade_of_every_pair(make_judgments, pair, rules):
    source, target = pair
    rows = [("q", f"d{g}", "x", g) for g in rules] + [("q", "ungraded", "x", None)]
    j = make_judgments(rows, scale=source)
    out = transform(j, target)
    assert out.scale is get_scale(target)
    got = dict(out.frame.select("doc_id", "grade").iter_rows())
    assert got == {**{f"d{g}": float(v) for g, v in rules.items()}, "ungraded": None}


def test_parse_rules_forms():
    assert parse_rules("0=0, 1..3=1") == {0.0: 0.0, 1.0: 1.0, 2.0: 1.0, 3.0: 1.0}
    assert parse_rules("1:0;2..3:1") == {1.0: 0.0, 2.0: 1.0, 3.0: 1.0}
    with pytest.raises(OptionError, match="cannot read"):
        parse_rules("1->0")
    with pytest.raises(OptionError, match="bad range"):
        parse_rules("3..1=0")


def test_overrides_replace_defaults_grade_by_grade(make_judgments):
    # A stricter binarization: graded 1 counts as irrelevant; 0, 2, 3 keep the defaults.
    mapping = rules_for(GRADED, BINARY, "1=0")
    assert mapping == {0.0: 0.0, 1.0: 0.0, 2.0: 1.0, 3.0: 1.0}
    j = make_judgments([("q", "a", "x", 1), ("q", "b", "x", 2)], scale="graded")
    out = transform(j, "binary", {1: 0})
    assert dict(out.frame.select("doc_id", "grade").iter_rows()) == {"a": 0.0, "b": 1.0}


def test_rules_must_land_inside_the_target_scale():
    with pytest.raises(OptionError, match="leaves the binary"):
        rules_for(GRADED, BINARY, "3=2")


def test_custom_scale_needs_rules_and_unmapped_grade_names_the_line(tmp_path):
    path = tmp_path / "stars.csv"
    path.write_text("query_id,doc_id,rater,grade\nq,a,x,1\nq,b,x,5\nq,c,x,4\n")
    j = Judgments.read(path, scale="1-5")
    with pytest.raises(OptionError, match="no transformer rules"):
        transform(j, "binary")
    with pytest.raises(ScaleError) as info:
        transform(j, "binary", "1..3=0,5=1")  # 4 is not covered
    assert (info.value.source, info.value.line, info.value.value) == (str(path), 4, "4")
    out = transform(j, "binary", "1..3=0,4..5=1")
    assert dict(out.frame.select("doc_id", "grade").iter_rows()) == {"a": 0.0, "b": 1.0, "c": 1.0}


def test_transform_needs_a_declared_scale(make_judgments):
    j = make_judgments([("q", "a", "x", 1)])
    with pytest.raises(OptionError, match="needs the judgments' scale"):
        transform(j, "binary")
    assert transform(j, "graded", source="binary").frame["grade"].to_list() == [3.0]


def test_transform_then_aggregate_per_rater(make_judgments):
    # The platform maps each rater's grade, then aggregates on the target scale:
    # detail 1, 7, 2 -> binary 0, 1, 1 -> majority 1 (whereas the detail mean 3.33
    # would map to graded 1 only if it were mapped after aggregation).
    j = make_judgments([("q", "a", "x", 1), ("q", "a", "y", 7), ("q", "a", "z", 2)],
                       scale="detail")
    assert transform(j, "binary").aggregate().to_dict() == {"q": {"a": 1.0}}
    # detail -> graded: 1 -> 0, 7 -> 2, 2 -> 1 -> mean 1
    assert transform(j, "graded").aggregate().to_dict() == {"q": {"a": 1.0}}
