"""A small grid search of a fusion method's parameters against qrels."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from rankscope.compare.fusion import NORMS, check_method, check_norm, fuse
from rankscope.compare.progress import bar
from rankscope.compare.runs import load_runs
from rankscope.data.formats import as_qrels
from rankscope.data.tables import OnDuplicate, Run
from rankscope.engine.evaluate import evaluate, resolve_metrics
from rankscope.engine.ranking import QueryPolicy, Ties, Unjudged
from rankscope.errors import OptionError
from rankscope.metrics.base import Metric

__all__ = ["FusionSearch", "default_grid", "optimize_fusion", "simplex_weights"]

RRF_KS = (1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100)
_PARAMS = ("k", "weights", "norm")


def simplex_weights(n_runs: int, step: float = 0.1) -> list[tuple[float, ...]]:
    """Every weight vector on a grid of ``step`` whose weights sum to 1."""
    if not 0 < step <= 1:
        raise OptionError(f"step must be in (0, 1], not {step!r}")
    units = round(1 / step)
    if abs(units * step - 1) > 1e-9:
        raise OptionError(f"step must divide 1 evenly (0.1, 0.25, 0.5...), not {step!r}")
    out = []
    for combo in itertools.product(range(units + 1), repeat=n_runs):
        if sum(combo) == units:
            out.append(tuple(round(c / units, 10) for c in combo))
    return out


def default_grid(method: str, n_runs: int, *, step: float = 0.1) -> dict[str, list[Any]]:
    """The grid searched when none is given.

    ``rrf``: k in 1, 5, 10, 20, ..., 100; ``wsum``: weights summing to 1 on a
    grid of ``step``; every other method: the normalizations.
    """
    method = check_method(method)
    if method == "rrf":
        return {"k": list(RRF_KS)}
    if method == "wsum":
        return {"weights": simplex_weights(n_runs, step)}
    return {"norm": list(NORMS)}


@dataclass
class FusionSearch:
    """The outcome of :func:`optimize_fusion`.

    Attributes
    ----------
    method, metric : str
        What was tuned, and for which metric (as typed).
    best_params : dict
        The parameters with the highest mean (the first in grid order on a tie).
    best_score : float
        Their mean.
    trials : polars.DataFrame
        One row per grid point: its parameters and ``score``, in grid order.
    best_run : Run
        The fused run with the best parameters.
    """

    method: str
    metric: str
    best_params: dict[str, Any]
    best_score: float
    trials: pl.DataFrame
    best_run: Run

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v}" for k, v in self.best_params.items())
        return (f"FusionSearch({self.method}: best {self.metric} = {self.best_score:.4f} "
                f"with {shown}; {self.trials.height} trials)")


def optimize_fusion(
    qrels: Any,
    runs: Any,
    *,
    method: str = "wsum",
    metric: str | Metric = "nDCG@10",
    grid: Mapping[str, Sequence[Any]] | None = None,
    norm: str | None = "min-max",
    k: float = 60,
    step: float = 0.1,
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
        The judgments the fused runs are scored against.
    runs : sequence of runs, or mapping name -> run
        The runs to fuse.
    method : str, default "wsum"
        A fusion method of :func:`rankscope.compare.fusion.fuse`.
    metric : str or Metric, default "nDCG@10"
        The metric to maximise (its mean over queries).
    grid : mapping, optional
        Parameter -> values to try (``k``, ``weights``, ``norm``); every
        combination is tried. Default: :func:`default_grid`.
    norm, k : optional
        Values of the parameters the grid does not vary.
    step : float, default 0.1
        Grid step of the default ``wsum`` weights.
    depth, ties, unjudged, queries, on_duplicate, allow_no_overlap
        As in :func:`~rankscope.compare.fusion.fuse` and :func:`rankscope.evaluate`.
    progress : bool, default True
        Allow a progress bar (drawn only on a terminal with tqdm installed).

    Returns
    -------
    FusionSearch
    """
    method = check_method(method)
    (label, parsed), *rest = resolve_metrics(metric)
    if rest:
        raise OptionError("optimize_fusion maximises one metric, not several")
    qrels_t = as_qrels(qrels)
    tables, names = load_runs(runs, on_duplicate=on_duplicate)
    chosen = dict(grid) if grid is not None else default_grid(method, len(tables), step=step)
    unknown = sorted(set(chosen) - set(_PARAMS))
    if unknown:
        raise OptionError(f"cannot search {', '.join(unknown)}; grid parameters: k, weights, norm")
    if "norm" in chosen:
        chosen["norm"] = [check_norm(n) for n in chosen["norm"]]
    keys = list(chosen)
    points = [dict(zip(keys, values, strict=True))
              for values in itertools.product(*(list(chosen[key]) for key in keys))]
    if not points:
        raise OptionError("the grid is empty")
    named = dict(zip(names, tables, strict=True))
    rows: list[dict[str, Any]] = []
    best: tuple[float, dict[str, Any], Run] | None = None
    with bar(len(points), f"tuning {method}", unit="trial", show=progress) as advance:
        for point in points:
            params = {"norm": norm, "k": k, **point}
            fused = fuse(named, method=method, norm=params["norm"], k=params["k"],
                         weights=params.get("weights"), depth=depth, ties=ties,
                         allow_no_overlap=allow_no_overlap)
            score = evaluate(qrels_t, fused, [parsed], ties=ties, unjudged=unjudged,
                             queries=queries, allow_no_overlap=allow_no_overlap
                             ).means[parsed.name]
            rows.append({**{key: _cell(point[key]) for key in keys}, "score": score})
            if score is not None and (best is None or score > best[0]):
                best = (score, point, fused)
            advance(1)
    if best is None:
        raise OptionError(f"no query has a value for {label}; nothing to optimise")
    return FusionSearch(method, label, dict(best[1]), best[0], pl.DataFrame(rows), best[2])


def _cell(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value
