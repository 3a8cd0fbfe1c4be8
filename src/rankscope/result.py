"""What an evaluation returns: means, their spread, per-query values, and how queries counted.

Beside each mean a result carries the standard deviation of the per-query
values (population, as ranx's ``return_std``) and a 95% percentile bootstrap
interval of the mean (:func:`rankscope.spread.bootstrap_intervals`, 10,000
resamples, seeded: the same numbers every time), both over the queries with a
value. The interval is computed on first use and kept. Metrics aggregated by a
sum or a geometric mean (``num_ret``, ``gm_map``) have a standard deviation but
no interval.

Whether the renderings (text, JSON, frames) show the interval is the result's
``show_interval`` choice: ``"always"`` (the library default), ``"never"``, or
``"auto"`` (the command line's default), which shows it only up to
:data:`AUTO_INTERVAL_QUERIES` queries per metric. The bootstrap's cost grows as
resamples x queries, so above that the interval would be most of an
evaluation's time. A rendering that leaves it out says why
(:meth:`EvaluationResult.interval_skipped`); ``result.interval`` itself
always computes when read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

import numpy as np
import polars as pl

from rankscope import display
from rankscope.metrics.base import Metric
from rankscope.spread import bootstrap_intervals_each, population_std

__all__ = [
    "AUTO_INTERVAL_QUERIES", "CONFIDENCE", "INTERVAL_CHOICES", "EvaluationInfo",
    "EvaluationResult", "IntervalChoice", "interval_seconds",
]

CONFIDENCE = 0.95
"""The level of the interval every result reports."""
_RESAMPLES = 10000

AUTO_INTERVAL_QUERIES = 10_000
"""Most queries per metric for which ``show_interval="auto"`` shows the interval.

At 10,000 queries the 10,000 resamples take about 1 s; every TREC-sized and
MS MARCO dev-sized evaluation (6,980 queries) stays under it.
"""

IntervalChoice = Literal["auto", "always", "never"]
INTERVAL_CHOICES: tuple[IntervalChoice, ...] = ("auto", "always", "never")

# Cost model of the default interval, from the recorded timings (docs/performance.md,
# row "spread"): drawing one set of resamples costs about 1e-8 s per resample x query
# (0.1 s at 1,000 queries, 1 s at 10,000, 10 s at 100,000), each metric sharing it
# adds about a tenth of that (1.3 s for 4 metrics at 10,000 queries).
_DRAW_SECONDS_PER_CELL = 1e-8
_METRIC_SECONDS_PER_CELL = 1e-9


def interval_seconds(groups: dict[int, int], n_resamples: int = _RESAMPLES) -> float:
    """Rough CPU seconds of the intervals: query count -> how many metrics share its draws.

    Examples
    --------
    >>> round(interval_seconds({100_000: 1}), 1)
    11.0
    """
    return sum(n_resamples * n * (_DRAW_SECONDS_PER_CELL + k * _METRIC_SECONDS_PER_CELL)
               for n, k in groups.items())


@dataclass(frozen=True)
class EvaluationInfo:
    """Which policy produced a result and how many queries each side had."""

    run_name: str
    queries: str
    ties: str
    unjudged: str
    n_qrels_queries: int
    n_run_queries: int
    n_evaluated: int
    missing_from_run: list[str] = field(default_factory=list)
    run_only: list[str] = field(default_factory=list)
    conventions: str | None = None

    def describe(self) -> str:
        """One line for people: the policy and the query counts."""
        text = (
            f"run {self.run_name!r}: {self.n_evaluated} queries evaluated "
            f"(policy {self.queries!r}; qrels {self.n_qrels_queries}, run {self.n_run_queries}"
        )
        if self.missing_from_run:
            verb = {"qrels": "scored as empty", "intersection": "left out",
                    "zero": "scored 0"}.get(self.queries, "without a value")
            text += f"; {len(self.missing_from_run)} missing from the run, {verb}"
        if self.run_only:
            text += f"; {len(self.run_only)} only in the run, ignored"
        text += f"; ties {self.ties!r}, unjudged {self.unjudged!r}"
        if self.conventions is not None:
            text += f", conventions {self.conventions!r}"
        return text + ")"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "run": self.run_name,
            "queries": self.queries,
            "ties": self.ties,
            "unjudged": self.unjudged,
            "conventions": self.conventions,
            "n_qrels_queries": self.n_qrels_queries,
            "n_run_queries": self.n_run_queries,
            "n_evaluated": self.n_evaluated,
            "missing_from_run": list(self.missing_from_run),
            "run_only": list(self.run_only),
        }


def _seconds(seconds: float) -> str:
    """A rough duration for people: 'under 1 s', 'about 3 s', 'about 40 s', 'about 2 min'."""
    if seconds < 1:
        return "under 1 s"
    if seconds < 120:
        return f"about {float(f'{seconds:.1g}'):.0f} s"
    return f"about {round(seconds / 60):,} min"


def _clean(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


@dataclass
class EvaluationResult:
    """Means and per-query values of one run, with the counting policy.

    Attributes
    ----------
    labels : list of str
        Metric names exactly as asked for.
    metrics : list of Metric
        The parsed metric of each label.
    query_ids : list of str
        The evaluated queries (rows of ``values``).
    values : ndarray, shape (n_queries, n_metrics)
        Per-query values; NaN means null (no value).
    means : dict
        Label -> aggregated value (None when no query has a value).
    info : EvaluationInfo
        Policy and query counts.
    show_per_query : bool
        Whether the renderings show per-query values.
    show_interval : {"always", "auto", "never"}
        Whether the renderings show the interval: always (default), never, or
        up to :data:`AUTO_INTERVAL_QUERIES` queries per metric (``auto``).
        ``interval`` computes when read, whatever this says.
    """

    labels: list[str]
    metrics: list[Metric]
    query_ids: list[str]
    values: np.ndarray
    means: dict[str, float | None]
    info: EvaluationInfo
    show_per_query: bool = False
    show_interval: IntervalChoice = "always"

    def __getitem__(self, label: str) -> float | None:
        return self.means[label]

    @cached_property
    def std(self) -> dict[str, float | None]:
        """Label -> population standard deviation of the per-query values with a value.

        ranx's ``return_std`` (``np.std``, divisor n); None when no query has a value.
        """
        return {label: population_std(self.values[:, j]) for j, label in enumerate(self.labels)}

    @cached_property
    def interval(self) -> dict[str, tuple[float, float] | None]:
        """Label -> 95% percentile bootstrap interval of the mean (None without one).

        Queries with a value are resampled 10,000 times (seed 0); None for fewer
        than two such queries or a metric not aggregated by a mean.
        """
        return self.intervals()

    def intervals(self, confidence: float = CONFIDENCE, *, n_resamples: int = _RESAMPLES,
                  seed: int | None = 0) -> dict[str, tuple[float, float] | None]:
        """Bootstrap intervals of the means at another level or resample count."""
        out: dict[str, tuple[float, float] | None] = dict.fromkeys(self.labels)
        for columns in self._interval_groups().values():
            rows = np.stack([self.values[:, j][~np.isnan(self.values[:, j])] for j in columns])
            low, high = bootstrap_intervals_each(rows, confidence=confidence,
                                                 n_resamples=n_resamples, seed=seed)
            for k, j in enumerate(columns):
                out[self.labels[j]] = (float(low[k]), float(high[k]))
        return out

    def _interval_groups(self) -> dict[int, list[int]]:
        """Query count -> the columns whose intervals are drawn from that many values.

        The resamples depend only on how many values are drawn from (and the seed), so
        metrics with as many values share one set: drawing them is most of the work,
        and each metric's numbers are those it gets alone (bootstrap_intervals_each).
        """
        groups: dict[int, list[int]] = {}
        for j, metric in enumerate(self.metrics):
            n = int(np.count_nonzero(~np.isnan(self.values[:, j])))
            if metric.spec.aggregate == "mean" and n >= 2:
                groups.setdefault(n, []).append(j)
        return groups

    def interval_skipped(self) -> str | None:
        """Why the renderings leave the interval out under ``show_interval``; None if they show it.

        ``"auto"`` leaves it out when a metric with an interval has more than
        :data:`AUTO_INTERVAL_QUERIES` queries with a value; the reason names the
        largest count and the estimated cost.
        """
        if self.show_interval == "always":
            return None
        groups = self._interval_groups()
        if not groups:
            return None  # no metric has an interval: nothing is left out
        if self.show_interval == "never":
            return "intervals not asked for"
        largest = max(groups)
        if largest <= AUTO_INTERVAL_QUERIES:
            return None
        seconds = interval_seconds({n: len(cols) for n, cols in groups.items()})
        return (f"intervals not computed for {largest:,} queries (more than "
                f"{AUTO_INTERVAL_QUERIES:,}; {_seconds(seconds)} to compute)")

    def shown_interval(self) -> dict[str, tuple[float, float] | None]:
        """The intervals as the renderings show them: all None when :meth:`interval_skipped`."""
        if self.interval_skipped() is not None:
            return dict.fromkeys(self.labels)
        return self.interval

    @property
    def mean(self) -> dict[str, float | None]:
        """Label -> aggregated value (alias of ``means``)."""
        return dict(self.means)

    @property
    def n_queries(self) -> dict[str, int]:
        """Label -> how many queries its mean was taken over (those with a value).

        Under the null rules (``unjudged="null"``) or the ``nonnull`` query
        policy a metric can have no value for some queries, so the counts
        differ by metric.
        """
        counts = np.count_nonzero(~np.isnan(self.values), axis=0)
        return {label: int(counts[j]) for j, label in enumerate(self.labels)}

    @property
    def per_query(self) -> dict[str, dict[str, float | None]]:
        """Query id -> {label: value} (None = null)."""
        return {
            q: {label: _clean(self.values[i, j]) for j, label in enumerate(self.labels)}
            for i, q in enumerate(self.query_ids)
        }

    def column(self, label: str) -> np.ndarray:
        """Per-query values of one metric (NaN = null), in ``query_ids`` order."""
        return self.values[:, self.labels.index(label)]

    def to_dict(self, *, per_query: bool | None = None) -> dict[str, Any]:
        """The JSON shape of ``rankscope evaluate --format json``."""
        show = self.show_per_query if per_query is None else per_query
        skipped = self.interval_skipped()
        out: dict[str, Any] = {"mean": dict(self.means), "n_queries": self.n_queries,
                               "std": dict(self.std),
                               "interval": {k: None if v is None else list(v)
                                            for k, v in self.shown_interval().items()},
                               "confidence": CONFIDENCE}
        if skipped is not None:
            out["interval_skipped"] = skipped
        if show:
            out["per_query"] = self.per_query
        out["info"] = self.info.to_dict()
        return out

    def to_polars(self, *, per_query: bool | None = None) -> pl.DataFrame:
        """Means as one row per metric (with ``n_queries``), or per-query values."""
        show = self.show_per_query if per_query is None else per_query
        if show:
            data: dict[str, Any] = {"query_id": self.query_ids}
            for j, label in enumerate(self.labels):
                data[label] = pl.Series(label, self.values[:, j]).fill_nan(None)
            return pl.DataFrame(data)
        counts = self.n_queries
        spans = self.shown_interval()
        return pl.DataFrame(
            {"metric": self.labels, "value": [self.means[label] for label in self.labels],
             "n_queries": [counts[label] for label in self.labels],
             "std": [self.std[label] for label in self.labels],
             "ci_low": [None if spans[label] is None else spans[label][0]  # type: ignore[index]
                        for label in self.labels],
             "ci_high": [None if spans[label] is None else spans[label][1]  # type: ignore[index]
                         for label in self.labels]},
            schema={"metric": pl.String, "value": pl.Float64, "n_queries": pl.Int64,
                    "std": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64},
        )

    def to_pandas(self, *, per_query: bool | None = None) -> Any:
        """As :meth:`to_polars`, converted to pandas (needs the ``pandas`` extra)."""
        from rankscope.data.formats import require_pandas

        require_pandas("converting results to pandas")
        return self.to_polars(per_query=per_query).to_pandas()

    def render(self, fmt: str = "table", *, per_query: bool | None = None) -> str:
        """Text in one of the formats of ``rankscope evaluate --format``.

        Made by :func:`rankscope.render.tabular.render_evaluation` (this method
        delegates to it).
        """
        show = self.show_per_query if per_query is None else per_query
        return display.evaluation_text(self, fmt, per_query=show)

    def __repr__(self) -> str:
        return self.render("table")

    def _repr_html_(self) -> str:
        return display.evaluation_html(self, per_query=self.show_per_query)
