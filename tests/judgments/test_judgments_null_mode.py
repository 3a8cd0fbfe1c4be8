"""Seed 004's null rules (``unjudged="null"``): hand-computed values and a slow reference."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankscope
from rankscope.errors import OptionError, RankscopeWarning
from rankscope.metrics import err

NAN = float("nan")


def _run(rankings: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    """Scores that rank each list in the given order."""
    return {q: {d: float(len(docs) - i) for i, d in enumerate(docs)}
            for q, docs in rankings.items()}


def _case(grades_in_rank_order: dict[str, list[float | None]]):
    """Qrels and run from per-query grades in rank order (None = ungraded; docs named i)."""
    qrels: dict[str, dict[str, float | None]] = {}
    rankings: dict[str, list[str]] = {}
    for q, grades in grades_in_rank_order.items():
        docs = [f"{q}_d{i}" for i in range(len(grades))]
        rankings[q] = docs
        qrels[q] = dict(zip(docs, grades, strict=True))
        qrels[q][f"{q}_anchor"] = 0  # every query has one graded doc in the qrels
    return qrels, _run(rankings)


def _null(qrels, run, metrics):
    return rankscope.evaluate(qrels, run, metrics, unjudged="null", per_query=True)


BINARY = {
    "q1": [1, None, 0, 1, None],
    "q2": [None, None, None],
    "q3": [0, None, 0],
    "q4": [None, 1],
}


def test_precision_over_graded_positions():
    qrels, run = _case(BINARY)
    r = _null(qrels, run, ["P@5", "P@2", "P@1"])
    pq = r.per_query
    # q1: graded d0, d2, d3 -> relevant 2 of 3; top 2: d0 graded and relevant -> 1/1
    assert pq["q1"]["P@5"] == pytest.approx(2 / 3)
    assert pq["q1"]["P@2"] == 1.0
    # q2: nothing graded -> null
    assert pq["q2"]["P@5"] is None
    # q3: graded 2, relevant 0 -> 0
    assert pq["q3"]["P@5"] == 0.0
    # q4: top 1 ungraded -> null; top 2: 1 graded, relevant -> 1
    assert pq["q4"]["P@1"] is None and pq["q4"]["P@2"] == 1.0
    # means over queries with a value: P@5 = (2/3 + 0 + 1) / 3
    assert r["P@5"] == pytest.approx((2 / 3 + 0 + 1) / 3)
    assert r["P@1"] == pytest.approx((1 + 0) / 2)  # q1: 1/1, q3: 0/1; q2, q4 null


def test_average_precision_rank_denominator():
    qrels, run = _case(BINARY)
    pq = _null(qrels, run, ["AP@5", "AP@1"]).per_query
    # q1: relevant at ranks 1 and 4, R = 2: (1/1 + 2/4) / 2 = 0.75
    assert pq["q1"]["AP@5"] == pytest.approx(0.75)
    assert pq["q2"]["AP@5"] is None      # nothing graded
    assert pq["q3"]["AP@5"] == 0.0       # graded, nothing relevant
    assert pq["q4"]["AP@5"] == pytest.approx(0.5)  # relevant at rank 2: (1/2) / 1
    assert pq["q4"]["AP@1"] is None


def test_ap_uses_relevant_in_top_k_not_qrels_count():
    # One relevant retrieved at rank 1, another relevant only in the qrels:
    # trec AP@2 = 1/2, seed AP@2 = 1 (R = relevant positions in the top k).
    qrels = {"q": {"a": 1, "b": 0, "z": 1}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    assert rankscope.evaluate(qrels, run, ["AP@2"])["AP@2"] == 0.5
    assert rankscope.evaluate(qrels, run, ["AP@2"], unjudged="null")["AP@2"] == 1.0


def test_reciprocal_rank_null_versus_zero():
    qrels, run = _case(BINARY)
    pq = _null(qrels, run, ["RR@5", "RR@1"]).per_query
    assert pq["q1"]["RR@5"] == 1.0
    assert pq["q2"]["RR@5"] is None      # nothing graded
    assert pq["q3"]["RR@5"] == 0.0       # graded, nothing relevant
    assert pq["q4"]["RR@5"] == 0.5
    assert pq["q4"]["RR@1"] is None


GRADED = {
    "q5": [3, None, 2, 0],
    "q6": [0, None],
    "q7": [None, None],
}


def test_cg_dcg_ndcg():
    qrels, run = _case(GRADED)
    pq = _null(qrels, run, ["CG@4", "DCG@4", "nDCG@4"]).per_query
    # q5: CG = 3 + 0 + 2 + 0 = 5; DCG = 3/log2(2) + 2/log2(4) = 4;
    # ideal: same top-4 gains sorted 3, 2, 0, 0 -> 3 + 2/log2(3)
    assert pq["q5"]["CG@4"] == 5.0
    assert pq["q5"]["DCG@4"] == pytest.approx(4.0)
    assert pq["q5"]["nDCG@4"] == pytest.approx(4.0 / (3 + 2 / math.log2(3)))
    # q6: graded but all gains 0 -> CG = DCG = 0 and nDCG = 0 (ideal 0), not null
    assert (pq["q6"]["CG@4"], pq["q6"]["DCG@4"], pq["q6"]["nDCG@4"]) == (0.0, 0.0, 0.0)
    # q7: nothing graded -> null for all three
    assert pq["q7"] == {"CG@4": None, "DCG@4": None, "nDCG@4": None}


def test_ndcg_ideal_is_the_rankings_own_top_k():
    # d "z" (grade 3) is judged but not retrieved: the trec ideal counts it, seed 004's not.
    qrels = {"q": {"a": 1, "b": 2, "z": 3}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    value = rankscope.evaluate(qrels, run, ["nDCG@2"], unjudged="null")["nDCG@2"]
    # DCG = 1 + 2/log2(3); ideal = 2 + 1/log2(3)
    assert value == pytest.approx((1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)))
    with pytest.raises(OptionError, match="ideal='max'"):
        rankscope.evaluate(qrels, run, ["nDCG(ideal=max)@2"], unjudged="null")


def test_err_and_err_018():
    qrels, run = _case(GRADED)
    metrics = [err(4, max_grade=3), err(4, max_grade=3, rank_exponent=0.18)]
    r = rankscope.evaluate(qrels, run, metrics, unjudged="null", per_query=True)
    plain, gentle = (m.name for m in metrics)
    # q5: R = (2^g - 1) / 2^3 -> 7/8, 0 (ungraded), 3/8, 0
    # ERR = 7/8 + (1 - 7/8)(1 - 0)(3/8)/3
    assert r.per_query["q5"][plain] == pytest.approx(7 / 8 + (1 / 8) * (3 / 8) / 3)
    assert r.per_query["q5"][gentle] == pytest.approx(7 / 8 + (1 / 8) * (3 / 8) / 3 ** 0.18)
    assert r.per_query["q6"][plain] == 0.0
    assert r.per_query["q7"][plain] is None


def test_err_max_grade_defaults_to_qrels_max():
    qrels = {"q": {"a": 2, "b": 1}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    # g_max = 2: R = 3/4, 1/4 -> 3/4 + (1/4)(1/4)/2
    got = rankscope.evaluate(qrels, run, ["ERR@2"], unjudged="null")["ERR@2"]
    assert got == pytest.approx(3 / 4 + (1 / 4) * (1 / 4) / 2)


def test_query_missing_from_run_and_all_null_query_have_no_value():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}}
    with pytest.warns(RankscopeWarning, match=r"1 only in the qrels \(q2\)"):
        r = _null(qrels, run, ["P@3", "nDCG@3"])
    assert r.per_query["q2"] == {"P@3": None, "nDCG@3": None}
    assert r.n_queries == {"P@3": 1, "nDCG@3": 1}
    assert r["P@3"] == 1.0  # mean over the one query with a value
    json_ready = r.to_dict()
    assert json_ready["mean"]["P@3"] == 1.0 and json_ready["per_query"]["q2"]["P@3"] is None


def test_metric_without_a_null_definition_is_refused():
    with pytest.raises(OptionError, match="unjudged='null'"):
        rankscope.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["bpref"], unjudged="null")


def test_err_default_behaviour_unchanged_by_rank_exponent():
    qrels = {"q": {"a": 3, "b": 1, "c": 0}}
    run = {"q": {"b": 3.0, "a": 2.0, "c": 1.0}}
    # nonrelevant mode, g_max = 3: R = 1/8, 7/8, 0 -> 1/8 + (7/8)(7/8)/2
    expected = 1 / 8 + (7 / 8) * (7 / 8) / 2
    assert rankscope.evaluate(qrels, run, ["ERR@3"])["ERR@3"] == pytest.approx(expected)
    gentle = rankscope.evaluate(qrels, run, [err(3, rank_exponent=0.18)])
    assert gentle[err(3, rank_exponent=0.18).name] == pytest.approx(
        1 / 8 + (7 / 8) * (7 / 8) / 2 ** 0.18)
    assert rankscope.parse_metric("ERR(rank_exponent=0.18)@10") == err(10, rank_exponent=0.18)


# -- a slow, obviously-correct reference -----------------------------------------


def _reference(grades: list[float | None], family: str, k: int, max_grade: float) -> float:
    top = grades[:k]
    graded = [g for g in top if g is not None]
    if not graded:
        return NAN
    rel = [g is not None and g >= 1 for g in top]
    if family == "P":
        return sum(1 for g in graded if g >= 1) / len(graded)
    if family == "AP":
        hits, total = 0, 0.0
        for i, r in enumerate(rel, start=1):
            if r:
                hits += 1
                total += hits / i
        return total / hits if hits else 0.0
    if family == "RR":
        return next((1 / i for i, r in enumerate(rel, start=1) if r), 0.0)
    gains = [0.0 if g is None else max(g, 0.0) for g in top]
    if family == "CG":
        return sum(gains)
    dcg = sum(g / math.log2(i + 1) for i, g in enumerate(gains, start=1))
    if family == "DCG":
        return dcg
    if family == "nDCG":
        ideal = sum(g / math.log2(i + 1)
                    for i, g in enumerate(sorted(gains, reverse=True), start=1))
        return dcg / ideal if ideal else 0.0
    value, reach = 0.0, 1.0
    for i, g in enumerate(gains, start=1):
        stop = (2 ** g - 1) / 2 ** max_grade
        value += reach * stop / i
        reach *= 1 - stop
    return value


grade_lists = st.lists(st.one_of(st.none(), st.integers(0, 3).map(float)), min_size=1,
                       max_size=8)


@settings(max_examples=60, deadline=None)
@given(st.lists(grade_lists, min_size=1, max_size=5), st.integers(1, 9))
def test_kernels_match_reference(per_query, k):
    data = {f"q{i}": grades for i, grades in enumerate(per_query)}
    qrels, run = _case(data)
    families = ["P", "AP", "RR", "CG", "DCG", "nDCG"]
    metrics = [f"{f}@{k}" for f in families] + [err(k, max_grade=3)]
    r = rankscope.evaluate(qrels, run, metrics, unjudged="null", per_query=True)
    for q, grades in data.items():
        for j, fam in enumerate([*families, "ERR"]):
            got = r.values[r.query_ids.index(q), j]
            want = _reference(grades, fam, k, 3.0)
            if math.isnan(want):
                assert math.isnan(got), (q, fam)
            else:
                assert got == pytest.approx(want), (q, fam, grades)
    for j in range(len(metrics)):
        column = r.values[:, j]
        present = column[~np.isnan(column)]
        mean = r.means[r.labels[j]]
        assert (mean is None) if present.size == 0 else mean == pytest.approx(present.mean())
