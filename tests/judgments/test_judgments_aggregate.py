"""Aggregation strategies, each checked against values computed by hand from its rule."""

from __future__ import annotations

import polars as pl
import pytest

from rankscope.errors import OptionError
from rankscope.judgments import (
    Judgments,
    aggregate,
    aggregate_frame,
    tie_rate,
    tie_rate_by_query,
)
from rankscope.judgments.aggregate import resolve_strategy
from rankscope.judgments.scales import BINARY, DETAIL, GRADED


def _grades(qrels) -> dict[str, float | None]:
    return {d: g for _, d, g in qrels.frame.sort("doc_id").iter_rows()}


def _items(make, grades_per_doc, scale):
    rows = [("q", doc, f"r{i}", g) for doc, grades in grades_per_doc.items()
            for i, g in enumerate(grades)]
    return make(rows, scale=scale)


def test_binary_majority_vote_seed_004(make_judgments):
    # Seed 004: 1 if relevant votes > irrelevant votes, 0 if fewer; a tie is null,
    # "for example 1,0 or 1,0,null".
    j = _items(make_judgments, {
        "a": [1, 1, 0],        # 2 > 1 -> 1
        "b": [0, 0, 1],        # 1 < 2 -> 0
        "c": [1, 0],           # tie -> null
        "d": [1, 0, None],     # tie -> null (null votes do not count)
        "e": [None, None],     # nothing graded -> null
        "f": [1],              # 1 > 0 -> 1
        "g": [1, None],        # 1 > 0 -> 1
    }, "binary")
    details = aggregate_frame(j)
    assert _grades(j.aggregate()) == {
        "a": 1.0, "b": 0.0, "c": None, "d": None, "e": None, "f": 1.0, "g": 1.0}
    ties = dict(details.select("doc_id", "tie").iter_rows())
    assert ties == {"a": False, "b": False, "c": True, "d": True, "e": False, "f": False,
                    "g": False}
    counts = {d: (n, r) for d, n, r in details.select("doc_id", "n_grades", "n_raters").iter_rows()}
    assert counts["d"] == (2, 3) and counts["e"] == (0, 2)


def test_majority_on_a_graded_scale_is_the_strict_mode(make_judgments):
    j = _items(make_judgments, {"a": [3, 3, 1], "b": [3, 1, 2], "c": [2, 2, 0, 0]}, "graded")
    # a: 3 has 2 votes -> 3; b: three grades one vote each -> tie; c: 2 and 0 tie.
    assert _grades(aggregate(j, "majority")) == {"a": 3.0, "b": None, "c": None}


def test_graded_and_detail_mean_of_non_null(make_judgments):
    # Seed 004: graded/detail scale -> arithmetic mean of non-null grades.
    j = _items(make_judgments, {"a": [3, 2, None], "b": [0], "c": [None]}, "graded")
    assert _grades(j.aggregate()) == {"a": 2.5, "b": 0.0, "c": None}
    d = _items(make_judgments, {"a": [10, 1, 4]}, "detail")
    assert _grades(d.aggregate()) == {"a": 5.0}  # (10 + 1 + 4) / 3


def test_median_min_max(make_judgments):
    j = _items(make_judgments, {"a": [1, 2, 3, 10], "b": [3, None, 1, 2], "c": [None]},
               "detail")
    # a: sorted 1 2 3 10 -> median (2 + 3) / 2 = 2.5; b: 1 2 3 -> 2.
    assert _grades(aggregate(j, "median")) == {"a": 2.5, "b": 2.0, "c": None}
    assert _grades(aggregate(j, "min")) == {"a": 1.0, "b": 1.0, "c": None}
    assert _grades(aggregate(j, "max")) == {"a": 10.0, "b": 3.0, "c": None}


def test_top3_rule(make_judgments):
    j = _items(make_judgments, {
        "one": [2],                   # one grade: itself
        "two": [1, 2],                # two grades: mean 1.5
        "agree": [3, 3, 3, 0],        # three highest 3,3,3 agree -> 3
        "differ": [3, 1, 2, 0],       # three highest 3,2,1 differ -> lowest 1
        "three": [2, 3, 2],           # 3,2,2 differ -> 2
        "nulls": [3, None, 3],        # two grades -> mean 3
        "empty": [None],              # nothing -> null
    }, "graded")
    assert _grades(aggregate(j, "top3")) == {
        "agree": 3.0, "differ": 1.0, "empty": None, "nulls": 3.0, "one": 2.0, "three": 2.0,
        "two": 1.5}


def test_latest_by_time(make_judgments):
    frame = pl.DataFrame({
        "query_id": ["q"] * 8,
        "doc_id": ["a", "a", "a", "b", "b", "c", "c", "d"],
        "rater": ["x", "y", "z", "x", "y", "x", "y", "x"],
        "grade": [1.0, 3.0, None, 2.0, 0.0, 1.0, 2.0, 2.0],
        "time": [1.0, 5.0, 9.0, 4.0, 4.0, None, 3.0, None],
    })
    j = Judgments(frame, scale="graded")
    # a: latest non-null grade is y's 3 at t=5 (z's later row has no grade);
    # b: 2 and 0 both at t=4 -> tie -> null; c: untimed is older -> y's 2;
    # d: only an untimed grade -> 2.
    details = aggregate_frame(j, "latest")
    assert _grades(aggregate(j, "latest")) == {"a": 3.0, "b": None, "c": 2.0, "d": 2.0}
    assert details.filter(pl.col("doc_id") == "b")["tie"].item() is True


def test_latest_needs_time_and_unknown_strategy(make_judgments):
    j = _items(make_judgments, {"a": [1]}, "binary")
    with pytest.raises(OptionError, match="time column"):
        aggregate(j, "latest")
    with pytest.raises(OptionError, match="unknown aggregation strategy"):
        aggregate(j, "vote")


def test_default_strategy_needs_a_scale(make_judgments):
    j = _items(make_judgments, {"a": [1, 0]}, None)
    with pytest.raises(OptionError, match="declare the judgments' scale"):
        aggregate(j)
    assert _grades(aggregate(j, "mean")) == {"a": 0.5}
    assert _grades(aggregate(j, scale="binary")) == {"a": None}


def test_resolve_strategy_per_scale():
    spec = {"binary": "majority", "graded": "median", "*": "max"}
    assert resolve_strategy(spec, BINARY) == "majority"
    assert resolve_strategy(spec, GRADED) == "median"
    assert resolve_strategy(spec, DETAIL) == "max"
    assert resolve_strategy(None, DETAIL) == "mean"


def test_tie_rate_overall_and_per_query(make_judgments):
    j = make_judgments([
        ("q1", "a", "x", 1), ("q1", "a", "y", 0),                        # tie
        ("q1", "b", "x", 1), ("q1", "b", "y", 1),                        # no tie
        ("q1", "c", "x", None),                                          # not graded
        ("q2", "a", "x", 0), ("q2", "a", "y", 1), ("q2", "a", "z", None),  # tie
    ], scale="binary")
    # graded items: q1/a, q1/b, q2/a -> 2 ties of 3
    assert tie_rate(j) == pytest.approx(2 / 3)
    per_query = tie_rate_by_query(j)
    assert per_query.rows() == [("q1", 2, 1, 0.5), ("q2", 1, 1, 1.0)]
    assert tie_rate(make_judgments([("q", "a", "x", None)], scale="binary")) is None


def test_aggregated_qrels_keep_ungraded_pairs(make_judgments):
    j = _items(make_judgments, {"a": [None], "b": [1]}, "binary")
    qrels = j.aggregate()
    assert qrels.to_dict() == {"q": {"a": None, "b": 1.0}}


def test_majority_vote_keeps_the_clear_winners_and_counts_the_ties():
    """The one vote both ``aggregate(..., "majority")`` and the LLM judge's agreement use.

    By hand: q/a 2, 2, 1 -> 2; q/b 1, 0 -> tie; q/c 3 -> 3; q/d ungraded -> absent, no tie.
    """
    import polars as pl

    from rankscope.judgments.aggregate import majority_vote
    from rankscope.judgments.table import Judgments

    j = Judgments(pl.DataFrame({
        "query_id": ["q"] * 7, "doc_id": ["a", "a", "a", "b", "b", "c", "d"],
        "rater": ["x", "y", "z", "x", "y", "x", "x"],
        "grade": [2.0, 2.0, 1.0, 1.0, 0.0, 3.0, None]}))
    frame, tied = majority_vote(j)
    assert frame.rows() == [("q", "a", 2.0), ("q", "c", 3.0)]
    assert tied == 1


@pytest.mark.parametrize("name", ["rankscope.judgments.aggregate",
                                  "rankscope.judgments.agreement"])
def test_docstring_examples_hold(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
