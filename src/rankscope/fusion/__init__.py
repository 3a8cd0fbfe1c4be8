"""Fusing several runs into one: normalizations, the fusion methods, and tuning them.

- :func:`fuse` (:mod:`~rankscope.fusion.combine`): RRF, CombSUM, CombMNZ, ...
  as ranx offers them, with score normalizations; :func:`normalize`;
- :mod:`~rankscope.fusion.methods`: the method table (parameters, formulas,
  citations), from which ``docs/metrics/fusion.md`` is generated;
- :mod:`~rankscope.fusion.train`: what the supervised methods learn from qrels;
- :func:`optimize_fusion` (:mod:`~rankscope.fusion.optimize`): a grid search
  of a method's parameters against qrels, with cross-validation.

Also reachable as ``rankscope.fuse`` and ``rankscope.optimize_fusion``; the
modules lived in ``rankscope.compare`` before (``rankscope.compare.fusion``,
``fusion_methods``, ``fusion_search``, ``fusion_train``: deprecated paths that
still import for one release).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rankscope._lazy import lazy_exports

_EXPORTS = {
    "fuse": "rankscope.fusion.combine",
    "normalize": "rankscope.fusion.combine",
    "optimize_fusion": "rankscope.fusion.optimize",
    "FusionSearch": "rankscope.fusion.optimize",
    "METHODS": "rankscope.fusion.methods",
}

__all__ = ["METHODS", "FusionSearch", "fuse", "normalize", "optimize_fusion"]

if TYPE_CHECKING:
    from rankscope.fusion.combine import fuse, normalize
    from rankscope.fusion.methods import METHODS
    from rankscope.fusion.optimize import FusionSearch, optimize_fusion


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
