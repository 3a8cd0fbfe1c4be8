"""metric@k and 11-point precision-recall curves against evaluate() and pytrec_eval."""

from __future__ import annotations

import numpy as np
import pytest

from rankscope.compare.curves import RECALL_LEVELS, interpolated_precision, metric_at_k
from rankscope.engine.evaluate import evaluate
from rankscope.errors import MetricError

from .data import make_qrels, make_run

QRELS = make_qrels(4, n_queries=25)
QRELS["none_relevant"] = {"d1": 0, "d2": 0}
RUN = make_run(QRELS, 7, 1.0, depth=25)


def test_eleven_point_curve_matches_pytrec_eval() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    evaluator = pytrec_eval.RelevanceEvaluator(QRELS, {"iprec_at_recall"})
    per_query = evaluator.evaluate(RUN)
    keys = [f"iprec_at_recall_{level:.2f}" for level in RECALL_LEVELS]
    expected = np.array([np.mean([per_query[q][k] for q in per_query]) for k in keys])
    assert len(per_query) == len(QRELS)
    assert interpolated_precision(QRELS, RUN) == pytest.approx(expected, abs=1e-12)


def test_curve_by_hand() -> None:
    # R = 2 relevant (a, c); ranking a x c: P = 1, 1/2, 2/3 at recall 1/2, 1/2, 1.
    # Levels 0..0.5 -> max precision at recall >= level = 1; 0.6..1.0 -> 2/3.
    got = interpolated_precision({"q": {"a": 1, "c": 1, "x": 0}},
                                 {"q": {"a": 3.0, "x": 2.0, "c": 1.0}})
    assert got == pytest.approx([1.0] * 6 + [2 / 3] * 5)


def test_metric_at_k_matches_evaluate() -> None:
    data = metric_at_k(QRELS, {"r": RUN}, "nDCG", ks=[1, 3, 10])
    direct = evaluate(QRELS, RUN, ["nDCG@1", "nDCG@3", "nDCG@10"])
    assert data.get_column("k").to_list() == [1, 3, 10]
    assert data.get_column("value").to_list() == pytest.approx(
        [direct["nDCG@1"], direct["nDCG@3"], direct["nDCG@10"]])
    # A cut-off in the name is replaced; parameters are kept.
    graded = metric_at_k(QRELS, {"r": RUN}, "P(rel=2)@5", ks=[4])
    assert graded.get_column("value")[0] == pytest.approx(evaluate(QRELS, RUN, "P(rel=2)@4")[
        "P(rel=2)@4"])
    with pytest.raises(MetricError):
        metric_at_k(QRELS, {"r": RUN}, "RBP(p=0.8)")


def test_curve_is_the_definition_on_random_rankings() -> None:
    """Per query, the interpolated precision at level r is max {P_i : R_i >= r} (0 when no
    rank reaches r or nothing is relevant); the curve is its mean over the qrels' queries.
    Written out rank by rank here, on rankings with distinct scores (no tie rule needed),
    some queries with nothing relevant, some without a relevant document retrieved."""
    rng = np.random.default_rng(11)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(40):
        docs = [f"d{j}" for j in range(30)]
        qrels[f"q{i}"] = {d: int(rng.random() < (0.0 if i % 7 == 0 else 0.2)) for d in docs}
        depth = int(rng.integers(1, 31))
        picked = rng.permutation(30)[:depth]
        scores = rng.permutation(depth) + 0.5  # distinct
        run[f"q{i}"] = {docs[j]: float(s) for j, s in zip(picked, scores, strict=True)}
    expected = np.zeros(RECALL_LEVELS.size)
    for q, judged in qrels.items():
        n_rel = sum(1 for g in judged.values() if g >= 1)
        ranking = sorted(run[q], key=lambda d: -run[q][d])
        points = []  # (precision, recall) after each rank
        found = 0
        for i, d in enumerate(ranking, start=1):
            found += judged.get(d, 0) >= 1
            points.append((found / i, found / n_rel if n_rel else 0.0))
        for k, level in enumerate(RECALL_LEVELS):
            reached = [p for p, r in points if r >= level] if n_rel else []
            expected[k] += max(reached, default=0.0) / len(qrels)
    assert interpolated_precision(qrels, run) == pytest.approx(expected, abs=1e-12)
