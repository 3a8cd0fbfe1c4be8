r"""Click models: how likely a result is to be clicked, with and without position bias.

Each model reads a :class:`~rankscope.judgments.clicks.log.ClickLog` and
estimates one value per (query, document): a click-through rate (``ctr``),
clicks over expected clicks (``coec``), the attractiveness of a
position-based model fitted by EM (``pbm``), or the relevance of the
simplified dynamic Bayesian network (``sdbn``). Options shared by all:

- ``depth``: only results shown at positions ``<= depth`` count;
- ``purchase_weight``: a result that was purchased counts as a click whose
  observation weighs ``purchase_weight`` (every estimate is then a weighted
  maximum-likelihood one: a purchase weighs as much as that many clicks, and
  probabilities stay in [0, 1]).

Notation: a session s shows document d of query q at position (rank)
:math:`r_s(d)`; :math:`c_{s,d}` is 1 when it was clicked (or purchased) and
:math:`w_{s,d}` its weight (1, or ``purchase_weight``); :math:`S_{qd}` the
sessions of q that showed d within the depth.

References
----------
.. [1] Chuklin, Markov and de Rijke, *Click Models for Web Search*, Morgan &
   Claypool (2015), chapters 3 and 4 (every model here, and their estimation).
.. [2] Craswell, Zoeter, Taylor and Ramsey, "An experimental comparison of click
   position-bias models", WSDM 2008 (the examination hypothesis, PBM, cascade).
.. [3] Chapelle and Zhang, "A dynamic Bayesian network click model for web
   search ranking", WWW 2009 (DBN and its simplified form, SDBN).
.. [4] Zhang and Jones, "Comparing click logs and editorial labels for
   training query rewriting", WWW 2007 workshop on query log analysis; Chapelle
   et al., "Expected reciprocal rank for graded relevance", CIKM 2009 (COEC).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from rankscope.errors import InputError, OptionError

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from rankscope.judgments.clicks.log import ClickLog

__all__ = ["ClickModelFit", "Observations", "coec", "ctr", "observations", "pbm", "sdbn"]


@dataclass(frozen=True)
class Observations:
    """A click log as arrays, one entry per result shown within the depth.

    Attributes
    ----------
    pairs : polars.DataFrame
        ``query_id, doc_id``: row i is pair i.
    page, pair, rank : numpy.ndarray
        The result page (0..), the pair and the 1-based position of each entry.
    click, weight : numpy.ndarray
        1.0 when clicked or purchased, else 0.0; the entry's weight.
    """

    pairs: pl.DataFrame
    page: NDArray[np.int64]
    pair: NDArray[np.int64]
    rank: NDArray[np.int64]
    click: NDArray[np.float64]
    weight: NDArray[np.float64]

    @property
    def n_ranks(self) -> int:
        """The deepest position observed."""
        return int(self.rank.max()) if self.rank.size else 0

    def impressions(self) -> NDArray[np.int64]:
        """How many times each pair was shown."""
        return np.bincount(self.pair, minlength=self.pairs.height)

    def clicks(self) -> NDArray[np.int64]:
        """How many times each pair was clicked (or purchased)."""
        counted = np.bincount(self.pair, weights=self.click, minlength=self.pairs.height)
        return np.rint(counted).astype(np.int64)


def observations(log: ClickLog, *, depth: int | None = None,
                 purchase_weight: float = 1.0) -> Observations:
    """The log's entries within ``depth``, with their weights (see the module docs).

    Raises
    ------
    OptionError
        ``depth`` below 1, a purchase weight that is not a positive number.
    InputError
        Nothing left within the depth.
    """
    if depth is not None and depth < 1:
        raise OptionError(f"the depth must be 1 or more, not {depth}")
    if not np.isfinite(purchase_weight) or purchase_weight <= 0:
        raise OptionError(f"the purchase weight must be a number > 0, not {purchase_weight}")
    frame = log.frame
    if depth is not None:
        frame = frame.filter(pl.col("position") <= depth)
    if frame.height == 0:
        raise InputError(f"no result shown within the depth ({depth})", source=log.source)
    pairs = frame.select("query_id", "doc_id").unique().sort("query_id", "doc_id")
    pairs = pairs.with_row_index("pair")
    pages = frame.select("session_id", "query_id").unique().with_row_index("page")
    coded = frame.join(pairs, on=["query_id", "doc_id"], how="left").join(
        pages, on=["session_id", "query_id"], how="left")
    clicked = (coded.get_column("clicked") | coded.get_column("purchased")).to_numpy()
    purchased = coded.get_column("purchased").to_numpy()
    return Observations(
        pairs=pairs.drop("pair"),
        page=coded.get_column("page").to_numpy().astype(np.int64),
        pair=coded.get_column("pair").to_numpy().astype(np.int64),
        rank=coded.get_column("position").to_numpy().astype(np.int64),
        click=clicked.astype(np.float64),
        weight=np.where(purchased == 1, float(purchase_weight), 1.0),
    )


@dataclass(frozen=True)
class ClickModelFit:
    """What a click model estimated.

    Attributes
    ----------
    model : str
        ``ctr``, ``coec``, ``pbm`` or ``sdbn``.
    pairs : polars.DataFrame
        ``query_id, doc_id, value, impressions, clicks`` (and the model's own
        parameters: ``attractiveness``, ``satisfaction``, ``examined`` for
        SDBN); ``value`` is null where the model has no estimate.
    value_name : str
        What ``value`` is: ``probability`` (CTR, PBM's attractiveness, SDBN's
        relevance) or ``coec`` (a ratio: 1 = clicked as often as an average
        result at the same positions).
    prior : polars.DataFrame or None
        Per position: ``position, value, impressions``: the click-through rate
        of each position (COEC) or the examination probability (PBM).
    iterations : int or None
        EM iterations run (PBM).
    converged : bool or None
        Whether EM stopped by its tolerance rather than its iteration cap.
    """

    model: str
    pairs: pl.DataFrame
    value_name: str
    prior: pl.DataFrame | None = None
    iterations: int | None = None
    converged: bool | None = None
    notes: list[str] = field(default_factory=list)


def _sum(index: NDArray[np.int64], weights: NDArray[np.float64], size: int
         ) -> NDArray[np.float64]:
    """Sums of ``weights`` by ``index`` (0..size-1)."""
    return np.bincount(index, weights=weights, minlength=size).astype(np.float64)


def _ratio(num: NDArray[np.float64], den: NDArray[np.float64]) -> NDArray[np.float64]:
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _pairs(obs: Observations, value: NDArray[np.float64], **extra: NDArray[Any]
           ) -> pl.DataFrame:
    columns = {"value": value, "impressions": obs.impressions(), "clicks": obs.clicks(),
               **extra}
    return obs.pairs.with_columns(
        pl.Series(name, data).fill_nan(None) if data.dtype.kind == "f" else pl.Series(name, data)
        for name, data in columns.items()
    )


def _per_rank(obs: Observations, values: NDArray[np.float64]) -> pl.DataFrame:
    shown = np.bincount(obs.rank, minlength=obs.n_ranks + 1)
    ranks = np.nonzero(shown)[0]
    return pl.DataFrame({"position": ranks.astype(np.int64), "value": values[ranks],
                         "impressions": shown[ranks].astype(np.int64)})


def ctr(log: ClickLog, *, depth: int | None = None, purchase_weight: float = 1.0
        ) -> ClickModelFit:
    r"""Click-through rate of each (query, document): clicks over times shown.

    .. math::

        \mathrm{CTR}_{qd} = \frac{\sum_{s \in S_{qd}} w_{s,d}\, c_{s,d}}
                                 {\sum_{s \in S_{qd}} w_{s,d}}

    Blind to position: a result shown on top collects clicks a better one
    lower down does not. Fair only when every document was shown at every
    position about equally often (randomised or interleaved rankings).
    Chuklin, Markov and de Rijke (2015), section 3.1 (the document-based
    CTR model).

    Examples
    --------
    >>> import polars as pl
    >>> from rankscope.judgments.clicks import ClickLog
    >>> log = ClickLog(pl.DataFrame({
    ...     "session_id": ["s1", "s1", "s2", "s2", "s3", "s3", "s4", "s4"],
    ...     "query_id": ["q"] * 8, "doc_id": ["a", "b", "a", "b", "b", "a", "b", "a"],
    ...     "position": [1, 2, 1, 2, 1, 2, 1, 2], "clicked": [1, 0, 0, 0, 1, 0, 0, 1]}))
    >>> ctr(log).pairs.select("doc_id", "value", "impressions", "clicks").rows()
    [('a', 0.5, 4, 2), ('b', 0.25, 4, 1)]
    """
    obs = observations(log, depth=depth, purchase_weight=purchase_weight)
    n = obs.pairs.height
    value = _ratio(_sum(obs.pair, obs.weight * obs.click, n),
                   _sum(obs.pair, obs.weight, n))
    return ClickModelFit("ctr", _pairs(obs, value), "probability")


def coec(log: ClickLog, *, depth: int | None = None, purchase_weight: float = 1.0
         ) -> ClickModelFit:
    r"""Clicks over expected clicks: a result's clicks against an average result's at its places.

    The position prior is the click-through rate of each position over the
    whole log, :math:`\mathrm{CTR}_r = \sum_{s, d: r_s(d)=r} w_{s,d} c_{s,d} /
    \sum_{s, d: r_s(d)=r} w_{s,d}`, and

    .. math::

        \mathrm{COEC}_{qd} = \frac{\sum_{s \in S_{qd}} w_{s,d}\, c_{s,d}}
                                  {\sum_{s \in S_{qd}} w_{s,d}\, \mathrm{CTR}_{r_s(d)}}

    1 means "clicked as often as results shown where it was"; above 1,
    more. The prior mixes position bias with the relevance of what is
    usually shown there, so COEC corrects for the places a result was
    shown, not for every bias. Zhang and Jones (2007); Chapelle et al.
    (2009); the clicks-over-expected-clicks judgments of OpenSearch's Search
    Relevance Workbench.

    Examples
    --------
    Position 1 was clicked 2 times in 4, position 2 once in 4, so the prior
    is 0.5 and 0.25; ``a`` was shown twice at each: expected clicks 1.5,
    observed 2; ``b`` likewise, observed 1:

    >>> import polars as pl
    >>> from rankscope.judgments.clicks import ClickLog
    >>> log = ClickLog(pl.DataFrame({
    ...     "session_id": ["s1", "s1", "s2", "s2", "s3", "s3", "s4", "s4"],
    ...     "query_id": ["q"] * 8, "doc_id": ["a", "b", "a", "b", "b", "a", "b", "a"],
    ...     "position": [1, 2, 1, 2, 1, 2, 1, 2], "clicked": [1, 0, 0, 0, 1, 0, 0, 1]}))
    >>> fit = coec(log)
    >>> fit.prior.rows()
    [(1, 0.5, 4), (2, 0.25, 4)]
    >>> [(d, round(v, 4)) for d, v in fit.pairs.select("doc_id", "value").rows()]
    [('a', 1.3333), ('b', 0.6667)]
    """
    obs = observations(log, depth=depth, purchase_weight=purchase_weight)
    size = obs.n_ranks + 1
    prior = _ratio(_sum(obs.rank, obs.weight * obs.click, size),
                   _sum(obs.rank, obs.weight, size))
    n = obs.pairs.height
    expected = _sum(obs.pair, obs.weight * np.nan_to_num(prior[obs.rank]), n)
    value = _ratio(_sum(obs.pair, obs.weight * obs.click, n), expected)
    notes = []
    undefined = int(np.count_nonzero(np.isnan(value)))
    if undefined:
        notes.append(f"{undefined} pairs shown only at positions nobody clicked: no COEC "
                     "(expected clicks 0)")
    return ClickModelFit("coec", _pairs(obs, value, expected=expected), "coec",
                         prior=_per_rank(obs, prior), notes=notes)


def pbm(log: ClickLog, *, depth: int | None = None, purchase_weight: float = 1.0,
        max_iter: int = 1000, tol: float = 1e-6) -> ClickModelFit:
    r"""The position-based model, fitted by expectation-maximisation.

    A result is clicked when it is examined and attractive, independently:

    .. math::

        P(C_{s,d} = 1) = \alpha_{qd}\, \gamma_{r_s(d)}

    with :math:`\alpha_{qd}` the attractiveness of d for q (the estimate
    reported) and :math:`\gamma_r` the probability that position r is
    examined (the position prior). EM from :math:`\alpha = \gamma = 0.5`
    (Chuklin, Markov and de Rijke 2015, section 4.2), every observation
    weighted by :math:`w_{s,d}`:

    .. math::

        \alpha_{qd} \leftarrow \frac{\sum_{s \in S_{qd}} w_{s,d} \left( c_{s,d} +
            (1 - c_{s,d}) \frac{\alpha_{qd} (1 - \gamma_r)}{1 - \alpha_{qd}\gamma_r}
            \right)}{\sum_{s \in S_{qd}} w_{s,d}}, \qquad
        \gamma_r \leftarrow \frac{\sum_{(s,d): r_s(d)=r} w_{s,d} \left( c_{s,d} +
            (1 - c_{s,d}) \frac{\gamma_r (1 - \alpha_{qd})}{1 - \alpha_{qd}\gamma_r}
            \right)}{\sum_{(s,d): r_s(d)=r} w_{s,d}}

    until no parameter moves by more than ``tol`` (or ``max_iter``
    iterations). Only products :math:`\alpha\gamma` are seen, so the fit
    separates the two only when documents were shown at several positions;
    with one fixed ranking, attractiveness and position are confounded.
    Craswell et al. (2008) (the examination hypothesis).

    Examples
    --------
    Position 2 is examined half as often as position 1 in this log, and
    ``a`` is clicked whenever it is examined, ``b`` half the time:

    >>> import polars as pl
    >>> from rankscope.judgments.clicks import ClickLog
    >>> rows = ([("s%d" % i, "a", 1, 1) for i in range(4)]
    ...         + [("s%d" % i, "b", 2, int(i == 0)) for i in range(4)]
    ...         + [("t%d" % i, "b", 1, int(i < 2)) for i in range(4)]
    ...         + [("t%d" % i, "a", 2, int(i < 2)) for i in range(4)])
    >>> log = ClickLog(pl.DataFrame(rows, schema=["session_id", "doc_id", "position",
    ...                                           "clicked"], orient="row")
    ...                .with_columns(query_id=pl.lit("q")))
    >>> fit = pbm(log)
    >>> [(d, round(v, 3)) for d, v in fit.pairs.select("doc_id", "value").rows()]
    [('a', 1.0), ('b', 0.5)]
    >>> [(r, round(g, 3)) for r, g, _ in fit.prior.rows()], fit.converged
    ([(1, 1.0), (2, 0.5)], True)
    """
    if max_iter < 1 or not tol > 0:
        raise OptionError("max_iter must be >= 1 and tol > 0")
    obs = observations(log, depth=depth, purchase_weight=purchase_weight)
    # identical observations collapse into one weighted entry: EM touches far fewer rows
    packed = pl.DataFrame({"pair": obs.pair, "rank": obs.rank, "click": obs.click,
                           "weight": obs.weight}).group_by("pair", "rank", "click").agg(
        pl.col("weight").sum())
    pair = packed.get_column("pair").to_numpy()
    rank = packed.get_column("rank").to_numpy()
    click = packed.get_column("click").to_numpy()
    weight = packed.get_column("weight").to_numpy()
    n_pairs, n_ranks = obs.pairs.height, obs.n_ranks + 1
    pair_weight = _sum(pair, weight, n_pairs)
    rank_weight = _sum(rank, weight, n_ranks)
    alpha = np.full(n_pairs, 0.5)
    gamma = np.full(n_ranks, 0.5)
    converged = False
    iterations = 0
    for iterations in range(1, max_iter + 1):  # noqa: B007 (the count is reported)
        a, g = alpha[pair], gamma[rank]
        unclicked = np.maximum(1.0 - a * g, 1e-300)
        post_alpha = np.where(click == 1.0, 1.0, a * (1.0 - g) / unclicked)
        post_gamma = np.where(click == 1.0, 1.0, g * (1.0 - a) / unclicked)
        new_alpha = _ratio(_sum(pair, weight * post_alpha, n_pairs), pair_weight)
        new_gamma = _ratio(_sum(rank, weight * post_gamma, n_ranks), rank_weight)
        new_gamma = np.nan_to_num(new_gamma, nan=0.5)
        step = max(float(np.max(np.abs(new_alpha - alpha))),
                   float(np.max(np.abs(new_gamma - gamma))))
        alpha, gamma = new_alpha, new_gamma
        if step < tol:
            converged = True
            break
    notes = [] if converged else [f"EM stopped after {max_iter} iterations without "
                                  f"converging to {tol}"]
    return ClickModelFit("pbm", _pairs(obs, alpha), "probability",
                         prior=_per_rank(obs, gamma), iterations=iterations,
                         converged=converged, notes=notes)


def sdbn(log: ClickLog, *, depth: int | None = None, purchase_weight: float = 1.0
         ) -> ClickModelFit:
    r"""The simplified dynamic Bayesian network: attractiveness times satisfaction.

    The user reads the page from the top, clicks an examined result with
    probability :math:`a_{qd}` (attractiveness), and after a click is
    satisfied (and stops) with probability :math:`s_{qd}`; unsatisfied,
    always goes on (the DBN's continuation :math:`\gamma = 1`). So every
    result down to the last click was examined, and none below it; on a
    page without clicks every result was examined. With :math:`L_s` the
    last clicked position of session s (the deepest position shown when
    nothing was clicked), the maximum-likelihood estimates are

    .. math::

        a_{qd} = \frac{\sum_{s \in S_{qd}: r_s(d) \le L_s} w_{s,d}\, c_{s,d}}
                      {\sum_{s \in S_{qd}: r_s(d) \le L_s} w_{s,d}}, \qquad
        s_{qd} = \frac{\sum_{s \in S_{qd}} w_{s,d}\, c_{s,d}\, [r_s(d) = L_s]}
                      {\sum_{s \in S_{qd}} w_{s,d}\, c_{s,d}}

    and the relevance reported is :math:`a_{qd} s_{qd}` (0 for a result
    examined and never clicked; none for one never examined). Chapelle and
    Zhang (2009), section 5; Chuklin, Markov and de Rijke (2015), section
    4.1.

    Examples
    --------
    ``a`` is clicked on two pages of three, and the user went on after one
    of those clicks; ``b``, examined twice (above a last click, and on the
    page without clicks), was clicked once, and that click ended the
    session; ``c`` was examined only on the page without clicks:

    >>> import polars as pl
    >>> from rankscope.judgments.clicks import ClickLog
    >>> log = ClickLog(pl.DataFrame({
    ...     "session_id": ["s1"] * 3 + ["s2"] * 3 + ["s3"] * 3,
    ...     "query_id": ["q"] * 9, "doc_id": ["a", "b", "c"] * 3,
    ...     "position": [1, 2, 3] * 3, "clicked": [1, 0, 0, 1, 1, 0, 0, 0, 0]}))
    >>> fit = sdbn(log)
    >>> [(d, round(a, 4), s, e) for d, a, s, e in
    ...  fit.pairs.select("doc_id", "attractiveness", "satisfaction", "examined").rows()]
    [('a', 0.6667, 0.5, 3), ('b', 0.5, 1.0, 2), ('c', 0.0, None, 1)]
    >>> [(d, round(v, 4)) for d, v in fit.pairs.select("doc_id", "value").rows()]
    [('a', 0.3333), ('b', 0.5), ('c', 0.0)]

    ``a`` is clicked more often, but ``b`` satisfies: SDBN ranks ``b`` first.
    """
    obs = observations(log, depth=depth, purchase_weight=purchase_weight)
    n_pages = int(obs.page.max()) + 1
    clicked_rank = np.where(obs.click == 1.0, obs.rank, 0)
    last_click = np.zeros(n_pages, dtype=np.int64)
    np.maximum.at(last_click, obs.page, clicked_rank)
    deepest = np.zeros(n_pages, dtype=np.int64)
    np.maximum.at(deepest, obs.page, obs.rank)
    last = np.where(last_click > 0, last_click, deepest)[obs.page]
    examined = (obs.rank <= last).astype(np.float64)
    n = obs.pairs.height
    wc = obs.weight * obs.click
    attractiveness = _ratio(_sum(obs.pair, wc * examined, n),
                            _sum(obs.pair, obs.weight * examined, n))
    satisfaction = _ratio(_sum(obs.pair, wc * (obs.rank == last), n),
                          _sum(obs.pair, wc, n))
    value = np.where(attractiveness == 0.0, 0.0, attractiveness * satisfaction)
    examined_count = _sum(obs.pair, examined, n).astype(np.int64)
    notes = []
    never = int(np.count_nonzero(examined_count == 0))
    if never:
        notes.append(f"{never} pairs always shown below the last click: never examined, no "
                     "estimate")
    return ClickModelFit(
        "sdbn", _pairs(obs, value, attractiveness=attractiveness,
                       satisfaction=satisfaction, examined=examined_count),
        "probability", notes=notes)
