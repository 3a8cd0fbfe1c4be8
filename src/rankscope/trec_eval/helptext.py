"""``trec_eval -h``: the long help, the format explanations, the marked measures' docs."""

from __future__ import annotations

from rankscope.trec_eval.catalog import MEASURES
from rankscope.trec_eval.help_general import GENERAL, REL_FORMATS, RESULTS_FORMAT
from rankscope.trec_eval.help_measures_a import DOCS as _DOCS_A
from rankscope.trec_eval.help_measures_b import DOCS as _DOCS_B

__all__ = ["MEASURE_DOCS", "help_text"]

MEASURE_DOCS: dict[str, str] = {**_DOCS_A, **_DOCS_B}
"""Each measure's explanation, exactly as trec_eval prints it."""

_NONE = (
    "-- No measures indicated.\n"
    "   Request measure documentation using <-m measure> on command line\n"
)


def help_text(marked: set[str], rel_format: str, results_format: str) -> str:
    """What ``trec_eval -h`` prints for these ``-m``, ``-R`` and ``-T`` values."""
    parts = [GENERAL]
    if results_format == "trec_results":
        parts.append(RESULTS_FORMAT)
    if rel_format in REL_FORMATS:
        parts.append(REL_FORMATS[rel_format])
    parts.append("Individual measure documentation for requested measures\n")
    docs = [f"{m.name}\n{MEASURE_DOCS[m.name]}" for m in MEASURES if m.name in marked]
    parts.extend(docs if docs else [_NONE])
    return "".join(parts)
