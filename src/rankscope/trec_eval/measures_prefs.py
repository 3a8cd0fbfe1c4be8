"""trec_eval's preference measures (``-R prefs`` / ``-R qrels_prefs``).

The run is ranked by score with ties broken by document id *ascending* (unlike
the qrels measures), cut to ``-M`` and checked for duplicates; ``-J`` and
``-l`` do not apply. Counting is in :mod:`rankscope.engine.trec_prefs_counts`;
the measures combine the counts as trec_eval 10.0 does (formulas in
``docs/trec_eval.md``). Queries are handled one at a time.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from rankscope.data.trec_dialect import QrelsTable, RunTable
from rankscope.engine.trec_lists import _first_dups, ranked_frame
from rankscope.engine.trec_prefs_counts import JudgmentGroup, PrefsError, QueryPrefs, count_prefs
from rankscope.trec_eval.catalog import Bound
from rankscope.trec_eval.exits import TrecEvalExit
from rankscope.trec_eval.failures import first_failure
from rankscope.trec_eval.options import Options
from rankscope.trec_eval.report import Failure, PerQuery

__all__ = ["evaluate_prefs", "prefs_values"]


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


def evaluate_prefs(opts: Options, rel_info: QrelsTable, run: RunTable,
                   bounds: list[Bound]) -> PerQuery:
    """Per-query values of the preference measures (others fail as in trec_eval)."""
    frame = rel_info.frame
    qids = frame.get_column("query_id").unique().sort()
    if opts.debug_query is not None:
        qids = qids.filter(qids == opts.debug_query)
    n = qids.len()
    qmap = pl.DataFrame({"query_id": qids, "qidx": np.arange(n, dtype=np.int64)})
    rows, present = ranked_frame(qmap, run, complete=opts.complete, max_ret=opts.max_ret,
                                 descending_ties=False)
    dups = _first_dups(rows.select("qidx", "doc_id"), n)
    docs = rows.group_by("qidx", maintain_order=True).agg(pl.col("doc_id"))
    ranked = dict(zip(docs.get_column("qidx").to_list(), docs.get_column("doc_id").to_list(),
                      strict=True))
    lines = frame.join(qmap, on="query_id").group_by("qidx", maintain_order=True).agg(
        pl.struct("jg", "jsg", "doc_id", "level").alias("lines"))
    by_query = {q: [tuple(s.values()) for s in structs]
                for q, structs in zip(lines.get_column("qidx").to_list(),
                                      lines.get_column("lines").to_list(), strict=True)}
    wanted = [b for b in bounds if b.spec.source == "prefs"]
    values = {b.name: np.zeros(n) for b in bounds if b.spec.value not in ("runid", "string")}
    errors: dict[int, PrefsError] = {}
    for q in range(n):
        if not wanted or dups[q] is not None:
            continue
        try:
            qp = count_prefs(ranked.get(q, []), by_query.get(q, []))
        except PrefsError as exc:
            errors[q] = exc
            break  # trec_eval stops at the first failing query
        for name, value in prefs_values(qp).items():
            if name in values:
                values[name][q] = value
    if "num_q" in values:
        values["num_q"][:] = 1.0
    stand_in = (~present).astype(np.float64) if opts.complete else np.zeros(n)
    per = PerQuery(qids.to_list(), stand_in, {k: [v] for k, v in values.items()})

    def problem(q: int) -> str | None:
        if dups[q] is not None:
            return f"trec_eval.form_prefs_counts: duplicate docs {dups[q]}"
        return errors[q].text if q in errors and errors[q].status == 4 else None

    per.failure = first_failure(opts, per.query_ids, present, bounds, problem, "prefs")
    aborted = [q for q, e in errors.items() if e.status == 134]
    if aborted and (per.failure is None or aborted[0] < per.failure.index) and wanted:
        # abort(): no "Can't calculate" line, and buffered stdout is lost
        per.failure = Failure(aborted[0], TrecEvalExit(errors[aborted[0]].text, 134),
                              keep_output=False)
    return per
