"""The per-query parts of the HTML report: a sortable table and the queries that got worse.

The table sorts itself when a header is clicked, with a few lines of script
inlined in the page (no library, nothing fetched), so the report stays one
self-contained file.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from rankscope.compare.result import CompareResult

__all__ = ["DEFAULT_METRICS", "SORT_SCRIPT", "TABLE_STYLE", "ValueTexts", "per_query_table_html",
           "signed_text", "signed_texts", "worse_queries_html"]

DEFAULT_METRICS = ("nDCG@10", "AP", "RR", "P@10", "R@100")
"""Metrics of a report's tables when none are named (here, not in
:mod:`rankscope.render.html_report`: the command line reads them before the page's modules
load, which it does while the first run is read)."""

TABLE_STYLE = "table.sortable td + td, table.rankscope-worse td + td " \
              "{ text-align: right; }"
"""The tables' style: every column after the query's holds numbers, right-aligned."""

SORT_SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, col) {
    th.title = "sort"; th.style.cursor = "pointer";
    th.addEventListener("click", function () {
      var body = table.tBodies[0], rows = Array.from(body.rows);
      var down = th.dataset.order !== "desc"; th.dataset.order = down ? "desc" : "asc";
      function key(row) { var t = row.cells[col].textContent, n = parseFloat(t);
                          return isNaN(n) ? (t === "-" ? -Infinity : t) : n; }
      rows.sort(function (a, b) { var x = key(a), y = key(b);
        var c = (typeof x === typeof y) ? (x < y ? -1 : x > y ? 1 : 0)
                                        : (typeof x === "number" ? -1 : 1);
        return down ? -c : c; });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""
"""Click a header: sort by that column, descending first; numbers as numbers, '-' lowest."""


def _cells(values: Any) -> Any:
    """Values as :func:`~rankscope.render.tabular.format_value` writes them ('-' for a
    missing one): a list of texts, or of lists for a 2-D ``values``.

    Each distinct value (by its bits: ``-0.0`` is written ``-0.0000``) is formatted
    once (``f"{v:.4f}"``, NaN the one value unequal to itself) and its text shared:
    a track's per-query table holds 58,000 numbers, about half of them repeats (a
    precision at 10 takes 11 values), and a format per number was most of the time
    the page took to write.
    """
    block = np.asarray(values, dtype=np.float64)
    distinct, at = np.unique(np.ascontiguousarray(block).view(np.int64), return_inverse=True)
    texts = np.array(["-" if v != v else f"{v:.4f}" for v in distinct.view(np.float64).tolist()],
                     dtype=object)
    written: Any = texts[at.reshape(block.shape)].tolist()
    return written


def signed_text(text: str, minus: str = "-") -> str:
    """A difference's text as :func:`_cells` writes it (``f"{d:.4f}"``), signed as
    ``f"{d:+.4f}"`` writes ``d``, with ``minus`` for its minus sign.

    Parameters
    ----------
    text : str
        The text of a difference that has a value.
    minus : str
        The minus sign written (an SVG title writes U+2212).

    Returns
    -------
    str
        ``text`` with its sign, ``+`` when not negative.
    """
    (signed,) = signed_texts((text,), minus)
    return signed


def signed_texts(texts: Iterable[str], minus: str = "-") -> list[str]:
    """:func:`signed_text` of each text, in one pass (a report's difference plots sign
    14,000 bars' texts: two calls a bar were a tenth of the plots' time).

    Parameters
    ----------
    texts : iterable of str
        Texts of differences that have values, as :func:`_cells` writes them.
    minus : str
        The minus sign written.

    Returns
    -------
    list of str
        Each text with its sign, ``+`` when not negative.
    """
    return [f"{minus}{text[1:]}" if text[0] == "-" else f"+{text}" for text in texts]


class ValueTexts:
    """Each run's per-query values on a metric, and their differences to another run's, as
    the report writes them (:func:`_cells`), each column written once.

    The per-query table, the worse-queries tables and the difference plots' titles show
    the same numbers: a track's report of 17 runs would otherwise format the values of
    8 runs, the baseline's (8 times a metric) and their differences again for the plots,
    and 2,240 rows' values and query ids again for the worse-queries tables.

    Parameters
    ----------
    result : CompareResult
        The comparison whose per-query values are written.
    """

    def __init__(self, result: CompareResult) -> None:
        self._result = result
        self._written: dict[tuple[str | None, str], list[list[str]]] = {}
        self._queries: list[str] | None = None

    def queries(self) -> list[str]:
        """The query ids, escaped for HTML, in ``query_ids`` order."""
        if self._queries is None:
            self._queries = [html.escape(q) for q in self._result.query_ids]
        return self._queries

    def values(self, run: str, metric: str) -> list[str]:
        """``run``'s value on ``metric`` for each query of ``query_ids`` ('-' for none)."""
        return self._metric(None, metric)[self._place(run, metric)]

    def differences(self, run: str, base: str, metric: str) -> list[str]:
        """``run - base`` on ``metric`` for each query ('-' where either has no value)."""
        return self._metric(base, metric)[self._place(run, metric)]

    def _place(self, run: str, metric: str) -> int:
        self._result.column(run, metric)  # the result's error for a name it lacks
        return self._result.run_names.index(run)

    def _metric(self, base: str | None, metric: str) -> list[list[str]]:
        """Every run's texts on ``metric`` (or their differences to ``base``), written at
        once: a metric's runs share many values, and each is formatted once."""
        key = (base, metric)
        texts = self._written.get(key)
        if texts is None:
            result = self._result
            block = np.asarray(result.values)[:, :, result.labels.index(metric)]
            if base is not None:  # elementwise: each row is column(run) - column(base)
                block = block - result.column(base, metric)
            texts = self._written[key] = _cells(block)
        return texts


def per_query_table_html(result: CompareResult, texts: ValueTexts | None = None) -> str:
    """Every query's value on every metric for every run (and the difference to the baseline).

    ``texts``: the cells, when the difference plots write the same values.
    """
    texts = ValueTexts(result) if texts is None else texts
    base = result.baseline or result.run_names[0]
    others = [n for n in result.run_names if n != base]
    header = ["query"]
    columns = []
    for label in result.labels:
        for name in result.run_names:
            header.append(f"{label} {name}")
            columns.append(texts.values(name, label))
        for name in others:
            header.append(f"{label} {name} - {base}")
            columns.append(texts.differences(name, base, label))
    # numbers right-aligned by the page's style sheet (TABLE_STYLE), not cell by cell:
    # 17 runs x 7 metrics x 250 queries are 58,000 cells
    parts = ["<table class='sortable rankscope-per-query'><thead><tr>"]
    parts += [f"<th>{html.escape(h)}</th>" for h in header]
    parts.append("</tr></thead><tbody>")
    for q, row in zip(texts.queries(), zip(*columns, strict=True), strict=True):
        parts.append(f"<tr><td>{q}</td><td>{'</td><td>'.join(row)}</td></tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


def worse_queries_html(result: CompareResult, *, limit: int = 20,
                       texts: ValueTexts | None = None) -> str:
    """For each metric and run, the queries where it scores below the baseline, worst first.

    ``texts``: the values as written, when the per-query table writes them too.
    """
    texts = ValueTexts(result) if texts is None else texts
    queries = texts.queries()
    base = result.baseline or result.run_names[0]
    parts = []
    for label in result.labels:
        for name in (n for n in result.run_names if n != base):
            worse = result.worse_rows(label, name, base)
            title = f"{label}: {name} below {base} on {worse.size} queries"
            if not worse.size:
                parts.append(f"<p>{html.escape(title)}.</p>")
                continue
            more = f" (the {limit} worst shown)" if worse.size > limit else ""
            parts.append(f"<table class='rankscope-worse'><caption>{html.escape(title + more)}"
                         f"</caption><thead><tr><th>query</th><th>{html.escape(name)}</th>"
                         f"<th>{html.escape(base)}</th><th>difference</th></tr></thead><tbody>")
            ours, theirs = texts.values(name, label), texts.values(base, label)
            differences = texts.differences(name, base, label)
            shown = worse[:limit].tolist()
            signed = signed_texts(differences[i] for i in shown)
            parts += [f"<tr><td>{queries[i]}</td><td>{ours[i]}</td><td>{theirs[i]}</td>"
                      f"<td>{d}</td></tr>" for i, d in zip(shown, signed, strict=True)]
            parts.append("</tbody></table>")
    return "".join(parts)
