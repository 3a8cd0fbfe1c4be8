"""``rankscope.compare``: is B better than A, on which queries, and can I trust it?"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from rankscope.compare.corrections import adjust, check_correction
from rankscope.compare.intervals import ThreadedIntervals
from rankscope.compare.result import CompareResult, Comparison
from rankscope.compare.significance import (
    check_test,
    effect_sizes,
    paired_test,
    prefetch_t_tests,
    preload_test,
    t_test_p_values,
    tukey_hsd,
    wins_ties_losses,
)
from rankscope.data.runs import RunInputs, name_candidates
from rankscope.data.tables import OnDuplicate, as_qrels
from rankscope.engine.evaluate import MetricPlan, MetricsArg, plan_metrics
from rankscope.engine.options import EvalOptions, OptionFields, Queries, Ties, Unjudged
from rankscope.engine.ranking_ahead import RankingAhead
from rankscope.errors import OptionError, RankscopeWarning
from rankscope.metrics.base import Metric
from rankscope.progress import step_bar
from rankscope.result import EvaluationResult

if TYPE_CHECKING:
    from rankscope.judgments.evaluation import JudgmentPlan, SeedPlan

__all__ = ["MIN_TEST_QUERIES", "align", "compare"]

FloatArray = npt.NDArray[np.float64]


def _check_level(value: float, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
        raise OptionError(f"{what} must be a number in (0, 1), not {value!r}")
    return float(value)


def compare(
    qrels: Any,
    runs: Any,
    metrics: MetricsArg | SeedPlan,
    *,
    baseline: str | None = None,
    all_pairs: bool = False,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    confidence: float | None = None,
    n_resamples: int = 10000,
    seed: int | None = 0,
    names: Sequence[str] | None = None,
    ties: Ties | None = None,
    unjudged: Unjudged | None = None,
    queries: Queries | None = None,
    on_duplicate: OnDuplicate = "error",
    run_format: str | None = None,
    tie_tolerance: float = 1e-12,
    progress: bool = True,
    scale: Any = None,
    strategy: str | Mapping[str, str] | None = None,
    transforms: Mapping[Any, Any] | None = None,
    allow_no_overlap: bool = False,
    conventions: str | None = None,
    also: Sequence[Metric] = (),
    on_measured: Callable[[CompareResult], object] | None = None,
) -> CompareResult:
    """Compare runs on several metrics with paired significance tests.

    Every run is evaluated against the same qrels with the same options; for
    each metric the comparison uses the queries every run has a value for
    (under the default policy, every query with judgments). For each run it
    reports the mean with a confidence interval; for each pair (each run
    against the baseline, or every pair) the difference of means with an
    interval, the p-value of a paired test, the p-value adjusted for the
    number of comparisons of that metric, Cohen's :math:`d_z` and the
    queries won, tied and lost.

    Parameters
    ----------
    qrels : Qrels, Judgments, path, DataFrame or dict
        Relevance judgments, or raters' grades (a
        :class:`~rankscope.Judgments`, or any input with ``scale``,
        ``strategy`` or ``transforms`` given): these are transformed and
        aggregated per metric as :func:`rankscope.judgments.evaluate_judgments`
        does, once for all runs.
    runs : sequence of runs, mapping name -> run, or RunInputs
        Two or more runs (:class:`~rankscope.Run`, paths, DataFrames, dicts);
        or a :class:`~rankscope.data.runs.RunInputs` made with
        ``defer_duplicates=True`` (its own names, duplicate rule and format;
        maybe already reading: :meth:`~rankscope.data.runs.RunInputs.start`).
    metrics : str, Metric, a sequence of them, MetricPlan or SeedPlan
        Any spelling :func:`rankscope.parse_metrics` accepts (with judgments,
        also the judging platform's ``nDCG(d)@k`` and ``ERR-0.18@k``); names
        already read (:func:`~rankscope.engine.conventions.plan_metrics`,
        :func:`~rankscope.judgments.evaluation.plan_seed_metrics`) are not
        read again.
    baseline : str, optional
        Name of the baseline run (default: the first run).
    all_pairs : bool, default False
        Compare every pair of runs instead of each run with the baseline.
    test : {"t", "wilcoxon", "permutation", "bootstrap", "tukey"}, default "t"
        Paired t-test, Wilcoxon signed-rank, Fisher randomization, paired
        bootstrap, or Tukey's HSD over all runs (see
        :mod:`rankscope.compare.significance`).
    correction : {"holm", "bonferroni", "bh", "none"}, default "holm"
        Adjustment of p-values for the comparisons of each metric (Tukey's
        HSD needs none and ignores it).
    alpha : float, default 0.05
        Significance level for the marks.
    confidence : float, optional
        Level of the intervals (default ``1 - alpha``).
    n_resamples : int, default 10000
        Rounds of the permutation and bootstrap tests.
    seed : int, optional, default 0
        Seed for the permutation and bootstrap tests (None: fresh randomness).
    names : sequence of str, optional
        Run names, overriding run tags / file names.
    ties, unjudged, queries, on_duplicate
        As in :func:`rankscope.evaluate` (default: rankscope's, or the
        conventions profile's).
    run_format : str, optional
        Format of the runs given as paths (default: from their names). Run
        files are read one at a time, the next while the one before is
        evaluated: memory holds two runs, whatever their number.
    tie_tolerance : float, default 1e-12
        Per-query differences within it count as ties.
    progress : bool, default True
        Allow progress bars (drawn only when stderr is a terminal and tqdm is
        installed; see :mod:`rankscope.progress`).
    scale, strategy, transforms
        For raters' grades: as in :func:`rankscope.judgments.evaluate_judgments`.
    allow_no_overlap : bool, default False
        As in :func:`rankscope.evaluate`: a run sharing no query with the
        qrels is an error unless this is True.
    conventions : str, optional
        A tool's conventions profile, as in :func:`rankscope.evaluate`
        (``"ir_measures"``, ``"ranx"``...): names, tie rules and query policy
        as that tool has them.
    also : sequence of Metric, optional
        Further metrics measured in the same pass over each run (with the
        comparison's options, plain qrels only) and not compared: only each
        run's mean of each is kept (``CompareResult.also_means``), so a
        caller drawing curves beside the comparison reads no run twice.
    on_measured : callable, optional
        Called once every run is measured, before the tests, with the
        comparison so far: per-query values, names, baseline, query counts and
        ``also_means`` (``means``, ``intervals`` and ``comparisons`` still
        empty). It runs while the intervals are worked out on threads, so a
        caller's own work on the per-query values (a report's figures and
        tables) overlaps them.

    Returns
    -------
    CompareResult
        Tables (``to_polars``, ``to_pandas``), rendering (``render``: table,
        markdown, latex, html, csv, json) and per-query values.

    Notes
    -----
    Means here are arithmetic means over the paired queries, so a delta is
    exactly the difference of the two means shown.

    Examples
    --------
    >>> import rankscope
    >>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
    >>> a = {"q1": {"d1": 2, "x": 1}, "q2": {"x": 2, "d2": 1}, "q3": {"x": 2, "d3": 1}}
    >>> b = {"q1": {"d1": 2, "x": 1}, "q2": {"d2": 2, "x": 1}, "q3": {"d3": 2, "x": 1}}
    >>> result = rankscope.compare(qrels, {"a": a, "b": b}, ["P@1"])
    >>> result.comparison("P@1", "b").delta
    0.6666666666666667
    """
    check_test(test)
    check_correction(correction)
    alpha = _check_level(alpha, "alpha")
    level = _check_level(1.0 - alpha if confidence is None else confidence, "confidence")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise OptionError(f"n_resamples must be a whole number >= 1, not {n_resamples!r}")
    from rankscope.judgments.evaluation import SeedPlan  # loaded by every comparison anyway

    asked: list[str | Metric] | MetricPlan | SeedPlan
    asked = metrics if isinstance(metrics, MetricPlan | SeedPlan) else (
        [metrics] if isinstance(metrics, str | Metric) else list(metrics))
    given: OptionFields = {}
    for key, value in (("ties", ties), ("unjudged", unjudged), ("queries", queries),
                       ("conventions", conventions)):
        if value is not None:
            given[key] = value  # type: ignore[literal-required]
    opts = EvalOptions.merged(None, given)
    judged = _judgments_plan(qrels, asked.labels if isinstance(asked, MetricPlan) else asked,
                             scale, strategy, transforms, opts.conventions)
    if judged is None:
        # read once (a bad name fails before any file is read)
        plan = asked.for_qrels(opts) if isinstance(asked, SeedPlan) else plan_metrics(asked, opts)
        pairs = list(zip(plan.labels, plan.metrics, strict=True))
        qrels_t = as_qrels(qrels)
        plan, also_columns = _with_also(plan, also)
    else:
        if also:
            raise OptionError("also takes plain qrels, not raters' judgments")
        pairs = list(zip(judged.labels, judged.metrics, strict=True))
        also_columns = []
    labels = [label for label, _ in pairs]
    also_means: list[list[float | None]] = []
    if isinstance(runs, RunInputs):  # made (and maybe started) by the caller
        if names is not None or on_duplicate != "error" or run_format is not None:
            raise OptionError("names, on_duplicate and run_format belong to the RunInputs "
                              "given as runs")
        inputs = runs
    else:
        # every run is evaluated first: a document ranked twice is found beside the measures
        inputs = RunInputs(runs, names=names, on_duplicate=on_duplicate, run_format=run_format,
                           defer_duplicates=True)
    if len(inputs) < 2:
        raise OptionError(f"compare needs at least two runs, got {len(inputs)}")
    if all_pairs and baseline is not None:
        raise OptionError("give either a baseline or all_pairs=True, not both")
    known = inputs.known_names
    if baseline is not None and known is not None and baseline not in known:
        raise OptionError(f"no run named {baseline!r}; runs: {', '.join(known)}")
    inputs.start()  # the first file is read from here on (if not already)
    preload_test(test)  # the test's imports overlap the reading

    # One run after another (the next file read ahead, each run ranked on a thread while
    # the one before is measured): per-query values are all a comparison keeps of a run,
    # so memory holds three runs whatever their number. The intervals' counts are drawn,
    # and their products worked out, on threads meanwhile.
    with ThreadedIntervals(n_resamples, seed) as intervals_of:
        results: list[EvaluationResult] = []
        candidates: list[list[str]] = []
        with step_bar(len(inputs), "evaluating", unit="run", show=progress) as advance, \
                inputs.tables() as tables, (
                    RankingAhead(None, qrels_t, plan, opts, allow_no_overlap)
                    if judged is None else
                    RankingAhead(judged.evaluate, None, None, opts, allow_no_overlap)
                ) as ranking:
            for measured in ranking.measure(tables, known,
                                            lambda t: candidates.append(name_candidates(t))):
                if also_columns:  # kept apart: the comparison sees its own metrics only
                    measured, kept = _split_also(measured, len(labels), also_columns)
                    also_means.append(kept)
                results.append(measured)
                if len(results) == 1:
                    intervals_of.predraw(measured)
                advance(1)
        run_names = inputs.names(candidates)
        also_of = {name: dict(zip([m.name for m in also], row, strict=True))
                   for name, row in zip(run_names, also_means, strict=False)}
        if baseline is not None and baseline not in run_names:
            raise OptionError(f"no run named {baseline!r}; runs: {', '.join(run_names)}")
        base = None if all_pairs else (baseline or run_names[0])
        query_ids, values = align(results)

        k = len(run_names)
        if base is None:
            order = [(j, i) for i in range(k) for j in range(i + 1, k)]
        else:
            b = run_names.index(base)
            order = [(j, b) for j in range(k) if j != b]

        means: dict[str, dict[str, float | None]] = {name: {} for name in run_names}
        intervals: dict[str, dict[str, tuple[float, float]]] = {name: {} for name in run_names}
        n_queries: dict[str, int] = {}
        comparisons: list[Comparison] = []
        pairs_of = []
        for m, label in enumerate(labels):
            block = values[:, :, m]
            pairs_of.append(block[:, ~np.isnan(block).any(axis=0)])
            n_queries[label] = pairs_of[-1].shape[1]
        intervals_of.start(pairs_of, order, level)
        if test == "t":  # every metric's t distribution in one request, beside the intervals
            prefetch_t_tests([paired[run] - paired[base] for paired in pairs_of
                              for run, base in order], level)
        if on_measured is not None:  # the caller's work on the values, beside the intervals
            on_measured(CompareResult(
                labels=labels, metrics=[metric for _, metric in pairs], run_names=run_names,
                baseline=base, query_ids=query_ids, values=values, n_queries=n_queries,
                means={}, intervals={}, comparisons=[], test=test, correction=correction,
                alpha=alpha, confidence=level, n_resamples=n_resamples, seed=seed,
                infos=[r.info for r in results], also_means=also_of))
        with step_bar(len(labels) * len(order), "testing", unit="pair", show=progress) as advance:
            for m, label in enumerate(labels):
                paired = pairs_of[m]
                low, high = intervals_of(m)
                for r, name in enumerate(run_names):
                    x = paired[r]
                    means[name][label] = float(x.mean()) if x.size else None
                    intervals[name][label] = (float(low[r]), float(high[r]))
                k_runs = len(run_names)
                comparisons += _compare_metric(
                    label, paired, run_names, order, test=test, correction=correction, alpha=alpha,
                    confidence=level, n_resamples=n_resamples, seed=seed, tolerance=tie_tolerance,
                    advance=advance, delta_intervals=list(zip(low[k_runs:], high[k_runs:],
                                                              strict=True)),
                )
    _warn_few_queries(n_queries)
    return CompareResult(
        labels=labels,
        metrics=[metric for _, metric in pairs],
        run_names=run_names,
        baseline=base,
        query_ids=query_ids,
        values=values,
        n_queries=n_queries,
        means=means,
        intervals=intervals,
        comparisons=comparisons,
        test=test,
        correction=correction,
        alpha=alpha,
        confidence=level,
        n_resamples=n_resamples,
        seed=seed,
        infos=[r.info for r in results],
        also_means=also_of,
    )


def _with_also(plan: MetricPlan, also: Sequence[Metric]) -> tuple[MetricPlan, list[int]]:
    """The plan with the ``also`` metrics it lacks appended; each one's column in it."""
    if not also:
        return plan, []
    from dataclasses import replace

    from rankscope.metrics.conventions import Resolved

    resolved = list(plan.resolved)
    columns = []
    for metric in also:
        if not isinstance(metric, Metric):
            raise OptionError(f"also takes Metric objects, not {type(metric).__name__}")
        mine = Resolved(metric.name, metric)
        same = [j for j, found in enumerate(resolved)
                if found.metric == metric and found.reading == mine.reading]
        if same:  # asked for already: its column serves
            columns.append(same[0])
            continue
        taken = {found.label for found in resolved}
        while mine.label in taken:  # a label of the comparison's spelt alike: kept apart
            mine = replace(mine, label=mine.label + "'")
        columns.append(len(resolved))
        resolved.append(mine)
    return replace(plan, resolved=tuple(resolved)), columns


def _split_also(result: EvaluationResult, n: int, columns: list[int],
                ) -> tuple[EvaluationResult, list[float | None]]:
    """The result of the comparison's ``n`` metrics, and the means of the ``also`` columns
    (aggregated as the engine aggregates every mean)."""
    from dataclasses import replace

    from rankscope.engine.assemble import aggregate

    means = [aggregate(result.values[:, j], result.metrics[j].spec.aggregate) for j in columns]
    own = replace(result, labels=result.labels[:n], metrics=result.metrics[:n],
                  values=result.values[:, :n],
                  means={label: result.means[label] for label in result.labels[:n]})
    return own, means


MIN_TEST_QUERIES = 10
"""Fewer paired queries than this draw a warning: a test on them says little.

With 5 or fewer, no two-sided permutation test can even reach p < 0.05
(its smallest p-value is :math:`2 / 2^n`); TREC-style test collections have
50 or more topics.
"""


def _warn_few_queries(n_queries: dict[str, int]) -> None:
    few = {label: n for label, n in n_queries.items() if n < MIN_TEST_QUERIES}
    if not few:
        return
    counts = ", ".join(f"{label}: {n}" for label, n in few.items())
    warnings.warn(
        f"too few paired queries for a significance test to mean much ({counts}; fewer than "
        f"{MIN_TEST_QUERIES}): treat the p-values and intervals as anecdotes",
        RankscopeWarning,
        stacklevel=3,
    )


def _judgments_plan(
    qrels: Any, metrics: list[Any] | SeedPlan, scale: Any, strategy: Any, transforms: Any,
    conventions: str | None = None,
) -> JudgmentPlan | None:
    """Raters' grades aggregated once per needed scale; None for plain qrels."""
    from rankscope.judgments.table import Judgments

    if not isinstance(qrels, Judgments) and scale is None and strategy is None and not transforms:
        return None
    from rankscope.judgments.evaluation import plan_evaluation

    return plan_evaluation(qrels, metrics, scale=scale, strategy=strategy, transforms=transforms,
                           conventions=conventions)


def _compare_metric(
    label: str,
    paired: np.ndarray,
    run_names: list[str],
    order: list[tuple[int, int]],
    *,
    test: str,
    correction: str,
    alpha: float,
    confidence: float,
    n_resamples: int,
    seed: int | None,
    tolerance: float,
    advance: Callable[[int], None],
    delta_intervals: list[tuple[float, float]],
) -> list[Comparison]:
    """Every pair of one metric: test, interval, effect size, wins; then adjust.

    The intervals of the differences are the bootstrap ones given, except
    under Tukey's HSD, whose simultaneous intervals belong to the test.
    """
    n = paired.shape[1]
    if test == "tukey":  # on the values as given (its sums follow their layout)
        p_matrix, half = tukey_hsd(paired, confidence=confidence)
    # each run's values contiguous: a row's sum is then that of the run's values alone
    paired = np.ascontiguousarray(paired)
    runs = np.array([run for run, _ in order], dtype=np.intp)
    bases = np.array([base for _, base in order], dtype=np.intp)
    diffs = paired[runs] - paired[bases]  # each pair's per-query differences, a row each
    ends = np.array(delta_intervals, dtype=np.float64).reshape(len(order), 2)
    if test == "tukey":  # its simultaneous intervals belong to the test
        p_values = np.asarray(p_matrix[runs, bases], dtype=np.float64)
        deltas = np.mean(diffs, axis=1) if n else np.full(len(order), math.nan)
        ends = np.stack([deltas - half, deltas + half], axis=1)
        advance(len(order))
    elif test == "t":  # every pair at once (the same bits as one paired_test each)
        p_values = t_test_p_values(diffs)
        advance(len(order))
    else:
        p_values = np.empty(len(order))
        for i, (run, base) in enumerate(order):
            p_values[i] = paired_test(paired[run], paired[base], test, confidence=confidence,
                                      n_resamples=n_resamples, seed=seed).p_value
            advance(1)
    adjusted = p_values if test == "tukey" else adjust(p_values, correction, alpha=alpha)
    means = np.mean(paired, axis=1) if n else np.full(paired.shape[0], math.nan)
    effects = effect_sizes(diffs)
    counts = wins_ties_losses(diffs, tolerance=tolerance)
    out = []
    for i, (run, base) in enumerate(order):
        wins, ties, losses = (int(c) for c in counts[i])
        out.append(
            Comparison(
                metric=label,
                run=run_names[run],
                baseline=run_names[base],
                delta=float(means[run] - means[base]),
                ci_low=float(ends[i, 0]),
                ci_high=float(ends[i, 1]),
                p_value=float(p_values[i]),
                p_adjusted=float(adjusted[i]),
                effect_size=float(effects[i]),
                wins=wins,
                ties=ties,
                losses=losses,
                n_queries=n,
            )
        )
    return out


def align(results: Sequence[EvaluationResult]) -> tuple[list[str], FloatArray]:
    """Per-query values of several evaluations on one query axis.

    Returns the union of the evaluated queries (byte order) and an array of
    shape (n_runs, n_queries, n_metrics), NaN where a run has no value.
    """
    query_ids = sorted(set().union(*(r.query_ids for r in results)))
    index = {q: i for i, q in enumerate(query_ids)}
    n_metrics = len(results[0].labels) if results else 0
    out = np.full((len(results), len(query_ids), n_metrics), np.nan)
    for r, result in enumerate(results):
        rows = np.fromiter((index[q] for q in result.query_ids), dtype=np.int64,
                           count=len(result.query_ids))
        out[r, rows, :] = result.values
    return query_ids, out
