"""metric@k and 11-point precision-recall curves against evaluate() and the trec_eval binary."""

from __future__ import annotations

import math
import subprocess

import numpy as np
import pytest

from rankscope.compare.curves import RECALL_LEVELS, interpolated_precision, metric_at_k
from rankscope.engine.evaluate import evaluate
from rankscope.errors import MetricError
from trec_eval.util import reference_binary

from .data import make_qrels, make_run

QRELS = make_qrels(4, n_queries=25)
QRELS["none_relevant"] = {"d1": 0, "d2": 0}
RUN = make_run(QRELS, 7, 1.0, depth=25)


def test_eleven_point_curve_is_the_iprec_at_recall_measure() -> None:
    """One implementation: each point is the mean of the measure trec_eval 10.0 names
    iprec_at_recall_0.00 ... iprec_at_recall_1.00 (checked against the binary below)."""
    levels = [f"iprec_at_recall_{level:.2f}" for level in RECALL_LEVELS]
    direct = evaluate(QRELS, RUN, levels)
    assert interpolated_precision(QRELS, RUN) == pytest.approx(
        [direct[name] for name in levels], abs=0)


def test_curve_by_hand() -> None:
    # R = 2 relevant (a, c); ranking a x c: P = 1, 1/2, 2/3 after ranks 1, 2, 3.
    # trec_eval reads level r as c = lround(2 r) relevant documents: c = 0 for r < 0.25
    # and 1 up to r = 0.7 (lround(1.4) = 1): the best P from rank 1 on = 1; c = 2 from
    # r = 0.8 (lround(1.6)): the best P from rank 3 on = 2/3.
    got = interpolated_precision({"q": {"a": 1, "c": 1, "x": 0}},
                                 {"q": {"a": 3.0, "x": 2.0, "c": 1.0}})
    assert got == pytest.approx([1.0] * 8 + [2 / 3] * 3)


def test_curve_reads_a_level_as_trec_eval_does_not_as_a_recall_bound() -> None:
    # R = 3 relevant (a, b, c); ranking a x y b c: P = 1, 1/2, 1/3, 1/2, 3/5.
    # At r = 0.4 trec_eval takes c = lround(1.2) = 1 relevant document: the best P from
    # rank 1 on = 1, though recall 1/3 < 0.4 there (the "recall >= r" reading gives
    # 3/5, from rank 4 on). r = 0.5: c = lround(1.5) = 2 -> best P from rank 4 = 3/5.
    qrels = {"q": {"a": 1, "b": 1, "c": 1, "x": 0, "y": 0}}
    run = {"q": {"a": 5.0, "x": 4.0, "y": 3.0, "b": 2.0, "c": 1.0}}
    got = interpolated_precision(qrels, run)
    assert got[4] == pytest.approx(1.0)
    assert got == pytest.approx([1.0] * 5 + [3 / 5] * 6)


def test_curve_matches_the_trec_eval_binary(tmp_path) -> None:
    binary = reference_binary()
    if binary is None:
        pytest.skip("no trec_eval binary (set TREC_EVAL_BIN)")
    rng = np.random.default_rng(5)
    qrels_lines, run_lines = [], []
    for i in range(60):
        n_docs = int(rng.integers(20, 80))
        for j in range(n_docs):
            qrels_lines.append(f"q{i} 0 d{j} {int(rng.random() < 0.3) * int(rng.integers(1, 3))}")
        for rank_, j in enumerate(rng.permutation(n_docs + 10)[:int(rng.integers(1, 60))]):
            run_lines.append(f"q{i} Q0 d{j} {rank_ + 1} {round(float(rng.random()), 2)} r")
    (tmp_path / "qrels").write_text("\n".join(qrels_lines) + "\n")
    (tmp_path / "run").write_text("\n".join(run_lines) + "\n")
    done = subprocess.run([binary, "-m", "iprec_at_recall", str(tmp_path / "qrels"),
                           str(tmp_path / "run")], capture_output=True, text=True, check=True,
                          timeout=60)
    want = [float(line.split()[2]) for line in done.stdout.splitlines()]
    got = interpolated_precision(str(tmp_path / "qrels"), str(tmp_path / "run"),
                                 queries="intersection")
    assert [round(float(v), 4) for v in got] == want


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
    """Per query, with R relevant and c = lround(r R) (trec_eval 10.0,
    m_iprec_at_recall.c), the interpolated precision at level r is the best P_k over the
    ranks k at or after the c-th relevant document retrieved (0 when fewer than c are
    retrieved; the best P_k of the ranking when c = 0); the curve is its mean over the
    qrels' queries.
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
        points = []  # (precision, relevant found) after each rank
        found = 0
        for i, d in enumerate(ranking, start=1):
            found += judged.get(d, 0) >= 1
            points.append((found / i, found))
        for k, level in enumerate(RECALL_LEVELS):
            c = math.floor(level * n_rel + 0.5)  # lround, for a non-negative value
            reached = [p for p, f in points if f >= c] if c <= found else []
            expected[k] += max(reached, default=0.0) / len(qrels)
    assert interpolated_precision(qrels, run) == pytest.approx(expected, abs=1e-12)
