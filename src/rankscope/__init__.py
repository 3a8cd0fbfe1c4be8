"""rankscope: measure the quality of search rankings.

The public surface is small and listed in ``__all__``::

    import rankscope
    result = rankscope.evaluate("qrels.txt", "run.txt", ["nDCG@10", "P@5", "AP"])
    result["nDCG@10"]; result.per_query; result.to_polars()

Names are imported on first use, so ``import rankscope`` (and the command
line's ``--help``) stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from rankscope._version import __version__

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "evaluate": "rankscope.engine.evaluate",
    "EvalOptions": "rankscope.engine.options",
    "EvaluationResult": "rankscope.result",
    "Metric": "rankscope.metrics.base",
    "parse_metric": "rankscope.metrics.parser",
    "parse_metrics": "rankscope.metrics.parser",
    "Qrels": "rankscope.data.tables",
    "Run": "rankscope.data.tables",
    "SubtopicQrels": "rankscope.data.subtopics",
    "RankscopeError": "rankscope.errors",
    "RankscopeWarning": "rankscope.errors",
    "CompareResult": "rankscope.compare.result",
    "similarity": "rankscope.compare.rank_similarity",
    "fuse": "rankscope.fusion.combine",
    "optimize_fusion": "rankscope.fusion.optimize",
    "report": "rankscope.render.html_report",
    "Judgments": "rankscope.judgments.table",
}

# public name -> callable package (rankscope.judge is the LLM judge, rankscope.llm_judge)
_CALLABLE_PACKAGES: dict[str, str] = {
    "compare": "rankscope.compare",
    "judge": "rankscope.llm_judge",
}

__all__ = [
    "CompareResult",
    "EvalOptions",
    "EvaluationResult",
    "Judgments",
    "Metric",
    "Qrels",
    "RankscopeError",
    "RankscopeWarning",
    "Run",
    "SubtopicQrels",
    "__version__",
    "compare",
    "evaluate",
    "fuse",
    "judge",
    "optimize_fusion",
    "parse_metric",
    "parse_metrics",
    "report",
    "similarity",
]

if TYPE_CHECKING:
    from rankscope.compare.comparison import compare
    from rankscope.compare.rank_similarity import similarity
    from rankscope.compare.result import CompareResult
    from rankscope.data.subtopics import SubtopicQrels
    from rankscope.data.tables import Qrels, Run
    from rankscope.engine.evaluate import evaluate
    from rankscope.engine.options import EvalOptions
    from rankscope.errors import RankscopeError, RankscopeWarning
    from rankscope.fusion.combine import fuse
    from rankscope.fusion.optimize import optimize_fusion
    from rankscope.judgments.table import Judgments
    from rankscope.llm_judge.api import judge
    from rankscope.metrics.base import Metric
    from rankscope.metrics.parser import parse_metric, parse_metrics
    from rankscope.render.html_report import report
    from rankscope.result import EvaluationResult


def __getattr__(name: str) -> Any:
    if name in _CALLABLE_PACKAGES:
        # The subpackage is callable (it runs compare() / judge()), so the name means the
        # same object whether or not one of its submodules has been imported already.
        return importlib.import_module(_CALLABLE_PACKAGES[name])
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rankscope' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
