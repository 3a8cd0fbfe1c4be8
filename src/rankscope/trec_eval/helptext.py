"""``trec_eval -h``: the long help, the format explanations, the marked measures' docs.

The texts are data (``help_texts.json`` beside this module, trec_eval 10.0's
words verbatim), read when help is asked for.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from rankscope.trec_eval.catalog import MEASURES

__all__ = ["help_text", "measure_docs"]

_NONE = (
    "-- No measures indicated.\n"
    "   Request measure documentation using <-m measure> on command line\n"
)


@cache
def _texts() -> dict[str, Any]:
    raw = resources.files("rankscope.trec_eval").joinpath("help_texts.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(raw)
    return data


def _join(lines: list[str]) -> str:
    return "\n".join(lines)


def measure_docs() -> dict[str, str]:
    """Each measure's explanation, exactly as trec_eval prints it."""
    return {name: _join(lines) for name, lines in _texts()["measures"].items()}


def help_text(marked: set[str], rel_format: str, results_format: str) -> str:
    """What ``trec_eval -h`` prints for these ``-m``, ``-R`` and ``-T`` values."""
    texts = _texts()
    parts = [_join(texts["general"])]
    if results_format == "trec_results":
        parts.append(_join(texts["results_format"]))
    if rel_format in texts["rel_formats"]:
        parts.append(_join(texts["rel_formats"][rel_format]))
    parts.append("Individual measure documentation for requested measures\n")
    docs = measure_docs()
    chosen = [f"{m.name}\n{docs[m.name]}" for m in MEASURES if m.name in marked]
    parts.extend(chosen if chosen else [_NONE])
    return "".join(parts)
