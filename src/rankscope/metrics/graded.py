r"""Graded-relevance metrics: the grade (or a gain computed from it) counts.

Gains: ``gain="linear"`` uses the grade itself (Järvelin & Kekäläinen; what
trec_eval, pytrec_eval and ranx's ``ndcg`` do), ``gain="exp"`` uses
:math:`2^g - 1` (Burges et al.; ranx's ``ndcg_burges``); ``gains`` maps grades
to gains explicitly (ir_measures' ``nDCG(gains={...})``); a grade not in the
map keeps the gain ``gain`` gives it. ``gain_table`` reads trec_eval's
``ndcg.1=3,2=9`` exactly as trec_eval does (its integer levels, its table
order, its ideal ranking). Negative grades gain 0. With ``rel`` set, grades below it gain 0 (ranx's
``-lN`` suffix). Unjudged documents gain 0.
"""

from __future__ import annotations

from rankscope.metrics.base import Family, Metric, Param, claims, make_metric, register

__all__ = [
    "best",
    "cumulative_gain",
    "dcg",
    "err",
    "ndcg",
    "rbp",
]

GAIN = Param("gain", "linear", "str",
             "gain of a grade g: linear = g (Järvelin & Kekäläinen, ranx's dcg), exp = 2^g - 1 "
             "(Burges et al., ranx's dcg_burges)", choices=("linear", "exp"))
GAINS = Param("gains", None, "gains",
              "explicit gain per grade, e.g. '1=3,2=9' (ir_measures' nDCG(gains={...})); "
              "other grades keep their gain; overrides gain")
REL_G = Param("rel", None, "float",
              "grades below this gain 0 (ranx -lN, as in ndcg@10-l2); unset = no threshold")
GAIN_TABLE = Param("gain_table", None, "str",
                   "trec_eval's gain parameters as typed ('1=3,2=9' of ndcg.1=3,2=9), read its "
                   "way on its integer levels (see the Notes of nDCG); overrides gain, gains and "
                   "ideal")
IDEAL = Param("ideal", "global", "str",
              "the flavor of ideal: global = every judged document of the query sorted (the "
              "formal definition, trec_eval's), max = the scale's top grade repeated k times, "
              "local = the retrieved top k reordered",
              choices=("global", "max", "local"))
MAX_GRADE = Param("max_grade", None, "float",
                  "the scale's top grade (of ideal=max, and of ERR's stopping probabilities); "
                  "unset = the highest grade in the qrels")
RANK_EXPONENT = Param("rank_exponent", 1.0, "float",
                      "the exponent e of the position factor 1/i^e: 1 = Chapelle et al.'s ERR; "
                      "0.18 = ERR-0.18, the gentler discount of SearchTweak's judging "
                      "platform, which gives later ranks more weight", low=0.0, open_low=True)
P_RBP = Param("p", 0.8, "float", "persistence: probability of looking at the next document",
              low=0.0, high=1.0, open_low=True, open_high=True)
RBP_GAIN = Param("gain", "binary", "str",
                 "binary = 1 for relevant documents (Moffat & Zobel); grade = the grade "
                 "itself (ranx's rbp)", choices=("binary", "grade"))
REL = Param("rel", 1, "float", "minimum grade counted as relevant")
JUDGED_ONLY = Param("judged_only", False, "bool",
                    "drop unjudged documents before ranks are counted, for this metric alone "
                    "(trec_eval -J, ir_measures' judged_only=True)")


def cumulative_gain(
    k: int | None = None, *, gain: str = "linear", gains: object = None, rel: float | None = None
) -> Metric:
    r"""Cumulative gain: the sum of the gains of the first k documents.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: CG@k = \sum_{i=1}^{k} gain(g_i)

    For grades (4, 3, 2, 1, 0), CG@5 = 10 in any order.

    References
    ----------
    .. [1] Järvelin & Kekäläinen, "Cumulated gain-based evaluation of IR
       techniques", ACM TOIS 20(4) (2002).

    Examples
    --------
    Grades in rank order 0, 1, (unjudged), 2:

    >>> import rankscope
    >>> qrels = {"q": {"a": 1, "b": 0, "c": 2, "e": 1}}
    >>> run = {"q": {"b": 0.9, "a": 0.8, "d": 0.7, "c": 0.6}}
    >>> result = rankscope.evaluate(qrels, run, ["CG@4", "CG(gain=exp)@4"])
    >>> result["CG@4"], result["CG(gain=exp)@4"]  # 0 + 1 + 0 + 2, 0 + 1 + 0 + 3
    (3.0, 4.0)
    """
    return make_metric("CG", k=k, gain=gain, gains=gains, rel=rel)


def dcg(
    k: int | None = None,
    *,
    gain: str = "linear",
    gains: object = None,
    rel: float | None = None,
    gain_table: str | None = None,
) -> Metric:
    r"""Discounted cumulative gain with the :math:`1/\log_2(i+1)` discount.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: DCG@k = \sum_{i=1}^{k} \frac{gain(g_i)}{\log_2(i + 1)}

    For grades (4, 3, 2, 1, 0): linear DCG@5 = 7.323466, exponential
    21.34718.

    References
    ----------
    .. [1] Järvelin & Kekäläinen, ACM TOIS 20(4) (2002).
    .. [2] Burges et al., "Learning to rank using gradient descent", ICML (2005).

    Examples
    --------
    >>> import rankscope
    >>> qrels = {"q": {"a": 1, "b": 0, "c": 2, "e": 1}}
    >>> run = {"q": {"b": 0.9, "a": 0.8, "d": 0.7, "c": 0.6}}
    >>> round(rankscope.evaluate(qrels, run, "DCG@4")["DCG@4"], 4)  # 1/log2(3) + 2/log2(5)
    1.4923
    """
    return make_metric("DCG", k=k, gain=gain, gains=gains, rel=rel, gain_table=gain_table)


def ndcg(
    k: int | None = None,
    *,
    gain: str = "linear",
    gains: object = None,
    rel: float | None = None,
    ideal: str = "global",
    max_grade: float | None = None,
    gain_table: str | None = None,
    judged_only: bool = False,
) -> Metric:
    r"""Normalized DCG: DCG divided by the DCG of an ideal ranking.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: nDCG@k = \frac{DCG@k}{IDCG@k}

    0 when IDCG@k = 0. Seed examples: (3, 2, 1, 4, 0) scores 0.8854504 and
    (0, 1, 2, 3, 4) 0.6104174 with the local ideal at k = 5.

    ``gain_table`` is trec_eval's ``ndcg.1=3,2=9``, read as trec_eval reads it:
    on integer levels (a grade truncated; a negative grade and an unjudged
    document have levels -2 and -1), a table of the given levels then every
    other level up to the query's highest with its level as gain, sorted by
    gain with trec_eval's comparator (gains less than 1 apart keep their
    order); the ideal ranking walks the table from the top and stops at the
    first gain <= 0.

    References
    ----------
    .. [1] Järvelin & Kekäläinen, ACM TOIS 20(4) (2002).
    .. [2] Burges et al., ICML (2005).

    Examples
    --------
    The ideal ranking of the judged documents has grades 2, 1, 1:

    >>> import rankscope
    >>> qrels = {"q": {"a": 1, "b": 0, "c": 2, "e": 1}}
    >>> run = {"q": {"b": 0.9, "a": 0.8, "d": 0.7, "c": 0.6}}
    >>> value = rankscope.evaluate(qrels, run, "nDCG")["nDCG"]
    >>> round(value, 4)  # (1/log2(3) + 2/log2(5)) / (2 + 1/log2(3) + 1/log2(4))
    0.4766
    """
    return make_metric(
        "nDCG", k=k, gain=gain, gains=gains, rel=rel, ideal=ideal, max_grade=max_grade,
        gain_table=gain_table, judged_only=judged_only,
    )


def err(
    k: int | None = None, *, max_grade: float | None = None, rank_exponent: float = 1.0
) -> Metric:
    r"""Expected reciprocal rank under the cascade model.

    Returns
    -------
    Metric

    Notes
    -----
    .. math::

        ERR@k = \sum_{i=1}^{k} \frac{1}{i^e} R_i \prod_{j<i} (1 - R_j),
        \quad R_i = \frac{2^{g_i} - 1}{2^{g_{max}}}

    Negative grades and unjudged documents have :math:`R_i = 0`.

    References
    ----------
    .. [1] Chapelle, Metzler, Zhang & Grinspan, "Expected reciprocal rank for
       graded relevance", CIKM (2009).
    .. [2] SearchTweak, "Evaluation Metrics": ERR and ERR-0.18.

    Examples
    --------
    With g_max = 2 the stopping probabilities in rank order are 0, 1/4, 0, 3/4:

    >>> import rankscope
    >>> qrels = {"q": {"a": 1, "b": 0, "c": 2, "e": 1}}
    >>> run = {"q": {"b": 0.9, "a": 0.8, "d": 0.7, "c": 0.6}}
    >>> rankscope.evaluate(qrels, run, "ERR")["ERR"]  # 1/2 x 1/4 + 1/4 x 3/4 x (1 - 1/4)
    0.265625
    """
    return make_metric("ERR", k=k, max_grade=max_grade, rank_exponent=rank_exponent)


def rbp(p: float = 0.8, *, gain: str = "binary", rel: float = 1) -> Metric:
    r"""Rank-biased precision with persistence p.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: RBP = (1 - p) \sum_{i \ge 1} r_i \, p^{i-1}

    Over the whole ranking (no cut-off); the residual is not reported.

    References
    ----------
    .. [1] Moffat & Zobel, "Rank-biased precision for measurement of retrieval
       effectiveness", ACM TOIS 27(1) (2008).

    Examples
    --------
    Relevant documents at ranks 2 and 4:

    >>> import rankscope
    >>> qrels = {"q": {"a": 1, "b": 0, "c": 2, "e": 1}}
    >>> run = {"q": {"b": 0.9, "a": 0.8, "d": 0.7, "c": 0.6}}
    >>> round(rankscope.evaluate(qrels, run, "RBP")["RBP"], 4)  # 0.2 x (0.8 + 0.8^3)
    0.2624
    """
    return make_metric("RBP", p=p, gain=gain, rel=rel)


def best(k: int) -> Metric:
    r"""Best@k: 1 if a highest-graded judged document is in the first k.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: Best@k = [\exists i \le k : g_i = \max_d g(d)]

    The maximum is over the query's judged documents; when several share the
    top grade any of them counts. 0 when the query has no document with a
    positive grade.

    References
    ----------
    .. [1] Releval's metric reference, "Best@k".

    Examples
    --------
    The top grade (2) is held by ``c``, at rank 4:

    >>> import rankscope
    >>> qrels = {"q": {"a": 1, "b": 0, "c": 2, "e": 1}}
    >>> run = {"q": {"b": 0.9, "a": 0.8, "d": 0.7, "c": 0.6}}
    >>> result = rankscope.evaluate(qrels, run, ["Best@2", "Best@4"])
    >>> result["Best@2"], result["Best@4"]
    (0.0, 1.0)
    """
    return make_metric("Best", k=k)


def _fam(
    name: str,
    factory: object,
    kernel: str,
    cutoff: str,
    params: tuple[Param, ...],
    aliases: tuple[str, ...],
    agrees: tuple[str, ...],
    cutoff_doc: str = "",
) -> None:
    register(
        Family(
            name=name,
            params=params,
            cutoff=cutoff,  # type: ignore[arg-type]
            aggregate="mean",
            empty_value=0.0,
            graded=True,
            aliases=aliases,
            agrees_with=agrees,
            factory=factory,  # type: ignore[arg-type]
            kernel=kernel,
            group="graded",
            cutoff_doc=cutoff_doc,
        )
    )


_fam("CG", cumulative_gain, "rankscope.engine.kernels_graded:cumulative_gain",
     "optional", (GAIN, GAINS, REL_G), ("CG@k",), ())
_fam("DCG", dcg, "rankscope.engine.kernels_graded:dcg",
     "optional", (GAIN, GAINS, REL_G, GAIN_TABLE),
     ("dcg@k", "dcg_burges@k", "DCG@k"),
     claims(ranx="dcg@k, dcg_burges@k"))
_fam("nDCG", ndcg, "rankscope.engine.kernels_graded:ndcg",
     "optional", (GAIN, GAINS, REL_G, IDEAL, MAX_GRADE, GAIN_TABLE, JUDGED_ONLY),
     ("ndcg@k", "ndcg_burges@k", "ndcg_cut_k", "ndcg", "nDCG@k"),
     claims(trec_eval="ndcg, ndcg_cut_k", pytrec_eval="ndcg, ndcg_cut_k",
            ranx="ndcg@k, ndcg, ndcg_burges@k, ndcg@k-lN",
            ir_measures="nDCG@k, nDCG, nDCG(dcg='exp-log2')@k"),
     cutoff_doc="Cut-off (trec_eval's ndcg_cut_k; its ndcg without one).")
_fam("ERR", err, "rankscope.engine.kernels_graded:err",
     "optional", (MAX_GRADE, RANK_EXPONENT), ("ERR@k", "err@k"),
     claims(ir_measures="ERR@k"))
_fam("RBP", rbp, "rankscope.engine.kernels_graded:rbp",
     "none", (P_RBP, RBP_GAIN, REL), ("rbp.95", "RBP(p=0.8)"),
     claims(ranx="rbp.P", ir_measures="RBP(rel=r), RBP(p=P,rel=r)"))
_fam("Best", best, "rankscope.engine.kernels_graded:best",
     "required", (), ("Best@k",), ())
