"""The per-query statistics every kernel shares, each computed at most once.

A :class:`Context` wraps one :class:`~rankscope.engine.ranking.RankedLists`.
It offers flat arrays over ranked rows (or judged rows) with segment
reductions (``np.bincount`` with weights), and sparse row sets
(:class:`~rankscope.engine.rowsets.RowSet`: the relevant rows, the judged
rows, ...) on which most measures need only a few rows; a kernel never loops
over queries in Python.

"Relevant" means grade >= rel everywhere; what "judged" means follows the
lists: a ranked document with a grade, or, when the lists hold trec_eval's
levels, one judged with a level >= 0. The measures defined by trec_eval read
its view of the grades (:meth:`Context.levels_view`): the lists' own context
when they already hold levels, else a context over the levels of the same
rankings, built once.

What depends on the judged lists alone (:meth:`Context.qrels_cached`: each
judged row's query and position, R and N per query, the judged levels, the
ideal DCG) is the same for every run ranked against one qrels: it is kept
with the qrels (:meth:`~rankscope.engine.qrels_index.QrelsIndex.shared`) and
worked out for the first run only. Those arrays are read-only.

What a context keeps for this run alone (:meth:`Context.cached` and the
attributes made once) is bounded on large evaluations
(:class:`~rankscope.engine.kept.Kept`): past a budget the values read least
recently are let go and made again, the same to the bit, when next read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from rankscope.engine.discounts import discounted, discounted_by_blocks, log2_ranks
from rankscope.engine.gain_rule import gains_of
from rankscope.engine.kept import BUDGET, WATCHED_FROM, Bounded, Kept, kept_property
from rankscope.engine.levels_view import judged_levels, levels_of
from rankscope.engine.qrels_index import OneRun
from rankscope.engine.ranking import BoolArray, FloatArray, IntArray, RankedLists
from rankscope.engine.ranking_match import POOLED_UNJUDGED
from rankscope.engine.rowsets import RowSet, segment_counts, segment_sums
from rankscope.metrics.base import Metric

__all__ = ["Context", "discounted", "log2_ranks"]


_MISSING = object()


def _read_only(value: Any) -> Any:
    """``value`` with its arrays (it, or those of a tuple) made read-only: shared by runs."""
    for item in value if isinstance(value, tuple) else (value,):
        if isinstance(item, np.ndarray):
            item.setflags(write=False)
    return value


def _positions(offsets: IntArray, lengths: IntArray) -> IntArray:
    """Each row's 0-based position in its segment of the CSR ``offsets``."""
    pos = np.arange(int(offsets[-1]), dtype=np.int64)
    # the starts subtracted in place: two arrays of every row at once, not three
    np.subtract(pos, np.repeat(offsets[:-1], lengths), out=pos)
    return pos


class Context(Bounded):
    """Derived arrays of one :class:`RankedLists`, cached by their parameters."""

    def __init__(self, lists: RankedLists, kept: Kept | None = None) -> None:
        self.lists = lists
        self.n = lists.n_queries
        self._cache: dict[tuple[object, ...], Any] = {}
        self.kept = kept if kept is not None or lists.grades.size + lists.judged_grades.size \
            < WATCHED_FROM else Kept(BUDGET)
        """What bounds the arrays this context keeps (None: everything is kept; a
        levels view shares its context's)."""
        self.ahead: tuple[Metric, ...] | None = None
        """The metrics still to be computed on this context after the current one
        (set by :func:`~rankscope.engine.kernel_values.compute`; None: not known,
        so everything computed is kept)."""

    def cached(self, key: tuple[object, ...], make: Any) -> Any:
        """``make()``, computed once per ``key`` for this context (and made again,
        the same to the bit, when the :class:`Kept` budget let it go)."""
        found = self._cache.get(key, _MISSING)
        if found is _MISSING:
            found = self._cache[key] = make()
            if self.kept is not None:
                self.kept.add(self, key, found)
        elif self.kept is not None:
            self.kept.read(self, key, found)
        return found

    def is_cached(self, key: tuple[object, ...]) -> bool:
        """Whether ``key`` was computed and kept (see :meth:`cached`)."""
        return key in self._cache

    def wanted_later(self, reads: Callable[[Metric], bool]) -> bool:
        """Whether a metric still ahead (see :attr:`ahead`) ``reads`` something
        (True when that is not known): what none reads need not be kept."""
        return self.ahead is None or any(reads(m) for m in self.ahead)

    def _shared(self) -> dict[tuple[object, ...], object] | None:
        """Where the statistics of the judged lists are kept for other runs (None: by this
        context alone, when no other run reads them, see :class:`OneRun`)."""
        shared = self.lists.qrels_shared
        return None if shared is None or isinstance(shared, OneRun) else shared

    def is_qrels_cached(self, key: tuple[object, ...]) -> bool:
        """Whether ``key`` is kept with the qrels (see :meth:`qrels_cached`)."""
        shared = self._shared()
        return ("qrels", *key) in self._cache if shared is None else key in shared

    def qrels_cached(self, key: tuple[object, ...], make: Any) -> Any:
        """``make()`` of what depends only on the judged lists (``judged_offsets``,
        ``judged_grades``) and ``key``: computed once for every run ranked against the
        same qrels (see the module docstring), its arrays made read-only."""
        shared = self._shared()
        if shared is None:
            return self.cached(("qrels", *key), lambda: _read_only(make()))
        found = shared.get(key, _MISSING)
        if found is _MISSING:  # threads ranking runs at once may both make it: one is kept
            found = shared.setdefault(key, _read_only(make()))
        return found

    # -- layout ---------------------------------------------------------------
    @cached_property
    def lengths(self) -> IntArray:
        """Number of ranked documents per query."""
        return np.diff(self.lists.offsets)

    @kept_property
    def row_query(self) -> IntArray:
        """The query index of every ranked row."""
        return np.repeat(np.arange(self.n, dtype=np.int64), self.lengths)

    @kept_property
    def pos(self) -> IntArray:
        """The 0-based rank of every ranked row within its query."""
        return _positions(self.lists.offsets, self.lengths)

    @kept_property
    def log2_rank(self) -> FloatArray:
        """:math:`\\log_2(i + 1)` for every ranked row (i the 1-based rank).

        DCG divides each gain by it, as trec_eval does, with the C library's
        logarithms (:func:`~rankscope.engine.c_math.log2_table`), so the
        numbers are trec_eval's to the last bit.
        """
        return log2_ranks(self.pos)

    @kept_property
    def judged(self) -> BoolArray:
        """Whether each ranked row is judged (has a grade; with levels, a level >= 0)."""
        if self.lists.levels:
            return self.lists.grades >= 0
        return ~np.isnan(self.lists.grades)

    @cached_property
    def judged_lengths(self) -> IntArray:
        """Number of judged documents per query."""
        return self.qrels_cached(  # type: ignore[no-any-return]
            ("judged_lengths",), lambda: np.diff(self.lists.judged_offsets))

    @cached_property
    def judged_query(self) -> IntArray:
        """The query index of every judged row."""
        return self.qrels_cached(  # type: ignore[no-any-return]
            ("judged_query",),
            lambda: np.repeat(np.arange(self.n, dtype=np.int64), self.judged_lengths))

    @property
    def judged_pos(self) -> IntArray:
        """The 0-based position of every judged row in its best-first order.

        Made on each read (an arange and a repeat), not kept: one array of 8
        bytes a judgment for the whole evaluation (80 MB at 10^7), read only to
        make the ideal DCG of a gain rule, which is kept with the qrels (see
        :meth:`qrels_cached`). Read-only, as the statistics kept with the qrels.
        """
        pos = _positions(self.lists.judged_offsets, self.judged_lengths)
        return _read_only(pos)  # type: ignore[no-any-return]

    def judged_discounted(self, gains: FloatArray, out: FloatArray | None = None) -> FloatArray:
        """``discounted(gains, self.judged_pos)`` for one gain a judged row, the same bits,
        without :attr:`judged_pos`: each block's positions from :attr:`judged_query`."""
        offsets, query = self.lists.judged_offsets, self.judged_query

        def pos_of(start: int, stop: int) -> IntArray:
            return np.arange(start, stop, dtype=np.int64) - offsets[query[start:stop]]

        deepest = int(self.judged_lengths.max(initial=0)) - 1
        return discounted_by_blocks(gains, max(deepest, 0), pos_of, out)

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
            # not a bincount of judged_query: read-only (kept with the qrels), it is copied
            return segment_sums(values, self.lists.judged_offsets)
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
        return self.cached(("top", k), lambda: self.pos < k)  # type: ignore[no-any-return]

    def depth(self, k: int | None) -> IntArray:
        """How many rows each query has within the first ``k``."""
        return self.lengths if k is None else np.minimum(self.lengths, k)

    # -- row sets -------------------------------------------------------------
    def rowset(self, rows: IntArray) -> RowSet:
        """The :class:`RowSet` of sorted ranked-row indices ``rows``.

        Each row's query is laid out from how many of ``rows`` each query holds (one
        search per query in ``rows``), not gathered from :attr:`row_query`: that array
        of every ranked row (8 bytes a row, 80 MB at 10^7) is then made only for the
        few kernels reading it, and a set of a tenth of the rows takes a tenth the time.
        """
        offsets = self.lists.offsets
        q = np.repeat(np.arange(self.n, dtype=np.int64), np.diff(np.searchsorted(rows, offsets)))
        # each row's start, then its rank in place: no second array of the set's size
        pos = offsets[q].astype(np.int64, copy=False)
        np.subtract(rows, pos, out=pos)
        return RowSet(rows, q, pos, self.n)

    @kept_property
    def all_rows(self) -> RowSet:
        """Every ranked row (only for the few measures that need them all)."""
        rows = np.arange(self.lists.grades.size, dtype=np.int64)
        return RowSet(rows, self.row_query, self.pos, self.n)

    def rel_rows(self, rel: float) -> RowSet:
        """The relevant rows (grade >= rel), in rank order."""
        return self.cached(  # type: ignore[no-any-return]
            ("rel_rows", rel), lambda: self.rowset(np.flatnonzero(self.relevant(rel))))

    @kept_property
    def judged_rows(self) -> RowSet:
        """The judged rows (see :attr:`judged`), in rank order."""
        return self.rowset(np.flatnonzero(self.judged))

    @property
    def pool_rows(self) -> RowSet:
        """Rows in the qrels at all: judged, or judged negative (levels only).

        With levels and no ranked row judged negative, these are the judged rows:
        that set itself, not a second one kept beside it (24 bytes a row, 106 MB at
        4.4 M judged rows).
        """
        if self.lists.levels and not bool((self.lists.grades == POOLED_UNJUDGED).any()):
            return self.judged_rows
        return self._pool_rows

    @kept_property
    def _pool_rows(self) -> RowSet:
        values = self.lists.grades
        return self.rowset(np.flatnonzero((values >= 0) | (values == POOLED_UNJUDGED)))

    @kept_property
    def values(self) -> IntArray:
        """Each ranked row's grade as an integer (meant for levels)."""
        return self.values_at(None)

    def values_at(self, rows: IntArray | None) -> IntArray:
        """:attr:`values` of some ranked rows (None: all), converting only those rows."""
        if rows is not None and ("values" in self.__dict__ or self.is_cached(("values",))):
            return self.values[rows]
        grades = self.lists.grades if rows is None else self.lists.grades[rows]
        if not self.lists.levels:  # levels have no NaN (-1 stands for "not in the qrels")
            grades = np.nan_to_num(grades, nan=-1.0)
        clipped = np.clip(grades, -(2.0**62), 2.0**62, out=None if grades is
                          self.lists.grades else grades)
        return clipped.astype(np.int64)

    def padded(self, fill: float, per_row: npt.NDArray[Any] | None = None,
               ) -> Iterator[tuple[IntArray, npt.NDArray[Any]]]:
        """Each query's :attr:`values` as a matrix row, padded with ``fill``, bucket by bucket.

        Yields (query indices, matrix); queries of similar length share a
        matrix, and when every query has the same length the values are just
        reshaped (no copy). ``per_row``: another array of the ranked rows
        instead of :attr:`values` (the grades, when only their sign matters).
        """
        lengths = self.lengths
        values = self.values if per_row is None else per_row
        if self.n and np.all(lengths == lengths[0]):
            yield np.arange(self.n, dtype=np.int64), values.reshape(self.n, int(lengths[0]))
            return
        offsets = self.lists.offsets
        nonempty = np.flatnonzero(lengths > 0)
        bucket = np.floor(np.log2(lengths[nonempty])).astype(np.int64)
        for b in np.unique(bucket):
            queries = nonempty[bucket == b]
            lens = lengths[queries]
            rows = np.repeat(np.arange(queries.size), lens)
            cols = np.arange(rows.size) - np.repeat(np.cumsum(lens) - lens, lens)
            grid = np.full((queries.size, int(lens.max())), fill, dtype=values.dtype)
            grid[rows, cols] = values[np.repeat(offsets[queries], lens) + cols]
            yield queries, grid

    # -- relevance ------------------------------------------------------------
    def relevant(self, rel: float) -> BoolArray:
        """Whether each ranked row is relevant (grade >= rel; NaN is not)."""

        def make() -> BoolArray:
            with np.errstate(invalid="ignore"):
                return self.lists.grades >= rel

        return self.cached(("rel", rel), make)  # type: ignore[no-any-return]

    def nonrelevant_judged(self, rel: float) -> BoolArray:
        """Whether each ranked row is judged non-relevant: 0 <= grade < rel.

        A negative grade means "seen but not judged" in trec_eval (it is neither
        relevant nor judged non-relevant), so it is excluded here.
        """
        with np.errstate(invalid="ignore"):
            return (self.lists.grades >= 0) & ~self.relevant(rel)

    def n_relevant(self, rel: float) -> FloatArray:
        """R: the number of judged documents with grade >= rel, per query."""
        return self.qrels_cached(  # type: ignore[no-any-return]
            ("R", rel), lambda: segment_counts(self.lists.judged_grades, self.lists.judged_offsets,
                                               lambda grades: grades >= rel))

    def n_judged_nonrelevant(self, rel: float) -> FloatArray:
        """N: the number of judged documents with 0 <= grade < rel, per query."""
        return self.qrels_cached(  # type: ignore[no-any-return]
            ("N", rel), lambda: segment_counts(self.lists.judged_grades, self.lists.judged_offsets,
                                               lambda grades: (grades >= 0) & (grades < rel)))

    def hits(self, rel: float, k: int | None) -> FloatArray:
        """Relevant documents within the first ``k`` per query (all with ``k`` None)."""

        def make() -> FloatArray:
            found = self.rel_rows(rel)
            counts = found.count if k is None else found.count_within(k)
            return counts.astype(np.float64)

        return self.cached(("hits", rel, k), make)  # type: ignore[no-any-return]

    def relevant_judged(self, rel: float, k: int | None = None) -> FloatArray:
        """Judged relevant documents within the first ``k`` per query (trec_eval's
        ``num_rel_ret``: with levels and ``rel`` <= 0 every judged document counts,
        while a document outside the qrels may be "relevant" to P@k but is not judged)."""

        def make() -> FloatArray:
            # with levels below 0 every judged row is relevant, and only they are judged
            found = self.judged_rows if self.lists.levels and rel < 0 else self.rel_rows(rel)
            counts = found.count if k is None else found.count_within(k)
            return counts.astype(np.float64)

        return self.cached(("relret", rel, k), make)  # type: ignore[no-any-return]

    def precision_at_relevant(self, rel: float) -> FloatArray:
        """Precision at each relevant row (the terms of average precision), in rank order."""

        def make() -> FloatArray:
            found = self.rel_rows(rel)
            return np.asarray(found.index / (found.pos + 1.0), dtype=np.float64)

        return self.cached(("prec@rel", rel), make)  # type: ignore[no-any-return]

    # -- trec_eval's levels ---------------------------------------------------
    def levels_view(self) -> Context:
        """The context of trec_eval's view of these rankings (itself with levels).

        Grades become integer levels (-2 for a negative grade, -1 for an
        unjudged document), the judged lists keep the levels >= 0, and a query
        the run lacks gets trec_eval ``-c``'s one-document stand-in ranking.
        """
        if self.lists.levels:
            return self
        return self.cached(("levels",), lambda: Context(levels_of(  # type: ignore
            self.lists, self.qrels_cached(("levels view",), lambda: judged_levels(self.lists))),
            self.kept))

    @cached_property
    def _level_table(self) -> tuple[IntArray, IntArray, IntArray]:
        return self.qrels_cached(("level_table",), self._make_level_table)  # type: ignore

    def _make_level_table(self) -> tuple[IntArray, IntArray, IntArray]:
        q, g = self.judged_query, self.lists.judged_grades.astype(np.int64)
        if q.size == 0:
            empty = np.zeros(0, np.int64)
            return empty, empty, empty
        new = np.concatenate(([True], (q[1:] != q[:-1]) | (g[1:] != g[:-1])))
        starts = np.flatnonzero(new)
        counts = np.diff(np.append(starts, q.size)).astype(np.int64)
        uq, ul = q[starts], g[starts]
        order = np.lexsort((ul, uq))  # levels ascending within each query
        return uq[order], ul[order], counts[order]

    @property
    def level_query(self) -> IntArray:
        """Query index of each (level, count) entry of the judged levels."""
        return self._level_table[0]

    @property
    def level_values(self) -> IntArray:
        """The judged levels of each query, ascending (with levels)."""
        return self._level_table[1]

    @property
    def level_counts(self) -> IntArray:
        """How many judgments each level has."""
        return self._level_table[2]

    def count_levels(self, low: int | None, high: int | None) -> IntArray:
        """Per query, judgments with ``low <= level < high`` (None = unbounded)."""
        mask = np.ones(self.level_values.size, dtype=bool)
        if low is not None:
            mask &= self.level_values >= low
        if high is not None:
            mask &= self.level_values < high
        return np.bincount(self.level_query[mask], weights=self.level_counts[mask],
                           minlength=self.n).astype(np.int64)

    @cached_property
    def num_rel_levels(self) -> IntArray:
        """Highest judged level + 1 per query (0 without judgments)."""

        def make() -> IntArray:
            out = np.zeros(self.n, dtype=np.int64)
            has = self.judged_lengths > 0
            out[has] = self.lists.judged_grades[self.lists.judged_offsets[:-1][has]].astype(
                np.int64) + 1
            return out

        return self.qrels_cached(("num_rel_levels",), make)  # type: ignore[no-any-return]

    # -- gains ----------------------------------------------------------------
    def gain_of(self, grades: FloatArray, metric: Metric,
                rows: IntArray | None = None) -> FloatArray:
        """The gain of each grade (of ``grades[rows]`` when given) under a metric's
        ``gain`` / ``gains`` / ``rel``.

        Unjudged documents (NaN) and negative grades gain 0. With a ``gains`` map, a grade
        missing from the map keeps the gain ``gain`` gives it (trec_eval's and
        ir_measures' convention).
        """
        return gains_of(grades, metric, rows)

    def metric_max_grade(self, metric: Metric) -> float:
        """A metric's ``max_grade``, or the highest grade in the qrels."""
        value = metric.get("max_grade")
        return float(value) if value is not None else self.lists.max_grade

