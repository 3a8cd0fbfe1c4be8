"""Conventions profiles: one tool's names, defaults, tie rules and query policy at once.

rankscope's defaults are trec_eval's (ties by document id descending, a
query the run lacks scored as an empty ranking, trec_eval ``-c``). Other tools
differ in small ways that change numbers: pytrec_eval reads scores as 32-bit
floats; ir_measures computes ``RR@k`` and ``Judged@k`` with document ids
ascending for ties and ``RBP`` in input order, fixes ERR's top grade at 4 and
scores a query the run lacks 0 on everything; ranx's ``bpref`` counts a
negative grade as judged non-relevant; scikit-learn averages the gains of
tied documents; Quepid's scorers divide ``P@k`` by the documents shown and
``nDCG@k`` by the DCG of every rated document. A profile switches all of
that to one tool's way, so ``evaluate(..., conventions="ir_measures")`` gives
ir_measures' numbers (each claim is tested against the tool, see
``docs/conventions.md``).

A :class:`Profile` is data: the values it gives the evaluation options
(``ties``, ``queries``, ``scores``...) and rules that rewrite a parsed metric
into the one the tool computes, with how the tool reads the run for it (a
:class:`Reading`: tie rule, score precision, depth). The engine applies them
(:mod:`rankscope.engine.conventions`); nothing here computes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rankscope.errors import OptionError
from rankscope.metrics.base import Metric, make_metric
from rankscope.metrics.parser import parse_metrics
from rankscope.metrics.trec_eval_names import member_spelling

__all__ = [
    "PROFILES",
    "Profile",
    "Reading",
    "Resolved",
    "get_profile",
    "resolve_name",
]


@dataclass(frozen=True)
class Reading:
    """How a tool reads the run for one metric, where it differs from the profile's options.

    Parameters
    ----------
    ties : {"trec", "input", "docid_asc"}, optional
        The tie rule of the ranking this metric is computed on.
    scores : {"float64", "float32"}, optional
        The precision scores are read at.
    depth : int, optional
        Only the first ``depth`` documents of each ranking are read.
    """

    ties: str | None = None
    scores: str | None = None
    depth: int | None = None

    def fields(self) -> dict[str, Any]:
        """The option fields this reading sets (ties, scores)."""
        return {k: v for k, v in (("ties", self.ties), ("scores", self.scores)) if v is not None}

    def describe(self) -> str:
        """A few words, empty for the profile's own reading."""
        parts = []
        if self.ties is not None:
            parts.append(f"ties {self.ties}")
        if self.scores is not None:
            parts.append(f"scores {self.scores}")
        if self.depth is not None:
            parts.append(f"first {self.depth} documents")
        return ", ".join(parts)


@dataclass(frozen=True)
class Resolved:
    """A name as a profile reads it: the metric, how the run is read for it, and why."""

    label: str
    metric: Metric
    reading: Reading = field(default_factory=Reading)
    note: str = ""


Rule = Callable[[str, Metric], "tuple[Metric, Reading, str] | None"]
"""(spelling, metric) -> the metric the tool computes for it, its reading and why (None:
no change)."""


@dataclass(frozen=True)
class Profile:
    """One tool's conventions.

    Parameters
    ----------
    name : str
        The profile's name (``--conventions NAME``).
    tool : str
        The tool and the version the tests run.
    summary : str
        One line.
    options : tuple of (field, value)
        The evaluation options it sets (fields of ``EvalOptions``).
    option_notes : tuple of (field, why)
        Why the tool has those values.
    rules : tuple of Rule
        Rewrites of parsed metrics, tried in order (the first that applies wins).
    names : tuple of str
        The tool's spellings of the metrics rankscope maps (tested against the tool).
    bare : callable, optional
        How the tool reads a measure named without its parameters: the spelling
        with the tool's defaults (trec_eval's ``P`` is ``P.5,10,15,20,30,100,200,500,1000``).
    """

    name: str
    tool: str
    summary: str
    options: tuple[tuple[str, Any], ...] = ()
    option_notes: tuple[tuple[str, str], ...] = ()
    rules: tuple[Rule, ...] = ()
    names: tuple[str, ...] = ()
    bare: Callable[[str], str] | None = None

    def read(self, label: str, metric: Metric) -> Resolved:
        """The metric the tool computes for ``metric`` (spelled ``label``)."""
        for rule in self.rules:
            found = rule(label, metric)
            if found is not None:
                rewritten, reading, note = found
                return Resolved(label, rewritten, reading, note)
        return Resolved(label, metric)


def _with(metric: Metric, **params: Any) -> Metric:
    return make_metric(metric.family, k=metric.k, **{**dict(metric.params), **params})


def _trec_defaults(text: str) -> str:
    """trec_eval's reading of a measure named without parameters: ``-m P`` is P at its nine
    default cut-offs, ``-m success`` success at 1, 5 and 10 (rankscope's own ``P`` and
    ``Success`` without a cut-off read the whole ranking)."""
    spelled = member_spelling(text)
    return spelled if spelled.startswith(text + ".") else text


def _trec9(label: str, metric: Metric) -> tuple[Metric, Reading, str] | None:
    """iprec_at_recall / 11pt_avg: trec_eval 9.x's recall points (pytrec_eval)."""
    if metric.family == "iprec_at_recall":
        params: dict[str, Any] = dict(metric.params)
        return (make_metric("trec9_iprec_at_recall", **params), Reading(),
                "trec_eval 9.x (inside pytrec_eval) turns recall point p into "
                "trunc(p*R + 0.9) relevant documents, 10.0 into lround(p*R)")
    if metric.family == "11pt_avg":
        params = dict(metric.params)
        return (make_metric("trec9_11pt_avg", **params), Reading(),
                "trec_eval 9.x's recall points (see iprec_at_recall)")
    return None


# -------------------------------------------------------------------- ir_measures

def _ir_msmarco_rr(label: str, metric: Metric) -> tuple[Metric, Reading, str] | None:
    if metric.family == "RR" and metric.k is not None:
        return (metric, Reading(ties="docid_asc", scores="float64"),
                "RR@k comes from ir_measures' msmarco provider: ties by document id "
                "ascending, scores as doubles")
    return None


def _ir_judged(label: str, metric: Metric) -> tuple[Metric, Reading, str] | None:
    if metric.family == "Judged":
        return (metric, Reading(ties="docid_asc", scores="float64"),
                "Judged comes from ir_measures' judged provider: ties by document id "
                "ascending, scores as doubles")
    return None


_CWL = ("RBP", "BPM", "INSQ", "INST", "SDCG", "NERR8", "NERR9", "NERR10", "NERR11")


def _ir_cwl_rbp(label: str, metric: Metric) -> tuple[Metric, Reading, str] | None:
    if metric.family in _CWL:
        return (metric, Reading(ties="input", scores="float64", depth=1000),
                f"{metric.family} comes from ir_measures' cwl_eval provider: tied scores keep "
                "their input order, scores as doubles, the first 1000 documents only")
    return None


def _ir_compat(label: str, metric: Metric) -> tuple[Metric, Reading, str] | None:
    if metric.family == "Compat":
        return (metric, Reading(ties="docid_asc", scores="float64"),
                "Compat comes from ir_measures' compat provider: ties by document id "
                "ascending, scores as doubles")
    return None


def _ir_gdeval(label: str, metric: Metric) -> tuple[Metric, Reading, str] | None:
    if metric.family == "ERR":
        rewritten = metric if metric.get("max_grade") is not None else _with(metric, max_grade=4.0)
        return (rewritten, Reading(scores="float64"),
                "ERR@k comes from gdeval, which fixes the top grade at 4 (rankscope: the "
                "qrels' top grade); scores as doubles; gdeval prints 5 decimals")
    if (metric.family == "nDCG" and metric.get("gain") == "exp" and metric.k is not None
            and metric.get("gains") is None):
        return (metric, Reading(scores="float64"),
                "nDCG(dcg='exp-log2')@k comes from gdeval: scores as doubles; gdeval "
                "prints 5 decimals")
    return None


# -------------------------------------------------------------------- ranx

def _ranx_bpref(label: str, metric: Metric) -> tuple[Metric, Reading, str] | None:
    if metric.family == "bpref":
        return (make_metric("ranx_bpref", rel=metric.get("rel")), Reading(),
                "ranx counts a judged negative grade as non-relevant; trec_eval skips it "
                "(in the pool but unjudged)")
    return None


# -------------------------------------------------------------------- scikit-learn

def _plain(metric: Metric) -> bool:
    """A DCG / nDCG with rankscope's default gain and ideal (what ndcg@k means)."""
    params = dict(metric.params)
    return (params.get("gain") == "linear" and params.get("gains") is None
            and params.get("rel") is None and params.get("ideal", "global") == "global"
            and params.get("max_grade") is None)


def _sklearn(label: str, metric: Metric) -> tuple[Metric, Reading, str] | None:
    if metric.family in ("nDCG", "DCG") and _plain(metric):
        family = "sklearn_nDCG" if metric.family == "nDCG" else "sklearn_DCG"
        what = ("ideal from the ranked documents' own grades; " if metric.family == "nDCG"
                else "")
        return (make_metric(family, k=metric.k), Reading(),
                f"scikit-learn: {what}tied scores share their mean gain (ignore_ties=False)")
    return None


# -------------------------------------------------------------------- Quepid

def _quepid(label: str, metric: Metric) -> tuple[Metric, Reading, str] | None:
    if metric.family == "P" and metric.k is not None and metric.get("rel") == 1:
        return (make_metric("quepid_P", k=metric.k), Reading(),
                "Quepid's P@k divides by the documents shown, min(k, n), not by k")
    if metric.family == "nDCG" and metric.k is not None and _plain(metric):
        return (make_metric("quepid_nDCG", k=metric.k), Reading(),
                "Quepid's nDCG@k: gain 2^g - 1, divided by the DCG of every rated "
                "document (the ideal is not cut at k); its NDCG_CUT@k cuts it")
    if metric.family == "DCG" and _plain(metric):
        return (_with(metric, gain="exp"), Reading(), "Quepid's DCG@k: gain 2^g - 1")
    if metric.family == "ERR" and metric.get("max_grade") is None:
        return (_with(metric, max_grade=3.0), Reading(),
                "Quepid's ERR@10 scorer divides by 2^3, its scale's top grade "
                "(rankscope: the qrels' top grade)")
    return None


PROFILES: dict[str, Profile] = {
    profile.name: profile
    for profile in (
        Profile(
            name="trec_eval",
            tool="trec_eval 10.0 (golden outputs of the binary; pytrec_eval where 9.x agrees)",
            summary="rankscope's defaults: trec_eval's names, ties by document id descending, "
                    "a query the run lacks scored as an empty ranking (-c)",
            option_notes=(("queries", "without -c trec_eval 10.0 refuses a run that lacks a "
                           "qrels query; with -c it scores it as an empty ranking, as here"),),
            names=("P_5", "P.5,10", "recall_100", "map", "map_cut_10", "ndcg", "ndcg_cut_10",
                   "recip_rank", "Rprec", "bpref", "success_1", "set_P", "set_recall",
                   "set_F", "num_ret", "num_rel", "num_rel_ret", "iprec_at_recall_0.10",
                   "11pt_avg", "infAP", "gm_map"),
            bare=_trec_defaults,
        ),
        Profile(
            name="pytrec_eval",
            tool="pytrec_eval-terrier 0.5 (trec_eval 9.x in-process)",
            summary="trec_eval's names and ties, scores read as 32-bit floats, only queries "
                    "in both inputs, trec_eval 9.x's interpolated precision",
            options=(("queries", "intersection"), ("scores", "float32")),
            option_notes=(
                ("queries", "pytrec_eval evaluates only queries the run and the qrels share"),
                ("scores", "pytrec_eval keeps scores as 32-bit floats: scores closer than "
                           "float32 resolution tie, and the tie goes by document id"),
            ),
            rules=(_trec9,),
            names=("P_5", "recall_100", "map", "map_cut_10", "ndcg", "ndcg_cut_10",
                   "recip_rank", "Rprec", "bpref", "success_1", "set_P", "set_recall",
                   "set_F", "num_ret", "num_rel", "num_rel_ret", "infAP",
                   "iprec_at_recall_0.10", "11pt_avg"),
            bare=_trec_defaults,
        ),
        Profile(
            name="ir_measures",
            tool="ir_measures 0.4 with its default providers (pytrec_eval, msmarco, judged, "
                 "cwl_eval, gdeval)",
            summary="ir_measures' names; each measure read as the provider ir_measures "
                    "picks for it reads the run; a query the run lacks scores 0",
            options=(("queries", "zero"), ("scores", "float32")),
            option_notes=(
                ("queries", "ir_measures scores a qrels query the run lacks 0 on every "
                            "measure (NumRel too)"),
                ("scores", "most measures come from pytrec_eval, which reads scores as "
                           "32-bit floats"),
            ),
            rules=(_ir_msmarco_rr, _ir_judged, _ir_cwl_rbp, _ir_compat, _ir_gdeval, _trec9),
            names=("nDCG@10", "nDCG", "nDCG(gains={0:0,1:3,2:7,3:15})@5", "P@5", "P(rel=2)@5",
                   "AP", "AP@5", "AP(rel=2)", "RR", "RR@3", "RR(rel=2)@3", "R@5", "R(rel=2)@5",
                   "Judged@3", "Judged", "Success@5", "Rprec", "Bpref", "SetF",
                   "SetF(beta=0.5)", "SetP", "SetR", "NumRet", "NumRelRet", "NumRel",
                   "RBP(rel=1)", "RBP(p=0.5,rel=2)", "ERR@5", "ERR@10",
                   "nDCG(dcg='exp-log2')@5", "infAP", "IPrec@0.2", "SetAP",
                   "BPM(T=1.0,max_rel=3)@10", "INSQ(T=1.5,max_rel=3)", "INST(T=2.0,max_rel=3)",
                   "SDCG(max_rel=3)@10", "NERR8(max_rel=3)@10", "NERR9(max_rel=3)@20",
                   "NERR10(p=0.7,max_rel=3)", "NERR11(T=1.0,max_rel=3)", "Compat(p=0.95)",
                   "Compat(p=0.8,normalize=False)", "NumQ", "P(judged_only=True)@5"),
        ),
        Profile(
            name="ranx",
            tool="ranx 0.3",
            summary="ranx's names; bpref counts negative grades as judged non-relevant; a "
                    "query the run lacks is an empty ranking (make_comparable=True)",
            options=(("queries", "qrels"),),
            option_notes=(("queries", "ranx refuses runs whose queries differ from the "
                                      "qrels' unless make_comparable=True, which scores a "
                                      "missing query as an empty ranking and drops run-only "
                                      "queries"),),
            rules=(_ranx_bpref,),
            names=("ndcg@10", "ndcg", "ndcg_burges@10", "map@100", "map", "mrr@10", "mrr",
                   "precision@5", "precision", "recall@100", "recall", "hits@10", "hits",
                   "hit_rate@5", "f1@10", "f1", "r-precision", "bpref", "rbp.95",
                   "dcg@10", "dcg_burges@10", "ndcg@10-l2", "map@10-l2", "bpref-l2"),
        ),
        Profile(
            name="sklearn",
            tool="scikit-learn 1.x (ndcg_score, dcg_score)",
            summary="scikit-learn's ndcg_score / dcg_score: tied scores share their mean "
                    "gain, the ideal from the ranked documents, only queries in both",
            options=(("queries", "intersection"),),
            option_notes=(("queries", "scikit-learn scores the rows it is given: the queries "
                                      "with both a ranking and grades"),),
            rules=(_sklearn,),
            names=("ndcg_score", "ndcg_score@5", "dcg_score", "dcg_score@5",
                   "ndcg_score(k=3, ignore_ties=True)", "nDCG@10", "DCG@10"),
        ),
        Profile(
            name="quepid",
            tool="Quepid's communal scorers (o19s/quepid db/scorers, 2025)",
            summary="Quepid's scorer names: P@k over the documents shown, nDCG@k over the DCG "
                    "of every rated document, gain 2^g - 1, ERR on a 0-3 scale, the "
                    "engine's order for ties",
            options=(("ties", "input"),),
            option_notes=(("ties", "Quepid scores the results in the order the search engine "
                                   "returned them"),),
            rules=(_quepid,),
            names=("P@10", "AP@10", "RR@10", "CG@10", "DCG@10", "nDCG@10", "NDCG_CUT@10",
                   "ERR@10"),
        ),
    )
}
"""Every conventions profile by name."""


def get_profile(name: str) -> Profile:
    """The profile called ``name`` (raises OptionError with a suggestion)."""
    if isinstance(name, str) and name in PROFILES:
        return PROFILES[name]
    import difflib  # only for an unknown name: not on every start-up

    close = difflib.get_close_matches(str(name), list(PROFILES), n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise OptionError(
        f"conventions must be one of {', '.join(PROFILES)}, not {name!r}{hint}")


def resolve_name(item: str | Metric, conventions: str | None = None) -> list[Resolved]:
    """A name (or metric) as ``conventions`` reads it; several for trec_eval's dotted forms.

    Without conventions every name keeps rankscope's meaning (its default reading).
    Under a tool's conventions a name without parameters reads as the tool reads it
    (pytrec_eval's and trec_eval's ``P``: P at their nine default cut-offs).

    Examples
    --------
    >>> from rankscope.metrics.conventions import resolve_name
    >>> [r.metric.name for r in resolve_name("ERR@10")]
    ['ERR@10']
    >>> found = resolve_name("ERR@10", "ir_measures")[0]
    >>> found.metric.name, found.reading.scores
    ('ERR(max_grade=4)@10', 'float64')
    >>> resolve_name("RR@5", "ir_measures")[0].reading.ties
    'docid_asc'
    >>> [r.label for r in resolve_name("success", "pytrec_eval")]
    ['success_1', 'success_5', 'success_10']
    >>> [r.label for r in resolve_name("success")]
    ['success']
    """
    if conventions is None:
        pairs = [(item.name, item)] if isinstance(item, Metric) else parse_metrics(item)
        return [Resolved(label, metric) for label, metric in pairs]
    profile = get_profile(conventions)
    if isinstance(item, Metric):
        pairs = [(item.name, item)]
    else:
        pairs = parse_metrics(profile.bare(item) if profile.bare is not None else item)
    return [profile.read(label, metric) for label, metric in pairs]

