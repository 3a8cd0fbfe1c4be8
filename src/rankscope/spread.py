"""How spread out per-query values are: standard deviation and bootstrap intervals.

Every result (:class:`~rankscope.result.EvaluationResult`) reports, beside each
mean, the standard deviation of the per-query values and a percentile bootstrap
interval of the mean; :func:`rankscope.compare` uses the same intervals for
runs and their differences. numpy only, so results can use it without the
``stats`` extra.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["bootstrap_intervals", "population_std"]

FloatArray = npt.NDArray[np.float64]


def population_std(values: FloatArray) -> float | None:
    r"""The population standard deviation of the non-null values (ranx's ``return_std``).

    .. math:: \sigma = \sqrt{\frac{1}{n} \sum_i (x_i - \bar x)^2}

    None when no value is present. ranx computes ``np.std`` (divisor n, not
    n - 1); multiply by :math:`\sqrt{n / (n - 1)}` for the sample deviation.

    Examples
    --------
    >>> import numpy as np
    >>> population_std(np.array([0.0, 1.0, np.nan]))
    0.5
    """
    present = values[~np.isnan(values)]
    return float(np.std(present)) if present.size else None


_BATCH_CELLS = 1 << 23  # resample-count cells per batch: ~64 MB of float64


def bootstrap_intervals(
    values: FloatArray,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10000,
    seed: int | None = 0,
) -> tuple[FloatArray, FloatArray]:
    r"""Percentile bootstrap intervals of the means of several rows, resampled together.

    Each resample draws :math:`n` queries (columns) with replacement; row
    :math:`r`'s mean on resample :math:`b` is :math:`\bar x^*_{rb} =
    \frac{1}{n}\sum_i c_{bi} x_{ri}` with :math:`c_{bi}` how often query
    :math:`i` was drawn. The interval of row :math:`r` is the pair of
    :math:`(1-c)/2` and :math:`(1+c)/2` quantiles (linear interpolation) of its
    :math:`B` resampled means (Efron & Tibshirani 1993, ch. 13). Both ends lie
    within ``[min(x_r), max(x_r)]``.

    Parameters
    ----------
    values : ndarray, shape (n_rows, n_queries)
        Per-query values (no NaN), e.g. every run's and every difference's.
    confidence : float, default 0.95
        Level of the intervals.
    n_resamples : int, default 10000
        :math:`B`.
    seed : int, optional
        Seed of the resampling (None: fresh randomness).

    Returns
    -------
    low, high : ndarray, shape (n_rows,)
        NaN for fewer than two queries; ``[x, x]`` for a row of equal values.

    Examples
    --------
    >>> import numpy as np
    >>> low, high = bootstrap_intervals(np.array([[1.0, 1.0, 1.0, 0.9, 1.0]]))
    >>> bool(0.9 <= low[0] <= high[0] <= 1.0)
    True
    """
    x = np.atleast_2d(np.asarray(values, dtype=np.float64))
    rows, n = x.shape
    low = np.full(rows, np.nan)
    high = np.full(rows, np.nan)
    if n < 2 or rows == 0:
        return low, high
    rng = np.random.default_rng(seed)
    means = np.empty((n_resamples, rows))
    step = max(1, _BATCH_CELLS // n)
    for start in range(0, n_resamples, step):
        size = min(step, n_resamples - start)
        drawn = rng.integers(0, n, size=(size, n))
        # How often each query was drawn in each resample, then every row's mean at once.
        flat = (np.arange(size)[:, None] * n + drawn).ravel()
        counts = np.bincount(flat, minlength=size * n).reshape(size, n).astype(np.float64)
        means[start:start + size] = counts @ x.T / n
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail], axis=0)
    # Rows of equal values: exactly that value (no rounding from the product).
    flat_rows = np.all(x == x[:, :1], axis=1)
    low[flat_rows] = high[flat_rows] = x[flat_rows, 0]
    # Rounding in the product can step a hair outside the data; the ends are means of it.
    low = np.clip(low, x.min(axis=1), x.max(axis=1))
    high = np.clip(high, x.min(axis=1), x.max(axis=1))
    return low, high


