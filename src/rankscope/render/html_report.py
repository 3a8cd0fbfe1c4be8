"""One self-contained HTML page: comparison tables and plots, readable offline.

Everything is inline: the style sheet in a ``<style>`` element, every plot
as a base64 PNG ``data:`` URI and the few lines of script that sort the
per-query table, so the file can be mailed or archived alone. The page names
the queries each run got worse on; the plots can also be written as PDF or
SVG files for papers (``figures_dir``).
"""

from __future__ import annotations

import base64
import html
import os
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from rankscope._version import __version__
from rankscope.compare.comparison import compare
from rankscope.compare.result import CompareResult
from rankscope.data.tables import as_qrels
from rankscope.engine.evaluate import MetricsArg
from rankscope.engine.options import EvalOptions
from rankscope.errors import DependencyError, OptionError
from rankscope.metrics.base import Metric
from rankscope.render.comparison import comparison_html
from rankscope.render.report_tables import SORT_SCRIPT, per_query_table_html, worse_queries_html

if TYPE_CHECKING:
    from rankscope.judgments.evaluation import SeedPlan

__all__ = ["DEFAULT_METRICS", "plots_available", "render_report", "report", "save_figures"]

DEFAULT_METRICS = ("nDCG@10", "AP", "RR", "P@10", "R@100")
"""Metrics of a report when none are named."""

MAX_DIFFERENCE_PLOTS = 8
"""Runs beyond this many get no per-query difference plot (the table still has them)."""

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto;
       max-width: 72em; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
caption { text-align: left; font-weight: bold; padding: 0.3em 0; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #eee; }
th { background: #f4f4f4; text-align: left; }
figure { display: inline-block; margin: 0.5em; vertical-align: top; }
figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 0.85em; color: #555; }
.note { color: #555; font-size: 0.9em; }
"""


def plots_available() -> bool:
    """Whether matplotlib (the ``plot`` extra) is installed."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


Shown = tuple[str, Any, str]
"""A figure of the report: file stem, the figure, its caption."""


def _img(fig: Any, caption: str) -> str:
    from rankscope.render.plots import figure_bytes

    data = base64.b64encode(figure_bytes(fig, "png")).decode("ascii")
    text = html.escape(caption)
    return (f"<figure><img alt='{text}' src='data:image/png;base64,{data}'>"
            f"<figcaption>{text}</figcaption></figure>")


def _curve_family(result: CompareResult) -> str | None:
    """The first metric that takes a cut-off, as a name without it (for the @k curve)."""
    for metric in result.metrics:
        if metric.spec.cutoff != "none" and metric.spec.group in ("binary", "graded"):
            return Metric(metric.family, metric.params, None).name
    return None


def _curve_qrels(qrels: Any, metric: str, judged: dict[str, Any] | None) -> Any:
    """The qrels a curve is drawn on: raters' grades aggregated on the metric's scale."""
    if judged is None:
        return qrels
    from rankscope.judgments.evaluation import plan_evaluation

    return plan_evaluation(qrels, [metric], **judged).qrels()


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9@._-]+", "_", text).strip("_") or "figure"


def _figures(result: CompareResult, qrels: Any, runs: Any, ks: Iterable[int],
             options: dict[str, Any], judged: dict[str, Any] | None = None,
             ) -> list[tuple[str, list[Shown]]]:
    from rankscope.render import plots

    sections: list[tuple[str, list[Shown]]] = []
    curves: list[Shown] = []
    family = _curve_family(result)
    names = result.run_names
    if family is not None:
        fig = plots.plot_metric_at_k(_curve_qrels(qrels, f"{family}@1", judged), runs, family,
                                     ks=ks, names=names, **options)
        curves.append((f"{family}_at_k", fig, f"mean {family}@k for k = 1..{max(ks)}"))
    fig = plots.plot_precision_recall(_curve_qrels(qrels, "P@1", judged), runs, names=names,
                                      **options)
    curves.append(("precision_recall", fig, "11-point interpolated precision-recall"))
    sections.append(("Curves", curves))
    base = result.baseline or names[0]
    others = [n for n in names if n != base][:MAX_DIFFERENCE_PLOTS]
    for label in result.labels:
        shown: list[Shown] = [(f"distribution_{label}", plots.plot_distribution(result, label),
                               f"per-query {label}, every run")]
        shown += [(f"differences_{label}_{name}_vs_{base}",
                   plots.plot_differences(result, label, run=name),
                   f"{label}: {name} - {base}, per query, sorted") for name in others]
        sections.append((f"Per-query {label}", shown))
    return sections


def save_figures(sections: Sequence[tuple[str, list[Shown]]], directory: str | os.PathLike[str],
                 formats: Sequence[str] = ("pdf", "svg")) -> list[str]:
    """Write every figure of a report as ``DIR/<name>.<format>``; returns the paths."""
    from rankscope.render.plots import save_figure

    os.makedirs(directory, exist_ok=True)
    written = []
    for _, shown in sections:
        for stem, fig, _ in shown:
            for fmt in formats:
                path = os.path.join(directory, f"{_slug(stem)}.{fmt}")
                save_figure(fig, path, fmt=fmt)
                written.append(path)
    return written


def render_report(
    result: CompareResult,
    *,
    title: str = "rankscope report",
    figures: Sequence[tuple[str, list[str]]] = (),
    note: str = "",
) -> str:
    """The HTML page of a comparison with already-rendered figure sections."""
    parts = [
        "<!DOCTYPE html>",
        "<html lang='en'><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p class='note'>Runs: {html.escape(', '.join(result.run_names))}. "
        f"Metrics: {html.escape(', '.join(result.labels))}. rankscope {__version__}.</p>",
        "<h2>Comparison</h2>",
        comparison_html(result),
    ]
    if note:
        parts.append(f"<p class='note'>{html.escape(note)}</p>")
    parts += ["<h2>Queries that got worse</h2>", worse_queries_html(result)]
    for heading, images in figures:
        parts.append(f"<h2>{html.escape(heading)}</h2>")
        parts += images
    parts += ["<h2>Per-query values</h2>",
              "<p class='note'>Click a column header to sort by it.</p>",
              per_query_table_html(result), f"<script>{SORT_SCRIPT}</script>"]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def report(
    qrels: Any,
    runs: Any,
    metrics: MetricsArg | SeedPlan = DEFAULT_METRICS,
    *,
    output: str | os.PathLike[str] | None = None,
    title: str = "rankscope report",
    plots: bool | None = None,
    ks: Iterable[int] = range(1, 21),
    figures_dir: str | os.PathLike[str] | None = None,
    figure_formats: Sequence[str] = ("pdf", "svg"),
    ties: Any = None,
    unjudged: Any = None,
    queries: Any = None,
    conventions: str | None = None,
    **compare_options: Any,
) -> str:
    """Compare runs and write one self-contained HTML page.

    Parameters
    ----------
    qrels : Qrels, Judgments, path, DataFrame or dict
        Relevance judgments, or raters' grades (as in :func:`rankscope.compare`;
        the curves use the grades aggregated on the scale of their metric).
    runs : sequence of runs, or mapping name -> run
        Two or more runs.
    metrics : str, Metric, a sequence of them, MetricPlan or SeedPlan
        The metrics of the comparison tables (default DEFAULT_METRICS), as
        :func:`rankscope.compare` takes them.
    output : path, optional
        Where to write the page (``-`` for stdout); only returned when None.
    title : str, default "rankscope report"
        The page title.
    plots : bool, optional
        Include plots (needs the ``plot`` extra). Default: when matplotlib is
        installed; without it the page says that plots were left out.
    ks : iterable of int, default 1..20
        Cut-offs of the metric@k curve.
    figures_dir : path, optional
        Also write every plot there, once per format of ``figure_formats``
        (``pdf``, ``svg``, ``png``), for papers; needs plots.
    ties, unjudged, queries, conventions
        As in :func:`rankscope.evaluate` (default: rankscope's conventions,
        or the profile's).
    **compare_options
        Passed to :func:`rankscope.compare.compare` (``baseline``, ``test``,
        ``correction``, ``alpha``, ``names``...).

    Returns
    -------
    str
        The HTML page.
    """
    from rankscope.data.runs import load_runs
    from rankscope.judgments.table import Judgments

    judged: dict[str, Any] | None = {
        key: compare_options[key] for key in ("scale", "strategy", "transforms")
        if compare_options.get(key) is not None
    }
    if isinstance(qrels, Judgments) or judged:
        from rankscope.judgments.table import as_judgments

        qrels_t: Any = as_judgments(qrels)
    else:
        judged = None
        qrels_t = as_qrels(qrels)
    include = plots_available() if plots is None else plots
    if include and not plots_available():
        raise DependencyError("matplotlib", "plot", "plots in reports")
    if figures_dir is not None and not include:
        if not plots_available():
            raise DependencyError("matplotlib", "plot", "figure files")
        raise OptionError("figures_dir needs the plots (plots=False was given)")
    names = compare_options.pop("names", None)
    on_duplicate = compare_options.pop("on_duplicate", "error")
    run_format = compare_options.pop("run_format", None)
    given: dict[str, Any] = {
        key: value for key, value in (("ties", ties), ("unjudged", unjudged),
                                      ("queries", queries), ("conventions", conventions))
        if value is not None}
    opts = EvalOptions.merged(None, given)  # type: ignore[arg-type]
    named: Any
    if include:  # the curves evaluate every run again: all of them are kept
        tables, run_names = load_runs(runs, names=names, on_duplicate=on_duplicate,
                                      run_format=run_format)
        named = dict(zip(run_names, tables, strict=True))
        result = compare(qrels_t, named, metrics, **given, **compare_options)
    else:  # compare alone reads run files one at a time (two in memory)
        result = compare(qrels_t, runs, metrics, names=names, on_duplicate=on_duplicate,
                         run_format=run_format, **given, **compare_options)
    figures: list[tuple[str, list[str]]] = []
    note = ""
    if include:
        shown = _figures(result, qrels_t, named, list(ks),
                         {"ties": opts.ties, "unjudged": opts.unjudged,
                          "queries": opts.ranked_queries,
                          "allow_no_overlap": compare_options.get("allow_no_overlap", False)},
                         judged)
        if figures_dir is not None:
            save_figures(shown, figures_dir, figure_formats)
        figures = [(heading, [_img(fig, caption) for _, fig, caption in items])
                   for heading, items in shown]
    elif plots is None:
        note = "Plots left out: install rankscope[plot] (matplotlib) to include them."
    page = render_report(result, title=title, figures=figures, note=note)
    if output is not None:
        from rankscope.data._io import write_bytes

        write_bytes(output, page.encode("utf-8"))
    return page
