r"""C/W/L measures as cwl_eval defines them: user models that stop by continuation.

In the C/W/L framework (Moffat et al.) a user examines rank 1, and continues
from rank i to rank i + 1 with probability :math:`C_i`. The weight of rank i is
the chance of reaching it, normalized:

.. math::

    W_i = \frac{\prod_{j<i} C_j}{\sum_{m=1}^{n} \prod_{j<m} C_j}, \qquad
    EU = \sum_{i=1}^{n} W_i \, g_i

and the measure is the expected utility per document examined, EU. As in
cwl_eval (and ir_measures, which runs it): every ranking is cut or padded to
``depth`` = n = 1000 positions (padding gains 0), each cost is 1, and the gain
of a grade is scaled to [0, 1]:

.. math:: g = \frac{\min(\max(grade, min\_rel), max\_rel) - min\_rel}{max\_rel - min\_rel}

with negative grades first raised to 0 and unjudged documents gaining 0. Each
family differs only in :math:`C_i` (i the rank, :math:`CG_i = \sum_{j \le i} g_j`).
``max_rel`` defaults to the highest grade in the qrels (ir_measures requires it).
"""

from __future__ import annotations

from typing import Any

from rankscope.metrics.base import (
    Family,
    Metric,
    Param,
    claims,
    make_metric,
    register,
)
from rankscope.metrics.parser import register_name

__all__ = ["bpm", "insq", "inst", "nerr8", "nerr9", "nerr10", "nerr11", "sdcg"]

CWL_FAMILIES = ("BPM", "INSQ", "INST", "SDCG", "NERR8", "NERR9", "NERR10", "NERR11")

_T = Param("T", 1.0, "float", "total (scaled) gain that satisfies the user", low=0.0,
           open_low=True)
_MIN_REL = Param("min_rel", 0.0, "float", "grade scaled to gain 0 (and lower grades)")
_MAX_REL = Param("max_rel", None, "float",
                 "grade scaled to gain 1 (and higher grades); unset = highest grade in the qrels")
_BUDGET = "Documents the user is willing to examine (the cost budget K)."
_DEPTH = Param("depth", 1000, "int", "positions the model reads (cwl_eval's max_n)", low=1)
_P10 = Param("p", 0.9, "float", "patience (RBP's p)", low=0.0, high=1.0, open_low=True,
             open_high=True)


def bpm(k: int, *, T: float = 1.0, min_rel: float = 0.0, max_rel: float | None = None,
        depth: int = 1000) -> Metric:
    r"""Bejeweled player model (static): stop at the gain goal T or after k documents.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: C_i = [\,CG_i < T \;\wedge\; i < k\,]

    The user reads on while neither the gain goal nor the budget is reached;
    BPM is then the mean gain of the documents read.

    References
    ----------
    .. [1] Zhang, Liu, Li, Zhang, Xu & Ma, "Evaluating web search with a
       bejeweled player model", SIGIR (2017).
    .. [2] Azzopardi, Thomas & Moffat, "cwl_eval", SIGIR (2019).

    Examples
    --------
    The first document has gain 1 (grade 2 of 2): the goal T = 1 is met, the
    user stops there.

    >>> import rankscope
    >>> rankscope.evaluate({"q": {"a": 2, "b": 1}}, {"q": {"a": 0.9, "b": 0.8}},
    ...                    "BPM@5")["BPM@5"]
    1.0
    """
    return make_metric("BPM", k=k, T=T, min_rel=min_rel, max_rel=max_rel, depth=depth)


def insq(*, T: float = 1.0, min_rel: float = 0.0, max_rel: float | None = None,
         depth: int = 1000) -> Metric:
    r"""INSQ: continuation that grows with depth and the gain goal T (not with gain seen).

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: C_i = \left(\frac{i + 2T - 1}{i + 2T}\right)^2

    References
    ----------
    .. [1] Moffat, Scholer & Thomas, "Models and metrics: IR evaluation as a
       user process", ADCS (2012).
    .. [2] Azzopardi, Thomas & Moffat, "cwl_eval", SIGIR (2019).

    Examples
    --------
    >>> import rankscope
    >>> value = rankscope.evaluate({"q": {"a": 1}}, {"q": {"a": 0.9, "b": 0.8}}, "INSQ")["INSQ"]
    >>> round(value, 4)  # 1 / sum over i of (2 / (i + 1))^2, i = 1..1000
    0.3882
    """
    return make_metric("INSQ", T=T, min_rel=min_rel, max_rel=max_rel, depth=depth)


def inst(*, T: float = 1.0, min_rel: float = 0.0, max_rel: float | None = None,
         depth: int = 1000) -> Metric:
    r"""INST: INSQ whose goal shrinks by the gain already seen (adaptive).

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: C_i = \left(\frac{i + T + T_i - 1}{i + T + T_i}\right)^2, \quad T_i = T - CG_i

    References
    ----------
    .. [1] Moffat, Bailey, Scholer & Thomas, "INST: an adaptive metric for
       information retrieval evaluation", ADCS (2015).
    .. [2] Azzopardi, Thomas & Moffat, "cwl_eval", SIGIR (2019).

    Examples
    --------
    >>> import rankscope
    >>> value = rankscope.evaluate({"q": {"a": 1}}, {"q": {"a": 0.9, "b": 0.8}}, "INST")["INST"]
    >>> round(value, 4)
    0.6083
    """
    return make_metric("INST", T=T, min_rel=min_rel, max_rel=max_rel, depth=depth)


def sdcg(k: int, *, min_rel: float = 0.0, max_rel: float | None = None,
         depth: int = 1000) -> Metric:
    r"""Scaled DCG at k: DCG@k of the scaled gains over the DCG@k of k gains of 1.

    Returns
    -------
    Metric

    Notes
    -----
    .. math::

        C_i = [i < k] \frac{\log_2(i + 1)}{\log_2(i + 2)}, \qquad
        SDCG@k = \frac{\sum_{i=1}^{k} g_i / \log_2(i + 1)}{\sum_{i=1}^{k} 1 / \log_2(i + 1)}

    nDCG as if at least k fully relevant documents existed (cwl_eval's NDCG-k).

    References
    ----------
    .. [1] Järvelin & Kekäläinen, "Cumulated gain-based evaluation of IR
       techniques", ACM TOIS 20(4) (2002).
    .. [2] Azzopardi, Thomas & Moffat, "cwl_eval", SIGIR (2019).

    Examples
    --------
    >>> import rankscope
    >>> value = rankscope.evaluate({"q": {"a": 2, "b": 1}}, {"q": {"a": 0.9, "b": 0.8}},
    ...                            "SDCG@2")["SDCG@2"]
    >>> round(value, 4)  # (1 + 0.5 / log2 3) / (1 + 1 / log2 3)
    0.8066
    """
    return make_metric("SDCG", k=k, min_rel=min_rel, max_rel=max_rel, depth=depth)


def nerr8(k: int, *, min_rel: float = 0.0, max_rel: float | None = None,
          depth: int = 1000) -> Metric:
    r"""NERR (eq. 8): a C/W/L approximation of ERR, stopping on gain, truncated at k.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: C_i = [i < k] (1 - g_i)

    References
    ----------
    .. [1] Azzopardi, Mackenzie & Moffat, "ERR is not C/W/L: exploring the
       relationship between expected reciprocal rank and other metrics",
       ICTIR (2021), eq. 8.

    Examples
    --------
    >>> import rankscope
    >>> rankscope.evaluate({"q": {"a": 1}}, {"q": {"b": 0.9, "a": 0.8}}, "NERR8@5")["NERR8@5"]
    0.5
    """
    return make_metric("NERR8", k=k, min_rel=min_rel, max_rel=max_rel, depth=depth)


def nerr9(k: int, *, min_rel: float = 0.0, max_rel: float | None = None,
          depth: int = 1000) -> Metric:
    r"""NERR (eq. 9): NERR8 with ERR's reciprocal-rank discount in the continuation.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: C_i = [i < k] \frac{i}{i + 1} (1 - g_i)

    References
    ----------
    .. [1] Azzopardi, Mackenzie & Moffat, ICTIR (2021), eq. 9.

    Examples
    --------
    >>> import rankscope
    >>> value = rankscope.evaluate({"q": {"a": 1}}, {"q": {"b": 0.9, "a": 0.8}},
    ...                            "NERR9@5")["NERR9@5"]
    >>> round(value, 4)  # weights 1 and 1/2, normalized: the relevant one gets 1/3
    0.3333
    """
    return make_metric("NERR9", k=k, min_rel=min_rel, max_rel=max_rel, depth=depth)


def nerr10(p: float = 0.9, *, min_rel: float = 0.0, max_rel: float | None = None,
           depth: int = 1000) -> Metric:
    r"""NERR (eq. 10): ERR-like stopping on gain with RBP's patience p, to full depth.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: C_i = p (1 - g_i)

    References
    ----------
    .. [1] Azzopardi, Mackenzie & Moffat, ICTIR (2021), eq. 10.

    Examples
    --------
    >>> import rankscope
    >>> value = rankscope.evaluate({"q": {"a": 1}}, {"q": {"b": 0.9, "a": 0.8}},
    ...                            "NERR10(p=0.5)")["NERR10(p=0.5)"]
    >>> round(value, 4)  # weights 1, 1/2, then 0: the relevant one gets 1/3
    0.3333
    """
    return make_metric("NERR10", p=p, min_rel=min_rel, max_rel=max_rel, depth=depth)


def nerr11(*, T: float = 1.0, min_rel: float = 0.0, max_rel: float | None = None,
           depth: int = 1000) -> Metric:
    r"""NERR (eq. 11): ERR-like stopping on gain with INSQ's goal T, to full depth.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: C_i = \left(\frac{i + 2T - 1}{i + 2T}\right)^2 (1 - g_i)

    References
    ----------
    .. [1] Azzopardi, Mackenzie & Moffat, ICTIR (2021), eq. 11.

    Examples
    --------
    >>> import rankscope
    >>> rankscope.evaluate({"q": {"a": 1}}, {"q": {"a": 0.9}}, "NERR11")["NERR11"]
    1.0
    """
    return make_metric("NERR11", T=T, min_rel=min_rel, max_rel=max_rel, depth=depth)


def _install() -> None:
    rows: tuple[tuple[str, Any, str, tuple[Param, ...]], ...] = (
        ("BPM", bpm, "required", (_T, _MIN_REL, _MAX_REL, _DEPTH)),
        ("INSQ", insq, "none", (_T, _MIN_REL, _MAX_REL, _DEPTH)),
        ("INST", inst, "none", (_T, _MIN_REL, _MAX_REL, _DEPTH)),
        ("SDCG", sdcg, "required", (_MIN_REL, _MAX_REL, _DEPTH)),
        ("NERR8", nerr8, "required", (_MIN_REL, _MAX_REL, _DEPTH)),
        ("NERR9", nerr9, "required", (_MIN_REL, _MAX_REL, _DEPTH)),
        ("NERR10", nerr10, "none", (_P10, _MIN_REL, _MAX_REL, _DEPTH)),
        ("NERR11", nerr11, "none", (_T, _MIN_REL, _MAX_REL, _DEPTH)),
    )
    # ir_measures' spelling with its parameters (x, r, k, P: numbers)
    spelled = {"BPM": "BPM(T=x,max_rel=r)@k", "INSQ": "INSQ(T=x,max_rel=r)",
                "INST": "INST(T=x,max_rel=r)", "SDCG": "SDCG(max_rel=r)@k",
                "NERR8": "NERR8(max_rel=r)@k", "NERR9": "NERR9(max_rel=r)@k",
                "NERR10": "NERR10(p=P,max_rel=r)", "NERR11": "NERR11(T=x,max_rel=r)"}
    for name, factory, cutoff, params in rows:
        register(Family(
            name=name, params=params, cutoff=cutoff,  # type: ignore[arg-type]
            aggregate="mean", empty_value=0.0, graded=True,
            aliases=(f"{name}@k" if cutoff == "required" else name,),
            agrees_with=claims(ir_measures=spelled[name]),
            factory=factory, kernel=f"rankscope.engine.kernels_cwl:{name.lower()}",
            group="cwl", cutoff_doc=_BUDGET if name == "BPM" else "",
        ))
        register_name(name, _builder(name), case_sensitive=True,
                      first="p" if name == "NERR10" else None)


def _builder(family: str) -> Any:
    def build(params: dict[str, Any], k: int | None) -> Metric:
        if params.pop("dcg", "log2") != "log2":  # ir_measures' SDCG(dcg='log2')
            from rankscope.errors import MetricParameterError

            raise MetricParameterError(f"{family}: dcg must be 'log2'")
        return make_metric(family, k=k, **params)

    return build


_install()
