r"""Counting measures: how many documents were retrieved, judged, relevant.

trec_eval's ``num_ret``, ``num_rel`` and ``num_rel_ret`` are sums over the
queries, not means (a query's count is its share of the run's total);
ir_measures' ``Judged`` is the mean share of judged documents, the usual
check of how complete the judgments of a ranking are. Relevance follows
:mod:`rankscope.metrics.binary`: a grade >= ``rel``.
"""

from __future__ import annotations

from rankscope.metrics.base import Family, Metric, Param, claims, make_metric, register
from rankscope.metrics.binary import REL

__all__ = ["judged", "num_rel", "num_rel_ret", "num_ret"]


def judged(k: int | None = None) -> Metric:
    r"""Judged: the share of the first k documents that have a judgment.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: Judged@k = \frac{|\{i \le k : d_i \text{ judged}\}|}{\min(k, n)}

    n is the number retrieved (ir_measures' convention); 0 for an empty
    ranking. A judgment with a null grade does not count.

    References
    ----------
    .. [1] MacAvaney et al., ir_measures' ``Judged`` (from OpenNIR).

    Examples
    --------
    Of the four documents retrieved, ``d`` has no judgment:

    >>> import rankscope
    >>> qrels = {"q": {"a": 1, "b": 0, "c": 2, "e": 1}}
    >>> run = {"q": {"b": 0.9, "a": 0.8, "d": 0.7, "c": 0.6}}
    >>> result = rankscope.evaluate(qrels, run, ["Judged@2", "Judged@4"])
    >>> result["Judged@2"], result["Judged@4"]  # 2/2, 3/4
    (1.0, 0.75)
    """
    return make_metric("Judged", k=k)


def num_ret(k: int | None = None) -> Metric:
    r"""Number of documents retrieved (summed over queries, as trec_eval does).

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: num\_ret = \min(k, n)

    References
    ----------
    .. [1] trec_eval's ``num_ret``.

    Examples
    --------
    Summed, not averaged, over the queries:

    >>> import rankscope
    >>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    >>> run = {"q1": {"a": 0.9, "b": 0.8, "c": 0.7}, "q2": {"b": 0.5}}
    >>> result = rankscope.evaluate(qrels, run, ["num_ret", "num_ret@2"])
    >>> result["num_ret"], result["num_ret@2"]  # 3 + 1, 2 + 1
    (4.0, 3.0)
    """
    return make_metric("num_ret", k=k)


def num_rel(*, rel: float = 1) -> Metric:
    r"""Number of relevant documents in the qrels (summed over queries).

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: num\_rel = R

    References
    ----------
    .. [1] trec_eval's ``num_rel``.

    Examples
    --------
    >>> import rankscope
    >>> qrels = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"d": 1}}
    >>> run = {"q1": {"a": 0.9}, "q2": {"x": 0.5}}
    >>> result = rankscope.evaluate(qrels, run, ["num_rel", "num_rel(rel=2)"])
    >>> result["num_rel"], result["num_rel(rel=2)"]  # (a, c) + (d); (c) alone
    (3.0, 1.0)
    """
    return make_metric("num_rel", rel=rel)


def num_rel_ret(k: int | None = None, *, rel: float = 1) -> Metric:
    r"""Number of relevant documents retrieved (summed over queries).

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: num\_rel\_ret = |\{i \le k : g_i \ge rel\}|

    References
    ----------
    .. [1] trec_eval's ``num_rel_ret``.

    Examples
    --------
    >>> import rankscope
    >>> qrels = {"q": {"a": 1, "b": 0, "c": 2, "e": 1}}
    >>> run = {"q": {"b": 0.9, "a": 0.8, "d": 0.7, "c": 0.6}}
    >>> result = rankscope.evaluate(qrels, run, ["num_rel_ret", "num_rel_ret@2"])
    >>> result["num_rel_ret"], result["num_rel_ret@2"]  # a and c; a
    (2.0, 1.0)
    """
    return make_metric("num_rel_ret", k=k, rel=rel)


def _count(
    name: str,
    factory: object,
    kernel: str,
    cutoff: str,
    params: tuple[Param, ...],
    aliases: tuple[str, ...],
    agrees: tuple[str, ...],
    aggregate: str = "mean",
    cutoff_doc: str = "",
) -> None:
    register(
        Family(
            name=name,
            params=params,
            cutoff=cutoff,  # type: ignore[arg-type]
            aggregate=aggregate,  # type: ignore[arg-type]
            empty_value=0.0,
            graded=False,
            aliases=aliases,
            agrees_with=agrees,
            factory=factory,  # type: ignore[arg-type]
            kernel=kernel,
            group="binary",  # listed with the binary-relevance metrics
            cutoff_doc=cutoff_doc,
        )
    )


_count("Judged", judged, "rankscope.engine.kernels_counts:judged",
       "optional", (), ("Judged@k",), claims(ir_measures="Judged@k, Judged"))
_count("num_ret", num_ret, "rankscope.engine.kernels_counts:num_ret",
       "optional", (), ("num_ret", "NumRet"),
     claims(trec_eval="num_ret", pytrec_eval="num_ret", ir_measures="NumRet"),
     aggregate="sum", cutoff_doc="Count at most k documents per query.")
_count("num_rel", num_rel, "rankscope.engine.kernels_counts:num_rel",
       "none", (REL,), ("num_rel", "NumRel"),
     claims(trec_eval="num_rel", pytrec_eval="num_rel", ir_measures="NumRel"), aggregate="sum")
_count("num_rel_ret", num_rel_ret, "rankscope.engine.kernels_counts:num_rel_ret",
       "optional", (REL,), ("num_rel_ret", "NumRelRet"),
     claims(trec_eval="num_rel_ret", pytrec_eval="num_rel_ret", ir_measures="NumRelRet"),
     aggregate="sum", cutoff_doc="Count only the first k documents of each query.")
