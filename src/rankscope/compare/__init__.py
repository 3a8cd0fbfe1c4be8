"""Comparing runs: significance tests, rank similarity, fusion, plots and reports.

- :func:`compare`: per-run means with intervals, paired tests, corrections,
  effect sizes and win / tie / loss counts (:class:`CompareResult`);
- :func:`similarity`: RBO, Jaccard, overlap and Kendall's tau between two runs;
- :func:`fuse` and :func:`optimize_fusion`: RRF, CombSUM, CombMNZ, ... and a
  grid search of their parameters;
- :mod:`rankscope.compare.plots` and :func:`report`: figures and a
  self-contained HTML page (the ``plot`` extra).

Submodules are imported on first use so ``import rankscope.compare`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "compare": "rankscope.compare.comparison",
    "CompareResult": "rankscope.compare.result",
    "Comparison": "rankscope.compare.result",
    "similarity": "rankscope.compare.similarity",
    "fuse": "rankscope.compare.fusion",
    "normalize": "rankscope.compare.fusion",
    "optimize_fusion": "rankscope.compare.fusion_search",
    "FusionSearch": "rankscope.compare.fusion_search",
    "metric_at_k": "rankscope.compare.curves",
    "precision_recall": "rankscope.compare.curves",
    "report": "rankscope.compare.report",
}

__all__ = [
    "CompareResult",
    "Comparison",
    "FusionSearch",
    "compare",
    "fuse",
    "metric_at_k",
    "normalize",
    "optimize_fusion",
    "precision_recall",
    "report",
    "similarity",
]

if TYPE_CHECKING:
    from rankscope.compare.comparison import compare
    from rankscope.compare.curves import metric_at_k, precision_recall
    from rankscope.compare.fusion import fuse, normalize
    from rankscope.compare.fusion_search import FusionSearch, optimize_fusion
    from rankscope.compare.report import report
    from rankscope.compare.result import CompareResult, Comparison
    from rankscope.compare.similarity import similarity


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rankscope.compare' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
