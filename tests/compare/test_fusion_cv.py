"""The grid search's cross-validation: reported scores come from held-out queries only."""

from __future__ import annotations

import numpy as np
import pytest

import rankscope
from rankscope.errors import OptionError
from rankscope.fusion.combine import fuse
from rankscope.fusion.optimize import optimize_fusion, simplex_weights

# Run X ranks query a's relevant document first and b's second; run Y the reverse.
QRELS = {"a": {"x1": 1}, "b": {"y1": 1}}
X = {"a": {"x1": 2.0, "n1": 1.0}, "b": {"n2": 2.0, "y1": 1.0}}
Y = {"a": {"n3": 2.0, "x1": 1.0}, "b": {"y1": 2.0, "n4": 1.0}}


def test_supervised_score_uses_only_held_out_queries() -> None:
    search = optimize_fusion(QRELS, {"X": X, "Y": Y}, method="posfuse", metric="RR",
                             folds=2, progress=False)
    # In sample (trained on both queries) every position is relevant half of the time, so
    # x1 and y1 collect 0.5 from each run and rank first: RR 1 on both.
    assert search.best_score == 1.0
    # Held out: b is fused with what a taught (X's rank 1 relevant, Y's rank 2), so y1
    # gets 0 + 0 and ranks last of three: RR 1/3; symmetrically for a.
    assert search.cv_per_query == pytest.approx({"a": 1 / 3, "b": 1 / 3})
    assert search.cv_score == pytest.approx(1 / 3)
    assert sorted(search.fold_of.values()) == [0, 1] and search.folds == 2
    assert "2-fold cross-validated RR = 0.3333" in repr(search)


def test_supervised_methods_cross_validate_by_default() -> None:
    queries = {f"q{i}": {f"d{i}": 1} for i in range(10)}
    runs = {"A": {q: {f"d{i}": 2.0, "z": 1.0} for i, q in enumerate(queries)},
            "B": {q: {"z": 2.0, f"d{i}": 1.0} for i, q in enumerate(queries)}}
    search = optimize_fusion(queries, runs, method="mapfuse", metric="RR", progress=False)
    assert search.folds == 5 and len(search.fold_params) == 5
    assert sorted(np.bincount(list(search.fold_of.values()))) == [2, 2, 2, 2, 2]
    # MAPFuse trained on any 8 queries: A has MAP 1, B 1/2: d = 1/1 + 0.5/2, z = 1/2 + 0.5/1.
    assert search.cv_score == 1.0


def test_unsupervised_folds_choose_on_the_other_queries() -> None:
    # wsum of two runs: one right on queries 0-5, the other on 6-9.
    qrels = {f"q{i}": {"good": 1} for i in range(10)}
    a = {f"q{i}": ({"good": 2.0, "nope": 1.0} if i < 6 else {"good": 1.0, "nope": 2.0})
         for i in range(10)}
    b = {f"q{i}": ({"good": 1.0, "nope": 2.0} if i < 6 else {"good": 2.0, "nope": 1.0})
         for i in range(10)}
    search = optimize_fusion(qrels, {"a": a, "b": b}, method="wsum", metric="RR", folds=5,
                             seed=3, progress=False)
    # Reference: for each fold, the weights with the best mean RR on the other queries
    # (first in grid order on a tie), applied to the fold's queries.
    points = simplex_weights(2)
    per_point = []
    for w in points:
        fused = fuse({"a": a, "b": b}, method="wsum", weights=w)
        per_point.append(rankscope.evaluate(qrels, fused, "RR", per_query=True).per_query)
    held = {}
    for f in range(5):
        train = [q for q, g in search.fold_of.items() if g != f]
        test = [q for q, g in search.fold_of.items() if g == f]
        means = [np.mean([pq[q]["RR"] for q in train]) for pq in per_point]
        best = int(np.argmax(means))
        held.update({q: per_point[best][q]["RR"] for q in test})
    assert search.cv_per_query == pytest.approx(held)
    assert search.cv_score == pytest.approx(np.mean(list(held.values())))
    # In sample, weights favouring a win 6 queries of 10 (an even split ties, and the
    # tie goes to "nope", id descending): 0.6 * 1 + 0.4 * 1/2.
    assert search.best_score == pytest.approx(0.8)


def test_fold_refusals() -> None:
    with pytest.raises(OptionError, match="folds must be"):
        optimize_fusion(QRELS, [X, Y], method="rrf", metric="RR", folds=3, progress=False)
    with pytest.raises(OptionError, match="cannot search phi for rrf"):
        optimize_fusion(QRELS, [X, Y], method="rrf", metric="RR", grid={"phi": [0.5]},
                        progress=False)


def test_every_parameter_is_a_grid_axis() -> None:
    for method, axis in (("rbc", "phi"), ("logn_isr", "sigma"), ("combgmnz", "gamma"),
                         ("probfuse", "segments"), ("slidefuse", "window"),
                         ("wmnz", "weights"), ("mixed", "weights"), ("w_bordafuse", "weights"),
                         ("w_condorcet", "weights")):
        search = optimize_fusion(QRELS, [X, Y], method=method, metric="RR", folds=2,
                                 progress=False)
        assert axis in search.trials.columns, method
