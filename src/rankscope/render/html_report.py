"""One self-contained HTML page: comparison tables and plots, readable offline.

Everything is inline: the style sheet in a ``<style>`` element, every plot
as SVG written by :mod:`rankscope.render.svg` (a bar or a point names its
query or cut-off on hover; no matplotlib, no script needed to see them) and
the few lines of script that sort the per-query table, so the file can be
mailed or archived alone. The page names the queries each run got worse on;
the plots can also be written as PDF, SVG or PNG files for papers
(``figures_dir``, matplotlib's figures: the ``plot`` extra).

The curves' numbers are measured in the comparison's own pass over the runs
(their metrics added to the comparison's, not shown as compared metrics), so
each run is read once, one ahead: memory grows with the largest run, not with
their sum. Where the curves are measured otherwise than the comparison
(raters' grades aggregated per scale, a conventions profile, unjudged
documents null, ``queries="zero"``, a relevance threshold), the files are
read a second time for them, one ahead too.
"""

from __future__ import annotations

import html
import os
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rankscope._version import __version__
from rankscope.compare.comparison import compare
from rankscope.compare.curves import at_k_metrics, precision_recall_metrics
from rankscope.compare.result import CompareResult
from rankscope.data.runs import RunInputs
from rankscope.data.tables import Run, as_qrels
from rankscope.engine.evaluate import MetricPlan, MetricsArg, plan_metrics
from rankscope.engine.options import EvalOptions
from rankscope.errors import DependencyError, OptionError
from rankscope.metrics.base import Metric
from rankscope.render.comparison import comparison_html
from rankscope.render.report_curves import (
    Figure,
    curve_family,
    curve_figures,
    measured_curves,
    pr_caption,
    pr_options,
    read_curves,
)
from rankscope.render.report_tables import (
    DEFAULT_METRICS,
    SORT_SCRIPT,
    TABLE_STYLE,
    ValueTexts,
    per_query_table_html,
    worse_queries_html,
)

if TYPE_CHECKING:
    import polars as pl

    from rankscope.judgments.evaluation import SeedPlan

__all__ = ["DEFAULT_METRICS", "plots_available", "render_report", "report", "save_figures"]

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
figure { display: inline-block; margin: 0.5em; vertical-align: top; max-width: 100%;
         overflow-x: auto; }
figure svg { display: block; width: 40em; max-width: 100%; min-width: 30em; height: auto; }
figcaption { font-size: 0.85em; color: #555; }
.note { color: #555; font-size: 0.9em; }
@media (prefers-color-scheme: dark) {
  :root { color-scheme: dark; }
  body { background: #121212; color: #e4e4e4; }
  th { background: #262626; } th, td { border-bottom-color: #333; }
  h2 { border-bottom-color: #444; } figcaption, .note { color: #aaa; }
}
"""


def plots_available() -> bool:
    """Whether matplotlib (the ``plot`` extra, for figure files) is installed.

    The page's own plots are SVG written without it; ``figures_dir`` needs it.
    """
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


Shown = tuple[str, Any, str]
"""A figure file of the report: file stem, the matplotlib figure, its caption."""


def _svg(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{html.escape(caption)}</figcaption></figure>"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9@._-]+", "_", text).strip("_") or "figure"


@contextmanager
def _each_warning_once(said: set[tuple[type[Warning], str]]) -> Iterator[None]:
    """Pass on the warnings given inside, once each: none already in ``said`` (the
    curves evaluate the runs the comparison evaluated, and would repeat its warnings about
    them: the queries a run shares with the qrels, twice more a run)."""
    manager = warnings.catch_warnings(record=True)
    caught = manager.__enter__()
    warnings.simplefilter("always")
    try:
        yield
    finally:
        manager.__exit__(None, None, None)
        for w in caught or ():
            key = (w.category, str(w.message))
            if key not in said:
                said.add(key)
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno,
                                       source=w.source)


def _twice_readable(runs: Any, *, on_duplicate: Any, run_format: str | None) -> Any:
    """The runs as they can be read twice: an iterator as a list, a run on stdin (``-``)
    read here once (anything else, even a mistake, is left to the comparison to judge)."""
    if isinstance(runs, str | os.PathLike | Run) or not isinstance(runs, Iterable):
        return runs

    def once(run: Any) -> Any:
        if isinstance(run, str | os.PathLike) and os.fspath(run) == "-":
            from rankscope.data.runs import load_runs

            (table,), _ = load_runs([run], on_duplicate=on_duplicate, run_format=run_format)
            return table
        return run

    if isinstance(runs, Mapping):
        return {key: once(value) for key, value in runs.items()}
    return [once(run) for run in runs]


def _metric_figures(result: CompareResult, texts: ValueTexts | None = None,
                    ) -> list[tuple[str, list[Figure]]]:
    """Per metric: the distribution of every run and the differences to the baseline (from
    the per-query values alone: drawn while the comparison works out its intervals)."""
    # loaded here, not with the page: `report --no-plots` draws no figure (the command
    # loads it beside the reading when it will, :func:`rankscope.cli.report.run`)
    from rankscope.render.svg import differences_svg, distribution_svg

    texts = ValueTexts(result) if texts is None else texts
    sections: list[tuple[str, list[Figure]]] = []
    for label, base, others in _pairs(result):
        caption = f"per-query {label}, every run"
        shown: list[Figure] = [(f"distribution_{label}",
                                distribution_svg(result, label, caption=caption), caption)]
        for name in others:
            caption = f"{label}: {name} - {base}, per query, sorted"
            shown.append((f"differences_{label}_{name}_vs_{base}",
                          differences_svg(result, label, run=name, caption=caption, texts=texts),
                          caption))
        sections.append((f"Per-query {label}", shown))
    return sections


def _pairs(result: CompareResult) -> list[tuple[str, str, list[str]]]:
    """Per metric: the baseline and the runs drawn against it (at most MAX_DIFFERENCE_PLOTS)."""
    base = result.baseline or result.run_names[0]
    others = [n for n in result.run_names if n != base][:MAX_DIFFERENCE_PLOTS]
    return [(label, base, others) for label in result.labels]


def _figure_files(result: CompareResult, family: str | None, at_k: pl.DataFrame | None,
                  pr: pl.DataFrame, ks: list[int], pr_caption: str,
                  ) -> list[tuple[str, list[Shown]]]:
    """The same figures as matplotlib figures, for files (``figures_dir``)."""
    from rankscope.render import plots

    curves: list[Shown] = []
    if family is not None and at_k is not None:
        curves.append((f"{family}_at_k", plots.draw_metric_at_k(at_k, family),
                       f"mean {family}@k for k = 1..{max(ks)}"))
    curves.append(("precision_recall", plots.draw_precision_recall(pr), pr_caption))
    sections: list[tuple[str, list[Shown]]] = [("Curves", curves)]
    for label, base, others in _pairs(result):
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
    tables: tuple[str, str] | None = None,
) -> str:
    """The HTML page of a comparison with already-rendered figure sections.

    ``tables``: the queries that got worse and the per-query values as
    :func:`~rankscope.render.report_tables.worse_queries_html` and
    :func:`~rankscope.render.report_tables.per_query_table_html` write them for
    ``result``, when already written (default: written here).
    """
    worse, per_query = tables if tables is not None else (
        worse_queries_html(result), per_query_table_html(result))
    parts = [
        "<!DOCTYPE html>",
        "<html lang='en'><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title>",
        f"<style>{_STYLE}{TABLE_STYLE}\n</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p class='note'>Runs: {html.escape(', '.join(result.run_names))}. "
        f"Metrics: {html.escape(', '.join(result.labels))}. rankscope {__version__}.</p>",
        "<h2>Comparison</h2>",
        comparison_html(result),
    ]
    if note:
        parts.append(f"<p class='note'>{html.escape(note)}</p>")
    parts += ["<h2>Queries that got worse</h2>", worse]
    for heading, images in figures:
        parts.append(f"<h2>{html.escape(heading)}</h2>")
        parts += images
    parts += ["<h2>Per-query values</h2>",
              "<p class='note'>Click a column header to sort by it.</p>",
              per_query, f"<script>{SORT_SCRIPT}</script>"]
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
        Include plots (inline SVG; default True). ``False`` writes the
        tables alone and never reads the runs a second time.
    ks : iterable of int, default 1..20
        Cut-offs of the metric@k curve.
    figures_dir : path, optional
        Also write every plot there, once per format of ``figure_formats``
        (``pdf``, ``svg``, ``png``), for papers: matplotlib's figures (the
        ``plot`` extra); needs plots.
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
    include = True if plots is None else plots
    if figures_dir is not None:
        if not include:
            raise OptionError("figures_dir needs the plots (plots=False was given)")
        if not plots_available():
            raise DependencyError("matplotlib", "plot", "figure files")
    k_list = sorted({int(k) for k in ks})
    if include and (not k_list or k_list[0] < 1):
        raise OptionError("ks must be whole numbers >= 1")
    names = compare_options.pop("names", None)
    on_duplicate = compare_options.pop("on_duplicate", "error")
    run_format = compare_options.pop("run_format", None)
    given: dict[str, Any] = {
        key: value for key, value in (("ties", ties), ("unjudged", unjudged),
                                      ("queries", queries), ("conventions", conventions))
        if value is not None}
    opts = EvalOptions.merged(None, given)  # type: ignore[arg-type]
    curve_options = {"ties": opts.ties, "unjudged": opts.unjudged,
                     "queries": opts.ranked_queries}
    # the curves measured in the comparison's pass when they are measured as it measures
    one_pass = include and judged is None and all(
        EvalOptions.merged(None, o) == opts  # type: ignore[arg-type]
        for o in (curve_options, pr_options(curve_options)))
    also: list[Metric] = []
    family = None
    if one_pass:
        from rankscope.judgments.evaluation import SeedPlan

        plan: MetricPlan = (metrics.for_qrels(opts) if isinstance(metrics, SeedPlan)
                            else plan_metrics(metrics, opts))  # read once, here
        metrics = plan
        family = curve_family(plan.metrics)
        also = [*([] if family is None else at_k_metrics(family, k_list)),
                *precision_recall_metrics()]
    elif include:  # read twice: by the comparison, then for the curves
        runs = _twice_readable(runs, on_duplicate=on_duplicate, run_format=run_format)
    if isinstance(runs, RunInputs):  # made (and maybe started) by the caller
        if names is not None or on_duplicate != "error" or run_format is not None:
            raise OptionError("names, on_duplicate and run_format belong to the RunInputs "
                              "given as runs")
        given_inputs: RunInputs | None = runs
    else:
        given_inputs = None
        compare_options.update(names=names, on_duplicate=on_duplicate, run_format=run_format)
    drawn: dict[str, Any] = {}

    def draw(measured: CompareResult) -> None:
        # the tables and figures of the per-query values, while the intervals are worked out
        # the per-query values written once, for the tables and the difference plots
        texts = ValueTexts(measured)
        drawn["tables"] = (worse_queries_html(measured, texts=texts),
                           per_query_table_html(measured, texts))
        if include:
            drawn["metrics"] = _metric_figures(measured, texts)
        if one_pass:
            drawn["curves"] = measured_curves(measured, family, k_list)

    said: set[tuple[type[Warning], str]] = set()
    with _each_warning_once(said):  # compare reads run files one at a time (two in memory)
        result = compare(qrels_t, runs, metrics, **given, **compare_options, also=also,
                         on_measured=draw)
    figures: list[tuple[str, list[str]]] = []
    if one_pass:
        at_k, pr = drawn["curves"]
    elif include:
        # the same runs under the comparison's names, read again one ahead for the curves;
        # the comparison has checked them (a document ranked twice is left to the ranking)
        inputs = given_inputs if given_inputs is not None else RunInputs(
            runs, names=result.run_names, on_duplicate=on_duplicate, run_format=run_format,
            defer_duplicates=True)
        with _each_warning_once(said):  # the comparison has said what these runs lack
            family, at_k, pr = read_curves(
                result, qrels_t, inputs, k_list,
                {**curve_options,
                 "allow_no_overlap": compare_options.get("allow_no_overlap", False)}, judged)
    if include:
        if figures_dir is not None:
            save_figures(_figure_files(result, family, at_k, pr, k_list,
                                       pr_caption(opts.unjudged)), figures_dir,
                         figure_formats)
        sections = [curve_figures(family, at_k, pr, k_list, pr_caption(opts.unjudged)),
                    *drawn["metrics"]]
        figures = [(heading, [_svg(svg, caption) for _, svg, caption in items])
                   for heading, items in sections]
    page = render_report(result, title=title, figures=figures, tables=drawn["tables"])
    if output is not None:
        from rankscope.data._io import write_bytes

        write_bytes(output, page.encode("utf-8"))
    return page
