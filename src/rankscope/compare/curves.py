"""The numbers behind curve plots: metric@k for a range of k, 11-point precision-recall."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope.data.runs import load_runs
from rankscope.data.tables import as_qrels
from rankscope.engine.evaluate import evaluate
from rankscope.engine.ranking import QueryPolicy, Ties, Unjudged
from rankscope.errors import MetricError, OptionError
from rankscope.metrics.base import Metric, make_metric
from rankscope.metrics.parser import parse_metric

__all__ = ["RECALL_LEVELS", "at_k_metrics", "curve_points", "interpolated_precision",
           "metric_at_k", "precision_recall", "precision_recall_metrics"]

FloatArray = npt.NDArray[np.float64]

RECALL_LEVELS = np.arange(11) / 10.0
"""0.0, 0.1, ..., 1.0 (each i / 10 exactly as trec_eval computes it)."""


def at_k_metrics(metric: str | Metric, ks: list[int]) -> list[Metric]:
    """The metrics of a metric@k curve: ``metric``'s family and parameters at each k."""
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
    metrics = at_k_metrics(metric, k_list)
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

    Each point is the mean over queries of the ``iprec_at_recall`` measure at that
    level, the one implementation (:func:`rankscope.metrics.iprec_at_recall`):
    per query, with R relevant documents and :math:`c = \operatorname{lround}(r R)`,
    the highest precision :math:`P_k` over the ranks k at or after the c-th
    relevant document retrieved (0 when fewer than c are retrieved). This is
    trec_eval's rule: it reads the level as a count of relevant documents, so
    at r = 0.1 and R = 51 the point is set by the 5th relevant document (recall
    0.098), not the 6th.
    A run sharing no query with the qrels is refused unless ``allow_no_overlap``
    (see :func:`rankscope.evaluate`).

    Returns
    -------
    ndarray, shape (11,)
    """
    (table,), _ = load_runs([run])
    metrics = precision_recall_metrics(rel)
    result = evaluate(as_qrels(qrels), table, metrics, ties=ties, unjudged=unjudged,
                      queries=queries, allow_no_overlap=allow_no_overlap)
    return curve_points([result.means[m.name] for m in metrics], len(result.query_ids))


def precision_recall_metrics(rel: float = 1) -> list[Metric]:
    """The 11 ``iprec_at_recall`` metrics of the curve, recall 0.0 to 1.0."""
    return [make_metric("iprec_at_recall", p=float(level), rel=rel) for level in RECALL_LEVELS]


def curve_points(means: list[float | None], n_evaluated: int) -> FloatArray:
    """The 11-point curve from the means of :func:`precision_recall_metrics` over a run's
    ``n_evaluated`` queries (all 0 when no query was evaluated)."""
    if not n_evaluated:
        return np.zeros(RECALL_LEVELS.size)
    return np.array(means, dtype=np.float64)


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
