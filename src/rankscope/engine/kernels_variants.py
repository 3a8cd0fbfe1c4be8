"""Kernels of other tools' metric variants (:mod:`rankscope.metrics.variants`).

Same contract as every kernel (:mod:`rankscope.engine.kernels`): the shared
:class:`~rankscope.engine.context.Context` and a bound metric in, one value
per evaluated query out, no loop over queries. Each variant's definition
names its kernel here.
"""

from __future__ import annotations

import math

import numpy as np

from rankscope.data.cnum import atof
from rankscope.engine.context import Context
from rankscope.engine.discounts import discounted
from rankscope.engine.kernel_math import divide_or_zero
from rankscope.engine.ranking import FloatArray, IntArray
from rankscope.errors import MetricError
from rankscope.metrics.base import Metric

__all__ = ["quepid_ndcg", "quepid_precision", "ranx_bpref", "sklearn_dcg", "sklearn_ndcg",
           "trec9_eleven_pt", "trec9_iprec"]

def _discounts(ctx: Context, k: int | None) -> FloatArray:
    """1 / log2(rank + 1) of every ranked row, 0 beyond rank k."""
    disc = 1.0 / ctx.log2_rank
    return disc if k is None else np.where(ctx.pos < k, disc, 0.0)


def _tie_groups(ctx: Context) -> IntArray:
    """Group number of every ranked row: consecutive rows of a query with equal scores."""
    n = ctx.pos.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    scores = ctx.lists.scores
    new = np.empty(n, dtype=bool)
    new[0] = True
    new[1:] = (ctx.pos[1:] == 0) | (scores[1:] != scores[:-1])
    return np.cumsum(new, dtype=np.int64) - 1


def _sklearn_dcg_values(ctx: Context, m: Metric) -> FloatArray:
    gains = np.nan_to_num(ctx.lists.grades, nan=0.0)  # y_true: the grade, unjudged 0
    disc = _discounts(ctx, m.k)
    if m.get("ignore_ties"):
        return ctx.seg_sum(gains * disc)
    # every order of a tie is equally likely: each rank of a group gains its mean
    group = _tie_groups(ctx)
    count = np.bincount(group).astype(np.float64)
    mean_gain = np.bincount(group, weights=gains) / np.maximum(count, 1.0)
    disc_sum = np.bincount(group, weights=disc, minlength=count.size)
    first = np.flatnonzero(np.diff(group, prepend=-1))
    group_query = ctx.row_query[first]
    out = np.bincount(group_query, weights=mean_gain * disc_sum, minlength=ctx.n)
    return out.astype(np.float64, copy=False)


def sklearn_dcg(ctx: Context, m: Metric) -> FloatArray:
    return _sklearn_dcg_values(ctx, m)


def sklearn_ndcg(ctx: Context, m: Metric) -> FloatArray:
    gains = np.nan_to_num(ctx.lists.grades, nan=0.0)
    if gains.size and float(gains.min()) < 0:
        raise MetricError(
            f"{m.name}: a ranked document has the negative grade {float(gains.min()):g}; "
            "scikit-learn's ndcg_score refuses negative relevance"
        )
    # the ideal: the ranked documents' own grades, best first
    order = np.lexsort((-gains, ctx.row_query))
    ideal = gains[order] * _discounts(ctx, m.k)
    return divide_or_zero(_sklearn_dcg_values(ctx, m), ctx.seg_sum(ideal))


def quepid_precision(ctx: Context, m: Metric) -> FloatArray:
    hits = ctx.hits(1.0, m.k)
    return divide_or_zero(hits, ctx.depth(m.k).astype(np.float64))


def _exp_gain(grades: FloatArray) -> FloatArray:
    g = np.nan_to_num(grades, nan=0.0)
    return np.where(g > 0, np.exp2(np.maximum(g, 0.0)) - 1.0, 0.0)


def quepid_ndcg(ctx: Context, m: Metric) -> FloatArray:
    dcg = ctx.seg_sum(_exp_gain(ctx.lists.grades) * _discounts(ctx, m.k))
    # every rated document, best first, not cut at k
    gains = _exp_gain(ctx.lists.judged_grades)
    ideal = discounted(gains, ctx.judged_pos, out=gains)
    return divide_or_zero(dcg, ctx.judged_sum(ideal))


def ranx_bpref(ctx: Context, m: Metric) -> FloatArray:
    rel = float(m.get("rel"))
    grades = ctx.lists.grades
    with np.errstate(invalid="ignore"):
        is_rel = grades >= rel
        nonrel = grades < rel  # NaN (unjudged) is neither
    judged = ctx.lists.judged_grades
    big_r = np.bincount(ctx.judged_query[judged >= rel], minlength=ctx.n).astype(np.float64)
    big_n = np.bincount(ctx.judged_query[judged < rel], minlength=ctx.n).astype(np.float64)
    above = ctx.seg_cumsum(nonrel.astype(np.int64)) - nonrel
    q = ctx.row_query[is_rel]
    den = np.minimum(big_r, big_n)[q]
    frac = np.zeros(q.size)
    np.divide(np.minimum(above[is_rel], big_r[q]), den, out=frac, where=den > 0)
    total = np.bincount(q, weights=1.0 - frac, minlength=ctx.n).astype(np.float64)
    return divide_or_zero(total, big_r)


def _trec9_values(ctx: Context, rel: float, points: tuple[float, ...]) -> list[FloatArray]:
    """trec_eval 9.x's interpolated precision at each recall point, per query."""
    from rankscope.engine.kernels_trec_interp import _walk  # the 10.0 walk, loaded on use

    view = ctx.levels_view()  # trec_eval's view of the grades, as the 10.0 walk reads it
    lvl = math.ceil(rel)
    big_r = view.n_relevant(lvl).astype(np.float64)
    # 9.x: c = (long)(p * R + 0.9), where 10.0 rounds p * R
    cuts = [np.trunc(p * big_r + 0.9).astype(np.int64) for p in points]
    values, _ = _walk(view, lvl, cuts)
    return values


def trec9_iprec(ctx: Context, m: Metric) -> FloatArray:
    p = m.get("p")
    if p is None:
        raise MetricError(f"{m.name} needs a recall point: trec9_iprec_at_recall(p=0.5)")
    return _trec9_values(ctx, float(m.get("rel")), (float(p),))[0]


def trec9_eleven_pt(ctx: Context, m: Metric) -> FloatArray:
    points = tuple(atof(part) for part in str(m.get("points")).split(","))
    values = _trec9_values(ctx, float(m.get("rel")), points)
    total = np.zeros(ctx.n)
    for value in reversed(values):  # trec_eval adds from the last point down
        total = total + value
    return total / float(len(points))
