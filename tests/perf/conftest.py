"""Seeded synthetic qrels and runs with the awkward cases the fast paths must keep.

Ties in score (scores on a coarse grid), unjudged documents, null grades,
queries only in the qrels, queries only in the run, an empty query, byte-order
traps in ids ("10" < "9", upper before lower case), grades 0..3 and a negative.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

METRICS = ["ndcg@10", "map@100", "mrr@10", "P@10", "recall@100", "AP", "ndcg", "bpref",
           "P@5", "Rprec", "success@1", "num_ret", "num_rel_ret"]


def make_case(seed: int, n_queries: int = 30, depth: int = 40) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Qrels (query_id, doc_id, grade) and a run (query_id, doc_id, score) in file order."""
    rng = np.random.default_rng(seed)
    q_rows: list[tuple[str, str, float | None]] = []
    r_rows: list[tuple[str, str, float]] = []
    qids = [str(i) for i in range(1, n_queries + 1)] + ["Q", "q"]
    for i, q in enumerate(qids):
        pool = [f"{chr(65 + int(c))}{n}" for c, n in zip(rng.integers(0, 3, 3 * depth),
                                                          rng.integers(0, 500, 3 * depth),
                                                          strict=True)]
        pool = list(dict.fromkeys(pool))
        n_ranked = 0 if i == 3 else int(rng.integers(1, min(depth, len(pool))))
        ranked = pool[:n_ranked]
        if i % 7 != 5:  # some queries only in the run
            judged = rng.choice(len(pool), size=min(len(pool), int(rng.integers(1, 25))),
                                replace=False)
            for j in judged:
                grade: float | None = float(rng.choice([0, 0, 1, 1, 2, 3, -1]))
                if rng.random() < 0.05:
                    grade = None
                q_rows.append((q, pool[int(j)], grade))
        if i % 11 == 4:
            continue  # some queries only in the qrels
        scores = np.round(rng.normal(5, 2, n_ranked), 0 if i % 2 else 1)
        order = np.argsort(-scores, kind="stable") if i % 3 else np.arange(n_ranked)
        for k in order:
            r_rows.append((q, ranked[int(k)], float(scores[int(k)])))
    qrels = pl.DataFrame(q_rows, schema={"query_id": pl.String, "doc_id": pl.String,
                                         "grade": pl.Float64}, orient="row")
    run = pl.DataFrame(r_rows, schema={"query_id": pl.String, "doc_id": pl.String,
                                       "score": pl.Float64}, orient="row")
    return qrels, run


def write_trec(qrels: pl.DataFrame, run: pl.DataFrame, where: Path) -> tuple[Path, Path]:
    """TREC files in the frames' row order (null grades are left out, as in TREC)."""
    qpath, rpath = where / "qrels.txt", where / "run.txt"
    with qpath.open("w") as f:
        for q, d, g in qrels.iter_rows():
            if g is not None:
                f.write(f"{q} 0 {d} {int(g)}\n")
    with rpath.open("w") as f:
        for rank_, (q, d, s) in enumerate(run.iter_rows(), start=1):
            f.write(f"{q} Q0 {d} {rank_} {s!r} tagA\n")
    return qpath, rpath


@pytest.fixture(params=[1, 2, 3])
def case(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, Path]:
    qrels, run = make_case(request.param)
    return write_trec(qrels, run, tmp_path)
