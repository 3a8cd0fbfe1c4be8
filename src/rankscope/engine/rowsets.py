"""Sparse per-query row sets: the few ranked rows a measure needs, in rank order.

Rankings are long and mostly unjudged, so kernels work on the rows that
matter (relevant, judged, ...), each with its query and its 0-based rank.
Floating-point sums are taken in rank order one query at a time
(``np.bincount`` adds its weights sequentially, and :func:`running_sum` lays
queries out as matrix rows), so they round exactly as trec_eval's C loops do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

__all__ = ["CutSums", "RowSet", "rank_keys", "running_sum", "segment_blocks",
           "segment_counts", "segment_sums"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
KeyArray = npt.NDArray[np.int32] | npt.NDArray[np.int64]

_INT32_MAX = int(np.iinfo(np.int32).max)


def rank_keys(q: IntArray, pos: IntArray, n: int, stride: int) -> KeyArray:
    """``q * stride + pos`` of each row: its (query, rank) key among ``n`` queries.

    Parameters
    ----------
    q, pos : ndarray of int
        Each row's query (below ``n``) and 0-based rank (below ``stride - 1``).
    n : int
        The number of queries.
    stride : int
        More than any rank: keys of different queries never meet.

    Returns
    -------
    ndarray of int
        32-bit when every key up to ``n * stride`` fits (10^4 queries of 10^3
        ranks do: 17 MB, not 35, at 4.4 M rows), else 64-bit; made in place, no
        array of ``q * stride`` beside it.
    """
    dtype = np.int32 if n * stride <= _INT32_MAX else np.int64
    keys = np.multiply(q, stride, dtype=dtype)
    np.add(keys, pos, out=keys)
    return keys


def _limits(keys: KeyArray, n: int, stride: int, depth: int) -> KeyArray:
    """Each query's key of rank ``depth`` (clipped), of the keys' own type: searching an
    array with values of a wider type would copy the array to that type."""
    limit = np.arange(n, dtype=keys.dtype)
    np.multiply(limit, stride, out=limit)
    np.add(limit, min(max(depth, 0), stride - 1), out=limit)
    return limit  # type: ignore[return-value]


_SEGMENT_ROWS = 1 << 16
"""Rows a block of :func:`segment_blocks` holds (whole segments, so more when one is longer)."""


def segment_blocks(offsets: IntArray) -> Iterator[tuple[int, int]]:
    """Blocks of whole segments of about 65,536 rows, back to back.

    Parameters
    ----------
    offsets : ndarray of int
        CSR offsets: segment ``i`` is rows ``offsets[i]:offsets[i + 1]``.

    Yields
    ------
    tuple of int
        ``(first, last)``: the block is segments ``first:last``, so rows
        ``offsets[first]:offsets[last]``; at least one segment a block.

    Notes
    -----
    A per-segment sum counted a block at a time with the block's own segment
    numbers is the same additions in the same order, and what it makes is a
    block's worth, not every row's.
    """
    n = offsets.size - 1
    first = 0
    while first < n:
        start = int(offsets[first])
        last = max(int(np.searchsorted(offsets, start + _SEGMENT_ROWS, side="right")) - 1,
                   first + 1)
        last = min(last, n)
        yield first, last
        first = last


def segment_sums(weights: FloatArray, offsets: IntArray) -> FloatArray:
    """Each segment's sum of ``weights``, added left to right from 0 as ``np.bincount`` does.

    Parameters
    ----------
    weights : ndarray of float
        One weight a row, the segments' rows back to back.
    offsets : ndarray of int
        CSR offsets: segment ``i`` is ``weights[offsets[i]:offsets[i + 1]]``.

    Returns
    -------
    ndarray of float
        One sum a segment, the bits of ``np.bincount(segment_of_each_row, weights)``.

    Notes
    -----
    ``np.bincount`` copies a read-only input whole (the arrays kept with the qrels
    are read-only: the judgments' queries and ideal terms, 57 MB each at 7.1 M
    judgments); here each block of whole segments (:func:`segment_blocks`) is
    counted with its own segment numbers, so what it copies is a block.
    """
    out = np.zeros(offsets.size - 1, dtype=np.float64)
    for first, last in segment_blocks(offsets):
        out[first:last] = np.bincount(_segment_numbers(offsets, first, last),
                                      weights=weights[int(offsets[first]):int(offsets[last])],
                                      minlength=last - first)
    return out


def segment_counts(values: FloatArray, offsets: IntArray,
                   keep: Callable[[FloatArray], BoolArray]) -> FloatArray:
    """Each segment's count of the ``values`` where ``keep`` holds, counted a block of
    whole segments at a time (:func:`segment_blocks`).

    Parameters
    ----------
    values : ndarray
        One value a row, the segments' rows back to back.
    offsets : ndarray of int
        CSR offsets: segment ``i`` is ``values[offsets[i]:offsets[i + 1]]``.
    keep : callable
        Given a block of values, whether each counts.

    Returns
    -------
    ndarray of float
        One count a segment, as ``np.bincount(segment_of_each_row[keep(values)])``
        counts, without the mask nor the kept rows' segments of every row (8 bytes a
        row: 57 MB at 7.1 M judgments) at once.
    """
    out = np.zeros(offsets.size - 1, dtype=np.float64)
    for first, last in segment_blocks(offsets):
        start = int(offsets[first])
        kept = keep(values[start:int(offsets[last])])
        # counts are whole numbers: the running count's differences at the segments' ends
        running = np.zeros(kept.size + 1, dtype=np.int64)
        np.cumsum(kept, out=running[1:])
        out[first:last] = np.diff(running[offsets[first:last + 1] - start])
    return out


def _segment_numbers(offsets: IntArray, first: int, last: int) -> IntArray:
    """Each row's segment among segments ``first:last``, numbered from 0."""
    lengths = np.diff(offsets[first:last + 1])
    return np.repeat(np.arange(last - first, dtype=np.int64), lengths)


def running_sum(weights: FloatArray, offsets: IntArray,
                out: FloatArray | None = None) -> FloatArray:
    """Per-segment running sums, each added left to right from 0 as a C loop does.

    A global ``cumsum`` minus the segment's start would round differently;
    instead the segments are laid out as rows of padded matrices (segments of
    similar length together, so padding stays under half) and summed along
    rows, which numpy does sequentially. ``out`` may be ``weights`` itself
    (each piece's weights are read before its sums are written).
    """
    lengths = np.diff(offsets)
    if out is None:
        out = np.empty(weights.size, dtype=np.float64)
    if weights.size == 0:
        return out
    nonempty = np.flatnonzero(lengths > 0)
    longest = int(lengths.max())
    if int(lengths[nonempty].min()) == longest:
        # every non-empty segment equally long (fixed-depth runs, fixed-size pools):
        # they lie back to back, so the matrix is the array itself, no scatter or gather
        np.cumsum(weights.reshape(-1, longest), axis=1, out=out.reshape(-1, longest))
        return out
    bucket = np.floor(np.log2(lengths[nonempty])).astype(np.int64)
    for b in np.unique(bucket):
        for queries in _pieces(nonempty[bucket == b], lengths):
            lens = lengths[queries]
            rows = np.repeat(np.arange(queries.size), lens)
            cols = np.arange(rows.size) - np.repeat(np.cumsum(lens) - lens, lens)
            src = np.repeat(offsets[queries], lens) + cols
            grid = np.zeros((queries.size, int(lens.max())), dtype=np.float64)
            grid[rows, cols] = weights[src]
            np.cumsum(grid, axis=1, out=grid)
            out[src] = grid[rows, cols]
    return out


_SUMMED_AT_ONCE = 1 << 18
"""Elements :func:`running_sum` lays out in one matrix at most (unless one segment is longer)."""


def _pieces(segments: IntArray, lengths: IntArray) -> list[IntArray]:
    """``segments`` cut into pieces of at most :data:`_SUMMED_AT_ONCE` elements in all.

    The indices and the padded matrix of a whole size class (several arrays of 8
    bytes an element) took 300 MB at 10^7 judgments; each segment's sums are the
    same whichever segments share its matrix.
    """
    reached = np.cumsum(lengths[segments])
    if reached.size == 0 or int(reached[-1]) <= _SUMMED_AT_ONCE:
        return [segments]
    pieces = []
    first = 0
    while first < segments.size:
        before = int(reached[first] - lengths[segments[first]])
        last = max(int(np.searchsorted(reached, before + _SUMMED_AT_ONCE, side="right")),
                   first + 1)
        pieces.append(segments[first:last])
        first = last
    return pieces


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
        # in place: one array of the set's size besides the result, not three
        np.subtract(total, flags, out=total)
        np.subtract(total, np.repeat(start, self.count), out=total)
        return total

    def sub(self, mask: BoolArray) -> RowSet:
        """The rows where ``mask`` holds."""
        return RowSet(self.rows[mask], self.q[mask], self.pos[mask], self.n)

    def sum(self, weights: FloatArray, mask: BoolArray | None = None) -> FloatArray:
        """Per-query sum of ``weights`` (one per row, optionally masked), added in rank order."""
        if mask is None:
            out = np.bincount(self.q, weights=weights, minlength=self.n)
        else:
            out = np.bincount(self.q[mask], weights=weights[mask], minlength=self.n)
        return np.asarray(out, dtype=np.float64)

    def count_within(self, depth: IntArray | int) -> IntArray:
        """Per query, rows of the set ranked above ``depth`` (a number or one per query)."""
        if isinstance(depth, int):
            # one search per query in the (query, rank) keys, not a pass over the rows
            keys, stride = self._rank_keys
            limit = _limits(keys, self.n, stride, depth)
            return np.asarray(np.searchsorted(keys, limit) - self.offsets[:-1], dtype=np.int64)
        keep = self.pos < depth[self.q]
        return np.bincount(self.q[keep], minlength=self.n).astype(np.int64)

    @cached_property
    def _rank_keys(self) -> tuple[KeyArray, int]:
        """query * stride + rank of each row (ascending: the rows are in rank order), and stride."""
        stride = int(self.pos.max(initial=-1)) + 2
        return rank_keys(self.q, self.pos, self.n, stride), stride

    def first(self) -> tuple[IntArray, IntArray]:
        """The queries with a row in the set, and the 0-based rank of their first one."""
        has = np.flatnonzero(self.count > 0)
        return has, self.pos[self.offsets[has]]


@dataclass(frozen=True)
class CutSums:
    """Per-query sums of per-row terms over the rows ranked above any cut-off.

    The rows are in (query, rank) order. Each query's running sum is added
    left to right, as ``np.bincount`` adds a query's rows, so reading it at a
    cut-off gives the bits of summing the rows above that cut-off: every
    cut-off (ndcg_cut.5, .10, ...) for the price of one pass.
    """

    running: FloatArray
    starts: IntArray
    stride: int
    keys: KeyArray | None  # query * stride + rank (ascending), when some query skips a rank
    lengths: IntArray | None  # rows per query, when each query's ranks are 0, 1, 2, ...

    @classmethod
    def of(cls, terms: FloatArray, q: IntArray, pos: IntArray, offsets: IntArray) -> CutSums:
        """The sums of ``terms``, one per row of query ``q`` at 0-based rank ``pos``."""
        lengths = np.diff(offsets)
        ends = offsets[1:][lengths > 0]
        # ranks strictly increase within a query, so a query whose last rank is its
        # row count - 1 holds ranks 0, 1, 2, ... (ideal lists always do)
        if bool(np.array_equal(pos[ends - 1], lengths[lengths > 0] - 1)):
            return cls.of_dense(terms, offsets)
        stride = int(pos.max(initial=-1)) + 2
        return cls(_running(terms, offsets), offsets[:-1], stride,
                   rank_keys(q, pos, offsets.size - 1, stride), None)

    @classmethod
    def of_dense(cls, terms: FloatArray, offsets: IntArray) -> CutSums:
        """The sums of ``terms`` when each query's rows hold its ranks 0, 1, 2, ... in order
        (an ideal ranking): no array of the rows' ranks nor queries is read."""
        lengths = np.diff(offsets)
        stride = int(lengths.max(initial=0)) + 1  # the deepest rank + 2, as :meth:`of`'s
        return cls(_running(terms, offsets), offsets[:-1], stride, None, lengths)

    def above(self, k: int) -> FloatArray:
        """Per query, the sum over its rows ranked above ``k`` (ranks 0..k-1)."""
        n = self.starts.size
        if self.keys is None:  # the rows above k are the first min(length, k)
            ends = self.starts + np.minimum(self.lengths, max(k, 0))  # type: ignore[arg-type]
        else:
            ends = np.searchsorted(self.keys, _limits(self.keys, n, self.stride, k))
        has = ends > self.starts
        out = np.zeros(n, dtype=np.float64)
        out[has] = self.running[ends[has] - 1]
        return out


def _running(terms: FloatArray, offsets: IntArray) -> FloatArray:
    """:func:`running_sum` of ``terms`` as :class:`CutSums` keeps it."""
    running = running_sum(terms, offsets)
    # bincount starts each sum at +0.0: the same bits, but never a -0.0
    np.add(running, 0.0, out=running)
    return running
