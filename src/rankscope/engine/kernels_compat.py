"""Kernels of Compatibility, Accuracy and NumQ, in the core kernel style.

Compatibility needs, for each retrieved document with a positive grade, its
position in the ideal ranking; from there every sum of the rank-biased
overlap has a closed form over the harmonic-like table
:math:`H(n) = \\sum_{d=1}^{n} p^{d-1} / d`, so no per-query loop is needed.
"""

from __future__ import annotations

import numpy as np

from rankscope.engine.context import Context
from rankscope.engine.ranking import FloatArray, IntArray
from rankscope.metrics.base import Metric

__all__ = ["accuracy", "compat", "num_q"]


def _ideal_positions(ctx: Context, positive: np.ndarray) -> IntArray:
    """1-based ideal position of each ranked row with a positive grade.

    Ideal order: grade descending; equal grades keep the run's order, retrieved
    documents before the others. Position = the query's judged documents with a
    higher grade + the retrieved ones of the same grade ranked above + 1.
    """
    rows = np.flatnonzero(positive)
    q = ctx.row_query[rows]
    grades = ctx.lists.grades[rows]
    judged = ctx.lists.judged_grades
    levels = np.unique(np.concatenate((judged, grades)))
    n_levels = levels.size
    # Composite keys, ascending = query ascending then grade descending (judged rows'
    # order in the CSR layout already).
    key_judged = ctx.judged_query * n_levels + (n_levels - 1 - np.searchsorted(levels, judged))
    key_rows = q * n_levels + (n_levels - 1 - np.searchsorted(levels, grades))
    higher = np.searchsorted(key_judged, key_rows, side="left") - ctx.lists.judged_offsets[q]
    # Among retrieved rows of the same (query, grade): their order by rank.
    order = np.lexsort((ctx.pos[rows], key_rows))
    sorted_keys = key_rows[order]
    starts = np.flatnonzero(np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1])))
    within = np.arange(rows.size) - np.repeat(starts, np.diff(np.append(starts, rows.size)))
    same = np.empty(rows.size, dtype=np.int64)
    same[order] = within
    return np.asarray(higher + same + 1, dtype=np.int64)


def compat(ctx: Context, m: Metric) -> FloatArray:
    p = float(m.get("p"))
    with np.errstate(invalid="ignore"):
        positive = ctx.lists.grades > 0
    n_ideal = np.bincount(ctx.judged_query[ctx.lists.judged_grades > 0],
                          minlength=ctx.n).astype(np.int64)
    depth = np.maximum(ctx.lengths, n_ideal)
    top = int(depth.max(initial=0))
    steps = np.arange(1, top + 1, dtype=np.float64)
    weights = p ** (steps - 1.0)
    harmonic = np.concatenate(([0.0], np.cumsum(weights / steps)))  # H(n)
    total = np.concatenate(([0.0], np.cumsum(weights)))  # S(n) = sum of weights
    # A shared document counts in X_d from d = max(rank, ideal position) on.
    meet = np.maximum(ctx.pos[positive] + 1, _ideal_positions(ctx, positive))
    q = ctx.row_query[positive]
    raw = np.bincount(q, weights=harmonic[depth[q]] - harmonic[meet - 1], minlength=ctx.n)
    if m.get("normalize"):
        best = total[n_ideal] + n_ideal * (harmonic[depth] - harmonic[n_ideal])
    else:
        best = total[depth]
    out = np.zeros(ctx.n)
    np.divide(raw, best, out=out, where=best > 0)
    return out


def accuracy(ctx: Context, m: Metric) -> FloatArray:
    is_rel = ctx.relevant(m.get("rel"))
    inside = np.ones(ctx.pos.size, dtype=bool) if m.k is None else ctx.pos < m.k
    nonrel = ~is_rel & inside
    above = ctx.seg_cumsum(nonrel.astype(np.int64)) - nonrel
    counted = is_rel & inside
    n_rel = ctx.seg_sum(counted.astype(np.float64))
    n_nonrel = ctx.seg_sum(nonrel.astype(np.float64))
    above_sum = ctx.seg_sum(above.astype(np.float64), counted)
    pairs = n_rel * n_nonrel
    out = np.full(ctx.n, np.nan)
    np.divide(above_sum, pairs, out=out, where=pairs > 0)
    return np.where(pairs > 0, 1.0 - out, np.nan)


def num_q(ctx: Context, m: Metric) -> FloatArray:
    return ctx.lists.in_run.astype(np.float64)

