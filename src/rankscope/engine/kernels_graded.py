"""Kernels of the graded-relevance metrics (:mod:`rankscope.metrics.graded`).

DCG and nDCG divide each gain by the C library's ``log2(rank + 1)``, as
trec_eval does (:mod:`rankscope.engine.c_math`), and read trec_eval's gain
parameters (``gain_table``) on its levels, so ``ndcg_cut`` agrees with
trec_eval to the last bit.
"""

from __future__ import annotations

import numpy as np

from rankscope.engine.context import Context
from rankscope.engine.discounts import discounted, log2_ranks
from rankscope.engine.kernel_math import divide_or_zero
from rankscope.engine.ranked_lists import csr
from rankscope.engine.ranking import FloatArray, IntArray
from rankscope.engine.rowsets import CutSums, RowSet
from rankscope.engine.trec_gains import gain_info, parse_gain_pairs
from rankscope.errors import MetricParameterError
from rankscope.metrics.base import Metric

__all__ = ["best", "cumulative_gain", "dcg", "err", "ndcg", "rbp"]


def cumulative_gain(ctx: Context, m: Metric) -> FloatArray:
    return ctx.seg_sum(ctx.gain_of(ctx.lists.grades, m), ctx.top(m.k))


def _gained_rows(ctx: Context, m: Metric) -> tuple[FloatArray, Context, RowSet, tuple[object, ...]]:
    """The ranked rows whose gain is not 0, their discounted gains (cached per gain rule,
    the returned key), and the context caching them.

    Rows of gain 0 add nothing to a sum taken in rank order, so skipping them
    changes no bit.
    """
    table = m.get("gain_table")
    if table is not None:  # trec_eval's reading of its gain parameters, on its levels
        view = ctx.levels_view()
        info = gain_info(view, _table_pairs(str(table)))
        # one division per table, shared by every cut-off (ndcg_cut.5, .10, ...)
        terms = view.cached(("trec_discounted", str(table)),
                            lambda: discounted(info.gain, info.rows.pos))
        return terms, view, info.rows, ("trec_discounted", str(table))
    key = ("gained", m.get("gain"), m.get("gains"), m.get("rel"))

    def make() -> tuple[FloatArray, RowSet]:
        # only judged rows can gain (unjudged and negative grades gain 0): the
        # gains of those rows, not of every ranked row
        judged = ctx.judged_rows
        # the judged rows' grades gathered a block at a time, not as an array of them all
        gains = ctx.gain_of(ctx.lists.grades, m, judged.rows)
        gaining = gains != 0
        rows = judged.sub(gaining)
        gains = gains[gaining]
        return discounted(gains, rows.pos, out=gains), rows

    # kept for the cut-offs of the same gain rule still ahead (ndcg_cut.5, .10, ...)
    if ctx.is_cached(key) or ctx.wanted_later(lambda o: o.family in ("DCG", "nDCG")
                                              and _rule(o) == _rule(m)):
        terms, rows = ctx.cached(key, make)
    else:
        terms, rows = make()
    return terms, ctx, rows, key


def _rule(m: Metric) -> tuple[object, ...]:
    """What the (ideal) discounted gains of a metric depend on."""
    return m.get("gain"), m.get("gains"), m.get("rel"), m.get("gain_table")


def _table_pairs(text: str) -> tuple[tuple[str, float], ...]:
    return parse_gain_pairs("gain_table", text)


def dcg(ctx: Context, m: Metric) -> FloatArray:
    terms, holder, rows, key = _gained_rows(ctx, m)
    if m.k is None:
        return rows.sum(terms)
    sums_key = ("cut_sums", *key)
    if not holder.is_cached(sums_key) and not holder.wanted_later(
            lambda o: o.family in ("DCG", "nDCG") and o.k is not None and _rule(o) == _rule(m)):
        # the one cut-off of its gain rule: the rows above it summed in rank order, the
        # bits CutSums.above reads, without every row's running sum (a small call's
        # padded matrices cost more than the sum)
        return rows.sum(terms, rows.pos < m.k)
    sums = holder.cached(sums_key,
                         lambda: CutSums.of(terms, rows.q, rows.pos, rows.offsets))
    return sums.above(m.k)  # type: ignore[no-any-return]


def _trec_ideal(view: Context, table: str) -> tuple[FloatArray, IntArray, IntArray, IntArray,
                                                    FloatArray]:
    """trec_eval's ideal ranking of a gain table on the levels ``view``: its discounted
    gains, their query and position, the CSR offsets, and each query's ideal DCG."""
    info = gain_info(view, _table_pairs(table))
    pos, q = info.ideal_pos, info.ideal_query
    terms = discounted(info.ideal_gain, pos)
    total = np.asarray(np.bincount(q, weights=terms, minlength=view.n), dtype=np.float64)
    return terms, q, pos, info.ideal_offsets, total


def _ideal_dcg(ctx: Context, m: Metric) -> FloatArray:
    table = m.get("gain_table")
    if table is not None:  # trec_eval's ideal: its table walked from the top gain down
        view = ctx.levels_view()
        # the ideal ranking depends on the judged levels alone: kept for every run
        if m.k is None:
            return view.qrels_cached(  # type: ignore[no-any-return]
                ("trec_ideal_dcg", str(table)), lambda: _trec_ideal(view, str(table))[4])
        sums = view.qrels_cached(("trec_ideal_sums", str(table)),
                                 lambda: CutSums.of(*_trec_ideal(view, str(table))[:4]))
        return sums.above(m.k)  # type: ignore[no-any-return]
    flavor = m.get("ideal")
    if flavor == "global":
        return _global_ideal_dcg(ctx, m)
    if flavor == "max":
        top_gain = float(ctx.gain_of(np.array([ctx.metric_max_grade(m)]), m)[0])
        depth = ctx.depth(None) if m.k is None else np.full(ctx.n, m.k, dtype=np.int64)
        longest = int(depth.max()) if depth.size else 0
        steps = top_gain / log2_ranks(np.arange(longest, dtype=np.int64))
        return np.concatenate(([0.0], np.cumsum(steps)))[depth]
    # local: the best order of the retrieved top k
    mask = ctx.top(m.k)
    gains = ctx.gain_of(ctx.lists.grades, m)
    if mask is not None:
        gains = np.where(mask, gains, -np.inf)
    order = np.lexsort((-gains, ctx.row_query))
    best = gains[order]
    contrib = np.where(np.isfinite(best), best / ctx.log2_rank, 0.0)
    return ctx.seg_sum(contrib)


def _global_ideal_dcg(ctx: Context, m: Metric) -> FloatArray:
    """The DCG of each query's judged documents in their best order (``ideal="global"``).

    It depends on the judged lists alone, so its per-query sums (no cut-off)
    and its cut-offs' running sums are kept with the qrels for every run
    ranked against them. The per-judgment terms both are made of (8 bytes a
    judgment: 80 MB at 10^7) are kept too only while a metric still ahead of
    the plan needs them for a sum not kept yet (ndcg, then ndcg_cut.10 of the
    same gain rule: one sort for both).
    """
    key = ("ideal", m.get("gain"), m.get("gains"), m.get("rel"))
    total_key, sums_key = ("ideal_dcg", *key[1:]), ("cut_sums", *key)

    def make() -> FloatArray:
        gains = ctx.gain_of(ctx.lists.judged_grades, m)
        # Gains may be non-monotone in grade (custom maps): sort gains, not grades;
        # unless they already are best first, as the grades are (a stable sort
        # would then keep every row in place)
        same_query = ctx.judged_query[1:] == ctx.judged_query[:-1]
        if np.any(same_query & (gains[1:] > gains[:-1])):
            gains = gains[np.lexsort((-gains, ctx.judged_query))]
        # gains are this call's own; each block's positions from the offsets, no
        # array of every judgment's position (Context.judged_pos)
        return ctx.judged_discounted(gains, out=gains)

    def terms(making: tuple[object, ...]) -> FloatArray:
        """The terms, kept if a metric ahead reads them for a sum other than ``making``
        that is not kept yet."""
        def needs(other: Metric) -> bool:
            wants = total_key if other.k is None else sums_key
            return (other.family == m.family and other.get("ideal") == "global"
                    and _rule(other) == _rule(m) and wants != making
                    and not ctx.is_qrels_cached(wants))

        if ctx.is_qrels_cached(key) or ctx.wanted_later(needs):
            return ctx.qrels_cached(key, make)  # type: ignore[no-any-return]
        return make()

    if m.k is None:
        return ctx.qrels_cached(total_key,  # type: ignore[no-any-return]
                                lambda: ctx.judged_sum(terms(total_key)))
    depth = None if ctx.is_qrels_cached(sums_key) else _top_depth(ctx, m, total_key)
    if depth is not None:
        top = ctx.qrels_cached((*sums_key, "top", depth), lambda: _top_sums(ctx, m, depth))
        return top.above(m.k)  # type: ignore[no-any-return]
    # the ideal ranking's positions are 0, 1, 2, ... in each query: read from the offsets
    sums = ctx.qrels_cached(sums_key, lambda: CutSums.of_dense(
        terms(sums_key), ctx.lists.judged_offsets))
    return sums.above(m.k)  # type: ignore[no-any-return]


_TOP_SHARE = 4  # the first judgments alone when they are at most a quarter of them all


def _top_depth(ctx: Context, m: Metric, total_key: tuple[object, ...]) -> int | None:
    """How many of each query's first judgments the global ideal DCG of ``m`` and of the
    metrics of its rule still ahead read, when that is known and a small share of them.

    None (every judgment's term, the cut-off sums kept for any cut-off) when
    the plan is not known (:attr:`Context.ahead`), when a metric ahead reads
    the whole ideal DCG and its sum is not kept, when a ``gains`` map may
    rank the judgments otherwise than their grades, or when the first
    judgments are more than a quarter of them (nDCG@10 of queries with 1,000
    judgments each reads 1 % of them; 8 bytes a judgment each for the terms,
    positions and running sums otherwise).
    """
    if ctx.ahead is None or m.get("gains") or m.k is None:
        return None
    depth = m.k
    for other in ctx.ahead:
        if other.family == m.family and other.get("ideal") == "global" and _rule(other) == _rule(m):
            if other.k is None:
                if not ctx.is_qrels_cached(total_key):
                    return None
            else:
                depth = max(depth, other.k)
    depth = max(depth, 0)
    reads = int(np.minimum(ctx.judged_lengths, depth).sum())
    return depth if reads * _TOP_SHARE <= ctx.lists.judged_grades.size else None


def _top_sums(ctx: Context, m: Metric, depth: int) -> CutSums:
    """The ideal DCG's running sums over each query's first ``depth`` judgments only.

    Its judgments are best first by grade and every gain rule without a
    ``gains`` map is non-decreasing in the grade, so those are the first
    ``depth`` of the ideal ranking; each running sum is added left to right,
    so it has the bits of the sums over every judgment read at the same
    cut-off (:class:`~rankscope.engine.rowsets.CutSums`).
    """
    offsets = ctx.lists.judged_offsets
    take = np.minimum(ctx.judged_lengths, depth)
    top_offsets = csr(take)
    pos = np.arange(int(top_offsets[-1]), dtype=np.int64) - np.repeat(top_offsets[:-1], take)
    gains = ctx.gain_of(ctx.lists.judged_grades[np.repeat(offsets[:-1], take) + pos], m)
    query = np.repeat(np.arange(ctx.n, dtype=np.int64), take)
    return CutSums.of(discounted(gains, pos, out=gains), query, pos, top_offsets)


def ndcg(ctx: Context, m: Metric) -> FloatArray:
    return divide_or_zero(dcg(ctx, m), _ideal_dcg(ctx, m))


def err(ctx: Context, m: Metric) -> FloatArray:
    top_grade = ctx.metric_max_grade(m)
    g = np.nan_to_num(ctx.lists.grades, nan=0.0)
    if g.size and float(g.max()) > top_grade:
        # A stopping probability above 1 is meaningless: refuse rather than clip.
        raise MetricParameterError(
            f"{m.name}: a ranked document has grade {float(g.max()):g}, above the scale's "
            f"top grade max_grade={top_grade:g}"
        )
    stop = (np.exp2(np.maximum(g, 0.0)) - 1.0) / np.exp2(top_grade)
    reach = _reach(ctx, 1.0 - stop, m.k)
    exponent = float(m.get("rank_exponent"))
    rank = ctx.pos + 1.0 if exponent == 1.0 else np.power(ctx.pos + 1.0, exponent)
    return ctx.seg_sum(reach * stop / rank, ctx.top(m.k))


def _reach(ctx: Context, cont: FloatArray, k: int | None) -> FloatArray:
    """prod_{j<i} cont_j within each query: the chance the user gets to rank i.

    Built depth by depth (row r continues row r - 1 of the same query), so each
    query's product is exact and independent of the other queries.
    """
    reach = np.ones_like(cont)
    pos = ctx.pos
    deepest = int(pos.max()) + 1 if pos.size else 0
    if k is not None:
        deepest = min(deepest, k)
    order = np.argsort(pos, kind="stable")
    bounds = np.concatenate(([0], np.cumsum(np.bincount(pos, minlength=deepest))))
    for d in range(1, deepest):
        rows = order[bounds[d] : bounds[d + 1]]
        reach[rows] = reach[rows - 1] * cont[rows - 1]
    return reach


def rbp(ctx: Context, m: Metric) -> FloatArray:
    p = float(m.get("p"))
    rel = m.get("rel")
    is_rel = ctx.relevant(rel)
    if m.get("gain") == "grade":
        r = np.where(is_rel, ctx.lists.grades, 0.0)
    else:
        r = is_rel.astype(np.float64)
    return (1.0 - p) * ctx.seg_sum(r * np.power(p, ctx.pos.astype(np.float64)))


def best(ctx: Context, m: Metric) -> FloatArray:
    starts = ctx.lists.judged_offsets[:-1]
    has = ctx.judged_lengths > 0
    top = np.full(ctx.n, np.inf)
    top[has] = ctx.lists.judged_grades[starts[has]]
    top = np.where(top > 0, top, np.inf)  # no positive grade: nothing is "best"
    is_best = ctx.lists.grades == top[ctx.row_query]
    return (ctx.seg_sum(is_best.astype(np.float64), ctx.top(m.k)) > 0).astype(np.float64)
