"""Per-query quantities trec_eval's measures share, each computed once for all queries.

Rankings are long and mostly unjudged, so measures work on *row sets*: the
few ranked rows that matter (relevant, judged, ...), each with its query and
its 0-based rank, in rank order. Floating-point sums are taken in rank order
one query at a time (``np.bincount`` adds its weights sequentially, and
:func:`running_sum` lays queries out as matrix rows), so they round exactly
as trec_eval's C loops do; logarithms of integers come from the C library
(``math.log2``), as trec_eval's do.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from rankscope.engine.c_math import c_log, log2_table
from rankscope.engine.trec_lists import TrecLists

__all__ = [
    "FloatArray", "IntArray", "QueryStats", "RowSet", "c_log", "log2_table", "running_sum",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

def running_sum(weights: FloatArray, offsets: IntArray) -> FloatArray:
    """Per-segment running sums, each added left to right from 0 as a C loop does.

    A global ``cumsum`` minus the segment's start would round differently;
    instead the segments are laid out as rows of padded matrices (segments of
    similar length together, so padding stays under half) and summed along
    rows, which numpy does sequentially.
    """
    lengths = np.diff(offsets)
    out = np.empty(weights.size, dtype=np.float64)
    if weights.size == 0:
        return out
    nonempty = np.flatnonzero(lengths > 0)
    bucket = np.floor(np.log2(lengths[nonempty])).astype(np.int64)
    for b in np.unique(bucket):
        queries = nonempty[bucket == b]
        lens = lengths[queries]
        rows = np.repeat(np.arange(queries.size), lens)
        cols = np.arange(rows.size) - np.repeat(np.cumsum(lens) - lens, lens)
        src = np.repeat(offsets[queries], lens) + cols
        grid = np.zeros((queries.size, int(lens.max())), dtype=np.float64)
        grid[rows, cols] = weights[src]
        np.cumsum(grid, axis=1, out=grid)
        out[src] = grid[rows, cols]
    return out


@dataclass(frozen=True)
class RowSet:
    """Some ranked rows in rank order: global index, query index, 0-based rank."""

    rows: IntArray
    q: IntArray
    pos: IntArray
    n: int

    @cached_property
    def offsets(self) -> IntArray:
        """CSR offsets of the set's rows per query."""
        counts = np.bincount(self.q, minlength=self.n) if self.q.size else np.zeros(self.n)
        return np.concatenate(([0], np.cumsum(counts))).astype(np.int64)

    @cached_property
    def count(self) -> IntArray:
        """Rows of the set per query."""
        return np.diff(self.offsets)

    @cached_property
    def index(self) -> IntArray:
        """1-based position of each row among the set's rows of its query."""
        return np.arange(self.rows.size, dtype=np.int64) - self.offsets[self.q] + 1

    def before(self, flags: BoolArray) -> IntArray:
        """Per row, how many earlier rows of its query (in this set) have ``flags``."""
        total = np.cumsum(flags, dtype=np.int64)
        start = np.concatenate(([0], total))[self.offsets[:-1]]
        return np.asarray(total - flags - start[self.q], dtype=np.int64)

    def sub(self, mask: BoolArray) -> RowSet:
        """The rows where ``mask`` holds."""
        return RowSet(self.rows[mask], self.q[mask], self.pos[mask], self.n)

    def sum(self, weights: FloatArray) -> FloatArray:
        """Per-query sum of ``weights`` (one per row), added in rank order."""
        out = np.bincount(self.q, weights=weights, minlength=self.n)
        return np.asarray(out, dtype=np.float64)

    def count_within(self, depth: IntArray | int) -> IntArray:
        """Per query, rows of the set ranked above ``depth`` (a number or one per query)."""
        limit = depth if isinstance(depth, int) else depth[self.q]
        keep = self.pos < limit
        return np.bincount(self.q[keep], minlength=self.n).astype(np.int64)


class QueryStats:
    """Cached derived arrays of one :class:`TrecLists`."""

    def __init__(self, lists: TrecLists) -> None:
        self.lists = lists
        self.n = lists.n
        self.lvl = lists.lvl

    @cached_property
    def lengths(self) -> IntArray:
        """N: ranked documents per query."""
        return np.diff(self.lists.offsets)

    def rowset(self, rows: IntArray) -> RowSet:
        """The :class:`RowSet` of sorted global row indices."""
        q = np.searchsorted(self.lists.offsets, rows, side="right").astype(np.int64) - 1
        return RowSet(rows, q, rows - self.lists.offsets[q], self.n)

    @cached_property
    def all_rows(self) -> RowSet:
        """Every ranked row (only for the few measures that need them all)."""
        q = np.repeat(np.arange(self.n, dtype=np.int64), self.lengths)
        rows = np.arange(q.size, dtype=np.int64)
        return RowSet(rows, q, rows - self.lists.offsets[q], self.n)

    def padded(self, fill: int) -> Iterator[tuple[IntArray, npt.NDArray[np.int64]]]:
        """Each query's values as a matrix row, padded with ``fill``, bucket by bucket.

        Yields (query indices, matrix); queries of similar length share a
        matrix, and when every query has the same length the values are just
        reshaped (no copy).
        """
        lengths = self.lengths
        values = self.lists.values
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
            grid = np.full((queries.size, int(lens.max())), fill, dtype=np.int64)
            grid[rows, cols] = values[np.repeat(offsets[queries], lens) + cols]
            yield queries, grid

    @cached_property
    def rel(self) -> RowSet:
        """Rows whose value is >= the relevance level (trec_eval's loop test)."""
        return self.rowset(np.flatnonzero(self.lists.values >= self.lvl))

    @cached_property
    def judged(self) -> RowSet:
        """Rows judged in the qrels with a level >= 0."""
        return self.rowset(np.flatnonzero(self.lists.values >= 0))

    @cached_property
    def pool(self) -> RowSet:
        """Rows in the qrels at all (judged, or judged negative = value -2)."""
        values = self.lists.values
        return self.rowset(np.flatnonzero((values >= 0) | (values == -2)))

    @cached_property
    def n_rel_rows(self) -> IntArray:
        """Relevant rows per query (= RR unless ``-l`` is below 0)."""
        return self.rel.count

    @cached_property
    def num_rel_ret(self) -> IntArray:
        """RR: judged (value >= 0) relevant rows per query."""
        if self.lvl >= 0:
            return self.rel.count
        return self.judged.count

    @cached_property
    def num_unjudged(self) -> IntArray:
        """Ranked documents judged negative (value -2)."""
        return self.pool.count - self.judged.count

    @cached_property
    def num_nonpool(self) -> IntArray:
        """Ranked documents not in the qrels (value -1)."""
        return self.lengths - self.pool.count

    @cached_property
    def level_query(self) -> IntArray:
        """Query index of each (level, count) entry."""
        return np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self.lists.level_offsets))

    def count_levels(self, low: int | None, high: int | None) -> IntArray:
        """Per query, qrels lines with ``low <= level < high`` (None = unbounded)."""
        mask = np.ones(self.lists.levels.size, dtype=bool)
        if low is not None:
            mask &= self.lists.levels >= low
        if high is not None:
            mask &= self.lists.levels < high
        return np.bincount(
            self.level_query[mask], weights=self.lists.level_counts[mask], minlength=self.n
        ).astype(np.int64)

    @cached_property
    def num_rel(self) -> IntArray:
        """R: qrels lines with a level >= the relevance level."""
        return self.count_levels(self.lvl, None)

    @cached_property
    def num_rel_levels(self) -> IntArray:
        """Highest judged level + 1 per query (0 without judgments >= 0)."""
        out = np.zeros(self.n, dtype=np.int64)
        ends = self.lists.level_offsets[1:]
        has = np.diff(self.lists.level_offsets) > 0
        out[has] = self.lists.levels[ends[has] - 1] + 1
        return out

    @cached_property
    def max_rel(self) -> IntArray:
        """Highest qrels value per query, negative judgments included."""
        if self.lists.max_rel is not None:
            return self.lists.max_rel
        return self.num_rel_levels - 1

    def hits(self, depth: IntArray | int) -> IntArray:
        """Relevant rows ranked above ``depth`` (a cut-off, or one depth per query)."""
        if isinstance(depth, int):
            cache: dict[int, IntArray] = self.__dict__.setdefault("_hits", {})
            if depth not in cache:
                cache[depth] = self.rel.count_within(depth)
            return cache[depth]
        return self.rel.count_within(depth)

    @cached_property
    def prec_at_rel(self) -> FloatArray:
        """``rel_so_far / rank`` at each relevant row (the terms of AP)."""
        rel = self.rel
        return np.asarray(rel.index / (rel.pos + 1.0), dtype=np.float64)

    @cached_property
    def ap_sum(self) -> FloatArray:
        """Sum of the precision at each relevant row, in rank order."""
        return self.rel.sum(self.prec_at_rel)

    def discount(self, pos: IntArray) -> FloatArray:
        """``log2(rank + 1)`` for 0-based ranks ``pos`` (trec_eval's DCG discount)."""
        top = int(pos.max(initial=0)) + 2
        return log2_table(top)[pos + 2]
