"""trec_eval's per-query rankings, for every query at once (CSR arrays).

For each evaluated query (qrels queries in byte order), the run's documents
are sorted by score descending with ties broken by document id descending
(byte order), cut to the first ``-M``, checked for duplicates, given trec_eval's
relevance value (the qrels value if judged, -2 if the qrels value is
negative, -1 if not in the qrels), and with ``-J`` stripped of values < 0.
The per-query counts of each judged level (``rel_levels``) come from the
qrels alone. With ``-c`` a query the run lacks gets trec_eval's one-document
stand-in ranking (``ceci_nest_pas_un_docno``, score 1).

Errors trec_eval raises only when it reaches a query (duplicates, a query the
run lacks) are recorded per query here and raised in order by the command.
"""

from __future__ import annotations

import math
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope.data.distinct import distinct_within
from rankscope.data.trec_dialect import QrelsTable, RunTable

if TYPE_CHECKING:
    from rankscope.engine.ranking import RankedLists
from rankscope.engine.options import EvalOptions
from rankscope.engine.trec_order import (
    base_order,
    doc_keys,
    find_ties,
    first_duplicates,
    fix_ties,
    lookup,
)

__all__ = ["STAND_IN_DOC", "TrecLists", "build_lists", "ranked_frame", "trec_level",
           "trec_lists_from_ranked"]

IntArray = npt.NDArray[np.int64]
STAND_IN_DOC = "ceci_nest_pas_un_docno"
NONPOOL = -1
UNJUDGED = -2


@dataclass(frozen=True)
class TrecLists:
    """Rankings and judgment counts of the evaluated queries.

    Attributes
    ----------
    query_ids : list of str
        Evaluated queries, in trec_eval's order (byte order).
    offsets : ndarray of int64, shape (n + 1,)
        Query ``q``'s ranked rows are ``offsets[q]:offsets[q + 1]``.
    values : ndarray of int64
        trec_eval's value of each ranked document (>= 0 judged, -1 not in
        the qrels, -2 judged negative = in the pool but unjudged).
    level_offsets, levels, level_counts : ndarray of int64
        Per query, the judged levels (>= 0, ascending) and how many qrels
        lines have each (all judgments, retrieved or not).
    lvl : int
        The relevance level (``-l``): relevant means value >= lvl.
    in_run : ndarray of bool
        False for a ``-c`` stand-in ranking.
    run_dup, qrels_dup : list of (str or None)
        Per query, the duplicate document trec_eval would report, if any.
        ``run_dup`` may be given as a future (``pending_run_dup``): the
        search for duplicates then runs beside the measures, which do not
        need it (a query with a duplicate fails whatever its values).
    max_rel : ndarray of int64 or None
        Per query, the highest value in its qrels lines (negative ones too).
    segment_query : ndarray of int64 or None
        When the queries are not in byte order (a ranked file keeps its own
        order), each one's position in byte order; every per-query array above
        follows the rankings' order.
    """

    query_ids: list[str]
    offsets: IntArray
    values: IntArray
    level_offsets: IntArray
    levels: IntArray
    level_counts: IntArray
    lvl: int
    in_run: npt.NDArray[np.bool_]
    given_run_dup: list[str | None] = field(default_factory=list)
    qrels_dup: list[str | None] = field(default_factory=list)
    max_rel: IntArray | None = None
    segment_query: IntArray | None = None
    pending_run_dup: Future[list[str | None]] | None = None

    @property
    def run_dup(self) -> list[str | None]:
        """Per query, the duplicate document of the run trec_eval would report, if any."""
        if self.pending_run_dup is not None:
            return self.pending_run_dup.result()
        return self.given_run_dup

    def in_query_order(self) -> IntArray | None:
        """Indices putting per-query arrays in byte order of query id (None: already)."""
        if self.segment_query is None:
            return None
        back = np.empty(self.n, dtype=np.int64)
        back[self.segment_query] = np.arange(self.n, dtype=np.int64)
        if np.array_equal(back, np.arange(self.n)):
            return None
        return back

    @property
    def n(self) -> int:
        """Number of evaluated queries."""
        return len(self.query_ids)


def trec_level(rel: float | None) -> int:
    """The integer level a relevance threshold means for integer grades (>= rel)."""
    return 1 if rel is None else math.ceil(rel)


def _csr(index: IntArray, n: int) -> IntArray:
    counts = np.bincount(index, minlength=n) if index.size else np.zeros(n, np.int64)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def _first_dups(frame: pl.DataFrame, n: int) -> list[str | None]:
    """Per query index, the smallest document id listed twice (trec_eval's report)."""
    out: list[str | None] = [None] * n
    if frame.height == 0:
        return out
    dups = frame.filter(pl.struct("qidx", "doc_id").is_duplicated())
    if dups.height:
        first = dups.group_by("qidx").agg(pl.col("doc_id").min())
        for q, d in first.iter_rows():
            out[q] = d
    return out


def ranked_frame(
    qmap: pl.DataFrame, run: RunTable, *, complete: bool, max_ret: int,
    descending_ties: bool = True,
) -> tuple[pl.DataFrame, npt.NDArray[np.bool_]]:
    """The run's rows of the evaluated queries, sorted and cut to ``-M``.

    Returns the frame (``qidx``, ``doc_id``, ``score``, ``pos``) and which
    evaluated queries the run has. ``descending_ties=False`` breaks score
    ties by document id ascending (trec_eval's preference measures).
    """
    n = qmap.height
    rows = run.frame.join(qmap, on="query_id", how="inner").select(
        "qidx", "doc_id", (pl.col("score") + 0.0).alias("score")  # -0.0 ties with 0.0
    )
    present = np.zeros(n, dtype=bool)
    present[rows.get_column("qidx").unique().to_numpy()] = True
    if complete and not present.all():
        missing = np.flatnonzero(~present)
        stand_in = pl.DataFrame({
            "qidx": missing.astype(np.int64),
            "doc_id": [STAND_IN_DOC] * missing.size,
            "score": np.ones(missing.size),
        })
        rows = pl.concat([rows, stand_in], how="vertical_relaxed")
    rows = rows.sort(
        ["qidx", "score", "doc_id"], descending=[False, True, descending_ties],
        multithreaded=True,
    )
    qidx = rows.get_column("qidx").to_numpy()
    offsets = _csr(qidx, n)
    pos = np.arange(qidx.size, dtype=np.int64) - np.repeat(offsets[:-1], np.diff(offsets))
    rows = rows.with_columns(pl.Series("pos", pos))
    if max_ret < int(pos.max(initial=-1)) + 1:
        rows = rows.filter(pl.col("pos") < max(max_ret, 0))
    return rows, present


def _with_query_index(frame: pl.DataFrame, qids: pl.Series) -> pl.DataFrame:
    """The rows of ``frame`` whose query is in ``qids``, with its index as ``qidx``."""
    qidx = frame.get_column("query_id").replace_strict(
        qids, pl.int_range(qids.len(), eager=True), default=-1, return_dtype=pl.Int64
    )
    out = frame.with_columns(qidx.alias("qidx"))
    if (qidx < 0).any():
        out = out.filter(pl.col("qidx") >= 0)
    return out


def build_lists(
    qrels: QrelsTable, run: RunTable, options: EvalOptions, *, max_ret: int,
    only_query: str | None = None,
) -> TrecLists:
    """Rank the run against the qrels the way trec_eval 10.0 does (see module doc).

    From ``options``: ``queries="qrels"`` gives a query the run lacks the
    stand-in ranking (``-c``), ``unjudged="condensed"`` drops unjudged
    documents after the ``max_ret`` cut (``-J`` after ``-M``), ``rel`` is the
    relevance level (``-l``); ties are always trec_eval's.
    """
    lvl = trec_level(options.rel)
    complete = options.queries == "qrels"
    judged_only = options.unjudged == "condensed"
    qids = qrels.frame.get_column("query_id").unique().sort()
    if only_query is not None:
        qids = qids.filter(qids == only_query)
    n = qids.len()
    judged = _with_query_index(qrels.frame, qids)
    if run.qidx is not None and only_query is None:
        qidx, docs = run.qidx, run.frame.get_column("doc_id")
        score = run.frame.get_column("score").to_numpy()
    else:
        rows = _with_query_index(run.frame, qids)
        qidx = rows.get_column("qidx").to_numpy().astype(np.int64, copy=False)
        docs, score = rows.get_column("doc_id"), rows.get_column("score").to_numpy()
        del rows
    present = np.zeros(n, dtype=bool)
    present[qidx] = True
    if complete and not present.all():
        missing = np.flatnonzero(~present)
        qidx = np.concatenate((qidx, missing.astype(np.int64)))
        docs = pl.concat([docs, pl.Series([STAND_IN_DOC] * missing.size, dtype=pl.String)])
        score = np.concatenate((score, np.ones(missing.size)))
    if np.any(score == 0) and np.any(np.signbit(score) & (score == 0)):
        score = score + 0.0  # -0.0 becomes 0.0: C compares them equal, polars sorts them apart
    # Matching documents to judgments does not depend on the ranking: it runs
    # beside it (numpy and polars release the GIL on large arrays).
    most = int(np.bincount(qidx).max(initial=0)) if qidx.size else 0
    truncated = max_ret < most
    with ThreadPoolExecutor(max_workers=3) as pool:
        matching = pool.submit(_match, qidx, docs, judged, n, pool)
        base = base_order(qidx, score, n)
        ties = find_ties(base, qidx, score)
        keys, qrels_dup, values_hit, hit, levels = matching.result()
    level_q, level_rel, level_count, max_rel = levels
    values = np.full(qidx.size, NONPOOL, dtype=np.int64)
    values[hit] = values_hit
    # Ties matter only between rows of different values, unless -M cuts
    # rankings (then which rows survive the cut matters too).
    ranking = fix_ties(base, ties, docs, None if truncated else values)
    del score
    counts = ranking.counts
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    kept: IntArray | None = None  # rank-order positions within -M
    if truncated:
        depth = np.minimum(counts, max(max_ret, 0))
        kept = np.repeat(offsets[:-1], depth) + _ranks(depth)
        offsets = np.concatenate(([0], np.cumsum(depth))).astype(np.int64)
    segments = ranking.queries
    # Duplicates (among the rows within -M) are looked for beside the measures.
    if kept is None:  # each query's set of rows: the order within a query does not matter
        grouped = keys if ranking.order is None else keys[ranking.order]
        group_sizes = counts
    else:
        grouped, group_sizes = ranking.apply(keys)[kept], np.diff(offsets)
    searching = ThreadPoolExecutor(max_workers=1)
    run_dup = searching.submit(
        _run_duplicates, qidx, docs, keys, n, None if kept is None else ranking.rows(kept),
        segments, grouped, group_sizes)
    searching.shutdown(wait=False)
    values = ranking.apply(values, in_place=True)
    if kept is not None:
        values = values[kept]
    if judged_only:
        judged_rows = values >= 0
        segment = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets))[judged_rows]
        values = values[judged_rows]
        offsets = _csr(segment, n)

    # Judgment counts (per query index, from the matching thread) in segment order.
    position = np.empty(n, dtype=np.int64)
    position[segments] = np.arange(n, dtype=np.int64)
    level_seg = position[level_q]
    by_segment = np.lexsort((level_rel, level_seg))
    level_seg, level_rel, level_count = (
        level_seg[by_segment], level_rel[by_segment], level_count[by_segment])
    names = qids.to_list()
    return TrecLists(
        query_ids=[names[q] for q in segments.tolist()],
        offsets=offsets,
        values=values,
        level_offsets=_csr(level_seg, n),
        levels=level_rel,
        level_counts=level_count,
        lvl=lvl,
        in_run=present[segments],
        pending_run_dup=run_dup,
        qrels_dup=[qrels_dup[q] for q in segments.tolist()],
        max_rel=max_rel[segments],
        segment_query=segments,
    )


def _match(
    qidx: IntArray, docs: pl.Series, judged: pl.DataFrame, n: int, pool: ThreadPoolExecutor,
) -> tuple[npt.NDArray[np.uint64], list[str | None], IntArray, IntArray,
           tuple[IntArray, IntArray, IntArray, IntArray]]:
    """Run keys, qrels duplicates, the value of each run row found in the qrels.

    Also the judgment counts: (query, level, count) rows for the levels >= 0,
    and each query's highest value (negative ones too). The run's rows are
    hashed and looked up in halves, on two of ``pool``'s threads (polars'
    lookup uses one core).
    """
    levels = _level_counts(judged, n)
    jq = judged.get_column("qidx").to_numpy().astype(np.int64)
    jdocs = judged.get_column("doc_id")
    jkeys = doc_keys(jq, jdocs)
    qrels_dup = first_duplicates(jq, jdocs, jkeys, n)
    jrel = judged.get_column("rel").to_numpy().astype(np.int64)
    if any(d is not None for d in qrels_dup):
        # the query fails when reached; any one of its duplicates will do meanwhile
        keep_j = np.flatnonzero(pl.DataFrame({"q": jq, "d": jdocs}).select(
            pl.struct("q", "d").is_first_distinct()).to_series().to_numpy())
        jq, jdocs = jq[keep_j], jdocs.gather(pl.Series(keep_j))
        jkeys, jrel = jkeys[keep_j], jrel[keep_j]
    distinct = pl.Series(jkeys).n_unique() == jkeys.size  # else: a collision, match strings
    keys = np.empty(qidx.size, dtype=np.uint64)
    half = qidx.size // 2
    parts = [(0, half), (half, qidx.size)] if half >= 1 << 16 else [(0, qidx.size)]

    def probe(lo: int, hi: int) -> tuple[IntArray, IntArray]:
        part_q, part_docs = qidx[lo:hi], docs.slice(lo, hi - lo)
        part_keys = doc_keys(part_q, part_docs, out=keys[lo:hi])
        hit, line = lookup(part_keys, part_q, part_docs, jkeys, jq, jdocs, distinct)
        return hit + lo, line

    found = [f.result() for f in [pool.submit(probe, lo, hi) for lo, hi in parts]]
    hit = np.concatenate([h for h, _ in found])
    line = np.concatenate([j for _, j in found])
    values = np.where(jrel[line] < 0, UNJUDGED, jrel[line]).astype(np.int64)
    return keys, qrels_dup, values, hit, levels


def _level_counts(judged: pl.DataFrame, n: int) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    all_q = judged.get_column("qidx").to_numpy().astype(np.int64)
    all_rel = judged.get_column("rel").to_numpy().astype(np.int64)
    max_rel = np.full(n, -(2**62), dtype=np.int64)
    np.maximum.at(max_rel, all_q, all_rel)
    table = (
        pl.DataFrame({"q": all_q, "rel": all_rel}).filter(pl.col("rel") >= 0)
        .group_by("q", "rel").agg(pl.len().alias("count"))
    )
    return (table.get_column("q").to_numpy().astype(np.int64),
            table.get_column("rel").to_numpy().astype(np.int64),
            table.get_column("count").to_numpy().astype(np.int64), max_rel)


def _run_duplicates(qidx: IntArray, docs: pl.Series, keys: npt.NDArray[np.uint64], n: int,
                    rows: IntArray | None, segments: IntArray,
                    grouped: npt.NDArray[np.uint64], group_sizes: IntArray) -> list[str | None]:
    """Per segment, the run's first duplicate document (among ``rows``, default all).

    ``grouped`` holds the same keys segment by segment (``group_sizes`` each):
    when no segment repeats a key there is no duplicate, the common case,
    proved by a cheap sort; otherwise the documents are compared exactly.
    """
    if distinct_within(grouped, group_sizes):
        return [None] * len(segments)
    found = first_duplicates(qidx, docs, keys, n, rows)
    return [found[q] for q in segments.tolist()]


def _ranks(lengths: IntArray) -> IntArray:
    """0, 1, ..., length-1 for each length, concatenated."""
    total = int(lengths.sum())
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.arange(total, dtype=np.int64) - starts


def trec_lists_from_ranked(lists: RankedLists, lvl: int) -> TrecLists:
    """trec_eval's view of the engine's rankings.

    Grades truncated to integer levels, negative grades as "pooled but
    unjudged" (-2), unjudged documents as -1, and a query the run lacks given
    trec_eval ``-c``'s one-document stand-in ranking.
    """
    grades = lists.grades
    with np.errstate(invalid="ignore"):
        values = np.where(np.isnan(grades), -1, np.where(grades < 0, -2, np.trunc(grades)))
    values = values.astype(np.int64)
    lengths = np.diff(lists.offsets)
    missing = np.flatnonzero(~lists.in_run & (lengths == 0))
    if missing.size:
        values = np.insert(values, lists.offsets[missing], -1)
        lengths = lengths.copy()
        lengths[missing] = 1
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    n = lists.n_queries
    jq = np.repeat(np.arange(n, dtype=np.int64), np.diff(lists.judged_offsets))
    levels = np.trunc(lists.judged_grades).astype(np.int64)
    max_rel = np.full(n, -(2**62), dtype=np.int64)
    np.maximum.at(max_rel, jq, levels)
    keep = levels >= 0
    counts = (pl.DataFrame({"q": jq[keep], "l": levels[keep]})
              .group_by("q", "l").agg(pl.len().alias("c")).sort("q", "l"))
    cq = counts.get_column("q").to_numpy()
    level_counts = np.bincount(cq, minlength=n) if cq.size else np.zeros(n, np.int64)
    return TrecLists(
        query_ids=lists.query_ids, offsets=offsets, values=values,
        level_offsets=np.concatenate(([0], np.cumsum(level_counts))).astype(np.int64),
        levels=counts.get_column("l").to_numpy().astype(np.int64),
        level_counts=counts.get_column("c").to_numpy().astype(np.int64),
        lvl=lvl, in_run=lists.in_run, max_rel=max_rel,
    )
