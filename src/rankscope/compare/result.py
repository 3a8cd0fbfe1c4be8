"""What a comparison returns: per-run means with intervals, per-pair tests, per-query values."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import polars as pl

from rankscope import display
from rankscope.compare.corrections import CORRECTION_NAMES
from rankscope.compare.significance import TEST_NAMES
from rankscope.errors import OptionError
from rankscope.metrics.base import Metric
from rankscope.result import EvaluationInfo

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["CompareResult", "Comparison"]

Table = Literal["comparisons", "runs", "per_query"]


def _clean(value: float | None) -> float | None:
    if value is None or math.isnan(value):
        return None
    return float(value)


@dataclass(frozen=True)
class Comparison:
    """One run against one baseline on one metric.

    ``delta`` is mean(run) - mean(baseline) over the queries both have a value
    for; ``ci_low`` / ``ci_high`` bound it; ``wins`` counts queries where the
    run is higher. NaN means no value (shown as null).
    """

    metric: str
    run: str
    baseline: str
    delta: float
    ci_low: float
    ci_high: float
    p_value: float
    p_adjusted: float
    effect_size: float
    wins: int
    ties: int
    losses: int
    n_queries: int

    def significant(self, alpha: float) -> bool:
        """Whether the adjusted p-value is below ``alpha``."""
        return not math.isnan(self.p_adjusted) and self.p_adjusted < alpha

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (NaN becomes None)."""
        return {
            "metric": self.metric,
            "run": self.run,
            "baseline": self.baseline,
            "delta": _clean(self.delta),
            "ci": [_clean(self.ci_low), _clean(self.ci_high)],
            "p_value": _clean(self.p_value),
            "p_adjusted": _clean(self.p_adjusted),
            "effect_size": _clean(self.effect_size),
            "wins": self.wins,
            "ties": self.ties,
            "losses": self.losses,
            "n_queries": self.n_queries,
        }


@dataclass
class CompareResult:
    """Runs compared on several metrics with a paired significance test.

    Attributes
    ----------
    labels : list of str
        Metric names exactly as asked for.
    metrics : list of Metric
        The parsed metric of each label.
    run_names : list of str
        The runs, in input order.
    baseline : str or None
        The baseline run; None when every pair was compared.
    query_ids : list of str
        The union of evaluated queries (axis 1 of ``values``).
    values : ndarray, shape (n_runs, n_queries, n_metrics)
        Per-query values; NaN = no value.
    n_queries : dict
        Label -> how many queries every run has a value for (the paired queries).
    means : dict
        Run -> label -> mean over the paired queries (None when there are none).
    intervals : dict
        Run -> label -> (low, high) confidence interval of the mean.
    comparisons : list of Comparison
        One per metric and compared pair.
    test, correction : str
        The test and the correction used.
    alpha, confidence : float
        Significance level; level of the intervals.
    infos : list of EvaluationInfo
        Per run: query policy and counts.
    also_means : dict
        Run -> metric name -> mean over the run's evaluated queries, of the
        metrics measured beside the comparison (``also``); empty without them.
    """

    labels: list[str]
    metrics: list[Metric]
    run_names: list[str]
    baseline: str | None
    query_ids: list[str]
    values: np.ndarray
    n_queries: dict[str, int]
    means: dict[str, dict[str, float | None]]
    intervals: dict[str, dict[str, tuple[float, float]]]
    comparisons: list[Comparison]
    test: str
    correction: str
    alpha: float
    confidence: float
    n_resamples: int
    seed: int | None
    infos: list[EvaluationInfo] = field(default_factory=list)
    also_means: dict[str, dict[str, float | None]] = field(default_factory=dict)

    # ---- lookups ---------------------------------------------------------

    def comparison(self, metric: str, run: str, baseline: str | None = None) -> Comparison:
        """The comparison of ``run`` on ``metric`` (against ``baseline`` if given)."""
        for c in self.comparisons:
            if c.metric == metric and c.run == run and (baseline is None or c.baseline == baseline):
                return c
        raise OptionError(f"no comparison of run {run!r} on {metric!r}")

    def column(self, run: str, label: str) -> np.ndarray:
        """Per-query values of one run on one metric, in ``query_ids`` order (NaN = none)."""
        return np.asarray(self.values[self._run(run), :, self._label(label)])

    def _run(self, run: str) -> int:
        if run not in self.run_names:
            raise OptionError(f"no run {run!r}; runs: {', '.join(self.run_names)}")
        return self.run_names.index(run)

    def _label(self, label: str) -> int:
        if label not in self.labels:
            raise OptionError(f"no metric {label!r}; metrics: {', '.join(self.labels)}")
        return self.labels.index(label)

    def worse_queries(
        self, metric: str, run: str, baseline: str | None = None, *, tolerance: float = 1e-12
    ) -> list[tuple[str, float, float, float]]:
        """The queries where ``run`` scores lower than the baseline on ``metric``, worst first.

        Returns ``(query, run value, baseline value, difference)`` tuples for
        every query both have a value for and where the run is lower by more
        than ``tolerance``; the baseline defaults to the comparison's (the
        first run in an all-pairs comparison).
        """
        base = baseline or self.baseline or self.run_names[0]
        rows = self.worse_rows(metric, run, base, tolerance=tolerance)
        x, y = self.column(run, metric)[rows], self.column(base, metric)[rows]
        return list(zip([self.query_ids[i] for i in rows.tolist()], x.tolist(), y.tolist(),
                        (x - y).tolist(), strict=True))

    def worse_rows(
        self, metric: str, run: str, baseline: str | None = None, *, tolerance: float = 1e-12
    ) -> np.ndarray:
        """:meth:`worse_queries` as rows of ``query_ids``, in its order.

        A report shows a few of each list's rows and writes their values as its
        per-query table does, so it asks for the rows, not the tuples.

        Parameters
        ----------
        metric : str
            The metric's label.
        run : str
            The run compared with the baseline.
        baseline : str, optional
            The baseline (default: the comparison's, or the first run).
        tolerance : float, default 1e-12
            How much lower than the baseline's a value must be to count.

        Returns
        -------
        numpy.ndarray
            Indices into ``query_ids``, worst first, then by query id.
        """
        base = baseline or self.baseline or self.run_names[0]
        x, y = self.column(run, metric), self.column(base, metric)
        with np.errstate(invalid="ignore"):
            lower = np.flatnonzero((x - y) < -tolerance)
        # by difference, then by query id (its rank among the ids: a report asks for every
        # metric and run, thousands of rows, so the order is found on arrays, not tuples)
        order = np.lexsort((self._id_ranks[lower], x[lower] - y[lower]))
        rows: np.ndarray = lower[order]
        return rows

    @cached_property
    def _id_ranks(self) -> np.ndarray:
        """Each query id's rank among the ids (worked out once: a report asks for it per
        metric and run)."""
        ids = self.query_ids
        ranks = np.empty(len(ids), dtype=np.int64)
        ranks[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids))
        return ranks

    @property
    def queries(self) -> str:
        """The query policy every run was evaluated with."""
        return self.infos[0].queries if self.infos else "qrels"

    def describe(self, *, runs: bool = True) -> str:
        """Lines for people: the test, correction, marks, and how queries counted.

        ``runs``: end with each run's line saying which queries were evaluated
        (``rankscope compare``'s table sends those to stderr instead).
        """
        test = TEST_NAMES[self.test]
        if self.test in ("permutation", "bootstrap"):
            test += f", {self.n_resamples} rounds, seed {self.seed}"
        correction = (
            "none needed (Tukey HSD is family-wise)"
            if self.test == "tukey" else f"{CORRECTION_NAMES[self.correction]} (per metric)"
        )
        counts = ", ".join(f"{label}: {self.n_queries[label]}" for label in self.labels)
        lines = [
            f"test: {test}; correction: {correction}; alpha {self.alpha:g}; "
            f"{self.confidence:.0%} intervals",
            f"* adjusted p < {self.alpha:g}; W/T/L = queries where the run wins / ties / "
            "loses against the baseline",
            f"queries policy {self.queries!r}; paired queries per metric: {counts}",
        ]
        if runs:
            lines += [info.describe() for info in self.infos]
        return "\n".join(lines)

    # ---- conversions -----------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``rankscope compare --format json``."""
        return {
            "runs": {
                name: {
                    "mean": dict(self.means[name]),
                    "ci": {
                        label: [_clean(lo), _clean(hi)]
                        for label, (lo, hi) in self.intervals[name].items()
                    },
                }
                for name in self.run_names
            },
            "comparisons": [c.to_dict() for c in self.comparisons],
            "baseline": self.baseline,
            "test": self.test,
            "correction": "none" if self.test == "tukey" else self.correction,
            "alpha": self.alpha,
            "confidence": self.confidence,
            "n_queries": dict(self.n_queries),
            "queries": self.queries,
            "info": [info.to_dict() for info in self.infos],
        }

    def to_polars(self, table: Table = "comparisons") -> pl.DataFrame:
        """One of three tables as a polars DataFrame.

        ``comparisons``: one row per metric and pair, with both means;
        ``runs``: one row per metric and run (mean, interval, paired queries);
        ``per_query``: one row per query and run, one column per metric.
        """
        if table == "comparisons":
            rows = [
                {
                    "metric": c.metric, "run": c.run, "baseline": c.baseline,
                    "run_mean": self.means[c.run][c.metric],
                    "baseline_mean": self.means[c.baseline][c.metric],
                    "delta": _clean(c.delta), "ci_low": _clean(c.ci_low),
                    "ci_high": _clean(c.ci_high), "p_value": _clean(c.p_value),
                    "p_adjusted": _clean(c.p_adjusted), "effect_size": _clean(c.effect_size),
                    "wins": c.wins, "ties": c.ties, "losses": c.losses,
                    "n_queries": c.n_queries, "significant": c.significant(self.alpha),
                }
                for c in self.comparisons
            ]
            return pl.DataFrame(rows, schema=_COMPARISON_SCHEMA)
        if table == "runs":
            rows = [
                {
                    "metric": label, "run": name, "mean": self.means[name][label],
                    "ci_low": _clean(self.intervals[name][label][0]),
                    "ci_high": _clean(self.intervals[name][label][1]),
                    "n_queries": self.n_queries[label],
                }
                for label in self.labels for name in self.run_names
            ]
            return pl.DataFrame(rows, schema=_RUNS_SCHEMA)
        if table == "per_query":
            n_q = len(self.query_ids)
            data: dict[str, Any] = {
                "query_id": self.query_ids * len(self.run_names),
                "run": [name for name in self.run_names for _ in range(n_q)],
            }
            for j, label in enumerate(self.labels):
                column = self.values[:, :, j].reshape(-1)
                data[label] = pl.Series(label, column, dtype=pl.Float64).fill_nan(None)
            return pl.DataFrame(data)
        raise OptionError(f"table must be comparisons, runs or per_query, not {table!r}")

    def to_pandas(self, table: Table = "comparisons") -> Any:
        """As :meth:`to_polars`, converted to pandas (needs the ``pandas`` extra)."""
        from rankscope.data.formats import require_pandas

        require_pandas("converting results to pandas")
        return self.to_polars(table).to_pandas()

    def render(self, fmt: str = "table") -> str:
        """Text in one of the formats of ``rankscope compare --format``.

        Made by :func:`rankscope.render.comparison.render_comparison` (this
        method delegates to it).
        """
        return display.comparison_text(self, fmt)

    def __repr__(self) -> str:
        return self.render("table")

    def _repr_html_(self) -> str:
        return self.render("html")

    # ---- plots (need the ``plot`` extra) -------------------------------------

    def plot_differences(self, metric: str, run: str | None = None) -> Figure:
        """Per-query differences to the baseline, sorted.

        Delegates to :func:`rankscope.render.plots.plot_differences`.
        """
        return display.comparison_figure(self, "differences", metric, run)  # type: ignore[no-any-return]

    def plot_distribution(self, metric: str) -> Figure:
        """Distribution of per-query values of every run on one metric.

        Delegates to :func:`rankscope.render.plots.plot_distribution`.
        """
        return display.comparison_figure(self, "distribution", metric)  # type: ignore[no-any-return]


_COMPARISON_SCHEMA = {
    "metric": pl.String, "run": pl.String, "baseline": pl.String,
    "run_mean": pl.Float64, "baseline_mean": pl.Float64, "delta": pl.Float64,
    "ci_low": pl.Float64, "ci_high": pl.Float64, "p_value": pl.Float64,
    "p_adjusted": pl.Float64, "effect_size": pl.Float64, "wins": pl.Int64, "ties": pl.Int64,
    "losses": pl.Int64, "n_queries": pl.Int64, "significant": pl.Boolean,
}
_RUNS_SCHEMA = {
    "metric": pl.String, "run": pl.String, "mean": pl.Float64, "ci_low": pl.Float64,
    "ci_high": pl.Float64, "n_queries": pl.Int64,
}
