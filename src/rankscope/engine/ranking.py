"""The one ranking step: join judgments, order, break ties, cut, lay out in CSR form.

Every way of evaluating (``rankscope.evaluate``, the streaming engine, Spark,
the judgments path and ``rankscope trec_eval``) ranks with :func:`rank`. The
result, :class:`RankedLists`, is what every metric kernel reads: for the
evaluated queries (in byte order), the grades of the ranked documents in rank
order, flattened, with ``offsets`` marking where each query starts
(compressed sparse rows); and, in the same layout, the grades of each query's
judged documents sorted from best to worst (for ideal rankings and R).

Ties in score are broken by document id descending in byte order (trec_eval),
by input order (``ties="input"``) or by document id ascending
(``ties="docid_asc"``). trec_eval's own rules are options of the same step:
``max_ret`` (``-M``) cuts each ranking before ``unjudged="condensed"``
(``-J``) drops unjudged documents; ``levels`` gives the kernels trec_eval's
view of the grades (integer levels, -2 for a negative grade, -1 for a
document outside the qrels); ``stand_in`` gives a query the run lacks
trec_eval ``-c``'s one-document ranking; duplicates can be reported per query
(trec_eval fails at the query that holds one) instead of refused.

How it stays fast on tens of millions of rows (:mod:`~rankscope.data.ranking_order`,
:mod:`~rankscope.engine.ranking_match`, :mod:`~rankscope.data.run_queries`):
query ids become integer indices once per run of equal ids (per line in a
shuffled file); a run written in rank order is recognised and not sorted;
only runs of tied rows whose grades differ are ordered by document id;
judgments are matched by 64-bit keys on a thread beside the ordering;
duplicates are proved absent beside the measures. With ``depth`` (the deepest
cut-off any asked-for metric reads, see :func:`required_depth`) only the top
of each ranking is matched and laid out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import wait
from dataclasses import replace
from functools import partial

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope.data.ranking_order import (
    Ranking,
    base_order,
    find_ties,
    fix_ties,
    gather_many,
)
from rankscope.data.rankings import Index
from rankscope.data.run_queries import run_queries
from rankscope.data.tables import Qrels, Run
from rankscope.engine.options import QueryPolicy, Ties, Unjudged
from rankscope.engine.qrels_index import qrels_index
from rankscope.engine.ranked_lists import (
    STAND_IN_DOC,
    BoolArray,
    FloatArray,
    IntArray,
    LazyRows,
    RankedLists,
    csr,
)
from rankscope.engine.ranking_cut import prefix_positions, within
from rankscope.engine.ranking_duplicates import (
    blocks_proof,
    check_beside,
    check_in_order,
    distinct_in_order,
    duplicates_beside,
    keys_again,
)
from rankscope.engine.ranking_match import (
    CodeArray,
    Judged,
    match_codes,
    match_rows,
)
from rankscope.metrics.base import Metric
from rankscope.workers import submit

__all__ = ["CUTOFF_FAMILIES", "STAND_IN_DOC", "BoolArray", "FloatArray", "IntArray", "QueryPolicy",
           "RankedLists", "Ties", "Unjudged", "rank", "required_depth"]

_THREADED_FROM = 1 << 16  # rows; a smaller run is ranked on the calling thread alone

CUTOFF_FAMILIES = frozenset({
    "P", "R", "R_cap", "F", "Hits", "Success", "AP", "RR", "Judged", "num_ret",
    "num_rel_ret", "CG", "DCG", "nDCG", "ERR", "Best",
})
"""Families whose value at cut-off ``k`` reads only the first ``k`` ranked rows."""

_QRELS_ONLY = frozenset({"num_rel"})
"""Families that read the judgments only, never the ranking."""


def required_depth(metrics: Iterable[Metric]) -> int | None:
    """The deepest rank any of ``metrics`` reads; None when one reads whole rankings.

    A metric of a family in :data:`CUTOFF_FAMILIES` with a cut-off ``k``
    reads ranks 1..k; ``num_rel`` reads none; anything else (AP without a
    cut-off, bpref, RBP, families added later) reads everything.
    """
    deepest = 0
    for metric in metrics:
        if metric.family in _QRELS_ONLY:
            continue
        if metric.family not in CUTOFF_FAMILIES or metric.k is None:
            return None
        deepest = max(deepest, int(metric.k))
    return deepest


def rank(
    qrels: Qrels,
    run: Run,
    *,
    ties: Ties = "trec",
    unjudged: Unjudged = "nonrelevant",
    queries: QueryPolicy = "qrels",
    depth: int | None = None,
    max_grade: float | None = None,
    levels: bool = False,
    stand_in: bool = False,
    max_ret: int | None = None,
    exact_ties: bool = False,
    only_query: str | None = None,
    scores_read: bool = True,
) -> RankedLists:
    """Join, sort and lay out a run against qrels (see the module docstring).

    Parameters
    ----------
    qrels, run : Qrels, Run
        The judgments and the ranking.
    ties : {"trec", "input", "docid_asc"}
        Score ties broken by document id descending (trec_eval), kept in
        input order, or broken by document id ascending.
    unjudged : {"nonrelevant", "condensed", "null"}
        ``condensed`` drops unjudged documents from the rankings before ranks
        are assigned (judged-only lists; after ``max_ret``); the others keep
        them with a NaN grade.
    queries : {"qrels", "intersection", "nonnull"}
        ``intersection`` evaluates only queries the run has; the others every
        query with at least one grade.
    depth : int, optional
        Keep only each query's first ``depth`` ranked rows (after ties are
        broken; with ``condensed``, the first ``depth`` judged rows). Give
        :func:`required_depth` of the metrics to be computed; None keeps all.
    max_grade : float, optional
        The highest grade of the whole qrels, when ``qrels`` holds only some of
        its queries (distributed and streamed evaluation); default: from ``qrels``.
    levels : bool, default False
        Grades as trec_eval sees them: truncated to integer levels, -2 for a
        negative grade (in the pool, not judged), -1 for a document not in the
        qrels; the judged lists keep the levels >= 0.
    stand_in : bool, default False
        A query the run lacks (with ``queries="qrels"``) gets trec_eval
        ``-c``'s stand-in ranking: one unjudged document (dropped by
        ``condensed`` and by ``max_ret`` <= 0).
    max_ret : int, optional
        trec_eval ``-M``: each ranking is cut after this many documents,
        before ``condensed`` drops unjudged ones.
    exact_ties : bool, default False
        Order every run of tied documents (otherwise only runs whose grades
        differ, which is all a measure can see).
    only_query : str, optional
        Evaluate this query alone (trec_eval ``-D``).
    scores_read : bool, default True
        False when nothing reads the run's scores after this ranking (no measure reads
        :attr:`RankedLists.scores`, no other ranking of the run follows): a run handed
        over (:meth:`~rankscope.data.tables.Run.hand_over`) whose rows are all matched
        then has its scores dropped once the rows are ordered and their ties found, and
        the lists hold none (a ranking cut to its top rows keeps them: there they do not
        lie beside the matching's peak).

    Notes
    -----
    The options come checked (:class:`~rankscope.engine.options.EvalOptions`
    is where ``ties``, ``unjudged`` and ``queries`` are validated, once, and
    ``depth`` is :func:`required_depth` of parsed metrics): this step does not
    check them again.

    A run read with its duplicate check deferred (see
    :class:`~rankscope.data.tables.Run`) is checked here, beside the
    measures: :meth:`RankedLists.check_duplicates` raises what the run's
    constructor would have raised (:func:`~rankscope.engine.evaluate.compute`
    calls it), or, for trec_eval's rule, :attr:`RankedLists.run_duplicates`
    names each query's duplicate among its first ``max_ret`` documents.
    """
    index = qrels_index(qrels)  # what depends on the qrels alone: worked out once per object
    qrels_ids = index.query_ids

    def select(run_names: set[str]) -> list[str]:
        chosen = [q for q in qrels_ids if q in run_names] if queries == "intersection" else \
            list(qrels_ids)
        return chosen if only_query is None else [q for q in chosen if q == only_query]

    run_frame = run.held  # query ids as read (a TREC file's: codes), compared by run_queries
    released = False
    evaluated, rq = run_queries(run_frame.get_column("query_id"), select)
    n = len(evaluated)

    def query_index() -> Index:
        """Every row's query index again: trec_eval's duplicate report, on a duplicate."""
        return run_queries(run_frame.get_column("query_id"), select)[1].qidx

    # what is kept of the run's queries: ``qidx`` (8 bytes a row) is dropped as soon as
    # nothing reads it again, so no other reference to it is kept
    qidx, run_names, grouped_lengths = rq.qidx, rq.names, rq.grouped_lengths
    counts = rq.counts(n)
    del rq
    docs = run_frame.get_column("doc_id").cast(pl.String)
    score = run_frame.get_column("score").to_numpy()

    def let_go_of_scores() -> None:
        """The run's scores dropped once ordered, if it was handed over and nothing reads
        them again: not held through the rest of the matching (76 MB at 10^7 lines)."""
        nonlocal run_frame, released
        if not scores_read and run.let_go_of_scores():
            run_frame, released = run.held, True

    report = run.deferred_duplicates == "report"
    small = qidx.size < _THREADED_FROM
    if small and docs.n_chunks() > 1:
        docs = docs.rechunk()  # gathered from twice or more: one small copy makes each cheap
    checking = run.deferred_duplicates == "error"
    pending_check = None

    def judge() -> Judged:
        """The keyed judgments (each query's judged lists are made after the matching,
        which does not read them: 57 MB at 7 M judgments not held beside it)."""
        return index.judged(evaluated)

    condensed = unjudged == "condensed"
    limit = max_ret
    if depth is not None and not condensed:
        limit = depth if limit is None else min(limit, depth)
    truncating = max_ret is not None and max_ret < int(counts.max(initial=0))
    whole = not truncating and (max_ret is None or max_ret > 0)  # every row ranked
    # trec_eval's report on a file holding each query's rows in one block, every row
    # ranked: each block's documents are hashed again beside the ranking to prove none
    # repeats, and every row's key (80 MB at 10^7 rows) is made anew only if one may: not
    # held from the matching to the search
    blockwise = report and whole and grouped_lengths is not None
    exact = exact_ties or truncating
    by_doc = ties != "input"
    kept_rows = int(np.minimum(counts, max(limit, 0)).sum()) if limit is not None else \
        int(counts.sum())

    file_keys: tuple[Callable[[], npt.NDArray[np.uint64]], Callable[[], bool]] | None = None
    every_row = int(counts.sum()) == qidx.size  # each row's query is evaluated
    matching_all = 2 * kept_rows > int(counts.sum())
    # a shuffled run's duplicate check proves each query's keys distinct in rank order,
    # with the matching's keys, once both are known: no hash pass of its own beside the
    # join and the sort (the peak of a shuffled file); otherwise it starts now
    in_order = checking and every_row and grouped_lengths is None and not small
    if checking and not in_order:
        pending_check = check_beside(run, docs, grouped_lengths, small)
    if matching_all:  # most rows stay: match all beside the ordering
        keys = np.empty(qidx.size, dtype=np.uint64) if (report and not blockwise) or in_order \
            else None
        table: FloatArray | None = None  # the grades' codes' values, when they are coded

        def judge_and_match(qidx: Index) -> tuple[Judged, FloatArray | CodeArray]:
            nonlocal table
            judging = judge()
            # a large run's grades as 1- or 2-byte codes while it is sorted and its ties
            # fixed (two arrays of every row's grades are alive at a shuffled file's peak)
            coding = None if small else judging.grade_codes(levels)
            if coding is None:
                return judging, match_rows(qidx, docs, judging, keys_out=keys, levels=levels)
            table = coding.table
            return judging, match_codes(qidx, docs, judging, coding, keys_out=keys)

        if small:  # starting threads would cost more than they save
            judged, values = judge_and_match(qidx)
            base = base_order(qidx, score, n, stable=not by_doc, defer_blocks=True)
            found = find_ties(base, qidx, score) if by_doc else None
            del qidx, score
            let_go_of_scores()
        else:
            # the judgments are keyed and matched on a thread while the main thread orders
            # (a kept one: rankscope.workers)
            matching = submit(judge_and_match, qidx)
            try:
                # the matching holds its own reference to every row's query index until it
                # is done: the main thread lets go of its own once sorted (80 MB at 10^7
                # rows, alive at a shuffled file's peak, the tie search after the sort)
                base = base_order(qidx, score, n, stable=not by_doc, defer_blocks=True)
                sorted_q = None if base.tie_flags is not None else qidx
                del qidx
                found = find_ties(base, sorted_q, score) if by_doc else None
                del sorted_q, score
                let_go_of_scores()
                # the sort's tie flags are read by find_ties alone: let go before the wait
                base = replace(base, tie_flags=None)
            finally:
                wait([matching])  # as a pool's end did: nothing left running on a failure
            judged, values = matching.result()
            del matching
        if blockwise and grouped_lengths is not None:
            # the proof starts once the matching is done (not beside its hashing, the
            # peak of a ranked file), on a thread of its own, not after the ranking (it
            # outlasted the measures)
            file_keys = (partial(keys_again, query_index, docs),
                         blocks_proof(query_index, docs, grouped_lengths, inline=small))
        # nothing reads every row's query index again (the duplicate report makes it anew
        # if it finds a duplicate), nor the sort's tie flags (read to find ties): let go
        # before the grades are gathered in rank order and the ties fixed
        base = replace(base, tie_flags=None)
        if in_order:
            pending_check = check_in_order(run, docs, keys, base, grouped_lengths)
            if not report:
                keys = None  # the check holds them until it is done
        # the grades in the sorted order serve the tie fixes and the result: gathered once
        ordered = None if base.order is None else values[base.order]
        ranking = base if found is None else fix_ties(
            base, found, docs, None if exact else values, descending=ties == "trec",
            ranked_values=ordered)
        in_rank = ranking.apply(values, in_place=True, ordered=ordered)
        del values, ordered
        grades: FloatArray = in_rank if table is None else table[in_rank]  # type: ignore[assignment]
        del in_rank
        # the rows, worked out if asked for (most evaluations never read them), from the
        # sort's order held as 32-bit integers past this step when the rows fit them
        make_rows, kept_order = (ranking.rows, ranking.order) if small else \
            ranking.kept_rows(docs.len())
        rows = LazyRows(make_rows)
        del make_rows
        ranked_keys = None
        if keys is not None:
            if kept_order is not None and whole:
                # a sorted run: each query's keys are gathered a million at a time in the
                # sort's order (a query's rows, tie fixes aside), not every ranked row's
                # key and row at once (80 MB each at 10^7 rows, beside the measures)
                file_keys = (partial(np.asarray, keys),  # the keys held, as they are
                             partial(distinct_in_order, keys, kept_order, ranking.counts))
            else:
                ranked_keys = keys[rows()]
    else:  # few rows stay: match only them (and whole tie runs at the cut)
        judged = judge()
        # a ranked file's query blocks out of query order are kept as blocks: the file
        # rows of the positions kept are found in them, no index of every row is made
        base = base_order(qidx, score, n, stable=not by_doc, defer_blocks=True)
        base = replace(base, tie_flags=None)  # ties are found on the rows kept only
        if in_order:  # the documents hashed on the check's thread, after the sort
            pending_check = check_in_order(run, docs, None, base, grouped_lengths)
        blocks = base.blocks
        ranked = base.order  # None (and no blocks): the file is in rank order
        file_row: Callable[[IntArray], IntArray] = (
            blocks.at if blocks is not None else (lambda at: at) if ranked is None else
            (lambda at: ranked[at].astype(np.int64, copy=False)))  # the sort's may be 32-bit
        score_at = None if not by_doc else (lambda at: score[file_row(at)])
        pos = prefix_positions(counts, max(limit or 0, 0), score_at)
        picked = file_row(pos)
        sub_q, sub_score = qidx[picked], score[picked]
        del qidx  # nothing reads every row's query index again: freed before matching
        sub_docs = gather_many(docs, picked)
        sub_keys = np.empty(picked.size, dtype=np.uint64) if report else None
        values = match_rows(sub_q, sub_docs, judged, keys_out=sub_keys, levels=levels)
        sub = Ranking(None, None, np.bincount(sub_q, minlength=n).astype(np.int64))
        sub_ties = find_ties(sub, sub_q, sub_score) if by_doc else None
        if sub_ties is not None:
            sub = fix_ties(sub, sub_ties, sub_docs, None if exact else values,
                           descending=ties == "trec")
        order = sub.rows()
        rows, grades = LazyRows.known(picked[order]), sub.apply(values)
        ranked_keys = None if sub_keys is None else sub_keys[order]
        counts = sub.counts

    if max_ret is not None and (truncating or max_ret <= 0):
        keep, counts = within(counts, max_ret)
        rows, grades = rows.then(_kept(keep)), grades[keep]
        ranked_keys = None if ranked_keys is None else ranked_keys[keep]
    pending = None
    if report and (ranked_keys is not None or file_keys is not None):
        pending = duplicates_beside(query_index, docs, rows, ranked_keys, counts, n, file_keys,
                                     inline=small)
    if depth is not None and not condensed:
        keep, counts = within(counts, depth)
        rows, grades = rows.then(_kept(keep)), grades[keep]
    in_run = np.array([q in run_names for q in evaluated], dtype=bool)
    if stand_in and levels and not condensed and (max_ret is None or max_ret > 0):
        rows, grades, counts = _with_stand_ins(rows, grades, counts, in_run)
    if condensed:
        # trec_eval -J: a negative grade means "seen, not judged": dropped as well
        with np.errstate(invalid="ignore"):
            judged_rows = grades >= 0
        row_query = np.repeat(np.arange(n, dtype=np.int64), counts)[judged_rows]
        rows, grades = rows.then(_kept(judged_rows)), grades[judged_rows]
        counts = np.bincount(row_query, minlength=n).astype(np.int64)
        if depth is not None:
            keep, counts = within(counts, depth)
            rows, grades = rows.then(_kept(keep)), grades[keep]

    judged_offsets, judged_grades = index.judged_lists(evaluated, levels=levels)
    if max_grade is None:
        max_grade = index.max_grade
    qrels_set = index.query_set
    return RankedLists(
        query_ids=evaluated,
        offsets=csr(counts),
        grades=grades,
        in_run=in_run,
        judged_offsets=judged_offsets,
        judged_grades=judged_grades,
        max_grade=max(max_grade, 0.0),
        n_qrels_queries=len(qrels_ids),
        n_run_queries=len(run_names),
        row_source=rows,
        run_docs=docs,
        run_scores=None if released else run_frame.get_column("score"),
        depth=depth,
        run_only_queries=sorted(run_names - qrels_set),
        missing_queries=sorted(qrels_set - run_names),  # whatever the policy did with them
        levels=levels,
        qrels_duplicates=judged.duplicates if qrels.deferred_duplicates == "report" else None,
        pending_duplicates=pending,
        pending_check=pending_check,
        qrels_shared=index.shared(evaluated, levels=levels),
    )


def _kept(keep: BoolArray) -> Callable[[IntArray], IntArray]:
    """The step keeping the rows where ``keep`` holds."""
    return lambda rows: rows[keep]


def _with_stand_ins(rows: LazyRows, grades: FloatArray, counts: IntArray,
                    in_run: BoolArray) -> tuple[LazyRows, FloatArray, IntArray]:
    """trec_eval -c: each query the run lacks ranks one document outside the qrels."""
    missing = np.flatnonzero(~in_run & (counts == 0))
    if missing.size == 0:
        return rows, grades, counts
    at = csr(counts)[missing]
    counts = counts.copy()
    counts[missing] = 1
    return (rows.then(lambda found: np.insert(found, at, -1)), np.insert(grades, at, -1.0),
            counts)
