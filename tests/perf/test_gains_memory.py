"""The gains of every row made a block at a time: no temporary of every row beside them."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

from rankscope.engine.gain_rule import gains_of
from rankscope.metrics import ndcg
from rankscope.metrics.base import Metric

RULES = [ndcg(), ndcg(gain="exp"), ndcg(gains={0: 0, 1: 1, 2: 3}), ndcg(rel=2)]


def _grades(n: int) -> np.ndarray:
    """Grades -2..4 with unjudged (NaN) rows among them."""
    rng = np.random.default_rng(7)
    grades = rng.integers(-2, 5, n).astype(np.float64)
    grades[rng.random(n) < 0.3] = np.nan
    return grades


def _defined(grade: float, metric: Metric) -> float:
    """One grade's gain by the rule's definition, in Python."""
    if math.isnan(grade) or grade < 0:
        return 0.0
    rel = metric.get("rel")
    if rel is not None and grade < rel:
        return 0.0
    pairs = dict(metric.get("gains") or ())
    if grade in pairs:
        return float(pairs[grade])
    if metric.get("gain") == "exp":
        return 2.0 ** grade - 1.0 if grade > 0 else 0.0
    return grade


@pytest.mark.parametrize("metric", RULES, ids=str)
def test_each_gain_is_the_rules_definition(metric: Metric) -> None:
    grades = _grades(150_000)  # more rows than a block, and a partial last block
    got = gains_of(grades, metric)
    assert got.dtype == np.float64
    assert got.tolist() == [_defined(g, metric) for g in grades.tolist()]


@pytest.mark.parametrize("metric", RULES, ids=str)
def test_the_gains_are_the_only_array_of_every_row(metric: Metric) -> None:
    grades = _grades(1 << 21)  # 16 MB of gains
    tracemalloc.start()
    try:
        gains = gains_of(grades, metric)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # the gains plus a few blocks' temporaries; making every step for every row at
    # once held two to four more arrays of 16 MB beside them
    assert peak < gains.nbytes + 8 * 1024 * 1024


def test_no_rows() -> None:
    assert gains_of(np.array([], dtype=np.float64), ndcg()).size == 0
