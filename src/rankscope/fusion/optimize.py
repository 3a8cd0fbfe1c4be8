r"""A grid search of a fusion method's parameters against qrels, with cross-validation.

Every grid point is fused and evaluated per query once. Without folds, the best
point is the one with the highest mean over all queries, and that mean is
reported: tuned and judged on the same queries, it overstates what the tuned
method gains on new ones. With ``folds=k``, the queries are split into k folds
(shuffled with ``seed``); for each fold the best point is chosen on the other
folds' queries (a supervised method is also *trained* on them only) and
applied to the fold, so every reported per-query value comes from a query
that was neither trained nor tuned on. The cross-validated score is the mean
of those held-out values; ``best_params`` and ``best_run`` are then chosen
and trained on all queries, for use on new queries.

Supervised methods (``mapfuse``, ``posfuse``, ``probfuse``, ``segfuse``,
``slidefuse``, ``bayesfuse``) are cross-validated by default (5 folds).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from rankscope.data.runs import load_runs
from rankscope.data.tables import OnDuplicate, Qrels, Run, as_qrels
from rankscope.engine.conventions import MetricPlan, plan_metrics
from rankscope.engine.evaluate import aggregate, evaluate
from rankscope.engine.ranking import QueryPolicy, Ties, Unjudged
from rankscope.errors import OptionError, RankscopeWarning, setting
from rankscope.fusion.combine import GRID_NORMS, check_norm, fuse
from rankscope.fusion.methods import FusionMethod, method_spec
from rankscope.metrics.base import Metric
from rankscope.progress import step_bar

__all__ = ["FusionSearch", "default_grid", "optimize_fusion", "simplex_weights"]

RRF_KS = (1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100)
_DEFAULT_AXES: dict[str, tuple[Any, ...]] = {
    "k": RRF_KS,
    "gamma": tuple(round(0.1 * i, 1) for i in range(1, 11)),
    "sigma": (0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
    "phi": tuple(round(0.1 * i, 1) for i in range(1, 10)),
    "segments": (1, 2, 5, 10, 20, 25, 50, 100),
    "window": (0, 1, 2, 3, 5, 10, 20, 50),
}
_SUPERVISED_FOLDS = 5


def simplex_weights(n_runs: int, step: float = 0.1) -> list[tuple[float, ...]]:
    """Every weight vector on a grid of ``step`` whose weights sum to 1."""
    if not 0 < step <= 1:
        raise OptionError(f"{setting('step')} must be in (0, 1], not {step!r}")
    units = round(1 / step)
    if abs(units * step - 1) > 1e-9:
        raise OptionError(f"{setting('step')} must divide 1 evenly (0.1, 0.25, 0.5...), not "
                          f"{step!r}")
    out = []
    for combo in itertools.product(range(units + 1), repeat=n_runs):
        if sum(combo) == units:
            out.append(tuple(round(c / units, 10) for c in combo))
    return out


def default_grid(method: str, n_runs: int, *, step: float = 0.1) -> dict[str, list[Any]]:
    """The grid searched when none is given.

    Each parameter of the method gets a range (``rrf``: k in 1, 5, 10, 20, ...,
    100; weights: every vector summing to 1 on a grid of ``step``; ``gamma``
    0.1-1, ``sigma`` 0.01-1, ``phi`` 0.1-0.9, ``segments`` 1-100, ``window``
    0-50); a method reading normalized scores without parameters tries the
    normalizations; a method with nothing to tune is one trial.
    """
    spec = method_spec(method)
    grid: dict[str, list[Any]] = {}
    for p in spec.params:
        grid[p.name] = (simplex_weights(n_runs, step) if p.kind == "weights"
                        else list(_DEFAULT_AXES[p.name]))
    if not grid and spec.kind == "score":
        grid["norm"] = list(GRID_NORMS)
    return grid


@dataclass
class FusionSearch:
    """The outcome of :func:`optimize_fusion`.

    Attributes
    ----------
    method, metric : str
        What was tuned, and for which metric (as typed).
    best_params : dict
        The parameters with the highest mean over all queries (the first in
        grid order on a tie).
    best_score : float
        Their mean over all queries: the in-sample score, optimistic.
    trials : polars.DataFrame
        One row per grid point: its parameters and ``score`` (mean over all
        queries), in grid order.
    best_run : Run
        The fused run with the best parameters (a supervised method trained on
        all the qrels).
    folds : int
        The number of cross-validation folds (0: none).
    cv_score : float or None
        The mean of the held-out per-query values: each query scored by the
        parameters (and training) chosen without it. None without folds.
    cv_per_query : dict
        Query id -> its held-out value (None = null).
    fold_params : list of dict
        The parameters chosen in each fold.
    fold_of : dict
        Query id -> its fold (0-based).
    """

    method: str
    metric: str
    best_params: dict[str, Any]
    best_score: float
    trials: pl.DataFrame
    best_run: Run
    folds: int = 0
    cv_score: float | None = None
    cv_per_query: dict[str, float | None] = field(default_factory=dict)
    fold_params: list[dict[str, Any]] = field(default_factory=list)
    fold_of: dict[str, int] = field(default_factory=dict)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v}" for k, v in self.best_params.items())
        text = (f"FusionSearch({self.method}: best {self.metric} = {self.best_score:.4f} "
                f"with {shown}; {self.trials.height} trials")
        if self.cv_score is not None:
            text += f"; {self.folds}-fold cross-validated {self.metric} = {self.cv_score:.4f}"
        return text + ")"


@dataclass(frozen=True)
class _Setup:
    spec: FusionMethod
    named: dict[str, Run]
    metric: Metric
    plan: MetricPlan  # the metric's name read once, whatever the number of grid points
    fixed: dict[str, Any]
    fuse_options: dict[str, Any]
    eval_options: dict[str, Any]


def _restrict(qrels: Qrels, queries: set[str]) -> Qrels:
    """The judgments of ``queries`` only (a fold's training queries)."""
    return Qrels(qrels.frame.filter(pl.col("query_id").is_in(list(queries))),
                 source=qrels.source)


def _values(setup: _Setup, point: dict[str, Any], train: Qrels | None, judge: Qrels,
            query_ids: list[str], *, quiet: bool = False) -> tuple[np.ndarray, Run]:
    """Per-query values (in ``query_ids`` order) of one grid point's fused run.

    ``quiet``: a repeat (another fold) of an evaluation already checked and warned about.
    """
    if quiet:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RankscopeWarning)
            return _values(setup, point, train, judge, query_ids)
    params = {**setup.fixed, **point}
    norm = params.pop("norm", None)
    fused = fuse(setup.named, method=setup.spec.name, qrels=train,
                 norm=norm if norm is not None else "min-max", **params, **setup.fuse_options)
    result = evaluate(judge, fused, setup.plan, **setup.eval_options)
    index = {q: i for i, q in enumerate(result.query_ids)}
    column = result.column(setup.plan.labels[0])
    out = np.array([column[index[q]] if q in index else np.nan for q in query_ids])
    return out, fused


def optimize_fusion(
    qrels: Any,
    runs: Any,
    *,
    method: str = "wsum",
    metric: str | Metric = "nDCG@10",
    grid: Mapping[str, Sequence[Any]] | None = None,
    params: Mapping[str, Any] | None = None,
    norm: str | None = "min-max",
    k: float | None = None,
    step: float = 0.1,
    folds: int | None = None,
    seed: int = 0,
    depth: int | None = None,
    ties: Ties = "trec",
    unjudged: Unjudged = "nonrelevant",
    queries: QueryPolicy = "qrels",
    on_duplicate: OnDuplicate = "error",
    progress: bool = True,
    allow_no_overlap: bool = False,
) -> FusionSearch:
    """Try every point of a parameter grid and keep the best fused run.

    Parameters
    ----------
    qrels : Qrels, path, DataFrame or dict
        The judgments the fused runs are scored against (and the supervised
        methods learn from).
    runs : sequence of runs, or mapping name -> run
        The runs to fuse.
    method : str, default "wsum"
        A fusion method of :func:`rankscope.fusion.combine.fuse`.
    metric : str or Metric, default "nDCG@10"
        The metric to maximise (its mean over queries).
    grid : mapping, optional
        Parameter -> values to try (any parameter of the method, and ``norm``);
        every combination is tried. Default: :func:`default_grid`.
    params : mapping, optional
        Values of the method's parameters the grid does not vary.
    norm, k : optional
        The normalization and RRF's k when the grid does not vary them.
    step : float, default 0.1
        Grid step of the default weights.
    folds : int, optional
        Cross-validate over this many folds of queries (>= 2). Default: 5 for
        the supervised methods, none for the others.
    seed : int, default 0
        Seed of the shuffle that assigns queries to folds.
    depth, ties, unjudged, queries, on_duplicate, allow_no_overlap
        As in :func:`~rankscope.fusion.combine.fuse` and :func:`rankscope.evaluate`.
    progress : bool, default True
        Allow a progress bar (drawn only on a terminal with tqdm installed).

    Returns
    -------
    FusionSearch
        With folds, ``cv_score`` is the honest estimate; ``best_score`` is
        always the in-sample mean of the chosen parameters.
    """
    spec = method_spec(method)
    plan = plan_metrics(metric)
    (found, *rest) = plan.resolved
    label, parsed = found.label, found.metric
    if rest:
        raise OptionError("optimize_fusion maximises one metric, not several")
    qrels_t = as_qrels(qrels)
    tables, names = load_runs(runs, on_duplicate=on_duplicate)
    chosen = dict(grid) if grid is not None else default_grid(spec.name, len(tables), step=step)
    allowed = {p.name for p in spec.params} | {"norm"}
    unknown = sorted(set(chosen) - allowed)
    if unknown:
        raise OptionError(f"cannot search {', '.join(unknown)} for {spec.name}; grid "
                          f"parameters: {', '.join(sorted(allowed))}")
    if "norm" in chosen:
        chosen["norm"] = [check_norm(n) for n in chosen["norm"]]
    keys = list(chosen)
    points = [dict(zip(keys, values, strict=True))
              for values in itertools.product(*(list(chosen[key]) for key in keys))]
    if not points:
        raise OptionError("the grid is empty")
    fixed = {"norm": norm, **({"k": k} if k is not None else {}), **dict(params or {})}
    searched = [name for name in chosen if name != "norm" and name in fixed]
    if searched:
        from rankscope.fusion.methods import PARAM_FLAGS

        named = " and ".join(setting(n, flag=PARAM_FLAGS.get(n)) for n in searched)
        raise OptionError(f"the grid searches {named}: the value given would be ignored; "
                          "leave it out to tune it, or fuse with it without optimizing")
    setup = _Setup(spec, dict(zip(names, tables, strict=True)), parsed, plan, fixed,
                   {"depth": depth, "ties": ties, "allow_no_overlap": allow_no_overlap},
                   {"ties": ties, "unjudged": unjudged, "queries": queries,
                    "allow_no_overlap": allow_no_overlap})
    query_ids = sorted(qrels_t.frame.get_column("query_id").unique().to_list())
    n_folds = folds if folds is not None else (_SUPERVISED_FOLDS if spec.kind == "supervised"
                                               else 0)
    if folds is not None and (isinstance(folds, bool) or not isinstance(folds, int)
                              or not 2 <= folds <= len(query_ids)):
        raise OptionError(f"{setting('folds')} must be a whole number from 2 to the number of "
                          f"queries "
                          f"({len(query_ids)}), not {folds!r}")
    n_folds = min(n_folds, len(query_ids))
    train = qrels_t if spec.kind == "supervised" else None
    how = parsed.spec.aggregate
    rows: list[dict[str, Any]] = []
    full = np.empty((len(points), len(query_ids)))
    fused_runs: list[Run] = []
    steps = len(points) * (1 + (n_folds if spec.kind == "supervised" else 0))
    with step_bar(steps, f"tuning {spec.name}", unit="trial", show=progress) as advance:
        for i, point in enumerate(points):
            full[i], fused = _values(setup, point, train, qrels_t, query_ids)
            fused_runs.append(fused)
            rows.append({**{key: _cell(point[key]) for key in keys},
                         "score": aggregate(full[i], how)})
            advance(1)
        scores = [r["score"] for r in rows]
        if all(s is None for s in scores):
            raise OptionError(f"no query has a value for {label}; nothing to optimise")
        best = _argmax(scores)
        search = FusionSearch(spec.name, label, dict(points[best]), float(scores[best]),
                              pl.DataFrame(rows), fused_runs[best])
        if n_folds >= 2:
            _cross_validate(search, setup, points, full, qrels_t, query_ids, n_folds, seed,
                            advance)
    return search


def _argmax(scores: Sequence[float | None]) -> int:
    best = -1
    for i, score in enumerate(scores):
        if score is not None and (best < 0 or score > scores[best]):  # type: ignore[operator]
            best = i
    return best


def _cross_validate(search: FusionSearch, setup: _Setup, points: list[dict[str, Any]],
                    full: np.ndarray, qrels: Qrels, query_ids: list[str], n_folds: int,
                    seed: int, advance: Any) -> None:
    """Fill the held-out scores: tune (and train) without each fold, score the fold."""
    rng = np.random.default_rng(seed)
    fold_of = np.empty(len(query_ids), dtype=np.int64)
    for f, members in enumerate(np.array_split(rng.permutation(len(query_ids)), n_folds)):
        fold_of[members] = f
    held_out = np.full(len(query_ids), np.nan)
    how = setup.metric.spec.aggregate
    for f in range(n_folds):
        inside = fold_of != f
        if setup.spec.kind == "supervised":
            # Learn from the training folds only, then score every query with that model.
            train = _restrict(qrels, {q for q, keep in zip(query_ids, inside, strict=True)
                                      if keep})
            values = np.empty_like(full)
            for i, point in enumerate(points):
                values[i], _ = _values(setup, point, train, qrels, query_ids, quiet=True)
                advance(1)
        else:
            values = full  # no training: a point's per-query values do not depend on the fold
        tuned = [aggregate(values[i, inside], how) for i in range(len(points))]
        pick = _argmax(tuned)
        if pick < 0:
            continue
        held_out[~inside] = values[pick, ~inside]
        search.fold_params.append(dict(points[pick]))
    search.folds = n_folds
    search.fold_of = {q: int(f) for q, f in zip(query_ids, fold_of, strict=True)}
    search.cv_score = aggregate(held_out, how)
    search.cv_per_query = {q: (None if np.isnan(v) else float(v))
                           for q, v in zip(query_ids, held_out, strict=True)}


def _cell(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value
