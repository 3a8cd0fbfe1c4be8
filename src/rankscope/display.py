"""How result objects show themselves: the one door from the library up to ``render/``.

Results hand over data and ``render/`` formats it (``docs/architecture.md``):
no module below ``render/`` imports it. A result object still shows itself in
a terminal (``repr``), in a notebook (``_repr_html_``) and through the
methods users already call (``result.render("latex")``,
``result.plot_differences(...)``). Those methods are thin delegates to the
functions below, and each function here imports its ``render`` module when
called, so ``import rankscope`` never loads ``render/`` (nor matplotlib).
This module is the only place below ``render/`` allowed to import it
(``tests/test_layers.py`` holds that); new formatting goes into ``render/``
as a function taking the result, and only a display protocol or a public
method that must stay on the object gets a door here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rankscope.compare.result import CompareResult
    from rankscope.engine.differences import DifferenceReport
    from rankscope.judgments.agreement import Agreement
    from rankscope.judgments.coverage import Coverage
    from rankscope.judgments.table import Judgments
    from rankscope.result import EvaluationResult

__all__ = [
    "agreement_html", "comparison_figure", "comparison_text", "coverage_html",
    "differences_text", "evaluation_html", "evaluation_text", "judgments_html",
]


def evaluation_text(result: EvaluationResult, fmt: str, *, per_query: bool) -> str:
    """:meth:`EvaluationResult.render` (``rankscope evaluate --format``)."""
    from rankscope.render.tabular import render_evaluation

    return render_evaluation(result, fmt, per_query=per_query)


def evaluation_html(result: EvaluationResult, *, per_query: bool) -> str:
    """``EvaluationResult._repr_html_`` (a notebook table)."""
    from rankscope.render.tabular import evaluation_html as html

    return html(result, per_query=per_query)


def comparison_text(result: CompareResult, fmt: str) -> str:
    """:meth:`CompareResult.render` (``rankscope compare --format``, HTML included)."""
    from rankscope.render.comparison import render_comparison

    return render_comparison(result, fmt)


def comparison_figure(result: CompareResult, kind: str, metric: str,
                      run: str | None = None) -> Any:
    """``CompareResult.plot_differences`` / ``plot_distribution`` (the ``plot`` extra)."""
    from rankscope.render.plots import plot_differences, plot_distribution

    if kind == "differences":
        return plot_differences(result, metric, run=run)
    return plot_distribution(result, metric)


def judgments_html(judgments: Judgments) -> str:
    """``Judgments._repr_html_``: the first rows under the table's one-line summary."""
    from rankscope.render.judgments import judgments_html as html

    return html(judgments)


def agreement_html(result: Agreement) -> str:
    """``Agreement._repr_html_``: the measures, Cohen's kappa per pair, per query."""
    from rankscope.render.judgments import agreement_html as html

    return html(result)


def coverage_html(result: Coverage) -> str:
    """``Coverage._repr_html_``: per-query coverage under the overall figure."""
    from rankscope.render.judgments import coverage_html as html

    return html(result)


def differences_text(report: DifferenceReport) -> str:
    """:meth:`DifferenceReport.render` (``rankscope explain-differences``)."""
    from rankscope.render.differences import render_differences

    return render_differences(report)
