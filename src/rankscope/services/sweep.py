"""A sweep: one endpoint over a grid of settings, every configuration snapshotted and measured.

Each ``--grid KEY=V1,V2,...`` is an axis (:mod:`rankscope.search.variants`:
a dotted key of the endpoint file or a template placeholder, values read as
TOML scalars); the configurations are their cross product, in the order the
axes and values were given. The **base** is the file as written: the grid
point that sets every key to the file's own value, or, when no grid point
does, one more configuration measured first.

For every configuration, what ``rankscope snapshot`` and ``rankscope
evaluate`` would do with its endpoint file, and nothing else: the query set
is sent (:func:`rankscope.services.snapshots.take_snapshot`, recorded in the
store when one is given, named after the values), the answers are written as
the TREC run ``rankscope snapshot -o`` writes (the engine's order) and read
back and evaluated as ``rankscope evaluate`` reads and evaluates a run file
(:func:`rankscope.engine.evaluate.evaluate`): a configuration's means and
intervals are that command's numbers on that file. Then:

- the **holes**: the unjudged results of each configuration's top k
  (:func:`rankscope.judgments.coverage.coverage`), and the batch of all of
  them to grade (:func:`rankscope.services.snapshot_diff.holes`);
- **against the base**, per metric, the delta with a paired test and the
  p-values adjusted across the configurations (:func:`rankscope.compare`,
  Holm by default);
- the **best** configuration by the first metric, whether its gain over the
  base is significant after the correction, and a warning when the holes
  could change the order: a configuration whose unjudged top-k results, were
  they relevant (the highest grade of the judgments), would score above the
  best's measured value.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from rankscope.errors import OptionError
from rankscope.search.variants import toml_text
from rankscope.services.sweep_grid import Axis, Configuration, configurations, read_axes

if TYPE_CHECKING:
    from rankscope.compare.result import CompareResult, Comparison
    from rankscope.data.tables import Qrels
    from rankscope.engine.conventions import MetricPlan
    from rankscope.judgments.coverage import Coverage
    from rankscope.result import EvaluationResult
    from rankscope.search.types import QueryItem
    from rankscope.services.snapshots import AnswerCounts
    from rankscope.store.db import Store

__all__ = ["Axis", "Configuration", "Measured", "Sweep", "configurations", "json_text",
           "read_axes", "run_sweep"]


@dataclass
class Measured:
    """One configuration's snapshot and numbers."""

    configuration: Configuration
    run_path: Path
    """The run as ``rankscope snapshot -o`` writes it (in a temporary directory without -o)."""
    result: EvaluationResult
    """``rankscope evaluate``'s numbers on that run."""
    coverage: Coverage
    """Its top k's graded share; ``ungraded``: its holes."""
    if_relevant: float | None
    """The first metric were its holes relevant (the judgments' highest grade)."""
    counts: AnswerCounts
    snapshot_id: int | None = None
    engine_version: str | None = None

    @property
    def label(self) -> str:
        """``#3``."""
        return self.configuration.label


@dataclass
class Sweep:
    """What a sweep measured, and what it concludes."""

    endpoint: str
    kind: str
    depth: int
    k: int
    n_queries: int
    metrics: list[str]
    axes: list[Axis]
    measured: list[Measured]
    """In grid order (the base measured apart first)."""
    compared: CompareResult | None
    """Each configuration against the base (None: the grid is the base alone)."""
    test: str = "t"
    correction: str = "holm"
    alpha: float = 0.05
    holes: pl.DataFrame = field(default_factory=pl.DataFrame)
    """Every unjudged (query, document) of any configuration's top k, once
    (:func:`rankscope.services.snapshot_diff.holes`): the next batch to grade."""
    warnings: list[str] = field(default_factory=list)
    sample: dict[str, int] | None = None
    """``{"of": grid size, "seed": seed}`` when a random sample of the grid was measured."""

    @property
    def base(self) -> Measured:
        """The file as written."""
        return next(m for m in self.measured if m.configuration.base)

    def ranked(self) -> list[Measured]:
        """Best first by the first metric's mean (a configuration without one last)."""
        first = self.metrics[0]

        def key(m: Measured) -> tuple[bool, float]:
            value = m.result.means.get(first)
            return (value is None, -(value if value is not None else 0.0))

        return sorted(self.measured, key=key)

    def comparison(self, measured: Measured, metric: str) -> Comparison | None:
        """The configuration against the base on ``metric`` (None for the base itself)."""
        for c in self.compared.comparisons if self.compared is not None else ():
            if c.run == measured.label and c.metric == metric:
                return c
        return None

    @property
    def correction_said(self) -> str:
        """How the p-values were adjusted, in words."""
        from rankscope.compare.corrections import CORRECTION_NAMES
        from rankscope.compare.significance import TEST_NAMES

        n = len(self.measured) - 1
        test = TEST_NAMES.get(self.test, self.test)
        how = ("not adjusted" if self.correction == "none" else
               f"adjusted by {CORRECTION_NAMES[self.correction]}'s method")
        return (f"{test} of each configuration against the base, p-values {how} across the "
                f"{n} comparison{'s' if n != 1 else ''} of each metric")

    def verdict(self) -> str:
        """Which configuration is best on the first metric, and whether that is significant."""
        first = self.metrics[0]
        ranked = self.ranked()
        best = ranked[0]
        value = best.result.means.get(first)
        if value is None:
            return f"no configuration has a value of {first}"
        tied = [m for m in ranked[1:] if m.result.means.get(first) == value]
        also = (f" (tied with {', '.join(m.label for m in tied)})" if tied else "")
        if best.configuration.base:
            return (f"best on {first}: the file as written ({best.label}, {value:.4f}){also}: "
                    "no configuration of the grid scores higher")
        base = self.base.result.means.get(first)
        found = self.comparison(best, first)
        said = f"best on {first}: {best.label} {best.configuration.describe()}, {value:.4f}"
        if base is not None:
            said += f" against the base's {base:.4f} ({value - base:+.4f})"
        said += also
        if found is None or found.p_adjusted != found.p_adjusted:
            return said + "; no test (too few queries)"
        alpha = self.alpha
        if found.significant(alpha):
            return (said + f"; significant after the correction (adjusted p = "
                    f"{found.p_adjusted:.4g} < {alpha:g})")
        return (said + f"; not significant after the correction (adjusted p = "
                f"{found.p_adjusted:.4g} >= {alpha:g}): the grid may only have found noise")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``{"configurations": [{"values", "means", ...}], ...}``."""
        configurations = []
        for m in self.ranked():
            interval = m.result.interval
            against = {}
            for metric in self.metrics:
                c = self.comparison(m, metric)
                if c is not None:
                    against[metric] = {k: v for k, v in c.to_dict().items()
                                       if k in ("delta", "ci", "p_value", "p_adjusted", "wins",
                                                "ties", "losses", "n_queries")}
            configurations.append({
                "label": m.label, "base": m.configuration.base,
                "values": m.configuration.values, "name": m.configuration.config.name,
                "config_hash": m.configuration.config.config_hash,
                "means": {k: m.result.means.get(k) for k in self.metrics},
                "intervals": {k: (list(v) if (v := interval.get(k)) is not None else None)
                              for k in self.metrics},
                "against_base": against,
                "holes": m.coverage.ungraded.height, "positions": m.coverage.positions,
                "coverage": m.coverage.overall,
                "if_holes_relevant": {self.metrics[0]: m.if_relevant},
                "snapshot_id": m.snapshot_id, "run": str(m.run_path),
                "answers": m.counts.describe() or "whole",
            })
        return {"endpoint": self.endpoint, "kind": self.kind, "depth": self.depth,
                "k": self.k, "queries": self.n_queries, "metrics": self.metrics,
                "grid": {a.key: list(a.values) for a in self.axes},
                "test": self.test, "correction": self.correction,
                "alpha": self.alpha, "correction_said": self.correction_said,
                "configurations": configurations, "best": self.ranked()[0].label,
                "verdict": self.verdict(), "warnings": list(self.warnings),
                "sample": self.sample}


def _max_grade(qrels: Qrels) -> float | None:
    value = qrels.frame.get_column("grade").drop_nulls().max()
    return None if value is None else float(value)  # type: ignore[arg-type]


def _if_relevant(qrels: Qrels, run: Any, holes: pl.DataFrame, metric: MetricPlan,
                 options: Any) -> float | None:
    """``metric`` (one, its name read already) were the holes judged at the qrels' highest
    grade."""
    from rankscope.data.tables import Qrels as QrelsTable
    from rankscope.engine.evaluate import evaluate

    top = _max_grade(qrels)
    if top is None or top <= 0 or holes.height == 0:
        return None
    filled = holes.select("query_id", "doc_id").with_columns(pl.lit(top).alias("grade"))
    kept = qrels.frame.join(filled, on=["query_id", "doc_id"], how="anti")
    frame = pl.concat([kept.select("query_id", "doc_id", "grade"), filled])
    augmented = QrelsTable(frame, source=f"{qrels.source} with the holes at {top:g}")
    return evaluate(augmented, run, metric, options=options).means.get(metric.labels[0])


async def _take(configuration: Configuration, queries: Sequence[QueryItem], *, depth: int,
                store: Store | None, concurrency: int, query_set_name: str,
                query_set_source: str | None, advance: Callable[[int], None] | None,
                open_options: Mapping[str, Any]) -> Any:
    from rankscope.search.config import open_endpoint
    from rankscope.services.snapshots import take_snapshot

    endpoint = open_endpoint(configuration.config, **open_options)
    try:
        return await take_snapshot(endpoint, queries, depth=depth,
                                   name=configuration.config.name, store=store,
                                   query_set_name=query_set_name,
                                   query_set_source=query_set_source,
                                   concurrency=concurrency, advance=advance)
    finally:
        await endpoint.aclose()


def run_sweep(
    found: Sequence[Configuration],
    queries: Sequence[QueryItem],
    qrels: Qrels,
    metrics: Sequence[str],
    *,
    axes: Sequence[Axis] = (),
    depth: int = 10,
    k: int = 10,
    store: Store | None = None,
    out_dir: str | Path | None = None,
    concurrency: int = 4,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    query_set_name: str = "queries",
    query_set_source: str | None = None,
    advance: Callable[[int], None] | None = None,
    open_options: Mapping[str, Any] | None = None,
) -> Sweep:
    """Snapshot and measure every configuration; compare each with the base.

    Parameters
    ----------
    found : sequence of Configuration
        From :func:`configurations` (exactly one is the base).
    queries : sequence of QueryItem
        The query set.
    qrels : Qrels
        The judgments.
    metrics : sequence of str
        Metric names (the first orders the table and names the best).
    axes : sequence of Axis
        The grid (for the output).
    depth : int, default 10
        Results kept per query (``rankscope snapshot``'s default).
    k : int, default 10
        Where the holes are counted.
    store : Store, optional
        Keep every snapshot there, named after its values.
    out_dir : path, optional
        Write every configuration's run (``config-NN.run``) and endpoint file
        (``config-NN.toml``) there; without it the runs live in a temporary
        directory for the evaluation only.
    concurrency : int, default 4
        Queries in flight (configurations are taken one after another).
    test, correction, alpha
        The paired test, the correction across configurations and its level
        (:func:`rankscope.compare`).
    query_set_name, query_set_source : str
        How the store names the query set.
    advance : callable, optional
        Called with 1 after each query of each configuration.
    open_options : mapping, optional
        For :func:`rankscope.search.config.open_endpoint` (the web app's boundary).

    Raises
    ------
    SearchRequestError
        A configuration's query failed for good (what was recorded stays).
    """
    from rankscope.compare.comparison import compare
    from rankscope.data.tables import Run
    from rankscope.engine.conventions import MetricPlan
    from rankscope.engine.evaluate import evaluate, plan_metrics
    from rankscope.engine.options import EvalOptions
    from rankscope.services.snapshot_diff import holes as find_holes
    from rankscope.services.snapshot_diff import ranking_from_run
    from rankscope.services.snapshots import run_lines, write_lines

    if sum(c.base for c in found) != 1:
        raise OptionError("a sweep needs exactly one base configuration")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise OptionError(f"-k must be a whole number >= 1, not {k!r}")
    options = EvalOptions.merged(None, {})
    plan = plan_metrics(list(metrics), options)  # a bad name fails before any request
    labels = list(plan.labels)
    # the first metric alone (the holes' "if relevant"), not read again per configuration
    first = MetricPlan(plan.resolved[:1], plan.conventions, plan.rel)
    temp = None
    if out_dir is None:
        temp = tempfile.TemporaryDirectory(prefix="rankscope-sweep-")
        folder = Path(temp.name)
    else:
        folder = Path(out_dir)
        folder.mkdir(parents=True, exist_ok=True)
    try:
        taken: list[tuple[Configuration, Path, EvaluationResult, Any]] = []
        runs: dict[str, Run] = {}
        for configuration in found:
            outcome = asyncio.run(_take(
                configuration, queries, depth=depth, store=store, concurrency=concurrency,
                query_set_name=query_set_name, query_set_source=query_set_source,
                advance=advance, open_options=open_options or {}))
            stem = f"config-{configuration.number:02d}"
            path = folder / f"{stem}.run"
            write_lines(path, run_lines(outcome.responses, outcome.depth, outcome.name))
            if out_dir is not None:
                _write_endpoint(folder / f"{stem}.toml", configuration)
            run = Run.read(path)  # as rankscope evaluate reads the file
            result = evaluate(qrels, run, plan, per_query=True, allow_no_overlap=True)
            taken.append((configuration, path, result, outcome))
            runs[configuration.label] = run
        rankings = [dataclasses.replace(ranking_from_run(path, ties="input"),
                                        label=configuration.config.name)
                    for configuration, path, _, _ in taken]
        coverages, batch = find_holes(rankings, qrels, k)
    finally:
        if temp is not None:
            temp.cleanup()
    measured = [Measured(configuration, path, result, covered,
                         _if_relevant(qrels, runs[configuration.label], covered.ungraded,
                                      first, options),
                         outcome.counts(), outcome.snapshot_id, outcome.engine_version)
                for (configuration, path, result, outcome), covered
                in zip(taken, coverages, strict=True)]
    base = next(m for m in measured if m.configuration.base)
    compared = None
    if len(measured) > 1:
        compared = compare(qrels, runs, plan, baseline=base.label, test=test,
                           correction=correction, alpha=alpha, progress=False,
                           allow_no_overlap=True)
    sweep = Sweep(endpoint=base.configuration.config.name, kind=base.configuration.config.kind,
                  depth=depth, k=k, n_queries=len(queries), metrics=labels, axes=list(axes),
                  measured=measured, compared=compared, test=test, correction=correction,
                  alpha=alpha, holes=batch)
    sweep.warnings = _warnings(sweep)
    return sweep


def _write_endpoint(path: Path, configuration: Configuration) -> None:
    """The configuration as an endpoint file (paths made absolute: it lives elsewhere)."""
    from rankscope.data._io import write_bytes

    settings = dict(configuration.config.settings)
    base = Path(configuration.config.base_dir or ".")
    for key in ("corpus", "index"):
        value = settings.get(key)
        if isinstance(value, str) and not value.startswith("irds:"):
            settings[key] = str((base / value).resolve())
    header = (f"rankscope sweep: configuration {configuration.label} of "
              f"{configuration.config.source or 'the endpoint'}\n"
              f"changes: {configuration.describe()}")
    write_bytes(path, toml_text(settings, header=header).encode("utf-8"))


def _warnings(sweep: Sweep) -> list[str]:
    """What could make the order wrong: holes that could turn it, answers that were off."""
    out = []
    first = sweep.metrics[0]
    ranked = sweep.ranked()
    best = ranked[0]
    value = best.result.means.get(first)
    if value is not None:
        could = [m for m in ranked[1:] if m.if_relevant is not None and m.if_relevant > value]
        if could:
            shown = ", ".join(f"{m.label} ({m.if_relevant:.4f})" for m in could[:5])
            more = f" and {len(could) - 5} more" if len(could) > 5 else ""
            out.append(
                f"the holes could change the order: were their unjudged top-{sweep.k} results "
                f"relevant, {len(could)} configuration{'s' if len(could) > 1 else ''} would "
                f"score above the best's {first} of {value:.4f}: {shown}{more}; grade the "
                "holes (-o DIR writes them to holes.csv) before trusting the order")
    for m in sweep.measured:
        said = m.counts.describe()
        if m.counts.incomplete:
            out.append(f"{m.label}: {said}: its results may miss documents")
    return out


def json_text(sweep: Sweep) -> str:
    """The sweep as ``--format json`` prints it."""
    return json.dumps(sweep.to_dict(), indent=2, ensure_ascii=False) + "\n"
