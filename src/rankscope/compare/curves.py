"""The numbers behind curve plots: metric@k for a range of k, 11-point precision-recall."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope.data.overlap import check_overlap
from rankscope.data.runs import load_runs
from rankscope.data.tables import as_qrels, input_name
from rankscope.engine.evaluate import evaluate
from rankscope.engine.ranking import QueryPolicy, Ties, Unjudged, rank
from rankscope.errors import MetricError, OptionError
from rankscope.metrics.base import Metric, make_metric
from rankscope.metrics.parser import parse_metric

__all__ = ["RECALL_LEVELS", "interpolated_precision", "metric_at_k", "precision_recall"]

FloatArray = npt.NDArray[np.float64]

RECALL_LEVELS = np.arange(11) / 10.0
"""0.0, 0.1, ..., 1.0 (each i / 10 exactly as trec_eval computes it)."""


def _family_at(metric: str | Metric, ks: list[int]) -> list[Metric]:
    base = parse_metric(metric)
    if base.spec.cutoff == "none":
        raise MetricError(f"{base.name} takes no cut-off; pick a metric with @k")
    return [make_metric(base.family, k=k, **dict(base.params)) for k in ks]


def metric_at_k(
    qrels: Any,
    runs: Any,
    metric: str | Metric = "nDCG",
    *,
    ks: Iterable[int] = range(1, 21),
    names: list[str] | None = None,
    ties: Ties = "trec",
    unjudged: Unjudged = "nonrelevant",
    queries: QueryPolicy = "qrels",
    allow_no_overlap: bool = False,
) -> pl.DataFrame:
    """Mean of ``metric`` at every cut-off k, for every run.

    ``metric`` names the family and its parameters (``"nDCG"``,
    ``"P(rel=2)"``); a cut-off in it is replaced by each k. Returns columns
    ``run``, ``k``, ``value``. ``allow_no_overlap`` as in :func:`rankscope.evaluate`.
    """
    k_list = sorted({int(k) for k in ks})
    if not k_list or k_list[0] < 1:
        raise OptionError("ks must be whole numbers >= 1")
    metrics = _family_at(metric, k_list)
    qrels_t = as_qrels(qrels)
    tables, run_names = load_runs(runs, names=names)
    rows: list[dict[str, Any]] = []
    for table, name in zip(tables, run_names, strict=True):
        result = evaluate(qrels_t, table, metrics, ties=ties, unjudged=unjudged, queries=queries,
                          allow_no_overlap=allow_no_overlap)
        for k, m in zip(k_list, metrics, strict=True):
            rows.append({"run": name, "k": k, "value": result.means[m.name]})
    return pl.DataFrame(rows, schema={"run": pl.String, "k": pl.Int64, "value": pl.Float64})


def interpolated_precision(
    qrels: Any,
    run: Any,
    *,
    rel: float = 1,
    ties: Ties = "trec",
    unjudged: Unjudged = "nonrelevant",
    queries: QueryPolicy = "qrels",
    allow_no_overlap: bool = False,
) -> FloatArray:
    r"""Mean interpolated precision at recall 0.0, 0.1, ..., 1.0 (trec_eval ``iprec_at_recall``).

    Per query, with :math:`P_i` and :math:`R_i` precision and recall after
    rank i, the interpolated precision at recall level r is
    :math:`\max \{P_i : R_i \ge r\}` (0 when no rank reaches r, and for
    queries without relevant documents); the curve is its mean over queries.
    A run sharing no query with the qrels is refused unless ``allow_no_overlap``
    (see :func:`rankscope.evaluate`).

    Returns
    -------
    ndarray, shape (11,)
    """
    (table,), _ = load_runs([run])
    qrels_t = as_qrels(qrels)
    lists = rank(qrels_t, table, ties=ties, unjudged=unjudged, queries=queries)
    check_overlap(input_name(table), lists.n_run_queries, lists.run_only_queries,
                  input_name(qrels_t), lists.n_qrels_queries, lists.missing_queries,
                  allow=allow_no_overlap)
    n_q = lists.n_queries
    if n_q == 0:
        return np.zeros(RECALL_LEVELS.size)
    offsets = lists.offsets
    lengths = np.diff(offsets)
    qidx = np.repeat(np.arange(n_q), lengths)
    with np.errstate(invalid="ignore"):
        relevant = (lists.grades >= rel).astype(np.float64)
    judged = np.diff(lists.judged_offsets)
    judged_q = np.repeat(np.arange(n_q), judged)
    n_rel = np.bincount(judged_q[lists.judged_grades >= rel], minlength=n_q).astype(np.float64)
    running = np.cumsum(relevant)
    found = running - np.concatenate(([0.0], running))[offsets[:-1]][qidx]
    position = np.arange(qidx.size) - offsets[:-1][qidx] + 1
    precision = found / position
    with np.errstate(divide="ignore", invalid="ignore"):
        recall = np.where(n_rel[qidx] > 0, found / n_rel[qidx], 0.0)
    # Best precision at this rank or any later one, within each query.
    best_after = (
        pl.DataFrame({"q": qidx, "p": precision})
        .select(pl.col("p").cum_max(reverse=True).over("q"))
        .to_series()
        .to_numpy()
    )
    out = np.zeros(RECALL_LEVELS.size)
    if qidx.size == 0:
        return out
    has_rel = (n_rel > 0)[qidx]
    for i, level in enumerate(RECALL_LEVELS):
        # The first row of each query reaching the level: best_after there interpolates.
        rows = np.flatnonzero((recall >= level) & has_rel)
        q_of = qidx[rows]
        first = np.concatenate(([True], q_of[1:] != q_of[:-1])) if rows.size else rows > 0
        values = np.zeros(n_q)
        values[q_of[first]] = best_after[rows[first]]
        out[i] = float(values.mean())
    return out


def precision_recall(
    qrels: Any,
    runs: Any,
    *,
    names: list[str] | None = None,
    rel: float = 1,
    ties: Ties = "trec",
    unjudged: Unjudged = "nonrelevant",
    queries: QueryPolicy = "qrels",
    allow_no_overlap: bool = False,
) -> pl.DataFrame:
    """11-point interpolated precision-recall curves: columns ``run``, ``recall``, ``precision``."""
    qrels_t = as_qrels(qrels)
    tables, run_names = load_runs(runs, names=names)
    frames = []
    for table, name in zip(tables, run_names, strict=True):
        curve = interpolated_precision(qrels_t, table, rel=rel, ties=ties, unjudged=unjudged,
                                       queries=queries, allow_no_overlap=allow_no_overlap)
        frames.append(pl.DataFrame({"run": [name] * curve.size, "recall": RECALL_LEVELS,
                                    "precision": curve}))
    return pl.concat(frames)
