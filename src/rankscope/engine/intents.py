"""Kernels of the intent-aware measures (:mod:`rankscope.metrics.intent_aware`).

:class:`IntentContext` is the shared :class:`~rankscope.engine.context.Context`
of a ranking plus its subtopic qrels. Per relevance level it joins the ranked
rows to their relevant (query, subtopic) pairs once: for every pair, its row,
its subtopic and how many documents relevant to that subtopic the ranking holds
above it, from which each kernel's novelty gains are one power and one
bincount. The greedy ideal rankings (collection-dependent normalization) are
built per query, once per (level, alpha), as ndeval builds them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl

from rankscope.data.subtopics import SubtopicQrels
from rankscope.engine.context import Context
from rankscope.engine.kernel_math import divide_positive
from rankscope.engine.ranking import FloatArray, IntArray, RankedLists
from rankscope.errors import MetricError
from rankscope.metrics.base import Metric

__all__ = ["IntentContext", "alpha_dcg", "alpha_ndcg", "ap_ia", "err_ia", "n_err_ia", "n_nrbp",
           "nrbp", "p_ia", "st_recall"]

_ERR_ALPHA = 0.5  # binary relevance: ERR's stopping chance of a relevant document


@dataclass(frozen=True)
class _Pairs:
    """The relevant (ranked row, subtopic) pairs of one relevance level."""

    row: IntArray  # ranked row of each pair
    code: IntArray  # (query, subtopic) code of each pair
    seen_before: IntArray  # documents relevant to the subtopic ranked above the row
    n_subtopics: FloatArray  # per query: S, the subtopics with a relevant document
    n_relevant: FloatArray  # per code: documents relevant to it in the qrels
    code_query: IntArray  # per code: its query


class IntentContext(Context):
    """A :class:`Context` with the subtopic qrels the intent-aware kernels read."""

    def __init__(self, lists: RankedLists, subtopics: SubtopicQrels) -> None:
        super().__init__(lists)
        self.subtopics = subtopics

    def _relevant(self, rel: float) -> pl.DataFrame:
        """Relevant (query index, doc, code) triples at level ``rel``."""
        qmap = pl.DataFrame({"query_id": self.lists.query_ids,
                             "_q": np.arange(self.n, dtype=np.int64)},
                            schema={"query_id": pl.String, "_q": pl.Int64})
        triples = (self.subtopics.frame.filter(pl.col("grade") >= rel)
                   .join(qmap, on="query_id", how="inner")
                   .select("_q", "subtopic_id", "doc_id"))
        codes = (triples.select("_q", "subtopic_id").unique().sort(["_q", "subtopic_id"])
                 .with_row_index("_code").with_columns(pl.col("_code").cast(pl.Int64)))
        return triples.join(codes, on=["_q", "subtopic_id"])

    def pairs(self, rel: float) -> _Pairs:
        """The relevant (row, subtopic) pairs at level ``rel`` (computed once)."""
        key = ("intent_pairs", rel)
        if key in self._cache:
            return self._cache[key]  # type: ignore[no-any-return]
        triples = self._relevant(rel)
        n_codes = triples.get_column("_code").n_unique() if triples.height else 0
        code_query = np.zeros(n_codes, dtype=np.int64)
        n_relevant = np.zeros(n_codes)
        if triples.height:
            per_code = triples.group_by("_code").agg(pl.col("_q").first(), pl.len())
            idx = per_code.get_column("_code").to_numpy()
            code_query[idx] = per_code.get_column("_q").to_numpy()
            n_relevant[idx] = per_code.get_column("len").to_numpy()
        rows = pl.DataFrame({"_q": self.row_query, "doc_id": self.lists.doc_ids,
                             "_row": np.arange(self.row_query.size, dtype=np.int64)})
        joined = rows.join(triples.select("_q", "doc_id", "_code"), on=["_q", "doc_id"])
        row = joined.get_column("_row").to_numpy().astype(np.int64)
        code = joined.get_column("_code").to_numpy().astype(np.int64)
        order = np.lexsort((self.pos[row], code))
        row, code = row[order], code[order]
        starts = np.flatnonzero(np.concatenate(([True], code[1:] != code[:-1]))) if code.size \
            else np.zeros(0, dtype=np.int64)
        sizes = np.diff(np.append(starts, code.size))
        seen = np.arange(code.size) - np.repeat(starts, sizes)
        s_count = np.bincount(code_query, minlength=self.n).astype(np.float64)
        out = _Pairs(row, code, seen.astype(np.int64), s_count, n_relevant, code_query)
        self._cache[key] = out
        return out

    def ideal_gains(self, rel: float, alpha: float) -> tuple[IntArray, FloatArray]:
        """CSR (offsets, gains) of each query's greedy ideal ranking (ndeval's idealResult).

        At each rank the judged document with the highest novelty gain is taken,
        ties to the greatest document id; documents that would gain nothing end
        the list (their order changes no number).
        """
        key = ("intent_ideal", rel, alpha)
        if key in self._cache:
            return self._cache[key]  # type: ignore[no-any-return]
        triples = self._relevant(rel).sort(["_q", "doc_id"], descending=[False, True])
        gains_by_query: list[list[float]] = [[] for _ in range(self.n)]
        for (qidx,), part in triples.group_by(["_q"], maintain_order=True):
            docs = part.get_column("doc_id").to_list()
            codes = part.get_column("_code").to_numpy()
            uniq_docs, doc_idx = np.unique(np.array(docs, dtype=object), return_inverse=True)
            # Greatest document id first, so argmax's first maximum is ndeval's choice.
            order = np.argsort(uniq_docs)[::-1]
            rank_of = np.empty(order.size, dtype=np.int64)
            rank_of[order] = np.arange(order.size)
            uniq_codes, code_idx = np.unique(codes, return_inverse=True)
            matrix = np.zeros((order.size, uniq_codes.size))
            matrix[rank_of[doc_idx], code_idx] = 1.0
            weight = np.ones(uniq_codes.size)
            used = np.zeros(order.size, dtype=bool)
            out = gains_by_query[int(qidx)]
            for _ in range(order.size):
                scores = np.where(used, -1.0, matrix @ weight)
                pick = int(np.argmax(scores))
                if scores[pick] <= 0:
                    break
                out.append(float(scores[pick]))
                used[pick] = True
                weight[matrix[pick] > 0] *= 1.0 - alpha
        offsets = np.concatenate(([0], np.cumsum([len(g) for g in gains_by_query])))
        flat = np.array([g for gains in gains_by_query for g in gains], dtype=np.float64)
        result = (offsets.astype(np.int64), flat)
        self._cache[key] = result
        return result


def _intent(ctx: Context) -> IntentContext:
    if not isinstance(ctx, IntentContext):
        raise MetricError("intent-aware measures need subtopic qrels: "
                          "rankscope.evaluate(rankscope.SubtopicQrels.read(PATH), run, ...) or "
                          "the path of a file in ndeval's format (topic subtopic document grade)")
    return ctx


def _gains(ctx: IntentContext, m: Metric, alpha: float) -> FloatArray:
    """Novelty gain of every ranked row."""
    pairs = ctx.pairs(float(m.get("rel")))
    weights = np.power(1.0 - alpha, pairs.seen_before.astype(np.float64))
    return np.bincount(pairs.row, weights=weights, minlength=ctx.pos.size).astype(np.float64)


def _depth(ctx: Context, m: Metric) -> IntArray:
    """The depth each query is normalized at: k, or the ranking's length."""
    return np.full(ctx.n, int(m.k), dtype=np.int64) if m.k is not None else ctx.lengths


def _ideal_ideal(depth: IntArray, alpha: float, discount: Callable[[FloatArray], FloatArray]
                 ) -> FloatArray:
    """sum_{i<=depth} (1 - alpha)^(i-1) * discount(i): one subtopic's best, per query."""
    top = int(depth.max(initial=0))
    ranks = np.arange(1, top + 1, dtype=np.float64)
    cum = np.concatenate(([0.0], np.cumsum((1.0 - alpha) ** (ranks - 1) * discount(ranks))))
    return np.asarray(cum[depth], dtype=np.float64)


def _ideal_sum(ctx: IntentContext, m: Metric, alpha: float,
               discount: Callable[[FloatArray], FloatArray]) -> FloatArray:
    offsets, gains = ctx.ideal_gains(float(m.get("rel")), alpha)
    lengths = np.diff(offsets)
    pos = np.arange(gains.size) - np.repeat(offsets[:-1], lengths)
    query = np.repeat(np.arange(ctx.n), lengths)
    keep = pos < m.k if m.k is not None else np.ones(gains.size, dtype=bool)
    ranks = np.asarray(pos + 1.0, dtype=np.float64)
    return np.bincount(query[keep], weights=(gains * discount(ranks))[keep],
                       minlength=ctx.n).astype(np.float64)


def _ranks(ctx: Context) -> FloatArray:
    """The 1-based rank of every ranked row, as floats."""
    return np.asarray(ctx.pos + 1.0, dtype=np.float64)


def _reciprocal(ranks: FloatArray) -> FloatArray:
    return 1.0 / ranks


def _log_discount(ranks: FloatArray) -> FloatArray:
    return np.asarray(np.log(2.0) / np.log(ranks + 1.0), dtype=np.float64)  # ndeval's discount


def _graded_sum(family: str) -> Callable[[Context, Metric], FloatArray]:
    """ERR-IA, nERR-IA, alpha-DCG and alpha-nDCG: discounted novelty gains over k."""
    discount = _reciprocal if "ERR" in family else _log_discount

    def kernel(ctx: Context, m: Metric) -> FloatArray:
        ictx = _intent(ctx)
        alpha = _ERR_ALPHA if "ERR" in family else float(m.get("alpha"))
        gains = _gains(ictx, m, alpha) * discount(_ranks(ctx))
        num = ctx.seg_sum(gains, ctx.top(m.k))
        if family in ("nERR_IA", "alpha_nDCG"):
            return divide_positive(num, _ideal_sum(ictx, m, alpha, discount))
        subtopics = ictx.pairs(float(m.get("rel"))).n_subtopics
        return divide_positive(num, subtopics * _ideal_ideal(_depth(ctx, m), alpha, discount))

    return kernel


def _nrbp(normalized: bool) -> Callable[[Context, Metric], FloatArray]:
    def kernel(ctx: Context, m: Metric) -> FloatArray:
        ictx = _intent(ctx)
        alpha, beta = float(m.get("alpha")), float(m.get("beta"))

        def decay(ranks: FloatArray) -> FloatArray:
            return np.asarray(np.power(beta, ranks - 1.0), dtype=np.float64)

        num = ctx.seg_sum(_gains(ictx, m, alpha) * decay(_ranks(ctx)))
        if normalized:
            whole = Metric(m.family, m.params, None)
            return divide_positive(num, _ideal_sum(ictx, whole, alpha, decay))
        subtopics = ictx.pairs(float(m.get("rel"))).n_subtopics
        return divide_positive((1.0 - (1.0 - alpha) * beta) * num, subtopics)

    return kernel


def p_ia(ctx: Context, m: Metric) -> FloatArray:
    pairs = _intent(ctx).pairs(float(m.get("rel")))
    covered = np.bincount(pairs.row, minlength=ctx.pos.size).astype(np.float64)
    return divide_positive(ctx.seg_sum(covered, ctx.top(m.k)),
                  _depth(ctx, m).astype(np.float64) * pairs.n_subtopics)


def st_recall(ctx: Context, m: Metric) -> FloatArray:
    pairs = _intent(ctx).pairs(float(m.get("rel")))
    inside = ctx.pos[pairs.row] < m.k if m.k is not None else np.ones(pairs.row.size, bool)
    first = inside & (pairs.seen_before == 0)  # a subtopic's first relevant document
    found = np.bincount(ctx.row_query[pairs.row[first]], minlength=ctx.n).astype(np.float64)
    return divide_positive(found, pairs.n_subtopics)


def ap_ia(ctx: Context, m: Metric) -> FloatArray:
    pairs = _intent(ctx).pairs(float(m.get("rel")))
    precision = (pairs.seen_before + 1.0) / (ctx.pos[pairs.row] + 1.0)
    per_code = np.bincount(pairs.code, weights=precision,
                           minlength=pairs.n_relevant.size).astype(np.float64)
    ap = divide_positive(per_code, pairs.n_relevant)
    total = np.bincount(pairs.code_query, weights=ap, minlength=ctx.n).astype(np.float64)
    return divide_positive(total, pairs.n_subtopics)


# One kernel per family (each family's definition names its own).
err_ia = _graded_sum("ERR_IA")
n_err_ia = _graded_sum("nERR_IA")
alpha_dcg = _graded_sum("alpha_DCG")
alpha_ndcg = _graded_sum("alpha_nDCG")
nrbp = _nrbp(False)
n_nrbp = _nrbp(True)
