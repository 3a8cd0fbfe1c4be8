"""Logarithms as the C library computes them, for sums that must round as trec_eval's do.

numpy's vectorized logarithms may differ from the C library's in the last
bit; trec_eval calls the C library, so every discount and logarithm whose
result is summed is taken from here.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = ["c_log", "log2_table"]

FloatArray = npt.NDArray[np.float64]

_LOG2: list[float] = [math.nan, 0.0]


def log2_table(upto: int) -> FloatArray:
    """``log2(i)`` for i = 0..upto from the C library (entry 0 is unused)."""
    if len(_LOG2) <= upto:
        _LOG2.extend(math.log2(i) for i in range(len(_LOG2), upto + 1))
    return np.asarray(_LOG2[: upto + 1], dtype=np.float64)


def c_log(values: FloatArray) -> FloatArray:
    """C ``log`` of each value (``-inf`` at 0, NaN below), via the C library."""
    out = np.empty(values.size, dtype=np.float64)
    for i, x in enumerate(values.tolist()):
        if x > 0.0 and x != math.inf:
            out[i] = math.log(x)
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                out[i] = np.log(x)
    return out
