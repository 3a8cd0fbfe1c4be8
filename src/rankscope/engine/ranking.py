"""Rank every query once: join judgments, sort, break ties, lay out in CSR form.

The result, :class:`RankedLists`, is what every metric kernel reads: for the
evaluated queries (sorted in byte order), the grades of the ranked documents
in rank order, flattened, with ``offsets`` marking where each query starts
(compressed sparse rows); and, in the same layout, the grades of each query's
judged documents sorted from best to worst (for ideal rankings and R).

Ties in score are broken by document id descending in byte order (trec_eval),
by input order (``ties="input"``) or by document id ascending
(``ties="docid_asc"``).

How it stays fast on tens of millions of rows: query ids are turned into
integer indices once (per run of equal ids, not per row); runs are nearly
always written grouped by query and sorted by score, which is checked in one
pass and then costs no sort at all (otherwise one numeric sort on
``(query index, score)``); document ids are compared only inside groups of
tied scores, and only where the file's order is not already the trec_eval
order; judgments are joined exactly, but only onto rows whose 64-bit hash of
``(query, document)`` matches a judged pair. With ``depth`` (the deepest
cut-off any asked-for metric reads, see :func:`required_depth`) everything
after the ordering touches only the top of each ranking.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope.data.tables import Qrels, Run, pair_hashes
from rankscope.engine.options import QueryPolicy, Ties, Unjudged
from rankscope.errors import OptionError
from rankscope.metrics.base import Metric

__all__ = ["CUTOFF_FAMILIES", "QueryPolicy", "RankedLists", "Ties", "Unjudged", "rank",
           "required_depth"]

_SLICE = 1 << 20  # rows per slice when scanning whole runs: bounded temporaries

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

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
    run_rows : ndarray of int64
        The row of the run's frame each ranked row came from (same layout).
    depth : int or None
        Rankings were cut after this many rows (None: complete).
    run_only_queries : list of str
        Queries the run has but the qrels do not (reported, not evaluated).
    missing_queries : list of str
        Queries of the qrels the run lacks: scored as empty rankings with the
        "qrels" policy, left out with "intersection", null with "nonnull".
    """

    query_ids: list[str]
    offsets: IntArray
    grades: FloatArray
    scores: FloatArray
    in_run: BoolArray
    judged_offsets: IntArray
    judged_grades: FloatArray
    max_grade: float
    n_qrels_queries: int
    n_run_queries: int
    run_rows: IntArray
    run_docs: pl.Series = field(repr=False)
    depth: int | None = None
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

    @property
    def doc_ids(self) -> pl.Series:
        """The document id of each ranked row (same layout; gathered on demand)."""
        return self.run_docs.gather(self.run_rows)


def _check(value: str, allowed: tuple[str, ...], what: str) -> None:
    if value not in allowed:
        raise OptionError(f"{what} must be one of {', '.join(allowed)}, not {value!r}")


def _csr(index: npt.NDArray[np.integer], n: int) -> IntArray:
    counts = np.bincount(index, minlength=n) if index.size else np.zeros(n, np.int64)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def _index_of(ids: pl.Series, evaluated: list[str]) -> IntArray:
    """Position of each id in ``evaluated`` (-1 when absent), vectorized."""
    if not evaluated:
        return np.full(ids.len(), -1, dtype=np.int64)
    found = ids.replace_strict(
        evaluated, np.arange(len(evaluated), dtype=np.int64), default=-1, return_dtype=pl.Int64
    )
    return found.to_numpy()


def _segments(query_ids: pl.Series) -> tuple[IntArray, pl.Series]:
    """Runs of equal query ids: their start rows and ids (scanned slice by slice)."""
    n_rows = query_ids.len()
    parts: list[IntArray] = []
    previous: str | None = None
    for start in range(0, n_rows, _SLICE):
        part = query_ids.slice(start, _SLICE)
        seg = part.rle_id().to_numpy()
        local = np.flatnonzero(seg[1:] != seg[:-1]) + 1
        if previous is None or part[0] != previous:
            local = np.concatenate(([0], local))
        parts.append(local.astype(np.int64) + start)
        previous = part[-1]
    starts = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    return starts, query_ids.gather(starts)


def _sorted_within_segments(starts: IntArray, score: pl.Series) -> bool:
    """Whether scores never increase inside a run of equal query ids, slice by slice."""
    n_rows = score.len()
    for start in range(0, max(n_rows - 1, 0), _SLICE):
        stop = min(start + _SLICE + 1, n_rows)
        s = score.slice(start, stop - start).to_numpy()
        rising = s[1:] > s[:-1]  # rising[i]: row start+i+1 above row start+i
        if not rising.any():
            continue
        # a rise is fine only where a new segment starts
        new = starts[(starts > start) & (starts < stop)] - start - 1
        rising[new] = False
        if rising.any():
            return False
    return True


def _tie_run_ends(score: pl.Series, last: IntArray, ends: IntArray) -> IntArray:
    """For each ``last`` row, the row after the run of equal scores it starts."""
    out = last + 1
    todo = np.arange(last.size)
    width = 16
    top = score.len() - 1
    while todo.size:
        probe = out[todo, None] + np.arange(width)
        inside = probe < ends[todo, None]
        values = score.gather(np.minimum(probe, top).ravel()).to_numpy().reshape(probe.shape)
        anchor = score.gather(last[todo]).to_numpy()
        same = inside & (values == anchor[:, None])
        run = np.where(same.all(axis=1), width, np.argmin(same, axis=1))
        out[todo] += run
        todo = todo[run == width]
        width *= 4
    return out


def _order_rows(
    run: Run, seg_q: IntArray, starts: IntArray, depth: int | None, whole_ties: bool,
) -> tuple[IntArray, IntArray, FloatArray]:
    """Rows of evaluated queries ordered by (query index, score desc, file order).

    With ``depth``, only each query's first ``depth`` rows are returned (plus
    the rest of a tie group straddling the cut when ``whole_ties``). Returns
    the run rows, their query indices and their scores.
    """
    score = run.frame.get_column("score")
    n_rows = score.len()
    kept_segments = seg_q >= 0
    grouped = np.unique(seg_q[kept_segments]).size == int(kept_segments.sum())
    if grouped:
        grouped = _sorted_within_segments(starts, score)
    if not grouped:
        row_q = np.repeat(seg_q, np.diff(np.append(starts, n_rows)))
        keep = np.flatnonzero(row_q >= 0)
        table = pl.DataFrame({"q": row_q[keep], "s": score.gather(keep), "r": keep})
        table = table.sort(["q", "s"], descending=[False, True], maintain_order=True)
        rows = table.get_column("r").to_numpy().astype(np.int64, copy=False)
        qidx = table.get_column("q").to_numpy().astype(np.int64, copy=False)
        scores = table.get_column("s").to_numpy()
        if depth is None:
            return rows, qidx, scores
        return _cut_to_depth(rows, qidx, scores, depth, whole_ties)
    # Already grouped and sorted: whole segments in query order, each cut at once.
    seg_ids = np.flatnonzero(kept_segments)
    seg_ids = seg_ids[np.argsort(seg_q[seg_ids], kind="stable")]
    first = starts[seg_ids]
    ends = np.append(starts[1:], n_rows)[seg_ids]
    take = ends - first
    if depth is not None:
        take = np.minimum(take, depth)
        if whole_ties:
            cut = np.flatnonzero((take > 0) & (first + take < ends))
            if cut.size:
                stop = _tie_run_ends(score, first[cut] + take[cut] - 1, ends[cut])
                take[cut] = stop - first[cut]
    total = int(take.sum())
    shift = np.repeat(first - np.cumsum(take) + take, take)
    rows = np.arange(total, dtype=np.int64) + shift
    qidx = np.repeat(seg_q[seg_ids], take)
    return rows, qidx, score.gather(rows).to_numpy()


def _positions(qidx: IntArray) -> IntArray:
    """0-based position of each row within its query (rows grouped by query)."""
    if qidx.size == 0:
        return np.zeros(0, np.int64)
    new = np.empty(qidx.size, dtype=bool)
    new[0] = True
    np.not_equal(qidx[1:], qidx[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    lengths = np.diff(np.append(starts, qidx.size))
    return np.arange(qidx.size, dtype=np.int64) - np.repeat(starts, lengths)


def _tie_groups(qidx: IntArray, scores: FloatArray) -> IntArray:
    """Group number of each row: consecutive rows of one query with equal scores."""
    if qidx.size == 0:
        return np.zeros(0, np.int64)
    new = np.empty(qidx.size, dtype=bool)
    new[0] = True
    np.not_equal(qidx[1:], qidx[:-1], out=new[1:])
    new[1:] |= scores[1:] != scores[:-1]
    return np.cumsum(new, dtype=np.int64) - 1


def _cut_to_depth(
    rows: IntArray, qidx: IntArray, scores: FloatArray, depth: int, whole_ties: bool
) -> tuple[IntArray, IntArray, FloatArray]:
    """Keep each query's first ``depth`` rows (plus the rest of a tie group that
    straddles the cut when ties are still to be broken)."""
    pos = _positions(qidx)
    if whole_ties:
        group = _tie_groups(qidx, scores)
        first = np.flatnonzero(np.diff(group, prepend=-1))
        group_start = pos[first][group]
        keep = group_start < depth
    else:
        keep = pos < depth
    if bool(keep.all()):
        return rows, qidx, scores
    return rows[keep], qidx[keep], scores[keep]


def _break_ties_by_doc(
    rows: IntArray, qidx: IntArray, scores: FloatArray, docs: pl.Series,
    descending: bool = True,
) -> IntArray:
    """Reorder tied rows by document id (byte order, descending unless
    ``descending`` is False); returns new rows."""
    group = _tie_groups(qidx, scores)
    tied = group[1:] == group[:-1]  # row i and i + 1 tie
    if not tied.any():
        return rows
    in_group = np.zeros(rows.size, dtype=bool)
    in_group[1:] |= tied
    in_group[:-1] |= tied
    members = np.flatnonzero(in_group)
    member_docs = docs.gather(rows[members])  # the only string gather
    member_groups = group[members]
    same = member_groups[1:] == member_groups[:-1]
    before, after = member_docs.slice(0, members.size - 1), member_docs.slice(1)
    out_of_order = (before < after) if descending else (before > after)
    wrong = same & out_of_order.to_numpy()
    if not wrong.any():
        return rows  # the file already lists ties in the wanted order
    bad_group = np.zeros(int(group[-1]) + 1, dtype=bool)
    bad_group[member_groups[1:][wrong]] = True
    bad = bad_group[member_groups]
    fix = pl.DataFrame({
        "g": member_groups[bad],
        "d": member_docs.filter(pl.Series(bad)),
        "r": rows[members[bad]],
    }).sort(["g", "d"], descending=[False, descending])
    rows = rows.copy()
    rows[members[bad]] = fix.get_column("r").to_numpy()
    return rows


def _grades_of(run: Run, rows: IntArray, graded: pl.DataFrame, all_rows: bool) -> FloatArray:
    """The non-null grade of each selected run row (NaN when unjudged), exactly."""
    out = np.full(rows.size, np.nan)
    if graded.height == 0 or rows.size == 0:
        return out
    judged_keys = pair_hashes(graded)
    if all_rows:
        # hash every row once, in file order, and look up only candidate rows
        keys = pair_hashes(run.frame)
        candidate_rows = np.flatnonzero(keys.is_in(judged_keys.implode()).to_numpy())
        pos_of_row = np.full(run.frame.height, -1, dtype=np.int64)
        pos_of_row[rows] = np.arange(rows.size)
        slots = pos_of_row[candidate_rows]
        candidate_rows = candidate_rows[slots >= 0]
        slots = slots[slots >= 0]
    else:
        picked = run.frame.select("query_id", "doc_id")[rows]
        slots = np.flatnonzero(pair_hashes(picked).is_in(judged_keys.implode()).to_numpy())
        candidate_rows = rows[slots]
    if slots.size == 0:
        return out
    pairs = run.frame.select("query_id", "doc_id")[candidate_rows].with_columns(
        pl.Series("_slot", slots)
    )
    found = pairs.join(graded, on=["query_id", "doc_id"], how="inner")
    out[found.get_column("_slot").to_numpy()] = found.get_column("grade").to_numpy()
    return out


def rank(
    qrels: Qrels,
    run: Run,
    *,
    ties: Ties = "trec",
    unjudged: Unjudged = "nonrelevant",
    queries: QueryPolicy = "qrels",
    depth: int | None = None,
    max_grade: float | None = None,
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
        are assigned (judged-only lists); the others keep them with a NaN grade.
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
    """
    _check(ties, ("trec", "input", "docid_asc"), "ties")
    _check(unjudged, ("nonrelevant", "condensed", "null"), "unjudged")
    _check(queries, ("qrels", "intersection", "nonnull"), "queries")
    if depth is not None and depth < 0:
        raise OptionError(f"depth must be >= 0, not {depth}")

    graded = qrels.frame.filter(pl.col("grade").is_not_null())
    qrels_queries = set(graded.get_column("query_id").unique().to_list())
    starts, seg_names = _segments(run.frame.get_column("query_id"))
    run_queries = set(seg_names.unique().to_list())
    if queries == "intersection":
        evaluated = sorted(qrels_queries & run_queries)
    else:
        evaluated = sorted(qrels_queries)
    n_q = len(evaluated)

    seg_q = _index_of(seg_names, evaluated)
    condensed = unjudged == "condensed"
    cut = depth is not None and not condensed
    by_doc = ties != "input"
    rows, qidx, scores = _order_rows(run, seg_q, starts, depth if cut else None, by_doc)
    docs = run.frame.get_column("doc_id")
    if by_doc:  # scores unchanged: only tied rows move
        rows = _break_ties_by_doc(rows, qidx, scores, docs, descending=ties == "trec")
    if cut:
        rows, qidx, scores = _cut_to_depth(rows, qidx, scores, int(depth or 0), False)
    # hashing every row beats gathering strings once most rows are kept
    grades = _grades_of(run, rows, graded, all_rows=2 * rows.size > run.frame.height)
    if condensed:
        # trec_eval -J: a negative grade means "seen, not judged": dropped as well
        with np.errstate(invalid="ignore"):
            judged_rows = grades >= 0
        rows, qidx, scores, grades = (
            rows[judged_rows], qidx[judged_rows], scores[judged_rows], grades[judged_rows]
        )
        if depth is not None:
            keep = _positions(qidx) < depth
            rows, qidx, scores, grades = rows[keep], qidx[keep], scores[keep], grades[keep]

    judged_q = _index_of(graded.get_column("query_id"), evaluated)
    judged_g = graded.get_column("grade").to_numpy().astype(np.float64, copy=False)
    inside = judged_q >= 0
    judged_q, judged_g = judged_q[inside], judged_g[inside]
    order = np.lexsort((-judged_g, judged_q))
    if max_grade is None:
        all_grades = graded.get_column("grade")
        max_grade = float(all_grades.max()) if all_grades.len() else 0.0  # type: ignore[arg-type]
    in_run = np.array([q in run_queries for q in evaluated], dtype=bool)

    return RankedLists(
        query_ids=evaluated,
        offsets=_csr(qidx, n_q),
        grades=grades,
        scores=scores,
        in_run=in_run,
        judged_offsets=_csr(judged_q, n_q),
        judged_grades=judged_g[order],
        max_grade=max(max_grade, 0.0),
        n_qrels_queries=len(qrels_queries),
        n_run_queries=len(run_queries),
        run_rows=rows,
        run_docs=docs,
        depth=depth,
        run_only_queries=sorted(run_queries - qrels_queries),
        missing_queries=sorted(qrels_queries - run_queries),  # whatever the policy did with them
    )
