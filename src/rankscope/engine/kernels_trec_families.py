"""Kernels of the trec_eval-only metric families, in the core kernel style.

Each kernel takes the shared :class:`~rankscope.engine.context.Context` and a
bound metric and returns one value per query. It reads trec_eval's view of
the rankings (integer levels, pooled-but-unjudged and unjudged documents
apart, the ``-c`` stand-in for a query the run lacks), built once per
relevance level and cached in the context (:meth:`Context.trec_stats`), and
runs the measure's computation from :data:`~rankscope.engine.trec_registry.COMPUTE`,
the same one ``rankscope trec_eval`` prints. The table is complete on import;
the computations themselves are loaded on first use.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rankscope.data.cnum import atof
from rankscope.data.trec_catalog import BY_NAME, well_formed_pairs
from rankscope.engine.context import Context
from rankscope.engine.ranking import FloatArray
from rankscope.errors import MetricParameterError
from rankscope.metrics.base import Metric
from rankscope.metrics.trec_eval_names import STAND_IN_ZERO, TREC_FAMILIES

__all__ = ["TREC_KERNELS", "measure_args"]


@dataclass(frozen=True)
class _Args:
    """A trec_eval measure's parameters, as ``-m NAME.PARAMS`` would give them."""

    name: str
    values: tuple[float, ...] = ()
    pairs: tuple[tuple[str, float], ...] = ()


def _numbers(text: str) -> tuple[float, ...]:
    return tuple(atof(part) for part in text.split(","))


def _pairs(family: str, text: str) -> tuple[tuple[str, float], ...]:
    if not text:
        return ()
    if not well_formed_pairs(text):
        raise MetricParameterError(f"{family}: malformed gains {text!r} (expected '1=3,2=9')")
    return tuple((key, atof(value)) for key, value in (p.split("=", 1) for p in text.split(",")))


def measure_args(family: str, m: Metric) -> _Args:
    """The trec_eval parameters of a trec_eval-only metric."""
    measure = TREC_FAMILIES[family]
    default = BY_NAME[measure].default
    if family in ("iprec_at_recall", "Rprec_mult"):
        key = "p" if family == "iprec_at_recall" else "x"
        if m.get(key) is None:
            raise MetricParameterError(f"{family} needs {key}: {family}({key}=0.5)")
        return _Args(measure, (float(m.get(key)),))
    if family in ("relative_P", "unj"):
        return _Args(measure, (float(m.k or 0),))
    if family == "11pt_avg":
        return _Args(measure, _numbers(str(m.get("points"))))
    if family == "utility":
        values = _numbers(str(m.get("coefficients")))
        if len(values) != 4:
            raise MetricParameterError(f"utility needs four coefficients a,b,c,d, not {values}")
        return _Args(measure, values)
    if family == "rbp_resid":
        return _Args(measure, (), (("p", float(m.get("p"))),))
    if family == "trec_rbp":
        gains = _pairs(family, str(m.get("gains")))
        return _Args(measure, (), (("p", float(m.get("p"))), *gains))
    if family in ("G", "ideal_dcg", "ndcg_rel", "Rndcg"):
        return _Args(measure, (), _pairs(family, str(m.get("gains"))))
    return _Args(measure, default)


def _kernel(family: str) -> Callable[[Context, Metric], FloatArray]:
    def kernel(ctx: Context, m: Metric) -> FloatArray:
        # The computations load with their first use: `import rankscope` stays light.
        from rankscope.engine.trec_compute import COMPUTE, Settings

        params: dict[str, Any] = dict(m.params)
        st = ctx.trec_stats(math.ceil(float(params.get("rel", 1))))  # level >= rel
        n_docs = int(params.get("n_docs", 0) or 0)
        value = COMPUTE[TREC_FAMILIES[family]](st, measure_args(family, m),
                                               Settings(n_docs=n_docs))[0].copy()
        if family in STAND_IN_ZERO:
            value[~st.lists.in_run] = 0.0
        return value

    return kernel


TREC_KERNELS: dict[str, Callable[[Context, Metric], FloatArray]] = {
    family: _kernel(family) for family in TREC_FAMILIES
}
"""Kernel of each trec_eval-only family."""
