"""trec_eval's view of grade rankings: integer levels, and a stand-in ranking for a query
the run lacks (``-c``); made once per context
(:meth:`~rankscope.engine.context.Context.levels_view`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from rankscope.engine.ranking import FloatArray, IntArray, RankedLists
from rankscope.engine.ranking_match import as_levels

__all__ = ["judged_levels", "levels_of"]


def judged_levels(lists: RankedLists) -> tuple[IntArray, FloatArray, dict[
        tuple[object, ...], object]]:
    """The judged lists of trec_eval's view (levels >= 0: offsets, levels), and what the
    kernels keep of them (see :meth:`~rankscope.engine.context.Context.qrels_cached`)."""
    judged = np.trunc(lists.judged_grades)
    keep = judged >= 0
    jq = np.repeat(np.arange(lists.n_queries, dtype=np.int64), np.diff(lists.judged_offsets))
    counts = np.bincount(jq[keep], minlength=lists.n_queries) if jq.size else \
        np.zeros(lists.n_queries, np.int64)
    judged_offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return judged_offsets, judged[keep], {}


def levels_of(lists: RankedLists, judged: tuple[IntArray, FloatArray, dict[
        tuple[object, ...], object]]) -> RankedLists:
    """trec_eval's view of grade rankings, its judged lists ``judged``
    (:func:`judged_levels`)."""
    values = as_levels(lists.grades)
    lengths = np.diff(lists.offsets)
    rows: IntArray | Callable[[], IntArray] = lists.row_source  # read only if asked for
    missing = np.flatnonzero(~lists.in_run & (lengths == 0))
    if missing.size:
        at = lists.offsets[missing]
        values = np.insert(values, at, -1.0)

        def rows() -> IntArray:
            return np.insert(lists.run_rows, at, -1)
        lengths = lengths.copy()
        lengths[missing] = 1
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    judged_offsets, judged_grades, shared = judged
    return replace(lists, offsets=offsets, grades=values, row_source=rows,
                   judged_offsets=judged_offsets, judged_grades=judged_grades, levels=True,
                   qrels_shared=shared if lists.qrels_shared is not None else None)
