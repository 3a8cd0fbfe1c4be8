"""The run's duplicate check and trec_eval's duplicate report, beside the ranking.

A run read with its duplicate check deferred (see
:class:`~rankscope.data.tables.Run`) is checked by :func:`~rankscope.engine.ranking.rank`
on threads of its own, beside the ordering or the measures: :func:`check_beside`
and :func:`check_in_order` find the error the run's constructor would have raised
(``"error"``), :func:`duplicates_beside` names each query's duplicate, trec_eval's
rule (``"report"``), each on a thread of its own (:func:`beside`). The hashing,
the proofs and the exact search are :mod:`~rankscope.engine.ranking_match`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope.data.rankings import Index, Ranking
from rankscope.data.tables import Run, pair_hashes
from rankscope.engine.ranked_lists import IntArray
from rankscope.engine.ranking_match import (
    distinct_in_order,
    doc_keys,
    proof_of_distinct_rows,
    run_duplicates,
)

UIntArray = npt.NDArray[np.uint64]

__all__ = ["beside", "blocks_proof", "check_beside", "check_in_order", "duplicates_beside",
           "keys_again"]


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
    """Run ``fn`` on a thread of its own (numpy and polars release the GIL on large arrays).

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
    worker = ThreadPoolExecutor(max_workers=1)
    future = worker.submit(fn)
    worker.shutdown(wait=False)
    return future
