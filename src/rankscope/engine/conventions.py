"""Conventions profiles in the engine: which metric each name is, and how the run is read for it.

A profile (:mod:`rankscope.metrics.conventions`) rewrites names into the
metrics a tool computes and says, per metric, how the tool reads the run
(its tie rule, the precision of its scores, how deep it reads). The drivers
call :func:`resolve_plan` once and then rank the run once per distinct
reading (:func:`reading_groups`, usually one), each time through the one
ranking step, after :func:`prepare_run` (32-bit scores when asked).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import polars as pl

from rankscope.data.tables import Run
from rankscope.engine.options import EvalOptions
from rankscope.errors import MetricError, OptionError
from rankscope.metrics.base import Metric
from rankscope.metrics.conventions import Reading, Resolved, resolve_name

__all__ = ["MetricPlan", "ReadingGroup", "plan_metrics", "prepare_run", "reading_groups",
           "resolve_plan"]

_FLOAT32_MAX = float(np.finfo(np.float32).max)


@dataclass(frozen=True)
class MetricPlan:
    """Metric names read once, under one conventions profile and relevance threshold.

    Made by :func:`plan_metrics`; give it wherever metric names are accepted
    (``evaluate``, ``compare``, the streaming and Spark drivers) and the names
    are not read again: a command evaluating several runs parses them once.
    """

    resolved: tuple[Resolved, ...]
    conventions: str | None
    rel: float | None

    @property
    def labels(self) -> list[str]:
        """The names as typed, in order."""
        return [found.label for found in self.resolved]

    @property
    def metrics(self) -> list[Metric]:
        """The metric each name stands for."""
        return [found.metric for found in self.resolved]


def plan_metrics(
    metrics: str | Metric | Iterable[str | Metric] | MetricPlan,
    options: EvalOptions | None = None,
) -> MetricPlan:
    """Read metric names once (see :func:`resolve_plan`) into a reusable :class:`MetricPlan`."""
    if isinstance(metrics, MetricPlan):
        resolve_plan(metrics, options)  # the same conventions and threshold, or an error
        return metrics
    opts = options if options is not None else EvalOptions()
    return MetricPlan(tuple(resolve_plan(metrics, opts)), opts.conventions, opts.rel)


def resolve_plan(
    metrics: str | Metric | Iterable[str | Metric] | MetricPlan,
    options: EvalOptions | None = None,
) -> list[Resolved]:
    """Every asked-for metric as the options' conventions read it, labelled as typed.

    A label asked for twice is kept once; the options' relevance threshold
    (when set) is bound into every metric that has one. A :class:`MetricPlan`
    is not read again: it must have been read under the options' conventions
    and threshold.
    """
    if isinstance(metrics, MetricPlan):
        conventions = options.conventions if options is not None else None
        rel = options.rel if options is not None else None
        if (metrics.conventions, metrics.rel) != (conventions, rel):
            raise OptionError(
                f"these metric names were read with conventions {metrics.conventions!r} and "
                f"rel {metrics.rel!r}, not {conventions!r} and {rel!r}: plan them again")
        return list(metrics.resolved)
    items: Sequence[str | Metric]
    if isinstance(metrics, str | Metric):
        items = [metrics]
    else:
        items = list(metrics)
    if not items:
        raise MetricError("no metric asked for")
    key = (tuple(items), options)
    try:
        kept = _PLANS.get(key)
    except TypeError:  # an unhashable item: refused below
        kept = None
    if kept is not None:  # the same names under the same options: read once per process
        return list(kept)
    conventions = options.conventions if options is not None else None
    plan: list[Resolved] = []
    seen: set[str] = set()
    for item in items:
        if not isinstance(item, str | Metric):
            raise MetricError(f"a metric is a name or a Metric, not {type(item).__name__}")
        for found in resolve_name(item, conventions):
            if found.label in seen:
                continue
            seen.add(found.label)
            if options is not None:
                found = replace(found, metric=options.bind(found.metric))
            plan.append(found)
    if len(_PLANS) >= _PLANS_KEPT:
        _PLANS.pop(next(iter(_PLANS)))
    _PLANS[key] = tuple(plan)
    return plan


_PLANS: dict[tuple[object, ...], tuple[Resolved, ...]] = {}
"""Plans already read, by (names, options): an evaluation loop (a validation set after
every epoch) names the same metrics every call. Names mean the same for the whole
process (the registry is complete once imported), and plans are immutable."""
_PLANS_KEPT = 64


@dataclass
class ReadingGroup:
    """The metrics (columns of the plan) that share one reading of the run.

    ``options`` are the evaluation's options with the reading's tie rule and
    score precision; ``depth`` the deepest rank the tool reads (None: all).
    """

    options: EvalOptions
    depth: int | None
    columns: list[int] = field(default_factory=list)


def reading_groups(plan: Sequence[Resolved], options: EvalOptions) -> list[ReadingGroup]:
    """The plan's columns grouped by how the run is read for them (first group first)."""
    groups: dict[tuple[str, str, int | None], ReadingGroup] = {}
    for j, found in enumerate(plan):
        reading: Reading = found.reading
        opts = replace(options, **reading.fields()) if reading.fields() else options
        key = (opts.ties, opts.scores, reading.depth)
        if key not in groups:
            groups[key] = ReadingGroup(opts, reading.depth)
        groups[key].columns.append(j)
    return list(groups.values())


def prepare_run(run: Run, options: EvalOptions) -> Run:
    """The run as the options read it: scores rounded to 32-bit floats when asked."""
    if options.scores != "float32" or run.frame.height == 0:
        return run
    score = run.frame.get_column("score")
    largest = float(score.abs().max())  # type: ignore[arg-type]
    if largest > _FLOAT32_MAX:
        raise OptionError(
            f"scores='float32': the score {largest:g} in {run.source} is beyond a 32-bit "
            "float's range"
        )
    rounded = score.cast(pl.Float32).cast(pl.Float64)
    # the frame is already checked: keep where its duplicate search runs
    return Run(run.frame.with_columns(rounded.alias("score")), name=run.name, source=run.source,
               _trusted=True, _defer_duplicates=run.deferred_duplicates)
