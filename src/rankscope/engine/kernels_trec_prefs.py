"""trec_eval's preference measures for one query, from its counts.

``prefs_values`` combines the counts of
:mod:`rankscope.engine.trec_prefs_counts` into every ``prefs_*`` measure, with
the same floating-point operations as trec_eval 10.0 (formulas in
``docs/trec_eval.md``). The command (``rankscope trec_eval -R prefs``) calls it
query by query.
"""

from __future__ import annotations

import math

import numpy as np

from rankscope.engine.trec_prefs_counts import JudgmentGroup, QueryPrefs

__all__ = ["prefs_values"]


def _div(num: float, den: float) -> float:
    """C double division (0/0 is NaN, x/0 is +-inf)."""
    if den == 0:
        return math.nan if num == 0 or num != num else math.copysign(math.inf, num)
    return num / den


def _simple(groups: list[JudgmentGroup], parts: str) -> float:
    ful = sum(g.ful_ret + (g.ful_imp if "i" in parts else 0) for g in groups)
    poss = sum(g.poss_ret + (g.poss_imp if "i" in parts else 0)
               + (g.notoccur if "n" in parts else 0) for g in groups)
    return ful / poss if poss else 0.0


def _avgjg(groups: list[JudgmentGroup], parts: str) -> float:
    total = 0.0
    for g in groups:
        ful = g.ful_ret + (g.ful_imp if "i" in parts else 0)
        poss = g.poss_ret + (g.poss_imp if "i" in parts else 0) + (
            g.notoccur if "n" in parts else 0)
        if poss:
            total += ful / poss
    return total / len(groups) if total > 0.0 else 0.0


def _pair(qp: QueryPrefs, mixed: bool, unretrieved: bool) -> float:
    c, njr = qp.counts, qp.n_judged_ret
    both = c + c.T
    seen = np.triu(both[:njr, :njr] > 0, 1)
    i, j = np.nonzero(seen)  # row-major: trec_eval's loop order
    ratios = [c[i, j] / both[i, j]]
    if mixed:
        i, j = np.nonzero(both[:njr, njr:] > 0)
        ratios.append(c[i, j + njr] / both[i, j + njr])
    flat = np.concatenate(ratios).astype(np.float64)
    pairs = flat.size
    total = float(np.cumsum(flat)[-1]) if flat.size else 0.0  # added in loop order
    if unretrieved:
        sub = c[njr:, njr:]
        seen = (sub + sub.T) > 0
        pairs += int(np.count_nonzero(np.triu(seen, 1)))
    return total / pairs if pairs else 0.0


def _recount(g: JudgmentGroup, njr: int, retrieved_only: bool) -> tuple[int, int]:
    """(fulfilled, possible) keeping only the first R non-relevant documents."""
    ful = poss = 0
    if g.prefs is None:
        keep_n = g.num_rel_ret if retrieved_only else g.num_rel
        ecs = [ec[ec < njr] for ec in g.ecs] if retrieved_only else g.ecs
        last = ecs[-1][:keep_n]
        pairs = [(a, b) for k, a in enumerate(ecs) for b in ecs[k + 1:len(ecs) - 1]]
        pairs += [(a, last) for a in ecs]
        for a, b in pairs:
            d1, d2 = np.repeat(a, b.size), np.tile(b, a.size)
            good = (d1 < d2) if retrieved_only else ((d1 < d2) & (d1 < njr))
            ful += int(np.count_nonzero(good))
            poss += int(np.count_nonzero(~good))
        return ful, poss + ful
    levels, prefs = g.levels, g.prefs
    if levels is None:
        return 0, 0
    scan = levels[:njr] if retrieved_only else levels
    zeros = np.flatnonzero(scan == 0.0)
    cut = int(zeros[g.num_rel]) if zeros.size > g.num_rel else scan.size
    kept = ~((np.arange(levels.size) >= cut) & (levels == 0.0))
    a = prefs & kept[:, None] & kept[None, :]
    upper = np.triu(np.ones(a.shape, dtype=bool), 1)
    ret = slice(0, njr)
    ful = int(np.count_nonzero(a[ret, ret] & upper[ret, ret]))
    poss = int(np.count_nonzero(a[ret, ret] & upper[ret, ret].T))
    if not retrieved_only:
        unret = slice(njr, levels.size)
        ful += int(np.count_nonzero(a[ret, unret]))
        poss += int(np.count_nonzero(a[unret, :]))
    return ful, poss + ful


def _rnonrel(qp: QueryPrefs, retrieved_only: bool) -> float:
    total = 0.0
    for g in qp.groups:
        big_r = g.num_rel_ret if retrieved_only else g.num_rel
        big_n = g.num_nonrel_ret if retrieved_only else g.num_nonrel
        if big_r >= big_n:
            if retrieved_only:
                ful = g.ful_ret + g.num_rel_ret * (big_r - big_n)
                poss = g.poss_ret + g.num_rel * (big_r - big_n)
            else:
                ful = g.ful_ret + g.ful_imp + g.num_rel_ret * (big_r - big_n)
                poss = g.poss_ret + g.poss_imp + g.notoccur + g.num_rel * (big_r - big_n)
        else:
            ful, poss = _recount(g, qp.n_judged_ret, retrieved_only)
        total += _div(float(ful), float(poss))
    return total / len(qp.groups) if total > 0.0 else 0.0


def prefs_values(qp: QueryPrefs) -> dict[str, float]:
    """Every preference measure of one query."""
    g = qp.groups
    return {
        "prefs_num_prefs_poss": float(sum(x.poss_ret + x.poss_imp + x.notoccur for x in g)),
        "prefs_num_prefs_ful": float(sum(x.ful_ret + x.ful_imp for x in g)),
        "prefs_num_prefs_ful_ret": float(sum(x.ful_ret for x in g)),
        "prefs_simp": _simple(g, "in"),
        "prefs_pair": _pair(qp, mixed=True, unretrieved=True),
        "prefs_avgjg": _avgjg(g, "in"),
        "prefs_avgjg_Rnonrel": _rnonrel(qp, retrieved_only=False),
        "prefs_simp_ret": _simple(g, ""),
        "prefs_pair_ret": _pair(qp, mixed=False, unretrieved=False),
        "prefs_avgjg_ret": _avgjg(g, ""),
        "prefs_avgjg_Rnonrel_ret": _rnonrel(qp, retrieved_only=True),
        "prefs_simp_imp": _simple(g, "i"),
        "prefs_pair_imp": _pair(qp, mixed=True, unretrieved=False),
        "prefs_avgjg_imp": _avgjg(g, "i"),
    }
