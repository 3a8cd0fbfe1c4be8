"""Render a comparison as a terminal table, Markdown, HTML, CSV, TSV, JSON or LaTeX."""

from __future__ import annotations

import csv
import html
import io
import json
import math
from typing import TYPE_CHECKING, Any

from rankscope.errors import OptionError
from rankscope.render.tabular import csv_number

if TYPE_CHECKING:
    from rankscope.compare.result import CompareResult

__all__ = ["COMPARISON_FORMATS", "comparison_html", "render_comparison"]

COMPARISON_FORMATS = ("table", "markdown", "latex", "html", "csv", "tsv", "json")

Block = tuple[str, list[str], list[list[str]]]


def number(value: float | None, digits: int = 4, *, signed: bool = False) -> str:
    """A value for people: fixed decimals, '-' for none."""
    if value is None or math.isnan(value):
        return "-"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def p_text(value: float | None) -> str:
    """A p-value: four decimals, or ``< 1e-4`` below 0.0001 (never a bare 0)."""
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.4f}" if value >= 1e-4 else "< 1e-4"


def _interval(low: float, high: float, *, signed: bool = False) -> str:
    if math.isnan(low) or math.isnan(high):
        return "-"
    return f"[{number(low, signed=signed)}, {number(high, signed=signed)}]"


def _pair_cells(result: CompareResult, label: str, run: str, base: str) -> list[str]:
    c = result.comparison(label, run, base)
    return [
        number(c.delta, signed=True),
        _interval(c.ci_low, c.ci_high, signed=True),
        p_text(c.p_value),
        p_text(c.p_adjusted),
        number(c.effect_size, 2, signed=True),
        f"{c.wins}/{c.ties}/{c.losses}",
        "*" if c.significant(result.alpha) else "",
    ]


def blocks(result: CompareResult) -> list[Block]:
    """The tables to show: (title, header, rows of text cells)."""
    level = f"{result.confidence:.0%} CI"
    pair_header = ["delta", f"delta {level}", "p", "p adj", "d", "W/T/L", ""]
    if result.baseline is not None:
        header = ["metric", "run", "mean", level, *pair_header]
        rows: list[list[str]] = []
        for label in result.labels:
            for i, name in enumerate(result.run_names):
                lo, hi = result.intervals[name][label]
                first = [label if i == 0 else "", name, number(result.means[name][label]),
                         _interval(lo, hi)]
                if name == result.baseline:
                    rows.append([*first, "baseline", "", "", "", "", "", ""])
                else:
                    rows.append([*first, *_pair_cells(result, label, name, result.baseline)])
        return [(f"baseline: {result.baseline}", header, rows)]
    means_rows = []
    for label in result.labels:
        for i, name in enumerate(result.run_names):
            lo, hi = result.intervals[name][label]
            means_rows.append([label if i == 0 else "", name,
                               number(result.means[name][label]), _interval(lo, hi)])
    pair_rows = []
    last = None
    for c in result.comparisons:
        pair_rows.append([c.metric if c.metric != last else "", c.run, c.baseline,
                          *_pair_cells(result, c.metric, c.run, c.baseline)])
        last = c.metric
    return [
        ("means", ["metric", "run", "mean", level], means_rows),
        ("all pairs (run - baseline)", ["metric", "run", "baseline", *pair_header], pair_rows),
    ]


def _aligned(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    text_cols = {0, 1, 2} if "baseline" in header[:3] else {0, 1}

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i in text_cols else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    rule = "  ".join("-" * w for w in widths).rstrip()
    return "\n".join([line(header), rule, *map(line, rows)])


def _markdown(header: list[str], rows: list[list[str]]) -> str:
    def esc(cell: str) -> str:
        return cell.replace("|", "\\|").replace("*", "\\*")

    align = ["---" if h in ("metric", "run", "baseline") else "---:" for h in header]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def comparison_html(result: CompareResult) -> str:
    """HTML tables with the test and query policy as captions (notebooks, reports)."""
    parts = []
    for title, header, rows in blocks(result):
        parts.append("<table class='rankscope-compare'>")
        parts.append(f"<caption>{html.escape(title)}</caption><thead><tr>")
        parts += [f"<th>{html.escape(h)}</th>" for h in header]
        parts.append("</tr></thead><tbody>")
        for row in rows:
            cells = []
            for h, cell in zip(header, row, strict=True):
                style = "" if h in ("metric", "run", "baseline") else " style='text-align:right'"
                cells.append(f"<td{style}>{html.escape(cell)}</td>")
            parts.append("<tr>" + "".join(cells) + "</tr>")
        parts.append("</tbody></table>")
    notes = "<br>".join(html.escape(line) for line in result.describe().splitlines())
    parts.append(f"<p class='rankscope-notes'><small>{notes}</small></p>")
    return "".join(parts)


def _delimited(result: CompareResult, delimiter: str, digits: int | None) -> str:
    frame = result.to_polars("comparisons")
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\n")
    writer.writerow(frame.columns)
    for row in frame.iter_rows():
        writer.writerow([csv_number(v, digits) for v in row])
    return buffer.getvalue().rstrip("\n")


def render_comparison(result: CompareResult, fmt: str, *, digits: int | None = None,
                      describe: bool = True) -> str:
    """Render ``result`` in ``fmt`` (see :data:`COMPARISON_FORMATS`).

    ``digits``: decimals of the numbers of CSV/TSV (default: 15 significant
    digits, :func:`~rankscope.render.tabular.csv_number`); the tables keep
    their own precision, JSON is exact. ``describe``: end the table with the
    lines saying which queries of each run were evaluated (the command line
    writes those to stderr).
    """
    if fmt == "json":
        payload: Any = result.to_dict()
        return json.dumps(payload, indent=2, allow_nan=False)
    if fmt in ("csv", "tsv"):
        return _delimited(result, "," if fmt == "csv" else "\t", digits)
    if fmt == "latex":
        from rankscope.render.latex import comparison_latex

        return comparison_latex(result)
    if fmt == "html":
        return comparison_html(result)
    if fmt == "table":
        parts = [f"{title}\n{_aligned(header, rows)}" for title, header, rows in blocks(result)]
        return "\n\n".join(parts) + "\n" + result.describe(runs=describe)
    if fmt == "markdown":
        parts = [f"**{title}**\n\n{_markdown(header, rows)}" for title, header, rows
                 in blocks(result)]
        notes = "\n".join(f"- {line}" for line in result.describe().splitlines())
        return "\n\n".join(parts) + "\n\n" + notes
    raise OptionError(f"unknown format {fmt!r}; choose one of {', '.join(COMPARISON_FORMATS)}")
