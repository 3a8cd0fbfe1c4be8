"""One vectorized kernel per metric family: all queries at once, one value each.

A kernel takes the shared :class:`~rankscope.engine.context.Context` and a
bound :class:`~rankscope.metrics.Metric` and returns a float64 array with one
value per evaluated query (NaN = null). The definitions they implement are the
factories' docstrings in :mod:`rankscope.metrics`.

The measures trec_eval also computes (P, recall, AP, R-precision, RR, bpref,
success, F, nDCG, the counts) are written the way trec_eval computes them, on
the context's relevant and judged rows, in rank order, so the same kernel
gives trec_eval's numbers bit for bit on rankings with trec_eval's levels
(``rankscope trec_eval``, quirks at ``-l`` 0 and below included) and
rankscope's on any grades.

The table is complete on import: the core kernels here, trec_eval's own
measures (:mod:`rankscope.engine.kernels_trec`,
:mod:`rankscope.engine.kernels_trec_interp`,
:mod:`rankscope.engine.kernels_trec_gain`), and beside it the table of the
judging platform's null rules (:data:`NULL_KERNELS`, ``unjudged="null"``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rankscope.engine.context import Context, log2_ranks
from rankscope.engine.intents import INTENT_KERNELS
from rankscope.engine.kernels_compat import COMPAT_KERNELS
from rankscope.engine.kernels_cwl import CWL_KERNELS
from rankscope.engine.kernels_trec import TREC_KERNELS
from rankscope.engine.kernels_variants import VARIANT_KERNELS
from rankscope.engine.null_mode import NULL_KERNELS
from rankscope.engine.ranking import FloatArray
from rankscope.engine.rowsets import CutSums, RowSet
from rankscope.engine.trec_gains import gain_info, parse_gain_pairs
from rankscope.errors import MetricParameterError
from rankscope.metrics.base import Metric

__all__ = ["KERNELS", "NULL_KERNELS", "register_kernel"]

Kernel = Callable[[Context, Metric], FloatArray]
KERNELS: dict[str, Kernel] = {}


def register_kernel(family: str) -> Callable[[Kernel], Kernel]:
    """Decorator: the kernel computing ``family``."""

    def wrap(fn: Kernel) -> Kernel:
        KERNELS[family] = fn
        return fn

    return wrap


def _div(num: FloatArray, den: FloatArray | float) -> FloatArray:
    """num / den, with 0 where den == 0."""
    den_arr = np.broadcast_to(np.asarray(den, dtype=np.float64), num.shape)
    out = np.zeros_like(num)
    np.divide(num, den_arr, out=out, where=den_arr != 0)
    return out


def _ratio(num: FloatArray, den: FloatArray, where: object) -> FloatArray:
    """num / den where ``where`` holds, else 0 (trec_eval leaves such values at 0)."""
    out = np.zeros(num.shape, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(num, den, out=out, where=np.asarray(where, dtype=bool))
    return out


@register_kernel("P")
def _precision(ctx: Context, m: Metric) -> FloatArray:
    rel = m.get("rel")
    if m.k is None:  # set_P: relevant retrieved over retrieved
        return _div(ctx.relevant_judged(rel), ctx.lengths.astype(np.float64))
    return ctx.hits(rel, m.k) / float(m.k)


@register_kernel("R")
def _recall(ctx: Context, m: Metric) -> FloatArray:
    rel = m.get("rel")
    found = ctx.relevant_judged(rel) if m.k is None else ctx.hits(rel, m.k)
    return _div(found, ctx.n_relevant(rel))


@register_kernel("R_cap")
def _recall_capped(ctx: Context, m: Metric) -> FloatArray:
    rel = m.get("rel")
    cap = float(m.k) if m.k is not None else np.inf  # the family requires a cut-off
    return _div(ctx.hits(rel, m.k), np.minimum(ctx.n_relevant(rel), cap))


@register_kernel("F")
def _f_measure(ctx: Context, m: Metric) -> FloatArray:
    p = _precision(ctx, m)
    r = _recall(ctx, m)
    given = m.get("beta2")
    b2 = float(given) if given is not None else float(m.get("beta")) ** 2
    return _div((1.0 + b2) * p * r, b2 * p + r)


@register_kernel("Hits")
def _hits(ctx: Context, m: Metric) -> FloatArray:
    return ctx.hits(m.get("rel"), m.k).copy()


@register_kernel("num_rel_ret")
def _num_rel_ret(ctx: Context, m: Metric) -> FloatArray:
    return ctx.relevant_judged(m.get("rel"), m.k).copy()


@register_kernel("num_ret")
def _num_ret(ctx: Context, m: Metric) -> FloatArray:
    return ctx.depth(m.k).astype(np.float64)


@register_kernel("num_rel")
def _num_rel(ctx: Context, m: Metric) -> FloatArray:
    return ctx.n_relevant(m.get("rel")).copy()


@register_kernel("Success")
def _success(ctx: Context, m: Metric) -> FloatArray:
    return (ctx.hits(m.get("rel"), m.k) > 0).astype(np.float64)


@register_kernel("RPrec")
def _r_precision(ctx: Context, m: Metric) -> FloatArray:
    rel = m.get("rel")
    big_r = ctx.n_relevant(rel)
    depth = np.minimum(ctx.lengths, big_r.astype(np.int64))
    hits = ctx.rel_rows(rel).count_within(depth).astype(np.float64)
    return _ratio(hits, big_r, depth > 0)


@register_kernel("AP")
def _average_precision(ctx: Context, m: Metric) -> FloatArray:
    rel = m.get("rel")
    found = ctx.rel_rows(rel)
    terms = ctx.precision_at_relevant(rel)
    big_r = ctx.n_relevant(rel)
    if m.k is None:  # trec_eval's map: 0 unless a relevant document was ranked
        return _ratio(found.sum(terms), big_r, found.count > 0)
    return _div(found.sum(terms, found.pos < m.k), big_r)


@register_kernel("RR")
def _reciprocal_rank(ctx: Context, m: Metric) -> FloatArray:
    queries, first = ctx.rel_rows(m.get("rel")).first()
    if m.k is not None:
        within = first < m.k
        queries, first = queries[within], first[within]
    out = np.zeros(ctx.n)
    out[queries] = 1.0 / (first + 1.0)
    return out


@register_kernel("bpref")
def _bpref(ctx: Context, m: Metric) -> FloatArray:
    rel = m.get("rel")
    # trec_eval's gm_bpref asks again for the same values (read, never written to)
    return ctx.cached(("bpref", rel), lambda: _bpref_values(ctx, rel))  # type: ignore[no-any-return]


def _bpref_values(ctx: Context, rel: Any) -> FloatArray:
    judged = ctx.judged_rows
    grades = ctx.lists.grades[judged.rows]
    with np.errstate(invalid="ignore"):
        is_rel = grades >= rel
        nonrel = (grades >= 0) & ~is_rel  # a negative grade: neither relevant nor non-relevant
    nonrel_before = judged.before(nonrel)[is_rel]  # judged non-relevant ranked above
    found = judged.sub(is_rel)
    big_r = ctx.n_relevant(rel)
    cap = np.minimum(ctx.n_judged_nonrelevant(rel), big_r)[found.q]
    seen = np.minimum(nonrel_before.astype(np.float64), big_r[found.q])
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(nonrel_before > 0, 1.0 - seen / cap, 1.0)
    return _div(found.sum(terms), big_r)


@register_kernel("Judged")
def _judged(ctx: Context, m: Metric) -> FloatArray:
    count = ctx.seg_sum(ctx.judged.astype(np.float64), ctx.top(m.k))
    return _div(count, ctx.depth(m.k).astype(np.float64))


@register_kernel("CG")
def _cumulative_gain(ctx: Context, m: Metric) -> FloatArray:
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
        discounted = view.cached(("trec_discounted", str(table)),
                                 lambda: info.gain / view.discount(info.rows.pos))
        return discounted, view, info.rows, ("trec_discounted", str(table))
    key = ("gained", m.get("gain"), m.get("gains"), m.get("rel"))

    def make() -> tuple[FloatArray, RowSet]:
        # only judged rows can gain (unjudged and negative grades gain 0): the
        # gains of those rows, not of every ranked row
        judged = ctx.judged_rows
        gains = ctx.gain_of(ctx.lists.grades[judged.rows], m)
        gaining = gains != 0
        rows = judged.sub(gaining)
        return gains[gaining] / ctx.discount(rows.pos), rows

    discounted, rows = ctx.cached(key, make)
    return discounted, ctx, rows, key


def _table_pairs(text: str) -> tuple[tuple[str, float], ...]:
    return parse_gain_pairs("gain_table", text)


@register_kernel("DCG")
def _dcg(ctx: Context, m: Metric) -> FloatArray:
    discounted, holder, rows, key = _gained_rows(ctx, m)
    if m.k is None:
        return rows.sum(discounted)
    sums = holder.cached(("cut_sums", *key),
                         lambda: CutSums.of(discounted, rows.q, rows.pos, rows.offsets))
    return sums.above(m.k)  # type: ignore[no-any-return]


def _ideal_dcg(ctx: Context, m: Metric) -> FloatArray:
    table = m.get("gain_table")
    if table is not None:  # trec_eval's ideal: its table walked from the top gain down
        view = ctx.levels_view()
        info = gain_info(view, _table_pairs(str(table)))
        pos = info.ideal_pos
        terms = view.cached(("trec_ideal_terms", str(table)),
                            lambda: info.ideal_gain / view.discount(pos))
        q = info.ideal_query
        if m.k is None:
            return np.asarray(np.bincount(q, weights=terms, minlength=view.n), dtype=np.float64)
        sums = view.cached(("trec_ideal_sums", str(table)),
                           lambda: CutSums.of(terms, q, pos, info.ideal_offsets))
        return sums.above(m.k)  # type: ignore[no-any-return]
    flavor = m.get("ideal")
    if flavor == "global":
        def make() -> FloatArray:
            gains = ctx.gain_of(ctx.lists.judged_grades, m)
            # Gains may be non-monotone in grade (custom maps): sort gains, not grades;
            # unless they already are best first, as the grades are (a stable sort
            # would then keep every row in place)
            same_query = ctx.judged_query[1:] == ctx.judged_query[:-1]
            if np.any(same_query & (gains[1:] > gains[:-1])):
                gains = gains[np.lexsort((-gains, ctx.judged_query))]
            return gains / log2_ranks(ctx.judged_pos)

        # one sort per gain rule, shared by every cut-off (ndcg_cut.5, .10, ...)
        key = ("ideal", m.get("gain"), m.get("gains"), m.get("rel"))
        terms = ctx.cached(key, make)
        if m.k is None:
            return ctx.judged_sum(terms)
        sums = ctx.cached(("cut_sums", *key), lambda: CutSums.of(
            terms, ctx.judged_query, ctx.judged_pos, ctx.lists.judged_offsets))
        return sums.above(m.k)  # type: ignore[no-any-return]
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


@register_kernel("nDCG")
def _ndcg(ctx: Context, m: Metric) -> FloatArray:
    return _div(_dcg(ctx, m), _ideal_dcg(ctx, m))


@register_kernel("ERR")
def _err(ctx: Context, m: Metric) -> FloatArray:
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


@register_kernel("RBP")
def _rbp(ctx: Context, m: Metric) -> FloatArray:
    p = float(m.get("p"))
    rel = m.get("rel")
    is_rel = ctx.relevant(rel)
    if m.get("gain") == "grade":
        r = np.where(is_rel, ctx.lists.grades, 0.0)
    else:
        r = is_rel.astype(np.float64)
    return (1.0 - p) * ctx.seg_sum(r * np.power(p, ctx.pos.astype(np.float64)))


@register_kernel("Best")
def _best(ctx: Context, m: Metric) -> FloatArray:
    starts = ctx.lists.judged_offsets[:-1]
    has = ctx.judged_lengths > 0
    top = np.full(ctx.n, np.inf)
    top[has] = ctx.lists.judged_grades[starts[has]]
    top = np.where(top > 0, top, np.inf)  # no positive grade: nothing is "best"
    is_best = ctx.lists.grades == top[ctx.row_query]
    return (ctx.seg_sum(is_best.astype(np.float64), ctx.top(m.k)) > 0).astype(np.float64)


# trec_eval's own measures (rankscope.metrics.trec_eval_names) share the table.
KERNELS.update(TREC_KERNELS)
# so do other tools' variants (rankscope.metrics.variants)
KERNELS.update(VARIANT_KERNELS)
KERNELS.update(CWL_KERNELS)  # C/W/L user models (rankscope.metrics.cwl)
KERNELS.update(COMPAT_KERNELS)  # Compat, Accuracy, NumQ
KERNELS.update(INTENT_KERNELS)  # intent-aware measures over subtopic qrels
