"""Comparing runs: significance tests, rank similarity and fusion.

- :func:`compare`: per-run means with intervals, paired tests, corrections,
  effect sizes and win / tie / loss counts (:class:`CompareResult`);
- :func:`similarity`: RBO, Jaccard, overlap and Kendall's tau between two runs;
- :func:`fuse` and :func:`optimize_fusion`: RRF, CombSUM, CombMNZ, ... and a
  grid search of their parameters;
- figures and the self-contained HTML page (:func:`rankscope.report`) are
  presentation: they live in :mod:`rankscope.render` (``plots``,
  ``html_report``), above this package.

Submodules are imported on first use so ``import rankscope.compare`` stays cheap.

The package is itself callable: ``rankscope.compare(qrels, runs, metrics)`` is
:func:`compare`, whether ``rankscope.compare`` names this package (as it does
once any of its modules is imported) or the function.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "compare": "rankscope.compare.comparison",
    "CompareResult": "rankscope.compare.result",
    "Comparison": "rankscope.compare.result",
    "similarity": "rankscope.compare.rank_similarity",
    "fuse": "rankscope.compare.fusion",
    "normalize": "rankscope.compare.fusion",
    "optimize_fusion": "rankscope.compare.fusion_search",
    "FusionSearch": "rankscope.compare.fusion_search",
    "metric_at_k": "rankscope.compare.curves",
    "precision_recall": "rankscope.compare.curves",
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
    "similarity",
]

if TYPE_CHECKING:
    from rankscope.compare.comparison import compare
    from rankscope.compare.curves import metric_at_k, precision_recall
    from rankscope.compare.fusion import fuse, normalize
    from rankscope.compare.fusion_search import FusionSearch, optimize_fusion
    from rankscope.compare.rank_similarity import similarity
    from rankscope.compare.result import CompareResult, Comparison


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rankscope.compare' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


class _CallablePackage(types.ModuleType):
    """This package, callable as :func:`rankscope.compare.comparison.compare`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from rankscope.compare.comparison import compare as run_compare

        return run_compare(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
