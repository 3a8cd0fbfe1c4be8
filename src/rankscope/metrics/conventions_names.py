"""Spellings that belong to one tool: they give that tool's number wherever they are used.

A name only one tool uses, whose plain reading in rankscope would be a
different number, means the tool's number without any conventions profile
(the profiles, :mod:`rankscope.metrics.conventions`, cover the names several
tools share):

- ``SetF(beta=x)`` (ir_measures) and ``set_F(beta=x)`` (trec_eval's
  ``set_F`` with its parameter): trec_eval weighs recall by its parameter x
  itself, (1 + x) P R / (R + x P), which is F with beta squared = x; so they
  are ``F(beta=sqrt(x))``. Without a parameter both are F1.
- ``ndcg_score`` and ``dcg_score`` (scikit-learn, ``@k`` or ``(k=10)``, and
  ``ignore_ties=True``): ``sklearn_nDCG`` / ``sklearn_DCG``.
- ``NDCG_CUT@k`` (Quepid's scorer): ``nDCG(gain=exp)@k``.
- ``rbp`` alone (trec_eval's ``-m rbp``; ranx always writes a persistence,
  ``rbp.95``): trec_eval's rbp, ``trec_rbp``.

Importing :mod:`rankscope.metrics` registers them.
"""

from __future__ import annotations

import math
from typing import Any

from rankscope.errors import MetricParameterError
from rankscope.metrics.base import Metric, make_metric
from rankscope.metrics.parser import register_expansion, register_name

__all__ = ["SPELLING_NOTES", "set_f_beta"]

SPELLING_NOTES: dict[str, str] = {
    "SetF": "ir_measures' SetF(beta=x) weighs recall by x as trec_eval's set_F does: "
            "(1 + x) P R / (R + x P), i.e. F(beta=sqrt(x)); this spelling gives that number",
    "set_F": "trec_eval's set_F with parameter x computes (1 + x) P R / (R + x P), i.e. "
             "F(beta=sqrt(x)); this spelling gives that number (rankscope's F(beta=x) "
             "weighs by beta squared)",
    "ndcg_score": "scikit-learn's ndcg_score: tied scores share their mean gain, the ideal "
                  "from the ranked documents' own grades (sklearn_nDCG)",
    "dcg_score": "scikit-learn's dcg_score: tied scores share their mean gain (sklearn_DCG)",
    "NDCG_CUT": "Quepid's NDCG_CUT@k scorer: gain 2^g - 1, the ideal cut at k",
    "rbp": "rbp alone is trec_eval's rbp (p = 0.9, gains scaled to [0, 1]: trec_rbp); "
           "rbp.95 and rbp(p=0.95) are ranx's (the grade as gain)",
}
"""Spellings that belong to one tool and give its number everywhere, and what they mean."""


def set_f_beta(weight: Any, label: str = "set_F") -> float:
    """F's beta for trec_eval's ``set_F`` parameter x, which weighs by beta squared = x.

    Examples
    --------
    >>> from rankscope.metrics.conventions_names import set_f_beta
    >>> set_f_beta(4)
    2.0
    """
    try:
        x = float(weight)
    except (TypeError, ValueError):
        x = math.nan
    if isinstance(weight, bool) or not (math.isfinite(x) and x > 0):
        raise MetricParameterError(f"{label}: beta must be a number > 0, not {weight!r}")
    return math.sqrt(x)


def _set_f(label: str) -> Any:
    def build(params: dict[str, Any], k: int | None) -> Metric:
        params = dict(params)
        if "beta" in params:
            params["beta"] = set_f_beta(params["beta"], label)
        return make_metric("F", k=k, **params)

    return build


def _sklearn(family: str) -> Any:
    def build(params: dict[str, Any], k: int | None) -> Metric:
        params = dict(params)
        given = params.pop("k", None)
        if given is not None and k is not None and int(given) != k:
            raise MetricParameterError(f"{family}: two cut-offs, @{k} and k={given}")
        return make_metric(family, k=k if k is not None else given, **params)

    build.reads_k = True  # type: ignore[attr-defined]  # the parser checks k= as a cut-off
    return build


def _ndcg_cut(params: dict[str, Any], k: int | None) -> Metric:
    return make_metric("nDCG", k=k, **{"gain": "exp", **params})


register_name("SetF", _set_f("SetF"), case_sensitive=True)
register_name("set_F", _set_f("set_F"), case_sensitive=True)
register_name("ndcg_score", _sklearn("sklearn_nDCG"))
register_name("dcg_score", _sklearn("sklearn_DCG"))
register_name("NDCG_CUT", _ndcg_cut, case_sensitive=True)
register_expansion("rbp", lambda text: [(text, make_metric("trec_rbp"))])
