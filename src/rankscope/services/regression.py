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

**The interval** printed with each delta is Student's t interval of the mean
difference at level :math:`1 - 2\alpha` (90 % for alpha = 0.05): its upper
end is the one-sided :math:`1 - \alpha` upper bound, so with the t-test a
metric regresses exactly when that upper end is below :math:`-\delta`.

**What the queries can detect.** With :math:`n` paired queries and the
differences' standard deviation :math:`s`, the smallest drop the t-test
flags with probability ``power`` (0.8) is

.. math:: D = \delta + e \, s, \qquad
   P\bigl(T_{n-1}(e\sqrt{n}) > t_{1-\alpha,\,n-1}\bigr) = \text{power}

(:math:`T_\nu(\lambda)` a noncentral t; Cohen, *Statistical Power
Analysis for the Behavioral Sciences*, 1988, ch. 2). A check with
:math:`\delta > 0` warns when :math:`D > 2\delta`: a drop twice the
allowed one would go unnoticed more often than ``1 - power``, so the test
has too few queries to detect the margin asked for (the warning says about
how many would). Any check warns when its test cannot reject at all (the
signed-rank test on fewer than :math:`\log_2(1/\alpha)` queries: its
smallest p-value :math:`2^{-n}` is above alpha). The standard deviation is
the observed one, so :math:`D` is an estimate; with the Wilcoxon test it is
the t-test's figure, an approximation.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankscope.errors import InputError, OptionError, RankscopeWarning, setting

__all__ = ["CheckResult", "MetricCheck", "check_regression", "detectable_drop",
           "queries_needed"]

TESTS = ("t", "wilcoxon")
POWER = 0.8
"""The probability with which a check should catch the drop it is said to detect."""


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
    ci_low: float = float("nan")
    ci_high: float = float("nan")
    """Student's t interval of the delta at level 1 - 2 alpha (its upper end: the one-sided
    1 - alpha bound)."""
    detectable: float | None = None
    """The smallest drop flagged with probability :data:`POWER` (None: not estimable)."""
    warnings: tuple[str, ...] = ()
    """Why this metric's verdict deserves care (too few queries for the margin)."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (NaN as None)."""
        out = dict(self.__dict__)
        for key in ("ci_low", "ci_high"):
            if isinstance(out[key], float) and math.isnan(out[key]):
                out[key] = None
        out["warnings"] = list(self.warnings)
        return out


@dataclass(frozen=True)
class CheckResult:
    """Every metric's verdict and the rule applied."""

    checks: list[MetricCheck]
    run: str
    baseline: str
    max_drop: float
    alpha: float
    test: str
    notes: list[str] = field(default_factory=list)
    """What the inputs make worth knowing (a snapshot with partial answers)."""

    @property
    def regression(self) -> bool:
        """Whether any metric regressed (the check fails)."""
        return any(c.regression for c in self.checks)

    @property
    def confidence(self) -> float:
        """The level of the intervals: 1 - 2 alpha."""
        return 1.0 - 2.0 * self.alpha

    @property
    def warnings(self) -> list[str]:
        """Every metric's warnings, then the notes."""
        return [w for c in self.checks for w in c.warnings] + list(self.notes)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"run": self.run, "baseline": self.baseline, "max_drop": self.max_drop,
                "alpha": self.alpha, "test": self.test, "confidence": self.confidence,
                "power": POWER, "regression": self.regression,
                "metrics": [c.to_dict() for c in self.checks], "warnings": self.warnings}

    def to_junit(self) -> str:
        """The verdict as JUnit XML: one test case per metric, a ``failure`` when it regressed.

        The schema CI systems read (Jenkins, GitLab, GitHub's test reporters):
        ``testsuites > testsuite > testcase``, the rule in the suite's
        ``properties``, each metric's numbers in its ``system-out``, and the
        warnings in the suite's ``system-err``.
        """
        import xml.etree.ElementTree as ET

        failures = sum(c.regression for c in self.checks)
        counts = {"tests": str(len(self.checks)), "failures": str(failures), "errors": "0",
                  "skipped": "0"}
        root = ET.Element("testsuites", {"name": "rankscope check", **counts})
        suite = ET.SubElement(root, "testsuite", {
            "name": f"rankscope check: {self.run} vs {self.baseline}", **counts, "time": "0"})
        props = ET.SubElement(suite, "properties")
        for key, value in (("run", self.run), ("baseline", self.baseline),
                           ("test", self.test), ("alpha", f"{self.alpha:g}"),
                           ("max_drop", f"{self.max_drop:g}"),
                           ("confidence", f"{self.confidence:g}")):
            ET.SubElement(props, "property", {"name": key, "value": value})
        for c in self.checks:
            case = ET.SubElement(suite, "testcase", {
                "classname": f"rankscope.check.{self.run}", "name": c.metric, "time": "0"})
            summary = (f"{c.metric}: baseline {c.mean_baseline:.4f}, run {c.mean_run:.4f}, "
                       f"delta {c.delta:+.4f} ({self.confidence * 100:g}% interval "
                       f"{c.ci_low:+.4f} to {c.ci_high:+.4f}), p = {c.p_value:.4g}, "
                       f"{c.n_queries} queries")
            if c.regression:
                failure = ET.SubElement(case, "failure", {
                    "type": "regression",
                    "message": f"{c.metric} is significantly worse than the baseline by more "
                               f"than {self.max_drop:g} (delta {c.delta:+.4f}, "
                               f"p = {c.p_value:.4g})"})
                failure.text = summary
            ET.SubElement(case, "system-out").text = "\n".join([summary, *c.warnings])
        if self.warnings:
            ET.SubElement(suite, "system-err").text = "\n".join(self.warnings)
        ET.indent(root)
        return ('<?xml version="1.0" encoding="UTF-8"?>\n'
                + ET.tostring(root, encoding="unicode") + "\n")


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


def _t_power(effect: float, n: int, alpha: float) -> float:
    """Power of the one-sided one-sample t-test at standardised effect ``effect``."""
    from rankscope.compare.significance import require_scipy

    stats = require_scipy("the regression check")
    critical = stats.t.ppf(1.0 - alpha, n - 1)
    return float(stats.nct.sf(critical, n - 1, effect * math.sqrt(n)))


def detectable_drop(n: int, sd: float, max_drop: float, alpha: float,
                    power: float = POWER) -> float | None:
    """The smallest drop of the mean the one-sided t-test flags with probability ``power``.

    ``max_drop + e * sd``, ``e`` the standardised effect at which the test
    of ``n`` paired queries reaches ``power`` (see the module docstring).
    None for fewer than two queries; ``max_drop`` when ``sd`` is 0 (the
    answer is then certain).

    Examples
    --------
    >>> round(detectable_drop(30, 0.2, 0.0, 0.05), 4)
    0.093
    >>> detectable_drop(30, 0.0, 0.02, 0.05)
    0.02
    """
    if n < 2:
        return None
    if sd == 0:
        return float(max_drop)
    from scipy.optimize import brentq

    high = 1.0
    while _t_power(high, n, alpha) < power:
        high *= 2.0
    effect = brentq(lambda e: _t_power(e, n, alpha) - power, 0.0, high, xtol=1e-10)
    return float(max_drop + effect * sd)


def queries_needed(drop: float, sd: float, max_drop: float, alpha: float,
                   power: float = POWER, limit: int = 10**7) -> int | None:
    """How many paired queries the t-test needs to flag a drop of ``drop`` with ``power``.

    None when ``drop <= max_drop`` (not a regression) or past ``limit``.

    Examples
    --------
    >>> queries_needed(0.04, 0.2, 0.02, 0.05)
    620
    """
    if drop <= max_drop:
        return None
    if sd == 0:
        return 2
    effect = (drop - max_drop) / sd
    from rankscope.compare.significance import require_scipy

    stats = require_scipy("the regression check")
    guess = float((stats.norm.ppf(1 - alpha) + stats.norm.ppf(power)) ** 2 / effect**2)
    n = max(2, math.ceil(guess))
    while n > 2 and _t_power(effect, n - 1, alpha) >= power:
        n -= 1
    while _t_power(effect, n, alpha) < power:
        n += 1
        if n > limit:
            return None
    return n


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def _metric_warnings(label: str, n: int, sd: float, detectable: float | None,
                     max_drop: float, alpha: float, test: str) -> list[str]:
    out = []
    if test == "wilcoxon" and 2.0**-n > alpha:
        out.append(f"{label}: the signed-rank test cannot reject at alpha {alpha:g} with "
                   f"{n} queries (its smallest p-value is 2^-{n} = {2.0**-n:.3g}): this check "
                   "can never fail; add queries or use --test t")
    if max_drop > 0 and detectable is not None and detectable > 2 * max_drop:
        needed = queries_needed(2 * max_drop, sd, max_drop, alpha)
        more = (f"; about {needed} queries would catch a drop of {_fmt(2 * max_drop)}"
                if needed is not None else "")
        out.append(f"{label}: too few queries to detect the margin: with {n} queries only "
                   f"drops larger than {_fmt(detectable)} are caught with probability "
                   f"{POWER:g} (the allowed drop is {_fmt(max_drop)}){more}")
    return out


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
    ties: str | None = None,
    allow_no_overlap: bool = False,
    notes: list[str] | None = None,
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
        Level of the one-sided test, in (0, 0.5) (the interval is 1 - 2 alpha).
    test : {"t", "wilcoxon"}, default "t"
    conventions : str, optional
        A tool's conventions profile for the metrics (as in
        :func:`rankscope.evaluate`).
    ties : {"trec", "input", "docid_asc"}, optional
        How equal scores are ordered (as in :func:`rankscope.evaluate`;
        default: trec_eval's, or the profile's).
    allow_no_overlap : bool, default False
        Check even when a run shares no query with the qrels.
    notes : list of str, optional
        Warnings about the inputs to carry into the result (and its outputs).

    Returns
    -------
    CheckResult

    Warns
    -----
    RankscopeWarning
        A metric whose test has too few queries to detect the margin (see
        the module docstring); each also in :attr:`MetricCheck.warnings`.

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
    from rankscope.engine.evaluate import evaluate, plan_metrics
    from rankscope.engine.options import EvalOptions, OptionFields

    if test not in TESTS:
        raise OptionError(f"test must be one of {', '.join(TESTS)}, not {test!r}")
    if isinstance(max_drop, bool) or not isinstance(max_drop, int | float) or not (
            max_drop >= 0 and math.isfinite(max_drop)):
        raise OptionError(f"{setting('max_drop')} must be a number >= 0, not {max_drop!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha < 0.5:
        raise OptionError(f"{setting('alpha')} must be in (0, 0.5) (the interval shown is "
                          f"1 - 2 alpha), not {alpha!r}")
    qrels_t = as_qrels(qrels)
    run_t = as_run(run)
    base_t = as_run(baseline)
    asked = [metrics] if isinstance(metrics, str) else list(metrics)
    given: OptionFields = {}
    if conventions is not None:
        given["conventions"] = conventions
    if ties is not None:
        given["ties"] = ties  # type: ignore[typeddict-item]
    opts = EvalOptions.merged(None, given)
    plan = plan_metrics(asked, opts)  # the names read once, for both runs
    ours = evaluate(qrels_t, run_t, plan, options=opts, allow_no_overlap=allow_no_overlap)
    theirs = evaluate(qrels_t, base_t, plan, options=opts, allow_no_overlap=allow_no_overlap)
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
        from rankscope.compare.significance import mean_interval

        low, high = mean_interval(diff, confidence=1.0 - 2.0 * alpha)
        sd = float(diff.std(ddof=1))
        detectable = detectable_drop(int(x.size), sd, float(max_drop), float(alpha))
        said = _metric_warnings(label, int(x.size), sd, detectable, float(max_drop),
                                float(alpha), test)
        for message in said:
            warnings.warn(message, RankscopeWarning, stacklevel=2)
        checks.append(MetricCheck(
            metric=label, n_queries=int(x.size), mean_baseline=float(y.mean()),
            mean_run=float(x.mean()), delta=float(diff.mean()), p_value=p,
            regression=bool(p < alpha), ci_low=low, ci_high=high, detectable=detectable,
            warnings=tuple(said)))
    return CheckResult(checks=checks, run=run_t.name, baseline=base_t.name,
                       max_drop=float(max_drop), alpha=float(alpha), test=test,
                       notes=list(notes or []))
