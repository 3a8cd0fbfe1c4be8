"""trec_eval's counting, set and binary-relevance ranked measures, vectorized.

Each function reproduces one trec_eval 10.0 measure for all queries at once,
with the same floating-point operations in the same order as the C code, so
the printed digits agree. "Relevant" means value >= the relevance level
(``-l``, default 1); R = ``num_rel``, RR = ``num_rel_ret``, N = ``num_ret``.
Formulas are in ``docs/trec_eval.md``; the interpolated measures are in
:mod:`rankscope.engine.kernels_trec_interp`.
"""

from __future__ import annotations

import math

import numpy as np

from rankscope.engine.trec_registry import MeasureArgs, Settings, computes
from rankscope.engine.trec_stats import FloatArray, IntArray, QueryStats, c_log, log2_table

__all__ = ["MIN_GEO_MEAN", "relstrings"]

MIN_GEO_MEAN = 0.00001
INFAP_EPSILON = 0.00001


def _f(values: IntArray) -> FloatArray:
    return values.astype(np.float64)


def _ratio(num: FloatArray, den: FloatArray, where: object) -> FloatArray:
    """``num / den`` where ``where`` holds, else 0 (trec_eval leaves such values at 0)."""
    out = np.zeros(num.shape, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(num, den, out=out, where=np.asarray(where, dtype=bool))
    return out


@computes("num_ret")
def _num_ret(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    return [_f(st.lengths)]


@computes("num_rel")
def _num_rel(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    return [_f(st.num_rel)]


@computes("num_rel_ret")
def _num_rel_ret(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    return [_f(st.num_rel_ret)]


@computes("num_nonrel_judged_ret")
def _num_nonrel_judged_ret(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    return [_f(st.lengths - st.num_nonpool - st.num_unjudged - st.num_rel_ret)]


def _ap(st: QueryStats) -> FloatArray:
    return _ratio(st.ap_sum, _f(st.num_rel), st.n_rel_rows > 0)


@computes("map")
def _map(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    return [_ap(st)]


def _gm(values: FloatArray) -> FloatArray:
    # C's MAX(x, MIN_GEO_MEAN) picks the floor for NaN too.
    return c_log(np.where(values > MIN_GEO_MEAN, values, MIN_GEO_MEAN))


@computes("gm_map")
def _gm_map(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    return [_gm(_ap(st))]


@computes("yaap")
def _yaap(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    total = st.ap_sum
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = (1.0 + total) / ((1.0 + _f(st.num_rel)) - total)
    return [c_log(inner)]


@computes("Rprec")
def _rprec(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    depth = np.minimum(st.lengths, st.num_rel)
    return [_ratio(_f(st.hits(depth)), _f(st.num_rel), depth > 0)]


@computes("recip_rank")
def _recip_rank(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    out = np.zeros(st.n, dtype=np.float64)
    rel = st.rel
    has = np.flatnonzero(rel.count > 0)
    out[has] = 1.0 / (rel.pos[rel.offsets[has]] + 1.0)
    return [out]


def _bpref(st: QueryStats) -> FloatArray:
    cache: dict[str, FloatArray] = st.__dict__.setdefault("_bpref", {})
    if "bpref" not in cache:
        cache["bpref"] = _bpref_values(st)
    return cache["bpref"]


def _bpref_values(st: QueryStats) -> FloatArray:
    judged = st.judged
    is_rel = st.lists.values[judged.rows] >= st.lvl
    nonrel_before = judged.before(~is_rel)[is_rel]
    rel = judged.sub(is_rel)
    big_r = st.num_rel
    cap = np.minimum(st.count_levels(0, st.lvl), big_r)[rel.q]
    seen = np.minimum(nonrel_before, big_r[rel.q])
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(nonrel_before > 0, 1.0 - _f(seen) / _f(cap), 1.0)
    total = rel.sum(terms)
    return np.where(big_r > 0, _ratio(total, _f(big_r), big_r > 0), total)


@computes("bpref")
def _bpref_measure(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    return [_bpref(st)]


@computes("gm_bpref")
def _gm_bpref(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    return [_gm(_bpref(st))]


@computes("infAP")
def _infap(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    pool = st.pool
    v = st.lists.values[pool.rows]
    is_rel = (v >= 0) & (v >= st.lvl)
    rel = pool.sub(is_rel)
    r = _f(pool.before(is_rel)[is_rel] + 1)
    n = _f(pool.before((v >= 0) & ~is_rel)[is_rel])
    u = _f(pool.before(v == -2)[is_rel])
    j = _f(rel.pos)
    with np.errstate(divide="ignore", invalid="ignore"):
        later = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((r - 1.0 + n + u) / j) * (
            (r - 1.0 + INFAP_EPSILON) / ((r - 1.0 + n) + 2 * INFAP_EPSILON)
        )
    terms = np.where(j == 0, 1.0, later)
    total = rel.sum(terms)
    big_r = st.num_rel
    return [np.where(big_r > 0, _ratio(total, _f(big_r), big_r > 0), total)]


@computes("binG")
def _bin_g(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    rel = st.rel
    arg = 3 + rel.pos - rel.index
    terms = 1.0 / log2_table(int(arg.max(initial=2)))[arg]
    return [_ratio(rel.sum(terms), _f(st.num_rel), st.n_rel_rows > 0)]


def _cut_hits(st: QueryStats, k: float) -> IntArray:
    return st.hits(int(min(k, 2**62)))


@computes("P")
def _p(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    return [_f(_cut_hits(st, k)) / float(k) for k in b.values]


@computes("recall")
def _recall(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    big_r = _f(st.num_rel)
    return [_ratio(_f(_cut_hits(st, k)), big_r, big_r > 0) for k in b.values]


@computes("relative_P")
def _relative_p(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    big_r = st.num_rel
    return [
        _ratio(_f(_cut_hits(st, k)), _f(np.minimum(big_r, int(k))), big_r > 0) for k in b.values
    ]


@computes("success")
def _success(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    return [(_cut_hits(st, k) > 0).astype(np.float64) for k in b.values]


@computes("map_cut")
def _map_cut(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    rel = st.rel
    terms = st.prec_at_rel
    big_r = _f(st.num_rel)
    out = []
    for k in b.values:
        within = rel.pos < k
        total = np.bincount(rel.q[within], weights=terms[within], minlength=st.n)
        out.append(_ratio(total.astype(np.float64), big_r, big_r > 0))
    return out


@computes("unj")
def _unj(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    out = []
    for k in b.values:
        depth = np.minimum(st.lengths, int(min(k, 2**62)))
        unjudged = depth - st.judged.count_within(int(min(k, 2**62)))
        out.append(_f(unjudged) / float(k))
    return out


@computes("utility")
def _utility(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    p1, p2, p3, p4 = b.values  # the command checks there are four first
    rr, n, big_r = st.num_rel_ret, st.lengths, st.num_rel
    value = p1 * _f(rr) + p2 * _f(n - rr) + p3 * _f(big_r - rr) + p4 * _f(s.n_docs + rr - n - big_r)
    return [value]


@computes("set_P")
def _set_p(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    return [_ratio(_f(st.num_rel_ret), _f(st.lengths), st.lengths > 0)]


@computes("set_recall")
def _set_recall(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    return [_ratio(_f(st.num_rel_ret), _f(st.num_rel), st.num_rel > 0)]


@computes("set_relative_P")
def _set_relative_p(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    ok = (st.lengths > 0) & (st.num_rel > 0)
    return [_ratio(_f(st.num_rel_ret), _f(np.minimum(st.lengths, st.num_rel)), ok)]


@computes("set_map")
def _set_map(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    ok = (st.lengths > 0) & (st.num_rel > 0)
    rr = _f(st.num_rel_ret)
    return [_ratio(rr * rr, _f(st.lengths) * _f(st.num_rel), ok)]


@computes("set_F")
def _set_f(st: QueryStats, b: MeasureArgs, s: Settings) -> list[FloatArray]:
    x = b.values[0]
    ok = st.num_rel_ret > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        p = _f(st.num_rel_ret) / _f(st.lengths)
        r = _f(st.num_rel_ret) / _f(st.num_rel)
        value = (x + 1.0) * p * r / (x * p + r)
    return [np.where(ok, value, 0.0)]


_REL_CHARS = np.array(list("0123456789"), dtype="<U1")


def relstrings(st: QueryStats, b: MeasureArgs) -> list[str]:
    """trec_eval's ``relstring``: one character per ranked value, first L ranks.

    ``0``-``9`` for values 0-9, ``>`` above 9, ``-`` for -1 (not in the
    qrels), ``.`` for -2 (judged negative); L is the parameter (default 10).
    """
    limit = b.values[0]
    length = 0 if math.isnan(limit) or limit < 0 else int(min(limit, 2**62))
    shown = np.minimum(st.lengths, length)
    starts = np.repeat(st.lists.offsets[:-1], shown)
    values = st.lists.values[starts + (np.arange(int(shown.sum())) - np.repeat(
        np.cumsum(shown) - shown, shown))]
    chars = np.where(values > 9, ">", np.where(values == -1, "-", np.where(values == -2, ".", "<")))
    digits = (values >= 0) & (values <= 9)
    chars = np.where(digits, _REL_CHARS[np.clip(values, 0, 9)], chars)
    ends = np.cumsum(shown)
    text = "".join(chars.tolist())
    return [text[e - k: e] for e, k in zip(ends.tolist(), shown.tolist(), strict=True)]
