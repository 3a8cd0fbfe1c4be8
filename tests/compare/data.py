"""Seeded synthetic qrels and runs for the comparison tests."""

from __future__ import annotations

import numpy as np

Nested = dict[str, dict[str, float]]


def make_qrels(seed: int = 0, n_queries: int = 40, n_docs: int = 30) -> dict[str, dict[str, int]]:
    """Graded judgments 0-3 for every query (some queries with nothing relevant)."""
    rng = np.random.default_rng(seed)
    return {
        f"q{i:02d}": {f"d{j}": int(rng.choice(4, p=[0.6, 0.2, 0.12, 0.08]))
                      for j in range(n_docs)}
        for i in range(n_queries)
    }


def make_run(qrels: dict[str, dict[str, int]], seed: int, skill: float,
             depth: int = 20) -> Nested:
    """A run whose scores follow the grades with noise; higher skill = better rankings.

    Scores are rounded to 1 decimal so ties happen; a few unjudged documents appear.
    """
    rng = np.random.default_rng(seed)
    run: Nested = {}
    for q, docs in qrels.items():
        names = list(docs) + [f"u{j}" for j in range(5)]
        grades = np.array([docs.get(d, 0) for d in names], dtype=float)
        scores = skill * grades + rng.normal(0, 1, len(names))
        top = np.argsort(-scores)[:depth]
        run[q] = {names[i]: round(float(scores[i]), 1) for i in top}
    return run
