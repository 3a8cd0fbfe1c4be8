"""Arithmetic the kernels share: divisions that leave 0 where there is nothing to divide by.

trec_eval leaves a measure at 0 where its denominator is 0 (no relevant
document, nothing retrieved); every kernel divides this way, through these.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["divide_or_zero", "divide_positive", "divide_where"]

FloatArray = npt.NDArray[np.float64]


def divide_or_zero(num: FloatArray, den: FloatArray | float) -> FloatArray:
    """``num / den``, with 0 where ``den == 0`` (``den`` may be a number)."""
    den_arr = np.broadcast_to(np.asarray(den, dtype=np.float64), num.shape)
    out = np.zeros_like(num)
    np.divide(num, den_arr, out=out, where=den_arr != 0)
    return out


def divide_where(num: FloatArray, den: FloatArray, where: object) -> FloatArray:
    """``num / den`` where ``where`` holds, else 0 (no warning for what is left out)."""
    out = np.zeros(num.shape, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(num, den, out=out, where=np.asarray(where, dtype=bool))
    return out


def divide_positive(num: FloatArray, den: FloatArray) -> FloatArray:
    """``num / den`` where ``den > 0``, else 0 (ideal sums, subtopic counts)."""
    return divide_where(num, den, den > 0)
