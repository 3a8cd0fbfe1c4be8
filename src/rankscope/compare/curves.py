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
    out = np.zeros(RECALL_LEVELS.size)
    if qidx.size == 0:
        return out
    # Per query and level: the best precision over the rows reaching the level. Recall
    # rises only at a relevant document, where precision is at its highest since the one
    # before, so that best is found on the relevant rows alone: one maximum per query
    # over them (reduceat), -1 where no row reaches the level (0 then), no sort or grouping.
    hit = np.flatnonzero(relevant > 0)
    hit_q = qidx[hit]
    hit_p = precision[hit]
    hit_r = np.where((n_rel > 0)[hit_q], recall[hit], -1.0)
    starts = np.flatnonzero(np.concatenate(([True], hit_q[1:] != hit_q[:-1]))) if hit.size \
        else hit
    queries_hit = hit_q[starts]
    for i, level in enumerate(RECALL_LEVELS):
        values = np.zeros(n_q)
        if hit.size:
            best = np.maximum.reduceat(np.where(hit_r >= level, hit_p, -1.0), starts)
            values[queries_hit] = np.where(best >= 0.0, best, 0.0)
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
