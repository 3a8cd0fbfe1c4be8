r"""Diagnostic measures: Accuracy (pairwise order) and NumQ (the number of queries)."""

from __future__ import annotations

from typing import Any

from rankscope.metrics.base import (
    DEFAULT_CONVENTIONS,
    Family,
    Metric,
    Param,
    claims,
    make_metric,
    register,
)
from rankscope.metrics.parser import register_name

__all__ = ["accuracy", "num_q"]

_REL = Param("rel", 1, "float", "minimum grade counted as relevant; everything else retrieved, "
             "unjudged documents included, is non-relevant")


def accuracy(k: int | None = None, *, rel: float = 1) -> Metric:
    r"""Accuracy: the share of (relevant, non-relevant) pairs of retrieved documents in order.

    Returns
    -------
    Metric

    Notes
    -----
    With :math:`n_i` the non-relevant documents above the i-th relevant one,
    :math:`R_k` the relevant and :math:`N_k` the non-relevant documents in
    the first k,

    .. math:: Accuracy@k = 1 - \frac{\sum_{i=1}^{R_k} n_i}{R_k N_k}

    the probability that a retrieved relevant document is ranked above a
    retrieved non-relevant one. A diagnostic (do train, validation and test
    accuracy agree?), it looks only at retrieved documents. Null when the
    first k hold no relevant or no non-relevant document (ir_measures gives
    no value for the first and fails on the second); the mean is over
    queries with a value.

    References
    ----------
    .. [1] ir_measures' ``Accuracy`` (accuracy provider), MacAvaney et al.,
       "Streamlining evaluation with ir-measures", ECIR (2022).

    Examples
    --------
    Ranking (n, r, n, r, n): the relevant ones have 1 and 2 non-relevant above.

    >>> import rankscope
    >>> qrels = {"q": {"r1": 1, "r2": 1}}
    >>> run = {"q": {"n1": 5, "r1": 4, "n2": 3, "r2": 2, "n3": 1}}
    >>> rankscope.evaluate(qrels, run, "Accuracy")["Accuracy"]  # 1 - (1 + 2) / (2 * 3)
    0.5
    """
    return make_metric("Accuracy", k=k, rel=rel)


def num_q() -> Metric:
    r"""NumQ: the number of queries the run answers (summed over queries).

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: NumQ = |\{q \in Q : \text{the run ranks } q\}|

    over the evaluated queries Q: trec_eval's ``num_q`` without ``-c`` and
    ir_measures' ``NumQ``. A query of the qrels the run lacks counts 0.

    References
    ----------
    .. [1] trec_eval's ``num_q``; ir_measures' ``NumQ``.

    Examples
    --------
    >>> import rankscope
    >>> rankscope.evaluate({"a": {"d": 1}, "b": {"d": 1}}, {"a": {"d": 1.0}, "b": {"e": 1.0}},
    ...                    "NumQ")["NumQ"]
    2.0
    """
    return make_metric("NumQ")


def _builder(family: str) -> Any:
    def build(params: dict[str, Any], k: int | None) -> Metric:
        return make_metric(family, k=k, **params)

    return build


register(Family(
    name="Accuracy", params=(_REL,), cutoff="optional", aggregate="mean",
    empty_value=float("nan"), graded=False, aliases=("Accuracy@k",),
    agrees_with=claims(
        ir_measures="Accuracy", under=f"{DEFAULT_CONVENTIONS}; its accuracy provider"),
    factory=accuracy, kernel="rankscope.engine.kernels_compat:accuracy", group="diagnostic",
))
register(Family(
    name="NumQ", params=(), cutoff="none", aggregate="sum", empty_value=0.0, graded=False,
    aliases=("NumQ",),
    agrees_with=claims(ir_measures="NumQ", under=DEFAULT_CONVENTIONS),
    factory=num_q, kernel="rankscope.engine.kernels_compat:num_q", group="diagnostic",
))
register_name("Accuracy", _builder("Accuracy"), case_sensitive=True)
register_name("NumQ", _builder("NumQ"), case_sensitive=True)
