"""Which numbers a conventions profile changes, and why: the run evaluated both ways.

:func:`explain_differences` evaluates one run twice, under rankscope's
defaults and under a tool's profile, and reports for every metric asked for
whether its mean or any per-query value changed, how many queries each side
averaged, and the profile's reasons that apply to it (a rewritten metric, a
tie rule, 32-bit scores, a query policy). A team moving from the tool sees
exactly what switching to the defaults would change.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from rankscope import display
from rankscope.data.tables import Run, as_qrels, as_run
from rankscope.engine.conventions import MetricPlan, plan_metrics
from rankscope.engine.evaluate import MetricsArg, evaluate
from rankscope.engine.options import EvalOptions
from rankscope.errors import OptionError, RankscopeWarning
from rankscope.metrics.conventions import get_profile
from rankscope.result import EvaluationResult

__all__ = [
    "DifferencePlans",
    "DifferenceReport",
    "MetricDifference",
    "explain_differences",
    "plan_differences",
]


@dataclass(frozen=True)
class MetricDifference:
    """One metric under the defaults and under the profile."""

    label: str
    default_metric: str
    tool_metric: str
    default_mean: float | None
    tool_mean: float | None
    n_default: int
    n_tool: int
    queries_differing: list[str]
    only_default: list[str]
    only_tool: list[str]
    reasons: list[str]

    @property
    def differs(self) -> bool:
        """Whether any number changed: the mean, a per-query value, or the queries averaged."""
        return (not _same(self.default_mean, self.tool_mean) or bool(self.queries_differing)
                or bool(self.only_default) or bool(self.only_tool))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "metric": self.label, "differs": self.differs,
            "default": {"metric": self.default_metric, "mean": self.default_mean,
                        "n_queries": self.n_default},
            "tool": {"metric": self.tool_metric, "mean": self.tool_mean,
                     "n_queries": self.n_tool},
            "queries_differing": list(self.queries_differing),
            "only_default": list(self.only_default), "only_tool": list(self.only_tool),
            "reasons": list(self.reasons),
        }


@dataclass(frozen=True)
class DifferenceReport:
    """Every asked-for metric under the defaults and under one profile."""

    conventions: str
    metrics: list[MetricDifference]
    default_info: str
    tool_info: str
    profile_notes: list[str] = field(default_factory=list)

    @property
    def differing(self) -> list[MetricDifference]:
        """The metrics whose numbers the profile changes."""
        return [m for m in self.metrics if m.differs]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"conventions": self.conventions, "default": self.default_info,
                "tool": self.tool_info, "profile": list(self.profile_notes),
                "metrics": [m.to_dict() for m in self.metrics]}

    def render(self) -> str:
        """A table of the differing metrics with their reasons, for people.

        A delegate kept for callers of this method: the text is made by
        :func:`rankscope.render.differences.render_differences`.
        """
        return display.differences_text(self)


@dataclass(frozen=True)
class DifferencePlans:
    """The metric names read once under rankscope's defaults and once under a tool's
    conventions (:func:`plan_differences`), for :func:`explain_differences`."""

    conventions: str
    default: MetricPlan
    tool: MetricPlan


def plan_differences(metrics: MetricsArg, conventions: str) -> DifferencePlans:
    """Read the metric names once each way (a bad name fails here, before any file is read).

    Examples
    --------
    >>> plans = plan_differences(["P@1", "ndcg_cut_5"], "trec_eval")
    >>> plans.default.labels == plans.tool.labels == ["P@1", "ndcg_cut_5"]
    True
    """
    get_profile(conventions)  # an unknown tool: refused by name
    return DifferencePlans(conventions, plan_metrics(metrics, EvalOptions()),
                           plan_metrics(metrics, EvalOptions(conventions=conventions)))


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return a == b or (math.isnan(a) and math.isnan(b))


def explain_differences(
    qrels: Any,
    run: Any,
    metrics: MetricsArg | DifferencePlans,
    conventions: str,
    *,
    allow_no_overlap: bool = False,
) -> DifferenceReport:
    """Evaluate ``run`` under rankscope's defaults and under ``conventions``; what changes.

    Parameters
    ----------
    qrels, run, allow_no_overlap
        As in :func:`rankscope.evaluate`.
    metrics
        As in :func:`rankscope.evaluate`, or the names already read both ways
        (:func:`plan_differences`, with the same ``conventions``): each name is read
        once under each side's conventions, however many evaluations use it.
    conventions : str
        The tool whose conventions to compare with (``"ir_measures"``...).

    Returns
    -------
    DifferenceReport
        One :class:`MetricDifference` per metric asked for; ``differing``
        lists those whose numbers change.

    Examples
    --------
    >>> from rankscope.engine.differences import explain_differences
    >>> qrels = {"1": {"a": 3, "b": 0}}
    >>> run = {"1": {"a": 2.0, "b": 1.0}}
    >>> report = explain_differences(qrels, run, ["P@1", "ERR@5"], "ir_measures")
    >>> [(m.label, m.default_mean, m.tool_mean) for m in report.differing]
    [('ERR@5', 0.875, 0.4375)]
    """
    profile = get_profile(conventions)
    qrels_t = as_qrels(qrels)
    run_t = as_run(run)
    tool_opts = EvalOptions(conventions=conventions)
    defaults = EvalOptions()
    plans = metrics if isinstance(metrics, DifferencePlans) else plan_differences(
        metrics, conventions)
    if plans.conventions != conventions:
        raise OptionError(f"these metric names were read against {plans.conventions}'s "
                          f"conventions, not {conventions}'s: plan them again")
    ours = evaluate(qrels_t, run_t, plans.default, options=defaults,
                    allow_no_overlap=allow_no_overlap)
    with warnings.catch_warnings():
        # the same inputs: a warning about them was given by the first evaluation
        warnings.simplefilter("ignore", RankscopeWarning)
        theirs = evaluate(qrels_t, run_t, plans.tool, options=tool_opts,
                          allow_no_overlap=allow_no_overlap)
    matters = _what_matters(run_t, ours)
    option_reasons = [(name, why) for name, why in
                      _option_reasons(profile.option_notes, defaults, tool_opts)
                      if matters.get(name, True)]
    out = []
    for j, (mine, tool) in enumerate(zip(plans.default.resolved, plans.tool.resolved,
                                         strict=True)):
        reasons = []
        if tool.note:
            reasons.append(tool.note)
        if mine.metric != tool.metric and not tool.note:
            reasons.append(f"{conventions} reads {tool.label!r} as {tool.metric.name}")
        reading = tool.reading.fields()
        for name, why in option_reasons:
            if name in reading:  # the metric's own reading overrides this option
                continue
            reasons.append(why)
        differing, only_mine, only_tool = _per_query(ours, theirs, j)
        out.append(MetricDifference(
            label=mine.label, default_metric=mine.metric.name, tool_metric=tool.metric.name,
            default_mean=ours.means[mine.label], tool_mean=theirs.means[tool.label],
            n_default=_n(ours, j), n_tool=_n(theirs, j), queries_differing=differing,
            only_default=only_mine, only_tool=only_tool, reasons=reasons,
        ))
    return DifferenceReport(
        conventions=conventions, metrics=out, default_info=ours.info.describe(),
        tool_info=theirs.info.describe(),
        profile_notes=[f"{name}: {why}" for name, why in profile.option_notes],
    )


def _option_reasons(
    notes: Sequence[tuple[str, str]], defaults: EvalOptions, tool: EvalOptions
) -> list[tuple[str, str]]:
    """The profile's option values that differ from the defaults, with why."""
    out = []
    for name, why in notes:
        ours, theirs = getattr(defaults, name), getattr(tool, name)
        if ours != theirs:
            out.append((name, f"{name}: {theirs} (default {ours}): {why}"))
    return out


def _what_matters(run: Run, ours: EvaluationResult) -> dict[str, bool]:
    """Whether a policy can change a number on these inputs at all."""
    frame = run.frame.select("query_id", "score")
    rounded = frame.with_columns(pl.col("score").cast(pl.Float32))
    distinct = frame.n_unique()
    return {
        "queries": bool(ours.info.missing_from_run),
        # 32-bit scores matter only where they make new ties
        "scores": rounded.n_unique() < distinct,
        "ties": distinct < frame.height,
    }


def _n(result: EvaluationResult, j: int) -> int:
    return int(np.count_nonzero(~np.isnan(result.values[:, j])))


def _per_query(
    ours: EvaluationResult, theirs: EvaluationResult, j: int
) -> tuple[list[str], list[str], list[str]]:
    """Queries whose values differ; queries with a value on one side only."""
    mine = {q: float(v) for q, v in zip(ours.query_ids, ours.values[:, j], strict=True)
            if not math.isnan(v)}
    tool = {q: float(v) for q, v in zip(theirs.query_ids, theirs.values[:, j], strict=True)
            if not math.isnan(v)}
    differing = sorted(q for q in mine.keys() & tool.keys() if mine[q] != tool[q])
    return differing, sorted(mine.keys() - tool.keys()), sorted(tool.keys() - mine.keys())
