"""trec_eval 10.0's measure table as data: names, order, parameters, nicknames.

Every measure trec_eval knows, in the order it prints them, with the kind of
parameters it takes (``-m NAME.PARAMS``: none, integer cut-offs, real
cut-offs, real parameters or ``key=value`` pairs), its defaults, how its value
is printed and summed over queries, and which relevance file it reads. The
nicknames (``official``, ``all_trec``...) name groups of them. The metric
registry (:mod:`rankscope.metrics.trec_eval_names`), the engine and the drop-in
command (:mod:`rankscope.trec_eval`) all read this table. It is part of
trec_eval's dialect (what trec_eval reads and prints) and lives with its
readers, below every layer that needs it, so the command can read it without
loading the metric registry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "BY_NAME", "MEASURES", "NICKNAMES", "MeasureDef", "double_cutoff_name", "well_formed_pairs",
]

ParamKind = Literal["none", "long_cut", "double_cut", "double", "pair"]
ValueKind = Literal["double", "long", "string", "runid"]
Summary = Literal["mean", "sum", "gm", "num_q", "num_rel", "none"]
Source = Literal["qrels", "prefs", "qrels_jg", "none"]

_CUTS: tuple[float, ...] = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_R_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)


@dataclass(frozen=True)
class MeasureDef:
    """One row of trec_eval's measure table."""

    name: str
    params: ParamKind = "none"
    default: tuple[float, ...] = ()
    value: ValueKind = "double"
    summary: Summary = "mean"
    per_query: bool = True
    source: Source = "qrels"


def _d(name: str, **kw: object) -> MeasureDef:
    return MeasureDef(name, **kw)  # type: ignore[arg-type]


_LONG = {"value": "long", "summary": "sum"}
MEASURES: tuple[MeasureDef, ...] = (
    _d("runid", value="runid", summary="none", per_query=False, source="none"),
    _d("num_q", value="long", summary="num_q", per_query=False, source="none"),
    _d("num_ret", **_LONG),
    _d("num_rel", value="long", summary="num_rel"),
    _d("num_rel_ret", **_LONG),
    _d("map"),
    _d("gm_map", summary="gm", per_query=False),
    _d("Rprec"),
    _d("bpref"),
    _d("recip_rank"),
    _d("iprec_at_recall", params="double_cut", default=_RECALL_POINTS),
    _d("P", params="long_cut", default=_CUTS),
    _d("relstring", params="double", default=(10.0,), value="string", summary="none"),
    _d("recall", params="long_cut", default=_CUTS),
    _d("infAP"),
    _d("gm_bpref", summary="gm", per_query=False),
    _d("Rprec_mult", params="double_cut", default=_R_MULTS),
    _d("utility", params="double", default=(1.0, -1.0, 0.0, 0.0)),
    _d("11pt_avg", params="double", default=_RECALL_POINTS),
    _d("binG"),
    _d("G", params="pair"),
    _d("dcg", params="pair"),
    _d("ideal_dcg", params="pair"),
    _d("ndcg", params="pair"),
    _d("ndcg_rel", params="pair"),
    _d("Rndcg", params="pair"),
    _d("ndcg_cut", params="long_cut", default=_CUTS),
    _d("map_cut", params="long_cut", default=_CUTS),
    _d("relative_P", params="long_cut", default=_CUTS),
    _d("success", params="long_cut", default=(1, 5, 10)),
    _d("set_P"),
    _d("set_relative_P"),
    _d("set_recall"),
    _d("set_map"),
    _d("set_F", params="double", default=(1.0,)),
    _d("num_nonrel_judged_ret", **_LONG),
    _d("prefs_num_prefs_poss", source="prefs", **_LONG),
    _d("prefs_num_prefs_ful", source="prefs", **_LONG),
    _d("prefs_num_prefs_ful_ret", source="prefs", **_LONG),
    _d("prefs_simp", source="prefs"),
    _d("prefs_pair", source="prefs"),
    _d("prefs_avgjg", source="prefs"),
    _d("prefs_avgjg_Rnonrel", source="prefs"),
    _d("prefs_simp_ret", source="prefs"),
    _d("prefs_pair_ret", source="prefs"),
    _d("prefs_avgjg_ret", source="prefs"),
    _d("prefs_avgjg_Rnonrel_ret", source="prefs"),
    _d("prefs_simp_imp", source="prefs"),
    _d("prefs_pair_imp", source="prefs"),
    _d("prefs_avgjg_imp", source="prefs"),
    _d("map_avgjg", source="qrels_jg"),
    _d("P_avgjg", params="long_cut", default=_CUTS, source="qrels_jg"),
    _d("Rprec_mult_avgjg", params="double_cut", default=_R_MULTS, source="qrels_jg"),
    _d("yaap"),
    _d("rbp", params="pair"),
    _d("rbp_resid", params="pair"),
    _d("unj", params="long_cut", default=(5, 10, 20)),
)

BY_NAME: dict[str, MeasureDef] = {m.name: m for m in MEASURES}

_OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map",
             "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P")
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": _OFFICIAL,
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
            "set_recall", "set_relative_P", "set_map", "set_F"),
    "all_trec": (*_OFFICIAL, "relstring", "recall", "unj", "rbp", "rbp_resid", "infAP",
                 "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult",
                 "success", "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G",
                 "set_P", "set_recall", "set_relative_P", "set_map", "set_F",
                 "num_nonrel_judged_ret"),
    "all_prefs": ("runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
                  "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg",
                  "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret",
                  "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp",
                  "prefs_pair_imp", "prefs_avgjg_imp"),
    "prefs": ("runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
              "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg"),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}


def double_cutoff_name(name: str, value: float) -> str:
    """``NAME_%3.2f``, cut to ``len(NAME) + 9`` characters as trec_eval's buffer does."""
    text = f"{name}_{_c_fixed(value)}"
    return text[: len(name) + 9]


def _c_fixed(value: float) -> str:
    if value != value:
        return "-nan" if str(value).startswith("-") else "nan"
    return f"{value:3.2f}"


def well_formed_pairs(raw: str) -> bool:
    """Whether every comma-separated segment holds exactly one ``=`` (trec_eval's check)."""
    last = ","
    for ch in raw:
        if ch == ",":
            if last == ",":
                return False
            last = ","
        elif ch == "=":
            if last == "=":
                return False
            last = "="
    return last == "="
