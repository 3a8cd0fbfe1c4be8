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
        for p in fam.params:
            choices = f" (one of {', '.join(p.choices)})" if p.choices else ""
            lines += [f"- parameter `{p.name}` = `{p.default}`{choices}: {p.doc}"]
        lines += ["", "### Definition", "", fam.doc_section("Notes"), "",
                  "### References", "", fam.doc_section("References"), ""]
    return {group: "\n".join(lines).rstrip() + "\n" for group, lines in pages.items()}


def main() -> int:
    DOCS.mkdir(parents=True, exist_ok=True)
    for group, text in render().items():
        (DOCS / f"{group}.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
