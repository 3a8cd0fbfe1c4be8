"""A DCG discount of each rank, and gains divided by it a block of rows at a time.

Apart from :mod:`rankscope.engine.context` (which re-exports :func:`discounted`
and :func:`log2_ranks`): the kernels' divisions by ``log2(rank + 1)``, the one
place each quotient is made, without an array of every row's discount.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rankscope.engine.c_math import log2_table
from rankscope.engine.ranking import FloatArray, IntArray

__all__ = ["discounted", "discounted_by_blocks", "log2_ranks"]


def log2_ranks(pos: IntArray) -> FloatArray:
    """:math:`\\log_2(i + 1)` for 0-based positions ``pos`` (i = pos + 1, the rank)."""
    # the table from log2(2) on, indexed by pos itself: no array of pos + 2 beside it
    return log2_table(int(pos.max(initial=0)) + 2)[2:][pos]


_DISCOUNTED_AT_ONCE = 1 << 16
"""Rows :func:`discounted` divides at once (their discounts: 512 KB)."""


def discounted(gains: FloatArray, pos: IntArray, out: FloatArray | None = None) -> FloatArray:
    """Each gain over its rank's DCG discount: ``gains / log2_ranks(pos)``, the same bits.

    Parameters
    ----------
    gains : ndarray of float
        One gain a row.
    pos : ndarray of int
        Each row's 0-based rank.
    out : ndarray of float, optional
        Where to write (``gains`` itself when the caller made it: no second array).

    Returns
    -------
    ndarray of float
        ``out``, or a new array.

    Notes
    -----
    The discounts are looked up a block of rows at a time, so no array of every
    row's discount (8 bytes a row, 57 MB at 7 M judgments) is held beside the
    gains; each quotient is the one IEEE division either way.
    """
    return discounted_by_blocks(gains, int(pos.max(initial=0)),
                                lambda start, stop: pos[start:stop], out)


def discounted_by_blocks(gains: FloatArray, deepest: int,
                         pos_of: Callable[[int, int], IntArray],
                         out: FloatArray | None) -> FloatArray:
    """:func:`discounted`, the rows' positions (at most ``deepest``) given a block at a
    time by ``pos_of(start, stop)``: the judged rows' are made from their queries
    (:meth:`~rankscope.engine.context.Context.judged_discounted`)."""
    table = log2_table(deepest + 2)[2:]
    result = np.empty(gains.size, dtype=np.float64) if out is None else out
    for start in range(0, gains.size, _DISCOUNTED_AT_ONCE):
        stop = min(start + _DISCOUNTED_AT_ONCE, gains.size)
        np.divide(gains[start:stop], table[pos_of(start, stop)], out=result[start:stop])
    return result
