"""``conventions="sklearn"`` gives scikit-learn's ``ndcg_score`` / ``dcg_score``.

scikit-learn is run in the test. Each query with a ranking and grades is one
row: ``y_true`` the grades of the ranked documents (unjudged: 0), ``y_score``
their scores; rows are padded to one width with a document of grade 0 scored
below every other (it changes neither DCG nor the ideal). Tied scores share
their mean gain in both (``ignore_ties=False``); with ``ignore_ties=True``
scikit-learn's order of tied documents is numpy's unstable argsort's, so that
spelling is compared on scores without ties.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import rankscope
from rankscope.errors import MetricError

from .data import Shape, dataset

metrics = pytest.importorskip("sklearn.metrics")
pytestmark = pytest.mark.filterwarnings("ignore::rankscope.errors.RankscopeWarning")

TOL = 1e-9
# rankscope spelling -> (scikit-learn function, k, ignore_ties)
NAMES = {
    "ndcg_score": ("ndcg_score", None, False),
    "ndcg_score@5": ("ndcg_score", 5, False),
    "nDCG@10": ("ndcg_score", 10, False),
    "dcg_score": ("dcg_score", None, False),
    "dcg_score@5": ("dcg_score", 5, False),
    "DCG@10": ("dcg_score", 10, False),
}
NO_TIES = {"ndcg_score(k=3, ignore_ties=True)": ("ndcg_score", 3, True)}


def _rows(qrels: dict, run: dict) -> tuple[list[str], np.ndarray, np.ndarray]:
    queries = sorted(set(qrels) & set(run))
    width = max(len(run[q]) for q in queries) + 1  # at least one pad: ndcg_score wants 2+
    y_true = np.zeros((len(queries), width))
    y_score = np.zeros((len(queries), width))
    for i, q in enumerate(queries):
        docs = list(run[q])
        y_true[i, : len(docs)] = [qrels[q].get(d, 0) for d in docs]
        y_score[i, : len(docs)] = [run[q][d] for d in docs]
        y_score[i, len(docs):] = min(run[q].values()) - 1.0
    return queries, y_true, y_score


def _check(qrels: dict, run: dict, names: dict[str, tuple[str, int | None, bool]]) -> None:
    queries, y_true, y_score = _rows(qrels, run)
    result = rankscope.evaluate(qrels, run, list(names), conventions="sklearn",
                                allow_no_overlap=True)
    assert result.query_ids == queries  # the rows scikit-learn is given
    wrong = []
    for name, (function, k, ignore_ties) in names.items():
        score = getattr(metrics, function)
        for i, q in enumerate(queries):
            want = score(y_true[i : i + 1], y_score[i : i + 1], k=k, ignore_ties=ignore_ties)
            got = result.per_query[q][name]
            if got is None or not math.isclose(got, want, rel_tol=1e-12, abs_tol=TOL):
                wrong.append(f"{name} q={q}: rankscope {got!r}, scikit-learn {want!r}")
        want = score(y_true, y_score, k=k, ignore_ties=ignore_ties)  # the mean of the rows
        mean = result.means[name]
        if mean is None or not math.isclose(mean, want, rel_tol=1e-12, abs_tol=TOL):
            wrong.append(f"mean {name}: rankscope {mean!r}, scikit-learn {want!r}")
    assert not wrong, f"{len(wrong)} mismatches\nqrels={qrels}\nrun={run}\n" + "\n".join(
        wrong[:15])


SHAPES = [Shape("ties", 3, False), Shape("ties", 4, False), Shape("float32", 3, False),
          Shape("distinct", 4, False)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s.scores}-{s.top}")
@pytest.mark.parametrize("seed", range(8))
def test_ndcg_and_dcg_score(shape: Shape, seed: int) -> None:
    _check(*dataset(seed, shape), NAMES)


@pytest.mark.parametrize("seed", range(8))
def test_ignore_ties_on_scores_without_ties(seed: int) -> None:
    _check(*dataset(seed, Shape("distinct", 3, False)), NO_TIES)


@pytest.mark.parametrize("seed", range(8))
def test_dcg_score_with_negative_grades(seed: int) -> None:
    """dcg_score takes negative grades as negative gains (ndcg_score refuses them)."""
    names = {k: v for k, v in NAMES.items() if v[0] == "dcg_score"}
    _check(*dataset(seed, Shape("ties", 3, True)), names)


def test_tied_gains_are_averaged() -> None:
    """The issue's point: scikit-learn averages the gains of tied documents."""
    qrels = {"q": {"a": 3, "b": 0, "c": 1}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 0.5}}
    y_true, y_score = np.array([[3.0, 0.0, 1.0]]), np.array([[1.0, 1.0, 0.5]])
    # ranks 1-2 share (3 + 0) / 2; rank 3 gains 1
    want = 1.5 * (1 + 1 / math.log2(3)) + 1 / 2
    assert metrics.dcg_score(y_true, y_score) == pytest.approx(want)
    assert rankscope.evaluate(qrels, run, "DCG", conventions="sklearn")["DCG"] == \
        pytest.approx(want)
    assert rankscope.evaluate(qrels, run, "DCG")["DCG"] == pytest.approx(0 + 3 / math.log2(3)
                                                                         + 1 / 2)


def test_negative_grade_refused_as_ndcg_score_refuses_it() -> None:
    qrels = {"q": {"a": -1, "b": 1}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    with pytest.raises(ValueError, match="negative"):
        metrics.ndcg_score(np.array([[-1.0, 1.0]]), np.array([[2.0, 1.0]]))
    with pytest.raises(MetricError, match="negative"):
        rankscope.evaluate(qrels, run, "ndcg_score")
