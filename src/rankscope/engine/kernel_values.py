"""Per-query values of metrics over ranked lists: each metric's kernel on the whole arrays.

Apart from :mod:`rankscope.engine.evaluate` (reading inputs, conventions,
results) so that a command needing only the values (``rankscope trec_eval``)
imports only the kernels.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from rankscope.engine.context import Context
from rankscope.engine.judged_only import condense, is_judged_only, without_judged_only
from rankscope.engine.kernels import KERNELS, NULL_KERNELS
from rankscope.engine.options import Unjudged
from rankscope.engine.ranking import FloatArray, RankedLists
from rankscope.errors import MetricError, OptionError, setting
from rankscope.metrics.base import Metric

if TYPE_CHECKING:
    from rankscope.data.subtopics import SubtopicQrels

__all__ = ["compute"]


def compute(lists: RankedLists, metrics: Sequence[Metric], *, unjudged: Unjudged,
            subtopics: SubtopicQrels | None = None) -> FloatArray:
    """Per-query values, shape (n_queries, n_metrics); NaN = null.

    ``subtopics`` (the intent-aware measures' judgments) makes the shared context
    an :class:`~rankscope.engine.intents.IntentContext`. Raises the run's
    duplicate-document error when its search ran beside the kernels (see
    :func:`~rankscope.engine.ranking.rank`).
    """
    def context(ranked: RankedLists) -> Context:
        if subtopics is None:
            return Context(ranked)
        from rankscope.engine.intents import IntentContext

        return IntentContext(ranked, subtopics)

    ctx = context(lists)
    condensed: Context | None = None
    out = np.empty((lists.n_queries, len(metrics)), dtype=np.float64)
    computed: dict[Metric, FloatArray] = {}
    for j, metric in enumerate(metrics):
        if metric not in computed:
            ctx.ahead = tuple(metrics[j + 1:])  # what a kernel may keep for later metrics
            if is_judged_only(metric):
                if lists.depth is not None:  # a driver cut the rankings: judged rows are lost
                    raise OptionError(f"{metric.name} reads past the cut-off, so it needs whole "
                                      "rankings (rankscope.evaluate, the local engine)")
                condensed = condensed or context(condense(lists))
                condensed.ahead = ctx.ahead
                plain = without_judged_only(metric)
                computed[metric] = _kernel(plain, unjudged)(condensed, plain)
            else:
                computed[metric] = _kernel(metric, unjudged)(ctx, metric)
        out[:, j] = computed[metric]
    lists.check_duplicates()
    return out


def _kernel(metric: Metric, unjudged: Unjudged) -> Callable[[Context, Metric], FloatArray]:
    table = NULL_KERNELS if unjudged == "null" else KERNELS
    if metric.family not in table:
        if unjudged == "null":
            supported = ", ".join(sorted(NULL_KERNELS)) or "none"
            raise OptionError(
                f"{metric.name} has no definition under {setting('unjudged', 'null')} "
                f"(supported: {supported})"
            )
        raise MetricError(f"{metric.name} cannot be computed from qrels and one run")
    return table[metric.family]
