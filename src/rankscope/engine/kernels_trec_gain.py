"""trec_eval's gain-based measures: ideal_dcg, G, ndcg_rel, Rndcg, rbp, rbp_resid.

Gains come from :mod:`rankscope.engine.trec_gains` (the relevance level
itself unless ``key=value`` parameters change it); the discount at rank k is
log2(k + 1). ``-l`` does not change gains. Sums are taken in rank order per
query, as in the C code, so every printed digit agrees with trec_eval 10.0.
(``ndcg`` and ``dcg`` with gain parameters are the engine's nDCG and DCG with
``gain_table``.)
"""

from __future__ import annotations

import math

import numpy as np

from rankscope.engine.c_math import log2_table
from rankscope.engine.context import Context
from rankscope.engine.discounts import discounted
from rankscope.engine.kernel_math import divide_positive
from rankscope.engine.kernels_trec import trec_kernel
from rankscope.engine.ranking import FloatArray, IntArray
from rankscope.engine.rowsets import running_sum, segment_blocks
from rankscope.engine.trec_gains import Entry, GainInfo, gain_info, parse_gain_pairs
from rankscope.metrics.base import Metric

__all__ = ["g_measure", "ideal_dcg", "ndcg_rel", "rbp_resid", "rndcg", "trec_rbp"]


def _pairs(m: Metric) -> tuple[tuple[str, float], ...]:
    return parse_gain_pairs(m.family, str(m.get("gains") or ""))


def _results_dcg(st: Context, gi: GainInfo) -> FloatArray:
    return gi.rows.sum(discounted(gi.gain, gi.rows.pos))


def _ideal_dcg(st: Context, gi: GainInfo) -> FloatArray:
    terms = discounted(gi.ideal_gain, gi.ideal_pos)
    out = np.bincount(gi.ideal_query, weights=terms, minlength=st.n)
    return np.asarray(out, dtype=np.float64)


@trec_kernel
def ideal_dcg(st: Context, m: Metric, lvl: int) -> FloatArray:
    return _ideal_dcg(st, gain_info(st, _pairs(m)))


def _running_parts(st: Context, gi: GainInfo) -> tuple[FloatArray, FloatArray]:
    """Running results DCG per non-zero-gain row and running ideal DCG per ideal position.

    Rows of gain 0 add nothing in trec_eval's loop, so skipping them keeps
    every partial sum identical.
    """
    # the discounted terms are this call's own: summed in place, no second array of them
    weights = discounted(gi.gain, gi.rows.pos)
    iweights = discounted(gi.ideal_gain, gi.ideal_pos)
    return (running_sum(weights, gi.rows.offsets, out=weights),
            running_sum(iweights, gi.ideal_offsets, out=iweights))


def _dcg_before(gi: GainInfo, run_dcg: FloatArray, query: IntArray,
                depth: IntArray) -> FloatArray:
    """Results DCG over each query's first ``depth`` ranks (0 if none count)."""
    rows = gi.rows
    start = gi.st.lists.offsets[query]
    last = np.searchsorted(rows.rows, start + depth, side="left") - 1
    out = np.zeros(query.size, dtype=np.float64)
    has = last >= rows.offsets[query]
    out[has] = run_dcg[last[has]]
    return out


def _ideal_through(gi: GainInfo, running_ideal: FloatArray, query: IntArray,
                   pos: IntArray) -> FloatArray:
    """Ideal DCG through position ``pos`` (capped at the ideal's end; 0 if empty)."""
    length = gi.ideal_len[query]
    upto = np.minimum(pos, length - 1)
    out = np.zeros(query.size, dtype=np.float64)
    has = upto >= 0
    out[has] = running_ideal[gi.ideal_offsets[query[has]] + upto[has]]
    return out


def _rel_sums(gi: GainInfo, run_dcg: FloatArray,
              run_ideal: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Per query, the sum of (results DCG / ideal DCG) at each positive-gain row, and
    how many such rows, a block of whole queries at a time (:func:`segment_blocks`).

    Each query's terms are added in rank order from 0 as ``np.bincount`` of them all
    would; no array of every gaining row's query, rank, ideal DCG or term (8 bytes a
    row each, 17 MB at 2.1 M rows) is made, a block's.
    """
    rows = gi.rows
    offsets = rows.offsets
    total = np.zeros(offsets.size - 1, dtype=np.float64)
    hits = np.zeros(offsets.size - 1, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        for first, last in segment_blocks(offsets):
            start, stop = int(offsets[first]), int(offsets[last])
            positive = gi.gain[start:stop] > 0.0
            q = rows.q[start:stop][positive]
            ideal = _ideal_through(gi, run_ideal, q, rows.pos[start:stop][positive])
            terms = np.divide(run_dcg[start:stop][positive], ideal, out=ideal)
            np.subtract(q, first, out=q)
            total[first:last] = np.bincount(q, weights=terms, minlength=last - first)
            hits[first:last] = np.bincount(q, minlength=last - first)
    return total, hits


@trec_kernel
def ndcg_rel(st: Context, m: Metric, lvl: int) -> FloatArray:
    gi = gain_info(st, _pairs(m))
    run_dcg, run_ideal = _running_parts(st, gi)
    total, hits = _rel_sums(gi, run_dcg, run_ideal)
    every = np.arange(st.n)
    with np.errstate(divide="ignore", invalid="ignore"):
        size = gi.ideal_len.astype(np.float64)
        full_dcg = _dcg_before(gi, run_dcg, every, st.lengths)
        full_ideal = _ideal_through(gi, run_ideal, np.arange(st.n), gi.ideal_len - 1)
        total = total + ((size - hits) * full_dcg) / full_ideal
        value = np.where(total > 0.0, total / size, 0.0)
    return value


@trec_kernel
def rndcg(st: Context, m: Metric, lvl: int) -> FloatArray:
    gi = gain_info(st, _pairs(m))
    run_dcg, run_ideal = _running_parts(st, gi)
    n, length = st.lengths, gi.ideal_len
    # Boundaries: ideal positions whose gain differs from the previous one
    # (from the starting gain at position 0), then the step where it ends.
    prev = np.concatenate(([0.0], gi.ideal_gain[:-1]))
    first = gi.ideal_pos == 0
    prev[first] = gi.top[gi.ideal_query[first]]
    change = np.flatnonzero(gi.ideal_gain != prev)
    started = gi.top > 0.0
    end_q = np.flatnonzero(started)
    bq = np.concatenate((gi.ideal_query[change], end_q))
    bp = np.concatenate((gi.ideal_pos[change], length[end_q]))
    order = np.lexsort((bp, bq))
    bq, bp = bq[order], bp[order]
    results = _dcg_before(gi, run_dcg, bq, np.minimum(bp, n[bq]))
    ideal = _ideal_through(gi, run_ideal, bq, bp - 1)
    # After the walk, a ranking longer than the walked steps adds one more point.
    steps = np.where(started, length + 1, 0)
    tail_q = np.flatnonzero(steps < n)
    full_ideal = _ideal_through(gi, run_ideal, tail_q, length[tail_q] - 1)
    pq = np.concatenate((bq, tail_q))
    pr = np.concatenate((results, _dcg_before(gi, run_dcg, tail_q, n[tail_q])))
    pi = np.concatenate((ideal, full_ideal))
    keep = pi > 0.0
    point_order = np.argsort(pq, kind="stable")
    keep_sorted = keep[point_order]
    pts_q = pq[point_order][keep_sorted]
    total = np.bincount(pts_q, weights=(pr / np.where(keep, pi, 1.0))[point_order][keep_sorted],
                        minlength=st.n)
    count = np.bincount(pts_q, minlength=st.n).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = total / count
    return np.where(st.n_relevant(lvl) > 0, value, 0.0)


@trec_kernel
def g_measure(st: Context, m: Metric, lvl: int) -> FloatArray:
    gi = gain_info(st, _pairs(m))
    walk = np.where(gi.top > 0.0, gi.ideal_len, 0)
    # The cost of each step of the ideal walk: its gain, at least 1 (1 after it ends).
    cost = np.where(gi.ideal_gain >= 1.0, gi.ideal_gain, 1.0)
    if np.all(cost == np.floor(cost)) and np.all(gi.gain == np.floor(gi.gain)):
        sum_cost, sum_results = _g_sums_whole(st, gi, walk, cost)
    else:
        sum_cost, sum_results = _g_sums_exact(st, gi, walk, cost)
    arg = (2.0 + sum_cost) - sum_results
    total = gi.rows.sum(gi.gain / _c_log2(arg))
    ideal_total = np.bincount(gi.ideal_query, weights=gi.ideal_gain, minlength=st.n)
    return divide_positive(total, np.asarray(ideal_total, dtype=np.float64))


def _g_sums_whole(st: Context, gi: GainInfo, walk: IntArray,
                  cost: FloatArray) -> tuple[FloatArray, FloatArray]:
    """G's running cost and gain at each non-zero-gain row, for whole-number gains.

    Whole numbers add exactly in any order, so prefix sums give the C values.
    """
    rows = gi.rows
    q, pos = rows.q, rows.pos
    gains = gi.gain.astype(np.int64)
    total = np.cumsum(gains)
    sum_results = total - np.concatenate(([0], total))[rows.offsets[:-1]][q]
    icost = np.cumsum(cost.astype(np.int64))
    ibase = np.concatenate(([0], icost))[gi.ideal_offsets[:-1]]
    upto = np.minimum(pos + 1, walk[q])  # walk steps taken through this rank
    walked = np.where(upto > 0, icost[gi.ideal_offsets[q] + upto - 1] - ibase[q], 0)
    sum_cost = walked + (pos + 1 - upto)
    return sum_cost.astype(np.float64), sum_results.astype(np.float64)


def _g_sums_exact(st: Context, gi: GainInfo, walk: IntArray,
                  cost: FloatArray) -> tuple[FloatArray, FloatArray]:
    """G's running sums rank by rank, in C's order (for fractional gains)."""
    every = st.all_rows
    step_cost = np.ones(every.rows.size, dtype=np.float64)
    walking = every.pos < walk[every.q]
    idx = np.flatnonzero(walking)
    step_cost[idx] = cost[gi.ideal_offsets[every.q[idx]] + every.pos[idx]]
    sum_cost = running_sum(step_cost, st.lists.offsets)[gi.rows.rows]
    sum_results = running_sum(gi.gain, gi.rows.offsets)
    return sum_cost, sum_results


def _c_log2(values: FloatArray) -> FloatArray:
    """C ``log2``: a table for whole numbers, the C library one by one otherwise."""
    whole = values == np.floor(values)
    if whole.all() and values.size and values.min() >= 1 and values.max() < 2**24:
        return log2_table(int(values.max()))[values.astype(np.int64)]
    out = np.empty(values.size, dtype=np.float64)
    for i, x in enumerate(values.tolist()):
        out[i] = math.log2(x) if x > 0 else (-math.inf if x == 0 else math.nan)
    return out


def _p_param(pairs: tuple[tuple[str, float], ...]) -> float:
    p = 0.9
    for key, value in pairs:
        if key == "p":
            p = value
    return p


def _rescale(table: list[Entry]) -> list[Entry]:
    low = high = 0.0  # trec_eval leaves these uninitialised; its build behaves as 0
    for _, gain, _ in table:
        low, high = min(low, gain), max(high, gain)
    if low < 0 or high > 1:
        return [(lv, (g - low) / (high - low), src) for lv, g, src in table]
    return table


def _powers(p: float, upto: int) -> FloatArray:
    """p^0, p^1, ... by repeated multiplication, as trec_eval computes them."""
    steps = np.full(upto + 1, p, dtype=np.float64)
    steps[0] = 1.0
    return np.multiply.accumulate(steps)


@trec_kernel
def trec_rbp(st: Context, m: Metric, lvl: int) -> FloatArray:
    pairs = (("p", float(m.get("p"))), *_pairs(m))  # a "p=..." among the gains wins
    p = _p_param(pairs)
    gi = gain_info(st, pairs, key="rbp", transform=_rescale)
    power = _powers(p, int(st.lengths.max(initial=0)))
    return (1.0 - p) * gi.rows.sum(gi.gain * power[gi.rows.pos])


@trec_kernel
def rbp_resid(st: Context, m: Metric, lvl: int) -> FloatArray:
    p = float(m.get("p"))
    power = _powers(p, int(st.lengths.max(initial=0)))
    total = np.zeros(st.n, dtype=np.float64)
    # a level's sign is its grade's (levels are whole numbers): no integer copy needed
    for queries, grid in st.padded(fill=0, per_row=st.lists.grades):
        width = grid.shape[1]
        if width == 0:
            continue
        step = max(1, (1 << 19) // width)  # a few MB at a time, reused: no fresh pages
        weights = np.empty((min(step, len(queries)), width), dtype=np.float64)
        for lo in range(0, len(queries), step):
            rows = grid[lo:lo + step]
            w = weights[: rows.shape[0]]
            # p^(rank-1) at unjudged ranks, 0 elsewhere (adding 0 leaves C's sum unchanged)
            w[...] = 0.0
            np.copyto(w, power[:width], where=rows < 0)
            # a running sum adds left to right, as C does (a sum may pair terms)
            total[queries[lo:lo + step]] = np.cumsum(w, axis=1, out=w)[:, -1]
    has = st.lengths - st.judged_rows.count > 0
    return np.where(has, power[st.lengths] + (1 - p) * total, 0.0)
