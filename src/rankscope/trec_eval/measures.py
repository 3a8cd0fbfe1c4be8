"""trec_eval's measures as rankscope metrics: families, kernels and spellings.

Importing this module (the metric name parser does it on first use) makes
``rankscope.evaluate`` and ``rankscope evaluate`` accept trec_eval's names
(``gm_map``, ``iprec_at_recall_0.10``, ``11pt_avg``, ``Rprec_mult_0.20``,
``relative_P_5``, ``unj_10``, ``infAP``, ``official``, ``all_trec``...) and
compute them with the same code as ``rankscope trec_eval``, so the numbers are
trec_eval's. Measures the core already defines with trec_eval's numbers
(``P_5``, ``map``, ``ndcg_cut_10``...) keep their core definitions.

The kernels turn the engine's :class:`~rankscope.engine.ranking.RankedLists`
into trec_eval's view: grades truncated to integer levels, negative grades as
"pooled but unjudged" (-2), unjudged documents as -1, and a query the run
lacks given trec_eval ``-c``'s one-document stand-in ranking.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl

import rankscope.trec_eval.measures_gain
import rankscope.trec_eval.measures_interp
import rankscope.trec_eval.measures_rank  # noqa: F401  (register their computations)
from rankscope.engine.context import Context
from rankscope.engine.kernels import register_kernel
from rankscope.engine.ranking import RankedLists
from rankscope.errors import MetricParameterError
from rankscope.metrics.base import Family, Metric, Param, make_metric, register
from rankscope.metrics.parser import (
    parse_metrics,
    register_expansion,
    register_name,
    register_trec_cutoff,
)
from rankscope.trec_eval import definitions as d
from rankscope.trec_eval.catalog import BY_NAME, NICKNAMES, bind, double_cutoff_name
from rankscope.trec_eval.lists import TrecLists
from rankscope.trec_eval.registry import COMPUTE, Settings
from rankscope.trec_eval.stats import FloatArray, QueryStats

__all__ = ["trec_lists_from_ranked"]

_REL = Param("rel", 1, "float", "minimum level counted as relevant (trec_eval -l)")
_GAINS = Param("gains", "", "str", "trec_eval gain parameters, e.g. '1=3,2=9' (unset levels gain "
               "their level)")
_P = Param("p", 0.9, "float", "persistence", low=0.0, high=1.0, open_low=True, open_high=True)
_AGREES = ("trec_eval 10.0", "rankscope trec_eval")

# family -> (trec_eval measure, factory, params, cutoff, aggregate)
_FAMILIES: dict[str, tuple[str, Callable[..., Metric], tuple[Param, ...], str, str]] = {
    "gm_map": ("map", d.gm_map, (_REL,), "none", "gmean"),
    "gm_bpref": ("bpref", d.gm_bpref, (_REL,), "none", "gmean"),
    "infAP": ("infAP", d.infap, (_REL,), "none", "mean"),
    "binG": ("binG", d.bin_g, (_REL,), "none", "mean"),
    "yaap": ("yaap", d.yaap, (_REL,), "none", "mean"),
    "iprec_at_recall": ("iprec_at_recall", d.iprec_at_recall,
                        (Param("p", None, "float", "recall point (0..1)"), _REL), "none", "mean"),
    "11pt_avg": ("11pt_avg", d.eleven_pt_avg,
                 (Param("points", "0,.1,.2,.3,.4,.5,.6,.7,.8,.9,1", "str", "recall points"),
                  _REL), "none", "mean"),
    "Rprec_mult": ("Rprec_mult", d.rprec_mult,
                   (Param("x", None, "float", "multiple of R"), _REL), "none", "mean"),
    "utility": ("utility", d.utility,
                (Param("coefficients", "1,-1,0,0", "str", "a,b,c,d of a*RR+b*(N-RR)+..."),
                 Param("n_docs", 0, "int", "documents in the collection (trec_eval -N)"),
                 _REL), "none", "mean"),
    "relative_P": ("relative_P", d.relative_p, (_REL,), "required", "mean"),
    "unj": ("unj", d.unj, (), "required", "mean"),
    "set_relative_P": ("set_relative_P", d.set_relative_p, (_REL,), "none", "mean"),
    "set_map": ("set_map", d.set_map, (_REL,), "none", "mean"),
    "num_nonrel_judged_ret": ("num_nonrel_judged_ret", d.num_nonrel_judged_ret, (_REL,),
                              "none", "sum"),
    "G": ("G", d.g_measure, (_GAINS,), "none", "mean"),
    "ideal_dcg": ("ideal_dcg", d.ideal_dcg, (_GAINS,), "none", "mean"),
    "ndcg_rel": ("ndcg_rel", d.ndcg_rel, (_GAINS,), "none", "mean"),
    "Rndcg": ("Rndcg", d.rndcg, (_GAINS, _REL), "none", "mean"),
    "trec_rbp": ("rbp", d.trec_rbp, (_P, _GAINS), "none", "mean"),
    "rbp_resid": ("rbp_resid", d.rbp_resid, (_P,), "none", "mean"),
}
# trec_eval zeroes these for a -c stand-in query
_STAND_IN_ZERO = {"utility", "unj", "rbp_resid"}


def trec_lists_from_ranked(lists: RankedLists, lvl: int) -> TrecLists:
    """trec_eval's view of the engine's rankings (see the module docstring)."""
    grades = lists.grades
    with np.errstate(invalid="ignore"):
        values = np.where(np.isnan(grades), -1, np.where(grades < 0, -2, np.trunc(grades)))
    values = values.astype(np.int64)
    lengths = np.diff(lists.offsets)
    missing = np.flatnonzero(~lists.in_run & (lengths == 0))
    if missing.size:
        values = np.insert(values, lists.offsets[missing], -1)
        lengths = lengths.copy()
        lengths[missing] = 1
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    n = lists.n_queries
    jq = np.repeat(np.arange(n, dtype=np.int64), np.diff(lists.judged_offsets))
    levels = np.trunc(lists.judged_grades).astype(np.int64)
    max_rel = np.full(n, -(2**62), dtype=np.int64)
    np.maximum.at(max_rel, jq, levels)
    keep = levels >= 0
    counts = (pl.DataFrame({"q": jq[keep], "l": levels[keep]})
              .group_by("q", "l").agg(pl.len().alias("c")).sort("q", "l"))
    cq = counts.get_column("q").to_numpy()
    level_counts = np.bincount(cq, minlength=n) if cq.size else np.zeros(n, np.int64)
    return TrecLists(
        query_ids=lists.query_ids, offsets=offsets, values=values,
        level_offsets=np.concatenate(([0], np.cumsum(level_counts))).astype(np.int64),
        levels=counts.get_column("l").to_numpy().astype(np.int64),
        level_counts=counts.get_column("c").to_numpy().astype(np.int64),
        lvl=lvl, in_run=lists.in_run, max_rel=max_rel,
    )


def _stats(ctx: Context, rel: float) -> QueryStats:
    lvl = math.ceil(rel)  # value >= rel for integer levels
    key = ("trec_eval", lvl)
    cache: dict[Any, Any] = ctx._cache
    if key not in cache:
        cache[key] = QueryStats(trec_lists_from_ranked(ctx.lists, lvl))
    stats: QueryStats = cache[key]
    return stats


def _raw_params(family: str, m: Metric) -> str | None:
    if family in ("iprec_at_recall", "Rprec_mult"):
        key = "p" if family == "iprec_at_recall" else "x"
        if m.get(key) is None:
            raise MetricParameterError(f"{family} needs {key}: {family}({key}=0.5)")
        return repr(float(m.get(key)))
    if family in ("relative_P", "unj"):
        return str(m.k)
    if family == "11pt_avg":
        return str(m.get("points"))
    if family == "utility":
        return str(m.get("coefficients"))
    if family == "trec_rbp":
        gains = str(m.get("gains"))
        return f"p={float(m.get('p'))!r}" + (f",{gains}" if gains else "")
    if family == "rbp_resid":
        return f"p={float(m.get('p'))!r}"
    if family in ("G", "ideal_dcg", "ndcg_rel", "Rndcg"):
        return str(m.get("gains")) or None
    return None


def _kernel(family: str) -> Callable[[Context, Metric], FloatArray]:
    measure = _FAMILIES[family][0]

    def kernel(ctx: Context, m: Metric) -> FloatArray:
        params: dict[str, Any] = dict(m.params)
        st = _stats(ctx, float(params.get("rel", 1)))
        bound = bind(BY_NAME[measure], _raw_params(family, m))
        n_docs = int(params.get("n_docs", 0) or 0)
        value = COMPUTE[measure](st, bound, Settings(n_docs=n_docs))[0].copy()
        if measure in _STAND_IN_ZERO:
            value[~st.lists.in_run] = 0.0
        return value

    return kernel


def _register() -> None:
    for family, (_, factory, params, cutoff, aggregate) in _FAMILIES.items():
        register(Family(
            name=family, params=params, cutoff=cutoff,  # type: ignore[arg-type]
            aggregate=aggregate,  # type: ignore[arg-type]
            empty_value=0.0, graded=family in ("G", "ideal_dcg", "ndcg_rel", "Rndcg", "trec_rbp"),
            aliases=(), agrees_with=_AGREES, factory=factory, group="trec_eval",
        ))
        register_kernel(family)(_kernel(family))
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


def _nickname(nickname: str) -> Callable[[str], list[tuple[str, Metric]]]:
    def expand(text: str) -> list[tuple[str, Metric]]:
        out: list[tuple[str, Metric]] = []
        for spec in (BY_NAME[name] for name in NICKNAMES[nickname]):
            if spec.value in ("runid", "string") or spec.name == "num_q":
                continue
            name = {"rbp": "trec_rbp", "ndcg": "ndcg", "P": "P.5,10,15,20,30,100,200,500,1000",
                    "recall": "recall.5,10,15,20,30,100,200,500,1000",
                    "map_cut": "map_cut.5,10,15,20,30,100,200,500,1000",
                    "ndcg_cut": "ndcg_cut.5,10,15,20,30,100,200,500,1000",
                    "relative_P": "relative_P.5,10,15,20,30,100,200,500,1000",
                    "success": "success.1,5,10", "unj": "unj.5,10,20"}.get(spec.name, spec.name)
            found = parse_metrics(name)
            if spec.name == "rbp":
                found = [("rbp", found[0][1])]
            out.extend(found)
        return out

    return expand


_register()
