r"""Bootstrap intervals of agreement coefficients: how sure is a kappa of a few hundred items?

The *items* (units: results, ordered by query id, then document id) are
resampled with replacement: resample :math:`b` draws ``n`` item indices with
``numpy.random.default_rng(seed).integers(0, n, size=n)`` (the :math:`B`
resamples one after another from one generator), and the coefficient is
computed on those items exactly as on the whole set (the same code:
statsmodels' ``cohens_kappa``, the ``krippendorff`` package). The interval
is the pair of :math:`(1-c)/2` and :math:`(1+c)/2` quantiles (linear
interpolation) of the resampled coefficients that are defined (a resample
with one category only has none); None when fewer than two items, or no
resample gives a value (Efron & Tibshirani 1993, ch. 13).

Two coefficients computed with the same ``seed`` on the same items are
resampled alike, so the intervals of a kappa and of an alpha over the same
results come from the same resamples.

References
----------
.. [1] Efron, Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall (1993).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rankscope.errors import OptionError
from rankscope.judgments.agreement import (
    LEVELS,
    _alpha,
    _pair_table,
    _Ratings,
    _ratings,
    _scale,
    _table_kappa,
    _weights,
)
from rankscope.judgments.scales import Scale
from rankscope.judgments.table import Judgments

__all__ = ["Interval", "alpha_interval", "kappa_interval"]

Interval = tuple[float | None, float | None]
"""(low, high) of an interval; (None, None) when undefined."""


def _subset(data: _Ratings, idx: np.ndarray) -> _Ratings:
    """The ratings of the items ``idx`` (repeats allowed), as one query."""
    return _Ratings(["*"], np.array([0, idx.size], dtype=np.int64), data.raters,
                    data.grades[idx], data.cats[idx], data.categories, data.counts[idx])


def _bootstrap(data: _Ratings, statistic: Callable[[_Ratings], float | None], *,
               n_resamples: int, seed: int | None, confidence: float) -> Interval:
    if not 0 < confidence < 1:
        raise OptionError(f"the confidence must be between 0 and 1, not {confidence}")
    if n_resamples < 1:
        raise OptionError(f"the number of resamples must be >= 1, not {n_resamples}")
    n = data.grades.shape[0]
    if n < 2:
        return None, None
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n_resamples):
        drawn: np.ndarray = np.asarray(rng.integers(0, n, size=n))
        value = statistic(_subset(data, drawn))
        if value is not None:
            values.append(value)
    if not values:
        return None, None
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(np.asarray(values), [tail, 1.0 - tail])
    return float(low), float(high)


def kappa_interval(
    judgments: Judgments,
    *,
    weights: str | None = "auto",
    scale: Scale | str | None = None,
    n_resamples: int = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> Interval:
    """A percentile bootstrap interval of Cohen's kappa between two raters.

    Parameters
    ----------
    judgments : Judgments
        Two raters' grades (the items both graded count).
    weights, scale
        As for :func:`~rankscope.judgments.cohen_kappa`.
    n_resamples, seed, confidence
        :math:`B`, the generator's seed, and the level of the interval.

    Returns
    -------
    (low, high)

    Raises
    ------
    OptionError
        Not two raters; a bad ``weights``, ``n_resamples`` or ``confidence``.

    Examples
    --------
    >>> import polars as pl
    >>> rows = [("q", f"d{i}", r, g) for i, (a, b) in enumerate(
    ...     [(0, 0), (1, 1), (2, 2), (3, 3), (2, 3), (1, 0), (3, 3), (0, 0)])
    ...     for r, g in (("human", a), ("llm", b))]
    >>> j = Judgments(pl.DataFrame(rows, schema=["query_id", "doc_id", "rater", "grade"],
    ...                            orient="row"), scale="graded")
    >>> low, high = kappa_interval(j, weights=None, n_resamples=200)
    >>> bool(-1 <= low <= high <= 1)
    True
    """
    sc = _scale(judgments, scale)
    data = _ratings(judgments, sc)
    if len(data.raters) != 2:
        raise OptionError(f"a kappa interval is between two raters, not {len(data.raters)}")
    both = (data.cats >= 0).all(axis=1)
    data = _subset(data, np.flatnonzero(both))
    w = _weights(weights, sc)

    k = len(data.categories)

    def kappa(sub: _Ratings) -> float | None:
        return _table_kappa(_pair_table(sub.cats[:, 0], sub.cats[:, 1], k), sub.categories, w)

    return _bootstrap(data, kappa, n_resamples=n_resamples, seed=seed, confidence=confidence)


def alpha_interval(
    judgments: Judgments,
    level: str = "auto",
    *,
    scale: Scale | str | None = None,
    n_resamples: int = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> Interval:
    """A percentile bootstrap interval of Krippendorff's alpha over every rater.

    Parameters are those of :func:`~rankscope.judgments.krippendorff_alpha`,
    and ``n_resamples``, ``seed``, ``confidence`` as for :func:`kappa_interval`.

    Raises
    ------
    OptionError
        A bad level, ``n_resamples`` or ``confidence``.
    """
    sc = _scale(judgments, scale)
    if level == "auto":
        level = sc.default_level if sc is not None else "nominal"
    if level not in LEVELS:
        raise OptionError(f"level must be one of auto, {', '.join(LEVELS)}, not {level!r}")
    data = _ratings(judgments, sc)
    return _bootstrap(data, lambda sub: _alpha(sub, None, level), n_resamples=n_resamples,
                      seed=seed, confidence=confidence)
