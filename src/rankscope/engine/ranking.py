"""Rank every query once: join judgments, sort, break ties, lay out in CSR form.

The result, :class:`RankedLists`, is what every metric kernel reads: for the
evaluated queries (sorted in byte order), the grades of the ranked documents
in rank order, flattened, with ``offsets`` marking where each query starts
(compressed sparse rows); and, in the same layout, the grades of each query's
judged documents sorted from best to worst (for ideal rankings and R).

Ties in score are broken by document id descending in byte order (trec_eval)
or by input order (``ties="input"``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope.data.tables import Qrels, Run
from rankscope.errors import OptionError

__all__ = ["QueryPolicy", "RankedLists", "Ties", "Unjudged", "rank"]

Ties = Literal["trec", "input"]
Unjudged = Literal["nonrelevant", "condensed", "null"]
QueryPolicy = Literal["qrels", "intersection", "nonnull"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class RankedLists:
    """All rankings of one run, judged and ordered, ready for the kernels.

    Attributes
    ----------
    query_ids : list of str
        The evaluated queries, in byte order.
    offsets : ndarray of int64, shape (n_queries + 1,)
        Query ``q``'s ranked rows are ``offsets[q]:offsets[q + 1]``.
    grades : ndarray of float64
        The grade of each ranked document; NaN when it has no (non-null) grade.
    doc_ids : polars.Series
        The document id of each ranked row (same layout).
    scores : ndarray of float64
        The run's score of each ranked row.
    in_run : ndarray of bool, shape (n_queries,)
        Whether the run has the query at all.
    judged_offsets : ndarray of int64, shape (n_queries + 1,)
        CSR offsets into ``judged_grades``.
    judged_grades : ndarray of float64
        Each query's non-null qrels grades, sorted descending.
    max_grade : float
        The highest grade anywhere in the qrels (0 if there are none).
    run_only_queries : list of str
        Queries the run has but the qrels do not (reported, not evaluated).
    missing_queries : list of str
        Evaluated queries the run lacks (scored as empty rankings).
    """

    query_ids: list[str]
    offsets: IntArray
    grades: FloatArray
    doc_ids: pl.Series
    scores: FloatArray
    in_run: BoolArray
    judged_offsets: IntArray
    judged_grades: FloatArray
    max_grade: float
    n_qrels_queries: int
    n_run_queries: int
    run_only_queries: list[str] = field(default_factory=list)
    missing_queries: list[str] = field(default_factory=list)

    @property
    def n_queries(self) -> int:
        """The number of evaluated queries."""
        return len(self.query_ids)

    @property
    def lengths(self) -> IntArray:
        """How many documents each query's ranking holds."""
        return np.diff(self.offsets)


def _check(value: str, allowed: tuple[str, ...], what: str) -> None:
    if value not in allowed:
        raise OptionError(f"{what} must be one of {', '.join(allowed)}, not {value!r}")


def rank(
    qrels: Qrels,
    run: Run,
    *,
    ties: Ties = "trec",
    unjudged: Unjudged = "nonrelevant",
    queries: QueryPolicy = "qrels",
) -> RankedLists:
    """Join, sort and lay out a run against qrels (see the module docstring).

    Parameters
    ----------
    qrels, run : Qrels, Run
        The judgments and the ranking.
    ties : {"trec", "input"}
        Score ties broken by document id descending (trec_eval), or kept in
        input order.
    unjudged : {"nonrelevant", "condensed", "null"}
        ``condensed`` drops unjudged documents from the rankings before ranks
        are assigned (judged-only lists); the others keep them with a NaN grade.
    queries : {"qrels", "intersection", "nonnull"}
        ``intersection`` evaluates only queries the run has; the others every
        query with at least one grade.
    """
    _check(ties, ("trec", "input"), "ties")
    _check(unjudged, ("nonrelevant", "condensed", "null"), "unjudged")
    _check(queries, ("qrels", "intersection", "nonnull"), "queries")

    qframe = qrels.frame
    graded = qframe.filter(pl.col("grade").is_not_null())
    qrels_queries = set(graded.get_column("query_id").unique().to_list())
    run_queries_series = run.frame.get_column("query_id").unique()
    run_queries = set(run_queries_series.to_list())
    if queries == "intersection":
        evaluated = sorted(qrels_queries & run_queries)
    else:
        evaluated = sorted(qrels_queries)
    n_q = len(evaluated)
    qmap = pl.DataFrame(
        {"query_id": evaluated, "qidx": np.arange(n_q, dtype=np.int64)},
        schema={"query_id": pl.String, "qidx": pl.Int64},
    )

    # Join judgments (null grades count as unjudged) onto the run, once.
    rows = run.frame.join(qmap, on="query_id", how="inner")
    if ties == "input":
        rows = rows.with_row_index("_order")
    rows = rows.join(
        graded.select("query_id", "doc_id", "grade"), on=["query_id", "doc_id"], how="left"
    )
    if ties == "trec":
        rows = rows.sort(
            ["qidx", "score", "doc_id"], descending=[False, True, True], multithreaded=True
        )
    else:
        rows = rows.sort(["qidx", "score", "_order"], descending=[False, True, False])
    if unjudged == "condensed":
        rows = rows.filter(pl.col("grade").is_not_null())

    qidx = rows.get_column("qidx").to_numpy()
    counts = np.bincount(qidx, minlength=n_q) if qidx.size else np.zeros(n_q, np.int64)
    offsets = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    grades = rows.get_column("grade").fill_null(np.nan).to_numpy().astype(np.float64, copy=False)

    in_run = np.array([q in run_queries for q in evaluated], dtype=bool)

    judged = (
        graded.join(qmap, on="query_id", how="inner")
        .sort(["qidx", "grade"], descending=[False, True])
    )
    jq = judged.get_column("qidx").to_numpy()
    jcounts = np.bincount(jq, minlength=n_q) if jq.size else np.zeros(n_q, np.int64)
    judged_offsets = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(jcounts, out=judged_offsets[1:])
    all_grades = graded.get_column("grade")
    max_grade = float(all_grades.max()) if all_grades.len() else 0.0  # type: ignore[arg-type]

    return RankedLists(
        query_ids=evaluated,
        offsets=offsets,
        grades=grades,
        doc_ids=rows.get_column("doc_id"),
        scores=rows.get_column("score").to_numpy(),
        in_run=in_run,
        judged_offsets=judged_offsets,
        judged_grades=judged.get_column("grade").to_numpy().astype(np.float64, copy=False),
        max_grade=max(max_grade, 0.0),
        n_qrels_queries=len(qrels_queries),
        n_run_queries=len(run_queries),
        run_only_queries=sorted(run_queries - qrels_queries),
        missing_queries=[q for q, present in zip(evaluated, in_run, strict=True) if not present],
    )
