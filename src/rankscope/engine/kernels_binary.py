"""Kernels of the binary-relevance metrics (:mod:`rankscope.metrics.binary`).

Written the way trec_eval computes them, on the context's relevant and judged
rows in rank order, so the same kernel gives trec_eval's numbers bit for bit
on rankings with trec_eval's levels (``rankscope trec_eval``, quirks at ``-l``
0 and below included) and rankscope's on any grades. Each family's definition
names its kernel here (``Family.kernel``); the engine's table is
:data:`rankscope.engine.kernels.KERNELS`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rankscope.engine.context import Context
from rankscope.engine.kernel_math import divide_or_zero, divide_where
from rankscope.engine.ranking import FloatArray
from rankscope.engine.rowsets import RowSet, segment_blocks
from rankscope.metrics.base import Metric

__all__ = ["average_precision", "bpref", "f_measure", "hits", "precision", "r_precision",
           "recall", "recall_capped", "reciprocal_rank", "success"]


def precision(ctx: Context, m: Metric) -> FloatArray:
    rel = m.get("rel")
    if m.k is None:  # set_P: relevant retrieved over retrieved
        return divide_or_zero(ctx.relevant_judged(rel), ctx.lengths.astype(np.float64))
    return ctx.hits(rel, m.k) / float(m.k)


def recall(ctx: Context, m: Metric) -> FloatArray:
    rel = m.get("rel")
    found = ctx.relevant_judged(rel) if m.k is None else ctx.hits(rel, m.k)
    return divide_or_zero(found, ctx.n_relevant(rel))


def recall_capped(ctx: Context, m: Metric) -> FloatArray:
    rel = m.get("rel")
    cap = float(m.k) if m.k is not None else np.inf  # the family requires a cut-off
    return divide_or_zero(ctx.hits(rel, m.k), np.minimum(ctx.n_relevant(rel), cap))


def f_measure(ctx: Context, m: Metric) -> FloatArray:
    p = precision(ctx, m)
    r = recall(ctx, m)
    given = m.get("beta2")
    b2 = float(given) if given is not None else float(m.get("beta")) ** 2
    return divide_or_zero((1.0 + b2) * p * r, b2 * p + r)


def hits(ctx: Context, m: Metric) -> FloatArray:
    return ctx.hits(m.get("rel"), m.k).copy()


def success(ctx: Context, m: Metric) -> FloatArray:
    return (ctx.hits(m.get("rel"), m.k) > 0).astype(np.float64)


def r_precision(ctx: Context, m: Metric) -> FloatArray:
    rel = m.get("rel")
    big_r = ctx.n_relevant(rel)
    depth = np.minimum(ctx.lengths, big_r.astype(np.int64))
    hits = ctx.rel_rows(rel).count_within(depth).astype(np.float64)
    return divide_where(hits, big_r, depth > 0)


def average_precision(ctx: Context, m: Metric) -> FloatArray:
    rel = m.get("rel")
    found = ctx.rel_rows(rel)
    terms = ctx.precision_at_relevant(rel)
    big_r = ctx.n_relevant(rel)
    if m.k is None:  # trec_eval's map: 0 unless a relevant document was ranked
        return divide_where(found.sum(terms), big_r, found.count > 0)
    return divide_or_zero(found.sum(terms, found.pos < m.k), big_r)


def reciprocal_rank(ctx: Context, m: Metric) -> FloatArray:
    queries, first = ctx.rel_rows(m.get("rel")).first()
    if m.k is not None:
        within = first < m.k
        queries, first = queries[within], first[within]
    out = np.zeros(ctx.n)
    out[queries] = 1.0 / (first + 1.0)
    return out


def bpref(ctx: Context, m: Metric) -> FloatArray:
    rel = m.get("rel")
    # trec_eval's gm_bpref asks again for the same values (read, never written to)
    return ctx.cached(("bpref", rel), lambda: _bpref_values(ctx, rel))  # type: ignore[no-any-return]


def _bpref_values(ctx: Context, rel: Any) -> FloatArray:
    judged = ctx.judged_rows
    big_r = ctx.n_relevant(rel)
    cap_of_query = np.minimum(ctx.n_judged_nonrelevant(rel), big_r)
    total = np.zeros(ctx.n, dtype=np.float64)
    # a block of whole queries at a time: each query's terms added in rank order from 0,
    # as one bincount of them all, without arrays of every judged row (8 bytes a row each,
    # 35 MB at 4.4 M judged ranked rows) beside the kept ones
    for first, last in segment_blocks(judged.offsets):
        start, stop = int(judged.offsets[first]), int(judged.offsets[last])
        block = RowSet(judged.rows[start:stop], judged.q[start:stop] - first,
                       judged.pos[start:stop], last - first)
        grades = ctx.lists.grades[block.rows]
        with np.errstate(invalid="ignore"):
            is_rel = grades >= rel
            nonrel = (grades >= 0) & ~is_rel  # a negative grade: neither relevant nor non-relevant
        nonrel_before = block.before(nonrel)[is_rel]  # judged non-relevant ranked above
        q = block.q[is_rel]
        cap = cap_of_query[q + first]
        seen = np.minimum(nonrel_before.astype(np.float64), big_r[q + first])
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(nonrel_before > 0, 1.0 - seen / cap, 1.0)
        total[first:last] = np.bincount(q, weights=terms, minlength=last - first)
    return divide_or_zero(total, big_r)
