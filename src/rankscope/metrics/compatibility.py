r"""Compatibility (Clarke, Vtyurina & Smucker): RBO between a ranking and an ideal one.

The ideal ranking of a query lists its documents with a positive grade, best
grade first; documents of equal grade keep the run's order, retrieved ones
first (ir_measures' compat provider). Compatibility is their rank-biased
overlap to the depth of the longer list, normalized by the ideal ranking's
overlap with itself, so a ranking that is ideal down to the last relevant
document scores 1.
"""

from __future__ import annotations

from typing import Any

from rankscope.metrics.base import (
    Family,
    Metric,
    Param,
    claims,
    make_metric,
    register,
)
from rankscope.metrics.parser import register_name

__all__ = ["compat"]

_P = Param("p", 0.95, "float", "persistence of the rank-biased overlap, in (0, 1)", low=0.0,
           high=1.0,
           open_low=True, open_high=True)
_NORMALIZE = Param("normalize", True, "bool",
                   "divide by the ideal ranking's overlap with itself (1 for a ranking that is "
                   "ideal); else by the sum of the weights")


def compat(p: float = 0.95, *, normalize: bool = True) -> Metric:
    r"""Compatibility: how close a ranking is to an ideal ranking, by RBO.

    Returns
    -------
    Metric

    Notes
    -----
    With :math:`R` the ranking, :math:`I` the ideal ranking, :math:`D =
    \max(|R|, |I|)` and :math:`X_d(A, B) = |A_{:d} \cap B_{:d}|`,

    .. math::

        Compat = \frac{\sum_{d=1}^{D} p^{d-1} X_d(R, I) / d}
                      {\sum_{d=1}^{D} p^{d-1} X_d(I, I) / d}

    (the denominator is :math:`\sum_{d=1}^{D} p^{d-1}` with
    ``normalize=False``). 0 when the query has no document with a positive
    grade or the ranking is empty.

    References
    ----------
    .. [1] Clarke, Vtyurina & Smucker, "Assessing top-k preferences", ACM TOIS
       39(3) (2021).
    .. [2] ir_measures' ``Compat`` (compat provider).

    Examples
    --------
    The ideal ranking is (a, b); the run ranks b first.

    >>> import rankscope
    >>> value = rankscope.evaluate({"q": {"a": 2, "b": 1}}, {"q": {"b": 0.9, "a": 0.8}},
    ...                            "Compat(p=0.5)")["Compat(p=0.5)"]
    >>> round(value, 4)  # (0 + 0.5 * 2/2) / (1 + 0.5 * 2/2)
    0.3333
    """
    return make_metric("Compat", p=p, normalize=normalize)


def _build(params: dict[str, Any], k: int | None) -> Metric:
    return make_metric("Compat", k=k, **params)


register(Family(
    name="Compat", params=(_P, _NORMALIZE), cutoff="none", aggregate="mean", empty_value=0.0,
    graded=True, aliases=("Compat(p=0.95)",), agrees_with=claims(ir_measures="Compat(p=P)"),
    factory=compat, kernel="rankscope.engine.kernels_compat:compat", group="graded",
))
register_name("Compat", _build, case_sensitive=True, first="p")
