"""Fast bulk ranking for trec_eval: order, duplicates and qrels lookup on integer keys.

Sorting ten million rows by (query, score descending, document descending)
with string keys is the slowest step of an evaluation, so it is split:

1. a run written in rank order (each query's lines together, scores
   non-increasing) is recognised in one pass over the file order and not
   sorted: only its blocks are put in query order;
2. otherwise rows are grouped by query (stable radix sort on 16-bit digits)
   and each query's scores sorted on its own (rows of a padded matrix);
3. only rows that tie on (query, score) are then sorted by document id, and
   only when they are not already in trec_eval's order.

Document ids are hashed to 64-bit keys (mixed with the query index) for the
duplicate check and the qrels lookup; every hash match is confirmed on the
strings, so a collision can cost time but never change a result. Everything
is done in the file's row order; the ranking is one permutation of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt
import polars as pl

__all__ = [
    "Ranking", "Ties", "base_order", "doc_keys", "find_ties",
    "first_duplicates", "fix_ties", "lookup", "rank_order",
]

IntArray = npt.NDArray[np.int64]
_Item = TypeVar("_Item", bound=np.generic)
UIntArray = npt.NDArray[np.uint64]
FloatArray = npt.NDArray[np.float64]
MIX = 0x9E3779B97F4A7C15  # mixes the query index into a document hash
_MIX = np.uint64(MIX)


def doc_keys(qidx: IntArray, docs: pl.Series, out: UIntArray | None = None) -> UIntArray:
    """A 64-bit key per (query index, document id) row (written to ``out`` if given)."""
    hashed = docs.hash(seed=0x5EED).to_numpy()
    if out is None:
        out = hashed if hashed.flags.writeable else hashed.copy()
    step = 1 << 20  # mixed in the query block by block: no temporary as long as the run
    with np.errstate(over="ignore"):
        for lo in range(0, qidx.size, step):
            mixed = qidx[lo:lo + step].astype(np.uint64)
            np.multiply(mixed, _MIX, out=mixed)
            np.bitwise_xor(hashed[lo:lo + step], mixed, out=out[lo:lo + step])
    return out


def _stable_by_query(qidx: IntArray) -> IntArray:
    """Row indices grouped by query index, file order kept (LSD radix, 16-bit digits)."""
    order = np.argsort((qidx & 0xFFFF).astype(np.uint16), kind="stable")
    shift = 16
    while int(qidx.max(initial=0)) >> shift:
        digit = ((qidx[order] >> shift) & 0xFFFF).astype(np.uint16)
        order = order[np.argsort(digit, kind="stable")]
        shift += 16
    return order.astype(np.int64, copy=False)


def _sort_within_queries(qidx: IntArray, score: FloatArray) -> IntArray:
    """Rows grouped by query, then by score descending within each query.

    Queries of similar length share a padded matrix whose rows numpy sorts
    independently: many short sorts instead of one long one.
    """
    by_query = _stable_by_query(qidx)
    counts = np.bincount(qidx)
    present = np.flatnonzero(counts)
    width = int(counts[present[0]])
    if np.all(counts[present] == width):  # every ranking equally long: no padding
        grouped = by_query.reshape(present.size, width)
        ranked = np.argsort(-score[grouped], axis=1)
        return np.take_along_axis(grouped, ranked, axis=1).ravel()
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    order = np.empty_like(by_query)
    bucket = np.floor(np.log2(counts[present])).astype(np.int64)
    for b in np.unique(bucket):
        queries = present[bucket == b]
        width = int(counts[queries].max())
        step = max(1, 4_000_000 // width)
        for lo in range(0, queries.size, step):
            chunk = queries[lo:lo + step]
            lens = counts[chunk]
            rows = np.repeat(np.arange(chunk.size), lens)
            cols = np.arange(rows.size) - np.repeat(np.cumsum(lens) - lens, lens)
            src = np.repeat(offsets[chunk], lens) + cols
            grid = np.full((chunk.size, width), np.inf)
            grid[rows, cols] = -score[by_query[src]]
            ranked = np.argsort(grid, axis=1)
            order[src] = by_query[offsets[chunk][rows] + ranked[rows, cols]]
    return order


@dataclass(frozen=True)
class Ranking:
    """How the file's rows become rankings.

    ``order`` lists the rows in rank order (None: the file order itself),
    after which ``moves`` = (positions, rows) puts ``rows`` at ``positions``
    (tie fixes of an already ranked file). Segments of ``counts`` rows hold
    the rankings of the queries ``queries``, in that order.
    """

    order: IntArray | None
    moves: tuple[IntArray, IntArray] | None
    queries: IntArray
    counts: IntArray

    def apply(self, per_row: npt.NDArray[_Item], *,
              in_place: bool = False) -> npt.NDArray[_Item]:
        """A per-row array of the file, in rank order (``in_place``: may overwrite it)."""
        out = per_row if self.order is None else per_row[self.order]
        if self.moves is not None:
            if out is per_row and not in_place:
                out = out.copy()
            # the right side is gathered before anything is written: safe in place
            out[self.moves[0]] = per_row[self.moves[1]]
        return out

    def rows(self, positions: IntArray) -> IntArray:
        """The file rows at some rank-order positions."""
        rows = np.arange(self.counts.sum(), dtype=np.int64)
        return self.apply(rows)[positions]


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
    qs = qidx if order is None else qidx[order]
    ss = score if order is None else score[order]
    tie = (qs[1:] == qs[:-1]) & (ss[1:] == ss[:-1])
    del qs, ss
    pairs = np.flatnonzero(tie)
    if pairs.size == 0:
        return None
    opens = np.empty(pairs.size, dtype=bool)
    opens[0] = True
    np.not_equal(np.diff(pairs), 1, out=opens[1:])
    return Ties(pairs, np.flatnonzero(opens))


def _valued_runs(ties: Ties, values: IntArray) -> Ties:
    """The runs whose rows do not all share a value (``values`` in rank order)."""
    differs = values[1:] != values[:-1]  # whole arrays: cheaper than gathers at the pairs
    differs = differs[ties.pairs]
    return ties.keep_runs(np.logical_or.reduceat(differs, ties.starts))


def _tie_moves(order: IntArray | None, ties: Ties,
               docs: pl.Series) -> tuple[IntArray, IntArray] | None:
    """(positions, rows) putting tied rows in descending document id order.

    Within runs of equal (query, score) trec_eval ranks the larger document
    id (in byte order) first. ``order`` is the ranking so far (None: the file
    order). Only runs holding a pair out of order move: a pair is swapped, a
    longer run sorted.
    """
    pairs = ties.pairs
    if pairs.size == 0:
        return None
    first = pairs if order is None else order[pairs]
    second = pairs + 1 if order is None else order[pairs + 1]
    bad = (docs.gather(pl.Series(first)) <= docs.gather(pl.Series(second))).to_numpy()
    if not bad.any():
        return None  # already in trec_eval's order
    starts = ties.starts
    run_start = pairs[starts]
    run_pairs = np.diff(starts, append=pairs.size)
    run_bad = np.logical_or.reduceat(bad, starts)
    swap = run_start[run_bad & (run_pairs == 1)]
    positions = [swap, swap + 1]
    rows = [swap + 1, swap]
    longer = np.flatnonzero(run_bad & (run_pairs > 1))
    if longer.size:
        size = run_pairs[longer] + 1
        where = np.repeat(run_start[longer], size) + (
            np.arange(int(size.sum())) - np.repeat(np.cumsum(size) - size, size))
        ident = where if order is None else order[where]
        sub = pl.DataFrame({"g": np.repeat(longer, size), "d": docs.gather(pl.Series(ident)),
                            "i": ident}).sort(["g", "d"], descending=[False, True])
        positions.append(where)
        rows.append(sub.get_column("i").to_numpy())
    pos = np.concatenate(positions).astype(np.int64, copy=False)
    src = np.concatenate(rows).astype(np.int64, copy=False)
    if order is not None:
        src[: 2 * swap.size] = order[src[: 2 * swap.size]]  # pairs name positions
    return pos, src


def rank_order(qidx: IntArray, score: FloatArray, docs: pl.Series, n_queries: int) -> Ranking:
    """Rows ranked by query, then score descending, then document id descending (bytes).

    A file already in rank order keeps its query blocks in file order (no
    copy); otherwise the rankings follow query index order.
    """
    base = base_order(qidx, score, n_queries)
    return fix_ties(base, find_ties(base, qidx, score), docs)


def base_order(qidx: IntArray, score: FloatArray, n_queries: int) -> Ranking:
    """Rows ranked by query, then score descending; ties not yet ordered (see :func:`fix_ties`)."""
    n = qidx.size
    counts = np.bincount(qidx, minlength=n_queries) if n else np.zeros(n_queries, np.int64)
    if n == 0:
        return Ranking(None, None, np.arange(n_queries, dtype=np.int64), counts)
    change = qidx[1:] != qidx[:-1]
    starts = np.flatnonzero(np.concatenate(([True], change)))
    block_q = qidx[starts]
    ranked = (np.unique(block_q).size == starts.size
              and not np.any(~change & (score[1:] > score[:-1])))
    if ranked:
        absent = np.flatnonzero(counts == 0)
        queries = np.concatenate((block_q, absent)).astype(np.int64)
        return Ranking(None, None, queries, counts[queries])
    order = _sort_within_queries(qidx, score)
    return Ranking(order, None, np.arange(n_queries, dtype=np.int64), counts)


def fix_ties(base: Ranking, ties: Ties | None, docs: pl.Series,
             values: IntArray | None = None) -> Ranking:
    """``base`` with its ties (from :func:`find_ties`) in trec_eval's order.

    trec_eval ranks tied documents by id, descending. With ``values`` (one
    per file row: what the measures will see), only runs whose rows differ
    in value are put in order: swapping two rows of the same value changes
    no measure, and most ties of a ranking are between unjudged documents,
    so most string comparisons are saved. Without ``values`` (when ``-M``
    cuts rankings, which rows survive the cut matters) every tie is ordered.
    """
    if ties is None:
        return base
    if values is not None:
        ties = _valued_runs(ties, values if base.order is None else values[base.order])
    return Ranking(base.order, _tie_moves(base.order, ties, docs), base.queries, base.counts)


def first_duplicates(qidx: IntArray, docs: pl.Series, keys: UIntArray, n_queries: int,
                     rows: IntArray | None = None) -> list[str | None]:
    """Per query, the smallest document id listed twice among ``rows`` (default: all)."""
    out: list[str | None] = [None] * n_queries
    subset = keys if rows is None else keys[rows]
    if subset.size < 2 or pl.Series(subset).n_unique() == subset.size:
        return out
    candidates = np.flatnonzero(pl.Series(subset).is_duplicated().to_numpy())
    if rows is not None:
        candidates = rows[candidates]
    sub = pl.DataFrame({"q": qidx[candidates], "d": docs.gather(pl.Series(candidates))})
    dups = sub.filter(pl.struct("q", "d").is_duplicated())
    for q, d in dups.group_by("q").agg(pl.col("d").min()).iter_rows():
        out[q] = d
    return out


def lookup(run_keys: UIntArray, run_q: IntArray, run_docs: pl.Series, qrels_keys: UIntArray,
           qrels_q: IntArray, qrels_docs: pl.Series,
           keys_distinct: bool | None = None) -> tuple[IntArray, IntArray]:
    """The run rows found in the qrels, and the index of their qrels line.

    The qrels must not hold the same (query, document) twice. ``keys_distinct``
    says whether ``qrels_keys`` are all different, when already known.
    """
    index = np.arange(qrels_keys.size, dtype=np.int64)
    keyed = pl.DataFrame({"k": qrels_keys, "j": index})
    if keys_distinct is None:
        keys_distinct = keyed.get_column("k").n_unique() == qrels_keys.size
    if not keys_distinct:
        # a hash collision between different qrels lines: match on the strings
        left = pl.DataFrame({"q": run_q, "d": run_docs})
        right = pl.DataFrame({"q": qrels_q, "d": qrels_docs, "j": index})
        found = left.join(right, on=["q", "d"], how="left", maintain_order="left")
        match = found.get_column("j").fill_null(-1).to_numpy()
        hit = np.flatnonzero(match >= 0)
        return hit, match[hit].astype(np.int64)
    hit = np.flatnonzero(pl.Series(run_keys).is_in(keyed.get_column("k").implode()).to_numpy())
    found = pl.DataFrame({"k": run_keys[hit]}).join(keyed, on="k", how="left",
                                                     maintain_order="left")
    j = found.get_column("j").to_numpy().astype(np.int64)
    same = (run_q[hit] == qrels_q[j]) & (
        run_docs.gather(pl.Series(hit)) == qrels_docs.gather(pl.Series(j))).to_numpy()
    return hit[same], j[same]
