r"""Other tools' variants of standard metrics, as metrics of their own.

A tool sometimes computes a metric its own way: scikit-learn averages the
gains of documents with tied scores and takes the ideal ranking from the
documents it was given; Quepid's ``P@k`` divides by the documents shown and
its ``nDCG@k`` by the DCG of *every* rated document; ranx's ``bpref`` counts a
negative grade as judged non-relevant; trec_eval 9.x (pytrec_eval) turns a
recall point into a number of relevant documents differently from 10.0.
Each such variant is a family here, computed by the one engine (kernels in
:mod:`rankscope.engine.kernels_variants`), so a conventions profile
(:mod:`rankscope.metrics.conventions`) can give that tool's number under that
tool's name. They are also usable by name on their own (``quepid_P@10``).
"""

from __future__ import annotations

from typing import Any

from rankscope.metrics.base import Family, Metric, Param, claims, make_metric, register
from rankscope.metrics.parser import register_name

__all__ = [
    "quepid_ndcg",
    "quepid_precision",
    "ranx_bpref",
    "sklearn_dcg",
    "sklearn_ndcg",
    "trec9_eleven_pt_avg",
    "trec9_iprec_at_recall",
]

IGNORE_TIES = Param("ignore_ties", False, "bool",
                    "false: every document of a group of tied scores gains the group's mean "
                    "grade (all orders of the tie averaged); true: ranks follow the ranking "
                    "as rankscope orders it")
REL = Param("rel", 1, "float", "minimum grade counted as relevant")


def sklearn_dcg(k: int | None = None, *, ignore_ties: bool = False) -> Metric:
    r"""DCG as scikit-learn's ``dcg_score`` computes it: tied scores share their mean gain.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: DCG@k = \sum_{G} \bar g_G \sum_{i \in G, i \le k} \frac{1}{\log_2(i + 1)}

    over the groups G of consecutive tied scores, :math:`\bar g_G` the mean
    grade in G. The gain is the grade itself, negative grades included (as
    ``dcg_score`` takes ``y_true``); an unjudged document gains 0. A tie
    group straddling rank k contributes its mean gain to the ranks inside k.

    References
    ----------
    .. [1] McSherry & Najork, "Computing information retrieval performance
       measures efficiently in the presence of tied scores", ECIR (2008).
    .. [2] scikit-learn, ``sklearn.metrics.dcg_score``.

    Examples
    --------
    >>> import rankscope
    >>> qrels = {"q": {"a": 2, "b": 1}}
    >>> run = {"q": {"a": 1.0, "b": 1.0, "c": 0.5}}
    >>> round(rankscope.evaluate(qrels, run, "sklearn_DCG@1")["sklearn_DCG@1"], 4)
    1.5
    """
    return make_metric("sklearn_DCG", k=k, ignore_ties=ignore_ties)


def sklearn_ndcg(k: int | None = None, *, ignore_ties: bool = False) -> Metric:
    r"""nDCG as scikit-learn's ``ndcg_score`` computes it, per query.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: nDCG@k = \frac{DCG@k}{IDCG@k}

    with DCG@k as in :func:`sklearn_dcg` and IDCG@k the DCG@k of the
    *ranked* documents sorted by grade: scikit-learn sees only the documents
    it is given, so a relevant document the run did not retrieve does not
    raise the ideal (unlike :func:`rankscope.metrics.ndcg`). 0 when IDCG@k is
    0. A negative grade among the ranked documents is an error, as in
    ``ndcg_score``.

    References
    ----------
    .. [1] Järvelin & Kekäläinen, ACM TOIS 20(4) (2002).
    .. [2] McSherry & Najork, ECIR (2008).
    .. [3] scikit-learn, ``sklearn.metrics.ndcg_score``.

    Examples
    --------
    >>> import rankscope
    >>> qrels = {"q": {"a": 2, "b": 1, "z": 3}}
    >>> run = {"q": {"a": 1.0, "b": 1.0, "c": 0.5}}
    >>> round(rankscope.evaluate(qrels, run, "sklearn_nDCG@1")["sklearn_nDCG@1"], 4)
    0.75
    """
    return make_metric("sklearn_nDCG", k=k, ignore_ties=ignore_ties)


def quepid_precision(k: int) -> Metric:
    r"""Precision as Quepid's ``P@k`` scorer computes it: over the documents shown.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: P@k = \frac{|\{i \le k : g_i \ge 1\}|}{\min(k, n)}

    n is the number of documents ranked; 0 when nothing is ranked. An
    unrated document counts as not relevant (Quepid's scorer tests
    ``rating > 0``).

    References
    ----------
    .. [1] Quepid, ``db/scorers/p@10.js`` (o19s/quepid).

    Examples
    --------
    >>> import rankscope
    >>> qrels = {"q": {"a": 1, "b": 0}}
    >>> run = {"q": {"a": 2.0, "b": 1.0}}
    >>> rankscope.evaluate(qrels, run, "quepid_P@10")["quepid_P@10"]
    0.5
    """
    return make_metric("quepid_P", k=k)


def quepid_ndcg(k: int) -> Metric:
    r"""nDCG as Quepid's ``nDCG@k`` scorer computes it: the ideal is not cut at k.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: nDCG@k = \frac{\sum_{i \le k} (2^{g_i} - 1) / \log_2(i + 1)}
              {\sum_{j} (2^{g^*_j} - 1) / \log_2(j + 1)}

    :math:`g^*` are the grades of *every* rated document of the query, best
    first, however many there are (Quepid's scorer since 2025 divides by the
    DCG of all rated documents); so a query with more than k rated relevant
    documents scores below 1 even when ranked perfectly. Unrated documents
    gain 0; 0 when the ideal is 0. Quepid's ``NDCG_CUT@k`` (the ideal cut at
    k) is ``nDCG(gain=exp)@k``.

    References
    ----------
    .. [1] Quepid, ``db/scorers/ndcg@10.js`` (o19s/quepid), "Use *all*
       rated documents for ideal DCG computation" (2025).

    Examples
    --------
    >>> import rankscope
    >>> qrels = {"q": {"a": 1, "b": 1}}
    >>> run = {"q": {"a": 2.0, "b": 1.0}}
    >>> round(rankscope.evaluate(qrels, run, "quepid_nDCG@1")["quepid_nDCG@1"], 4)
    0.6131
    """
    return make_metric("quepid_nDCG", k=k)


def ranx_bpref(*, rel: float = 1) -> Metric:
    r"""Bpref as ranx computes it: every judged grade below ``rel`` is non-relevant.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: bpref = \frac{1}{R} \sum_{r} \left(1 - \frac{\min(n_r, R)}{\min(R, N)}\right)

    as :func:`rankscope.metrics.bpref`, except that a judged document with a
    *negative* grade is judged non-relevant (in N and in :math:`n_r`), where
    trec_eval reads it as "in the pool but unjudged" and skips it. Where
    ranx has no number (min(R, N) = 0: NaN; R = 0: a division by zero),
    trec_eval's guards give one: the fraction is 0, and the value 0 when R = 0.

    References
    ----------
    .. [1] Buckley & Voorhees, "Retrieval evaluation with incomplete
       information", SIGIR (2004).
    .. [2] ranx, ``ranx/metrics/bpref.py`` (AmenRa/ranx).

    Examples
    --------
    >>> import rankscope
    >>> qrels = {"q": {"a": 1, "b": -1, "c": 0}}
    >>> run = {"q": {"b": 3.0, "a": 2.0}}
    >>> rankscope.evaluate(qrels, run, ["bpref", "ranx_bpref"]).means
    {'bpref': 1.0, 'ranx_bpref': 0.0}
    """
    return make_metric("ranx_bpref", rel=rel)


def trec9_iprec_at_recall(p: float, *, rel: float = 1) -> Metric:
    r"""Interpolated precision at recall p as trec_eval 9.x (pytrec_eval) computes it.

    Returns
    -------
    Metric

    Notes
    -----
    The highest precision at or after the rank of the c-th relevant document
    retrieved, with :math:`c = \lfloor pR + 0.9 \rfloor` (trec_eval 10.0 uses
    :math:`c = \mathrm{lround}(pR)`: ``iprec_at_recall``); they differ when the
    fraction of pR is in (0.1, 0.5).

    References
    ----------
    .. [1] trec_eval 9.0 ``m_iprec_at_recall.c``; pytrec_eval (Van Gysel &
       de Rijke, SIGIR 2018), which embeds it.

    Examples
    --------
    >>> import rankscope
    >>> qrels = {"q": {d: 1 for d in "abcdefg"}}
    >>> run = {"q": {"a": 9.0, "x": 8.0, "b": 7.0}}
    >>> r = rankscope.evaluate(qrels, run, ["iprec_at_recall(p=0.2)",
    ...                                     "trec9_iprec_at_recall(p=0.2)"])
    >>> [round(v, 4) for v in r.means.values()]  # 10.0: 1st relevant; 9.x: 2nd
    [1.0, 0.6667]
    """
    return make_metric("trec9_iprec_at_recall", p=p, rel=rel)


def trec9_eleven_pt_avg(
    *, points: str = "0,.1,.2,.3,.4,.5,.6,.7,.8,.9,1", rel: float = 1
) -> Metric:
    r"""11-point interpolated average precision as trec_eval 9.x (pytrec_eval) computes it.

    Returns
    -------
    Metric

    Notes
    -----
    The mean of :func:`trec9_iprec_at_recall` over the points (trec_eval
    10.0's ``11pt_avg`` averages its own ``iprec_at_recall``).

    References
    ----------
    .. [1] trec_eval 9.0 ``m_11pt_avg.c``; pytrec_eval.

    Examples
    --------
    >>> import rankscope
    >>> qrels = {"q": {d: 1 for d in "abcdefg"}}
    >>> run = {"q": {"a": 9.0, "x": 8.0, "b": 7.0}}
    >>> round(rankscope.evaluate(qrels, run, "trec9_11pt_avg").means["trec9_11pt_avg"], 4)
    0.2424
    """
    return make_metric("trec9_11pt_avg", points=points, rel=rel)


def _by_name(family: str) -> Any:
    def build(params: dict[str, Any], k: int | None) -> Metric:
        return make_metric(family, k=k, **params)

    return build


def _fam(name: str, factory: object, kernel: str, cutoff: str, params: tuple[Param, ...],
         graded: bool, agrees: tuple[str, ...], *, reads_run: bool = False) -> None:
    first = "p" if name == "trec9_iprec_at_recall" else None
    register_name(name, _by_name(name), case_sensitive=True, first=first)
    register(Family(
        name=name, params=params, cutoff=cutoff,  # type: ignore[arg-type]
        aggregate="mean", empty_value=0.0, graded=graded, aliases=(), agrees_with=agrees,
        factory=factory,  # type: ignore[arg-type]
        kernel=kernel, group="variants", reads_run=reads_run,
    ))


_fam("sklearn_DCG", sklearn_dcg, "rankscope.engine.kernels_variants:sklearn_dcg",
     "optional", (IGNORE_TIES,), True,
     claims(sklearn="dcg_score, dcg_score@k, DCG@k"), reads_run=True)  # scores: tie groups
_fam("sklearn_nDCG", sklearn_ndcg, "rankscope.engine.kernels_variants:sklearn_ndcg",
     "optional", (IGNORE_TIES,), True,
     claims(sklearn="ndcg_score, ndcg_score@k, nDCG@k, ndcg_score(k=k, ignore_ties=True)"),
     reads_run=True)
_fam("quepid_P", quepid_precision, "rankscope.engine.kernels_variants:quepid_precision",
     "required", (), False, ())
_fam("quepid_nDCG", quepid_ndcg, "rankscope.engine.kernels_variants:quepid_ndcg",
     "required", (), True, ())
_fam("ranx_bpref", ranx_bpref, "rankscope.engine.kernels_variants:ranx_bpref",
     "none", (REL,), False, claims(ranx="bpref, bpref-lN"))
_fam("trec9_iprec_at_recall", trec9_iprec_at_recall,
     "rankscope.engine.kernels_variants:trec9_iprec", "none",
     (Param("p", None, "float", "recall point in [0, 1]", low=0.0, high=1.0), REL), False,
     claims(pytrec_eval="iprec_at_recall_x", ir_measures="IPrec@x"))
_fam("trec9_11pt_avg", trec9_eleven_pt_avg, "rankscope.engine.kernels_variants:trec9_eleven_pt",
     "none",
     (Param("points", "0,.1,.2,.3,.4,.5,.6,.7,.8,.9,1", "str", "the recall points, comma "
             "separated"), REL), False,
     claims(pytrec_eval="11pt_avg"))
