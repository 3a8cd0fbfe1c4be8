"""evaluate_judgments: transform per metric scale, aggregate, compute (seed 004's two stages)."""

from __future__ import annotations

import math

import pytest

from rankscope.errors import OptionError, UnknownMetricError
from rankscope.judgments import evaluate_judgments, plan_evaluation

RUN = {"q1": {"d1": 4.0, "d2": 3.0, "d3": 2.0, "d4": 1.0}}
L3 = math.log2(3)


@pytest.fixture
def detail(make_judgments):
    # q1 on the detail scale: d1 graded 9 and 2, d2 graded 1, d3 graded 5 (and one
    # empty grade), d4 never graded.
    return make_judgments([
        ("q1", "d1", "x", 9), ("q1", "d1", "y", 2),
        ("q1", "d2", "x", 1),
        ("q1", "d3", "x", 5), ("q1", "d3", "y", None),
    ], scale="detail")


def test_mixed_scales_p_over_detail_grades(detail):
    r = evaluate_judgments(detail, RUN, ["P@4", "nDCG@4", "nDCG(d)@4", "ERR@4"],
                           unjudged="null")
    # P@4 needs binary: detail -> binary (1 -> 0, 2..10 -> 1) per grade, majority:
    # d1: 1, 1 -> 1; d2: 0 -> 0; d3: 1 -> 1; d4 ungraded -> 2 relevant of 3 graded.
    assert r["P@4"] == pytest.approx(2 / 3)
    # nDCG@4 needs graded: detail -> graded (1 -> 0, 2..4 -> 1, 5..7 -> 2, 8..10 -> 3),
    # mean: d1: (3 + 1) / 2 = 2, d2: 0, d3: 2, d4: 0 -> DCG = 2 + 2/log2(4) = 3,
    # ideal 2, 2, 0, 0 -> 2 + 2/log2(3).
    assert r["nDCG@4"] == pytest.approx(3 / (2 + 2 / L3))
    # nDCG(d)@4 keeps detail grades: means 5.5, 1, 5, 0.
    dcg = 5.5 + 1 / L3 + 5 / 2
    ideal = 5.5 + 5 / L3 + 1 / 2
    assert r["nDCG(d)@4"] == pytest.approx(dcg / ideal)
    # ERR@4 on graded, g_max = 3 (the scale's top grade): R = 3/8, 0, 3/8, 0.
    assert r["ERR@4"] == pytest.approx(3 / 8 + (5 / 8) * (3 / 8) / 3)
    assert r.labels == ["P@4", "nDCG@4", "nDCG(d)@4", "ERR@4"]


def test_err_max_grade_comes_from_the_declared_scale(make_judgments):
    # Only grade 1 is used on a 0-3 scale: g_max must be 3, not the data's 1.
    j = make_judgments([("q1", "d1", "x", 1)], scale="graded")
    r = evaluate_judgments(j, RUN, ["ERR@4", "ERR-0.18@4"], unjudged="null")
    assert r["ERR@4"] == pytest.approx(1 / 8)
    assert r["ERR-0.18@4"] == pytest.approx(1 / 8)  # rank 1: 1^0.18 = 1
    j2 = make_judgments([("q1", "d2", "x", 1)], scale="graded")
    r2 = evaluate_judgments(j2, RUN, ["ERR@4", "ERR-0.18@4"], unjudged="null")
    assert r2["ERR@4"] == pytest.approx(1 / 8 / 2)
    assert r2["ERR-0.18@4"] == pytest.approx(1 / 8 / 2 ** 0.18)


def test_metric_scales_override_and_custom_transform_rules(detail):
    r = evaluate_judgments(
        detail, RUN, ["P@4", "ERR@4"], unjudged="null",
        transforms={"detail->binary": "1..5=0"},
        metric_scales={"ERR@4": "detail"},
    )
    # binary with 1..5 -> 0: d1: 9 -> 1, 2 -> 0 -> tie (null); d2: 0; d3: 0 -> P = 0/2
    assert r["P@4"] == 0.0
    # ERR on detail means 5.5, 1, 5, 0 with g_max = 10
    stops = [(2 ** g - 1) / 2 ** 10 for g in (5.5, 1, 5, 0)]
    want, reach = 0.0, 1.0
    for i, s in enumerate(stops, start=1):
        want += reach * s / i
        reach *= 1 - s
    assert r["ERR@4"] == pytest.approx(want)


def test_strategy_per_scale(make_judgments):
    j = make_judgments([("q1", "d1", "x", 3), ("q1", "d1", "y", 0), ("q1", "d1", "z", 2)],
                       scale="graded")
    # graded -> binary: 1, 0, 1 -> majority 1 -> P@1 = 1; CG@1 with median of 3, 0, 2 = 2
    r = evaluate_judgments(j, RUN, ["P@1", "CG@1"], unjudged="null",
                           strategy={"binary": "majority", "graded": "median"})
    assert (r["P@1"], r["CG@1"]) == (1.0, 2.0)
    # one strategy for all: max -> binary 1, graded 3
    r = evaluate_judgments(j, RUN, ["P@1", "CG@1"], unjudged="null", strategy="max")
    assert (r["P@1"], r["CG@1"]) == (1.0, 3.0)


def test_binary_judgments_for_graded_metrics_use_binary_to_graded(make_judgments):
    j = make_judgments([("q1", "d1", "x", 1), ("q1", "d1", "y", 0), ("q1", "d2", "x", 1)],
                       scale="binary")
    r = evaluate_judgments(j, RUN, ["CG@2", "P@2"], unjudged="null")
    # graded: d1: 3, 0 -> mean 1.5; d2: 3 -> CG = 4.5; binary: d1 tie -> null, d2 -> 1
    assert (r["CG@2"], r["P@2"]) == (4.5, 1.0)


def test_trec_scale_keeps_its_grades(make_judgments):
    j = make_judgments([("q1", "d1", "x", 4), ("q1", "d2", "x", 0)], scale="trec")
    r = evaluate_judgments(j, RUN, ["P@2", "CG@2"], unjudged="null")
    # no trec -> binary/graded defaults: P uses grade >= 1 on the trec grades; CG = 4
    assert (r["P@2"], r["CG@2"]) == (0.5, 4.0)
    plan = plan_evaluation(j, ["P@2", "CG@2"])
    assert [str(s) for s in plan.scales] == ["trec", "trec"] and len(plan.groups) == 1


def test_all_null_query_is_left_out_of_the_means(make_judgments):
    j = make_judgments([
        ("q1", "d1", "x", 1), ("q1", "d1", "y", 1),
        ("q2", "d1", "x", 1), ("q2", "d1", "y", 0),    # tie -> q2 has nothing graded
    ], scale="binary")
    run = {"q1": {"d1": 1.0}, "q2": {"d1": 1.0}}
    r = evaluate_judgments(j, run, ["P@1", "nDCG@1"], unjudged="null", per_query=True)
    assert r.per_query.get("q2", {"P@1": None})["P@1"] is None
    assert r["P@1"] == 1.0
    # nDCG over graded: q2's grades 3, 0 -> 1.5 (graded, not a tie) -> nDCG@1 = 1
    assert r.per_query["q2"]["nDCG@1"] == 1.0
    assert r.info.n_evaluated == 2


def test_nonrelevant_mode_still_available(make_judgments):
    j = make_judgments([("q1", "d2", "x", 1)], scale="binary")
    r = evaluate_judgments(j, RUN, ["P@4"])
    assert r["P@4"] == 0.25  # trec_eval convention: divide by k


def test_errors(make_judgments):
    j = make_judgments([("q1", "d1", "x", 1)])
    with pytest.raises(OptionError, match="declare the judgments' scale"):
        evaluate_judgments(j, RUN, ["P@1"])
    with pytest.raises(OptionError, match="needs the detail scale"):
        evaluate_judgments(j, RUN, ["nDCG(d)@1"], strategy="mean")
    with pytest.raises(UnknownMetricError):
        evaluate_judgments(j, RUN, ["nDCGG@1"], strategy="mean")
    with pytest.raises(OptionError, match="not asked for"):
        evaluate_judgments(j, RUN, ["P@1"], scale="binary", metric_scales={"P@2": "binary"})


def test_plan_reuses_aggregated_qrels_across_runs(detail):
    plan = plan_evaluation(detail, ["P@4", "nDCG@4"])
    assert plan.qrels("binary").to_dict() == {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.0}}
    assert plan.qrels("graded").to_dict() == {"q1": {"d1": 2.0, "d2": 0.0, "d3": 2.0}}
    other = {"q1": {"d4": 2.0, "d2": 1.0}}
    # d4 ungraded, d2 graded irrelevant -> P@2 = 0/1
    assert plan.evaluate(other, unjudged="null")["P@4"] == 0.0
    with pytest.raises(OptionError, match="several scales"):
        plan.qrels()
