"""Raters' judgments, their agreement and a run's grading coverage as notebook HTML."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rankscope.render.tabular import format_value, frame_html

if TYPE_CHECKING:
    from rankscope.judgments.agreement import Agreement
    from rankscope.judgments.coverage import Coverage
    from rankscope.judgments.table import Judgments

__all__ = ["agreement_html", "coverage_html", "judgments_html"]


def judgments_html(judgments: Judgments) -> str:
    """The first 20 rows, under the table's one-line summary."""
    return frame_html(judgments.to_polars(), repr(judgments), max_rows=20)


def agreement_html(result: Agreement) -> str:
    """The agreement measures, Cohen's kappa per pair of raters, and per query when asked."""
    head = f"{result.n_items} graded results, {result.n_raters} raters"
    parts = [frame_html(result.to_polars(), head)]
    if result.cohen.height:
        parts.append(frame_html(result.cohen, "Cohen's kappa per pair of raters"))
    if result.per_query is not None:
        parts.append(frame_html(result.per_query, "per query"))
    return "".join(parts)


def coverage_html(result: Coverage) -> str:
    """Per-query coverage under the overall figure and the count of ungraded pairs."""
    caption = (f"coverage@{result.k}: {result.graded} of {result.positions} top-{result.k} "
               f"positions graded ({format_value(result.overall)}); {result.ungraded.height} "
               "ungraded pairs")
    return frame_html(result.per_query, caption)
