"""How spread out per-query values are: standard deviation and bootstrap intervals.

Every result (:class:`~rankscope.result.EvaluationResult`) reports, beside each
mean, the standard deviation of the per-query values and a percentile bootstrap
interval of the mean; :func:`rankscope.compare` uses the same intervals for
runs and their differences. numpy only, so results can use it without the
``stats`` extra.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["ResampleCache", "bootstrap_intervals", "bootstrap_intervals_each",
           "paired_bootstrap_intervals", "population_std"]

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


class ResampleCache:
    """Resample counts drawn once per (queries, resamples, seed) and reused.

    A comparison resamples the same queries with the same seed once per
    metric: the counts are the same every time, and drawing them is about
    half of an interval's cost at a few hundred queries (threads may share
    the cache: each set is drawn once). Kept only for a
    seed (None means fresh randomness each time) and when they fit in one
    batch (at most ``2**23`` counts, 64 MB); otherwise drawn each time. The
    intervals are the same to the last bit either way.
    """

    def __init__(self) -> None:
        import threading

        self._kept: dict[tuple[int, int, int], list[tuple[int, FloatArray]]] = {}
        self._lock = threading.Lock()  # threads sharing the cache draw each key once

    def batches(self, n: int, n_resamples: int, seed: int | None) -> Iterable[
            tuple[int, FloatArray]]:
        """The batches of counts of ``n`` queries (see :func:`bootstrap_intervals`)."""
        if seed is None or n * n_resamples > _BATCH_CELLS:
            return _resample_counts(n, n_resamples, seed)
        key = (n, n_resamples, seed)
        with self._lock:
            if key not in self._kept:
                # the generator reuses one buffer: each batch is copied to be kept
                self._kept[key] = [(start, counts.copy())
                                   for start, counts in _resample_counts(n, n_resamples, seed)]
            return self._kept[key]


def bootstrap_intervals(
    values: FloatArray,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10000,
    seed: int | None = 0,
    cache: ResampleCache | None = None,
) -> tuple[FloatArray, FloatArray]:
    r"""Percentile bootstrap intervals of the means of several rows, resampled together.

    Each resample draws :math:`n` queries (columns) with replacement; row
    :math:`r`'s mean on resample :math:`b` is :math:`\bar x^*_{rb} =
    \frac{1}{n}\sum_i c_{bi} x_{ri}` with :math:`c_{bi}` how often query
    :math:`i` was drawn. The interval of row :math:`r` is the pair of
    :math:`(1-c)/2` and :math:`(1+c)/2` quantiles (linear interpolation,
    Hyndman & Fan's type 7) of its :math:`B` resampled means (Efron &
    Tibshirani 1993, ch. 13). Both ends lie within ``[min(x_r), max(x_r)]``.

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
    cache : ResampleCache, optional
        Counts drawn by an earlier call with the same queries, resamples and
        seed are reused from it (the same numbers, without drawing them).

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
    if n < 2 or rows == 0:
        return np.full(rows, np.nan), np.full(rows, np.nan)
    means = _resampled_means(x, _batches(n, n_resamples, seed, cache))
    return _ends(x, *_tail_quantiles(means, confidence))


def paired_bootstrap_intervals(
    values: FloatArray,
    pairs: Sequence[tuple[int, int]],
    *,
    confidence: float = 0.95,
    n_resamples: int = 10000,
    seed: int | None = 0,
    cache: ResampleCache | None = None,
) -> tuple[FloatArray, FloatArray]:
    r"""Bootstrap intervals of several runs' means and of differences between them.

    The runs' rows are resampled together as in :func:`bootstrap_intervals`.
    The difference of runs :math:`a` and :math:`b` on resample :math:`b'` is
    the difference of their resampled means, :math:`\bar d^*_{b'} =
    \bar a^*_{b'} - \bar b^*_{b'}`, which is the resampled mean of the
    per-query differences :math:`a_i - b_i` (the same counts; equal up to
    rounding), so the paired differences need no resampling of their own
    (Efron & Tibshirani 1993, ch. 13; the paired design of Sakai 2006).

    Parameters
    ----------
    values : ndarray, shape (n_runs, n_queries)
        The runs' per-query values on the same queries (no NaN).
    pairs : sequence of (int, int)
        Rows ``(a, b)`` whose difference ``a - b`` gets an interval.
    confidence, n_resamples, seed, cache
        As for :func:`bootstrap_intervals`.

    Returns
    -------
    low, high : ndarray, shape (n_runs + len(pairs),)
        The runs' ends, then the differences' in the order of ``pairs``.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[0.5, 0.7, 0.9, 0.6], [0.4, 0.7, 0.8, 0.6]])
    >>> low, high = paired_bootstrap_intervals(x, [(0, 1)], n_resamples=500)
    >>> bool(0.0 <= low[2] <= high[2] <= 0.1)
    True
    """
    x = np.atleast_2d(np.asarray(values, dtype=np.float64))
    runs, n = x.shape
    rows = runs + len(pairs)
    if n < 2 or runs == 0:
        return np.full(rows, np.nan), np.full(rows, np.nan)
    means = _resampled_means(x, _batches(n, n_resamples, seed, cache))
    low, high = np.empty(rows), np.empty(rows)
    # the differences a few at a time: at --rounds 10 million a row of resampled means is
    # 80 MB
    step = max(1, _BATCH_CELLS // max(1, n_resamples))
    for lo in range(0, len(pairs), step):
        chunk = pairs[lo:lo + step]
        a = np.fromiter((p[0] for p in chunk), dtype=np.intp, count=len(chunk))
        b = np.fromiter((p[1] for p in chunk), dtype=np.intp, count=len(chunk))
        at = slice(runs + lo, runs + lo + len(chunk))
        low[at], high[at] = _ends(x[a] - x[b], *_tail_quantiles(means[a] - means[b], confidence))
    low[:runs], high[:runs] = _ends(x, *_tail_quantiles(means, confidence))
    return low, high


def bootstrap_intervals_each(
    values: FloatArray,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10000,
    seed: int | None = 0,
) -> tuple[FloatArray, FloatArray]:
    """Each row's interval exactly as ``bootstrap_intervals(row[None, :])`` gives it.

    The rows share one set of resamples (drawn once, not once per row) and each
    row's means are a separate product, as for a single row, so the numbers are
    the same to the last bit; for several metrics over the same queries this is
    several times faster.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1.0, 0.0, 0.5, 0.25], [0.2, 0.4, 0.6, 0.8]])
    >>> low, high = bootstrap_intervals_each(x, n_resamples=200)
    >>> one = bootstrap_intervals(x[1:], n_resamples=200)
    >>> bool(low[1] == one[0][0] and high[1] == one[1][0])
    True
    """
    x = np.atleast_2d(np.asarray(values, dtype=np.float64))
    rows, n = x.shape
    if n < 2 or rows == 0:
        return np.full(rows, np.nan), np.full(rows, np.nan)
    means = np.empty((rows, n_resamples))
    for start, counts in _resample_counts(n, n_resamples, seed):
        for r in range(rows):
            means[r:r + 1, start:start + counts.shape[0]] = x[r:r + 1] @ counts.T / n
    return _ends(x, *_tail_quantiles(means, confidence))


def _batches(n: int, n_resamples: int, seed: int | None,
             cache: ResampleCache | None) -> Iterable[tuple[int, FloatArray]]:
    return _resample_counts(n, n_resamples, seed) if cache is None else cache.batches(
        n, n_resamples, seed)


def _resampled_means(x: FloatArray, batches: Iterable[tuple[int, FloatArray]]) -> FloatArray:
    """Each row's mean on each resample, shape (rows, resamples) (the product in this order
    is the faster one)."""
    n = x.shape[1]
    out: list[tuple[int, FloatArray]] = []
    for start, counts in batches:
        out.append((start, x @ counts.T / n))
    if len(out) == 1:
        return out[0][1]
    means = np.empty((x.shape[0], out[-1][0] + out[-1][1].shape[1]))
    for start, part in out:
        means[:, start:start + part.shape[1]] = part
    return means


_COUNT_CELLS = 1 << 16  # resample-count cells per bincount: its output stays in cache


def _resample_counts(n: int, n_resamples: int, seed: int | None) -> Iterator[
        tuple[int, FloatArray]]:
    """Batches of how often each of ``n`` queries is drawn in each resample.

    The batches (and so every matrix product on them) are those of the first
    version of this function, ``_BATCH_CELLS // n`` resamples each: a product's
    rounding depends on its shape, and the intervals must not change. The draws
    are 32-bit (the generator yields the same values for any integer type when
    ``n`` < 2**31), counted a few rows at a time into one reused buffer.
    """
    rng = np.random.default_rng(seed)
    step = max(1, _BATCH_CELLS // n)
    counts = np.empty((min(step, n_resamples), n))
    dtype = np.int32 if n < 2**31 else np.int64
    rows_per_count = max(1, _COUNT_CELLS // n)
    offsets = (np.arange(rows_per_count, dtype=np.int64) * n)[:, None]
    for start in range(0, n_resamples, step):
        size = min(step, n_resamples - start)
        drawn = rng.integers(0, n, size=(size, n), dtype=dtype)
        for lo in range(0, size, rows_per_count):
            hi = min(lo + rows_per_count, size)
            flat = (offsets[:hi - lo] + drawn[lo:hi]).ravel()
            counts[lo:hi] = np.bincount(flat, minlength=(hi - lo) * n).reshape(hi - lo, n)
        yield start, counts[:size]


def _tail_quantiles(means: FloatArray, confidence: float) -> tuple[FloatArray, FloatArray]:
    """Each row's :math:`(1-c)/2` and :math:`(1+c)/2` quantiles (numpy's linear method)."""
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail], axis=1)
    return low, high


def _ends(x: FloatArray, low: FloatArray, high: FloatArray) -> tuple[FloatArray, FloatArray]:
    # Rows of equal values: exactly that value (no rounding from the product).
    flat_rows = np.all(x == x[:, :1], axis=1)
    low[flat_rows] = high[flat_rows] = x[flat_rows, 0]
    # Rounding in the product can step a hair outside the data; the ends are means of it.
    low = np.clip(low, x.min(axis=1), x.max(axis=1))
    high = np.clip(high, x.min(axis=1), x.max(axis=1))
    return low, high
