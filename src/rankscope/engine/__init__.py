"""The engine: rank once, compute every metric on whole arrays, aggregate.

The names below load on first use, so a part of the engine (the trec_eval
command's ranking, say) can be imported without the whole of it.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["EvalOptions", "MetricPlan", "RankedLists", "aggregate", "compute", "evaluate",
           "plan_metrics", "rank", "resolve_metrics"]

_HOME = {
    "EvalOptions": "rankscope.engine.options",
    "RankedLists": "rankscope.engine.ranked_lists",
    "rank": "rankscope.engine.ranking",
    "aggregate": "rankscope.engine.assemble",
    "compute": "rankscope.engine.evaluate",
    "evaluate": "rankscope.engine.evaluate",
    "MetricPlan": "rankscope.engine.conventions",
    "plan_metrics": "rankscope.engine.conventions",
    "resolve_metrics": "rankscope.engine.evaluate",
}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(import_module(_HOME[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
