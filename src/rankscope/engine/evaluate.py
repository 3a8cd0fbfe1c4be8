"""Evaluate runs: rank once, run every kernel on whole arrays, aggregate."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from rankscope.data.formats import as_qrels, as_run, input_name
from rankscope.data.overlap import check_overlap
from rankscope.data.tables import OnDuplicate, Qrels, Run
from rankscope.engine.context import Context
from rankscope.engine.kernels import KERNELS
from rankscope.engine.ranking import (
    FloatArray,
    QueryPolicy,
    RankedLists,
    Ties,
    Unjudged,
    rank,
    required_depth,
)
from rankscope.errors import MetricError, OptionError
from rankscope.metrics.base import Metric
from rankscope.metrics.parser import parse_metrics
from rankscope.result import EvaluationInfo, EvaluationResult

__all__ = ["NULL_KERNELS", "aggregate", "compute", "evaluate", "resolve_metrics"]

NullKernel = Callable[[Context, Metric], FloatArray]
NULL_KERNELS: dict[str, NullKernel] = {}
"""Kernels of the judging platform's null rules (``unjudged="null"``), by family."""

MetricsArg = str | Metric | Iterable[str | Metric]


def resolve_metrics(metrics: MetricsArg) -> list[tuple[str, Metric]]:
    """Turn the user's metric argument into ``(label, metric)`` pairs.

    Labels are the names as typed (a :class:`Metric` is labelled by its
    canonical name); a label asked for twice is kept once.
    """
    items: Sequence[str | Metric]
    if isinstance(metrics, str | Metric):
        items = [metrics]
    else:
        items = list(metrics)
    if not items:
        raise MetricError("no metric asked for")
    pairs: list[tuple[str, Metric]] = []
    seen: set[str] = set()
    for item in items:
        if isinstance(item, Metric):
            found = [(item.name, item)]
        elif isinstance(item, str):
            found = parse_metrics(item)
        else:
            raise MetricError(f"a metric is a name or a Metric, not {type(item).__name__}")
        for label, metric in found:
            if label not in seen:
                seen.add(label)
                pairs.append((label, metric))
    return pairs


def compute(lists: RankedLists, metrics: Sequence[Metric], *, unjudged: Unjudged) -> FloatArray:
    """Per-query values, shape (n_queries, n_metrics); NaN = null."""
    ctx = Context(lists)
    out = np.empty((lists.n_queries, len(metrics)), dtype=np.float64)
    computed: dict[Metric, FloatArray] = {}
    for j, metric in enumerate(metrics):
        if metric not in computed:
            computed[metric] = _kernel(metric, unjudged)(ctx, metric)
        out[:, j] = computed[metric]
    return out


def _kernel(metric: Metric, unjudged: Unjudged) -> Callable[[Context, Metric], FloatArray]:
    if unjudged == "null":
        import rankscope.engine.null_mode  # noqa: F401  (fills NULL_KERNELS on first use)
    table = NULL_KERNELS if unjudged == "null" else KERNELS
    if metric.family not in table:
        if unjudged == "null":
            supported = ", ".join(sorted(NULL_KERNELS)) or "none"
            raise OptionError(
                f"{metric.name} has no definition under unjudged='null' (supported: {supported})"
            )
        raise MetricError(f"{metric.name} cannot be computed from qrels and one run")
    return table[metric.family]


def aggregate(values: FloatArray, how: str) -> float | None:
    """One number from per-query values; NaN (null) values are left out.

    ``mean`` and ``sum`` are plain; ``gmean`` is trec_eval's geometric mean,
    with values floored at 1e-5 before the logarithm. None when no query has
    a value.
    """
    present = values[~np.isnan(values)]
    if present.size == 0:
        return None
    if how == "sum":
        return float(present.sum())
    if how == "gmean":
        return float(np.exp(np.mean(np.log(np.maximum(present, 1e-5)))))
    return float(present.mean())


def evaluate(
    qrels: Any,
    run: Any,
    metrics: MetricsArg,
    *,
    per_query: bool = False,
    ties: Ties = "trec",
    unjudged: Unjudged = "nonrelevant",
    queries: QueryPolicy = "qrels",
    on_duplicate: OnDuplicate = "error",
    run_name: str | None = None,
    allow_no_overlap: bool = False,
) -> EvaluationResult:
    """Evaluate one run against qrels with any number of metrics.

    Parameters
    ----------
    qrels : Qrels, path, DataFrame or dict
        Relevance judgments (``{query: {doc: grade}}`` for a dict).
    run : Run, path, DataFrame or dict
        The ranking (``{query: {doc: score}}`` for a dict).
    metrics : str, Metric, or a sequence of them
        Any spelling :func:`rankscope.parse_metrics` accepts.
    per_query : bool, default False
        Keep per-query values in the result's printed form (they are always
        available as ``result.per_query``).
    ties : {"trec", "input"}, default "trec"
        Score ties broken by document id descending (trec_eval), or input order.
    unjudged : {"nonrelevant", "condensed", "null"}, default "nonrelevant"
        Unjudged documents are non-relevant; or removed before ranking
        (judged-only lists); or the judging platform's null rules.
    queries : {"qrels", "intersection", "nonnull"}, default "qrels"
        Which queries are averaged: every query with judgments (a query the
        run lacks scores as an empty ranking); only queries in both; or every
        query with judgments but a query the run lacks has no value.
    on_duplicate : {"error", "first", "max"}, default "error"
        A document twice in one query's ranking.
    run_name : str, optional
        Name for the run (default: its run tag or file name).
    allow_no_overlap : bool, default False
        Evaluate even when the run shares no query with the qrels (by
        default :class:`~rankscope.errors.NoOverlapError`: every score would
        be a quiet 0). Some queries on one side only give a
        :class:`~rankscope.errors.RankscopeWarning` with the counts.

    Returns
    -------
    EvaluationResult
        Means, per-query values, and how the queries were counted.

    Examples
    --------
    >>> import rankscope
    >>> qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
    >>> run = {"q1": {"d1": 0.9, "d2": 0.8}, "q2": {"d4": 1.0, "d3": 0.5}}
    >>> result = rankscope.evaluate(qrels, run, ["P@1", "ndcg@10"])
    >>> result["P@1"]
    0.5
    """
    pairs = resolve_metrics(metrics)
    qrels_t: Qrels = as_qrels(qrels)
    run_t: Run = as_run(run, name=run_name, on_duplicate=on_duplicate)
    # Rank once, keeping only as deep as the deepest metric reads.
    depth = required_depth(m for _, m in pairs)
    lists = rank(qrels_t, run_t, ties=ties, unjudged=unjudged, queries=queries, depth=depth)
    check_overlap(input_name(run_t), lists.n_run_queries, lists.run_only_queries,
                  input_name(qrels_t), lists.n_qrels_queries, lists.missing_queries,
                  allow=allow_no_overlap)
    values = compute(lists, [m for _, m in pairs], unjudged=unjudged)
    if queries == "nonnull":
        values[~lists.in_run, :] = np.nan
    means = {
        label: aggregate(values[:, j], metric.spec.aggregate)
        for j, (label, metric) in enumerate(pairs)
    }
    info = EvaluationInfo(
        run_name=run_t.name,
        queries=queries,
        ties=ties,
        unjudged=unjudged,
        n_qrels_queries=lists.n_qrels_queries,
        n_run_queries=lists.n_run_queries,
        n_evaluated=lists.n_queries,
        missing_from_run=lists.missing_queries,
        run_only=lists.run_only_queries,
    )
    return EvaluationResult(
        labels=[label for label, _ in pairs],
        metrics=[m for _, m in pairs],
        query_ids=lists.query_ids,
        values=values,
        means=means,
        info=info,
        show_per_query=per_query,
    )
