"""trec_eval 10.0's measure table: names, order, parameters, nicknames.

Everything trec_eval prints follows the order of :data:`MEASURES`. A measure
takes one of five kinds of parameters (``-m NAME.PARAMS``): none, integer
cut-offs (``P.5,10``), real cut-offs (``iprec_at_recall..1,.2``), real
parameters (``utility.1,-1,0,0``) or ``key=value`` pairs (``ndcg.1=3,2=9``).
:func:`bind` checks a parameter string the way trec_eval does and names the
values the measure prints (``P_5``, ``iprec_at_recall_0.10``, ``ndcg_1=3``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Literal

from rankscope.trec_eval.cnum import atof, atol
from rankscope.trec_eval.exits import TrecEvalExit

__all__ = [
    "BY_NAME",
    "MEASURES",
    "NICKNAMES",
    "Bound",
    "MeasureDef",
    "bind",
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


def _pair_ok(raw: str) -> bool:
    """Every comma-separated segment holds exactly one ``=`` (trec_eval's check)."""
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


def double_cutoff_name(name: str, value: float) -> str:
    """``NAME_%3.2f``, cut to ``len(NAME) + 9`` characters as trec_eval's buffer does."""
    text = f"{name}_{_c_fixed(value)}"
    return text[: len(name) + 9]


def _c_fixed(value: float) -> str:
    if value != value:
        return "-nan" if str(value).startswith("-") else "nan"
    return f"{value:3.2f}"


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
        return Bound(spec, tuple(atof(p) for p in parts), (), (f"{name}_{raw}",))
    if not _pair_ok(raw):
        raise _cannot(name, f"trec_eval: malformed pair parameters in '{raw}'")
    pairs = tuple((key, atof(value)) for key, value in (p.split("=", 1) for p in parts))
    return Bound(spec, (), pairs, (f"{name}_{raw}",))


def expand(name: str) -> tuple[str, ...] | None:
    """The measures a ``-m`` name marks (a nickname's members, or itself); None if unknown."""
    if name in NICKNAMES:
        return NICKNAMES[name]
    if name in BY_NAME:
        return (name,)
    return None
