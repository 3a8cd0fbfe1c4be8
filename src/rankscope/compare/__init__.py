"""Comparing runs: significance tests, rank similarity, curves (fusion: :mod:`rankscope.fusion`).

- :func:`compare`: per-run means with intervals, paired tests, corrections,
  effect sizes and win / tie / loss counts (:class:`CompareResult`);
- :func:`similarity`: RBO, Jaccard, overlap and Kendall's tau between two runs;
- :func:`fuse` and :func:`optimize_fusion`: RRF, CombSUM, CombMNZ, ... and a
  grid search of their parameters, from :mod:`rankscope.fusion` (their
  modules' old paths here, ``rankscope.compare.fusion`` and its siblings, are
  deprecated and still import for one release);
- figures and the self-contained HTML page (:func:`rankscope.report`) are
  presentation: they live in :mod:`rankscope.render` (``plots``,
  ``html_report``), above this package.

Submodules are imported on first use so ``import rankscope.compare`` stays cheap.

The package is itself callable: ``rankscope.compare(qrels, runs, metrics)`` is
:func:`compare`, whether ``rankscope.compare`` names this package (as it does
once any of its modules is imported) or the function.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from rankscope._aliases import redirect
from rankscope._lazy import lazy_exports

redirect({
    "rankscope.compare.fusion": "rankscope.fusion.combine",
    "rankscope.compare.fusion_methods": "rankscope.fusion.methods",
    "rankscope.compare.fusion_search": "rankscope.fusion.optimize",
    "rankscope.compare.fusion_train": "rankscope.fusion.train",
    "rankscope.compare.runs": "rankscope.data.runs",
})

_EXPORTS = {
    "compare": "rankscope.compare.comparison",
    "CompareResult": "rankscope.compare.result",
    "Comparison": "rankscope.compare.result",
    "similarity": "rankscope.compare.rank_similarity",
    "fuse": "rankscope.fusion.combine",
    "normalize": "rankscope.fusion.combine",
    "optimize_fusion": "rankscope.fusion.optimize",
    "FusionSearch": "rankscope.fusion.optimize",
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
    from rankscope.compare.rank_similarity import similarity
    from rankscope.compare.result import CompareResult, Comparison
    from rankscope.fusion.combine import fuse, normalize
    from rankscope.fusion.optimize import FusionSearch, optimize_fusion


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)


class _CallablePackage(types.ModuleType):
    """This package, callable as :func:`rankscope.compare.comparison.compare`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from rankscope.compare.comparison import compare as run_compare

        return run_compare(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
