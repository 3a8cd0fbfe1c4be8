"""Rank similarity between two runs, per query and averaged.

Both runs are ranked once (score descending, ties as in evaluation), the
documents they share are found with one join, and every measure is computed
for all queries at once from three arrays: each query's two list lengths and,
for every shared document, its rank in each list. The overlap :math:`X_d` at
every depth of every query is a bincount plus a segmented cumulative sum;
RBO's sums are segmented sums over those arrays (no per-query Python loop,
except Kendall's tau, which scipy computes per query).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import numpy as np
import numpy.typing as npt
import polars as pl

import rankscope.metrics.similarity as _families
from rankscope.compare.rbo_ties import TieList, tie_rbo
from rankscope.data.overlap import check_overlap
from rankscope.data.ranking_order import check_tie_rule, ranked
from rankscope.data.runs import name_candidates, unique_names
from rankscope.data.tables import OnDuplicate, Run, as_run, input_name
from rankscope.engine.evaluate import MetricsArg, aggregate, resolve_metrics
from rankscope.engine.ranking import Ties
from rankscope.errors import MetricError, OptionError
from rankscope.metrics.base import FAMILIES, Metric
from rankscope.result import EvaluationInfo, EvaluationResult

__all__ = [
    "RankPairs",
    "SimilarityInfo",
    "average_overlap",
    "jaccard",
    "jaccard_values",
    "kendall_tau",
    "kendall_values",
    "overlap",
    "overlap_values",
    "pair_rankings",
    "rbo",
    "rbo_values",
    "similarity",
    "similarity_values",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
SimilarityQueries = Literal["union", "intersection"]

_ = _families  # importing it registers the similarity families with the parser


@dataclass(frozen=True)
class SimilarityInfo(EvaluationInfo):
    """Which queries were compared and how many each run had."""

    run_a: str = ""
    run_b: str = ""
    n_a_queries: int = 0
    n_b_queries: int = 0
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """One line for people: the runs, the query policy and the counts."""
        text = (
            f"{self.run_a!r} vs {self.run_b!r}: {self.n_evaluated} queries compared "
            f"(policy {self.queries!r}; {self.n_a_queries} in the first, "
            f"{self.n_b_queries} in the second"
        )
        if self.queries == "union" and (self.only_a or self.only_b):
            text += (
                f"; {len(self.only_a)} only in the first and {len(self.only_b)} only in "
                "the second, compared with an empty ranking"
            )
        elif self.only_a or self.only_b:
            text += f"; {len(self.only_a) + len(self.only_b)} in one run only, ignored"
        return text + f"; ties {self.ties!r})"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "run_a": self.run_a,
            "run_b": self.run_b,
            "queries": self.queries,
            "ties": self.ties,
            "n_a_queries": self.n_a_queries,
            "n_b_queries": self.n_b_queries,
            "n_evaluated": self.n_evaluated,
            "only_a": list(self.only_a),
            "only_b": list(self.only_b),
        }


@dataclass(frozen=True)
class RankPairs:
    """Two runs' rankings of the same queries, reduced to what similarity needs.

    Attributes
    ----------
    query_ids : list of str
        The compared queries, in byte order.
    len_a, len_b : ndarray of int64, shape (n_queries,)
        How many documents each run ranks for each query (0 if it lacks it).
    shared_query : ndarray of int64
        For every document both runs rank for a query: the query's index.
    rank_a, rank_b : ndarray of int64
        That document's 1-based rank in each run.
    ranked_a, ranked_b : polars.DataFrame, optional
        Both rankings in full (query_id, doc_id, score, rank): the tie-aware
        RBO reads the tie groups of equal scores from them.
    """

    query_ids: list[str]
    len_a: IntArray
    len_b: IntArray
    shared_query: IntArray
    rank_a: IntArray
    rank_b: IntArray
    ranked_a: pl.DataFrame | None = field(default=None, repr=False)
    ranked_b: pl.DataFrame | None = field(default=None, repr=False)

    def cut(self, k: int | None) -> RankPairs:
        """The same rankings cut at depth k (unchanged for None)."""
        if k is None:
            return self
        keep = (self.rank_a <= k) & (self.rank_b <= k)
        return RankPairs(
            self.query_ids,
            np.minimum(self.len_a, k),
            np.minimum(self.len_b, k),
            self.shared_query[keep],
            self.rank_a[keep],
            self.rank_b[keep],
            None if self.ranked_a is None else self.ranked_a.filter(pl.col("rank") <= k),
            None if self.ranked_b is None else self.ranked_b.filter(pl.col("rank") <= k),
        )


def pair_rankings(
    run_a: Run, run_b: Run, *, ties: Ties = "trec", queries: SimilarityQueries = "union"
) -> tuple[RankPairs, list[str], list[str]]:
    """Rank both runs and find the documents they share, for every query.

    Returns the pairs and the queries only the first / only the second run has.
    """
    check_tie_rule(ties)
    if queries not in ("union", "intersection"):
        raise OptionError(f"queries must be 'union' or 'intersection', not {queries!r}")
    a = ranked(run_a.frame, ties)
    b = ranked(run_b.frame, ties)
    qa = set(a.get_column("query_id").unique().to_list())
    qb = set(b.get_column("query_id").unique().to_list())
    kept = sorted(qa | qb) if queries == "union" else sorted(qa & qb)
    qmap = pl.DataFrame(
        {"query_id": kept, "qidx": np.arange(len(kept), dtype=np.int64)},
        schema={"query_id": pl.String, "qidx": pl.Int64},
    )

    def lengths(frame: pl.DataFrame) -> IntArray:
        counts = frame.group_by("query_id").len().join(qmap, on="query_id", how="inner")
        out = np.zeros(len(kept), dtype=np.int64)
        out[counts.get_column("qidx").to_numpy()] = counts.get_column("len").to_numpy()
        return out

    # Join on a 64-bit hash of (query, document), then keep only true matches:
    # twice as fast as a join on two string columns, and exact.
    key = pl.struct("query_id", "doc_id").hash()
    shared = (
        a.select(key.alias("_h"), "query_id", "doc_id", pl.col("rank").alias("ra"))
        .join(b.select(key.alias("_h"), pl.col("query_id").alias("_qb"),
                       pl.col("doc_id").alias("_db"), pl.col("rank").alias("rb")),
              on="_h", how="inner")
        .filter((pl.col("query_id") == pl.col("_qb")) & (pl.col("doc_id") == pl.col("_db")))
        .join(qmap, on="query_id", how="inner")
    )
    pairs = RankPairs(
        query_ids=kept,
        len_a=lengths(a),
        len_b=lengths(b),
        shared_query=shared.get_column("qidx").to_numpy().astype(np.int64),
        rank_a=shared.get_column("ra").to_numpy().astype(np.int64),
        rank_b=shared.get_column("rb").to_numpy().astype(np.int64),
        ranked_a=a.select("query_id", "doc_id", "score", "rank"),
        ranked_b=b.select("query_id", "doc_id", "score", "rank"),
    )
    return pairs, sorted(qa - qb), sorted(qb - qa)


@dataclass(frozen=True)
class _Depths:
    """Every depth d = 1..max(len_a, len_b) of every query, flattened (CSR)."""

    query: IntArray  # query index of each position
    depth: FloatArray  # d, as float
    overlap: FloatArray  # X_d
    longer: IntArray  # per query: l = max(len_a, len_b)
    shorter: IntArray  # per query: s = min(len_a, len_b)
    x_long: FloatArray  # per query: X_l
    x_short: FloatArray  # per query: X_s


def _depths(pairs: RankPairs) -> _Depths:
    n_q = len(pairs.query_ids)
    longer = np.maximum(pairs.len_a, pairs.len_b)
    shorter = np.minimum(pairs.len_a, pairs.len_b)
    offsets = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(longer, out=offsets[1:])
    total = int(offsets[-1])
    query = np.repeat(np.arange(n_q, dtype=np.int64), longer)
    depth = (np.arange(total, dtype=np.int64) - offsets[query] + 1).astype(np.float64)
    # A shared document counts in X_d from depth max(rank_a, rank_b) on.
    reached = np.maximum(pairs.rank_a, pairs.rank_b)
    counts = np.bincount(offsets[pairs.shared_query] + reached - 1, minlength=total)
    running = np.cumsum(counts, dtype=np.float64)
    before = np.concatenate(([0.0], running))[offsets[:-1]]
    overlap = running - before[query]
    x_long = np.zeros(n_q)
    has = longer > 0
    x_long[has] = overlap[offsets[1:][has] - 1]
    x_short = np.zeros(n_q)
    has_s = shorter > 0
    x_short[has_s] = overlap[offsets[:-1][has_s] + shorter[has_s] - 1]
    return _Depths(query, depth, overlap, longer, shorter, x_long, x_short)


def _seg_sum(dep: _Depths, values: FloatArray) -> FloatArray:
    return np.bincount(dep.query, weights=values, minlength=dep.longer.size).astype(np.float64)


def rbo_values(pairs: RankPairs, p: float, form: str) -> FloatArray:
    """RBO of every query (see :func:`rankscope.metrics.similarity.rank_biased_overlap`)."""
    dep = _depths(pairs)
    l_len = dep.longer.astype(np.float64)
    s_len = dep.shorter.astype(np.float64)
    weight = p**dep.depth / dep.depth  # p^d / d
    scale = (1.0 - p) / p
    tail = -np.log1p(-p)  # sum over all d >= 1 of p^d / d
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if form == "min":
            out = scale * (_seg_sum(dep, (dep.overlap - dep.x_long[dep.query]) * weight)
                           + dep.x_long * tail)
        elif form == "ext":
            s_safe = np.maximum(s_len, 1.0)
            beyond = dep.depth > s_len[dep.query]
            extra = np.where(beyond, (1.0 / s_safe[dep.query] - 1.0 / dep.depth) * p**dep.depth,
                             0.0)
            out = scale * (_seg_sum(dep, dep.overlap * weight)
                           + dep.x_short * _seg_sum(dep, extra))
            out += ((dep.x_long - dep.x_short) / np.maximum(l_len, 1.0)
                    + dep.x_short / s_safe) * p**l_len
        elif form in ("res", "max"):
            f = (dep.longer + dep.shorter - dep.x_long.astype(np.int64))
            steps = np.arange(1, int(f.max(initial=0)) + 1, dtype=np.float64)
            cum = np.concatenate(([0.0], np.cumsum(p**steps / steps)))  # cum[n] = sum_{d<=n}
            out = (p**s_len + p**l_len - p ** f.astype(np.float64)
                   - scale * (s_len * (cum[f] - cum[dep.shorter])
                              + l_len * (cum[f] - cum[dep.longer])
                              + dep.x_long * (tail - cum[f])))
            if form == "max":  # the upper bound: the lower bound plus the residual
                out += rbo_values(pairs, p, "min")
        else:
            raise MetricError(f"RBO form must be ext, min, max or res, not {form!r}")
    out[dep.longer == 0] = np.nan
    return np.asarray(out, dtype=np.float64)


def tie_rbo_values(pairs: RankPairs, p: float, form: str, ties: str) -> FloatArray:
    """Tie-aware RBO of every query (:mod:`rankscope.compare.rbo_ties`), one query at a time."""
    if pairs.ranked_a is None or pairs.ranked_b is None:
        raise MetricError("tie-aware RBO needs the rankings' scores (pair_rankings keeps them)")
    docs = pl.concat([pairs.ranked_a.select("doc_id"), pairs.ranked_b.select("doc_id")]).unique()
    codes = docs.with_row_index("_code").with_columns(pl.col("_code").cast(pl.Int64))

    def lists(frame: pl.DataFrame) -> dict[Any, TieList]:
        coded = frame.join(codes, on="doc_id").sort(["query_id", "rank"])
        out: dict[Any, TieList] = {}
        for (qid,), part in coded.group_by(["query_id"], maintain_order=True):
            out[qid] = TieList(part.get_column("_code").to_numpy(),
                               part.get_column("score").to_numpy().astype(np.float64))
        return out

    la, lb = lists(pairs.ranked_a), lists(pairs.ranked_b)
    empty = TieList(np.zeros(0, dtype=np.int64), np.zeros(0))
    return np.array([tie_rbo(la.get(q, empty), lb.get(q, empty), p, ties)[form]
                     for q in pairs.query_ids], dtype=np.float64)


def average_overlap_values(pairs: RankPairs, k: int) -> FloatArray:
    """AO@k per query (``pairs`` already cut at k); NaN when both lists are empty.

    A shared document reached at depth m (its lower rank) adds 1/d at every
    depth d = m..k: :math:`\frac{1}{k}(H_k - H_{m-1})` with the harmonic numbers H.
    """
    harmonic = np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, k + 1))))
    reached = np.maximum(pairs.rank_a, pairs.rank_b)
    total = np.bincount(pairs.shared_query, weights=harmonic[k] - harmonic[reached - 1],
                        minlength=len(pairs.query_ids))
    out = total / float(k)
    out[(pairs.len_a == 0) & (pairs.len_b == 0)] = np.nan
    return np.asarray(out, dtype=np.float64)


def _shared_counts(pairs: RankPairs) -> FloatArray:
    return np.bincount(pairs.shared_query, minlength=len(pairs.query_ids)).astype(np.float64)


def jaccard_values(pairs: RankPairs) -> FloatArray:
    """|A ∩ B| / |A ∪ B| per query (NaN when both lists are empty)."""
    both = _shared_counts(pairs)
    union = pairs.len_a + pairs.len_b - both
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, both / np.maximum(union, 1), np.nan)


def overlap_values(pairs: RankPairs, k: int) -> FloatArray:
    """|A_k ∩ B_k| / k per query (``pairs`` already cut at k)."""
    return _shared_counts(pairs) / float(k)


def kendall_values(pairs: RankPairs) -> FloatArray:
    """Kendall's tau over shared documents per query (scipy; NaN below 2 shared)."""
    from rankscope.compare.significance import require_scipy

    stats = require_scipy("Kendall's tau")
    n_q = len(pairs.query_ids)
    out = np.full(n_q, np.nan)
    order = np.argsort(pairs.shared_query, kind="stable")
    q = pairs.shared_query[order]
    ra = pairs.rank_a[order]
    rb = pairs.rank_b[order]
    bounds = np.searchsorted(q, np.arange(n_q + 1))
    for i in np.flatnonzero(np.diff(bounds) >= 2):
        lo, hi = bounds[i], bounds[i + 1]
        out[i] = float(stats.kendalltau(ra[lo:hi], rb[lo:hi]).statistic)
    return out


def rbo(pairs: RankPairs, m: Metric) -> FloatArray:
    """The RBO family's kernel: tie-aware unless ``ties="break"``."""
    ties = str(m.get("ties"))
    if ties != "break":
        return tie_rbo_values(pairs, float(m.get("p")), str(m.get("form")), ties)
    return rbo_values(pairs, float(m.get("p")), str(m.get("form")))


def average_overlap(pairs: RankPairs, m: Metric) -> FloatArray:
    """The AO family's kernel."""
    return average_overlap_values(pairs, int(cast(int, m.k)))


def jaccard(pairs: RankPairs, m: Metric) -> FloatArray:
    """The Jaccard family's kernel."""
    return jaccard_values(pairs)


def overlap(pairs: RankPairs, m: Metric) -> FloatArray:
    """The Overlap family's kernel."""
    return overlap_values(pairs, int(m.k or 0))


def kendall_tau(pairs: RankPairs, m: Metric) -> FloatArray:
    """The KendallTau family's kernel."""
    return kendall_values(pairs)


_HERE = "rankscope.compare.rank_similarity:"


def similarity_values(pairs: RankPairs, metric: Metric) -> FloatArray:
    """Per-query values of one similarity metric: the kernel its definition names, on both
    rankings cut at the metric's ``k``."""
    kernel = FAMILIES[metric.family].kernel
    if not kernel.startswith(_HERE):
        raise MetricError(
            f"{metric.name} is not a rank-similarity measure (use RBO, AO, Jaccard, Overlap, "
            "KendallTau); compare runs' effectiveness with rankscope.compare"
        )
    compute: Callable[[RankPairs, Metric], FloatArray] = globals()[kernel[len(_HERE):]]
    return compute(pairs.cut(metric.k), metric)


def similarity(
    run_a: Any,
    run_b: Any,
    metrics: MetricsArg = "RBO(p=0.9)",
    *,
    per_query: bool = False,
    queries: SimilarityQueries = "union",
    ties: Ties = "trec",
    on_duplicate: OnDuplicate = "error",
    names: tuple[str, str] | None = None,
    allow_no_overlap: bool = False,
) -> EvaluationResult:
    """How alike two runs' rankings are, per query and averaged.

    Parameters
    ----------
    run_a, run_b : Run, path, DataFrame or dict
        The two runs (``{query: {doc: score}}`` for a dict).
    metrics : str, Metric or a sequence of them, default "RBO(p=0.9)"
        ``RBO(p=0.9)`` (extrapolated), ``RBO(p=0.9,form=min)``,
        ``rbo_res(p=0.9)``, ``jaccard@10``, ``overlap@10``, ``kendall_tau``...
    per_query : bool, default False
        Show per-query values in the printed form.
    queries : {"union", "intersection"}, default "union"
        Compare every query either run has (a query one run lacks is an empty
        ranking there: RBO and overlap 0, Kendall's tau null), or only
        queries both have.
    ties : {"trec", "input", "docid_asc"}, default "trec"
        Score ties broken by document id descending, kept in input order, or
        broken by document id ascending (as in evaluation).
    on_duplicate : {"error", "first", "max"}, default "error"
        A document twice in one ranking (for runs read here).
    names : (str, str), optional
        Names of the runs (default: their run tags or file names).
    allow_no_overlap : bool, default False
        Go on when the runs share no query (by default
        :class:`~rankscope.errors.NoOverlapError`); some queries in one run
        only give a :class:`~rankscope.errors.RankscopeWarning`.

    Returns
    -------
    EvaluationResult
        ``mean`` (over queries with a value), ``per_query``, and an ``info``
        describing the query policy; the same JSON shape as ``evaluate``.

    Examples
    --------
    >>> import rankscope
    >>> a = {"q1": {"d1": 3, "d2": 2, "d3": 1}}
    >>> b = {"q1": {"d1": 3, "d3": 2, "d2": 1}}
    >>> round(rankscope.similarity(a, b, "jaccard@2")["jaccard@2"], 4)
    0.3333
    """
    pairs_m = resolve_metrics(metrics)
    a = as_run(run_a, name=names[0] if names else None, on_duplicate=on_duplicate)
    b = as_run(run_b, name=names[1] if names else None, on_duplicate=on_duplicate)
    if names:
        name_a, name_b = names
    else:
        name_a, name_b = unique_names([name_candidates(a), name_candidates(b)])
    ranked, only_a, only_b = pair_rankings(a, b, ties=ties, queries=queries)
    check_overlap(input_name(a), a.n_queries, only_a, input_name(b), b.n_queries, only_b,
                  allow=allow_no_overlap)
    values = np.empty((len(ranked.query_ids), len(pairs_m)), dtype=np.float64)
    for j, (_, metric) in enumerate(pairs_m):
        values[:, j] = similarity_values(ranked, metric)
    means = {label: aggregate(values[:, j], "mean") for j, (label, _) in enumerate(pairs_m)}
    info = SimilarityInfo(
        run_name=f"{name_a} vs {name_b}",
        queries=queries,
        ties=ties,
        unjudged="-",
        n_qrels_queries=a.n_queries,
        n_run_queries=b.n_queries,
        n_evaluated=len(ranked.query_ids),
        run_a=name_a,
        run_b=name_b,
        n_a_queries=a.n_queries,
        n_b_queries=b.n_queries,
        only_a=only_a,
        only_b=only_b,
    )
    return EvaluationResult(
        labels=[label for label, _ in pairs_m],
        metrics=[m for _, m in pairs_m],
        query_ids=ranked.query_ids,
        values=values,
        means=means,
        info=info,
        show_per_query=per_query,
    )
