"""Cutting rankings at a depth: which rank positions stay, and which rows are within k.

Rankings are in CSR form (``counts`` rows per query, back to back). A cut that
falls inside a run of tied scores keeps the whole run until ties are broken,
since their order decides which rows stay; the run's end is found by probing
forward from the cut, never by looking for ties along whole rankings.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rankscope.engine.ranked_lists import BoolArray, FloatArray, IntArray, csr

__all__ = ["prefix_positions", "tie_run_ends", "within"]


def prefix_positions(counts: IntArray, limit: int,
                      score_at: Callable[[IntArray], FloatArray] | None) -> IntArray:
    """Rank positions of each query's first ``limit`` rows, plus the rest of a tie run
    straddling the cut (its order decides which rows stay) when ``score_at`` gives
    the scores at rank positions (None: ties are not broken by document)."""
    starts = csr(counts)[:-1]
    take = np.minimum(counts, limit)
    if score_at is not None:
        cut = np.flatnonzero((take > 0) & (counts > take))
        if cut.size:
            end = tie_run_ends(score_at, starts[cut] + take[cut] - 1, starts[cut] + counts[cut])
            take[cut] = end - starts[cut]
    return np.repeat(starts - np.cumsum(take) + take, take) + np.arange(int(take.sum()),
                                                                          dtype=np.int64)


def tie_run_ends(score_at: Callable[[IntArray], FloatArray], last: IntArray,
                  ends: IntArray) -> IntArray:
    """One past the run of scores equal to the score at each position ``last``
    (searched forward, never reaching ``ends``): probes a few positions per cut,
    widening, instead of looking for ties along whole rankings."""
    out = last + 1
    anchor = score_at(last)
    todo = np.arange(last.size)
    width = 16
    while todo.size:
        probe = out[todo, None] + np.arange(width)
        inside = probe < ends[todo, None]
        values = score_at(np.minimum(probe, ends[todo, None] - 1).ravel()).reshape(probe.shape)
        same = inside & (values == anchor[todo, None])
        run = np.where(same.all(axis=1), width, np.argmin(same, axis=1))
        out[todo] += run
        todo = todo[run == width]
        width *= 4
    return out


def within(counts: IntArray, limit: int) -> tuple[BoolArray, IntArray]:
    """Which rows of CSR rankings are among their query's first ``limit``; new counts."""
    pos = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(csr(counts)[:-1], counts)
    return pos < limit, np.minimum(counts, max(limit, 0))
