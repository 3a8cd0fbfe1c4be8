"""Seed 001 ("Choosing your search relevance evaluation metric"): every worked example.

Each example lists grades in rank order; we build a run whose scores produce
that order and qrels holding those grades, then compare with the seed's
printed numbers (rounded as printed).
"""

from __future__ import annotations

import math

import pytest

from rankscope.engine.evaluate import evaluate


def _one_query(grades: list[float], extra_judged: list[float] | None = None):
    """qrels/run for one query whose ranking has ``grades`` in order."""
    run = {"q": {f"d{i}": float(len(grades) - i) for i in range(len(grades))}}
    qrels = {"q": {f"d{i}": g for i, g in enumerate(grades)}}
    for j, g in enumerate(extra_judged or []):
        qrels["q"][f"unretrieved{j}"] = g
    return qrels, run


def _value(grades, metric, **kw):
    qrels, run = _one_query(grades, kw.pop("extra", None))
    return evaluate(qrels, run, [metric], **kw).means[metric]


@pytest.mark.parametrize(
    ("grades", "expected"),
    [([1, 1, 0, 0, 1], 0.6), ([1, 1, 0, 0, 1, 0, 0, 1, 1, 1], 0.6),
     ([1, 1, 1, 0, 0], 0.6), ([0, 0, 1, 1, 1], 0.6)],
)
def test_precision_at_5(grades, expected):
    # precision_at_5 <- sum(docs[1:5]) / 5
    assert _value(grades, "P@5") == pytest.approx(expected)


def test_average_precision_docs1_docs2():
    # The seed averages precision at relevant positions; with every relevant document
    # retrieved that is AP with R = 3: docs2 = (1/3 + 2/4 + 3/5) / 3 = 0.4777778.
    assert _value([1, 1, 1, 0, 0], "AP") == pytest.approx(1.0)
    assert _value([0, 0, 1, 1, 1], "AP") == pytest.approx(0.4777778, abs=5e-8)


def test_cumulative_gain_ignores_order():
    assert _value([4, 3, 2, 1, 0], "CG@5") == pytest.approx(10)
    assert _value([0, 1, 2, 3, 4], "CG@5") == pytest.approx(10)


def test_discount_table_rank_2():
    # "Discount2 Grade" column: grade 3 at rank 2 -> 3 / log2(3) = 1.893
    two = _value([0, 3], "DCG@2")
    assert two == pytest.approx(3 / math.log2(3))
    assert round(two, 3) == 1.893


@pytest.mark.parametrize(
    ("grades", "linear", "exponential"),
    [([4, 3, 2, 1, 0], 7.323466, 21.34718), ([0, 1, 2, 3, 4], 4.470371, 10.94846)],
)
def test_dcg_linear_and_exponential(grades, linear, exponential):
    assert _value(grades, "DCG@5") == pytest.approx(linear, abs=5e-7)
    assert _value(grades, "DCG(gain=exp)@5") == pytest.approx(exponential, abs=5e-6)
    assert _value(grades, "dcg_burges@5") == pytest.approx(exponential, abs=5e-6)


@pytest.mark.parametrize(
    ("grades", "expected"), [([4, 4, 3, 3, 3], 33.686652), ([2, 1, 1, 1, 0], 4.561606)]
)
def test_dcg_exponential_query1_query2(grades, expected):
    assert _value(grades, "DCG(gain=exp)@5") == pytest.approx(expected, abs=5e-7)


@pytest.mark.parametrize(
    ("grades", "expected"),
    [([4, 4, 3, 3, 3], 1.0), ([2, 1, 1, 1, 0], 1.0),
     ([3, 2, 1, 4, 0], 0.8854504), ([0, 1, 2, 3, 4], 0.6104174)],
)
def test_ndcg_at_5_ideal_from_the_same_documents(grades, expected):
    # The seed's nDCG uses linear DCG and sorts the same five grades for the ideal;
    # with only these documents judged, global and local ideals coincide.
    assert _value(grades, "nDCG@5") == pytest.approx(expected, abs=5e-8)
    assert _value(grades, "nDCG(ideal=local)@5") == pytest.approx(expected, abs=5e-8)


def test_ndcg_ideal_from_the_whole_index():
    # docs_all = (4,3,2,1,1,0,3,4,0,0): the ideal top 5 is (4,4,3,3,2) -> 0.7641958.
    grades = [4, 3, 2, 1, 1, 0, 3, 4, 0, 0]
    assert _value(grades, "nDCG@5") == pytest.approx(0.7641958, abs=5e-8)
    # The local flavor only reorders the retrieved top 5 (4,3,2,1,1): a smaller ideal.
    local = _value(grades, "nDCG(ideal=local)@5")
    assert local > 0.7641958


def test_ndcg_maximum_flavor_repeats_top_grade():
    # "Maximum": the scale's top grade (4) repeated 5 times is the ideal.
    grades = [3, 2, 1, 4, 0]
    dcg = 3 + 2 / math.log2(3) + 1 / 2 + 4 / math.log2(5)
    ideal = sum(4 / math.log2(i + 1) for i in range(1, 6))
    assert _value(grades, "nDCG(ideal=max)@5") == pytest.approx(dcg / ideal)
    # Five documents graded 1 when 1 is the best available: global nDCG is perfect,
    # the maximum flavor (top grade 4 given explicitly) is not (the seed's blind spot).
    assert _value([1] * 5, "nDCG@5") == pytest.approx(1.0)
    assert _value([1] * 5, "nDCG(ideal=max,max_grade=4)@5") == pytest.approx(0.25)
