"""trec_eval's own measures in the metric registry: families and spellings.

Importing :mod:`rankscope.metrics` registers them, so ``rankscope.evaluate``
and ``rankscope evaluate`` accept trec_eval's names (``gm_map``,
``iprec_at_recall_0.10``, ``11pt_avg``, ``Rprec_mult_0.20``, ``relative_P_5``,
``unj_10``, ``infAP``, ``official``, ``all_trec``...) and give trec_eval's
numbers. Measures the core already defines with trec_eval's numbers (``P_5``,
``map``, ``ndcg_cut_10``...) keep their core definitions. The definitions are
in :mod:`rankscope.metrics.trec_eval_measures`; their kernels in
:mod:`rankscope.engine.kernels_trec` (and its ``_interp``/``_gain``
siblings), registered in the one kernel table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rankscope.data.trec_catalog import BY_NAME, NICKNAMES, double_cutoff_name
from rankscope.metrics import trec_eval_measures as d
from rankscope.metrics.base import Family, Metric, Param, claims, make_metric, register
from rankscope.metrics.parser import (
    parse_metrics,
    register_expansion,
    register_name,
    register_trec_cutoff,
)

__all__ = ["STAND_IN_ZERO", "TREC_FAMILIES", "member_spelling"]

_REL = Param("rel", 1, "float", "minimum level counted as relevant (trec_eval -l)")
_GAINS = Param("gains", "", "str", "trec_eval gain parameters, e.g. '1=3,2=9' (unset levels gain "
               "their level)")
_P = Param("p", 0.9, "float", "persistence", low=0.0, high=1.0, open_low=True, open_high=True)
# how each family is spelled in trec_eval's output (k, x: numbers)
_SPELLED = {"iprec_at_recall": "iprec_at_recall_x", "Rprec_mult": "Rprec_mult_x",
            "relative_P": "relative_P_k", "unj": "unj_k", "trec_rbp": "rbp"}
# families pytrec_eval (trec_eval 9.x) computes the same way as 10.0
_PYTREC = {"infAP", "binG", "G", "ndcg_rel", "Rndcg", "set_map", "set_relative_P",
           "relative_P", "Rprec_mult", "num_nonrel_judged_ret"}


def _claims(family: str) -> tuple[str, ...]:
    spelled = _SPELLED.get(family, family)
    if family in _PYTREC:
        return claims(trec_eval=spelled, pytrec_eval=spelled)
    return claims(trec_eval=spelled)


# family -> (trec_eval measure, factory, kernel, params, cutoff, aggregate)
_K = "rankscope.engine.kernels_trec"  # and its _interp and _gain modules
_FAMILIES: dict[str, tuple[str, Callable[..., Metric], str, tuple[Param, ...], str, str]] = {
    "gm_map": ("map", d.gm_map, f"{_K}:gm_map", (_REL,), "none", "gmean"),
    "gm_bpref": ("bpref", d.gm_bpref, f"{_K}:gm_bpref", (_REL,), "none", "gmean"),
    "infAP": ("infAP", d.infap, f"{_K}:infap", (_REL,), "none", "mean"),
    "binG": ("binG", d.bin_g, f"{_K}:bin_g", (_REL,), "none", "mean"),
    "yaap": ("yaap", d.yaap, f"{_K}:yaap", (_REL,), "none", "mean"),
    "iprec_at_recall": ("iprec_at_recall", d.iprec_at_recall, f"{_K}_interp:iprec_at_recall",
                        (Param("p", None, "float", "recall point (0..1)"), _REL), "none", "mean"),
    "11pt_avg": ("11pt_avg", d.eleven_pt_avg, f"{_K}_interp:eleven_pt_avg",
                 (Param("points", "0,.1,.2,.3,.4,.5,.6,.7,.8,.9,1", "str", "recall points"),
                  _REL), "none", "mean"),
    "Rprec_mult": ("Rprec_mult", d.rprec_mult, f"{_K}_interp:rprec_mult",
                   (Param("x", None, "float", "multiple of R"), _REL), "none", "mean"),
    "utility": ("utility", d.utility, f"{_K}:utility",
                (Param("coefficients", "1,-1,0,0", "str", "a,b,c,d of a*RR+b*(N-RR)+..."),
                 Param("n_docs", 0, "int", "documents in the collection (trec_eval -N)"),
                 _REL), "none", "mean"),
    "relative_P": ("relative_P", d.relative_p, f"{_K}:relative_p", (_REL,), "required", "mean"),
    "unj": ("unj", d.unj, f"{_K}:unj", (), "required", "mean"),
    "set_relative_P": ("set_relative_P", d.set_relative_p, f"{_K}:set_relative_p", (_REL,),
                       "none", "mean"),
    "set_map": ("set_map", d.set_map, f"{_K}:set_map", (_REL,), "none", "mean"),
    "num_nonrel_judged_ret": ("num_nonrel_judged_ret", d.num_nonrel_judged_ret,
                              f"{_K}:num_nonrel_judged_ret", (_REL,), "none", "sum"),
    "G": ("G", d.g_measure, f"{_K}_gain:g_measure", (_GAINS,), "none", "mean"),
    "ideal_dcg": ("ideal_dcg", d.ideal_dcg, f"{_K}_gain:ideal_dcg", (_GAINS,), "none", "mean"),
    "ndcg_rel": ("ndcg_rel", d.ndcg_rel, f"{_K}_gain:ndcg_rel", (_GAINS,), "none", "mean"),
    "Rndcg": ("Rndcg", d.rndcg, f"{_K}_gain:rndcg", (_GAINS, _REL), "none", "mean"),
    "trec_rbp": ("rbp", d.trec_rbp, f"{_K}_gain:trec_rbp", (_P, _GAINS), "none", "mean"),
    "rbp_resid": ("rbp_resid", d.rbp_resid, f"{_K}_gain:rbp_resid", (_P,), "none", "mean"),
}

TREC_FAMILIES: dict[str, str] = {family: row[0] for family, row in _FAMILIES.items()}
"""Each trec_eval-only metric family and the trec_eval measure it is."""

STAND_IN_ZERO = frozenset({"utility", "unj", "rbp_resid"})
"""Families trec_eval zeroes for a query the run lacks (its -c stand-in ranking)."""


def _register() -> None:
    for family, (_, factory, kernel, params, cutoff, aggregate) in _FAMILIES.items():
        register(Family(
            name=family, params=params, cutoff=cutoff,  # type: ignore[arg-type]
            aggregate=aggregate,  # type: ignore[arg-type]
            empty_value=0.0, graded=family in ("G", "ideal_dcg", "ndcg_rel", "Rndcg", "trec_rbp"),
            aliases=(), agrees_with=_claims(family), factory=factory,
            kernel=kernel, group="trec_eval",
        ))
        if cutoff == "none" and all(p.default is not None for p in params):
            register_name(family, _builder(family), case_sensitive=True)
    for base in ("relative_P", "unj"):
        register_trec_cutoff(base, _cutoff(base))
    for p in BY_NAME["iprec_at_recall"].default:
        name = double_cutoff_name("iprec_at_recall", p)
        register_expansion(name, _single(name, "iprec_at_recall", p=p))
    for x in BY_NAME["Rprec_mult"].default:
        name = double_cutoff_name("Rprec_mult", x)
        register_expansion(name, _single(name, "Rprec_mult", x=x))
    register_name("iprec_at_recall", _builder("iprec_at_recall"), case_sensitive=True, first="p")
    register_name("Rprec_mult", _builder("Rprec_mult"), case_sensitive=True, first="x")
    register_expansion("11pt_avg", _single("11pt_avg", "11pt_avg"))
    register_expansion("iprec_at_recall", _many("iprec_at_recall"))
    register_expansion("Rprec_mult", _many("Rprec_mult"))
    for nickname in ("official", "all_trec"):
        register_expansion(nickname, _nickname(nickname))


def _builder(family: str) -> Callable[[dict[str, Any], int | None], Metric]:
    def build(params: dict[str, Any], k: int | None) -> Metric:
        return make_metric(family, k=k, **params)

    return build


def _cutoff(family: str) -> Callable[[int], Metric]:
    def build(k: int) -> Metric:
        return make_metric(family, k=k)

    return build


def _single(label: str, family: str, **params: Any) -> Callable[[str], list[tuple[str, Metric]]]:
    def expand(text: str) -> list[tuple[str, Metric]]:
        return [(label, make_metric(family, **params))]

    return expand


def _many(family: str) -> Callable[[str], list[tuple[str, Metric]]]:
    key = "p" if family == "iprec_at_recall" else "x"

    def expand(text: str) -> list[tuple[str, Metric]]:
        out: list[tuple[str, Metric]] = []
        for v in BY_NAME[family].default:
            params: dict[str, Any] = {key: v}
            out.append((double_cutoff_name(family, v), make_metric(family, **params)))
        return out

    return expand


# How a nickname's members are spelled for the parser (their default cut-offs).
_MEMBER_SPELLING = {
    "rbp": "trec_rbp", "P": "P.5,10,15,20,30,100,200,500,1000",
    "recall": "recall.5,10,15,20,30,100,200,500,1000",
    "map_cut": "map_cut.5,10,15,20,30,100,200,500,1000",
    "ndcg_cut": "ndcg_cut.5,10,15,20,30,100,200,500,1000",
    "relative_P": "relative_P.5,10,15,20,30,100,200,500,1000",
    "success": "success.1,5,10", "unj": "unj.5,10,20",
}


def member_spelling(measure: str) -> str:
    """How the parser spells a trec_eval measure with its default parameters."""
    return _MEMBER_SPELLING.get(measure, measure)


def _nickname(nickname: str) -> Callable[[str], list[tuple[str, Metric]]]:
    def expand(text: str) -> list[tuple[str, Metric]]:
        out: list[tuple[str, Metric]] = []
        for spec in (BY_NAME[name] for name in NICKNAMES[nickname]):
            if spec.value in ("runid", "string") or spec.name == "num_q":
                continue
            found = parse_metrics(member_spelling(spec.name))
            if spec.name == "rbp":
                found = [("rbp", found[0][1])]
            out.extend(found)
        return out

    return expand


_register()
