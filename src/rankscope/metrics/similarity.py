r"""Rank-similarity measures: how alike two rankings of the same query are.

These compare two runs with each other, not a run with qrels, so
:func:`rankscope.evaluate` refuses them (no kernel); compute them with
:func:`rankscope.compare.similarity`. Importing this module registers the
families and their spellings with the metric parser:

- ``RBO(p=0.9)``, ``rbo(0.9)``, ``RBO(p=0.9,form=min)``, ``rbo_ext(p=0.9)``,
  ``rbo_min(p=0.9)``, ``rbo_res(p=0.9)``, optionally with ``@k`` to cut both
  rankings at depth k first;
- ``RBO(p=0.9,ties=a)`` (``w``, ``a`` or ``b``): Corsi & Urbano's tie-aware
  variants, where equal scores form tie groups instead of being broken;
- ``AO@10`` / ``average_overlap@10``: average overlap, RBO's p = 1 limit;
- ``jaccard@10``, ``overlap@10``, ``kendall_tau`` (``kendall_tau@10``).

Rankings are ordered by score with the same tie rule as evaluation
(document id descending, or input order), except for the tie-aware RBO.
"""

from __future__ import annotations

from typing import Any

from rankscope.metrics.base import FAMILIES, Family, Metric, Param, make_metric, register
from rankscope.metrics.parser import register_name

__all__ = ["average_overlap", "jaccard", "kendall_tau", "overlap", "rank_biased_overlap"]

P_RBO = Param("p", 0.9, "float", "persistence, in (0, 1): the weight of depth d is "
              "proportional to p^(d-1); a small p looks only at the top",
              low=0.0, high=1.0, open_low=True, open_high=True)
FORM = Param("form", "ext", "str",
             "ext = extrapolated point estimate (RBO_EXT), min = lower bound, max = upper "
             "bound, res = residual (upper bound minus lower bound)",
             choices=("ext", "min", "max", "res"))
TIES = Param("ties", "break", "str",
             "break = ties in score broken as in evaluation; w, a, b = Corsi & Urbano's "
             "tie-aware RBO, a group of equal scores taken as equality (w), as uncertainty, "
             "the expected RBO over random tie breaks (a), or as uncertainty corrected for "
             "what the ties hide, so that RBO^b(X, X) = 1 (b); without ties all four agree",
             choices=("break", "w", "a", "b"))


def rank_biased_overlap(p: float = 0.9, *, form: str = "ext", ties: str = "break",
                        k: int | None = None) -> Metric:
    r"""Rank-biased overlap of two rankings (Webber, Moffat & Zobel 2010), tie-aware on demand.

    Returns
    -------
    Metric

    Notes
    -----
    With :math:`X_d` the number of documents the two rankings share in
    their first d positions and :math:`A_d = X_d / d` the agreement,

    .. math:: RBO(S, T, p) = (1 - p) \sum_{d=1}^{\infty} p^{d-1} A_d

    On finite rankings of lengths s <= l (S the shorter, L the longer;
    beyond depth s, :math:`X_d` counts S's s documents against L's first d):

    .. math::

        RBO_{EXT} = \frac{1-p}{p} \Big( \sum_{d=1}^{l} \frac{X_d}{d} p^d
                    + \sum_{d=s+1}^{l} \frac{X_s (d - s)}{s\,d} p^d \Big)
                    + \Big( \frac{X_l - X_s}{l} + \frac{X_s}{s} \Big) p^l

    For equal lengths s = l = k this is Releval's
    :math:`\frac{X_k}{k} p^k + \frac{1-p}{p} \sum_{d=1}^{k} \frac{X_d}{d} p^d`.

    .. math::

        RBO_{MIN} = \frac{1-p}{p} \Big( \sum_{d=1}^{l} \frac{X_d - X_l}{d} p^d
                    - X_l \ln(1 - p) \Big)

        RBO_{RES} = p^s + p^l - p^f - \frac{1-p}{p} \Big(
                    s \sum_{d=s+1}^{f} \frac{p^d}{d} + l \sum_{d=l+1}^{f} \frac{p^d}{d}
                    + X_l \big( \ln\frac{1}{1-p} - \sum_{d=1}^{f} \frac{p^d}{d} \big) \Big),
        \quad f = l + s - X_l

    Identical rankings have RBO_EXT = 1; rankings with nothing in common 0.
    One empty ranking against a non-empty one: EXT = MIN = 0, RES = MAX = 1;
    two empty rankings have no value (null). The tie-aware variants replace
    :math:`X_d` by the sum over shared documents of the products of their
    shares of depth d, and :math:`X_d / d` by a variant's agreement (see
    :mod:`rankscope.compare.rbo_ties`); their values equal the authors'
    reference implementation on its 10,000 published test cases.

    References
    ----------
    .. [1] Webber, Moffat & Zobel, "A similarity measure for indefinite
       rankings", ACM TOIS 28(4), article 20 (2010), sections 4 and 5.
    .. [2] Releval's metric reference, "Rank-Biased Overlap" and
       "Extrapolation".
    .. [3] Corsi & Urbano, "The treatment of ties in rank-biased overlap",
       SIGIR (2024); https://github.com/julian-urbano/sigir2024-rbo.

    Examples
    --------
    Run a cannot order d2 and d3; broken by id (d3 first) it matches b exactly,
    which overstates the agreement:

    >>> import rankscope
    >>> a = {"q": {"d1": 3, "d2": 2, "d3": 2}}
    >>> b = {"q": {"d1": 3, "d3": 2, "d2": 1}}
    >>> names = ["RBO(p=0.5,form=min)", "RBO(p=0.5,form=min,ties=a)"]
    >>> result = rankscope.similarity(a, b, names)
    >>> round(result[names[0]], 4), round(result[names[1]], 4)
    (0.9544, 0.8919)
    """
    return make_metric("RBO", k=k, p=p, form=form, ties=ties)


def average_overlap(k: int) -> Metric:
    r"""Average overlap at depth k: the mean agreement over depths 1..k (RBO's p = 1 limit).

    Returns
    -------
    Metric

    Notes
    -----
    With :math:`X_d` the documents both top-d lists hold,

    .. math:: AO@k = \frac{1}{k} \sum_{d=1}^{k} \frac{X_d}{d}

    the uniformly weighted counterpart of RBO (whose weights :math:`(1-p)p^{d-1}`
    tend to uniform as p goes to 1 over a finite depth). A list shorter than k
    keeps its overlap for the remaining depths. Null when both lists are empty.

    References
    ----------
    .. [1] Fagin, Kumar & Sivakumar, "Comparing top k lists", SIAM J. Discrete
       Math. 17(1) (2003).
    .. [2] Webber, Moffat & Zobel, ACM TOIS 28(4) (2010), section 2.

    Examples
    --------
    >>> import rankscope
    >>> a = {"q": {"d1": 3, "d2": 2, "d3": 1}}
    >>> b = {"q": {"d2": 3, "d1": 2, "d4": 1}}
    >>> round(rankscope.similarity(a, b, "AO@3")["AO@3"], 4)  # (0/1 + 2/2 + 2/3) / 3
    0.5556
    """
    return make_metric("AO", k=k)


def jaccard(k: int | None = None) -> Metric:
    r"""Jaccard similarity of the sets of documents in the two top-k lists.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: J@k = \frac{|S_{:k} \cap T_{:k}|}{|S_{:k} \cup T_{:k}|}

    Null when both lists are empty.

    References
    ----------
    .. [1] Jaccard, "The distribution of the flora in the alpine zone",
       New Phytologist 11(2) (1912).

    Examples
    --------
    >>> import rankscope
    >>> a = {"q": {"d1": 3, "d2": 2, "d3": 1}}
    >>> b = {"q": {"d2": 3, "d1": 2, "d4": 1}}
    >>> rankscope.similarity(a, b, "Jaccard")["Jaccard"]  # {d1, d2} of {d1, d2, d3, d4}
    0.5
    """
    return make_metric("Jaccard", k=k)


def overlap(k: int) -> Metric:
    r"""Overlap at k: the share of the k positions whose documents both lists hold.

    Returns
    -------
    Metric

    Notes
    -----
    .. math:: O@k = \frac{|S_{:k} \cap T_{:k}|}{k} = A_k

    the agreement at depth k of RBO; a list shorter than k still divides by k.

    References
    ----------
    .. [1] Webber, Moffat & Zobel, ACM TOIS 28(4) (2010), section 2 (agreement).

    Examples
    --------
    >>> import rankscope
    >>> a = {"q": {"d1": 3, "d2": 2, "d3": 1}}
    >>> b = {"q": {"d2": 3, "d1": 2, "d4": 1}}
    >>> round(rankscope.similarity(a, b, "Overlap@3")["Overlap@3"], 4)  # d1 and d2 of 3
    0.6667
    """
    return make_metric("Overlap", k=k)


def kendall_tau(k: int | None = None) -> Metric:
    r"""Kendall's tau between the two orders of the documents both lists hold.

    Returns
    -------
    Metric

    Notes
    -----
    Over the n documents ranked by both (within the cut-off), with C
    concordant and D discordant pairs of positions,

    .. math:: \tau = \frac{C - D}{n (n - 1) / 2}

    computed by :func:`scipy.stats.kendalltau` (tau-b, equal to tau-a as
    rankings have no ties). Null when fewer than two documents are shared.
    It ignores documents only one list holds: pair it with an overlap measure.

    References
    ----------
    .. [1] Kendall, "A new measure of rank correlation", Biometrika 30 (1938).

    Examples
    --------
    The same three documents; of the three pairs only (d1, d2) is swapped:

    >>> import rankscope
    >>> a = {"q": {"d1": 3, "d2": 2, "d3": 1}}
    >>> b = {"q": {"d2": 3, "d1": 2, "d3": 1}}
    >>> round(rankscope.similarity(a, b, "KendallTau")["KendallTau"], 4)  # (2 - 1) / 3
    0.3333
    """
    return make_metric("KendallTau", k=k)


def _family(name: str, factory: Any, kernel: str, cutoff: str, params: tuple[Param, ...],
            aliases: tuple[str, ...]) -> None:
    if name in FAMILIES:  # module reloaded (tests): keep the first registration
        return
    register(
        Family(
            name=name,
            params=params,
            cutoff=cutoff,  # type: ignore[arg-type]
            aggregate="mean",
            empty_value=float("nan"),
            graded=False,
            aliases=aliases,
            agrees_with=(),
            factory=factory,
            # between two runs, not a run and qrels: computed by rankscope.compare.similarity
            kernel=f"rankscope.compare.rank_similarity:{kernel}",
            group="similarity",
            cutoff_doc=("Depth (required): both rankings are cut at k." if cutoff == "required"
                        else "Cut both rankings at depth k first (whole rankings when omitted)."),
        )
    )


def _rbo_builder(form: str | None) -> Any:
    def build(params: dict[str, Any], k: int | None) -> Metric:
        merged = dict(params)
        if form is not None:
            if merged.get("form", form) != form:
                _form_conflict(form, merged["form"])
            merged["form"] = form
        return make_metric("RBO", k=k, **merged)

    return build


def _form_conflict(named: str, given: object) -> None:
    """A name like ``rbo_min(form=ext)`` contradicts itself."""
    from rankscope.errors import MetricParameterError

    raise MetricParameterError(f"rbo_{named} fixes form={named}; it cannot take form={given}")


def _plain(family: str) -> Any:
    def build(params: dict[str, Any], k: int | None) -> Metric:
        return make_metric(family, k=k, **params)

    return build


def _install() -> None:
    _family("RBO", rank_biased_overlap, "rbo", "optional", (P_RBO, FORM, TIES),
            ("RBO(p=0.9)", "rbo(p=0.9)", "rbo_ext(p=0.9)", "rbo_min(p=0.9)", "rbo_max(p=0.9)",
             "rbo_res(p=0.9)", "RBO(p=0.9,ties=a)"))
    _family("AO", average_overlap, "average_overlap", "required", (), ("AO@k", "average_overlap@k"))
    _family("Jaccard", jaccard, "jaccard", "optional", (), ("jaccard@k",))
    _family("Overlap", overlap, "overlap", "required", (), ("overlap@k",))
    _family("KendallTau", kendall_tau, "kendall_tau", "optional", (),
            ("kendall_tau", "kendall_tau@k"))
    register_name("RBO", _rbo_builder(None), first="p")
    register_name("AO", _plain("AO"))
    register_name("average_overlap", _plain("AO"))
    for form in ("ext", "min", "max", "res"):
        register_name(f"rbo_{form}", _rbo_builder(form), first="p")
    register_name("Jaccard", _plain("Jaccard"))
    register_name("Overlap", _plain("Overlap"))
    register_name("KendallTau", _plain("KendallTau"))
    register_name("kendall_tau", _plain("KendallTau"))
    register_name("kendall", _plain("KendallTau"))


_install()
