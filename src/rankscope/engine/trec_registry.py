"""Where trec_eval measure computations register: name -> vectorized function.

A computation takes the shared :class:`~rankscope.engine.trec_stats.QueryStats`,
the bound measure (its parameters) and the evaluation settings, and returns
one float64 array per printed value (``P_5``, ``P_10``...), each with one
entry per evaluated query.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from rankscope.engine.trec_stats import FloatArray, QueryStats

__all__ = ["COMPUTE", "Compute", "MeasureArgs", "Settings", "computes"]


class MeasureArgs(Protocol):
    """A trec_eval measure with its parameters read (what a computation needs).

    ``values`` are its cut-offs or numeric parameters, ``pairs`` its
    ``key=value`` parameters, both as trec_eval's ``-m NAME.PARAMS`` gives them.
    """

    @property
    def name(self) -> str: ...

    @property
    def values(self) -> tuple[float, ...]: ...

    @property
    def pairs(self) -> tuple[tuple[str, float], ...]: ...


@dataclass(frozen=True)
class Settings:
    """Evaluation settings a measure may read (trec_eval's ``-N``)."""

    n_docs: int = 0


Compute = Callable[[QueryStats, MeasureArgs, Settings], list[FloatArray]]
COMPUTE: dict[str, Compute] = {}


def computes(*names: str) -> Callable[[Compute], Compute]:
    """Decorator: ``fn`` computes the measures ``names``."""

    def wrap(fn: Compute) -> Compute:
        for name in names:
            COMPUTE[name] = fn
        return fn

    return wrap
