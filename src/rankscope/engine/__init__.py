"""The engine: rank once, compute every metric on whole arrays, aggregate."""

from rankscope.engine.evaluate import aggregate, compute, evaluate, resolve_metrics
from rankscope.engine.ranking import RankedLists, rank

__all__ = ["RankedLists", "aggregate", "compute", "evaluate", "rank", "resolve_metrics"]
