"""Corrections for multiple comparisons: the p-values of a metric's pairs adjusted together.

``holm`` (Holm 1979), ``bonferroni``, ``bh`` (Benjamini & Hochberg 1995) or
``none``, with statsmodels' ``multipletests`` arithmetic; a comparison adjusts
the p-values of each metric's pairs as one family.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from rankscope.errors import DependencyError, OptionError

__all__ = ["CORRECTIONS", "CORRECTION_NAMES", "adjust", "check_correction",
           "require_statsmodels"]

FloatArray = npt.NDArray[np.float64]

CORRECTIONS = ("holm", "bonferroni", "bh", "none")
CORRECTION_NAMES = {
    "holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg", "none": "none",
}
_STATSMODELS_METHOD = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh"}


def require_statsmodels(purpose: str) -> Any:
    """Import :mod:`statsmodels.stats.multitest` or raise DependencyError."""
    try:
        from statsmodels.stats import multitest
    except ImportError:
        raise DependencyError("statsmodels", "stats", purpose) from None
    return multitest


def check_correction(correction: str) -> str:
    """Validate a correction name (raises OptionError)."""
    if correction not in CORRECTIONS:
        raise OptionError(
            f"correction must be one of {', '.join(CORRECTIONS)}, not {correction!r}"
        )
    return correction


def adjust(p_values: FloatArray, correction: str, *, alpha: float = 0.05) -> FloatArray:
    """P-values adjusted for multiple comparisons (statsmodels ``multipletests``).

    ``holm`` (Holm 1979), ``bonferroni``, ``bh`` (Benjamini & Hochberg 1995,
    statsmodels' ``fdr_bh``) or ``none``. NaN p-values are left out of the
    family and stay NaN.

    Holm's and Bonferroni's adjustments are computed here with
    ``multipletests``' own arithmetic (the same bits): its Holm branch runs a
    full garbage collection of the process on every call (0.1-0.2 s each once
    scipy is loaded: one per metric of a comparison), and neither needs
    statsmodels loaded. Benjamini-Hochberg is statsmodels' own.
    """
    check_correction(correction)
    p = np.asarray(p_values, dtype=np.float64)
    out = p.copy()
    present = ~np.isnan(p)
    if correction == "none" or not present.any():
        return out
    if correction in ("holm", "bonferroni"):
        out[present] = _step_down(p[present], holm=correction == "holm")
        return out
    multitest = require_statsmodels("multiple-comparison corrections")
    out[present] = multitest.multipletests(
        p[present], alpha=alpha, method=_STATSMODELS_METHOD[correction]
    )[1]
    return out


def _step_down(p: FloatArray, *, holm: bool) -> FloatArray:
    """Holm's (or Bonferroni's) adjusted p-values, as statsmodels' ``multipletests``
    computes them: sorted, each times the tests left (all of them), running
    maximum (Holm), capped at 1, back in the given order."""
    order = np.argsort(p)
    ordered = np.take(p, order)
    n = len(ordered)
    if holm:
        corrected = np.maximum.accumulate(ordered * np.arange(n, 0, -1))
    else:
        corrected = ordered * float(n)
    corrected[corrected > 1] = 1
    out = np.empty_like(corrected)
    out[order] = corrected
    return out
