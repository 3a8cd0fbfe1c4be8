"""Ordering tied rows of a ranking by document id: the runs of equal (query,
score) found in rank order (:func:`find_ties`) and put in the tie rule's byte
order (:func:`fix_ties`), a block of whole runs at a time.

Only rows that tie on (query, score) are ordered by document id, and only the
runs of tied rows whose judgments differ (swapping two rows of the same grade
changes no measure), unless every tie must be exact. With 90 % ties nearly
every row of a ranking is tied: the runs are held as two integers each, and
their ids are gathered, coded and sorted a block at a time, never all at once.
:mod:`rankscope.data.ranking_order` orders by query and score and calls these.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope import c_heap
from rankscope.data import gather
from rankscope.data.gather import gather_many
from rankscope.data.id_codes import CODED_UP_TO, byte_order_codes
from rankscope.data.rankings import Index, Ranking

__all__ = ["Ties", "find_ties", "fix_ties"]

IntArray = npt.NDArray[np.int64]
Graded = npt.NDArray[np.float64] | npt.NDArray[np.int8] | npt.NDArray[np.int16]
"""What the tie fixes compare: grades, or codes standing for them (equal codes, equal grades)."""
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Ties:
    """Runs of tied rows of a ranking: equal query and score, next to each other.

    ``bounds`` holds each run's first and last rank-order position, run after
    run (first, last, first, last, ...): two integers a run, not one a tied
    pair (with 90 % ties nearly every row of a ranking is tied).
    """

    bounds: IntArray

    @property
    def first(self) -> IntArray:
        """Each run's first position."""
        return self.bounds[0::2]

    @property
    def size(self) -> IntArray:
        """Each run's rows (two or more)."""
        size: IntArray = self.bounds[1::2] - self.bounds[0::2] + 1
        return size

    def keep_runs(self, keep: npt.NDArray[np.bool_]) -> Ties:
        """The runs where ``keep`` (one flag per run) holds."""
        return Ties(self.bounds.reshape(-1, 2)[keep].ravel())


def find_ties(base: Ranking, qidx: Index | None, score: FloatArray) -> Ties | None:
    """The tied runs of ``base`` (None when no two neighbouring rows tie).

    ``qidx`` (every file row's query index) is read only when ``base`` lacks
    the sort's tie flags: None will do when it has them (the caller may then
    let go of it first).
    """
    order = base.order
    # ``tie`` at p + 1: the row at p ties with the one at p + 1 (False at both ends)
    if order is not None and base.tie_flags is not None:
        tie = base.tie_flags  # the sort's: no gathers needed
    else:
        tie = np.zeros(max(0, (score.size if order is None else order.size) + 1), dtype=bool)
        if qidx is None:
            raise ValueError("find_ties needs the rows' query index without the sort's tie flags")
        qs = qidx if order is None else qidx[order]
        ss = score if order is None else score[order]
        inner = tie[1:-1]
        np.equal(qs[1:], qs[:-1], out=inner)
        inner &= ss[1:] == ss[:-1]
        del qs, ss, inner
    # a run's first row is where a tie follows none, its last where none follows a tie:
    # the positions where ``tie`` changes, first and last alternating
    bounds = np.flatnonzero(tie[1:] != tie[:-1])
    if bounds.size == 0:
        return None
    return Ties(bounds)


def _valued_runs(ties: Ties, values: Graded) -> Ties:
    """The runs whose rows do not all share a value (``values`` in rank order, NaN alike)."""
    after, before = values[1:], values[:-1]
    # differs[p]: the rows at p and p + 1 differ (whole arrays: cheaper than gathers at
    # the runs); one more, False, so that a run ending at the last row has an end
    differs = np.zeros(values.size, dtype=bool)
    np.not_equal(after, before, out=differs[:-1])
    if values.dtype.kind == "f":
        differs[:-1] &= ~(np.isnan(after) & np.isnan(before))
    # each run's pairs are differs[first:last]: reduced between each run's bounds (the
    # gaps between runs reduced apart and dropped)
    return ties.keep_runs(np.logical_or.reduceat(differs, ties.bounds)[0::2])


def _tie_moves(order: Index | None, ties: Ties, docs: pl.Series,
               descending: bool) -> tuple[Index, Index] | None:
    """(positions, rows) putting tied rows in document id order (bytes).

    ``order`` is the ranking so far (None: the file order). Only runs holding
    a pair out of order move: a pair is swapped, a longer run sorted. The runs
    are taken in blocks of whole runs of about :data:`_BLOCK_ROWS` rows: each
    block's ids are gathered once (gathering strings at random rows is the slow
    part when most rows tie), neighbours compared and its runs to sort sorted
    on that gathered column, which is let go before the next block's: with 90 %
    ties the ids of every tied row (16 bytes a row and their text) are never
    held at once, and each block's ids are few enough to be coded
    (:func:`~rankscope.data.id_codes.byte_order_codes`).
    """
    if ties.first.size == 0:
        return None
    run_start, size = ties.first, ties.size
    run_pairs = size - 1
    ends = np.cumsum(size)
    total = int(ends[-1])
    # the blocks: runs [cut[i], cut[i + 1]), cut where a multiple of _BLOCK_ROWS rows is
    # passed (a block holds at most _BLOCK_ROWS rows and its first run's, which may start
    # in the block before)
    cut = [0, run_start.size] if total <= _BLOCK_ROWS else np.unique(np.concatenate((
        [0], np.searchsorted(ends, np.arange(_BLOCK_ROWS, total, _BLOCK_ROWS), side="right"),
        [run_start.size]))).tolist()
    # every moved row's position and row, written block after block (a row moves at most
    # once: at most ``total`` of each), as 32-bit integers while the rows fit them: the
    # moves are kept with the ranking until its rows are read (4 bytes a moved row, not 8)
    pos: Index
    src: Index
    if docs.len() <= _INT32_ROWS:
        pos, src = np.empty(total, dtype=np.int32), np.empty(total, dtype=np.int32)
    else:
        pos, src = np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64)
    filled = 0
    if order is not None and gather.rechunk_pays(docs, total):
        # the rechunked copy (about 150 MB of polars' memory at 10^7 ids) comes beside
        # numpy's freed pieces, kept resident by the command's glibc settings: the
        # whole free pages among them are handed back first (30 MB less in the mean)
        c_heap.hand_back_free_pages()
        docs = docs.rechunk()  # gathered from at scattered rows, block after block
    for lo, hi in pairwise(cut):
        filled = _block_moves(order, docs, run_start[lo:hi], run_pairs[lo:hi], descending,
                              pos, src, filled)
    if filled == 0:
        return None  # already in order
    # cut to the moves made (in place: the rest of each array goes back to the allocator,
    # not held beside the ranking)
    pos.resize(filled, refcheck=False)
    src.resize(filled, refcheck=False)
    return pos, src


_INT32_ROWS = np.iinfo(np.int32).max
"""Rows of a run up to which :func:`_tie_moves` gives 32-bit positions and rows."""

_BLOCK_ROWS = CODED_UP_TO // 2
"""Tied rows ordered at a time by :func:`_tie_moves` (a block also holds the rest of its
first run: at most :data:`~rankscope.data.id_codes.CODED_UP_TO` when runs are shorter
than half of it, so its ids can be coded)."""


def _block_moves(order: Index | None, docs: pl.Series, run_start: IntArray,
                 run_pairs: IntArray, descending: bool, pos: Index, src: Index,
                 filled: int) -> int:
    """The moves of some tied runs (each starting at ``run_start`` with ``run_pairs``
    pairs), written to ``pos`` and ``src`` from ``filled`` on; returns the new ``filled``
    (see :func:`_tie_moves`)."""
    size = run_pairs + 1
    ends = np.cumsum(size)
    total = int(ends[-1])
    # every row of every run, run after run: rank-order positions and file rows
    where = np.repeat(run_start - (ends - size), size) + np.arange(total)
    # the block's file rows as 64-bit integers (the sort's order may be 32-bit)
    ident = where if order is None else order[where].astype(np.int64, copy=False)
    names = _gathered(docs, ident)
    # integer codes of the ids (when they fit 64 bits) serve both the comparison of
    # neighbours and the sort of the runs: made from the ids' string views, they cost
    # less than polars' comparisons of the strings even where the pairs are few enough
    # to count; ids that do not fit are compared, and their pairs counted or sorted
    tried = total <= CODED_UP_TO
    codes = byte_order_codes(names) if tried else None
    if codes is not None:
        del names  # the codes stand for the ids from here on
        key = np.invert(codes, out=codes) if descending else codes  # the rule's order: rising
        wrong = key[:-1] >= key[1:]
    else:
        left, right = names.slice(0, total - 1), names.slice(1)
        wrong = ((left <= right) if descending else (left >= right)).to_numpy()
        del left, right
    inside = np.ones(total - 1, dtype=bool)  # neighbours within one run: the pairs, in order
    inside[ends[:-1] - 1] = False
    bad = wrong[inside]
    del wrong, inside
    if not bad.any():
        return filled  # already in order
    run_bad = np.logical_or.reduceat(bad, np.cumsum(run_pairs) - run_pairs)
    swap = run_start[run_bad & (run_pairs == 1)]
    k = swap.size
    pos[filled:filled + k] = swap
    pos[filled + k:filled + 2 * k] = swap + 1
    mates = np.concatenate((swap + 1, swap))
    src[filled:filled + 2 * k] = mates if order is None else order[mates]  # pairs name positions
    filled += 2 * k
    longer = run_bad & (run_pairs > 1)
    if longer.any():
        member = np.repeat(longer, size)
        moving = where[member]
        pos[filled:filled + moving.size] = moving
        moved = ident[member]
        del where, ident
        if codes is not None:
            ordered = _runs_sorted_by_code(key[member], size[longer], moved)
        else:
            # the runs' ids read from the block's by position: no filtered copy of them
            ordered = _runs_sorted(names, None if member.all() else np.flatnonzero(member),
                                   size[longer], moved, descending, coded=not tried)
            del names
        src[filled:filled + moving.size] = ordered
        filled += moving.size
    return filled


def _gathered(docs: pl.Series, rows: IntArray) -> pl.Series:
    """``docs`` at ``rows`` (one block's tied rows): from the slice of the rows' span
    when it is short (a ranked file's runs lie together), else from the whole column."""
    if docs.n_chunks() > 1:
        first, last = int(rows.min()), int(rows.max())
        if last - first < _SPAN * rows.size:
            return gather_many(docs.slice(first, last - first + 1).rechunk(), rows - first)
    return gather_many(docs, rows)


_SPAN = 4
"""How many times as long as its rows a block's span of the file may be and still be
gathered from a slice of it (:func:`_gathered`)."""


def _runs_sorted_by_code(key: npt.NDArray[np.uint64], lengths: IntArray,
                         rows: IntArray) -> IntArray:
    """``rows`` (the rows of some runs, run after run, ``lengths`` each) in the rising
    order of their ``key`` within each run (:func:`byte_order_codes`, the rule applied).

    When the bits where the codes differ and the run numbers fit 64 bits
    together, one sort of (run, those bits) in one integer; else one sort of
    the codes, then a stable sort of the run numbers (16-bit: numpy's radix
    sort). A run holding an id twice takes stable sorts, so its equal ids keep
    their order.
    """
    differ = int(np.bitwise_or.reduce(key ^ key[0]))  # the bits where the codes differ
    low = (differ & -differ).bit_length() - 1 if differ else 0
    used = differ.bit_length() - low
    run_bits = (lengths.size - 1).bit_length()
    if used + run_bits <= 64:
        # the bits above and below those are the same in every code: dropped, the order
        # within a run is kept (one sort instead of two, and no gathers between them)
        one = (key & np.uint64((1 << (used + low)) - 1)) >> np.uint64(low)
        if run_bits:
            one |= np.repeat(np.arange(lengths.size, dtype=np.uint64), lengths) << np.uint64(used)
        order = np.argsort(one)
        ranked = one[order]
        if np.any(ranked[1:] == ranked[:-1]):
            order = np.argsort(one, kind="stable")
        return rows[order]
    run = np.repeat(np.arange(lengths.size, dtype=np.uint16 if lengths.size <= 1 << 16
                              else np.int64), lengths)
    order = np.argsort(key)
    order = order[np.argsort(run[order], kind="stable")]
    ranked, runs = key[order], run[order]
    if np.any((ranked[1:] == ranked[:-1]) & (runs[1:] == runs[:-1])):
        order = np.argsort(key, kind="stable")
        order = order[np.argsort(run[order], kind="stable")]
    return rows[order]


def _runs_sorted(names: pl.Series, at: IntArray | None, lengths: IntArray, rows: IntArray,
                 descending: bool, *, coded: bool = True) -> IntArray:
    """``rows`` (the rows of some runs, run after run, ``lengths`` each) sorted by
    document id within each run; their ids are ``names`` at ``at`` (None: all of
    ``names``) (``coded``: try their integer codes before sorting strings; False
    when they are known not to fit).

    Short runs (few pairs in all) are ordered by counting, for each row, the
    rows of its run that go before it: one comparison of every pair within a
    run, no sort of strings (a frame's sort plans a query, a fixed cost larger
    than the comparisons of a few thousand pairs); rows of one id keep their
    order. Otherwise one sort: of integer codes of the ids in their byte order
    when they fit 64 bits (:func:`~rankscope.data.id_codes.byte_order_codes`:
    0.3 against 0.7 ms for 9,500 short ids), else of a frame of the strings.
    """
    n_pairs = int((lengths * (lengths - 1)).sum())
    if n_pairs <= _COUNTED_UP_TO:
        first = np.cumsum(lengths) - lengths  # each run's first row
        run_first = np.repeat(first, lengths)
        # every (row a, row b) of one run with a before b, compared once: b goes ahead of a
        # when its id goes first in the rule's order, else a goes ahead (equal ids keep
        # their order, as a stable sort keeps them), so each row's place in its run is the
        # count of rows going ahead of it (half the comparisons of comparing both ways)
        later = np.arange(rows.size) - run_first  # a row's place in its run
        later = np.repeat(lengths, lengths) - 1 - later  # the rows after it in its run
        a = np.repeat(np.arange(rows.size), later)
        b = a + 1 + (np.arange(a.size) - np.repeat(np.cumsum(later) - later, later))
        mine = gather_many(names, a if at is None else at[a])
        theirs = gather_many(names, b if at is None else at[b])
        b_first = ((theirs > mine) if descending else (theirs < mine)).to_numpy()
        behind = np.where(b_first, a, b)  # the row of each pair the other goes ahead of
        out = np.empty_like(rows)
        out[run_first + np.bincount(behind, minlength=rows.size)] = rows
        return out
    ids = names if at is None else gather_many(names, at)
    codes = byte_order_codes(ids) if coded and rows.size <= CODED_UP_TO else None
    if codes is not None:
        return _runs_sorted_by_code(~codes if descending else codes, lengths, rows)
    # the sort's order alone (4 bytes a row), not the sorted frame: its run numbers and ids
    # (4 + 16 bytes a row) would be one more copy beside those sorted
    run = np.repeat(np.arange(lengths.size, dtype=np.int32 if lengths.size < 1 << 31
                              else np.int64), lengths)
    order = pl.DataFrame({"g": run, "d": ids}).select(
        pl.arg_sort_by(["g", "d"], descending=[False, descending],
                       multithreaded=rows.size >= gather._INDEXED_BELOW)  # few: no hand-offs
    ).to_series().to_numpy()
    ordered: IntArray = rows[order]
    return ordered


_COUNTED_UP_TO = 1 << 14
"""Pairs of tied rows (in all runs to sort) up to which :func:`_runs_sorted` counts
instead of sorting."""


def fix_ties(base: Ranking, ties: Ties | None, docs: pl.Series,
             values: Graded | None = None, *, descending: bool = True,
             ranked_values: Graded | None = None) -> Ranking:
    """``base`` with its ties (from :func:`find_ties`) ordered by document id.

    Tied documents go by id, descending (trec_eval) or ascending. With
    ``values`` (one per file row: what the measures will see), only runs
    whose rows differ in value are put in order: swapping two rows of the
    same value changes no measure, and most ties of a ranking are between
    unjudged documents, so most string comparisons are saved. Without
    ``values`` every tie is ordered. ``ranked_values``: ``values`` already
    gathered in ``base.order``, when the caller has them.
    """
    if ties is None:
        return base
    if values is not None:
        if ranked_values is None:
            ranked_values = values if base.order is None else values[base.order]
        ties = _valued_runs(ties, ranked_values)
    return Ranking(base.order, _tie_moves(base.order, ties, docs, descending), base.counts,
                   base.blocks, base.tie_flags)
