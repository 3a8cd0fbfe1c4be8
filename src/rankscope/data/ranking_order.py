"""Ordering a run's rows into rankings fast: on integer keys, sorting only what needs it.

Sorting ten million rows by (query, score descending, document id) with
string keys is the slowest part of an evaluation, so it is split:

1. a run written in rank order (each query's lines together, scores
   non-increasing) is recognised in one pass over the file order and not
   sorted: only its query blocks are put in query order (no copy at all when
   they already are);
2. otherwise rows are grouped by query (stable radix sort on 16-bit digits)
   and each query's scores sorted on its own (rows of padded matrices);
3. only rows that tie on (query, score) are then ordered by document id, and
   only the runs of tied rows whose judgments differ (swapping two rows of
   the same grade changes no measure), unless every tie must be exact
   (:mod:`rankscope.data.tie_order`, a block of runs at a time).

Everything is done in the file's row order; a ranking is one permutation of
it. This is the one ordering of a ranking: the evaluation's ranking step
(:func:`rankscope.engine.ranking.rank`) and every other reader of rankings
(coverage, rank similarity, fusion, the TREC run writer: :func:`ranked`)
order rows here, so a tie rule (:data:`TIE_RULES`) means the same in every
command.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope.data import rankings
from rankscope.data.gather import gather_many
from rankscope.data.rankings import Blocks, Index, Ranking
from rankscope.data.run_queries import query_counts, run_queries
from rankscope.data.tie_order import Ties, find_ties, fix_ties
from rankscope.errors import OptionError

__all__ = [
    "TIE_RULES", "Blocks", "Ranking", "TieRule", "Ties", "base_order", "check_tie_rule",
    "find_ties", "fix_ties", "gather_many", "rank_order", "ranked",
]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

TieRule = Literal["trec", "input", "docid_asc"]
"""How rows of equal score are ordered: document id descending in byte order
(trec_eval's rule, the default), input order, or document id ascending."""
TIE_RULES: tuple[TieRule, ...] = ("trec", "input", "docid_asc")


def check_tie_rule(ties: str) -> TieRule:
    """``ties`` if it is a tie rule, else :class:`~rankscope.errors.OptionError`."""
    if ties not in TIE_RULES:
        raise OptionError(f"ties must be one of {', '.join(TIE_RULES)}, not {ties!r}")
    return ties


def _stable_by_query(qidx: Index) -> Index:
    """Row indices grouped by query index, file order kept (LSD radix, 16-bit digits);
    32-bit integers when grouped a piece at a time and the rows fit them."""
    top = int(qidx.max(initial=0))
    if qidx.size > _GROUPED_AT_ONCE and not top >> 16:
        return _grouped_in_pieces(qidx, top)
    order = np.argsort(_digit(qidx, None, 0), kind="stable")
    shift = 16
    while int(qidx.max(initial=0)) >> shift:
        order = order[np.argsort(_digit(qidx, order, shift), kind="stable")]
        shift += 16
    return order.astype(np.int64, copy=False)


def _grouped_in_pieces(qidx: Index, top: int) -> Index:
    """:func:`_stable_by_query` of query indices below 2^16, a piece of the file at a time.

    Each piece's rows are grouped by a radix sort of their own (16-bit codes) and
    written where their query's rows go, after those of the pieces before: no
    sort of every row at once, whose index and scratch space (80 MB each at 10^7
    rows) were alive beside the matching at a shuffled file's peak. The rows are
    32-bit integers when they fit them: this array becomes the sort's order, alive
    from the sort through the tie fixes to the end of the ranking (40 MB less at
    10^7 rows, on a shuffled file's peak; :meth:`Ranking.kept_rows` keeps it as is).
    """
    counts = query_counts(qidx, top + 1)
    next_at = np.cumsum(counts) - counts  # where each query's next row goes
    wide = qidx.size > rankings._INT32_ROWS
    out: Index = np.empty(qidx.size, dtype=np.int64) if wide else np.empty(qidx.size, np.int32)
    for lo in range(0, qidx.size, _GROUPED_AT_ONCE):
        part = qidx[lo:lo + _GROUPED_AT_ONCE].astype(np.uint16)
        ranked = np.argsort(part, kind="stable")
        q = part[ranked]
        part_counts = np.bincount(q, minlength=top + 1)
        # the k-th row of query q in this piece goes to next_at[q] + k
        at = np.arange(ranked.size, dtype=np.int64)
        at += (next_at - (np.cumsum(part_counts) - part_counts))[q]
        ranked += lo
        out[at] = ranked
        next_at += part_counts
    return out


_GROUPED_AT_ONCE = 1 << 17
"""Rows :func:`_grouped_in_pieces` groups at a time (pieces this small stay in the
processor's cache: as fast as one radix sort of every row)."""


def _digit(qidx: Index, order: IntArray | None, shift: int) -> npt.NDArray[np.uint16]:
    """The 16-bit digit of ``qidx`` (in ``order``) at ``shift``, worked out a piece at a
    time: no 64-bit temporary of every row (80 MB at 10^7 rows)."""
    step = _SORTED_AT_ONCE
    if qidx.size <= step:  # one piece
        part = qidx if order is None else qidx[order]
        return ((part >> shift) & 0xFFFF).astype(np.uint16)
    out = np.empty(qidx.size, dtype=np.uint16)
    for lo in range(0, qidx.size, step):
        part = qidx[lo:lo + step] if order is None else qidx[order[lo:lo + step]]
        out[lo:lo + step] = (part >> shift) & 0xFFFF
    return out


def _sort_within_queries(qidx: Index, score: FloatArray,
                         stable: bool) -> tuple[Index, BoolArray]:
    """Rows grouped by query, then by score descending within each query.

    Queries of similar length share a padded matrix whose rows numpy sorts
    independently: many short sorts instead of one long one. ``stable`` keeps
    tied rows in file order. Returns the order and its tie flags (see
    :attr:`~rankscope.data.rankings.Ranking.tie_flags`: the sort has each
    piece's sorted scores at hand; finding ties would gather them again).
    """
    kind: Literal["stable"] | None = "stable" if stable else None
    by_query = _stable_by_query(qidx)
    counts = query_counts(qidx)
    present = np.flatnonzero(counts)
    width = int(counts[present[0]])
    # tie[p + 1]: the rows at p and p + 1 share query and score (False at both ends)
    tie = np.zeros(by_query.size + 1, dtype=bool)
    if np.all(counts[present] == width):  # every ranking equally long: no padding
        # the grouping becomes the order in place, each piece's scores gathered, sorted
        # and compared on their own, a million or so at a time: no argsort, order or
        # sorted scores of every row beside them (80 MB each at 10^7 rows, on the peak
        # of a shuffled file, the tie search right after the sort)
        grouped = by_query.reshape(present.size, width)
        step = max(1, _SORTED_AT_ONCE // width)
        flags = tie[1:].reshape(present.size, width)  # a view: row p's flag at p + 1
        for lo in range(0, present.size, step):
            part = slice(lo, lo + step)
            negated = score[grouped[part]]
            np.negative(negated, out=negated)
            ranked = np.argsort(negated, axis=1, kind=kind)
            grouped[part] = np.take_along_axis(grouped[part], ranked, axis=1)
            negated = np.take_along_axis(negated, ranked, axis=1)
            # a query's last row ties with no row after it (flags[:, -1] stay False)
            np.equal(negated[:, 1:], negated[:, :-1], out=flags[part, :-1])
        return by_query, tie
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    # each piece's rows are put in order where they are (a piece reads only its own
    # queries' rows): the grouping becomes the order, no second array of every row
    order = by_query
    bucket = np.floor(np.log2(counts[present])).astype(np.int64)
    # the padding must sort after every score: +inf does unless a score is -inf or
    # NaN; then NaN padding with a stable sort (a NaN score stays before it). Padding
    # equals no score (all finite below +inf; NaN equals nothing): a query's last row
    # ties with none after it
    finite = bool(np.isfinite(score).all())
    pad, pad_kind = (np.inf, kind) if finite else (np.nan, "stable")
    for b in np.unique(bucket):
        queries = present[bucket == b]
        width = int(counts[queries].max())
        step = max(1, _SORTED_AT_ONCE // width)
        for lo in range(0, queries.size, step):
            chunk = queries[lo:lo + step]
            lens = counts[chunk]
            rows = np.repeat(np.arange(chunk.size), lens)
            cols = np.arange(rows.size) - np.repeat(np.cumsum(lens) - lens, lens)
            src = np.repeat(offsets[chunk], lens) + cols
            grid = np.full((chunk.size, width), pad)
            grid[rows, cols] = -score[by_query[src]]
            ranked = np.argsort(grid, axis=1, kind=pad_kind)
            at = ranked[rows, cols]
            order[src] = order[offsets[chunk][rows] + at]
            grid = np.take_along_axis(grid, ranked, axis=1)
            same = np.zeros(grid.shape, dtype=bool)
            np.equal(grid[:, 1:], grid[:, :-1], out=same[:, :-1])
            tie[src + 1] = same[rows, cols]
    return order, tie


_SORTED_AT_ONCE = 1 << 20
"""Scores :func:`_sort_within_queries` sorts at a time (whole queries; the
temporaries of one piece are a few arrays of 8 MB)."""


def rank_order(qidx: Index, score: FloatArray, docs: pl.Series, n_queries: int) -> Ranking:
    """Rows ranked by query, then score descending, then document id descending (bytes)."""
    base = base_order(qidx, score, n_queries)
    return fix_ties(base, find_ties(base, qidx, score), docs)


def _blocks_in_query_order(starts: IntArray, block_q: Index, n_rows: int) -> Blocks | None:
    """The query blocks (``block_q`` >= 0) in query order; None: the file order."""
    kept = block_q >= 0
    if kept.all() and (block_q.size < 2 or bool(np.all(block_q[1:] > block_q[:-1]))):
        return None
    ends = np.append(starts[1:], n_rows)
    which = np.flatnonzero(kept)
    which = which[np.argsort(block_q[which], kind="stable")]
    return Blocks(starts[which], (ends - starts)[which])


def _ranked_in_file(qidx: Index, score: FloatArray, change: BoolArray, every: bool,
                    n_queries: int, counts: IntArray, defer_blocks: bool) -> Ranking | None:
    """The ranking of a file already in rank order (its query blocks in any order).

    None when it is not: a query in several blocks, or a score rising within
    one. ``change`` marks the rows whose query differs from the row before.
    """
    starts = np.flatnonzero(np.concatenate(([True], change)))
    block_q = qidx[starts]
    real = block_q[block_q >= 0]
    # more query blocks than queries: some query is split (no sort of the blocks needed)
    if real.size > n_queries:
        return None
    rise = ~change & (score[1:] > score[:-1])
    if not every:
        rise &= qidx[1:] >= 0
    if rise.any() or np.unique(real).size != real.size:
        return None
    blocks = _blocks_in_query_order(starts, block_q, qidx.size)
    if defer_blocks:
        return Ranking(None, None, counts, blocks)
    return Ranking(None if blocks is None else blocks.index(), None, counts)


def base_order(qidx: Index, score: FloatArray, n_queries: int, *,
               stable: bool = False, defer_blocks: bool = False) -> Ranking:
    """Rows ranked by query index, then score descending; ties not yet ordered.

    Rows with a query index below 0 belong to no evaluated query and are left
    out. ``stable`` keeps tied rows in file order (otherwise their order is
    left to :func:`fix_ties`). ``defer_blocks``: a ranked file whose query
    blocks are not in query order keeps the file order until the end
    (:attr:`Ranking.blocks`), which saves gathering whole columns to find and
    fix ties.
    """
    n = qidx.size
    kept = qidx >= 0
    every = bool(kept.all())
    counts = (query_counts(qidx if every else qidx[kept], n_queries) if n
              else np.zeros(n_queries, np.int64))
    if n == 0:
        return Ranking(None, None, counts)
    change = qidx[1:] != qidx[:-1]
    # more query blocks than queries, every row kept: some query is split, so the file is
    # not in rank order, and its block arrays (three of 80 MB for a shuffled file of 10^7
    # lines, alive through the sort below) are not made
    split = every and int(np.count_nonzero(change)) >= n_queries
    in_file = None if split else _ranked_in_file(qidx, score, change, every, n_queries,
                                                 counts, defer_blocks)
    del change
    if in_file is not None:
        return in_file
    if every:
        order, tie = _sort_within_queries(qidx, score, stable)
        return Ranking(order, None, counts, tie_flags=tie)
    rows = np.flatnonzero(kept)
    order, tie = _sort_within_queries(qidx[rows], score[rows], stable)
    return Ranking(rows[order], None, counts, tie_flags=tie)


def ranked(frame: pl.DataFrame, ties: TieRule = "trec", *,
           depth: int | None = None) -> pl.DataFrame:
    """A run frame's rows in rank order, with each row's 1-based ``rank`` in its query.

    Queries come in byte order; within a query, score descending, and rows of
    equal score by the tie rule (every tie ordered, as the evaluation orders
    them). ``frame`` has ``query_id``, ``doc_id`` and ``score`` columns (any
    others ride along); ``depth`` keeps each query's first ``depth`` rows.
    """
    ties = check_tie_rule(ties)
    if frame.height == 0:
        return frame.with_columns(pl.lit(0, pl.Int64).alias("rank"))
    queries, rq = run_queries(frame.get_column("query_id").cast(pl.String), sorted)
    score = frame.get_column("score").cast(pl.Float64).to_numpy()
    order = base_order(rq.qidx, score, len(queries), stable=ties == "input")
    if ties != "input":
        order = fix_ties(order, find_ties(order, rq.qidx, score),
                         frame.get_column("doc_id").cast(pl.String), descending=ties == "trec")
    rows = order.rows()
    counts = order.counts
    del order, score, rq  # freed before the frame is gathered (whole columns at 10^7 rows)
    rank = np.arange(1, rows.size + 1, dtype=np.int64)
    rank -= np.repeat(np.cumsum(counts) - counts, counts)
    if depth is not None:  # only the rows kept are gathered
        keep = rank <= depth
        rows, rank = rows[keep], rank[keep]
    return frame[rows].with_columns(pl.Series("rank", rank))
