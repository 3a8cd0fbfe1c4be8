r"""The CI regression check: is a run significantly worse than its baseline?

For each metric, both runs are evaluated against the same qrels (every query
with judgments; a query a run lacks scores as an empty ranking) and paired
by query: :math:`d_i = x_i - y_i` (run minus baseline). With the allowed
drop :math:`\delta \ge 0` the check is a **one-sided paired test** of

.. math:: H_0: \mu_d \ge -\delta \quad \text{against} \quad H_1: \mu_d < -\delta

and the run **regresses** on that metric when :math:`H_0` is rejected at
level :math:`\alpha`: the data say, with error rate at most alpha, that the
run's mean is lower than the baseline's by more than the allowed drop. A
drop smaller than :math:`\delta`, or one the queries cannot tell from noise,
passes. The default test is Student's t on the differences
(``scipy.stats.ttest_1samp(d, -delta, alternative="less")``); ``wilcoxon``
uses the signed-rank test on :math:`d_i + \delta`
(``scipy.stats.wilcoxon(d + delta, alternative="less")``). When every
difference is the same (no variance) the answer is exact: a regression iff
that difference is below :math:`-\delta`.

The check fails when any metric regresses. Exit codes of ``rankscope
check``: 0 pass, 1 regression, 2 bad input (unreadable file, unknown metric,
fewer than two paired queries).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankscope.errors import InputError, OptionError

__all__ = ["CheckResult", "MetricCheck", "check_regression"]

TESTS = ("t", "wilcoxon")


@dataclass(frozen=True)
class MetricCheck:
    """The verdict on one metric."""

    metric: str
    n_queries: int
    mean_baseline: float
    mean_run: float
    delta: float
    """mean(run) - mean(baseline) over the paired queries."""
    p_value: float
    """One-sided p-value of H0: mean difference >= -max_drop."""
    regression: bool

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class CheckResult:
    """Every metric's verdict and the rule applied."""

    checks: list[MetricCheck]
    run: str
    baseline: str
    max_drop: float
    alpha: float
    test: str

    @property
    def regression(self) -> bool:
        """Whether any metric regressed (the check fails)."""
        return any(c.regression for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"run": self.run, "baseline": self.baseline, "max_drop": self.max_drop,
                "alpha": self.alpha, "test": self.test, "regression": self.regression,
                "metrics": [c.to_dict() for c in self.checks]}


def one_sided_p(diff: np.ndarray, max_drop: float, test: str) -> float:
    """P-value of H0: mean(diff) >= -max_drop against H1: mean(diff) < -max_drop."""
    shifted = np.asarray(diff, dtype=np.float64) + max_drop
    if np.all(shifted == shifted[0]):  # no variance: the answer is certain
        return 0.0 if shifted[0] < 0 else 1.0
    from rankscope.compare.significance import require_scipy

    stats = require_scipy("the regression check")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if test == "wilcoxon":
            return float(stats.wilcoxon(shifted, alternative="less").pvalue)
        return float(stats.ttest_1samp(shifted, 0.0, alternative="less").pvalue)


def check_regression(
    qrels: Any,
    run: Any,
    baseline: Any,
    metrics: Any,
    *,
    max_drop: float = 0.0,
    alpha: float = 0.05,
    test: str = "t",
    conventions: str | None = None,
) -> CheckResult:
    """Check a run against a baseline (see the module docstring for the rule).

    Parameters
    ----------
    qrels, run, baseline
        Anything :func:`rankscope.evaluate` reads (paths, tables, dicts).
    metrics : str or sequence of str
        Metric names (``nDCG@10``, ``P@5``, ...).
    max_drop : float, default 0
        The allowed drop of the mean, in the metric's units (>= 0).
    alpha : float, default 0.05
        Level of the one-sided test, in (0, 1).
    test : {"t", "wilcoxon"}, default "t"
    conventions : str, optional
        A tool's conventions profile for the metrics (as in
        :func:`rankscope.evaluate`).

    Returns
    -------
    CheckResult

    Examples
    --------
    >>> qrels = {f"q{i}": {"good": 1} for i in range(6)}
    >>> base = {f"q{i}": {"good": 2, "bad": 1} for i in range(6)}
    >>> worse = {f"q{i}": {"good": 1, "bad": 2} for i in range(6)}
    >>> check_regression(qrels, worse, base, "P@1").regression
    True
    >>> check_regression(qrels, base, worse, "P@1").regression
    False
    """
    from rankscope.data.tables import as_qrels, as_run
    from rankscope.engine.evaluate import evaluate

    if test not in TESTS:
        raise OptionError(f"test must be one of {', '.join(TESTS)}, not {test!r}")
    if isinstance(max_drop, bool) or not isinstance(max_drop, int | float) or not (
            max_drop >= 0 and math.isfinite(max_drop)):
        raise OptionError(f"max_drop must be a number >= 0, not {max_drop!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha < 1:
        raise OptionError(f"alpha must be in (0, 1), not {alpha!r}")
    qrels_t = as_qrels(qrels)
    run_t = as_run(run)
    base_t = as_run(baseline)
    asked = [metrics] if isinstance(metrics, str) else list(metrics)
    ours = evaluate(qrels_t, run_t, asked, conventions=conventions)
    theirs = evaluate(qrels_t, base_t, asked, conventions=conventions)
    if ours.query_ids != theirs.query_ids:
        raise InputError("the two runs were evaluated on different queries")
    checks = []
    for j, label in enumerate(ours.labels):
        x = np.asarray(ours.values[:, j], dtype=np.float64)
        y = np.asarray(theirs.values[:, j], dtype=np.float64)
        keep = ~(np.isnan(x) | np.isnan(y))
        x, y = x[keep], y[keep]
        if x.size < 2:
            raise InputError(f"{label}: the check needs two or more queries with a value in "
                             f"both runs, found {x.size}")
        diff = x - y
        p = one_sided_p(diff, float(max_drop), test)
        checks.append(MetricCheck(
            metric=label, n_queries=int(x.size), mean_baseline=float(y.mean()),
            mean_run=float(x.mean()), delta=float(diff.mean()), p_value=p,
            regression=bool(p < alpha)))
    return CheckResult(checks=checks, run=run_t.name, baseline=base_t.name,
                       max_drop=float(max_drop), alpha=float(alpha), test=test)
