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

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope.trec_eval.readers import QrelsTable, RunTable

__all__ = ["STAND_IN_DOC", "TrecLists", "build_lists", "ranked_frame"]

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
    doc_ids : polars.Series or None
        The ranked document ids (kept for the qrels_jg measures).
    run_dup, qrels_dup : list of (str or None)
        Per query, the duplicate document trec_eval would report, if any.
    """

    query_ids: list[str]
    offsets: IntArray
    values: IntArray
    level_offsets: IntArray
    levels: IntArray
    level_counts: IntArray
    lvl: int
    in_run: npt.NDArray[np.bool_]
    doc_ids: pl.Series | None = None
    run_dup: list[str | None] = field(default_factory=list)
    qrels_dup: list[str | None] = field(default_factory=list)

    @property
    def n(self) -> int:
        """Number of evaluated queries."""
        return len(self.query_ids)


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


def build_lists(
    qrels: QrelsTable, run: RunTable, *, lvl: int, complete: bool, max_ret: int,
    judged_only: bool, only_query: str | None = None, keep_docs: bool = False,
) -> TrecLists:
    """Rank the run against the qrels the way trec_eval 10.0 does (see module doc)."""
    qids = qrels.frame.get_column("query_id").unique().sort()
    if only_query is not None:
        qids = qids.filter(qids == only_query)
    n = qids.len()
    qmap = pl.DataFrame({"query_id": qids, "qidx": np.arange(n, dtype=np.int64)})
    judged = qrels.frame.join(qmap, on="query_id", how="inner").select("qidx", "doc_id", "rel")

    rows, present = ranked_frame(qmap, run, complete=complete, max_ret=max_ret)
    run_dup = _first_dups(rows.select("qidx", "doc_id"), n)
    qrels_dup = _first_dups(judged.select("qidx", "doc_id"), n)
    if any(d is not None for d in qrels_dup):
        judged_unique = judged.unique(["qidx", "doc_id"], keep="first")
    else:
        judged_unique = judged
    rows = rows.join(judged_unique, on=["qidx", "doc_id"], how="left", maintain_order="left")
    rel = rows.get_column("rel")
    values = np.where(rel.is_null().to_numpy(), NONPOOL,
                      np.where(rel.fill_null(0).to_numpy() < 0, UNJUDGED,
                               rel.fill_null(0).to_numpy())).astype(np.int64)
    qidx = rows.get_column("qidx").to_numpy()
    doc_ids = rows.get_column("doc_id") if keep_docs else None
    if judged_only:
        keep = values >= 0
        values, qidx = values[keep], qidx[keep]
        if doc_ids is not None:
            doc_ids = doc_ids.filter(pl.Series(keep))

    counts = (
        judged.filter(pl.col("rel") >= 0)
        .group_by("qidx", "rel").agg(pl.len().alias("count"))
        .sort("qidx", "rel")
    )
    lq = counts.get_column("qidx").to_numpy()
    return TrecLists(
        query_ids=qids.to_list(),
        offsets=_csr(qidx, n),
        values=values,
        level_offsets=_csr(lq, n),
        levels=counts.get_column("rel").to_numpy().astype(np.int64),
        level_counts=counts.get_column("count").to_numpy().astype(np.int64),
        lvl=lvl,
        in_run=present,
        doc_ids=doc_ids,
        run_dup=run_dup,
        qrels_dup=qrels_dup,
    )
