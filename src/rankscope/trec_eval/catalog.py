"""trec_eval's ``-m NAME.PARAMS``: reading a measure's parameters as trec_eval does.

The measure table itself is data in :mod:`rankscope.data.trec_catalog`
(re-exported here); everything trec_eval prints follows its order.
:func:`bind` checks a parameter string the way trec_eval does and names the
values the measure prints (``P_5``, ``iprec_at_recall_0.10``, ``ndcg_1=3``);
:func:`metrics_of` names the engine's metric behind each printed value.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rankscope.data.cnum import atof, atol
from rankscope.data.trec_catalog import (
    BY_NAME,
    MEASURES,
    NICKNAMES,
    MeasureDef,
    double_cutoff_name,
    well_formed_pairs,
)
from rankscope.metrics.base import FAMILIES, Metric
from rankscope.trec_eval.exits import TrecEvalExit

__all__ = [
    "BY_NAME",
    "MEASURES",
    "NICKNAMES",
    "Bound",
    "MeasureDef",
    "bind",
    "double_cutoff_name",
    "expand",
    "metrics_of",
]


@dataclass(frozen=True)
class Bound:
    """A measure with its parameters read, and the names of the values it prints.

    Attributes
    ----------
    spec : MeasureDef
        The table row.
    values : tuple of float
        Cut-offs (sorted) or parameters (in the given order).
    pairs : tuple of (str, float)
        ``key=value`` parameters, in the given order.
    names : tuple of str
        One printed name per value (``P_5``...); one name for other measures.
    """

    spec: MeasureDef
    values: tuple[float, ...]
    pairs: tuple[tuple[str, float], ...]
    names: tuple[str, ...]
    raw: str | None = None

    @property
    def name(self) -> str:
        """The measure's table name."""
        return self.spec.name


def _cannot(name: str, message: str) -> TrecEvalExit:
    return TrecEvalExit(f"{message}\ntrec_eval: Cannot initialize measure '{name}'\n", 2)


def _sorted_unique(name: str, cutoffs: list[float], positive: bool) -> tuple[float, ...]:
    cutoffs.sort()
    if positive and cutoffs[0] <= 0:
        raise _cannot(name, "trec_eval: Negative cutoff detected")
    if any(a == b for a, b in itertools.pairwise(cutoffs)):
        raise _cannot(name, "trec_eval: duplicate cutoffs detected")
    return tuple(cutoffs)


def bind(spec: MeasureDef, raw: str | None) -> Bound:
    """Read the parameters of one measure (``raw`` is the text after the dot, or None).

    Raises
    ------
    TrecEvalExit
        With trec_eval's message and status 2 for cut-offs <= 0 or repeated,
        and for malformed ``key=value`` lists.
    """
    name = spec.name
    if spec.params == "none" or raw is None:
        values = spec.default
        pairs: tuple[tuple[str, float], ...] = ()
        if spec.params == "long_cut":
            names = tuple(f"{name}_{int(v)}" for v in values)
        elif spec.params == "double_cut":
            names = tuple(double_cutoff_name(name, v) for v in values)
        else:
            names = (name,)
        return Bound(spec, values, pairs, names)
    parts = raw.split(",")
    if spec.params == "long_cut":
        longs: list[float] = [atol(p) for p in parts]
        cuts = _sorted_unique(name, longs, positive=True)
        return Bound(spec, cuts, (), tuple(f"{name}_{int(v)}" for v in cuts))
    if spec.params == "double_cut":
        cuts = _sorted_unique(name, [atof(p) for p in parts], positive=False)
        return Bound(spec, cuts, (), tuple(double_cutoff_name(name, v) for v in cuts))
    if spec.params == "double":
        return Bound(spec, tuple(atof(p) for p in parts), (), (f"{name}_{raw}",), raw)
    if not well_formed_pairs(raw):
        raise _cannot(name, f"trec_eval: malformed pair parameters in '{raw}'")
    pairs = tuple((key, atof(value)) for key, value in (p.split("=", 1) for p in parts))
    return Bound(spec, (), pairs, (f"{name}_{raw}",), raw)


def expand(name: str) -> tuple[str, ...] | None:
    """The measures a ``-m`` name marks (a nickname's members, or itself); None if unknown."""
    if name in NICKNAMES:
        return NICKNAMES[name]
    if name in BY_NAME:
        return (name,)
    return None


def _metric(family: str, k: float | None = None, **params: Any) -> Metric:
    """The engine's metric with parameters exactly as trec_eval read them.

    trec_eval checks no parameter's range (a cut-off is any C long, a
    persistence any double), so the values are bound as given.
    """
    spec = FAMILIES[family]
    values = tuple((p.name, params.get(p.name, p.default)) for p in spec.params)
    return Metric(spec.name, values, None if k is None else int(k))


def _last_p(pairs: tuple[tuple[str, float], ...]) -> float:
    p = 0.9
    for key, value in pairs:
        if key == "p":
            p = value
    return p


_Build = Callable[[Bound, float, int], list[Metric]]
_CUT = {"P": "P", "recall": "R", "ndcg_cut": "nDCG", "map_cut": "AP", "success": "Success",
        "relative_P": "relative_P"}
_LEVEL = {"num_rel": "num_rel", "num_rel_ret": "num_rel_ret", "map": "AP", "gm_map": "gm_map",
          "Rprec": "RPrec", "bpref": "bpref", "recip_rank": "RR", "infAP": "infAP",
          "gm_bpref": "gm_bpref", "binG": "binG", "set_P": "P", "set_relative_P":
          "set_relative_P", "set_recall": "R", "set_map": "set_map",
          "num_nonrel_judged_ret": "num_nonrel_judged_ret", "yaap": "yaap"}
_BUILD: dict[str, _Build] = {
    "num_ret": lambda b, rel, n_docs: [_metric("num_ret")],
    "iprec_at_recall": lambda b, rel, n_docs: [_metric("iprec_at_recall", p=v, rel=rel)
                                               for v in b.values],
    "Rprec_mult": lambda b, rel, n_docs: [_metric("Rprec_mult", x=v, rel=rel) for v in b.values],
    "utility": lambda b, rel, n_docs: [_metric("utility", coefficients=b.raw or "1,-1,0,0",
                                               n_docs=n_docs, rel=rel)],
    "11pt_avg": lambda b, rel, n_docs: [
        _metric("11pt_avg", points=b.raw or "0,.1,.2,.3,.4,.5,.6,.7,.8,.9,1", rel=rel)],
    "G": lambda b, rel, n_docs: [_metric("G", gains=b.raw or "")],
    "dcg": lambda b, rel, n_docs: [_metric("DCG", gain_table=b.raw)],
    "ideal_dcg": lambda b, rel, n_docs: [_metric("ideal_dcg", gains=b.raw or "")],
    "ndcg": lambda b, rel, n_docs: [_metric("nDCG", gain_table=b.raw)],
    "ndcg_rel": lambda b, rel, n_docs: [_metric("ndcg_rel", gains=b.raw or "")],
    "Rndcg": lambda b, rel, n_docs: [_metric("Rndcg", gains=b.raw or "", rel=rel)],
    "set_F": lambda b, rel, n_docs: [_metric("F", beta2=b.values[0], rel=rel)],
    "rbp": lambda b, rel, n_docs: [_metric("trec_rbp", gains=b.raw or "")],
    "rbp_resid": lambda b, rel, n_docs: [_metric("rbp_resid", p=_last_p(b.pairs))],
    "unj": lambda b, rel, n_docs: [_metric("unj", k=v) for v in b.values],
}


def metrics_of(bound: Bound, level: int, n_docs: int) -> list[Metric] | None:
    """The engine's metric behind each value ``bound`` prints (None: not computed by it).

    ``level`` is ``-l`` (the relevance threshold of the measures that have
    one), ``n_docs`` is ``-N``. ``num_q``, ``relstring``, ``runid`` and the
    measures of the other relevance formats are the command's own.
    """
    name = bound.name
    rel = float(level)
    if name in _CUT:
        family = _CUT[name]
        extra = {} if family == "nDCG" else {"rel": rel}
        return [_metric(family, k=v, **extra) for v in bound.values]
    if name in _LEVEL:
        return [_metric(_LEVEL[name], rel=rel)]
    build = _BUILD.get(name)
    return None if build is None else build(bound, rel, n_docs)
