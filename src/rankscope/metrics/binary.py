r"""Binary-relevance metrics: a document is relevant when its grade >= ``rel``.

Unless a metric says otherwise: ``k`` cuts the ranking to its first k
documents; an unjudged document is not relevant; ``R`` is the number of
relevant documents in the qrels for the query; a query with an empty ranking
scores 0 (it is still in the mean, as with trec_eval ``-c``).
"""

from __future__ import annotations

from rankscope.metrics.base import Family, Metric, Param, claims, make_metric, register

__all__ = [
    "average_precision",
    "bpref",
    "f_measure",
    "hits",
    "precision",
    "r_precision",
    "recall",
    "recall_capped",
    "reciprocal_rank",
    "success",
]

REL = Param("rel", 1, "float", "minimum grade counted as relevant (trec_eval -l, ranx -lN)")
JUDGED_ONLY = Param("judged_only", False, "bool",
                    "drop unjudged documents before ranks are counted, for this metric alone "
                    "(trec_eval -J, ir_measures' judged_only=True)")

_TREC = "Buckley & Voorhees, trec_eval (NIST), https://github.com/usnistgov/trec_eval"


def precision(k: int | None = None, *, rel: float = 1, judged_only: bool = False) -> Metric:
    r"""Precision: the share of the first k documents that are relevant.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: P@k = \frac{|\{i \le k : g_i \ge rel\}|}{k}

    The denominator is k even when fewer than k documents were retrieved
    (trec_eval, ranx and ir_measures agree). Ties in score are broken by
    document id descending, so a tie straddling rank k is decided by id.

    References
    ----------
    .. [1] Manning, Raghavan & Schütze, *Introduction to Information
       Retrieval*, ch. 8 (2008).
    .. [2] trec_eval's ``P`` and ``set_P``.

    Examples
    --------
    >>> from rankscope.metrics import precision
    >>> precision(5)
    Metric('P@5')
    """
    return make_metric("P", k=k, rel=rel, judged_only=judged_only)


def recall(k: int | None = None, *, rel: float = 1, judged_only: bool = False) -> Metric:
    r"""Recall: the share of all relevant documents found in the first k.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: R@k = \frac{|\{i \le k : g_i \ge rel\}|}{R}

    A query with R = 0 scores 0 (trec_eval's convention).

    References
    ----------
    .. [1] Manning, Raghavan & Schütze, *Introduction to Information
       Retrieval*, ch. 8 (2008).

    Examples
    --------
    Three relevant documents (``a``, ``c``, ``e``); the run finds ``a`` at rank
    2 and ``c`` at rank 4:

    >>> import rankscope
    >>> qrels = {"q": {"a": 1, "b": 0, "c": 2, "e": 1}}
    >>> run = {"q": {"b": 0.9, "a": 0.8, "d": 0.7, "c": 0.6}}
    >>> result = rankscope.evaluate(qrels, run, ["R@2", "R"])
    >>> round(result["R@2"], 4), round(result["R"], 4)  # 1/3, 2/3
    (0.3333, 0.6667)
    """
    return make_metric("R", k=k, rel=rel, judged_only=judged_only)


def recall_capped(k: int, *, rel: float = 1) -> Metric:
    r"""Capped recall: recall whose denominator is at most k (BEIR's ``R_cap@k``).

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: R\_cap@k = \frac{|\{i \le k : g_i \ge rel\}|}{\min(k, R)}

    A query with R = 0 scores 0. With 7 relevant documents of which 3 are in
    the top 5, Recall@5 = 3/7 and R_cap@5 = 3/5.

    References
    ----------
    .. [1] Thakur et al., "BEIR: A Heterogeneous Benchmark for Zero-shot
       Evaluation of Information Retrieval Models", NeurIPS Datasets (2021).

    Examples
    --------
    >>> import rankscope
    >>> qrels = {"q": {"a": 1, "b": 0, "c": 2, "e": 1}}
    >>> run = {"q": {"b": 0.9, "a": 0.8, "d": 0.7, "c": 0.6}}
    >>> rankscope.evaluate(qrels, run, "R_cap@2")["R_cap@2"]  # 1 / min(2, 3)
    0.5
    """
    return make_metric("R_cap", k=k, rel=rel)


def f_measure(
    k: int | None = None, *, beta: float = 1.0, rel: float = 1, beta2: float | None = None,
    judged_only: bool = False,
) -> Metric:
    r"""F-beta: the weighted harmonic mean of precision and recall at k.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: F_\beta = (1 + \beta^2) \frac{P \cdot R}{\beta^2 P + R}

    with P = P@k and R = R@k; 0 when P + R = 0.

    References
    ----------
    .. [1] van Rijsbergen, *Information Retrieval*, 2nd ed., ch. 7 (1979).

    Examples
    --------
    Without a cut-off: P = 2/4 of the retrieved, R = 2/3 of the relevant.

    >>> import rankscope
    >>> qrels = {"q": {"a": 1, "b": 0, "c": 2, "e": 1}}
    >>> run = {"q": {"b": 0.9, "a": 0.8, "d": 0.7, "c": 0.6}}
    >>> round(rankscope.evaluate(qrels, run, "set_F")["set_F"], 4)  # 2PR / (P + R) = 4/7
    0.5714
    """
    return make_metric("F", k=k, beta=beta, rel=rel, beta2=beta2, judged_only=judged_only)


def hits(k: int | None = None, *, rel: float = 1) -> Metric:
    r"""Hits: the number of relevant documents in the first k (ranx ``hits``).

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: Hits@k = |\{i \le k : g_i \ge rel\}|

    Averaged over queries (ranx's convention); trec_eval's ``num_rel_ret`` is
    the sum (see :func:`num_rel_ret`).

    References
    ----------
    .. [1] Bassani, "ranx: A Blazing-Fast Python Library for Ranking
       Evaluation and Comparison", ECIR (2022).

    Examples
    --------
    >>> import rankscope
    >>> qrels = {"q1": {"a": 1, "c": 1}, "q2": {"x": 1}}
    >>> run = {"q1": {"a": 0.9, "b": 0.8, "c": 0.7}, "q2": {"y": 0.5}}
    >>> rankscope.evaluate(qrels, run, "Hits@3")["Hits@3"]  # (2 + 0) / 2 queries
    1.0
    """
    return make_metric("Hits", k=k, rel=rel)


def success(k: int | None = None, *, rel: float = 1, judged_only: bool = False) -> Metric:
    r"""Success (hit rate): 1 if a relevant document is in the first k, else 0.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: Success@k = [\exists i \le k : g_i \ge rel]

    References
    ----------
    .. [1] trec_eval's ``success``; ranx's ``hit_rate``.

    Examples
    --------
    >>> import rankscope
    >>> qrels = {"q": {"a": 1, "b": 0, "c": 2, "e": 1}}
    >>> run = {"q": {"b": 0.9, "a": 0.8, "d": 0.7, "c": 0.6}}
    >>> result = rankscope.evaluate(qrels, run, ["Success@1", "Success@2"])
    >>> result["Success@1"], result["Success@2"]
    (0.0, 1.0)
    """
    return make_metric("Success", k=k, rel=rel, judged_only=judged_only)


def r_precision(*, rel: float = 1, judged_only: bool = False) -> Metric:
    r"""R-precision: precision at rank R, R the number of relevant documents.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: RPrec = \frac{|\{i \le R : g_i \ge rel\}|}{R}

    0 when R = 0.

    References
    ----------
    .. [1] Buckley & Voorhees, "Evaluating evaluation measure stability",
       SIGIR (2000).

    Examples
    --------
    R = 3; of the first three documents (``b``, ``a``, ``d``) only ``a`` is relevant:

    >>> import rankscope
    >>> qrels = {"q": {"a": 1, "b": 0, "c": 2, "e": 1}}
    >>> run = {"q": {"b": 0.9, "a": 0.8, "d": 0.7, "c": 0.6}}
    >>> round(rankscope.evaluate(qrels, run, "Rprec")["Rprec"], 4)  # 1/3
    0.3333
    """
    return make_metric("RPrec", rel=rel, judged_only=judged_only)


def average_precision(k: int | None = None, *, rel: float = 1, judged_only: bool = False) -> Metric:
    r"""Average precision (MAP when averaged), optionally cut at k.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: AP@k = \frac{1}{R} \sum_{i \le k} P@i \cdot [g_i \ge rel]

    The denominator is R, all relevant documents of the query, also with a
    cut-off (trec_eval, ranx and ir_measures agree); 0 when R = 0. The
    judging platform's AP@k (R = relevant in the top k) is the
    ``unjudged="null"`` evaluation mode.

    References
    ----------
    .. [1] Buckley & Voorhees, "Retrieval evaluation with incomplete
       information" / trec_eval's ``map``; Manning et al. (2008), ch. 8.

    Examples
    --------
    Relevant documents at ranks 2 and 4, one of the three never retrieved:

    >>> import rankscope
    >>> qrels = {"q": {"a": 1, "b": 0, "c": 2, "e": 1}}
    >>> run = {"q": {"b": 0.9, "a": 0.8, "d": 0.7, "c": 0.6}}
    >>> result = rankscope.evaluate(qrels, run, ["AP", "AP@2"])
    >>> round(result["AP"], 4), round(result["AP@2"], 4)  # (1/2 + 2/4) / 3, (1/2) / 3
    (0.3333, 0.1667)
    """
    return make_metric("AP", k=k, rel=rel, judged_only=judged_only)


def reciprocal_rank(k: int | None = None, *, rel: float = 1, judged_only: bool = False) -> Metric:
    r"""Reciprocal rank of the first relevant document (MRR when averaged).

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: RR@k = \frac{1}{\min\{i \le k : g_i \ge rel\}}

    0 when no relevant document is in the first k.

    References
    ----------
    .. [1] Voorhees, "The TREC-8 Question Answering Track Report", TREC (1999).

    Examples
    --------
    >>> import rankscope
    >>> qrels = {"q": {"a": 1, "b": 0, "c": 2, "e": 1}}
    >>> run = {"q": {"b": 0.9, "a": 0.8, "d": 0.7, "c": 0.6}}
    >>> result = rankscope.evaluate(qrels, run, ["RR", "RR@1"])
    >>> result["RR"], result["RR@1"]  # the first relevant document is at rank 2
    (0.5, 0.0)
    """
    return make_metric("RR", k=k, rel=rel, judged_only=judged_only)


def bpref(*, rel: float = 1) -> Metric:
    r"""Bpref: preference of judged relevant over judged non-relevant documents.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: bpref = \frac{1}{R} \sum_{r} \left(1 - \frac{\min(n_r, R)}{\min(R, N)}\right)

    over retrieved relevant documents r, where n_r is the number of judged
    non-relevant documents ranked above r and N the number of judged
    non-relevant documents; the fraction is 0 when min(R, N) = 0 (trec_eval).
    Unjudged documents are ignored.

    References
    ----------
    .. [1] Buckley & Voorhees, "Retrieval evaluation with incomplete
       information", SIGIR (2004).

    Examples
    --------
    R = 3 and N = 2 (``b``, ``f``); each retrieved relevant document has one
    judged non-relevant document above it (the unjudged ``d`` is ignored):

    >>> import rankscope
    >>> qrels = {"q": {"a": 1, "b": 0, "c": 2, "e": 1, "f": 0}}
    >>> run = {"q": {"b": 0.9, "a": 0.8, "d": 0.7, "c": 0.6}}
    >>> round(rankscope.evaluate(qrels, run, "bpref")["bpref"], 4)  # 2 x (1 - 1/2) / 3
    0.3333
    """
    return make_metric("bpref", rel=rel)


BETA = Param("beta", 1.0, "float",
             "weight of recall against precision (beta > 1 favours recall); must be > 0",
             low=0.0, open_low=True)
BETA2 = Param("beta2", None, "float", "beta squared given directly, as trec_eval's set_F.x "
              "gives it ((x + 1) P R / (x P + R)); overrides beta")

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
            graded=False,
            aliases=aliases,
            agrees_with=agrees,
            factory=factory,  # type: ignore[arg-type]
            kernel=kernel,
            group="binary",
            cutoff_doc=cutoff_doc,
        )
    )


_fam("P", precision, "rankscope.engine.kernels_binary:precision",
     "optional", (REL, JUDGED_ONLY),
     ("precision@k", "P_k", "P@k", "set_P", "SetP", "P(judged_only=True)@k"),
     claims(trec_eval="P_k, set_P", pytrec_eval="P_k, set_P", ranx="precision@k, precision",
            ir_measures="P@k, P(rel=r)@k, SetP"),
     cutoff_doc="Cut-off; without one, the denominator is the number retrieved (trec_eval's "
                "set_P).")
_fam("R", recall, "rankscope.engine.kernels_binary:recall",
     "optional", (REL, JUDGED_ONLY),
     ("recall@k", "recall_k", "R@k", "set_recall", "SetR"),
     claims(trec_eval="recall_k, set_recall", pytrec_eval="recall_k, set_recall",
            ranx="recall@k, recall", ir_measures="R@k, R(rel=r)@k, SetR"))
_fam("R_cap", recall_capped, "rankscope.engine.kernels_binary:recall_capped",
     "required", (REL,), ("R_cap@k",), ())
_fam("F", f_measure, "rankscope.engine.kernels_binary:f_measure",
     "optional", (BETA, REL, BETA2, JUDGED_ONLY), ("f1@k", "F@k", "set_F", "SetF"),
     claims(trec_eval="set_F", pytrec_eval="set_F", ranx="f1@k, f1",
            ir_measures="SetF, SetF(beta=x)"),
     cutoff_doc="Cut-off; without one, precision divides by the number retrieved (trec_eval's "
                "set_F).")
_fam("Hits", hits, "rankscope.engine.kernels_binary:hits",
     "optional", (REL,), ("hits@k",), claims(ranx="hits@k, hits"))
_fam("Success", success, "rankscope.engine.kernels_binary:success",
     "optional", (REL, JUDGED_ONLY),
     ("hit_rate@k", "success_k", "Success@k"),
     claims(trec_eval="success_k", pytrec_eval="success_k", ranx="hit_rate@k",
            ir_measures="Success@k"))
_fam("RPrec", r_precision, "rankscope.engine.kernels_binary:r_precision",
     "none", (REL, JUDGED_ONLY), ("r-precision", "r_precision", "Rprec"),
     claims(trec_eval="Rprec", pytrec_eval="Rprec", ranx="r-precision", ir_measures="Rprec"))
_fam("AP", average_precision, "rankscope.engine.kernels_binary:average_precision",
     "optional", (REL, JUDGED_ONLY),
     ("map@k", "map", "map_cut_k", "AP@k"),
     claims(trec_eval="map, map_cut_k", pytrec_eval="map, map_cut_k",
            ranx="map@k, map, map@k-lN", ir_measures="AP, AP@k, AP(rel=r)"),
     cutoff_doc="Cut-off (trec_eval's map_cut_k); the whole ranking when omitted.")
_fam("RR", reciprocal_rank, "rankscope.engine.kernels_binary:reciprocal_rank",
     "optional", (REL, JUDGED_ONLY), ("mrr@k", "recip_rank", "RR@k"),
     claims(trec_eval="recip_rank", pytrec_eval="recip_rank", ranx="mrr@k, mrr",
            ir_measures="RR, RR@k, RR(rel=r)@k"),
     cutoff_doc="Cut-off: 0 when the first relevant document is below rank k.")
_fam("bpref", bpref, "rankscope.engine.kernels_binary:bpref",
     "none", (REL,), ("bpref", "Bpref"),
     claims(trec_eval="bpref", pytrec_eval="bpref", ir_measures="Bpref"))
