"""rankscope: measure the quality of search rankings.

The public surface is small and listed in ``__all__``::

    import rankscope
    result = rankscope.evaluate("qrels.txt", "run.txt", ["nDCG@10", "P@5", "AP"])
    result["nDCG@10"]; result.per_query; result.to_polars()
"""

from rankscope.data import Qrels, Run
from rankscope.engine import evaluate
from rankscope.errors import RankscopeError, RankscopeWarning
from rankscope.metrics import Metric, parse_metric, parse_metrics
from rankscope.result import EvaluationResult

__version__ = "0.1.0"

__all__ = [
    "EvaluationResult",
    "Metric",
    "Qrels",
    "RankscopeError",
    "RankscopeWarning",
    "Run",
    "__version__",
    "evaluate",
    "parse_metric",
    "parse_metrics",
]
