r"""Intent-aware (diversity) measures over subtopic qrels, as TREC's ndeval computes them.

A query has subtopics (intents); a document is relevant to subtopic t when its
grade for t is at least ``rel``. Only the query's *actual* subtopics count: those
with at least one relevant document (S of them). The novelty gain of the
document at rank i is

.. math:: g_i = \sum_{t : d_i \text{ relevant to } t} (1 - \alpha)^{c_{i,t}}

with :math:`c_{i,t}` the documents relevant to t ranked above i: a subtopic
already seen is worth less. Collection-independent measures divide by an "ideal
ideal" ranking in which every document covers every subtopic; collection-dependent
ones (``n`` prefix) by a greedy ideal ranking of the judged documents (at each
rank the document with the highest gain, ties to the greatest document id, as
ndeval builds it). A query with no actual subtopic scores 0.

Compute them with :func:`rankscope.evaluate` given subtopic qrels
(:class:`rankscope.SubtopicQrels`, or the path of a file in ndeval's format
``topic subtopic document grade``); other measures asked for in the same call
read the subtopic qrels collapsed to each document's best grade.
"""

from __future__ import annotations

from typing import Any

from rankscope.metrics.base import (
    DEFAULT_CONVENTIONS,
    Family,
    Metric,
    Param,
    claims,
    make_metric,
    register,
)
from rankscope.metrics.parser import register_name

__all__ = ["INTENT_FAMILIES", "alpha_dcg", "alpha_ndcg", "ap_ia", "err_ia", "nerr_ia", "nnrbp",
           "nrbp", "p_ia", "st_recall"]

INTENT_FAMILIES = ("ERR_IA", "nERR_IA", "alpha_DCG", "alpha_nDCG", "NRBP", "nNRBP", "P_IA",
                   "StRecall", "AP_IA")

_REL = Param("rel", 1, "float", "minimum grade for a subtopic counted as relevant")
_ALPHA = Param("alpha", 0.5, "float", "redundancy intolerance: each repeat of a subtopic is "
               "worth (1 - alpha) of the previous", low=0.0, high=1.0)
_BETA = Param("beta", 0.5, "float", "patience: the weight of rank i is beta^(i-1)", low=0.0,
              high=1.0, open_low=True, open_high=True)
_NDEVAL = f"{DEFAULT_CONVENTIONS}; its pyndeval provider, TREC's ndeval 4.5"
_CLARKE08 = ("Clarke, Kolla, Cormack, Vechtomova, Ashkan, Büttcher & MacKinnon, \"Novelty "
             "and diversity in information retrieval evaluation\", SIGIR (2008).")

_EXAMPLE = '''
    >>> import rankscope
    >>> qrels = rankscope.SubtopicQrels.from_dict(
    ...     {{"q": {{"1": {{"a": 1, "b": 1}}, "2": {{"c": 1}}}}}})
    >>> run = {{"q": {{"a": 3.0, "b": 2.0, "c": 1.0}}}}
    >>> round(rankscope.evaluate(qrels, run, "{name}")["{name}"], 4)
    {value}'''


def err_ia(k: int | None = None, *, rel: float = 1) -> Metric:
    r"""Intent-aware expected reciprocal rank, with collection-independent normalization.

    Returns
    -------
    Metric

    Notes
    -----
    Binary relevance makes ERR's stopping chance 1/2 per relevant document,
    so :math:`\alpha = 1/2`:

    .. math::

        ERR\text{-}IA@k = \frac{\sum_{i=1}^{k} g_i / i}{S \sum_{i=1}^{k} (1 - \alpha)^{i-1} / i}

    ndeval leaves depth 1 unnormalized (its ERR-IA@1 is :math:`g_1`); here every
    depth is normalized.

    References
    ----------
    .. [1] Chapelle, Ji, Liao, Velipasaoglu, Lai & Wu, "Intent-based diversification
       of web search results: metrics and algorithms", Inf. Retr. 14(6) (2011).
    .. [2] Chapelle, Metzler, Zhang & Grinspan, "Expected reciprocal rank for graded
       relevance", CIKM (2009).
    .. [3] TREC's ndeval (Web track), via pyndeval.

    Examples
    --------
    a covers subtopic 1, b repeats it, c covers 2: gains 1, 1/2, 1.
    {example}
    """
    return make_metric("ERR_IA", k=k, rel=rel)


def nerr_ia(k: int | None = None, *, rel: float = 1) -> Metric:
    r"""Intent-aware ERR divided by the greedy ideal ranking's (collection-dependent).

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: nERR\text{-}IA@k = \frac{\sum_{i=1}^{k} g_i / i}{\sum_{i=1}^{k} g^*_i / i}

    with :math:`g^*` the gains of the greedy ideal ranking (:math:`\alpha = 1/2`).

    References
    ----------
    .. [1] Chapelle et al., Inf. Retr. 14(6) (2011); TREC's ndeval.

    Examples
    --------
    The ideal ranking is a, c, b (gains 1, 1, 1/2).
    {example}
    """
    return make_metric("nERR_IA", k=k, rel=rel)


def alpha_dcg(k: int | None = None, *, rel: float = 1, alpha: float = 0.5) -> Metric:
    r"""alpha-DCG with collection-independent ("ideal ideal") normalization.

    Returns
    -------
    Metric

    Notes
    -----
    .. math::

        \alpha\text{-}DCG@k = \frac{\sum_{i=1}^{k} g_i / \log_2(i + 1)}
                                   {S \sum_{i=1}^{k} (1 - \alpha)^{i-1} / \log_2(i + 1)}

    (ndeval's alpha-DCG, normalized as it does; depth 1 normalized here too).

    References
    ----------
    .. [1] {clarke}

    Examples
    --------
    {example}
    """
    return make_metric("alpha_DCG", k=k, rel=rel, alpha=alpha)


def alpha_ndcg(k: int | None = None, *, rel: float = 1, alpha: float = 0.5) -> Metric:
    r"""alpha-nDCG: alpha-DCG divided by the greedy ideal ranking's.

    Returns
    -------
    Metric

    Notes
    -----
    .. math::

        \alpha\text{-}nDCG@k = \frac{\sum_{i=1}^{k} g_i / \log_2(i + 1)}
                                    {\sum_{i=1}^{k} g^*_i / \log_2(i + 1)}

    References
    ----------
    .. [1] {clarke}

    Examples
    --------
    {example}
    """
    return make_metric("alpha_nDCG", k=k, rel=rel, alpha=alpha)


def nrbp(*, rel: float = 1, alpha: float = 0.5, beta: float = 0.5) -> Metric:
    r"""Novelty- and rank-biased precision (collection-independent normalization).

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: NRBP = \frac{1 - (1 - \alpha)\beta}{S} \sum_{i \ge 1} g_i \, \beta^{i-1}

    over the whole ranking.

    References
    ----------
    .. [1] Clarke, Kolla & Vechtomova, "An effectiveness measure for ambiguous and
       underspecified queries", ICTIR (2009).

    Examples
    --------
    {example}
    """
    return make_metric("NRBP", rel=rel, alpha=alpha, beta=beta)


def nnrbp(*, rel: float = 1, alpha: float = 0.5, beta: float = 0.5) -> Metric:
    r"""NRBP divided by the greedy ideal ranking's (collection-dependent).

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: nNRBP = \frac{\sum_i g_i \beta^{i-1}}{\sum_i g^*_i \beta^{i-1}}

    0 for a query without subtopics at level ``rel`` (ndeval divides 0 by 0 there).

    References
    ----------
    .. [1] Clarke, Kolla & Vechtomova, ICTIR (2009).

    Examples
    --------
    {example}
    """
    return make_metric("nNRBP", rel=rel, alpha=alpha, beta=beta)


def p_ia(k: int | None = None, *, rel: float = 1) -> Metric:
    r"""Intent-aware precision: precision at k averaged over the actual subtopics.

    Returns
    -------
    Metric

    Notes
    -----
    .. math::

        P\text{-}IA@k = \frac{1}{S} \sum_t
                        \frac{|\{i \le k : d_i \text{ relevant to } t\}|}{k}

    References
    ----------
    .. [1] Agrawal, Gollapudi, Halverson & Ieong, "Diversifying search results",
       WSDM (2009).

    Examples
    --------
    {example}
    """
    return make_metric("P_IA", k=k, rel=rel)


def st_recall(k: int | None = None, *, rel: float = 1) -> Metric:
    r"""Subtopic recall: the share of the actual subtopics covered by the first k.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: S\text{-}recall@k = \frac{|\{t : \exists i \le k,\ d_i \text{ relevant to } t\}|}{S}

    References
    ----------
    .. [1] Zhai, Cohen & Lafferty, "Beyond independent relevance: methods and
       evaluation metrics for subtopic retrieval", SIGIR (2003).

    Examples
    --------
    {example}
    """
    return make_metric("StRecall", k=k, rel=rel)


def ap_ia(*, rel: float = 1) -> Metric:
    r"""Intent-aware average precision: AP per subtopic, averaged over the actual subtopics.

    Returns
    -------
    Metric

    Notes
    -----
    .. math::

        AP\text{-}IA = \frac{1}{S} \sum_t \frac{1}{R_t}
                       \sum_{i : d_i \text{ relevant to } t} \frac{|\{j \le i : d_j
                       \text{ relevant to } t\}|}{i}

    with :math:`R_t` the documents relevant to t in the qrels.

    References
    ----------
    .. [1] Agrawal et al., WSDM (2009); TREC's ndeval (MAP-IA).

    Examples
    --------
    {example}
    """
    return make_metric("AP_IA", rel=rel)


def _doc(factory: Any, name: str, value: str) -> None:
    factory.__doc__ = (factory.__doc__ or "").replace("{example}", _EXAMPLE.format(
        name=name, value=value).strip("\n")).replace("{clarke}", _CLARKE08)


for _factory, _name, _value in (
    (err_ia, "ERR_IA@3", "0.5938"), (nerr_ia, "nERR_IA@3", "0.95"),
    (alpha_dcg, "alpha_DCG@3", "0.6302"), (alpha_ndcg, "alpha_nDCG@3", "0.9652"),
    (nrbp, "NRBP", "0.5625"), (nnrbp, "nNRBP", "0.9231"), (p_ia, "P_IA@3", "0.5"),
    (st_recall, "StRecall@1", "0.5"), (ap_ia, "AP_IA", "0.6667"),
):
    _doc(_factory, _name, _value)


def _builder(family: str) -> Any:
    def build(params: dict[str, Any], k: int | None) -> Metric:
        params = dict(params)
        if params.pop("judged_only", False):
            from rankscope.errors import MetricParameterError, setting

            raise MetricParameterError(
                f"{family}: judged_only is an evaluation option here: "
                f"{setting('unjudged', 'condensed')}")
        return make_metric(family, k=k, **params)

    return build


def _install() -> None:
    # family, factory, its kernel (in rankscope.engine.intents), cut-off, params, aliases
    rows: tuple[tuple[str, Any, str, str, tuple[Param, ...], tuple[str, ...]], ...] = (
        ("ERR_IA", err_ia, "err_ia", "optional", (_REL,), ("ERR-IA@k",)),
        ("nERR_IA", nerr_ia, "n_err_ia", "optional", (_REL,), ("nERR-IA@k",)),
        ("alpha_DCG", alpha_dcg, "alpha_dcg", "optional", (_REL, _ALPHA),
         ("alpha-DCG@k", "α_DCG@k")),
        ("alpha_nDCG", alpha_ndcg, "alpha_ndcg", "optional", (_REL, _ALPHA),
         ("alpha-nDCG@k", "α_nDCG@k")),
        ("NRBP", nrbp, "nrbp", "none", (_REL, _ALPHA, _BETA), ()),
        ("nNRBP", nnrbp, "n_nrbp", "none", (_REL, _ALPHA, _BETA), ()),
        ("P_IA", p_ia, "p_ia", "optional", (_REL,), ("P-IA@k",)),
        ("StRecall", st_recall, "st_recall", "optional", (_REL,), ("strec@k",)),
        ("AP_IA", ap_ia, "ap_ia", "none", (_REL,), ("MAP_IA", "MAP-IA")),
    )
    for name, factory, kernel, cutoff, params, aliases in rows:
        register(Family(
            name=name, params=params, cutoff=cutoff,  # type: ignore[arg-type]
            aggregate="mean", empty_value=0.0, graded=False, aliases=aliases,
            agrees_with=claims(ir_measures=name, under=_NDEVAL), factory=factory,
            kernel=f"rankscope.engine.intents:{kernel}", group="intent_aware",
            reads_run=True,  # each ranked document's id, joined to its subtopics
        ))
        register_name(name, _builder(name), case_sensitive=False)
    for spelling, family in (("MAP_IA", "AP_IA"), ("strec", "StRecall"),
                             ("α_DCG", "alpha_DCG"), ("α_nDCG", "alpha_nDCG")):
        register_name(spelling, _builder(family), case_sensitive=False)


_install()
