"""Seed 003 (the BEIR metrics essay): its examples, pinned to the definitions.

The example: 3 queries, documents 1-4 returned in that order, with graded
relevance. Some of the essay's arithmetic is inconsistent with its own
definitions; each such slip is noted and the definition wins.
"""

from __future__ import annotations

import math

import pytest

from rankscope.engine.evaluate import evaluate

GRADES = {
    "q1": {"d1": 1.0, "d2": 0.5, "d3": 0.3, "d4": 0.1},
    "q2": {"d1": 0.7, "d2": 1.0, "d3": 0.2, "d4": 0.1},
    "q3": {"d1": 0.4, "d2": 0.2, "d3": 1.0, "d4": 0.1},
}
# "the search system returned the documents in this order": d1, d2, d3, d4.
RUN = {q: {"d1": 4.0, "d2": 3.0, "d3": 2.0, "d4": 1.0} for q in GRADES}
L3 = 1 / math.log2(3)


def _per_query(metric: str) -> dict[str, float | None]:
    res = evaluate(GRADES, RUN, [metric])
    return {q: res.per_query[q][metric] for q in res.query_ids}


def test_ndcg_at_2():
    got = _per_query("nDCG@2")
    # q1: DCG = 1.0 + 0.5/log2(3) = IDCG -> 1.0 (as in the essay).
    assert got["q1"] == pytest.approx(1.0)
    # q2: DCG = 0.7 + 1.0/log2(3) = 1.3309, IDCG = 1.0 + 0.7/log2(3) = 1.4417 -> 0.9231.
    # Slip: the essay writes DCG = 1.0 + 0.7/log2(3) = 1.45 and IDCG = 1.62 (0.89).
    assert got["q2"] == pytest.approx((0.7 + 1.0 * L3) / (1.0 + 0.7 * L3))
    # q3: DCG = 0.4 + 0.2/log2(3) = 0.5262, IDCG = 1.0 + 0.4/log2(3) = 1.2524 -> 0.4201.
    # Slip: the essay writes 1.25 / 1.62 = 0.77.
    assert got["q3"] == pytest.approx((0.4 + 0.2 * L3) / (1.0 + 0.4 * L3))


def test_precision_at_2_threshold_half():
    # relevant = grade >= 0.5. q1: d1, d2 relevant -> 1.0; q2: d1 (0.7), d2 (1.0) -> 1.0
    # (the essay's own line says 2/2 = 1.0, its summary says 0.5: a slip); q3: none -> 0.
    assert _per_query("P(rel=0.5)@2") == pytest.approx({"q1": 1.0, "q2": 1.0, "q3": 0.0})


def test_recall_at_2_threshold_half():
    # q1: 2 of 2 relevant in top 2 -> 1.0 (slip: the essay counts 1 and writes 0.5);
    # q2: relevant d1, d2 both in top 2 -> 1.0; q3: relevant d3 not in top 2 -> 0.
    assert _per_query("R(rel=0.5)@2") == pytest.approx({"q1": 1.0, "q2": 1.0, "q3": 0.0})


def test_map_at_2_threshold_half():
    # The essay's "MAP@2" section averages P@2 (a definitional slip). AP@2 by its definition:
    # q1: (1/1 + 2/2) / R=2 = 1; q2: (1/1 + 2/2) / 2 = 1; q3: nothing relevant in top 2 -> 0.
    assert _per_query("AP(rel=0.5)@2") == pytest.approx({"q1": 1.0, "q2": 1.0, "q3": 0.0})
    assert evaluate(GRADES, RUN, ["map@2-l0.5"]).means["map@2-l0.5"] == pytest.approx(2 / 3)


def test_mrr_at_2_threshold_half():
    # q1: d1 at rank 1 -> 1; q2: d1 (0.7) at rank 1 -> 1; q3: first relevant (d3) is at
    # rank 3, outside the cut-off -> 0. MRR@2 = 2/3. (Slip: the essay counts 1/3 for q3
    # and reports 0.78; that is MRR without the cut-off.)
    assert _per_query("RR(rel=0.5)@2") == pytest.approx({"q1": 1.0, "q2": 1.0, "q3": 0.0})
    assert evaluate(GRADES, RUN, ["RR(rel=0.5)"]).means["RR(rel=0.5)"] == pytest.approx(7 / 9)


def test_capped_recall_example():
    # Relevance by rank: 1,1,1,0,0,1,1,1,0,1; 7 relevant -> Recall@5 = 3/7, R_cap@5 = 3/5.
    pattern = [1, 1, 1, 0, 0, 1, 1, 1, 0, 1]
    qrels = {"q": {f"d{i}": g for i, g in enumerate(pattern)}}
    run = {"q": {f"d{i}": float(10 - i) for i in range(10)}}
    res = evaluate(qrels, run, ["R@5", "R_cap@5"])
    assert res.means["R@5"] == pytest.approx(3 / 7)
    assert res.means["R_cap@5"] == pytest.approx(0.6)


def test_mrr_at_5_example():
    # First relevant at rank 3 for one query and rank 1 for another: (1/3 + 1) / 2 = 0.67.
    qrels = {"a": {"x3": 1}, "b": {"y1": 1}}
    run = {"a": {"x1": 3.0, "x2": 2.0, "x3": 1.0}, "b": {"y1": 1.0}}
    assert evaluate(qrels, run, ["mrr@5"]).means["mrr@5"] == pytest.approx(2 / 3)


def test_precision_and_recall_at_5_examples():
    # 3 relevant in the top 5 -> P@5 = 0.6; with 5 relevant in all -> R@5 = 0.6.
    qrels = {"q": {"d0": 1, "d2": 1, "d4": 1, "d7": 1, "d9": 1}}
    run = {"q": {f"d{i}": float(10 - i) for i in range(10)}}
    res = evaluate(qrels, run, ["P@5", "R@5"])
    assert res.means["P@5"] == pytest.approx(0.6)
    assert res.means["R@5"] == pytest.approx(0.6)
