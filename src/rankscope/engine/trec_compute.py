"""trec_eval's measure computations by measure name, complete once this is imported.

Each computation registers itself (:func:`~rankscope.engine.trec_registry.computes`)
in its module; importing this module imports them all, so :data:`COMPUTE` holds
every qrels-format measure of trec_eval 10.0.
"""

from __future__ import annotations

import rankscope.engine.kernels_trec
import rankscope.engine.kernels_trec_gain
import rankscope.engine.kernels_trec_interp  # noqa: F401  (each fills COMPUTE)
from rankscope.engine.trec_registry import COMPUTE, MeasureArgs, Settings

__all__ = ["COMPUTE", "MeasureArgs", "Settings"]
