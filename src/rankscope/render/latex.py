r"""LaTeX (booktabs) tables of comparisons, ready for a paper.

Runs are rows and metrics columns; the best mean of each metric is bold and
significance marks are explained in the caption. Against a baseline:
:math:`^\dagger` significantly higher, :math:`^\ddagger` significantly lower.
Over all pairs, runs are numbered and a superscript lists the runs a run is
significantly better than (numbers, so any number of runs works). The table
needs ``\usepackage{booktabs}``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rankscope.compare.result import CompareResult

__all__ = ["comparison_latex", "escape"]

_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}


def escape(text: str) -> str:
    """Text with LaTeX's special characters escaped."""
    return "".join(_SPECIAL.get(ch, ch) for ch in text)


def _best(result: CompareResult, label: str) -> float | None:
    values = [v for name in result.run_names if (v := result.means[name][label]) is not None]
    return max(values) if values else None


def _marks(result: CompareResult, label: str, name: str) -> str:
    if result.baseline is not None:
        if name == result.baseline:
            return ""
        c = result.comparison(label, name, result.baseline)
        if not c.significant(result.alpha):
            return ""
        return r"$^{\dagger}$" if c.delta > 0 else r"$^{\ddagger}$"
    beaten = []
    for c in result.comparisons:
        if c.metric != label or not c.significant(result.alpha):
            continue
        if c.run == name and c.delta > 0:
            beaten.append(result.run_names.index(c.baseline) + 1)
        elif c.baseline == name and c.delta < 0:
            beaten.append(result.run_names.index(c.run) + 1)
    if not beaten:
        return ""
    return "$^{" + ",".join(str(i) for i in sorted(beaten)) + "}$"


def _caption(result: CompareResult) -> str:
    from rankscope.compare.corrections import CORRECTION_NAMES
    from rankscope.compare.significance import TEST_NAMES

    test = TEST_NAMES[result.test]
    if result.test != "tukey" and result.correction != "none":
        test += f" with {CORRECTION_NAMES[result.correction]} correction"
    counts = sorted(set(result.n_queries.values()))
    queries = (f"{counts[0]} queries" if len(counts) == 1
               else f"{counts[0]}--{counts[-1]} queries")
    head = f"Mean over {queries} (policy {escape(result.queries)}); best in bold. "
    level = f"$p < {result.alpha:g}$, {escape(test)}"
    if result.baseline is not None:
        marks = (rf"$^{{\dagger}}$ / $^{{\ddagger}}$: significantly higher / lower than the "
                 rf"baseline ({escape(result.baseline)}), {level}.")
    else:
        marks = (rf"Superscripts list the runs a run is significantly better than "
                 rf"(all pairs), {level}.")
    return head + marks


def comparison_latex(result: CompareResult, *, label: str = "tab:rankscope-compare") -> str:
    """A booktabs ``table`` environment for ``result``."""
    numbered = result.baseline is None
    columns = ("r" if numbered else "") + "l" + "r" * len(result.labels)
    header = (["\\#"] if numbered else []) + ["Run"] + [escape(m) for m in result.labels]
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\caption{" + _caption(result) + "}",
        r"\label{" + label + "}",
        r"\begin{tabular}{" + columns + "}",
        r"\toprule",
        " & ".join(header) + r" \\",
        r"\midrule",
    ]
    for i, name in enumerate(result.run_names):
        shown = escape(name) + (" (baseline)" if name == result.baseline else "")
        cells = ([str(i + 1)] if numbered else []) + [shown]
        for metric in result.labels:
            value = result.means[name][metric]
            if value is None or math.isnan(value):
                cells.append("--")
                continue
            text = f"{value:.4f}"
            if value == _best(result, metric):
                text = r"\textbf{" + text + "}"
            cells.append(text + _marks(result, metric, name))
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines)
