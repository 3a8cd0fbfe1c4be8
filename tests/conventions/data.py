"""Seeded qrels and runs of several shapes, for comparing profiles with the tools.

Shapes (``SHAPES``): scores with many exact ties (small integers), scores
that tie only as 32-bit floats (1e-9 apart), distinct scores; grades on 0-3
and 0-4 scales, with or without negative grades (-1: trec_eval's "in the pool
but unjudged"); queries only in the qrels, only in the run, or in both.
Query ids are numeric (gdeval, behind ir_measures' ERR, wants them so);
document ids mix cases and orders so that byte order matters.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

DOCS = [f"d{i}" for i in range(24)] + ["D1", "D10", "a", "b", "z9", "x_y"]
QUERIES = [str(q) for q in (1, 2, 3, 10, 25, 101)]

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]


@dataclass(frozen=True)
class Shape:
    """How one dataset is drawn."""

    scores: str  # "ties", "float32", "distinct"
    top: int  # highest grade: 3 or 4
    negative: bool  # some grades are -1
    overlap: bool = True  # only partial: queries on one side only


SHAPES = [
    Shape("ties", 3, True),
    Shape("ties", 4, False),
    Shape("float32", 3, True),
    Shape("float32", 4, True),
    Shape("distinct", 3, False),
    Shape("distinct", 4, True),
]


def dataset(seed: int, shape: Shape, *, max_docs: int = 14) -> tuple[Qrels, Run]:
    """One qrels / run pair (dict order is the input order)."""
    rng = random.Random(seed)
    grades = [*range(shape.top + 1), 0, 0, 1]
    if shape.negative:
        grades += [-1, -1]
    qrels: Qrels = {}
    run: Run = {}
    queries = rng.sample(QUERIES, rng.randint(2, len(QUERIES)))
    for i, q in enumerate(queries):
        side = rng.choice(["both", "both", "both", "qrels", "run"]) if shape.overlap else "both"
        if i == 0:
            side = "both"  # every dataset shares a query
        if side in ("both", "qrels"):
            docs = rng.sample(DOCS, rng.randint(1, max_docs))
            qrels[q] = {d: rng.choice(grades) for d in docs}
            if max(qrels[q].values()) < 0:  # pytrec_eval crashes on all-negative queries
                qrels[q][docs[0]] = 0
        if side in ("both", "run"):
            docs = rng.sample(DOCS, rng.randint(1, max_docs + 2))
            run[q] = dict(zip(docs, _scores(rng, shape.scores, len(docs)), strict=True))
    return qrels, run


def _scores(rng: random.Random, kind: str, n: int) -> list[float]:
    if kind == "ties":
        return [float(rng.randint(0, 4)) for _ in range(n)]
    if kind == "float32":
        base = rng.choice([0.1, 1.3, 7.7])
        # 1e-9 apart: distinct doubles, equal once rounded to 32-bit floats
        return [base + rng.choice([0.0, 1e-9, 2e-9, 0.5, 0.5 + 1e-9, 1.0]) for _ in range(n)]
    values = rng.sample(range(-400, 4000), n)
    return [v / 4 for v in values]  # exact in float32: no tie either way


def datasets(seeds: range, shapes: list[Shape] | None = None) -> list[tuple[str, Qrels, Run]]:
    """(id, qrels, run) for every seed and shape."""
    out = []
    for shape in shapes or SHAPES:
        for seed in seeds:
            qrels, run = dataset(seed, shape)
            out.append((f"{shape.scores}-{shape.top}{'-neg' if shape.negative else ''}-{seed}",
                        qrels, run))
    return out
