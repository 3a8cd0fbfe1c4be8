"""Where trec_eval measure computations register: name -> vectorized function.

A computation takes the shared :class:`~rankscope.trec_eval.stats.QueryStats`,
the bound measure (its parameters) and the evaluation settings, and returns
one float64 array per printed value (``P_5``, ``P_10``...), each with one
entry per evaluated query.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rankscope.trec_eval.catalog import Bound
from rankscope.trec_eval.stats import FloatArray, QueryStats

__all__ = ["COMPUTE", "Compute", "Settings", "computes"]


@dataclass(frozen=True)
class Settings:
    """Evaluation settings a measure may read (trec_eval's ``-N``)."""

    n_docs: int = 0


Compute = Callable[[QueryStats, Bound, Settings], list[FloatArray]]
COMPUTE: dict[str, Compute] = {}


def computes(*names: str) -> Callable[[Compute], Compute]:
    """Decorator: ``fn`` computes the measures ``names``."""

    def wrap(fn: Compute) -> Compute:
        for name in names:
            COMPUTE[name] = fn
        return fn

    return wrap
