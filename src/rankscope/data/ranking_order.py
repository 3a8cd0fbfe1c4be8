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
   the same grade changes no measure), unless every tie must be exact.

Everything is done in the file's row order; a ranking is one permutation of
it. This is the one ordering of a ranking: the evaluation's ranking step
(:func:`rankscope.engine.ranking.rank`) and every other reader of rankings
(coverage, rank similarity, fusion, the TREC run writer: :func:`ranked`)
order rows here, so a tie rule (:data:`TIE_RULES`) means the same in every
command.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope.data.id_codes import CODED_UP_TO, byte_order_codes
from rankscope.data.rankings import Blocks, Ranking
from rankscope.data.run_queries import run_queries
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


def gather_many(column: pl.Series, rows: IntArray) -> pl.Series:
    """``column`` at ``rows``, made one chunk first when ``rows`` are many.

    A file read in chunks gives columns of hundreds of chunks, and gathering
    across chunks costs about ten times a gather from one chunk (0.8 s against
    0.08 s for 6 million short ids): past an eighth of the column the copy into
    one chunk is cheaper.
    """
    if column.n_chunks() > 1 and rows.size * _REGATHER > column.len():
        column = column.rechunk()
    if rows.size < _INDEXED_BELOW:
        # indexing gathers directly (``gather`` plans a query first); with polars' own
        # unsigned index type it skips the checks for negative and too large positions
        return column[rows.astype(_INDEX_TYPE)]
    return column.gather(rows)


_INDEX_TYPE = np.uint32 if pl.get_index_type() == pl.UInt32 else np.uint64
"""polars' row index as numpy holds it (rows passed to :func:`gather_many` are never negative)."""


_INDEXED_BELOW = 1 << 16
"""Rows up to which :func:`gather_many` gathers by indexing (a fixed cost less per call)."""


_REGATHER = 8  # rows gathered, as a fraction of the column, from which it is rechunked


def _stable_by_query(qidx: IntArray) -> IntArray:
    """Row indices grouped by query index, file order kept (LSD radix, 16-bit digits)."""
    order = np.argsort(_digit(qidx, None, 0), kind="stable")
    shift = 16
    while int(qidx.max(initial=0)) >> shift:
        order = order[np.argsort(_digit(qidx, order, shift), kind="stable")]
        shift += 16
    return order.astype(np.int64, copy=False)


def _digit(qidx: IntArray, order: IntArray | None, shift: int) -> npt.NDArray[np.uint16]:
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


def _sort_within_queries(qidx: IntArray, score: FloatArray,
                         stable: bool) -> tuple[IntArray, FloatArray]:
    """Rows grouped by query, then by score descending within each query.

    Queries of similar length share a padded matrix whose rows numpy sorts
    independently: many short sorts instead of one long one. ``stable`` keeps
    tied rows in file order. Returns the order and the negated scores in it
    (the sort has them at hand; finding ties would gather them again).
    """
    kind: Literal["stable"] | None = "stable" if stable else None
    by_query = _stable_by_query(qidx)
    counts = np.bincount(qidx)
    present = np.flatnonzero(counts)
    width = int(counts[present[0]])
    if np.all(counts[present] == width):  # every ranking equally long: no padding
        # the grouping becomes the order in place, and the scores their sorted selves, a
        # few million at a time: no argsort, order or sorted scores of every row beside
        # them (three arrays of 80 MB at 10^7 rows, on the peak of a shuffled file)
        grouped = by_query.reshape(present.size, width)
        negated = score[grouped]
        np.negative(negated, out=negated)  # no second array of every score
        step = max(1, _SORTED_AT_ONCE // width)
        if present.size <= step:  # one piece: no copies back into place
            ranked = np.argsort(negated, axis=1, kind=kind)
            return (np.take_along_axis(grouped, ranked, axis=1).ravel(),
                    np.take_along_axis(negated, ranked, axis=1).ravel())
        for lo in range(0, present.size, step):
            part = slice(lo, lo + step)
            ranked = np.argsort(negated[part], axis=1, kind=kind)
            grouped[part] = np.take_along_axis(grouped[part], ranked, axis=1)
            negated[part] = np.take_along_axis(negated[part], ranked, axis=1)
        return by_query, negated.ravel()
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    # each piece's rows are put in order where they are (a piece reads only its own
    # queries' rows): the grouping becomes the order, no second array of every row
    order = by_query
    sorted_scores = np.empty(by_query.size, dtype=np.float64)
    bucket = np.floor(np.log2(counts[present])).astype(np.int64)
    # the padding must sort after every score: +inf does unless a score is -inf or
    # NaN; then NaN padding with a stable sort (a NaN score stays before it)
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
            sorted_scores[src] = grid[rows, at]
    return order, sorted_scores


_SORTED_AT_ONCE = 1 << 20
"""Scores :func:`_sort_within_queries` sorts at a time (whole queries; the
temporaries of one piece are a few arrays of 8 MB)."""


@dataclass(frozen=True)
class Ties:
    """Runs of tied rows of a ranking: equal query and score, next to each other.

    ``pairs`` lists the rank-order positions p whose row ties with the row at
    p + 1; ``starts`` indexes the first pair of each run (a run of k pairs is
    k + 1 tied rows).
    """

    pairs: IntArray
    starts: IntArray

    def keep_runs(self, keep: npt.NDArray[np.bool_]) -> Ties:
        """The runs where ``keep`` (one flag per run) holds."""
        lengths = np.diff(self.starts, append=self.pairs.size)
        pairs = self.pairs[np.repeat(keep, lengths)]
        kept_lengths = lengths[keep]
        starts = np.concatenate(([0], np.cumsum(kept_lengths)[:-1])).astype(np.int64)
        return Ties(pairs, starts if kept_lengths.size else starts[:0])


def find_ties(base: Ranking, qidx: IntArray, score: FloatArray) -> Ties | None:
    """The tied runs of ``base`` (None when no two neighbouring rows tie)."""
    order = base.order
    if order is not None and base.negated_scores is not None:
        # in rank order the queries are the blocks of ``counts``: no gathers needed
        ss = base.negated_scores
        tie = ss[1:] == ss[:-1]
        ends = np.cumsum(base.counts)  # a query's last position never ties with the next
        tie[ends[(ends > 0) & (ends < ss.size)] - 1] = False
    else:
        qs = qidx if order is None else qidx[order]
        ss = score if order is None else score[order]
        tie = (qs[1:] == qs[:-1]) & (ss[1:] == ss[:-1])
        del qs
    del ss
    pairs = np.flatnonzero(tie)
    if pairs.size == 0:
        return None
    opens = np.empty(pairs.size, dtype=bool)
    opens[0] = True
    np.not_equal(np.diff(pairs), 1, out=opens[1:])
    return Ties(pairs, np.flatnonzero(opens))


def _valued_runs(ties: Ties, values: FloatArray) -> Ties:
    """The runs whose rows do not all share a value (``values`` in rank order, NaN alike)."""
    after, before = values[1:], values[:-1]
    differs = after != before  # whole arrays: cheaper than gathers at the pairs
    if values.dtype.kind == "f":
        differs &= ~(np.isnan(after) & np.isnan(before))
    differs = differs[ties.pairs]
    return ties.keep_runs(np.logical_or.reduceat(differs, ties.starts))


def _tie_moves(order: IntArray | None, ties: Ties, docs: pl.Series,
               descending: bool) -> tuple[IntArray, IntArray] | None:
    """(positions, rows) putting tied rows in document id order (bytes).

    ``order`` is the ranking so far (None: the file order). Only runs holding
    a pair out of order move: a pair is swapped, a longer run sorted. The ids
    of the runs' rows are gathered once (gathering strings at random rows is
    the slow part when most rows tie): neighbours are compared, and the runs
    to sort are sorted, on that one gathered column.
    """
    pairs = ties.pairs
    if pairs.size == 0:
        return None
    starts = ties.starts
    run_start = pairs[starts]
    run_pairs = np.diff(starts, append=pairs.size)
    size = run_pairs + 1
    ends = np.cumsum(size)
    total = int(ends[-1])
    # every row of every run, run after run: rank-order positions and file rows
    where = np.repeat(run_start - (ends - size), size) + np.arange(total)
    ident = where if order is None else order[where]
    names = gather_many(docs, ident)
    # runs too long to order by counting are sorted: then integer codes of the ids (when
    # they fit 64 bits) serve both the comparison of neighbours and the sort
    tried = total <= CODED_UP_TO and int((size * run_pairs).sum()) > _COUNTED_UP_TO
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
        return None  # already in order
    run_bad = np.logical_or.reduceat(bad, starts)
    swap = run_start[run_bad & (run_pairs == 1)]
    positions = [swap, swap + 1]
    rows = [swap + 1, swap]
    longer = run_bad & (run_pairs > 1)
    if longer.any():
        member = np.repeat(longer, size)
        positions.append(where[member])
        moved = ident[member]
        # with 90 % ties nearly every row is in a run to sort: what the sort does not read
        # (every tied row's position, row and gathered id: 8 + 8 + 16 bytes a row) is let
        # go before it, not kept beside it
        del where, ident
        if codes is not None:
            key = key[member]
            rows.append(_runs_sorted_by_code(key, size[longer], moved))
        else:
            ids = names if member.all() else names.filter(pl.Series(member))
            del names
            rows.append(_runs_sorted(ids, size[longer], moved, descending, coded=not tried))
    pos = np.concatenate(positions).astype(np.int64, copy=False)
    src = np.concatenate(rows).astype(np.int64, copy=False)
    if order is not None:
        src[: 2 * swap.size] = order[src[: 2 * swap.size]]  # pairs name positions
    return pos, src


def _runs_sorted_by_code(key: npt.NDArray[np.uint64], lengths: IntArray,
                         rows: IntArray) -> IntArray:
    """``rows`` (the rows of some runs, run after run, ``lengths`` each) in the rising
    order of their ``key`` within each run (:func:`byte_order_codes`, the rule applied).

    One sort of the codes, then a stable sort of the run numbers (16-bit: numpy's
    radix sort); a run holding an id twice takes stable sorts, so its equal ids
    keep their order.
    """
    run = np.repeat(np.arange(lengths.size, dtype=np.uint16 if lengths.size <= 1 << 16
                              else np.int64), lengths)
    order = np.argsort(key)
    order = order[np.argsort(run[order], kind="stable")]
    ranked, runs = key[order], run[order]
    if np.any((ranked[1:] == ranked[:-1]) & (runs[1:] == runs[:-1])):
        order = np.argsort(key, kind="stable")
        order = order[np.argsort(run[order], kind="stable")]
    return rows[order]


def _runs_sorted(ids: pl.Series, lengths: IntArray, rows: IntArray, descending: bool, *,
                 coded: bool = True) -> IntArray:
    """``rows`` (the rows of some runs, run after run, ``lengths`` each) sorted by
    document id within each run; ``ids`` are their ids (``coded``: try their
    integer codes before sorting strings; False when they are known not to fit).

    Short runs (few pairs in all) are ordered by counting, for each row, the
    rows of its run whose id goes before it: one comparison of every pair
    within a run, no sort of strings (a frame's sort plans a query, a fixed
    cost larger than the comparisons of a few thousand pairs). Otherwise, or
    when two rows of a run share an id (their counts would collide), one
    sort: of integer codes of the ids in their byte order when they fit 64
    bits (:func:`~rankscope.data.id_codes.byte_order_codes`: 0.3 against 0.7
    ms for 9,500 short ids), else of a frame of the strings.
    """
    n_pairs = int((lengths * (lengths - 1)).sum())
    if n_pairs <= _COUNTED_UP_TO:
        first = np.cumsum(lengths) - lengths  # each run's first row
        run_first = np.repeat(first, lengths)
        span = np.repeat(lengths, lengths)
        # every (row a, row b) of one run, a != b
        a = np.repeat(np.arange(rows.size), span)
        b = np.repeat(run_first, span) + (np.arange(a.size) - np.repeat(np.cumsum(span) - span,
                                                                        span))
        other = a != b
        a, b = a[other], b[other]
        mine, theirs = gather_many(ids, a), gather_many(ids, b)
        ahead = ((theirs > mine) if descending else (theirs < mine)).to_numpy()
        if int(np.count_nonzero(ahead)) * 2 == n_pairs:  # every pair ordered: distinct ids
            out = np.empty_like(rows)
            out[run_first + np.bincount(a[ahead], minlength=rows.size)] = rows
            return out
    codes = byte_order_codes(ids) if coded and rows.size <= CODED_UP_TO else None
    if codes is not None:
        return _runs_sorted_by_code(~codes if descending else codes, lengths, rows)
    # the sort's order alone (4 bytes a row), not the sorted frame: its run numbers and ids
    # (4 + 16 bytes a row) would be one more copy beside those sorted
    run = np.repeat(np.arange(lengths.size, dtype=np.int32 if lengths.size < 1 << 31
                              else np.int64), lengths)
    order = pl.DataFrame({"g": run, "d": ids}).select(
        pl.arg_sort_by(["g", "d"], descending=[False, descending],
                       multithreaded=rows.size >= _INDEXED_BELOW)  # few: no hand-offs
    ).to_series().to_numpy()
    ordered: IntArray = rows[order]
    return ordered


_COUNTED_UP_TO = 1 << 14
"""Pairs of tied rows (in all runs to sort) up to which :func:`_runs_sorted` counts
instead of sorting."""


def rank_order(qidx: IntArray, score: FloatArray, docs: pl.Series, n_queries: int) -> Ranking:
    """Rows ranked by query, then score descending, then document id descending (bytes)."""
    base = base_order(qidx, score, n_queries)
    return fix_ties(base, find_ties(base, qidx, score), docs)


def _blocks_in_query_order(starts: IntArray, block_q: IntArray, n_rows: int) -> Blocks | None:
    """The query blocks (``block_q`` >= 0) in query order; None: the file order."""
    kept = block_q >= 0
    if kept.all() and (block_q.size < 2 or bool(np.all(block_q[1:] > block_q[:-1]))):
        return None
    ends = np.append(starts[1:], n_rows)
    which = np.flatnonzero(kept)
    which = which[np.argsort(block_q[which], kind="stable")]
    return Blocks(starts[which], (ends - starts)[which])


def _ranked_in_file(qidx: IntArray, score: FloatArray, change: BoolArray, every: bool,
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


def base_order(qidx: IntArray, score: FloatArray, n_queries: int, *,
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
    counts = (np.bincount(qidx if every else qidx[kept], minlength=n_queries) if n
              else np.zeros(n_queries, np.int64)).astype(np.int64)
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
        order, negated = _sort_within_queries(qidx, score, stable)
        return Ranking(order, None, counts, negated_scores=negated)
    rows = np.flatnonzero(kept)
    order, negated = _sort_within_queries(qidx[rows], score[rows], stable)
    return Ranking(rows[order], None, counts, negated_scores=negated)


def fix_ties(base: Ranking, ties: Ties | None, docs: pl.Series,
             values: FloatArray | None = None, *, descending: bool = True,
             ranked_values: FloatArray | None = None) -> Ranking:
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
                   base.blocks, base.negated_scores)


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
