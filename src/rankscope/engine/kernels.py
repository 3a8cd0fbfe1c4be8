"""The kernel of every metric family, found from the family's own definition.

A kernel takes the shared :class:`~rankscope.engine.context.Context` and a
bound :class:`~rankscope.metrics.Metric` and returns a float64 array with one
value per evaluated query (NaN = null), computed on whole arrays. The
definition of a family (:class:`rankscope.metrics.base.Family`, in
``metrics/<family>.py``) names the function computing it, as
``"rankscope.engine.<module>:<function>"``; :data:`KERNELS` imports that module
the first time the family is computed. So a metric is added in its definition
and its kernel, with no table to extend here, and metrics never import the
engine (``docs/one_engine.md``, "Adding a metric").

The kernel modules: :mod:`~rankscope.engine.kernels_binary`,
:mod:`~rankscope.engine.kernels_counts`, :mod:`~rankscope.engine.kernels_graded`,
trec_eval's own measures (:mod:`~rankscope.engine.kernels_trec`, ``_interp``,
``_gain``), other tools' variants (:mod:`~rankscope.engine.kernels_variants`),
C/W/L (:mod:`~rankscope.engine.kernels_cwl`), Compat and the diagnostics
(:mod:`~rankscope.engine.kernels_compat`) and the intent-aware measures
(:mod:`~rankscope.engine.intents`). Beside the table, :data:`NULL_KERNELS`
holds the judging platform's null rules (``unjudged="null"``), an option of the
engine rather than part of a definition.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping

from rankscope.engine.context import Context
from rankscope.engine.null_mode import NULL_KERNELS
from rankscope.engine.ranking import FloatArray
from rankscope.errors import MetricError
from rankscope.metrics.base import FAMILIES, Metric

__all__ = ["KERNELS", "NULL_KERNELS", "Kernel", "KernelTable"]

Kernel = Callable[[Context, Metric], FloatArray]

_HOME = "rankscope.engine."
"""Kernels the engine computes live in its modules; the rank-similarity families name
functions of :mod:`rankscope.compare.rank_similarity` (two runs, not a run and qrels)."""


class KernelTable(Mapping[str, Kernel]):
    """Family name -> kernel, for every registered family whose kernel the engine holds.

    Complete once :mod:`rankscope.metrics` is imported (every family is then
    registered); a kernel's module is imported when the family is first looked up.
    """

    def __init__(self) -> None:
        self._found: dict[str, Kernel] = {}

    def _engine_families(self) -> list[str]:
        return [name for name, fam in FAMILIES.items() if fam.kernel.startswith(_HOME)]

    def __getitem__(self, family: str) -> Kernel:
        found = self._found.get(family)
        if found is not None:
            return found
        spec = FAMILIES.get(family)
        if spec is None or not spec.kernel.startswith(_HOME):
            raise KeyError(family)
        module, _, name = spec.kernel.partition(":")
        kernel = getattr(importlib.import_module(module), name, None)
        if not callable(kernel):
            raise MetricError(f"{family}'s definition names the kernel {spec.kernel!r}, "
                              "which does not exist")
        self._found[family] = kernel
        return kernel  # type: ignore[no-any-return]

    def __contains__(self, family: object) -> bool:
        spec = FAMILIES.get(family) if isinstance(family, str) else None
        return spec is not None and spec.kernel.startswith(_HOME)

    def __iter__(self) -> Iterator[str]:
        return iter(self._engine_families())

    def __len__(self) -> int:
        return len(self._engine_families())


KERNELS = KernelTable()
"""Every family's kernel (see :class:`KernelTable`)."""
