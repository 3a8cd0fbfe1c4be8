"""Kernels of the counting measures (:mod:`rankscope.metrics.counts`): Judged and trec_eval's
num_ret, num_rel and num_rel_ret."""

from __future__ import annotations

import numpy as np

from rankscope.engine.context import Context
from rankscope.engine.kernel_math import divide_or_zero
from rankscope.engine.ranking import FloatArray
from rankscope.metrics.base import Metric

__all__ = ["judged", "num_rel", "num_rel_ret", "num_ret"]


def num_rel_ret(ctx: Context, m: Metric) -> FloatArray:
    return ctx.relevant_judged(m.get("rel"), m.k).copy()


def num_ret(ctx: Context, m: Metric) -> FloatArray:
    return ctx.depth(m.k).astype(np.float64)


def num_rel(ctx: Context, m: Metric) -> FloatArray:
    return ctx.n_relevant(m.get("rel")).copy()


def judged(ctx: Context, m: Metric) -> FloatArray:
    count = ctx.seg_sum(ctx.judged.astype(np.float64), ctx.top(m.k))
    return divide_or_zero(count, ctx.depth(m.k).astype(np.float64))
