"""Evaluate runs: rank once, run every kernel on whole arrays, aggregate."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Unpack

import numpy as np

from rankscope.data.overlap import check_overlap
from rankscope.data.subtopics import SubtopicQrels, as_subtopic_qrels
from rankscope.data.tables import Qrels, Run, as_qrels, as_run, input_name
from rankscope.engine.assemble import QueryAccount, aggregate, assemble_result
from rankscope.engine.conventions import (
    MetricPlan,
    ReadingGroup,
    plan_metrics,
    prepare_run,
    reading_groups,
    resolve_plan,
)
from rankscope.engine.judged_only import is_judged_only
from rankscope.engine.kernel_values import compute
from rankscope.engine.kernels import NULL_KERNELS
from rankscope.engine.options import EvalOptions, OptionFields, QueryPolicy
from rankscope.engine.ranking import FloatArray, RankedLists, rank, required_depth
from rankscope.metrics.base import Metric
from rankscope.metrics.conventions import Resolved
from rankscope.metrics.intent_aware import INTENT_FAMILIES
from rankscope.result import EvaluationResult

__all__ = ["NULL_KERNELS", "MetricPlan", "Ranked", "RankedRun", "aggregate", "compute",
           "compute_ranked", "evaluate", "measure_ranked", "plan_metrics", "rank_plan",
           "rank_run", "resolve_metrics"]

MetricsArg = str | Metric | Iterable[str | Metric] | MetricPlan
"""Metric names, :class:`Metric` values, or a :class:`MetricPlan` (names read once)."""


def resolve_metrics(
    metrics: MetricsArg, options: EvalOptions | None = None
) -> list[tuple[str, Metric]]:
    """Turn the user's metric argument into ``(label, metric)`` pairs.

    Labels are the names as typed (a :class:`Metric` is labelled by its
    canonical name); a label asked for twice is kept once. With ``options``,
    its conventions profile reads the names (see
    :func:`rankscope.engine.conventions.resolve_plan`) and its relevance
    threshold (when set) is bound into every metric that has one.
    """
    return [(found.label, found.metric) for found in resolve_plan(metrics, options)]


@dataclass
class Ranked:
    """The run ranked once per reading group of a plan, ready for :func:`compute_ranked`."""

    plan: list[Resolved]
    parts: list[tuple[ReadingGroup, RankedLists]]
    subtopics: SubtopicQrels | None = None

    @property
    def lists(self) -> RankedLists:
        """The first group's rankings (every group has the same queries)."""
        return self.parts[0][1]


def rank_plan(
    qrels: Qrels,
    run: Run,
    plan: list[Resolved],
    options: EvalOptions,
    *,
    queries: QueryPolicy | None = None,
    max_grade: float | None = None,
    subtopics: SubtopicQrels | None = None,
) -> Ranked:
    """Rank ``run`` once per way the plan's metrics read it (usually once).

    Each ranking keeps only as deep as its metrics read; ``queries``
    overrides the options' policy (the streaming and Spark drivers rank the
    queries they hold).
    """
    metrics = [found.metric for found in plan]
    groups = reading_groups(plan, options)
    # the run's scores are read again by a later ranking or a measure reading the run
    scores_read = any(m.spec.reads_run for m in metrics)
    parts = []
    for i, group in enumerate(groups):
        depth = required_depth(metrics[j] for j in group.columns)
        if any(is_judged_only(metrics[j]) for j in group.columns):
            depth = None  # judged rows may lie below any cut-off
        if group.depth is not None:
            depth = group.depth if depth is None else min(depth, group.depth)
        opts = group.options
        lists = rank(qrels, prepare_run(run, opts), ties=opts.ties, unjudged=opts.unjudged,
                     queries=queries or opts.ranked_queries, depth=depth, max_grade=max_grade,
                     scores_read=scores_read or i < len(groups) - 1)
        parts.append((group, lists))
    return Ranked(plan, parts, subtopics)


def compute_ranked(ranked: Ranked) -> FloatArray:
    """Per-query values of every planned metric, shape (n_queries, n_metrics); NaN = null."""
    metrics = [found.metric for found in ranked.plan]
    values = np.empty((ranked.lists.n_queries, len(metrics)), dtype=np.float64)
    for group, lists in ranked.parts:
        part = compute(lists, [metrics[j] for j in group.columns],
                       unjudged=group.options.unjudged, subtopics=ranked.subtopics)
        values[:, group.columns] = part
    return values


def _subtopics(qrels: Any, metrics: Sequence[Metric]) -> SubtopicQrels | None:
    """Subtopic qrels when given, or when an intent-aware measure needs them (a path's
    second column is then the subtopic, as in ndeval's and ir_measures' reading)."""
    if isinstance(qrels, SubtopicQrels):
        return qrels
    if any(m.family in INTENT_FAMILIES for m in metrics):
        return as_subtopic_qrels(qrels)
    return None


def evaluate(
    qrels: Any,
    run: Any,
    metrics: MetricsArg,
    *,
    per_query: bool = False,
    run_name: str | None = None,
    allow_no_overlap: bool = False,
    options: EvalOptions | None = None,
    **option_fields: Unpack[OptionFields],
) -> EvaluationResult:
    """Evaluate one run against qrels with any number of metrics.

    Parameters
    ----------
    qrels : Qrels, SubtopicQrels, path, DataFrame or dict
        Relevance judgments (``{query: {doc: grade}}`` for a dict). The
        intent-aware measures (``alpha_nDCG@20``, ``ERR_IA@20``...) need
        :class:`~rankscope.data.subtopics.SubtopicQrels` (or a path, read in
        ndeval's format ``topic subtopic document grade``).
    run : Run, path, DataFrame or dict
        The ranking (``{query: {doc: score}}`` for a dict).
    metrics : str, Metric, a sequence of them, or MetricPlan
        Any spelling :func:`rankscope.parse_metrics` accepts; a
        :class:`~rankscope.engine.conventions.MetricPlan` (from
        :func:`plan_metrics`) is used as read, for several runs.
    per_query : bool, default False
        Keep per-query values in the result's printed form (they are always
        available as ``result.per_query``).
    run_name : str, optional
        Name for the run (default: its run tag or file name).
    allow_no_overlap : bool, default False
        Evaluate even when the run shares no query with the qrels (by
        default :class:`~rankscope.errors.NoOverlapError`: every score would
        be a quiet 0). Some queries on one side only give a
        :class:`~rankscope.errors.RankscopeWarning` with the counts.
    options : EvalOptions, optional
        Ties, unjudged documents, query policy, duplicates, relevance
        threshold (see :class:`~rankscope.engine.options.EvalOptions`).
    **option_fields
        Any field of :class:`~rankscope.engine.options.EvalOptions` as a
        keyword, on top of ``options``: ``ties`` ({"trec", "input", "docid_asc"}),
        ``unjudged`` ({"nonrelevant", "condensed", "null"}), ``queries``
        ({"qrels", "intersection", "nonnull"}), ``on_duplicate`` ({"error",
        "first", "max"}), ``rel``.

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
    opts = EvalOptions.merged(options, option_fields)
    ranked = rank_run(qrels, run, resolve_plan(metrics, opts), opts, run_name=run_name)
    # a caller that handed over its qrels (the command line's last run) has them freed before
    # the kernels: nothing below reads them
    del qrels, run
    return measure_ranked(ranked, allow_no_overlap=allow_no_overlap, per_query=per_query)


@dataclass
class RankedRun:
    """A run ranked for a plan (:func:`rank_run`), what :func:`measure_ranked` measures.

    The two halves of :func:`evaluate`: a command measuring many runs ranks the next one
    on a thread while it measures this one (``compare``), every check and warning still
    raised in the runs' order by :func:`measure_ranked`.
    """

    plan: list[Resolved]
    ranked: Ranked
    options: EvalOptions
    run_label: str
    run_name: str
    qrels_name: str


def rank_run(qrels: Any, run: Any, plan: list[Resolved], options: EvalOptions, *,
             run_name: str | None = None) -> RankedRun:
    """The first half of :func:`evaluate`: ``run`` read (if a path) and ranked for ``plan``.

    Raises what reading the run raises; a document ranked twice, a run sharing no query
    with the qrels, and the warning on queries on one side only are left to
    :func:`measure_ranked`.
    """
    subtopics = _subtopics(qrels, [found.metric for found in plan])
    qrels_t: Qrels = as_qrels(qrels) if subtopics is None else subtopics.collapsed()
    # a document ranked twice is looked for beside the kernels (compute raises it)
    run_t: Run = as_run(run, name=run_name, on_duplicate=options.on_duplicate,
                        defer_duplicates=True)
    if run_t is not run:
        run_t.hand_over()  # read or built here: no one else reads it
    # Rank once (per way of reading the run), only as deep as the metrics read.
    ranked = rank_plan(qrels_t, run_t, plan, options, subtopics=subtopics)
    qrels_name = input_name(qrels_t)
    del qrels, qrels_t  # nothing below reads the qrels
    run_label, name = input_name(run_t), run_t.name
    if not any(found.metric.spec.reads_run for found in plan):
        # no kernel reads a document id or score: the run (frame, ids, scores) goes too,
        # when the caller handed over its only reference (the command line's last run);
        # the duplicates search holds its own until done
        for _, part in ranked.parts:
            part.let_go_of_run()
        del run, run_t
    return RankedRun(plan, ranked, options, run_label, name, qrels_name)


def measure_ranked(ranked_run: RankedRun, *, allow_no_overlap: bool = False,
                   per_query: bool = False) -> EvaluationResult:
    """The second half of :func:`evaluate`: the checks, the kernels and the result."""
    ranked, plan = ranked_run.ranked, ranked_run.plan
    lists = ranked.lists
    lists.check_duplicates()  # a bad run is reported before its overlap with the qrels
    check_overlap(ranked_run.run_label, lists.n_run_queries, lists.run_only_queries,
                  ranked_run.qrels_name, lists.n_qrels_queries, lists.missing_queries,
                  allow=allow_no_overlap)
    values = compute_ranked(ranked)
    return assemble_result(
        [found.label for found in plan], [found.metric for found in plan], lists.query_ids,
        values, options=ranked_run.options, run_name=ranked_run.run_name,
        per_query=per_query, in_run=lists.in_run,
        account=QueryAccount(lists.n_qrels_queries, lists.n_run_queries, lists.missing_queries,
                             lists.run_only_queries),
    )
