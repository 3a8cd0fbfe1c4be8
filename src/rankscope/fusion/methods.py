r"""What each fusion method is: its parameters, formula and citation, as data.

:func:`rankscope.fusion.combine.fuse` computes them (the per-document
contribution of each run, then one aggregation per document); this module only
declares them, so ``rankscope metrics``, ``rankscope fuse --list-methods`` and
the generated reference (``docs/metrics/fusion.md``) list the same methods with
the same formulas. Names follow ranx (``log_isr``, ``w_bordafuse``...); ranx's
other spellings (``sum``, ``mnz``, ``comb_gmnz``, ``weighted_sum``) are aliases.

Notation: for document d of a query, :math:`R(d)` is the set of runs that
retrieved it, :math:`s_i(d)` its normalized score in run i, :math:`r_i(d)` its
1-based rank there, :math:`n = |R(d)|`, :math:`w_i` the run weights, and
:math:`N` the number of distinct documents the runs retrieved for the query.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from rankscope.errors import OptionError

__all__ = ["METHODS", "FusionMethod", "FusionParam", "method_spec"]

Kind = Literal["score", "rank", "supervised"]


@dataclass(frozen=True)
class FusionParam:
    """One tunable parameter of a fusion method (also a grid-search axis)."""

    name: str
    default: float | int | None
    kind: Literal["float", "int", "weights"]
    doc: str
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    open_high: bool = False

    def check(self, value: Any, method: str) -> Any:
        """The value converted and range-checked (raises OptionError)."""
        if self.kind == "weights":
            return value  # checked against the number of runs by the caller
        bad = isinstance(value, bool) or not isinstance(value, int | float)
        if not bad and self.kind == "int" and float(value) != int(value):
            bad = True
        if bad or not math.isfinite(float(value)):
            what = "a whole number" if self.kind == "int" else "a finite number"
            raise OptionError(f"{method}: {self.name} must be {what}, not {value!r}")
        number = int(value) if self.kind == "int" else float(value)
        too_low = self.low is not None and (number <= self.low if self.open_low
                                            else number < self.low)
        too_high = self.high is not None and (number >= self.high if self.open_high
                                              else number > self.high)
        if too_low or too_high:
            left, right = "(" if self.open_low else "[", ")" if self.open_high else "]"
            lo = "-inf" if self.low is None else f"{self.low:g}"
            hi = "inf" if self.high is None else f"{self.high:g}"
            raise OptionError(f"{method}: {self.name} must be in {left}{lo}, {hi}{right}, "
                              f"not {value!r}")
        return number


@dataclass(frozen=True)
class FusionMethod:
    """The declaration of one fusion method (computes nothing).

    Attributes
    ----------
    name : str
        Canonical name (``--method``), ranx's where ranx has the method.
    summary : str
        One line.
    formula : str
        The fused score of document d (reStructuredText math).
    citation : str
        Where the method comes from.
    params : tuple of FusionParam
        Its parameters (each a possible grid-search axis).
    kind : {"score", "rank", "supervised"}
        Whether it reads normalized scores, only ranks, or learns from qrels
        (``fuse(..., qrels=...)``).
    aliases : tuple of str
        Other spellings accepted (ranx's).
    """

    name: str
    summary: str
    formula: str
    citation: str
    params: tuple[FusionParam, ...]
    kind: Kind
    aliases: tuple[str, ...] = ()

    def param(self, name: str) -> FusionParam:
        """The parameter ``name`` (raises OptionError)."""
        for p in self.params:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.params) or "none"
        raise OptionError(f"{self.name} has no parameter {name!r} (has: {known})")

    def bind(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Defaults merged with the given values (None = not given), each checked."""
        out: dict[str, Any] = {}
        for key, value in given.items():
            if value is not None:
                self.param(key)  # raises for a parameter this method does not take
        for p in self.params:
            value = given.get(p.name)
            out[p.name] = p.default if value is None else p.check(value, self.name)
        return out


_WEIGHTS = FusionParam("weights", None, "weights", "one weight per run (default: 1/n each)")
_RRF_K = FusionParam("k", 60, "float", "RRF's constant", low=0.0)
_SIGMA = FusionParam("sigma", 0.01, "float", "added to n inside the logarithm", low=0.0,
                     high=1.0)
_GAMMA = FusionParam("gamma", 1.0, "float", "exponent of n (0: CombSUM, 1: CombMNZ)", low=0.0)
_PHI = FusionParam("phi", 0.8, "float", "persistence: weight of rank r is (1 - phi) phi^(r-1)",
                   low=0.0, high=1.0, open_low=True, open_high=True)
_SEGMENTS = FusionParam("segments", 10, "int",
                        "segments each ranking is cut into (ProbFuse's x)", low=1)
_WINDOW = FusionParam("window", 1, "int", "half-width w of the window of positions averaged",
                      low=0)

_FOX = "Fox & Shaw, \"Combination of multiple searches\", TREC-2 (1993)."
_LEE = "Lee, \"Analyses of multiple evidence combination\", SIGIR (1997)."
_MOURAO = ("Mourão, Martins & Magalhães, \"Multimodal medical information retrieval with "
           "unsupervised rank fusion\", Comput. Med. Imaging Graph. 39 (2015).")
_WU = "Wu & Crestani, \"Data fusion with estimated weights\", CIKM (2002)."
_ASLAM = "Aslam & Montague, \"Models for metasearch\", SIGIR (2001)."
_MONTAGUE = "Montague & Aslam, \"Condorcet fusion for improved retrieval\", CIKM (2002)."
_LILLIS10 = ("Lillis, Zhang, Toolan, Collier, Leonard & Dunnion, \"Estimating probabilities "
             "for effective data fusion\", SIGIR (2010).")


def _m(name: str, summary: str, formula: str, citation: str, kind: Kind,
       params: tuple[FusionParam, ...] = (), aliases: tuple[str, ...] = ()) -> FusionMethod:
    return FusionMethod(name, summary, formula, citation, params, kind, aliases)


METHODS: dict[str, FusionMethod] = {m.name: m for m in (
    _m("rrf", "Reciprocal rank fusion.", r"\sum_{i \in R(d)} \frac{1}{k + r_i(d)}",
       "Cormack, Clarke & Büttcher, \"Reciprocal rank fusion outperforms Condorcet and "
       "individual rank learning methods\", SIGIR (2009).", "rank", (_RRF_K,)),
    _m("combsum", "CombSUM: the sum of the normalized scores.", r"\sum_{i \in R(d)} s_i(d)",
       _FOX, "score", aliases=("sum", "comb_sum")),
    _m("combmnz", "CombMNZ: CombSUM times the number of runs that retrieved d.",
       r"n \sum_{i \in R(d)} s_i(d)", _FOX, "score", aliases=("mnz", "comb_mnz")),
    _m("combmax", "CombMAX: the highest normalized score.", r"\max_{i \in R(d)} s_i(d)",
       _FOX, "score", aliases=("max", "comb_max")),
    _m("combmin", "CombMIN: the lowest normalized score.", r"\min_{i \in R(d)} s_i(d)",
       _FOX, "score", aliases=("min", "comb_min")),
    _m("combmed", "CombMED: the median normalized score.",
       r"\operatorname{median}_{i \in R(d)} s_i(d)", _FOX, "score",
       aliases=("med", "comb_med")),
    _m("combanz", "CombANZ: the mean normalized score over the runs that retrieved d.",
       r"\frac{1}{n} \sum_{i \in R(d)} s_i(d)", _FOX, "score",
       aliases=("anz", "comb_anz")),
    _m("wsum", "Weighted sum of the normalized scores.", r"\sum_{i \in R(d)} w_i s_i(d)",
       _FOX, "score", (_WEIGHTS,), aliases=("weighted_sum",)),
    _m("combgmnz", "CombGMNZ: CombSUM times n to the power gamma.",
       r"n^{\gamma} \sum_{i \in R(d)} s_i(d)", _LEE, "score", (_GAMMA,),
       aliases=("gmnz", "comb_gmnz")),
    _m("wmnz", "Weighted MNZ: CombSUM times the summed weights of the runs that retrieved d.",
       r"\Big(\sum_{i \in R(d)} w_i\Big) \sum_{i \in R(d)} s_i(d)", _WU, "score",
       (_WEIGHTS,)),
    _m("mixed", "Mixed: the weighted sum times the square root of n.",
       r"\sqrt{n} \sum_{i \in R(d)} w_i s_i(d)", _WU, "score", (_WEIGHTS,)),
    _m("isr", "Inverse square rank: CombMNZ of 1/r^2.",
       r"n \sum_{i \in R(d)} \frac{1}{r_i(d)^2}", _MOURAO, "rank"),
    _m("log_isr", "Log ISR: the inverse square ranks times ln(n) (0 for a document one run "
       "retrieved).", r"\ln(n) \sum_{i \in R(d)} \frac{1}{r_i(d)^2}", _MOURAO, "rank"),
    _m("logn_isr", "LogN ISR: the inverse square ranks times ln(n + sigma).",
       r"\ln(n + \sigma) \sum_{i \in R(d)} \frac{1}{r_i(d)^2}", _MOURAO, "rank", (_SIGMA,)),
    _m("bordafuse", "BordaFuse: Borda points, N - r + 1, and (N - |run| + 1) / 2 for a "
       "document a run did not retrieve, summed over all runs.",
       r"\sum_{i \in R(d)} (N - r_i(d) + 1) + \sum_{i \notin R(d)} \frac{N - m_i + 1}{2}"
       r", \quad m_i = \text{documents run } i \text{ retrieved}", _ASLAM, "rank"),
    _m("w_bordafuse", "Weighted BordaFuse: each run's Borda points times its weight.",
       r"\sum_{i \in R(d)} w_i (N - r_i(d) + 1) + \sum_{i \notin R(d)} w_i \frac{N - m_i + 1}{2}",
       _ASLAM, "rank", (_WEIGHTS,), aliases=("weighted_bordafuse",)),
    _m("condorcet", "Condorcet fusion: documents ordered by pairwise majority vote.",
       r"N - p(d) + 1, \quad p(d) = \text{position after sorting with } d \prec e \iff "
       r"|\{i : r_i(d) < r_i(e)\}| > |\{i : r_i(e) < r_i(d)\}|",
       _MONTAGUE, "rank", aliases=("condorcetfuse",)),
    _m("w_condorcet", "Weighted Condorcet fusion: each run's vote counts its weight.",
       r"N - p(d) + 1, \quad d \prec e \iff \sum_{i : r_i(d) < r_i(e)} w_i > "
       r"\sum_{i : r_i(e) < r_i(d)} w_i", _MONTAGUE, "rank", (_WEIGHTS,),
       aliases=("weighted_condorcet",)),
    _m("rbc", "Rank-biased centroid: rank-biased weights summed over runs.",
       r"\sum_{i \in R(d)} (1 - \phi)\, \phi^{r_i(d) - 1}",
       "Bailey, Moffat, Scholer & Thomas, \"Retrieval consistency in the presence of query "
       "variations\", SIGIR (2017).", "rank", (_PHI,)),
    _m("mapfuse", "MAPFuse: each run's MAP on the training qrels divided by the rank.",
       r"\sum_{i \in R(d)} \frac{MAP_i}{r_i(d)}", _LILLIS10, "supervised"),
    _m("posfuse", "PosFuse: the probability, learned from qrels, that the document at rank "
       "r of the run is relevant.",
       r"\sum_{i \in R(d)} P_i(r_i(d)), \quad P_i(r) = \frac{\#\{q : \text{rank } r "
       r"\text{ relevant}\}}{\#\{q : \text{run ranks} \ge r\}}", _LILLIS10, "supervised"),
    _m("probfuse", "ProbFuse: the learned probability of relevance of the run's segment, "
       "divided by the segment number.",
       r"\sum_{i \in R(d)} \frac{P_i(k)}{k}, \quad k = \Big\lceil \frac{r_i(d)}"
       r"{\lceil m_i / x \rceil} \Big\rceil, \; P_i(k) = \frac{1}{|Q|} \sum_{q} "
       r"\frac{\text{relevant in segment } k}{\text{size of segment } k}",
       "Lillis, Toolan, Collier & Dunnion, \"ProbFuse: a probabilistic approach to data "
       "fusion\", SIGIR (2006).", "supervised", (_SEGMENTS,)),
    _m("segfuse", "SegFuse: the learned probability of relevance of the rank's segment "
       "(segments of 5, 10, 20, 40... documents) times the normalized score plus one.",
       r"\sum_{i \in R(d)} P_i(k) (s_i(d) + 1), \quad k: 10 \cdot 2^{k-2} - 5 < r_i(d) "
       r"\le 10 \cdot 2^{k-1} - 5",
       "Shokouhi, \"Segmentation of search engine results for effective data-fusion\", "
       "ECIR (2007).", "supervised"),
    _m("slidefuse", "SlideFuse: PosFuse's probabilities averaged over a window of positions.",
       r"\sum_{i \in R(d)} \frac{1}{b - a + 1} \sum_{p=a}^{b} P_i(p), \quad "
       r"a = \max(r_i(d) - w, 1),\; b = \min(r_i(d) + w, m_i)",
       "Lillis, Toolan, Collier & Dunnion, \"Extending probabilistic data fusion using "
       "sliding windows\", ECIR (2008).", "supervised", (_WINDOW,)),
    _m("bayesfuse", "BayesFuse: summed log-odds of relevance of each run's rank segment "
       "(learned from qrels), log(0.001/0.999) for a run that did not retrieve d.",
       r"\sum_{i} \log \frac{p_i(r_i(d))}{1 - p_i(r_i(d))}, \quad p_i = \text{precision of "
       r"the segment } [0,5), [5,10), [10,15), [15,20), [20,30), [30,100), \ldots, [500,1000)",
       _ASLAM, "supervised"),
)}
"""Every fusion method, by canonical name, in the order they are listed."""

_ALIASES = {key.replace("_", "").replace("-", ""): m.name
            for m in METHODS.values() for key in (m.name, *m.aliases)}


def method_spec(name: str) -> FusionMethod:
    """The method called ``name`` in any accepted spelling (raises OptionError)."""
    key = name.lower().replace("_", "").replace("-", "") if isinstance(name, str) else ""
    if key not in _ALIASES:
        raise OptionError(f"fusion method must be one of {', '.join(METHODS)}, not {name!r}")
    return METHODS[_ALIASES[key]]
