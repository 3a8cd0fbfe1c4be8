r"""trec_eval 10.0 measures as metric definitions (data; computed by the trec_eval kernels).

Conventions of every measure here (trec_eval's): a grade is truncated to an
integer level; a negative grade means "in the pool but unjudged"; a document
is relevant when its level is >= ``rel`` (trec_eval's ``-l``); R is the number
of relevant judgments of the query; ranks are 1-based and P(k) is the share of
relevant documents in the first k. A query the run lacks is scored as
trec_eval ``-c`` scores it (one unjudged stand-in document).

References for all: C. Buckley and E. Voorhees, "Retrieval System
Evaluation", in *TREC: Experiment and Evaluation in Information Retrieval*,
MIT Press (2005); trec_eval, https://github.com/usnistgov/trec_eval (v10.0).
"""

from __future__ import annotations

from rankscope.metrics.base import Metric, make_metric

__all__ = [
    "bin_g", "eleven_pt_avg", "g_measure", "gm_bpref", "gm_map", "ideal_dcg", "infap",
    "iprec_at_recall", "ndcg_rel", "num_nonrel_judged_ret", "rbp_resid", "relative_p",
    "rndcg", "rprec_mult", "set_map", "set_relative_p", "trec_rbp", "unj", "utility", "yaap",
]

def gm_map(*, rel: float = 1) -> Metric:
    r"""Geometric mean average precision (trec_eval ``gm_map``).

    Notes
    -----
    Per query the value is AP; over queries the mean is geometric, with each
    AP floored at :math:`10^{-5}`:
    :math:`\exp(\frac{1}{|Q|}\sum_q \ln \max(AP_q, 10^{-5}))`.

    References
    ----------
    .. [1] Robertson, "On GMAP", CIKM 2006. trec_eval ``gm_map``.
    """
    return make_metric("gm_map", rel=rel)


def gm_bpref(*, rel: float = 1) -> Metric:
    r"""Geometric mean of bpref (trec_eval ``gm_bpref``).

    Notes
    -----
    :math:`\exp(\frac{1}{|Q|}\sum_q \ln \max(bpref_q, 10^{-5}))`, bpref as trec_eval
    computes it (judged non-relevant documents are those with 0 <= level < rel).

    References
    ----------
    .. [1] Buckley & Voorhees, "Retrieval Evaluation with Incomplete Information",
       SIGIR 2004. trec_eval ``gm_bpref``.
    """
    return make_metric("gm_bpref", rel=rel)


def infap(*, rel: float = 1) -> Metric:
    r"""Inferred average precision (trec_eval ``infAP``).

    Notes
    -----
    Walking the ranking (0-based index j), documents not in the qrels are
    skipped, u counts pooled-but-unjudged (negative) ones, n judged
    non-relevant ones, r relevant ones; each relevant document adds 1 at
    j = 0, else :math:`\frac{1}{j+1} + \frac{j}{j+1}\cdot\frac{r-1+n+u}{j}\cdot
    \frac{r-1+\epsilon}{r-1+n+2\epsilon}` (:math:`\epsilon = 10^{-5}`); the sum is
    divided by R.

    References
    ----------
    .. [1] Yilmaz & Aslam, "Estimating Average Precision with Incomplete and
       Imperfect Judgments", CIKM 2006. trec_eval ``infAP``.
    """
    return make_metric("infAP", rel=rel)


def bin_g(*, rel: float = 1) -> Metric:
    r"""Binary G (trec_eval ``binG``).

    Notes
    -----
    :math:`\frac{1}{R}\sum_{d\ relevant} 1/\log_2(2 + \text{non-relevant ranked above } d)`.

    References
    ----------
    .. [1] trec_eval ``binG`` (Buckley, 2008).
    """
    return make_metric("binG", rel=rel)


def yaap(*, rel: float = 1) -> Metric:
    r"""Yet another AP (trec_eval ``yaap``, not in ``all_trec``).

    Notes
    -----
    With :math:`S = \sum_{d\ relevant\ retrieved} P(rank(d))` (= AP * R):
    :math:`\ln\frac{1+S}{1+R-S}`.

    References
    ----------
    .. [1] trec_eval ``yaap``.
    """
    return make_metric("yaap", rel=rel)


def iprec_at_recall(p: float, *, rel: float = 1) -> Metric:
    r"""Interpolated precision at recall p (trec_eval ``iprec_at_recall_p``).

    Notes
    -----
    With c = lround(p * R) (trec_eval 10.0; 9.x used trunc(p * R + 0.9)): the
    highest P(k) over k at or after the rank of the c-th relevant document;
    0 when fewer than c relevant documents were retrieved; when c = 0 the
    highest P(k) of the ranking (NaN when nothing is ranked).

    References
    ----------
    .. [1] Manning, Raghavan & Schütze, *Introduction to Information Retrieval*,
       §8.4 (2008). trec_eval ``iprec_at_recall``.
    """
    return make_metric("iprec_at_recall", p=p, rel=rel)


def eleven_pt_avg(*, points: str = "0,.1,.2,.3,.4,.5,.6,.7,.8,.9,1", rel: float = 1) -> Metric:
    r"""Interpolated precision averaged over recall points (trec_eval ``11pt_avg``).

    Notes
    -----
    The mean of ``iprec_at_recall`` over the points (default 0, 0.1, ... 1),
    with trec_eval 10.0's lround rule.

    References
    ----------
    .. [1] Salton & McGill, *Introduction to Modern Information Retrieval* (1983).
       trec_eval ``11pt_avg``.
    """
    return make_metric("11pt_avg", points=points, rel=rel)


def rprec_mult(x: float, *, rel: float = 1) -> Metric:
    r"""Precision at x times R (trec_eval ``Rprec_mult_x``).

    Notes
    -----
    With c = trunc(x * R + 0.9): P(c) if 1 <= c <= N; RR / c if c > N; else 0.

    References
    ----------
    .. [1] trec_eval ``Rprec_mult``.
    """
    return make_metric("Rprec_mult", x=x, rel=rel)


def utility(*, coefficients: str = "1,-1,0,0", n_docs: int = 0, rel: float = 1) -> Metric:
    r"""Linear utility (trec_eval ``utility``).

    Notes
    -----
    With coefficients a, b, c, d and collection size C (trec_eval ``-N``):
    :math:`a\,RR + b\,(N-RR) + c\,(R-RR) + d\,(C + RR - N - R)`.

    References
    ----------
    .. [1] Lewis, "The TREC-4 Filtering Track", TREC-4 (1995). trec_eval ``utility``.
    """
    return make_metric("utility", coefficients=coefficients, n_docs=n_docs, rel=rel)


def relative_p(k: int, *, rel: float = 1) -> Metric:
    r"""Relative precision at k (trec_eval ``relative_P_k``).

    Notes
    -----
    :math:`\frac{|\{i \le k: relevant\}|}{\min(k, R)}`; 0 when R = 0.

    References
    ----------
    .. [1] trec_eval ``relative_P``.
    """
    return make_metric("relative_P", k=k, rel=rel)


def unj(k: int) -> Metric:
    r"""Share of unjudged documents in the first k (trec_eval ``unj_k``).

    Notes
    -----
    Documents not in the qrels, or with a negative grade, among the first k,
    divided by k (missing ranks count as judged).

    References
    ----------
    .. [1] trec_eval ``unj``.
    """
    return make_metric("unj", k=k)


def set_relative_p(*, rel: float = 1) -> Metric:
    r"""Relative precision of the whole retrieved set (trec_eval ``set_relative_P``).

    Notes
    -----
    :math:`RR / \min(N, R)`; 0 when N or R is 0.

    References
    ----------
    .. [1] trec_eval ``set_relative_P``.
    """
    return make_metric("set_relative_P", rel=rel)


def set_map(*, rel: float = 1) -> Metric:
    r"""Set-based average precision (trec_eval ``set_map``).

    Notes
    -----
    :math:`\frac{RR}{N} \cdot \frac{RR}{R}`; 0 when N or R is 0.

    References
    ----------
    .. [1] trec_eval ``set_map``.
    """
    return make_metric("set_map", rel=rel)


def num_nonrel_judged_ret(*, rel: float = 1) -> Metric:
    r"""Judged non-relevant documents retrieved (trec_eval ``num_nonrel_judged_ret``).

    Notes
    -----
    N minus the documents not in the qrels, minus those with a negative grade,
    minus RR. Summed over queries.

    References
    ----------
    .. [1] trec_eval ``num_nonrel_judged_ret``.
    """
    return make_metric("num_nonrel_judged_ret", rel=rel)


def g_measure(*, gains: str = "") -> Metric:
    r"""Normalized gain G (trec_eval ``G``).

    Notes
    -----
    Walking the ranking beside the ideal one, each document adds
    :math:`g / \log_2(2 + cost - gained)`, where gained is the gain so far and
    cost the ideal gain so far (each ideal step counting at least 1); the sum
    is divided by the total ideal gain. ``gains`` uses trec_eval's
    ``level=gain`` syntax.

    References
    ----------
    .. [1] trec_eval ``G`` (Buckley, 2008).
    """
    return make_metric("G", gains=gains)


def ideal_dcg(*, gains: str = "") -> Metric:
    r"""DCG of the ideal ranking (trec_eval ``ideal_dcg``).

    Notes
    -----
    :math:`\sum_i g^*_i / \log_2(i+1)` over the ideal ranking of all judged
    documents with positive gain (gains as in trec_eval's ``ndcg``).

    References
    ----------
    .. [1] Järvelin & Kekäläinen, "Cumulated gain-based evaluation of IR
       techniques", ACM TOIS 20(4) (2002). trec_eval ``ideal_dcg``.
    """
    return make_metric("ideal_dcg", gains=gains)


def ndcg_rel(*, gains: str = "") -> Metric:
    r"""nDCG averaged over the relevant documents (trec_eval ``ndcg_rel``).

    Notes
    -----
    The mean, over the ideal ranking's M positive positions, of nDCG taken at
    the rank of each retrieved relevant document (unretrieved ones count the
    final nDCG); 0 when the sum is not positive.

    References
    ----------
    .. [1] trec_eval ``ndcg_rel``.
    """
    return make_metric("ndcg_rel", gains=gains)


def rndcg(*, gains: str = "", rel: float = 1) -> Metric:
    r"""nDCG averaged at the ideal ranking's gain boundaries (trec_eval ``Rndcg``).

    Notes
    -----
    nDCG is taken wherever the ideal gain changes (and once more at the end
    of a longer ranking) and averaged; 0 when R = 0.

    References
    ----------
    .. [1] trec_eval ``Rndcg``.
    """
    return make_metric("Rndcg", gains=gains, rel=rel)


def trec_rbp(*, p: float = 0.9, gains: str = "") -> Metric:
    r"""Rank-biased precision as trec_eval computes it (trec_eval ``rbp``).

    Notes
    -----
    :math:`(1-p)\sum_k g_k p^{k-1}`, with gains rescaled to [0, 1] when any lies
    outside (by default level L gains L / highest level). ``rankscope evaluate
    -m rbp`` follows ranx instead; this is ``trec_rbp``.

    References
    ----------
    .. [1] Moffat & Zobel, "Rank-biased precision for measurement of retrieval
       effectiveness", ACM TOIS 27(1) (2008). trec_eval ``rbp``.
    """
    return make_metric("trec_rbp", p=p, gains=gains)


def rbp_resid(*, p: float = 0.9) -> Metric:
    r"""RBP residual: the weight RBP leaves to unjudged documents (trec_eval ``rbp_resid``).

    Notes
    -----
    With at least one unjudged document ranked:
    :math:`p^N + (1-p)\sum_{k\ unjudged} p^{k-1}`; otherwise 0.

    References
    ----------
    .. [1] Moffat & Zobel (2008). trec_eval ``rbp_resid``.
    """
    return make_metric("rbp_resid", p=p)

