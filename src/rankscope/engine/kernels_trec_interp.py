"""Interpolated precision (``iprec_at_recall``, ``11pt_avg``) and ``Rprec_mult``.

trec_eval 10.0 turns a recall point p into a number of relevant documents
c = lround(p * R) (9.x used trunc(p * R + 0.9)); the interpolated precision at
c is the highest precision at or after the rank of the c-th relevant
document; a point with c = 0 takes the highest precision anywhere in the
ranking (NaN when nothing is ranked). ``Rprec_mult`` still uses
trunc(x * R + 0.9) and plain (not interpolated) precision at that rank.

The C code walks each ranking backwards, matching the points from the last
parameter down; :func:`_walk` replays that walk for all queries at once, so
unsorted ``11pt_avg`` parameters behave exactly as in trec_eval.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from rankscope.engine.context import Context
from rankscope.engine.kernels_trec import numbers, trec_kernel
from rankscope.engine.ranking import FloatArray, IntArray
from rankscope.errors import MetricParameterError
from rankscope.metrics.base import Metric

__all__ = ["eleven_pt_avg", "iprec_at_recall", "lround", "rprec_mult"]


def lround(values: FloatArray) -> FloatArray:
    """C ``lround``: nearest integer, halves away from zero (exact, no +0.5 trick)."""
    whole = np.trunc(values)
    frac = values - whole
    return np.asarray(whole + np.sign(values) * (np.abs(frac) >= 0.5), dtype=np.float64)


class _Interpolator:
    """The backward walk of one query set: max precision from a relevant row on."""

    def __init__(self, st: Context, lvl: int) -> None:
        rr = st.relevant_judged(lvl).astype(np.int64)
        self.rr = rr
        rel = st.rel_rows(lvl)
        # rows counted as relevant beyond RR (only with -l below 0) shift the walk
        self.extra = rel.count - rr
        walk = rel.index - self.extra[rel.q]
        with np.errstate(divide="ignore", invalid="ignore"):
            prec = walk / (rel.pos + 1.0)
            self.base = rr.astype(np.float64) / st.lengths.astype(np.float64)
        # a sentinel lets reduceat take ranges that end at the last row
        self.prec = np.append(prec, -np.inf)
        self.start = rel.offsets
        self.n = st.n

    def from_rel(self, c: IntArray, which: IntArray) -> FloatArray:
        """For queries ``which``: max(RR/N, max precision from the c-th relevant row)."""
        begin = self.start[which] + c + self.extra[which] - 1
        end = self.start[which + 1]
        if which.size == 0:
            return np.zeros(0)
        idx = np.empty(2 * which.size, dtype=np.int64)
        idx[0::2] = begin
        idx[1::2] = end
        best = np.maximum.reduceat(self.prec, idx)[0::2]
        return np.asarray(np.maximum(self.base[which], best), dtype=np.float64)

    @cached_property
    def final(self) -> FloatArray:
        """The interpolated precision left after the walk (c <= 0 and stuck points)."""
        out = self.base.copy()
        has = np.flatnonzero(self.rr > 0)
        out[has] = self.from_rel(np.ones(has.size, dtype=np.int64), has)
        return out


def _interpolator(st: Context, lvl: int) -> _Interpolator:
    """The context's walk for relevance level ``lvl``, made once (every recall point reads it)."""
    made: _Interpolator = st.cached(("trec_interpolator", lvl), lambda: _Interpolator(st, lvl))
    return made


def _walk(st: Context, lvl: int,
          cuts: list[IntArray]) -> tuple[list[FloatArray], list[FloatArray]]:
    """Replay trec_eval's backward matching of cut-offs (numbers of relevant docs).

    Returns, per parameter, the value assigned and a 0/1 mask of whether the
    walk assigned it (cut-offs above RR at the end of the list are skipped).
    """
    interp = _interpolator(st, lvl)
    final = interp.final
    rr = interp.rr
    prev = rr.copy()
    skipping = np.ones(st.n, dtype=bool)
    stuck = np.zeros(st.n, dtype=bool)
    values: list[FloatArray] = [np.zeros(st.n) for _ in cuts]
    active_masks: list[FloatArray] = [np.zeros(st.n) for _ in cuts]
    for j in range(len(cuts) - 1, -1, -1):
        c = cuts[j]
        skipping &= c > rr
        active = ~skipping
        match = active & ~stuck & (c >= 1) & (c <= prev)
        stuck |= active & ~match
        which = np.flatnonzero(match)
        values[j][which] = interp.from_rel(c[which], which)
        prev[which] = c[which]
        late = active & stuck
        values[j][late] = final[late]
        active_masks[j] = active.astype(np.float64)
    return values, active_masks


def _recall_cuts(st: Context, lvl: int, points: tuple[float, ...]) -> list[IntArray]:
    big_r = st.n_relevant(lvl)
    return [lround(p * big_r).astype(np.int64) for p in points]


def _given(m: Metric, key: str) -> float:
    value = m.get(key)
    if value is None:
        raise MetricParameterError(f"{m.family} needs {key}: {m.family}({key}=0.5)")
    return float(value)


def _one_point(st: Context, lvl: int, c: IntArray) -> FloatArray:
    """:func:`_walk` of one cut-off, without the walk's bookkeeping: 0 above RR, the
    walk's end (:attr:`_Interpolator.final`) below 1, else the precision from the
    c-th relevant row."""
    interp = _interpolator(st, lvl)
    value = np.where(c > interp.rr, 0.0, interp.final)
    which = np.flatnonzero((c >= 1) & (c <= interp.rr))
    value[which] = interp.from_rel(c[which], which)
    return value


@trec_kernel
def iprec_at_recall(st: Context, m: Metric, lvl: int) -> FloatArray:
    return _one_point(st, lvl, _recall_cuts(st, lvl, (_given(m, "p"),))[0])


@trec_kernel
def eleven_pt_avg(st: Context, m: Metric, lvl: int) -> FloatArray:
    points = numbers(str(m.get("points")))
    values, active = _walk(st, lvl, _recall_cuts(st, lvl, points))
    total = np.zeros(st.n, dtype=np.float64)
    for j in range(len(values) - 1, -1, -1):  # trec_eval adds from the last point down
        total = total + np.where(active[j] > 0, values[j], 0.0)
    return total / float(len(points))


@trec_kernel
def rprec_mult(st: Context, m: Metric, lvl: int) -> FloatArray:
    x = _given(m, "x")
    big_r = st.n_relevant(lvl)
    n = st.lengths
    rr = st.relevant_judged(lvl).astype(np.int64)
    rel = st.rel_rows(lvl)
    extra = rel.count - rr
    c = np.trunc(x * big_r + 0.9).astype(np.int64)
    value = np.zeros(st.n, dtype=np.float64)
    beyond = c > n
    value[beyond] = rr[beyond] / c[beyond].astype(np.float64)
    inside = np.flatnonzero(~beyond & (c >= 1))
    so_far = rel.count_within(np.where(~beyond & (c >= 1), c, 0)) - extra
    ok = inside[so_far[inside] > 0]
    value[ok] = so_far[ok] / c[ok].astype(np.float64)
    return value
