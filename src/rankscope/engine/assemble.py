"""The one place a result is assembled, whichever driver computed the values.

Every driver (local, streaming, Spark, judgments) ends the same way: the
per-query values of the evaluated queries, the query policy applied (with
``queries="nonnull"`` a query the run lacks has no value), one mean per
metric (:func:`aggregate`), and an account of which queries each side had.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from rankscope.engine.options import EvalOptions
from rankscope.engine.ranking import BoolArray, FloatArray
from rankscope.metrics.base import Metric
from rankscope.result import EvaluationInfo, EvaluationResult

__all__ = ["QueryAccount", "aggregate", "assemble_result"]


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


@dataclass(frozen=True)
class QueryAccount:
    """How many queries each side had, and which were on one side only (sorted)."""

    n_qrels: int
    n_run: int
    missing_from_run: list[str]
    run_only: list[str]

    @classmethod
    def of(cls, qrels_queries: Collection[str], run_queries: Collection[str]) -> QueryAccount:
        """The account of two sets of query ids."""
        qrels_set, run_set = set(qrels_queries), set(run_queries)
        return cls(len(qrels_set), len(run_set), sorted(qrels_set - run_set),
                   sorted(run_set - qrels_set))


def assemble_result(
    labels: Sequence[str],
    metrics: Sequence[Metric],
    query_ids: list[str],
    values: FloatArray,
    *,
    options: EvalOptions,
    run_name: str,
    account: QueryAccount,
    in_run: BoolArray,
    per_query: bool,
) -> EvaluationResult:
    """An :class:`EvaluationResult` from per-query values (rows follow ``query_ids``).

    ``in_run`` says, per evaluated query, whether the run has it; ``values`` is
    changed in place by the ``nonnull`` and ``zero`` policies (a query the run
    lacks has no value, or 0).
    """
    if options.queries == "nonnull" and values.size:
        values[~in_run, :] = np.nan
    elif options.queries == "zero" and values.size:
        values[~in_run, :] = 0.0
    means = {
        label: aggregate(values[:, j], metric.spec.aggregate)
        for j, (label, metric) in enumerate(zip(labels, metrics, strict=True))
    }
    info = EvaluationInfo(
        run_name=run_name,
        queries=options.queries,
        ties=options.ties,
        unjudged=options.unjudged,
        conventions=options.conventions,
        n_qrels_queries=account.n_qrels,
        n_run_queries=account.n_run,
        n_evaluated=len(query_ids),
        missing_from_run=account.missing_from_run,
        run_only=account.run_only,
    )
    return EvaluationResult(
        labels=list(labels),
        metrics=list(metrics),
        query_ids=query_ids,
        values=values,
        means=means,
        info=info,
        show_per_query=per_query,
    )
