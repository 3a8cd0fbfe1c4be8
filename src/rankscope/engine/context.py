"""Per-evaluation arrays shared by the kernels, each computed at most once.

Everything is a flat array over ranked rows (or judged rows) plus segment
reductions (``np.bincount`` with weights), so a kernel never loops over
queries in Python.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from rankscope.engine.c_math import log2_table
from rankscope.engine.ranking import BoolArray, FloatArray, IntArray, RankedLists
from rankscope.metrics.base import Metric

if TYPE_CHECKING:
    from rankscope.engine.trec_stats import QueryStats

__all__ = ["Context", "log2_ranks"]


def log2_ranks(pos: IntArray) -> FloatArray:
    """:math:`\\log_2(i + 1)` for 0-based positions ``pos`` (i = pos + 1, the rank)."""
    return log2_table(int(pos.max(initial=0)) + 2)[pos + 2]


class Context:
    """Derived arrays of one :class:`RankedLists`, cached by their parameters."""

    def __init__(self, lists: RankedLists) -> None:
        self.lists = lists
        self.n = lists.n_queries
        self._cache: dict[tuple[object, ...], object] = {}

    # -- layout ---------------------------------------------------------------
    @cached_property
    def lengths(self) -> IntArray:
        """Number of ranked documents per query."""
        return np.diff(self.lists.offsets)

    @cached_property
    def row_query(self) -> IntArray:
        """The query index of every ranked row."""
        return np.repeat(np.arange(self.n, dtype=np.int64), self.lengths)

    @cached_property
    def pos(self) -> IntArray:
        """The 0-based rank of every ranked row within its query."""
        starts = self.lists.offsets[:-1]
        return np.arange(self.lists.grades.size, dtype=np.int64) - np.repeat(starts, self.lengths)

    @cached_property
    def log2_rank(self) -> FloatArray:
        """:math:`\\log_2(i + 1)` for every ranked row (i the 1-based rank).

        DCG divides each gain by it, as trec_eval does, with the C library's
        logarithms (:func:`~rankscope.engine.trec_stats.log2_table`), so the
        numbers are trec_eval's to the last bit.
        """
        return log2_ranks(self.pos)

    @cached_property
    def judged(self) -> BoolArray:
        """Whether each ranked row has a (non-null) grade."""
        return ~np.isnan(self.lists.grades)

    @cached_property
    def judged_lengths(self) -> IntArray:
        """Number of judged documents per query."""
        return np.diff(self.lists.judged_offsets)

    @cached_property
    def judged_query(self) -> IntArray:
        """The query index of every judged row."""
        return np.repeat(np.arange(self.n, dtype=np.int64), self.judged_lengths)

    @cached_property
    def judged_pos(self) -> IntArray:
        """The 0-based position of every judged row in its best-first order."""
        starts = self.lists.judged_offsets[:-1]
        size = self.lists.judged_grades.size
        return np.arange(size, dtype=np.int64) - np.repeat(starts, self.judged_lengths)

    # -- reductions -----------------------------------------------------------
    def seg_sum(self, values: FloatArray | BoolArray, mask: BoolArray | None = None) -> FloatArray:
        """Sum ``values`` over each query's ranked rows (optionally masked)."""
        if mask is None:
            out = np.bincount(self.row_query, weights=values, minlength=self.n)
        else:
            out = np.bincount(self.row_query[mask], weights=values[mask], minlength=self.n)
        return out.astype(np.float64, copy=False)

    def judged_sum(self, values: FloatArray, mask: BoolArray | None = None) -> FloatArray:
        """Sum ``values`` over each query's judged rows (optionally masked)."""
        if mask is None:
            out = np.bincount(self.judged_query, weights=values, minlength=self.n)
        else:
            out = np.bincount(self.judged_query[mask], weights=values[mask], minlength=self.n)
        return out.astype(np.float64, copy=False)

    def seg_cumsum(self, values: IntArray) -> IntArray:
        """Running sum of integer ``values`` within each query (exact)."""
        total = np.cumsum(values, dtype=np.int64)
        before = np.concatenate(([0], total))[self.lists.offsets[:-1]]
        return np.asarray(total - np.repeat(before, self.lengths), dtype=np.int64)

    def top(self, k: int | None) -> BoolArray | None:
        """Mask of rows within the first ``k`` (None = no cut)."""
        if k is None:
            return None
        key = ("top", k)
        if key not in self._cache:
            self._cache[key] = self.pos < k
        return self._cache[key]  # type: ignore[return-value]

    def depth(self, k: int | None) -> IntArray:
        """How many rows each query has within the first ``k``."""
        return self.lengths if k is None else np.minimum(self.lengths, k)

    # -- relevance ------------------------------------------------------------
    def relevant(self, rel: float) -> BoolArray:
        """Whether each ranked row is relevant (grade >= rel; NaN is not)."""
        key = ("rel", rel)
        if key not in self._cache:
            with np.errstate(invalid="ignore"):
                self._cache[key] = self.lists.grades >= rel
        return self._cache[key]  # type: ignore[return-value]

    def nonrelevant_judged(self, rel: float) -> BoolArray:
        """Whether each ranked row is judged non-relevant: 0 <= grade < rel.

        A negative grade means "seen but not judged" in trec_eval (it is neither
        relevant nor judged non-relevant), so it is excluded here.
        """
        with np.errstate(invalid="ignore"):
            return (self.lists.grades >= 0) & ~self.relevant(rel)

    def n_relevant(self, rel: float) -> FloatArray:
        """R: the number of judged documents with grade >= rel, per query."""
        key = ("R", rel)
        if key not in self._cache:
            mask = self.lists.judged_grades >= rel
            self._cache[key] = np.bincount(
                self.judged_query[mask], minlength=self.n
            ).astype(np.float64)
        return self._cache[key]  # type: ignore[return-value]

    def n_judged_nonrelevant(self, rel: float) -> FloatArray:
        """N: the number of judged documents with 0 <= grade < rel, per query."""
        grades = self.lists.judged_grades
        mask = (grades >= 0) & (grades < rel)
        return np.bincount(self.judged_query[mask], minlength=self.n).astype(np.float64)

    def hits(self, rel: float, k: int | None) -> FloatArray:
        """Relevant documents within the first ``k`` per query."""
        key = ("hits", rel, k)
        if key not in self._cache:
            self._cache[key] = self.seg_sum(self.relevant(rel).astype(np.float64), self.top(k))
        return self._cache[key]  # type: ignore[return-value]

    def trec_stats(self, lvl: int) -> QueryStats:
        """trec_eval's per-query statistics at relevance level ``lvl`` (built once)."""
        from rankscope.engine.trec_lists import trec_lists_from_ranked  # only trec_eval's measures
        from rankscope.engine.trec_stats import QueryStats

        key = ("trec_eval", lvl)
        if key not in self._cache:
            self._cache[key] = QueryStats(trec_lists_from_ranked(self.lists, lvl))
        return self._cache[key]  # type: ignore[return-value]

    # -- gains ----------------------------------------------------------------
    def gain_of(self, grades: FloatArray, metric: Metric) -> FloatArray:
        """The gain of each grade under a metric's ``gain`` / ``gains`` / ``rel``.

        Unjudged documents (NaN) and negative grades gain 0. With a ``gains`` map, a grade
        missing from the map keeps the gain ``gain`` gives it (trec_eval's and
        ir_measures' convention).
        """
        with np.errstate(invalid="ignore", over="ignore"):
            unjudged = np.isnan(grades)
            g = np.where(unjudged, 0.0, grades)
            if metric.get("gain") == "exp":
                out = np.where(g > 0, np.exp2(g) - 1.0, 0.0)
            else:
                out = np.maximum(g, 0.0)
            gains = metric.get("gains")
            if gains:
                keys = np.array([p[0] for p in gains])
                vals = np.array([p[1] for p in gains])
                idx = np.clip(np.searchsorted(keys, g), 0, len(keys) - 1)
                out = np.where(keys[idx] == g, vals[idx], out)
            rel = metric.get("rel")
            if rel is not None:
                out = np.where(g >= rel, out, 0.0)
            out = np.where(unjudged | (g < 0), 0.0, out)
        return np.asarray(out, dtype=np.float64)

    def metric_max_grade(self, metric: Metric) -> float:
        """A metric's ``max_grade``, or the highest grade in the qrels."""
        value = metric.get("max_grade")
        return float(value) if value is not None else self.lists.max_grade
