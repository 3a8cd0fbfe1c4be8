"""Write docs/metrics/<group>.md from the metric metadata (one page per family group).

Run: python scripts/gen_metric_docs.py   (tests/test_docs.py checks the pages are current)
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs" / "metrics"

TITLES = {
    "binary": "Binary-relevance metrics",
    "graded": "Graded-relevance metrics",
    "trec_eval": "trec_eval measures",
    "similarity": "Rank similarity",
    "cwl": "C/W/L measures (cwl_eval)",
    "diagnostic": "Diagnostic measures",
    "intent_aware": "Intent-aware (diversity) measures",
}


def render() -> dict[str, str]:
    """Page name -> Markdown, for every group of registered families."""
    from rankscope.metrics.base import FAMILIES

    pages: dict[str, list[str]] = {}
    for fam in FAMILIES.values():
        lines = pages.setdefault(fam.group, [f"# {TITLES.get(fam.group, fam.group)}", "",
                                             "Generated from the metric definitions by "
                                             "`scripts/gen_metric_docs.py`; do not edit.", ""])
        cut = {"optional": "[@k]", "required": "@k", "none": ""}[fam.cutoff]
        lines += [f"## {fam.name}{cut}", "", fam.summary, ""]
        lines += [f"- aggregated over queries by: {fam.aggregate}"]
        if fam.aliases:
            lines += ["- also spelled: " + ", ".join(f"`{a}`" for a in fam.aliases)]
        if fam.agrees_with:
            lines += ["- same number as: " + "; ".join(fam.agrees_with)]
        if fam.cutoff != "none":
            lines += [f"- cut-off `k`: {fam.k_doc}"]
        for p in fam.params:
            choices = f" (one of {', '.join(p.choices)})" if p.choices else ""
            lines += [f"- parameter `{p.name}` = `{p.default}`{choices}: {p.doc}"]
        lines += ["", "### Definition", "", fam.doc_section("Notes"), "",
                  "### References", "", fam.doc_section("References"), ""]
    out = {group: "\n".join(lines).rstrip() + "\n" for group, lines in pages.items()}
    out["trec_eval_measures"] = _trec_eval_table()
    out["fusion"] = _fusion_page()
    return out


def _fusion_page() -> str:
    """Every fusion method of ``rankscope fuse`` with its formula, parameters and citation."""
    from rankscope.fusion.combine import NORMS
    from rankscope.fusion.methods import METHODS

    lines = ["# Fusion methods", "",
             "Generated from the method table (`rankscope/fusion/methods.py`) by "
             "`scripts/gen_metric_docs.py`; do not edit.", "",
             "`rankscope fuse RUN RUN... --method NAME` and `rankscope.fuse(runs, method=NAME)`; "
             "`--optimize QRELS` (`optimize_fusion`) searches every parameter below, with "
             "cross-validation folds (`--folds`, 5 by default for the supervised methods, "
             "which learn from qrels: `--train-qrels` / `qrels=`). Normalizations: "
             + ", ".join(f"`{n}`" for n in NORMS) + ".", "",
             "Notation: R(d) the runs that retrieved document d, n = |R(d)|, s_i(d) its "
             "normalized score and r_i(d) its rank in run i, w_i the run weights, N the "
             "documents any run retrieved for the query.", ""]
    for spec in METHODS.values():
        lines += [f"## {spec.name}", "", spec.summary, "",
                  f"- reads: {spec.kind}" + (" (trained on qrels)"
                                             if spec.kind == "supervised" else "")]
        if spec.aliases:
            lines += ["- also spelled: " + ", ".join(f"`{a}`" for a in spec.aliases)]
        for p in spec.params:
            lines += [f"- parameter `{p.name}` = `{p.default}`: {p.doc}"]
        lines += ["", "```math", spec.formula, "```", "", spec.citation, ""]
    return "\n".join(lines).rstrip() + "\n"


_ONLY_COMMAND = {
    "none": "printed by `rankscope trec_eval` (not a metric)",
    "prefs": "`rankscope trec_eval -R prefs` / `-R qrels_prefs` only (reads preferences)",
    "qrels_jg": "`rankscope trec_eval -R qrels_jg` only (reads judgment groups)",
    "qrels": "printed by `rankscope trec_eval` (a string, not a number)",
}


def _trec_eval_table() -> str:
    """Every measure of trec_eval 10.0 and the registered metric(s) it is."""
    from rankscope.data.trec_catalog import MEASURES
    from rankscope.errors import UnknownMetricError
    from rankscope.metrics.parser import parse_metrics
    from rankscope.metrics.trec_eval_names import member_spelling

    lines = ["# trec_eval 10.0's measures", "",
             "Generated from trec_eval's measure table (`rankscope/data/trec_catalog.py`) and "
             "the metric registry by `scripts/gen_metric_docs.py`; do not edit.", "",
             "Every measure `rankscope trec_eval` prints, in trec_eval's order, with the "
             "metric `rankscope.evaluate` computes for it under the same name (default "
             "parameters shown).", "",
             "| trec_eval measure | metric(s) | notes |", "| --- | --- | --- |"]
    for m in MEASURES:
        spelled = member_spelling(m.name)
        try:
            metrics = [metric.name for _, metric in parse_metrics(spelled)]
        except UnknownMetricError:
            lines.append(f"| `{m.name}` | | {_ONLY_COMMAND[m.source]} |")
            continue
        shown = ", ".join(f"`{name}`" for name in metrics[:3])
        if len(metrics) > 3:
            shown += f", ... ({len(metrics)})"
        note = f"spelled `{spelled}`" if spelled != m.name else ""
        lines.append(f"| `{m.name}` | {shown} | {note} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    DOCS.mkdir(parents=True, exist_ok=True)
    for group, text in render().items():
        (DOCS / f"{group}.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
