"""Kernels of the measures only trec_eval defines: counting, set and binary ones.

Each reads trec_eval's view of the rankings (:meth:`Context.levels_view`:
integer levels, pooled-but-unjudged and unjudged documents apart, the ``-c``
stand-in for a query the run lacks) at the integer level ``lvl`` = the
metric's ``rel`` rounded up, with the same floating-point operations in the
same order as trec_eval 10.0, so the printed digits agree. R = ``num_rel``,
RR = ``num_rel_ret``, N = ``num_ret``. Formulas are in the metric
definitions (:mod:`rankscope.metrics.trec_eval_measures`); the interpolated
measures are in :mod:`rankscope.engine.kernels_trec_interp`, the gain-based
ones in :mod:`rankscope.engine.kernels_trec_gain`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from rankscope.data.cnum import atof
from rankscope.engine.c_math import c_log, log2_table
from rankscope.engine.context import Context
from rankscope.engine.kernel_math import divide_where
from rankscope.engine.kernels import Kernel
from rankscope.engine.kernels_binary import average_precision, bpref
from rankscope.engine.ranking import FloatArray, IntArray
from rankscope.errors import MetricParameterError
from rankscope.metrics.base import Metric, make_metric
from rankscope.metrics.trec_eval_names import STAND_IN_ZERO

__all__ = ["MIN_GEO_MEAN", "bin_g", "gm_bpref", "gm_map", "infap", "num_nonrel_judged_ret",
           "numbers", "relative_p", "relstrings", "set_map", "set_relative_p", "trec_kernel",
           "unj", "utility", "yaap"]

MIN_GEO_MEAN = 0.00001
INFAP_EPSILON = 0.00001

TrecKernel = Callable[[Context, Metric, int], FloatArray]


def trec_kernel(fn: TrecKernel) -> Kernel:
    """Decorator: the kernel computing ``fn(view, metric, lvl)`` on trec_eval's view.

    For a query the run lacks, the measures trec_eval zeroes after its
    stand-in ranking (:data:`~rankscope.metrics.trec_eval_names.STAND_IN_ZERO`)
    are 0 (the drop-in command makes trec_eval's own patch, by printed name).
    """

    def kernel(ctx: Context, m: Metric) -> FloatArray:
        view = ctx.levels_view()
        rel = dict(m.params).get("rel", 1)
        value = fn(view, m, math.ceil(float(rel)))  # type: ignore[arg-type]
        if view is not ctx and m.family in STAND_IN_ZERO:
            value = value.copy()
            value[~ctx.lists.in_run] = 0.0
        return value

    kernel.__name__ = kernel.__qualname__ = fn.__name__
    kernel.__doc__ = fn.__doc__
    return kernel


def numbers(text: str) -> tuple[float, ...]:
    """Comma-separated numbers read with C ``atof``, as trec_eval reads parameters."""
    return tuple(atof(part) for part in text.split(","))


def _f(values: IntArray | FloatArray) -> FloatArray:
    return values.astype(np.float64)


def _counts(v: Context, lvl: int) -> tuple[IntArray, IntArray, IntArray]:
    """(RR, N, R) per query, as integers."""
    rr = v.relevant_judged(lvl).astype(np.int64)
    return rr, v.lengths, v.n_relevant(lvl).astype(np.int64)


@trec_kernel
def gm_map(v: Context, m: Metric, lvl: int) -> FloatArray:
    # AP per query; the mean over queries is geometric (the family's aggregate)
    return average_precision(v, make_metric("AP", rel=lvl))


@trec_kernel
def gm_bpref(v: Context, m: Metric, lvl: int) -> FloatArray:
    return bpref(v, make_metric("bpref", rel=lvl))


@trec_kernel
def yaap(v: Context, m: Metric, lvl: int) -> FloatArray:
    total = v.rel_rows(lvl).sum(v.precision_at_relevant(lvl))
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = (1.0 + total) / ((1.0 + v.n_relevant(lvl)) - total)
    return c_log(inner)


@trec_kernel
def infap(v: Context, m: Metric, lvl: int) -> FloatArray:
    pool = v.pool_rows
    values = v.values_at(pool.rows)
    is_rel = (values >= 0) & (values >= lvl)
    rel = pool.sub(is_rel)
    r = _f(pool.before(is_rel)[is_rel] + 1)
    n = _f(pool.before((values >= 0) & ~is_rel)[is_rel])
    u = _f(pool.before(values == -2)[is_rel])
    j = _f(rel.pos)
    with np.errstate(divide="ignore", invalid="ignore"):
        later = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((r - 1.0 + n + u) / j) * (
            (r - 1.0 + INFAP_EPSILON) / ((r - 1.0 + n) + 2 * INFAP_EPSILON)
        )
    terms = np.where(j == 0, 1.0, later)
    total = rel.sum(terms)
    big_r = v.n_relevant(lvl)
    return np.where(big_r > 0, divide_where(total, big_r, big_r > 0), total)


@trec_kernel
def bin_g(v: Context, m: Metric, lvl: int) -> FloatArray:
    rel = v.rel_rows(lvl)
    arg = 3 + rel.pos - rel.index
    terms = 1.0 / log2_table(int(arg.max(initial=2)))[arg]
    return divide_where(rel.sum(terms), v.n_relevant(lvl), rel.count > 0)


def _cut(m: Metric) -> int:
    return int(min(int(m.k or 0), 2**62))


@trec_kernel
def relative_p(v: Context, m: Metric, lvl: int) -> FloatArray:
    big_r = v.n_relevant(lvl).astype(np.int64)
    hits = v.rel_rows(lvl).count_within(_cut(m))
    return divide_where(_f(hits), _f(np.minimum(big_r, int(m.k or 0))), big_r > 0)


@trec_kernel
def unj(v: Context, m: Metric, lvl: int) -> FloatArray:
    k = _cut(m)
    unjudged = np.minimum(v.lengths, k) - v.judged_rows.count_within(k)
    return _f(unjudged) / float(m.k or 0)


@trec_kernel
def utility(v: Context, m: Metric, lvl: int) -> FloatArray:
    values = numbers(str(m.get("coefficients")))
    if len(values) != 4:
        raise MetricParameterError(f"utility needs four coefficients a,b,c,d, not {values}")
    p1, p2, p3, p4 = values
    rr, n, big_r = _counts(v, lvl)
    n_docs = int(m.get("n_docs") or 0)
    return p1 * _f(rr) + p2 * _f(n - rr) + p3 * _f(big_r - rr) + p4 * _f(n_docs + rr - n - big_r)


@trec_kernel
def set_relative_p(v: Context, m: Metric, lvl: int) -> FloatArray:
    rr, n, big_r = _counts(v, lvl)
    return divide_where(_f(rr), _f(np.minimum(n, big_r)), (n > 0) & (big_r > 0))


@trec_kernel
def set_map(v: Context, m: Metric, lvl: int) -> FloatArray:
    rr, n, big_r = _counts(v, lvl)
    return divide_where(_f(rr) * _f(rr), _f(n) * _f(big_r), (n > 0) & (big_r > 0))


@trec_kernel
def num_nonrel_judged_ret(v: Context, m: Metric, lvl: int) -> FloatArray:
    rr = v.relevant_judged(lvl).astype(np.int64)
    return _f(v.judged_rows.count - rr)


_REL_CHARS = np.array(list("0123456789"), dtype="<U1")


def relstrings(v: Context, limit: float) -> list[str]:
    """trec_eval's ``relstring``: one character per ranked level, first L ranks.

    ``0``-``9`` for levels 0-9, ``>`` above 9, ``-`` for -1 (not in the
    qrels), ``.`` for -2 (judged negative); L is ``limit`` (trec_eval's
    parameter, default 10).
    """
    length = 0 if math.isnan(limit) or limit < 0 else int(min(limit, 2**62))
    shown = np.minimum(v.lengths, length)
    starts = np.repeat(v.lists.offsets[:-1], shown)
    values = v.values_at(starts + (np.arange(int(shown.sum())) - np.repeat(
        np.cumsum(shown) - shown, shown)))
    chars = np.where(values > 9, ">", np.where(values == -1, "-", np.where(values == -2, ".", "<")))
    digits = (values >= 0) & (values <= 9)
    chars = np.where(digits, _REL_CHARS[np.clip(values, 0, 9)], chars)
    ends = np.cumsum(shown)
    text = "".join(chars.tolist())
    return [text[e - k: e] for e, k in zip(ends.tolist(), shown.tolist(), strict=True)]

