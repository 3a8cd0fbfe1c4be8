"""Every spelling in DESIGN.md ("Metric names users will type") parses to one metric."""

from __future__ import annotations

import pytest

from rankscope.errors import MetricParameterError, UnknownMetricError
from rankscope.metrics import (
    average_precision,
    best,
    bpref,
    cumulative_gain,
    dcg,
    err,
    f_measure,
    hits,
    judged,
    ndcg,
    parse_metric,
    parse_metrics,
    precision,
    r_precision,
    rbp,
    recall,
    recall_capped,
    reciprocal_rank,
    success,
)

SPELLINGS = [
    # ranx (seed 002's alias table)
    ("ndcg@10", ndcg(10)), ("map@100", average_precision(100)), ("mrr@10", reciprocal_rank(10)),
    ("precision@5", precision(5)), ("recall@1000", recall(1000)), ("hits@10", hits(10)),
    ("hit_rate@5", success(5)), ("f1@10", f_measure(10)), ("r_precision", r_precision()),
    ("bpref", bpref()), ("rbp.95", rbp(0.95, gain="grade")),
    ("dcg_burges@10", dcg(10, gain="exp")), ("ndcg_burges@10", ndcg(10, gain="exp")),
    ("ndcg@10-l2", ndcg(10, rel=2)), ("dcg@5", dcg(5)),
    ("map@100-l2", average_precision(100, rel=2)),
    # ir_measures
    ("nDCG@10", ndcg(10)), ("P(rel=2)@5", precision(5, rel=2)), ("AP", average_precision()),
    ("RR@10", reciprocal_rank(10)), ("R@1000", recall(1000)), ("Judged@10", judged(10)),
    ("ERR@20", err(20)), ("RBP(p=0.8)", rbp(0.8)),
    ("nDCG(dcg='exp-log2')@10", ndcg(10, gain="exp")),
    ("nDCG(dcg=exp-log2)@10", ndcg(10, gain="exp")), ("RBP(p=0.5,rel=2)", rbp(0.5, rel=2)),
    ("Success@1", success(1)), ("Rprec", r_precision()), ("Bpref", bpref()),
    # trec_eval
    ("ndcg_cut_10", ndcg(10)), ("map_cut_100", average_precision(100)), ("P_5", precision(5)),
    ("recall_100", recall(100)), ("recip_rank", reciprocal_rank()), ("success_1", success(1)),
    ("set_F", f_measure()), ("map", average_precision()), ("ndcg", ndcg()),
    # seeds / canonical
    ("Best@3", best(3)), ("CG@5", cumulative_gain(5)), ("R_cap@10", recall_capped(10)),
    ("F(beta=2)@10", f_measure(10, beta=2)), ("F(2)@10", f_measure(10, beta=2)),
    ("nDCG(ideal=max,max_grade=4)@5", ndcg(5, ideal="max", max_grade=4)),
    ("nDCG(gains={0:0,1:1,2:3})@5", ndcg(5, gains={0: 0, 1: 1, 2: 3})),
    ("nDCG(gains='1=3,2=9')", ndcg(gains="1=3,2=9")),
]


@pytest.mark.parametrize(("text", "expected"), SPELLINGS, ids=[s for s, _ in SPELLINGS])
def test_every_spelling_parses_to_the_same_metric(text, expected):
    assert parse_metric(text) == expected
    assert hash(parse_metric(text)) == hash(expected)


def test_case_insensitive_where_the_tool_is():
    assert parse_metric("NDCG@10") == ndcg(10)
    assert parse_metric("Precision@5") == precision(5)


def test_canonical_names_round_trip():
    for _, metric in SPELLINGS:
        assert parse_metric(metric.name) == metric


def test_trec_eval_dotted_forms_expand_with_trec_labels():
    assert parse_metrics("ndcg_cut.10,20") == [("ndcg_cut_10", ndcg(10)), ("ndcg_cut_20", ndcg(20))]
    assert parse_metrics("P.5,10") == [("P_5", precision(5)), ("P_10", precision(10))]


def test_rbp_spellings_keep_each_tools_gain():
    # ranx's rbp is graded (the grade is the gain), ir_measures' RBP is binary.
    assert parse_metric("rbp.95").get("gain") == "grade"
    assert parse_metric("RBP(p=0.95)").get("gain") == "binary"


@pytest.mark.parametrize("k", [float("nan"), float("inf")])
def test_a_cut_off_that_is_no_number_is_refused_in_python_too(k):
    from rankscope.metrics.base import make_metric

    with pytest.raises(MetricParameterError, match="whole number"):
        make_metric("P", k)


@pytest.mark.parametrize(
    ("text", "error", "fragment"),
    [
        ("ndgc@10", UnknownMetricError, "did you mean 'nDCG'"),
        ("precison@5", UnknownMetricError, "did you mean"),
        ("P@0", MetricParameterError, "cut-off must be >= 1"),
        ("P@-3", MetricParameterError, "cut-off must be >= 1"),
        ("P@2.5", MetricParameterError, "whole number"),
        # float("nan") and float("inf") read, then int() raised ValueError / OverflowError
        ("nDCG@nan", MetricParameterError, "whole number"),
        ("P@inf", MetricParameterError, "whole number"),
        ("P@1e309", MetricParameterError, "whole number"),
        # a parameter named as make_metric's own argument: a TypeError (a 500 in the app)
        ("nDCG(dcg=exp-log2, k=nan)", MetricParameterError, "no parameter 'k'"),
        ("P(k=5)", MetricParameterError, "written P@k"),
        ("P(family_name=1)@5", MetricParameterError, "no parameter 'family_name'"),
        ("ndcg_cut_0", MetricParameterError, ">= 1"),
        ("RBP(p=1.5)", MetricParameterError, "(0, 1)"),
        ("RBP(p=0)", MetricParameterError, "(0, 1)"),
        ("rbp.0", MetricParameterError, "(0, 1)"),
        ("F(beta=0)@5", MetricParameterError, "beta"),
        ("nDCG(ideal=best)@5", MetricParameterError, "global, max, local"),
        ("P(foo=1)@5", MetricParameterError, "no parameter 'foo'"),
        ("R_cap", MetricParameterError, "needs a cut-off"),
        ("Rprec@5", MetricParameterError, "takes no cut-off"),
        ("nDCG(__import__('os').system('x'))@3", UnknownMetricError, "literal"),
        ("", UnknownMetricError, "empty"),
    ],
)
def test_bad_names_fail_clearly(text, error, fragment):
    with pytest.raises(error) as info:
        parse_metrics(text)
    assert fragment in str(info.value)


def test_metric_is_hashable_printable_data():
    m = parse_metric("ndcg_cut_10")
    assert str(m) == "nDCG@10" and repr(m) == "Metric('nDCG@10')"
    assert {m: 1}[parse_metric("nDCG@10")] == 1
    assert str(parse_metric("ndcg@10-l2")) == "nDCG(rel=2)@10"
    assert str(precision(rel=2) @ 5) == "P(rel=2)@5"


def test_every_family_is_documented_with_formula_and_citation():
    from rankscope.metrics.base import FAMILIES

    for fam in FAMILIES.values():
        assert fam.summary, fam.name
        assert fam.doc_section("Notes"), f"{fam.name} has no formula (Notes)"
        assert fam.doc_section("References"), f"{fam.name} has no citation (References)"


@pytest.mark.parametrize(("name", "k"), [("ndcg_score(k=3, ignore_ties=True)", 3),
                                         ("dcg_score(k=7)", 7), ("ndcg_score(k=3)@3", 3)])
def test_scikit_learns_k_parameter_is_its_cut_off(name: str, k: int) -> None:
    """scikit-learn spells the cut-off ``k=``: read as the cut-off there (refused elsewhere)."""
    (metric,) = [m for _, m in parse_metrics(name)]
    assert metric.k == k


@pytest.mark.parametrize("name", ["ndcg_score(k=nan)", "dcg_score(k=inf)",
                                  "ndcg_score(k=1e309)", "ndcg_score(k=3)@5"])
def test_scikit_learns_k_that_is_no_cut_off_is_refused(name: str) -> None:
    with pytest.raises((MetricParameterError, UnknownMetricError)):
        parse_metrics(name)
