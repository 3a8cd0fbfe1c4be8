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

import numpy as np
import numpy.typing as npt
import polars as pl

__all__ = ["doc_keys", "first_duplicates", "lookup", "rank_order"]

IntArray = npt.NDArray[np.int64]
UIntArray = npt.NDArray[np.uint64]
FloatArray = npt.NDArray[np.float64]
_MIX = np.uint64(0x9E3779B97F4A7C15)


def doc_keys(qidx: IntArray, docs: pl.Series) -> UIntArray:
    """A 64-bit key per (query index, document id) row."""
    hashed = docs.hash(seed=0x5EED).to_numpy()
    with np.errstate(over="ignore"):
        mixed = qidx.astype(np.uint64) * _MIX
    np.bitwise_xor(mixed, hashed, out=mixed)
    return mixed


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


def _fix_ties(order: IntArray | None, qidx: IntArray, score: FloatArray,
              docs: pl.Series) -> IntArray | None:
    """Within runs of equal (query, score), put document ids in descending byte order.

    ``order`` is the ranking so far (None: the file order itself). Only runs
    holding a pair out of order are touched: a pair is swapped, a longer run
    sorted.
    """
    qs = qidx if order is None else qidx[order]
    ss = score if order is None else score[order]
    tie = (qs[1:] == qs[:-1]) & (ss[1:] == ss[:-1])
    del qs, ss
    pairs = np.flatnonzero(tie)
    if pairs.size == 0:
        return order
    first = pairs if order is None else order[pairs]
    second = pairs + 1 if order is None else order[pairs + 1]
    bad = ~(docs.gather(pl.Series(first)) > docs.gather(pl.Series(second))).to_numpy()
    if not bad.any():
        return order  # already in trec_eval's order
    # runs of consecutive tied pairs: a run of k pairs is k + 1 tied rows
    opens = np.concatenate(([True], pairs[1:] != pairs[:-1] + 1))
    run = np.cumsum(opens) - 1
    run_start = pairs[opens]
    run_pairs = np.bincount(run)
    run_bad = np.bincount(run, weights=bad) > 0
    fixed = np.arange(qidx.size, dtype=np.int64) if order is None else order.copy()
    swap = run_start[run_bad & (run_pairs == 1)]
    fixed[swap], fixed[swap + 1] = fixed[swap + 1], fixed[swap].copy()
    longer = np.flatnonzero(run_bad & (run_pairs > 1))
    if longer.size:
        size = run_pairs[longer] + 1
        where = np.repeat(run_start[longer], size) + (
            np.arange(int(size.sum())) - np.repeat(np.cumsum(size) - size, size))
        ident = fixed[where]
        sub = pl.DataFrame({"g": np.repeat(longer, size), "d": docs.gather(pl.Series(ident)),
                            "i": ident}).sort(["g", "d"], descending=[False, True])
        fixed[where] = sub.get_column("i").to_numpy()
    return fixed


def rank_order(qidx: IntArray, score: FloatArray, docs: pl.Series) -> IntArray | None:
    """Row order by query, then score descending, then document id descending (bytes).

    Returns None when the file order is already that order.
    """
    n = qidx.size
    if n == 0:
        return None
    change = qidx[1:] != qidx[:-1]
    starts = np.flatnonzero(np.concatenate(([True], change)))
    block_q = qidx[starts]
    ranked = (np.unique(block_q).size == starts.size
              and not np.any(~change & (score[1:] > score[:-1])))
    if not ranked:
        return _fix_ties(_sort_within_queries(qidx, score), qidx, score, docs)
    within = _fix_ties(None, qidx, score, docs)
    if np.all(block_q[1:] > block_q[:-1]):
        return within
    ends = np.append(starts[1:], n)
    pieces = [np.arange(starts[b], ends[b]) if within is None else within[starts[b]:ends[b]]
              for b in np.argsort(block_q, kind="stable").tolist()]
    return np.concatenate(pieces).astype(np.int64, copy=False)


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
           qrels_q: IntArray, qrels_docs: pl.Series) -> tuple[IntArray, IntArray]:
    """The run rows found in the qrels, and the index of their qrels line.

    The qrels must not hold the same (query, document) twice.
    """
    index = np.arange(qrels_keys.size, dtype=np.int64)
    keyed = pl.DataFrame({"k": qrels_keys, "j": index})
    if keyed.get_column("k").n_unique() != qrels_keys.size:
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
