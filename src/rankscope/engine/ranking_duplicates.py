"""The run's duplicate check and trec_eval's duplicate report, beside the ranking.

A run read with its duplicate check deferred (see
:class:`~rankscope.data.tables.Run`) is checked by :func:`~rankscope.engine.ranking.rank`
on threads of its own, beside the ordering or the measures: :func:`check_beside`
and :func:`check_in_order` find the error the run's constructor would have raised
(``"error"``), :func:`duplicates_beside` names each query's duplicate, trec_eval's
rule (``"report"``), each on a thread of its own (:func:`beside`). The proofs
that no (query, document) pair repeats are here (:func:`proof_of_distinct_rows`,
:func:`distinct_in_order`, :func:`run_duplicates`); the hashing and the exact
search are :mod:`~rankscope.engine.ranking_match`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope.data.distinct import distinct_within
from rankscope.data.rankings import Index, Ranking
from rankscope.data.tables import Run, pair_hashes
from rankscope.engine.ranked_lists import IntArray
from rankscope.engine.ranking_match import doc_keys, first_duplicates
from rankscope.workers import submit

UIntArray = npt.NDArray[np.uint64]

__all__ = ["beside", "blocks_proof", "check_beside", "check_in_order", "distinct_in_order",
           "duplicates_beside", "keys_again", "proof_of_distinct_rows", "run_duplicates"]


def blocks_proof(qidx: Callable[[], Index], docs: pl.Series, lengths: IntArray, *,
                 inline: bool = False) -> Callable[[], bool]:
    """Whether no block of the file (``lengths`` each, one query's rows) repeats a document.

    Started now on a thread of its own (on the calling thread with ``inline``):
    each block's documents are hashed and sorted a few million rows at a time,
    so no key of every row is held. The result is asked for by the duplicate
    search; False may be a collision. ``qidx`` (every file row's query index,
    made anew) serves only if the blocks do not cover the file.
    """

    def pairs(start: int, length: int) -> pl.Series:
        return pl.Series(doc_keys(qidx()[start:start + length], docs.slice(start, length)))

    proof = beside(lambda: proof_of_distinct_rows(docs, lengths, pairs), inline=inline)
    return lambda: bool(proof.result())


def keys_again(qidx: Callable[[], Index], docs: pl.Series) -> UIntArray:
    """Every file row's key as the matching made it (:func:`doc_keys`), made anew."""
    return doc_keys(qidx(), docs)


def duplicates_beside(qidx: Callable[[], Index], docs: pl.Series,
                       rows: Callable[[], IntArray],
                       keys: UIntArray | None, counts: IntArray, n: int,
                       file_keys: tuple[Callable[[], UIntArray], Callable[[], bool]] | None
                       = None, *, inline: bool = False) -> Future[list[str | None]]:
    """trec_eval's duplicate rule, searched on a thread beside the measures.

    ``keys`` are the ranked rows' keys; or ``file_keys`` = (every file row's
    key, held or made when asked; a proof that no ranked query repeats a
    document), when every row is ranked: each query's documents looked at in
    its block of the file (:func:`blocks_proof`) or its keys gathered in the
    sort's order, no key of every ranked row in rank order unless the proof
    fails.
    """

    def search() -> list[str | None]:
        ranked = keys
        if ranked is None:
            if file_keys is None:
                return [None] * n
            all_keys, proved = file_keys
            if proved():
                return [None] * n
            ranked = all_keys()[rows()]
        return run_duplicates(qidx, docs, rows(), ranked, counts, n)

    return beside(search, inline=inline)  # type: ignore[return-value]


def check_in_order(run: Run, docs: pl.Series, keys: UIntArray | None,
                    base: Ranking, grouped_lengths: IntArray | None) -> Future[object]:
    """The run's duplicate check, on a thread of its own, from the ranking's order.

    Each query's keys distinct prove the run's pairs distinct (every row is
    evaluated): ``keys`` are every file row's (the matching's), or None to
    hash the documents on that thread. Otherwise the run's constructor's
    error is found as by :func:`check_beside`, which also serves an order the
    sort did not make.
    """
    order = base.order
    if order is None or order.size != docs.len():
        return check_beside(run, docs, grouped_lengths, False)
    counts = base.counts

    def proof() -> bool:
        hashed = doc_keys(None, docs) if keys is None else keys
        return distinct_in_order(hashed, order, counts)

    return beside(lambda: _refused(run, proof))


def _refused(run: Run, proof: Callable[[], bool]) -> object:
    """None when ``proof`` holds, else the run's constructor's error (None if a collision)."""
    if proof():
        return None
    try:
        run.refuse_duplicates()
    except Exception as exc:  # the constructor's exact error, raised by the caller
        return exc
    return None


def check_beside(run: Run, docs: pl.Series, grouped_lengths: IntArray | None,
                  inline: bool) -> Future[object]:
    """The run's duplicate check, deferred by its reader, on a thread of its own.

    ``grouped_lengths``: the run's query blocks, when each query's rows are together.
    """

    def pairs(start: int, length: int) -> pl.Series:
        return pair_hashes(run.held.slice(start, length))

    return beside(lambda: _refused(
        run, lambda: proof_of_distinct_rows(docs, grouped_lengths, pairs)), inline=inline)


def beside(fn: Callable[[], object], *, inline: bool = False) -> Future[object]:
    """Run ``fn`` on another thread (numpy and polars release the GIL on large arrays): one
    of the process's kept threads (:mod:`rankscope.workers`), idle until now.

    With ``inline`` (small inputs, where starting a thread costs more than it
    saves) ``fn`` runs now, on the calling thread; the future holds its result
    or its exception either way.
    """
    if inline:
        done: Future[object] = Future()
        try:
            done.set_result(fn())
        except Exception as exc:  # the caller's .result() raises it, as from a thread
            done.set_exception(exc)
        return done
    return submit(fn)


def run_duplicates(qidx: Callable[[], Index], docs: pl.Series, rows: IntArray,
                   keys: UIntArray, counts: IntArray, n: int) -> list[str | None]:
    """Per query, the smallest document its ranking lists twice.

    ``rows`` are the ranked file rows, query by query (``counts`` each), and
    ``keys`` their keys: when no query repeats a key there is no duplicate,
    proved by a cheap sort; otherwise the documents are compared exactly.
    ``qidx`` gives every file row's query index, asked for only then (the
    ranking does not keep it, 8 bytes a row, for a case this rare).
    """
    if distinct_within(keys, counts):
        return [None] * n
    return first_duplicates(qidx(), docs, keys, n, rows)


def proof_of_distinct_rows(docs: pl.Series, segment_lengths: IntArray | None,
                           pair_keys: Callable[[int, int], pl.Series]) -> bool:
    """Whether no (query, document) pair can repeat: True proves it, False may be a collision.

    ``segment_lengths``: the lengths of the runs of equal query ids in file
    order, when each query's rows are together (then sorting each query's
    document hashes proves it); otherwise every row's pair hash is sorted in
    one array and neighbours compared. ``pair_keys(start, length)`` gives the
    pair hashes of that many rows from ``start``: they are asked for a few
    million rows at a time, so no temporaries of every row are held at once
    (counting distinct hashes in a hash table held about 600 MB at 10^7 rows,
    beside the ranking; the in-place sort holds the 80 MB array alone).
    """
    if segment_lengths is not None and int(segment_lengths.sum()) == docs.len():
        # hashed a few million rows at a time, whole segments each: no hash of every row
        # held at once (80 MB at 10^7 rows, alive beside the ranking)
        for lo_seg, hi_seg, lo_row, hi_row in _whole_segments(segment_lengths, _PROVED_BLOCK):
            hashed = docs.slice(lo_row, hi_row - lo_row).hash(seed=0x5EED).to_numpy()
            if not distinct_within(hashed, segment_lengths[lo_seg:hi_seg]):
                return False
        return True
    n_rows = docs.len()
    keys = np.empty(n_rows, dtype=np.uint64)
    for start in range(0, n_rows, _PROVED_BLOCK):
        length = min(_PROVED_BLOCK, n_rows - start)
        keys[start:start + length] = pair_keys(start, length).to_numpy()
    keys.sort()
    return not bool(np.any(keys[1:] == keys[:-1]))


_PROVED_BLOCK = 1 << 22
"""Rows (whole query segments) whose document hashes :func:`proof_of_distinct_rows`
sorts at a time."""


def distinct_in_order(keys: UIntArray, order: Index, counts: IntArray) -> bool:
    """Whether no query repeats a key: True proves no (query, document) pair repeats.

    ``keys`` are every file row's keys (:func:`doc_keys`), ``order`` the rows
    query by query (``counts`` each, every row of the file once), as the
    ranking has them: each query's keys are gathered and sorted a million or
    so at a time (whole queries), so a shuffled run's proof needs no hash pass
    of its own (the matching's keys serve) and no array of every row beside
    them. False may be a collision: the caller compares the pairs exactly.
    """
    for lo_q, hi_q, lo, hi in _whole_segments(counts, _GATHERED_BLOCK):
        if not distinct_within(keys[order[lo:hi]], counts[lo_q:hi_q]):
            return False
    return True


_GATHERED_BLOCK = 1 << 20
"""Rows (whole queries) whose keys :func:`distinct_in_order` gathers at a time (8 MB)."""


def _whole_segments(lengths: IntArray, block: int) -> Iterator[tuple[int, int, int, int]]:
    """Pieces of about ``block`` rows, whole segments each: (first segment, end, first
    row, end); a segment longer than ``block`` is a piece of its own."""
    ends = np.cumsum(lengths)
    lo_seg = lo_row = 0
    while lo_seg < ends.size:
        hi_seg = max(lo_seg + 1, int(np.searchsorted(ends, lo_row + block, "right")))
        hi_row = int(ends[hi_seg - 1])
        yield lo_seg, hi_seg, lo_row, hi_row
        lo_seg, lo_row = hi_seg, hi_row
