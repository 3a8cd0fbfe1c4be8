"""Fast bulk ranking for trec_eval: order, duplicates and qrels lookup on integer keys.

Sorting ten million rows by (query, score descending, document descending)
with string keys is the slowest step of an evaluation, so it is split:

1. an already ranked run (each query's lines together, scores non-increasing,
   ties in document order) is recognised in one pass and not sorted at all;
2. otherwise rows are sorted by score (one float sort), then by query with a
   stable radix sort on 16-bit digits;
3. only rows that tie on (query, score) are then sorted by document id.

Document ids are hashed to 64-bit keys (mixed with the query index) for the
duplicate check and the qrels lookup; every hash match is confirmed on the
strings, so a collision can cost time but never change a result.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import polars as pl

__all__ = ["doc_keys", "first_duplicates", "lookup", "rank_order"]

IntArray = npt.NDArray[np.int64]
UIntArray = npt.NDArray[np.uint64]
_MIX = np.uint64(0x9E3779B97F4A7C15)


def doc_keys(qidx: IntArray, docs: pl.Series) -> UIntArray:
    """A 64-bit key per (query index, document id) row."""
    hashed = docs.hash(seed=0x5EED).to_numpy().astype(np.uint64, copy=False)
    with np.errstate(over="ignore"):
        return np.asarray(hashed ^ (qidx.astype(np.uint64) * _MIX), dtype=np.uint64)


def _stable_by_query(order: IntArray, qidx: IntArray) -> IntArray:
    """Stably reorder ``order`` by query index (LSD radix sort, 16-bit digits)."""
    top = int(qidx.max(initial=0))
    shift = 0
    while True:
        digit = ((qidx[order] >> shift) & 0xFFFF).astype(np.uint16)
        order = order[np.argsort(digit, kind="stable")]
        shift += 16
        if top >> shift == 0:
            return order


def _already_ranked(qidx: IntArray, score: npt.NDArray[np.float64], docs: pl.Series) -> bool:
    if qidx.size < 2:
        return True
    same_q = qidx[1:] == qidx[:-1]
    if np.count_nonzero(~same_q) != np.count_nonzero(np.bincount(qidx)) - 1:
        return False  # a query's lines are not together
    if not np.all(~same_q | (score[1:] <= score[:-1])):
        return False
    tied = np.flatnonzero(same_q & (score[1:] == score[:-1]))
    if tied.size == 0:
        return True
    idx = pl.Series(tied.astype(np.int64))
    return bool((docs.gather(idx) > docs.gather(idx + 1)).all())


def rank_order(qidx: IntArray, score: npt.NDArray[np.float64], docs: pl.Series) -> IntArray:
    """Row order by query, then score descending, then document id descending (bytes)."""
    n = qidx.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if _already_ranked(qidx, score, docs):
        starts = np.flatnonzero(np.concatenate(([True], qidx[1:] != qidx[:-1])))
        if n and np.all(np.diff(qidx[starts]) > 0):
            return np.arange(n, dtype=np.int64)
        blocks = np.argsort(qidx[starts], kind="stable")
        lengths = np.diff(np.append(starts, n))
        first = np.repeat(starts[blocks], lengths[blocks])
        offsets = np.repeat(np.cumsum(lengths[blocks]) - lengths[blocks], lengths[blocks])
        return np.asarray(first + (np.arange(n) - offsets), dtype=np.int64)
    order = pl.Series(score).arg_sort(descending=True).to_numpy().astype(np.int64)
    order = _stable_by_query(order, qidx)
    qs, ss = qidx[order], score[order]
    tie = (qs[1:] == qs[:-1]) & (ss[1:] == ss[:-1])
    if tie.any():
        in_tie = np.zeros(n, dtype=bool)
        in_tie[1:] |= tie
        in_tie[:-1] |= tie
        where = np.flatnonzero(in_tie)
        group = np.cumsum(np.concatenate(([True], ~tie)))[where]
        sub = pl.DataFrame({
            "g": group, "d": docs.gather(pl.Series(order[where])), "i": order[where],
        }).sort(["g", "d"], descending=[False, True], multithreaded=True)
        order[where] = sub.get_column("i").to_numpy()
    return order


def first_duplicates(qidx: IntArray, docs: pl.Series, keys: UIntArray,
                     n_queries: int) -> list[str | None]:
    """Per query, the smallest document id listed twice (None if there is none)."""
    out: list[str | None] = [None] * n_queries
    if keys.size < 2 or pl.Series(keys).n_unique() == keys.size:
        return out
    candidates = np.flatnonzero(pl.Series(keys).is_duplicated().to_numpy())
    sub = pl.DataFrame({"q": qidx[candidates], "d": docs.gather(pl.Series(candidates))})
    dups = sub.filter(pl.struct("q", "d").is_duplicated())
    for q, d in dups.group_by("q").agg(pl.col("d").min()).iter_rows():
        out[q] = d
    return out


def lookup(run_keys: UIntArray, run_q: IntArray, run_docs: pl.Series, qrels_keys: UIntArray,
           qrels_q: IntArray, qrels_docs: pl.Series) -> IntArray:
    """For each run row, the index of its (first) qrels line, or -1.

    The qrels must not hold the same (query, document) twice.
    """
    keyed = pl.DataFrame({"k": qrels_keys, "j": np.arange(qrels_keys.size, dtype=np.int64)})
    if keyed.get_column("k").n_unique() != qrels_keys.size:
        # a hash collision between different qrels lines: match on the strings
        left = pl.DataFrame({"q": run_q, "d": run_docs})
        right = pl.DataFrame({"q": qrels_q, "d": qrels_docs,
                              "j": np.arange(qrels_keys.size, dtype=np.int64)})
        found = left.join(right, on=["q", "d"], how="left", maintain_order="left")
        return found.get_column("j").fill_null(-1).to_numpy().astype(np.int64)
    found = pl.DataFrame({"k": run_keys}).join(keyed, on="k", how="left", maintain_order="left")
    match = found.get_column("j").fill_null(-1).to_numpy().astype(np.int64)
    hit = np.flatnonzero(match >= 0)
    if hit.size:
        j = match[hit]
        same = (run_q[hit] == qrels_q[j]) & (
            run_docs.gather(pl.Series(hit)) == qrels_docs.gather(pl.Series(j))
        ).to_numpy()
        match[hit[~same]] = -1
    return match
