"""Kernels of the C/W/L measures (:mod:`rankscope.metrics.cwl`), all queries at once.

Each query's scaled gains are laid in a dense (queries x positions) matrix,
cut or padded to the model's ``depth`` (cwl_eval's 1000), and each family only
supplies its continuation matrix C; the weights and the expected utility are
shared. A model that stops for good at rank k (BPM, SDCG, NERR8, NERR9) needs
only the first k columns: beyond them every weight is 0. Queries are taken in
blocks so the matrices stay a few tens of megabytes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rankscope.engine.context import Context
from rankscope.engine.ranking import FloatArray
from rankscope.errors import MetricParameterError
from rankscope.metrics.base import Metric

__all__ = ["bpm", "insq", "inst", "nerr8", "nerr9", "nerr10", "nerr11", "sdcg"]

_BLOCK_CELLS = 1 << 22  # cells of one (queries x positions) block


def _scaled_gains(ctx: Context, m: Metric) -> FloatArray:
    """Each ranked row's gain in [0, 1] (cwl_eval's scaling through ir_measures)."""
    low = float(m.get("min_rel"))
    top = m.get("max_rel")
    high = float(top) if top is not None else ctx.lists.max_grade
    if not high > low:
        raise MetricParameterError(
            f"{m.name}: max_rel ({high:g}) must be above min_rel ({low:g})"
            + ("; the qrels' highest grade is used when max_rel is unset" if top is None else ""))
    grades = np.nan_to_num(ctx.lists.grades, nan=0.0)  # unjudged: the lowest gain
    clipped = np.clip(np.maximum(grades, 0.0), low, high)  # negative grades count as 0
    return (clipped - low) / (high - low)


def _continuation(family: str, m: Metric, gains: FloatArray, ranks: FloatArray) -> FloatArray:
    """C for every (query, position) of a block; ``ranks`` are 1-based, one row."""
    if family in ("INSQ", "INST", "NERR11"):
        t = float(m.get("T"))
        if family == "INST":
            goal = 2.0 * t - np.cumsum(gains, axis=1)  # T + T_i, T_i = T - CG_i
            return np.asarray(((ranks + goal - 1.0) / (ranks + goal)) ** 2, dtype=np.float64)
        insq = ((ranks + 2.0 * t - 1.0) / (ranks + 2.0 * t)) ** 2
        return insq * (1.0 - gains) if family == "NERR11" else np.broadcast_to(insq, gains.shape)
    if family == "NERR10":
        return float(m.get("p")) * (1.0 - gains)
    inside = ranks < float(m.k or 0)  # the stopping models: C = 0 from rank k on
    if family == "BPM":
        return ((np.cumsum(gains, axis=1) < float(m.get("T"))) & inside).astype(np.float64)
    if family == "SDCG":
        return np.where(inside, np.log2(ranks + 1.0) / np.log2(ranks + 2.0), 0.0)
    if family == "NERR8":
        return np.where(inside, 1.0 - gains, 0.0)
    return np.where(inside, ranks / (ranks + 1.0) * (1.0 - gains), 0.0)  # NERR9


def _expected_utility(family: str) -> Callable[[Context, Metric], FloatArray]:
    def kernel(ctx: Context, m: Metric) -> FloatArray:
        depth = int(m.get("depth"))
        width = depth if m.k is None else min(depth, int(m.k))
        gains_rows = _scaled_gains(ctx, m)
        keep = ctx.pos < width
        out = np.zeros(ctx.n)
        ranks = np.arange(1, width + 1, dtype=np.float64)[None, :]
        step = max(1, _BLOCK_CELLS // width)
        rows_q, rows_pos, rows_gain = ctx.row_query[keep], ctx.pos[keep], gains_rows[keep]
        for start in range(0, ctx.n, step):
            stop = min(ctx.n, start + step)
            sel = (rows_q >= start) & (rows_q < stop)
            gains = np.zeros((stop - start, width))
            gains[rows_q[sel] - start, rows_pos[sel]] = rows_gain[sel]
            cont = _continuation(family, m, gains, ranks)
            # Reaching rank i: the product of C_j over j < i (rank 1 is always read).
            reach = np.ones_like(gains)
            np.cumprod(cont[:, :-1], axis=1, out=reach[:, 1:])
            weights = reach / reach.sum(axis=1, keepdims=True)
            out[start:stop] = (weights * gains).sum(axis=1)
        return out

    return kernel


# One kernel per user model (each family's definition names its own).
bpm = _expected_utility("BPM")
insq = _expected_utility("INSQ")
inst = _expected_utility("INST")
sdcg = _expected_utility("SDCG")
nerr8 = _expected_utility("NERR8")
nerr9 = _expected_utility("NERR9")
nerr10 = _expected_utility("NERR10")
nerr11 = _expected_utility("NERR11")
