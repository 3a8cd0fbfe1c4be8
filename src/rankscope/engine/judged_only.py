"""Metrics with ``judged_only=True``: computed on the rankings without unjudged documents.

trec_eval's ``-J`` and ir_measures' ``judged_only`` drop the documents without a
judgment (and, as trec_eval does, those with a negative grade: "seen, not
judged") before ranks are counted. Here that is a parameter of one metric, so
``P@5`` and ``P(judged_only=True)@5`` can be asked for together: the engine
computes the second with the same kernel on condensed rankings.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rankscope.engine.ranking import RankedLists
from rankscope.metrics.base import Metric

__all__ = ["condense", "is_judged_only", "without_judged_only"]


def is_judged_only(metric: Metric) -> bool:
    """Whether ``metric`` has ``judged_only=True``."""
    return any(name == "judged_only" and bool(value) for name, value in metric.params)


def without_judged_only(metric: Metric) -> Metric:
    """The same metric with ``judged_only=False`` (to run on condensed rankings)."""
    params = tuple((n, False if n == "judged_only" else v) for n, v in metric.params)
    return Metric(metric.family, params, metric.k)


def condense(lists: RankedLists) -> RankedLists:
    """The rankings without their unjudged (or negatively graded) documents."""
    with np.errstate(invalid="ignore"):
        keep = lists.grades >= 0
    counts = np.bincount(np.repeat(np.arange(lists.n_queries), lists.lengths)[keep],
                         minlength=lists.n_queries)
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    # doc ids and scores are read through run_rows, so they follow (when read)
    return dataclasses.replace(lists, offsets=offsets, grades=lists.grades[keep],
                               row_source=lambda: lists.run_rows[keep])
