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

import importlib
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rankscope.fusion' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
