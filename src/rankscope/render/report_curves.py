"""A report's curves: metric@k and 11-point precision-recall, their numbers and figures.

Their numbers come from the comparison's own pass when the curves are measured
as the comparison measures (:func:`measured_curves`, the ``also`` metrics of
:func:`~rankscope.compare.compare`), else from reading the runs again one
ahead (:func:`read_curves`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from rankscope.compare.curves import (
    RECALL_LEVELS,
    FloatArray,
    at_k_metrics,
    curve_points,
    interpolated_precision,
    metric_at_k,
    precision_recall_metrics,
)
from rankscope.compare.result import CompareResult
from rankscope.data.runs import RunInputs
from rankscope.metrics.base import Metric

if TYPE_CHECKING:
    import polars as pl

    from rankscope.render.svg import Series

__all__ = ["Figure", "curve_family", "curve_figures", "curve_qrels", "measured_curves",
           "pr_caption", "pr_options", "read_curves"]

Figure = tuple[str, str, str]
"""A figure of the report: file stem, the inline SVG, its caption."""


def curve_family(metrics: Sequence[Metric]) -> str | None:
    """The first metric that takes a cut-off, as a name without it (for the @k curve)."""
    for metric in metrics:
        if metric.spec.cutoff != "none" and metric.spec.group in ("binary", "graded"):
            return Metric(metric.family, metric.params, None).name
    return None


def curve_qrels(qrels: Any, metric: str, judged: dict[str, Any] | None) -> Any:
    """The qrels a curve is drawn on: raters' grades aggregated on the metric's scale."""
    if judged is None:
        return qrels
    from rankscope.judgments.evaluation import plan_evaluation

    return plan_evaluation(qrels, [metric], **judged).qrels()


def read_curves(result: CompareResult, qrels: Any, inputs: RunInputs, ks: list[int],
                options: dict[str, Any], judged: dict[str, Any] | None,
                ) -> tuple[str | None, pl.DataFrame | None, pl.DataFrame]:
    """The metric@k and precision-recall curves' numbers, each run's computed as it is read.

    Files are read one ahead (two runs in memory at most); a run is
    dropped once its points are known. Returns the @k curve's family (None
    when no metric of the comparison takes a cut-off), its numbers (run, k,
    value) and the precision-recall numbers (run, recall, precision), as
    :func:`~rankscope.compare.curves.metric_at_k` and
    :func:`~rankscope.compare.curves.precision_recall` give them.
    """
    import polars as pl

    family = curve_family(result.metrics)
    at_k_qrels = None if family is None else curve_qrels(qrels, f"{family}@1", judged)
    pr_qrels = curve_qrels(qrels, "P@1", judged)
    at_k: list[pl.DataFrame] = []
    pr: list[pl.DataFrame] = []
    with inputs.tables() as tables:
        for table, name in zip(tables, result.run_names, strict=True):
            if family is not None:
                at_k.append(metric_at_k(at_k_qrels, {name: table}, family, ks=ks, **options))
            curve = interpolated_precision(pr_qrels, table, **pr_options(options))
            pr.append(pl.DataFrame({"run": [name] * curve.size, "recall": RECALL_LEVELS,
                                    "precision": curve}))
            del table
    return family, pl.concat(at_k) if at_k else None, pl.concat(pr)


def measured_curves(result: CompareResult, family: str | None, ks: list[int],
                     ) -> tuple[pl.DataFrame | None, pl.DataFrame]:
    """The curves' numbers from the means measured in the comparison's pass (``also``),
    as :func:`read_curves` gives them."""
    import polars as pl

    at_k_names = [] if family is None else [m.name for m in at_k_metrics(family, ks)]
    ks = ks if family is not None else []
    pr_names = [m.name for m in precision_recall_metrics()]
    at_k: list[dict[str, Any]] = []
    runs: list[str] = []
    curves: list[FloatArray] = []
    for name, info in zip(result.run_names, result.infos, strict=True):
        means = result.also_means[name]
        at_k += [{"run": name, "k": k, "value": means[m]}
                 for k, m in zip(ks, at_k_names, strict=True)]
        curves.append(curve_points([means[m] for m in pr_names], info.n_evaluated))
        runs += [name] * RECALL_LEVELS.size
    frame = None if family is None else pl.DataFrame(
        at_k, schema={"run": pl.String, "k": pl.Int64, "value": pl.Float64})
    # one frame of every run's points, not a frame a run concatenated (17 in a track's
    # report: about as long as drawing the curves)
    pr = pl.DataFrame({"run": runs, "recall": np.tile(RECALL_LEVELS, len(curves)),
                       "precision": np.concatenate(curves) if curves else np.zeros(0)},
                      schema={"run": pl.String, "recall": pl.Float64, "precision": pl.Float64})
    return frame, pr


def pr_options(options: dict[str, Any]) -> dict[str, Any]:
    """The precision-recall curve's options: interpolated precision is defined with
    unjudged documents non-relevant (as trec_eval has it), not as null; the caption says so
    (:func:`pr_caption`)."""
    if options.get("unjudged") == "null":
        return {**options, "unjudged": "nonrelevant"}
    return options


def pr_caption(unjudged: str) -> str:
    caption = "11-point interpolated precision-recall"
    if unjudged == "null":
        caption += (" (unjudged documents count as non-relevant on this curve: interpolated"
                    " precision has no definition with unjudged documents null)")
    return caption


def _series(data: pl.DataFrame, x: str, y: str) -> list[Series]:
    """One line a run, in the order the runs first appear (as ``group_by(maintain_order=
    True)`` gives them), split in Python: the frames are a few hundred rows, and polars'
    grouping cost more than the figure (2-5 ms a call)."""
    from rankscope.render.svg import Series

    points: dict[object, tuple[list[float], list[float]]] = {}
    for name, xv, yv in zip(data.get_column("run").to_list(), data.get_column(x).to_list(),
                            data.get_column(y).to_list(), strict=True):
        xs, ys = points.setdefault(name, ([], []))
        xs.append(xv)
        ys.append(yv)
    return [Series(str(name), tuple(xs), tuple(ys)) for name, (xs, ys) in points.items()]


def curve_figures(family: str | None, at_k: pl.DataFrame | None, pr: pl.DataFrame,
                   ks: list[int], pr_caption: str) -> tuple[str, list[Figure]]:
    """The curves' section: metric@k (when a metric takes a cut-off), precision-recall."""
    # the SVG writer only where figures are drawn (`report --no-plots` never loads it)
    from rankscope.render.svg import lines_svg

    curves: list[Figure] = []
    if family is not None and at_k is not None:
        caption = f"mean {family}@k for k = 1..{max(ks)}"
        curves.append((f"{family}_at_k", lines_svg(
            _series(at_k, "k", "value"), title=f"{family}@k", x_label="cut-off k",
            y_label=f"mean {family}@k", integer_x=True,
            point=family.replace("{", "{{").replace("}", "}}") + "@{x:g} = {y:.4f}",
            caption=caption), caption))
    caption = pr_caption
    curves.append(("precision_recall", lines_svg(
        _series(pr, "recall", "precision"), title="11-point interpolated precision-recall",
        x_label="recall",
        y_label="interpolated precision", point="recall {x:.1f}: precision {y:.4f}",
        x_range=(0.0, 1.0), y_range=(0.0, 1.02), caption=caption), caption))
    return "Curves", curves
