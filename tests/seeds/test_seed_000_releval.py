"""Seed 000 (a relevance platform's metric reference): definitions and examples.

RBO / RBO_EXT belong to run comparison and are tested with it (tests/compare).
"""

from __future__ import annotations

import pytest

from rankscope.engine.evaluate import evaluate


def _ranked(grades: list[float], extra: dict[str, float] | None = None):
    run = {"q": {f"d{i}": float(len(grades) - i) for i in range(len(grades))}}
    qrels = {"q": {f"d{i}": g for i, g in enumerate(grades)}}
    qrels["q"].update(extra or {})
    return qrels, run


def test_precision_at_10_of_point_seven():
    # "A Precision@10 of 0.7 means that 7 out of the top 10 results are relevant."
    qrels, run = _ranked([1, 1, 0, 1, 1, 0, 1, 1, 0, 1])
    assert evaluate(qrels, run, ["P@10"]).means["P@10"] == pytest.approx(0.7)


def test_recall_at_10_of_half():
    # "half of all relevant documents for the query appear in the top 10": 4 of 8.
    qrels, run = _ranked([1, 1, 1, 1, 0, 0, 0, 0, 0, 0], {f"x{i}": 1 for i in range(4)})
    assert evaluate(qrels, run, ["R@10"]).means["R@10"] == pytest.approx(0.5)


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
def test_f_beta_formula(beta):
    # P@4 = 2/4, R@4 = 2/3 -> F = (1 + b^2) P R / (b^2 P + R)
    qrels, run = _ranked([1, 0, 1, 0], {"x": 1})
    p, r = 0.5, 2 / 3
    expected = (1 + beta**2) * p * r / (beta**2 * p + r)
    name = f"F(beta={beta})@4"
    assert evaluate(qrels, run, [name]).means[name] == pytest.approx(expected)
    if beta == 1.0:
        assert evaluate(qrels, run, ["f1@4"]).means["f1@4"] == pytest.approx(2 * p * r / (p + r))


def test_best_at_k():
    # The single best item (grade 3) sits at rank 3: Best@2 = 0, Best@3 = 1.
    qrels, run = _ranked([1, 2, 3, 0])
    res = evaluate(qrels, run, ["Best@2", "Best@3"])
    assert res.means == pytest.approx({"Best@2": 0.0, "Best@3": 1.0})


def test_best_counts_an_unretrieved_best_item():
    # The best judged item (grade 3) is not retrieved at all: Best@k = 0 for every k.
    qrels, run = _ranked([1, 2], {"best": 3})
    assert evaluate(qrels, run, ["Best@10"]).means["Best@10"] == 0.0


def test_mrr_of_one():
    # "An MRR of 1.0 means that every query has a relevant result at rank 1."
    qrels = {"a": {"x": 1}, "b": {"y": 2}}
    run = {"a": {"x": 2.0, "z": 1.0}, "b": {"y": 5.0}}
    assert evaluate(qrels, run, ["mrr"]).means["mrr"] == pytest.approx(1.0)


def test_err_formula_exponential_stop_probability():
    # R(g) = (2^g - 1) / 2^max_grade with max_grade 3 (the highest grade in the qrels).
    # grades (3, 0, 2): R = 7/8, 0, 3/8.
    # ERR = 1 * 7/8 + (1/2) * (1/8) * 0 + (1/3) * (1/8) * (1) * 3/8
    qrels, run = _ranked([3, 0, 2])
    expected = 7 / 8 + (1 / 3) * (1 / 8) * (3 / 8)
    assert evaluate(qrels, run, ["ERR@3"]).means["ERR@3"] == pytest.approx(expected)
    # ERR@1 keeps only the first term.
    assert evaluate(qrels, run, ["ERR@1"]).means["ERR@1"] == pytest.approx(7 / 8)
    # With max_grade=4 (a 0-4 scale) every stop probability halves per extra grade.
    exp4 = 7 / 16 + (1 / 3) * (9 / 16) * (3 / 16)
    assert evaluate(qrels, run, ["ERR(max_grade=4)@3"]).means[
        "ERR(max_grade=4)@3"
    ] == pytest.approx(exp4)


def test_dcg_exponential_gain_is_the_seeds_formula():
    # DCG@k = sum (2^rel - 1) / log2(i + 1): (2, 1) -> 3/1 + 1/log2(3)
    import math

    qrels, run = _ranked([2, 1])
    got = evaluate(qrels, run, ["DCG(gain=exp)@2"]).means["DCG(gain=exp)@2"]
    assert got == pytest.approx(3 + 1 / math.log2(3))


def test_err_refuses_grades_above_max_grade():
    from rankscope.errors import MetricParameterError

    qrels, run = _ranked([3, 0, 2])
    with pytest.raises(MetricParameterError, match="above the scale's top grade"):
        evaluate(qrels, run, ["ERR(max_grade=2)@3"])
