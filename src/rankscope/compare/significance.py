r"""Paired significance tests, multiple-comparison corrections and effect sizes.

Every test is paired by query: it compares the per-query values ``x`` (the
run) and ``y`` (the baseline) of the same queries. The statistics come from
scipy and statsmodels (Holm's and Bonferroni's adjustments with
statsmodels' arithmetic, :func:`adjust`); this module only chooses the calls
and handles the degenerate cases the same way for every test:

- identical per-query values (every difference 0): p = 1, interval [0, 0];
- fewer than two queries: p and interval have no value (NaN, shown as null).

Tests
-----
``t``            paired Student t, t interval: :func:`scipy.stats.ttest_rel`'s
                 arithmetic (the same bits) with the t distribution of
                 :mod:`scipy.special` (``stdtr``, ``stdtrit``), without loading
                 :mod:`scipy.stats` (0.65 s of CPU to import, most of a
                 17-run comparison's statistics).
``wilcoxon``     Wilcoxon signed-rank (:func:`scipy.stats.wilcoxon`, zero
                 differences dropped), t interval on the differences.
``permutation``  Fisher's randomization test: :func:`scipy.stats.permutation_test`
                 with ``permutation_type="samples"`` (swap the two values of a
                 query), statistic mean difference, two-sided, seeded; exact
                 when :math:`2^n` <= the number of rounds. t interval.
``bootstrap``    paired bootstrap: :func:`scipy.stats.bootstrap` of the mean
                 difference (percentile interval, seeded); the p-value is the
                 shift method of Efron & Tibshirani (1993, sec. 16.4),
                 :math:`p = (1 + \#\{b : |\bar d^*_b - \bar d| \ge |\bar d|\}) / (1 + B)`.
``tukey``        Tukey's HSD over all runs with queries as blocks (two-way
                 ANOVA without replication; Sakai 2018, ch. 4): residual mean
                 square :math:`MSE`, :math:`q = |\bar x_i - \bar x_j| / \sqrt{MSE/n}`,
                 p from :data:`scipy.stats.studentized_range` with k runs and
                 (k-1)(n-1) degrees of freedom; simultaneous intervals
                 :math:`\pm q_{1-\alpha} \sqrt{MSE/n}`. Already family-wise:
                 no further correction applies.

Intervals
---------
The intervals of means and of differences that :func:`rankscope.compare`
reports are percentile bootstrap intervals (:func:`bootstrap_intervals`):
queries are resampled with replacement, the mean of every run and every
difference is taken on each resample, and the interval runs between the
:math:`(1-c)/2` and :math:`(1+c)/2` quantiles of those means. Each end is a
mean of observed per-query values, so an interval never leaves the range of
the values, hence never the metric's range (a t interval can: with few
queries, a mean of 0.95 can get an upper end above 1). The same resamples
serve every run and difference, so they stay paired. The exception is
Tukey's HSD, whose simultaneous intervals are part of the test.

References
----------
.. [1] Smucker, Allan & Carterette, "A comparison of statistical significance
   tests for information retrieval evaluation", CIKM (2007).
.. [2] Efron & Tibshirani, "An Introduction to the Bootstrap", Chapman & Hall (1993).
.. [3] Sakai, "Laboratory Experiments in Information Retrieval", Springer (2018).
.. [4] Cohen, "Statistical Power Analysis for the Behavioral Sciences" (1988).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from rankscope.compare import t_helper
from rankscope.compare.corrections import (  # re-exported: this module's names before
    CORRECTIONS,
    adjust,
    require_statsmodels,
)
from rankscope.errors import DependencyError, OptionError
from rankscope.spread import bootstrap_intervals  # re-exported: compare's intervals

__all__ = [
    "CORRECTIONS",
    "TESTS",
    "PairedOutcome",
    "adjust",
    "bootstrap_intervals",
    "effect_size",
    "effect_sizes",
    "mean_interval",
    "paired_test",
    "prefetch_t_tests",
    "preload_test",
    "require_scipy",
    "require_statsmodels",
    "t_test_p_values",
    "tukey_hsd",
    "win_tie_loss",
    "wins_ties_losses",
]

FloatArray = npt.NDArray[np.float64]

TESTS = ("t", "wilcoxon", "permutation", "bootstrap", "tukey")
TEST_NAMES = {
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "permutation": "Fisher randomization (permutation) test",
    "bootstrap": "paired bootstrap test",
    "tukey": "Tukey HSD (queries as blocks)",
}


def require_scipy(purpose: str) -> Any:
    """Import :mod:`scipy.stats` or raise :class:`~rankscope.errors.DependencyError`."""
    try:
        from scipy import stats
    except ImportError:
        raise DependencyError("scipy", "stats", purpose) from None
    return stats


def require_t_distribution(purpose: str) -> tuple[Any, Any]:
    """Student's t distribution and its inverse (``scipy.special.stdtr``, ``stdtrit``).

    :mod:`scipy.special` alone imports in about a third of :mod:`scipy.stats`'
    time; raises :class:`~rankscope.errors.DependencyError` without scipy.
    """
    try:
        from scipy.special import stdtr, stdtrit
    except ImportError:
        raise DependencyError("scipy", "stats", purpose) from None
    return stdtr, stdtrit


def preload_test(test: str) -> None:
    """Start importing the scipy module ``test`` needs on a thread of its own; return at once.

    :mod:`scipy.special` (the t distribution of the t-test and of the other
    tests' intervals) takes about 0.2 s of CPU to import, :mod:`scipy.stats`
    about 0.7 s. A comparison reading run files spends much of that long
    waiting for the reader, so the import is started when the reading is and
    goes on meanwhile; the ``require_*`` functions then find the module loaded
    (or wait for the import under way: Python's import lock). A failing import
    is left for them to report, with their message.
    """
    import sys
    import threading

    name = "scipy.special" if test == "t" else "scipy.stats"
    if test == "t" and t_helper.current() is not None:
        # a helper process imports scipy.special and works out the t distribution; of
        # what its import loaded here, numpy.ma is still wanted (polars asks for it when
        # it takes a numpy array: 0.04 s of CPU on the thread measuring the first run)
        name = "numpy.ma"
    if name not in sys.modules:
        threading.Thread(target=_import_quietly, args=(name,), name="rankscope-preload").start()


def _import_quietly(name: str) -> None:
    import contextlib
    import importlib

    with contextlib.suppress(Exception):  # require_scipy / require_t_distribution say it
        importlib.import_module(name)


def check_test(test: str) -> str:
    """Validate a test name (raises OptionError)."""
    if test not in TESTS:
        raise OptionError(f"test must be one of {', '.join(TESTS)}, not {test!r}")
    return test


@dataclass(frozen=True)
class PairedOutcome:
    """The p-value of a paired test and an interval for the mean difference."""

    p_value: float
    ci_low: float
    ci_high: float


def _mean_difference(a: FloatArray, b: FloatArray, axis: int) -> Any:
    return np.mean(a - b, axis=axis)


def _one_sample_t(diff: FloatArray, confidence: float) -> tuple[float, float, float]:
    r"""p-value and interval of the one-sample t-test of mean 0 on ``diff`` (n >= 2).

    Step by step the arithmetic of :func:`scipy.stats.ttest_1samp` (and so of
    ``ttest_rel`` on the differences) and of its ``confidence_interval``, so
    the numbers are the same to the last bit: the mean, the variance as the
    mean squared deviation times n / (n - 1), the standard error
    :math:`\sqrt{v/n}`, :math:`t = \bar d / se`, :math:`p = 2\,F_{n-1}(-|t|)`
    and the interval :math:`\bar d + se\,F^{-1}_{n-1}((1 \mp c)/2)`.
    """
    n = diff.shape[0]
    mean, se, t = _t_statistic(diff)
    p = 2 * _t_values("stdtr", np.float64(n - 1), -np.abs(t))
    tail = (1 - np.float64(confidence)) / 2
    low, high = _t_values("stdtrit", np.int64(n - 1), np.stack((tail, 1 - tail)))
    return float(p), float(low * se + mean), float(high * se + mean)


def _t_statistic(diff: FloatArray) -> tuple[Any, Any, Any]:
    """The mean, standard error and t of ``diff`` (n >= 2), as :func:`_one_sample_t` needs;
    of each row of a 2-D ``diff`` (each row summed as a 1-D array is: the same bits)."""
    n = diff.shape[-1]
    mean = np.mean(diff, axis=-1)
    deviation = diff - np.mean(diff, axis=-1, keepdims=True)
    size = np.float64(n)
    var = np.mean(deviation**2, axis=-1) * (size / (size - 1))
    se = np.sqrt(var / n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.divide(mean - np.float64(0.0), se)
    return mean, se, t


def t_test_p_values(diffs: FloatArray) -> FloatArray:
    r"""The paired t-test's p-value of each row of per-query differences at once.

    Row :math:`i` holds :math:`d_q = x_q - y_q` over the same :math:`n`
    queries; its p-value is :math:`2\,F_{n-1}(-|t_i|)` with :math:`t_i =
    \bar d_i / (s_i / \sqrt n)`, exactly as ``paired_test(x, y, "t")`` gives
    it (1 for a row of zeros, NaN for fewer than two queries): a comparison
    tests every pair of a metric in one pass instead of one call per pair.

    Examples
    --------
    >>> import numpy as np
    >>> x, y = np.array([0.5, 0.7, 0.9, 0.6]), np.array([0.4, 0.7, 0.8, 0.6])
    >>> bool(t_test_p_values((x - y)[None, :])[0] == paired_test(x, y, "t").p_value)
    True
    """
    d = np.atleast_2d(np.asarray(diffs, dtype=np.float64))
    rows, n = d.shape
    if n < 2:
        return np.full(rows, np.nan)
    p = np.ones(rows)  # no difference at all: paired_test's answer, without the distribution
    moved = d.any(axis=1)
    if moved.any():
        _, _, t = _t_statistic(d[moved])
        p[moved] = 2 * _t_values("stdtr", np.float64(n - 1), -np.abs(t))
    return p


def prefetch_t_tests(diffs: Sequence[FloatArray], confidence: float) -> None:
    """Ask the serving helper process (:mod:`rankscope.compare.t_helper`), in one request
    for each function, for the t distribution's values that ``paired_test(x, y, "t",
    confidence=confidence)`` will need for each array of differences ``x - y``; nothing
    without a helper. The tests then find them kept: the same bits, no request each."""
    helper = t_helper.current()
    if helper is None:
        return
    dfs: list[int] = []
    points: list[Any] = []
    for diff in diffs:
        if diff.size < 2 or not diff.any():
            continue  # paired_test answers these without the distribution
        _, _, t = _t_statistic(diff)
        dfs.append(diff.shape[0] - 1)
        points.append(-np.abs(t))
    if not dfs:
        return
    helper.prefetch("stdtr", dfs, points)
    tail = (1 - np.float64(confidence)) / 2
    distinct = sorted(set(dfs))
    helper.prefetch("stdtrit", distinct * 2,
                    [tail] * len(distinct) + [1 - tail] * len(distinct))


def _t_values(name: str, df: Any, x: Any) -> Any:
    """scipy.special's ``stdtr`` or ``stdtrit`` of ``(df, x)``: from the serving helper
    process if there is one and it answers, else from scipy.special in this process."""
    helper = t_helper.current()
    if helper is not None:
        got = helper.values(name, df, x)
        if got is not None:
            return got
    stdtr, stdtrit = require_t_distribution("significance tests")
    return (stdtr if name == "stdtr" else stdtrit)(df, x)


def _t_interval(diff: FloatArray, confidence: float) -> tuple[float, float]:
    _, low, high = _one_sample_t(diff, confidence)
    return low, high


def paired_test(
    x: FloatArray,
    y: FloatArray,
    test: str,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10000,
    seed: int | None = 0,
) -> PairedOutcome:
    """Test whether ``x`` and ``y`` (paired by position) differ in mean.

    Parameters
    ----------
    x, y : ndarray
        Per-query values of the run and the baseline, same queries, no NaN.
    test : {"t", "wilcoxon", "permutation", "bootstrap"}
        See the module docstring (``tukey`` is :func:`tukey_hsd`).
    confidence : float, default 0.95
        Level of the interval for the mean difference x - y.
    n_resamples : int, default 10000
        Rounds of the permutation and bootstrap tests.
    seed : int, optional
        Seed of their random generator (None: fresh randomness).

    Returns
    -------
    PairedOutcome
    """
    check_test(test)
    if test == "tukey":
        raise OptionError("Tukey HSD compares all runs at once: use tukey_hsd")
    diff = np.asarray(x, dtype=np.float64) - np.asarray(y, dtype=np.float64)
    if diff.size < 2:
        return PairedOutcome(float("nan"), float("nan"), float("nan"))
    if not diff.any():
        return PairedOutcome(1.0, 0.0, 0.0)
    if test == "t":
        return PairedOutcome(*_one_sample_t(diff, confidence))
    stats = require_scipy("significance tests")
    with warnings.catch_warnings():
        # Near-constant differences make scipy warn; its NaN result is reported as null.
        warnings.simplefilter("ignore", RuntimeWarning)
        if test == "wilcoxon":
            p = float(stats.wilcoxon(x, y).pvalue)
            return PairedOutcome(p, *_t_interval(diff, confidence))
        if test == "permutation":
            res = stats.permutation_test(
                (x, y), _mean_difference, permutation_type="samples", vectorized=True,
                n_resamples=n_resamples, alternative="two-sided",
                rng=np.random.default_rng(seed),
            )
            return PairedOutcome(float(res.pvalue), *_t_interval(diff, confidence))
        boot = stats.bootstrap(
            (diff,), np.mean, n_resamples=n_resamples, confidence_level=confidence,
            method="percentile", vectorized=True, rng=np.random.default_rng(seed),
        )
        observed = float(np.mean(diff))
        extreme = np.abs(boot.bootstrap_distribution - observed) >= abs(observed)
        p = (1.0 + float(np.count_nonzero(extreme))) / (1.0 + extreme.size)
        ci = boot.confidence_interval
        return PairedOutcome(p, float(ci.low), float(ci.high))


def tukey_hsd(values: FloatArray, *, confidence: float = 0.95) -> tuple[FloatArray, float]:
    """Tukey's HSD over k runs, queries as blocks.

    Parameters
    ----------
    values : ndarray, shape (k_runs, n_queries)
        Per-query values, no NaN.
    confidence : float, default 0.95
        Level of the simultaneous intervals.

    Returns
    -------
    p_values : ndarray, shape (k, k)
        Family-wise p-value of every pair (1 on the diagonal).
    half_width : float
        Every pair's interval is its mean difference +/- this.
    """
    stats = require_scipy("Tukey's HSD")
    k, n = values.shape
    out = np.full((k, k), np.nan)
    if k < 2 or n < 2:
        return out, float("nan")
    run_means = values.mean(axis=1)
    residual = (values - run_means[:, None] - values.mean(axis=0)[None, :] + values.mean())
    df = (k - 1) * (n - 1)
    mse = float(np.sum(residual**2)) / df
    se = np.sqrt(mse / n)
    gaps = np.abs(run_means[:, None] - run_means[None, :])
    with np.errstate(divide="ignore", invalid="ignore"):
        q = gaps / se
    q = np.where(gaps == 0, 0.0, q)  # equal means: q = 0 even when MSE = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        upper = np.triu_indices(k, 1)
        p_upper = stats.studentized_range.sf(q[upper], k, df)
        half = float(stats.studentized_range.ppf(confidence, k, df)) * float(se)
    out[upper] = p_upper
    out[(upper[1], upper[0])] = p_upper
    np.fill_diagonal(out, 1.0)
    return np.minimum(out, 1.0), half


def mean_interval(
    x: FloatArray,
    *,
    confidence: float = 0.95,
    method: str = "t",
    n_resamples: int = 10000,
    seed: int | None = 0,
) -> tuple[float, float]:
    """An interval for the mean of per-query values.

    ``method="t"``: Student's t interval (:func:`scipy.stats.ttest_1samp`);
    ``"bootstrap"``: percentile bootstrap (:func:`scipy.stats.bootstrap`).
    NaN for fewer than two values.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.size < 2:
        return float("nan"), float("nan")
    if np.all(x == x[0]):
        return float(x[0]), float(x[0])
    if method != "bootstrap":
        _, low, high = _one_sample_t(x, confidence)
        return low, high
    stats = require_scipy("confidence intervals")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ci = stats.bootstrap(
            (x,), np.mean, n_resamples=n_resamples, confidence_level=confidence,
            method="percentile", vectorized=True, rng=np.random.default_rng(seed),
        ).confidence_interval
    return float(ci.low), float(ci.high)


def effect_size(x: FloatArray, y: FloatArray) -> float:
    r"""Cohen's :math:`d_z` for paired values: mean difference / its standard deviation.

    .. math:: d_z = \bar d / s_d, \quad d_i = x_i - y_i, \; s_d \text{ with } n - 1

    NaN when fewer than two pairs or the differences do not vary.
    """
    diff = np.asarray(x, dtype=np.float64) - np.asarray(y, dtype=np.float64)
    return float(effect_sizes(diff[None, :])[0])


def effect_sizes(diffs: FloatArray) -> FloatArray:
    """:func:`effect_size` of each row of per-query differences (the same bits)."""
    d = np.atleast_2d(np.asarray(diffs, dtype=np.float64))
    if d.shape[1] < 2:
        return np.full(d.shape[0], np.nan)
    sd = np.std(d, axis=-1, ddof=1)
    mean = np.mean(d, axis=-1)
    out = np.full(d.shape[0], np.nan)
    np.divide(mean, sd, out=out, where=sd > 0)
    return out


def win_tie_loss(x: FloatArray, y: FloatArray, *, tolerance: float = 1e-12) -> tuple[int, int, int]:
    """Queries where ``x`` beats, ties (within ``tolerance``) and loses to ``y``."""
    diff = np.asarray(x, dtype=np.float64) - np.asarray(y, dtype=np.float64)
    wins, ties, losses = wins_ties_losses(diff[None, :], tolerance=tolerance)[0]
    return int(wins), int(ties), int(losses)


def wins_ties_losses(diffs: FloatArray, *, tolerance: float = 1e-12) -> npt.NDArray[np.int64]:
    """:func:`win_tie_loss` of each row of per-query differences: rows x (wins, ties, losses)."""
    d = np.atleast_2d(np.asarray(diffs, dtype=np.float64))
    wins = np.count_nonzero(d > tolerance, axis=1)
    losses = np.count_nonzero(d < -tolerance, axis=1)
    return np.stack([wins, d.shape[1] - wins - losses, losses], axis=1).astype(np.int64)
