"""Render an evaluation as a terminal table, Markdown, CSV, TSV, JSON or HTML."""

from __future__ import annotations

import csv
import html
import io
import json
import math
from typing import TYPE_CHECKING, Any

from rankscope.errors import OptionError
from rankscope.result import CONFIDENCE

if TYPE_CHECKING:
    from rankscope.result import EvaluationResult

__all__ = [
    "EVALUATION_FORMATS", "SUMMARY_ROWS", "csv_number", "evaluation_html", "format_value",
    "frame_html", "render_evaluation", "render_evaluations", "rounded",
]

EVALUATION_FORMATS = ("table", "json", "csv", "tsv", "markdown")
SUMMARY_ROWS = ("mean", "n_queries", "std", "ci_low", "ci_high")
"""The ``statistic`` of a per-query CSV/TSV's summary rows (a query's own rows say ``value``)."""
SIGNIFICANT = 15
"""Significant digits of a float in CSV/TSV when no precision is asked: every digit a
float64 holds for sure, without the noise of its last bits (0.3, not 0.30000000000000004)."""


def csv_number(value: Any, digits: int | None = None) -> Any:
    """A CSV/TSV cell: a float at ``digits`` decimals (None: :data:`SIGNIFICANT` significant
    digits, written as short as they allow), empty for null; anything else as it is.

    Examples
    --------
    >>> csv_number(0.1 + 0.2), csv_number(2 / 3), csv_number(2 / 3, 3), csv_number(None)
    ('0.3', '0.666666666666667', '0.667', '')
    """
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if digits is not None:
            return f"{value:.{digits}f}"
        return repr(float(f"{value:.{SIGNIFICANT}g}"))
    return value


def format_value(value: float | None, digits: int = 4, *, count: bool = False) -> str:
    """A number for people: fixed decimals (whole numbers for counts), '-' for null."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if count and float(value).is_integer():
        return str(int(value))
    return f"{value:.{digits}f}"


def _rows(result: EvaluationResult, per_query: bool) -> tuple[list[str], list[list[Any]]]:
    """Header and rows; every mean comes with the number of queries it was taken over.

    The interval columns keep their place when the result's ``show_interval``
    leaves the interval out (null: '-' or an empty cell).
    """
    counts = result.n_queries
    spans = result.shown_interval()
    low = [None if spans[label] is None else spans[label][0]  # type: ignore[index]
           for label in result.labels]
    high = [None if spans[label] is None else spans[label][1]  # type: ignore[index]
            for label in result.labels]
    if per_query:
        header = ["query", *result.labels]
        rows: list[list[Any]] = [
            [q, *[None if math.isnan(v) else float(v) for v in result.values[i]]]
            for i, q in enumerate(result.query_ids)
        ]
        rows.append(["all", *[result.means[label] for label in result.labels]])
        rows.append(["n_queries", *[counts[label] for label in result.labels]])
        rows.append(["std", *[result.std[label] for label in result.labels]])
        rows.append(["ci_low", *low])
        rows.append(["ci_high", *high])
        return header, rows
    return ["metric", "value", "n_queries", "std", "ci_low", "ci_high"], [
        [label, result.means[label], counts[label], result.std[label], lo, hi]
        for label, lo, hi in zip(result.labels, low, high, strict=True)
    ]


def _aligned(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        cells = [
            str(c).ljust(w) if i == 0 else str(c).rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def _delimited(
    results: list[tuple[str, EvaluationResult]], fmt: str, per_query: bool,
    digits: int | None = None,
) -> str:
    """CSV / TSV of one or more runs: a ``run`` column first, one header.

    Per query, a ``statistic`` column follows the query: ``value`` on each
    query's row, and the summary rows (:data:`SUMMARY_ROWS`) have an empty
    query, so a query named ``all`` or ``std`` is never taken for one.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="," if fmt == "csv" else "\t", lineterminator="\n")
    for i, (name, result) in enumerate(results):
        header, rows = _rows(result, per_query)
        n_queries = len(result.query_ids) if per_query else 0
        if i == 0:
            writer.writerow(["run", "query", "statistic", *header[1:]] if per_query
                            else ["run", *header])
        for j, row in enumerate(rows):
            cells = [csv_number(c, digits) for c in row[1:]]
            if not per_query:
                writer.writerow([name, row[0], *cells])
            elif j < n_queries:
                writer.writerow([name, row[0], "value", *cells])
            else:
                writer.writerow([name, "", SUMMARY_ROWS[j - n_queries], *cells])
    return buffer.getvalue().rstrip("\n")


def _text_rows(result: EvaluationResult, per_query: bool,
               digits: int = 4) -> tuple[list[str], list[list[str]]]:
    header, rows = _rows(result, per_query)
    sums = [m.spec.aggregate == "sum" for m in result.metrics]
    if per_query:
        text_rows = [
            [row[0], *[format_value(c, digits, count=row[0] == "n_queries"
                                    or (n and row[0] not in ("std", "ci_low", "ci_high")))
                       for c, n in zip(row[1:], sums, strict=True)]]
            for row in rows
        ]
        return header, text_rows
    # People read the interval as one column: [low, high] at the result's level.
    level = f"ci{round(CONFIDENCE * 100)}"
    text_rows = [[row[0], format_value(row[1], digits, count=n), str(row[2]),
                  format_value(row[3], digits),
                  "-" if row[4] is None
                  else f"[{format_value(row[4], digits)}, {format_value(row[5], digits)}]"]
                 for row, n in zip(rows, sums, strict=True)]
    return ["metric", "value", "n_queries", "std", level], text_rows


def rounded(value: Any, digits: int | None) -> Any:
    """A JSON-ready value with its floats at ``digits`` decimals (None: as they are)."""
    if digits is None:
        return value
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, dict):
        return {k: rounded(v, digits) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v, digits) for v in value]
    return value


def render_evaluation(result: EvaluationResult, fmt: str, *, per_query: bool,
                      digits: int | None = None, describe: bool = True) -> str:
    """Render ``result`` in ``fmt`` (see :data:`EVALUATION_FORMATS`).

    ``digits``: decimals of every number (default: 4 in tables; every
    significant digit in JSON, 15 in CSV/TSV, see :func:`csv_number`).
    ``describe``: end a table with the line saying which queries were
    evaluated (the command line writes it to stderr instead).
    """
    if fmt == "json":
        return json.dumps(rounded(result.to_dict(per_query=per_query), digits), indent=2,
                          allow_nan=False)
    if fmt in ("csv", "tsv"):
        return _delimited([(result.info.run_name, result)], fmt, per_query, digits)
    header, text_rows = _text_rows(result, per_query, 4 if digits is None else digits)
    if fmt == "markdown":
        lines = ["| " + " | ".join(header) + " |",
                 "| " + " | ".join(["---"] + ["---:"] * (len(header) - 1)) + " |"]
        lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in text_rows]
        return "\n".join(lines)
    if fmt == "table":
        return _aligned(header, text_rows) + ("\n" + result.info.describe() if describe else "")
    raise OptionError(f"unknown format {fmt!r}; choose one of {', '.join(EVALUATION_FORMATS)}")


def render_evaluations(
    results: list[tuple[str, EvaluationResult]], fmt: str, *, per_query: bool,
    digits: int | None = None, describe: bool = True,
) -> str:
    """Several runs in one document whose shape does not depend on how many there are.

    JSON: ``{"runs": {name: {...}}}``, and for one run also that run's
    ``mean`` / ``n_queries`` / ``per_query`` / ``info`` at the top level (the
    shape of earlier versions). CSV / TSV: one table with a ``run`` column.
    Text formats: one titled table per run.
    """
    if fmt == "json":
        runs = {name: r.to_dict(per_query=per_query) for name, r in results}
        payload: dict[str, Any] = dict(runs[results[0][0]]) if len(results) == 1 else {}
        payload["runs"] = runs
        return json.dumps(rounded(payload, digits), indent=2, allow_nan=False)
    if fmt in ("csv", "tsv"):
        return _delimited(results, fmt, per_query, digits)
    if len(results) == 1:
        return render_evaluation(results[0][1], fmt, per_query=per_query, digits=digits,
                                 describe=describe)
    parts = [f"# {name}\n" + render_evaluation(r, fmt, per_query=per_query, digits=digits,
                                                describe=describe) for name, r in results]
    return "\n\n".join(parts)


def evaluation_html(result: EvaluationResult, *, per_query: bool) -> str:
    """An HTML table (for notebooks), with the policy line as a caption."""
    header, rows = _text_rows(result, per_query)
    parts = ["<table>", f"<caption>{html.escape(result.info.describe())}</caption>", "<tr>"]
    parts += [f"<th>{html.escape(h)}</th>" for h in header]
    parts.append("</tr>")
    for row in rows:
        parts.append("<tr>" + f"<td>{html.escape(str(row[0]))}</td>")
        parts += [f"<td style='text-align:right'>{html.escape(c)}</td>" for c in row[1:]]
        parts.append("</tr>")
    parts.append("</table>")
    return "".join(parts)


def frame_html(frame: Any, caption: str = "", *, max_rows: int = 50) -> str:
    """A polars DataFrame as an HTML table for notebooks: numbers right-aligned, null as '-'.

    Only the first ``max_rows`` rows are shown; the caption then says how many there are.
    """
    shown = frame.head(max_rows)
    if frame.height > max_rows:
        caption += f" (first {max_rows} of {frame.height} rows)"
    parts = ["<table>"]
    if caption:
        parts.append(f"<caption>{html.escape(caption)}</caption>")
    parts.append("<tr>" + "".join(f"<th>{html.escape(str(c))}</th>" for c in shown.columns)
                 + "</tr>")
    for row in shown.iter_rows():
        cells = []
        for value in row:
            number = value is None or (isinstance(value, int | float)
                                       and not isinstance(value, bool))
            if not number:
                cells.append(f"<td>{html.escape(str(value))}</td>")
            else:
                text = str(value) if isinstance(value, int) else format_value(value)
                cells.append(f"<td style='text-align:right'>{text}</td>")
        parts.append("<tr>" + "".join(cells) + "</tr>")
    parts.append("</table>")
    return "".join(parts)
