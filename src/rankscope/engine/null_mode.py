r"""The judging platform's null rules (seed 004): kernels for ``unjudged="null"``.

In this mode a document without a (non-null) grade is *ungraded*, not
irrelevant, and a metric that has nothing graded to look at has no value.
For each query, over the first k ranked positions (the whole ranking without
a cut-off), with :math:`G` the number of graded positions:

- every metric is null (NaN) when :math:`G = 0`, including an empty ranking;
- :math:`P@k = \frac{|\{i \le k: g_i \ge rel\}|}{G}` (graded positions only);
- :math:`AP@k = \frac{1}{R} \sum_{i \le k,\, g_i \ge rel} \frac{|\{j \le i: g_j \ge rel\}|}{i}`
  with :math:`R` the relevant positions in the top k (not the qrels' count)
  and the rank :math:`i` as denominator, so an ungraded position counts as
  irrelevant; 0 when :math:`R = 0`;
- :math:`RR@k = 1 / \min\{i \le k: g_i \ge rel\}`, 0 when nothing in the top k
  is relevant;
- CG, DCG, nDCG: ungraded positions gain 0; the gain is the grade itself
  (``gain="linear"``, the default); nDCG's ideal is the same top-k gains
  sorted descending, and nDCG is 0 when that ideal is 0;
- :math:`ERR@k = \sum_{i \le k} \frac{R_i}{i^{e}} \prod_{j<i}(1 - R_j)`,
  :math:`R_i = (2^{g_i} - 1) / 2^{g_{max}}`, ungraded :math:`R_i = 0`;
  :math:`e = 1` normally and 0.18 for the platform's ERR-0.18
  (``rank_exponent``); :math:`g_{max}` is the metric's ``max_grade`` (set
  from the declared scale by :func:`rankscope.judgments.evaluate_judgments`),
  else the highest grade in the qrels.

Means over queries then use only queries with a value (the engine's
:func:`~rankscope.engine.evaluate.aggregate` skips NaN).

References
----------
.. [1] SearchTweak, "Evaluation Metrics" (seed 004): two-stage aggregation,
   missing grades and null handling.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rankscope.engine.context import Context
from rankscope.engine.ranking import FloatArray
from rankscope.errors import OptionError, setting
from rankscope.metrics.base import Metric

__all__ = ["NULL_KERNELS", "graded_positions"]

NullKernel = Callable[[Context, Metric], FloatArray]
NULL_KERNELS: dict[str, NullKernel] = {}
"""Kernels of the judging platform's null rules (``unjudged="null"``), by family."""


def _register(family: str) -> Callable[[NullKernel], NullKernel]:
    def wrap(fn: NullKernel) -> NullKernel:
        NULL_KERNELS[family] = fn
        return fn

    return wrap


def graded_positions(ctx: Context, k: int | None) -> FloatArray:
    """G: the number of graded positions within the first ``k``, per query."""
    return ctx.seg_sum(ctx.judged.astype(np.float64), ctx.top(k))


def _nullify(values: FloatArray, ctx: Context, k: int | None) -> FloatArray:
    return np.where(graded_positions(ctx, k) > 0, values, np.nan)


def _safe_div(num: FloatArray, den: FloatArray) -> FloatArray:
    out = np.zeros_like(num)
    np.divide(num, den, out=out, where=den != 0)
    return out


@_register("P")
def _precision(ctx: Context, m: Metric) -> FloatArray:
    graded = graded_positions(ctx, m.k)
    values = _safe_div(ctx.hits(m.get("rel"), m.k), graded)
    return np.where(graded > 0, values, np.nan)


@_register("AP")
def _average_precision(ctx: Context, m: Metric) -> FloatArray:
    is_rel = ctx.relevant(m.get("rel"))
    top = ctx.top(m.k)
    mask = is_rel if top is None else is_rel & top
    prec = ctx.seg_cumsum(is_rel.astype(np.int64)) / (ctx.pos + 1.0)
    big_r = ctx.seg_sum(mask.astype(np.float64))
    return _nullify(_safe_div(ctx.seg_sum(prec, mask), big_r), ctx, m.k)


@_register("RR")
def _reciprocal_rank(ctx: Context, m: Metric) -> FloatArray:
    is_rel = ctx.relevant(m.get("rel"))
    top = ctx.top(m.k)
    rows = np.flatnonzero(is_rel if top is None else is_rel & top)
    out = np.zeros(ctx.n)
    if rows.size:
        queries, first = np.unique(ctx.row_query[rows], return_index=True)
        out[queries] = 1.0 / (ctx.pos[rows[first]] + 1.0)
    return _nullify(out, ctx, m.k)


@_register("CG")
def _cumulative_gain(ctx: Context, m: Metric) -> FloatArray:
    return _nullify(ctx.seg_sum(ctx.gain_of(ctx.lists.grades, m), ctx.top(m.k)), ctx, m.k)


def _dcg(ctx: Context, m: Metric) -> FloatArray:
    gains = ctx.gain_of(ctx.lists.grades, m) / ctx.log2_rank
    return ctx.seg_sum(gains, ctx.top(m.k))


@_register("DCG")
def _discounted_cumulative_gain(ctx: Context, m: Metric) -> FloatArray:
    return _nullify(_dcg(ctx, m), ctx, m.k)


@_register("nDCG")
def _ndcg(ctx: Context, m: Metric) -> FloatArray:
    if m.get("ideal") == "max":
        raise OptionError(
            f"{m.name}: under {setting('unjudged', 'null')} the ideal is the ranking's own "
            "top-k gains "
            "sorted descending (the judging platform's rule, as SearchTweak defines nDCG); "
            "ideal='max' is not defined there"
        )
    gains = ctx.gain_of(ctx.lists.grades, m)
    top = ctx.top(m.k)
    if top is not None:
        gains = np.where(top, gains, -np.inf)
    # Sort each query's top-k gains descending; rows outside the top k sink last.
    best = gains[np.lexsort((-gains, ctx.row_query))]
    ideal = ctx.seg_sum(np.where(np.isfinite(best), best / ctx.log2_rank, 0.0))
    return _nullify(_safe_div(_dcg(ctx, m), ideal), ctx, m.k)


@_register("ERR")
def _err(ctx: Context, m: Metric) -> FloatArray:
    top_grade = ctx.metric_max_grade(m)
    exponent = float(m.get("rank_exponent"))
    g = np.nan_to_num(ctx.lists.grades, nan=0.0)
    stop = np.clip((np.exp2(np.maximum(g, 0.0)) - 1.0) / np.exp2(top_grade), 0.0, 1.0)
    cont = 1.0 - stop
    # prod_{j<i}(1 - R_j) within each query via logs; exact zeros tracked apart.
    zero = cont <= 0.0
    logs = np.log(np.where(zero, 1.0, cont))
    csum = np.cumsum(logs)
    start = np.concatenate(([0.0], csum))[ctx.lists.offsets[:-1]]
    before_log = csum - logs - np.repeat(start, ctx.lengths)
    zeros_before = ctx.seg_cumsum(zero.astype(np.int64)) - zero
    reach = np.where(zeros_before > 0, 0.0, np.exp(before_log))
    discount = np.power(ctx.pos + 1.0, exponent)
    return _nullify(ctx.seg_sum(reach * stop / discount, ctx.top(m.k)), ctx, m.k)
