"""ir_measures' spellings of trec_eval's measures: ``IPrec@x``, ``SetAP``, ``SetRelP``.

They name metrics the registry already has (trec_eval's ``iprec_at_recall``,
``set_map`` and ``set_relative_P``, :mod:`rankscope.metrics.trec_eval_names`);
this module only teaches the parser the names, so each is computed once, by
the same kernel, whichever tool's name is typed:

- ``IPrec@0.5`` / ``IPrec(recall=0.5)``: interpolated precision at recall 0.5,
  as trec_eval 10.0 computes it (ir_measures runs pytrec_eval, which follows
  trec_eval 9.x here, so its number can differ);
- ``SetAP``: trec_eval's ``set_map``, :math:`P_{set} \\cdot R_{set}`;
- ``SetRelP`` / ``SetP(relative=True)``: ``set_relative_P``, relevant retrieved
  over :math:`\\min(R, |retrieved|)`.
"""

from __future__ import annotations

from typing import Any

from rankscope.errors import MetricParameterError
from rankscope.metrics import trec_eval_names as _trec  # the families these names stand for
from rankscope.metrics.base import Metric, make_metric
from rankscope.metrics.parser import register_name

__all__: list[str] = []

_ = _trec


def _iprec(params: dict[str, Any], k: int | None) -> Metric:
    params = dict(params)
    if "recall" in params:
        params["p"] = params.pop("recall")
    if k is not None or params.get("p") is None:
        raise MetricParameterError("IPrec takes a recall level: IPrec@0.5")
    return make_metric("iprec_at_recall", **params)


def _set_ap(params: dict[str, Any], k: int | None) -> Metric:
    return make_metric("set_map", k=k, **params)


def _set_rel_p(params: dict[str, Any], k: int | None) -> Metric:
    return make_metric("set_relative_P", k=k, **params)


def _set_p(params: dict[str, Any], k: int | None) -> Metric:
    """ir_measures' SetP: ``relative=True`` is SetRelP."""
    params = dict(params)
    if params.pop("relative", False) in (True, "True", "true", 1):
        return make_metric("set_relative_P", k=k, **params)
    return make_metric("P", k=k, **params)


register_name("IPrec", _iprec, case_sensitive=True, at="p")
register_name("SetAP", _set_ap, case_sensitive=True)
register_name("SetRelP", _set_rel_p, case_sensitive=True)
register_name("SetP", _set_p, case_sensitive=True)
