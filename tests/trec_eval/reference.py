"""A slow, obviously-correct trec_eval 10.0, one query at a time, for differential tests.

It follows the definitions in docs/trec_eval.md directly (plain Python loops,
the C code's order of floating-point operations), for the measures and
options whose 10.0 behaviour pytrec_eval (9.x) cannot check: iprec_at_recall
and 11pt_avg with lround, rbp, rbp_resid, unj, ``-c``, ``-M`` and ``-J``.
"""

from __future__ import annotations

import math

POINTS = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
CUTS = [5, 10, 15, 20, 30, 100, 200, 500, 1000]


def _lround(x: float) -> int:
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def _interpolated(vals: list[int], lvl: int, rr: int, c: int) -> float:
    """Highest precision at or after the c-th relevant document (c <= 0: anywhere)."""
    n = len(vals)
    if c > rr:
        return 0.0
    best = rr / n if n else math.nan
    seen = 0
    for i, v in enumerate(vals, start=1):
        if v >= lvl:
            seen += 1
            if seen >= max(c, 1):
                best = max(best, seen / i)
    return best


def query_values(vals: list[int], judged: dict[str, int], lvl: int, stand_in: bool,
                 n_docs: int) -> dict[str, float]:
    """trec_eval's values for one ranking ``vals`` (trec_eval's value per rank)."""
    levels = [g for g in judged.values() if g >= 0]
    big_r = sum(1 for g in levels if g >= lvl)
    n = len(vals)
    rr = sum(1 for v in vals if v >= 0 and v >= lvl)
    out: dict[str, float] = {"num_ret": n, "num_rel": big_r, "num_rel_ret": rr}
    hits, ap = 0, 0.0
    for i, v in enumerate(vals, start=1):
        if v >= lvl:
            hits += 1
            ap += hits / i
    out["map"] = ap / big_r if hits else 0.0
    top = min(n, big_r)
    out["Rprec"] = sum(1 for v in vals[:top] if v >= lvl) / big_r if top else 0.0
    first = next((i for i, v in enumerate(vals, start=1) if v >= lvl), None)
    out["recip_rank"] = 1.0 / first if first else 0.0
    for k in CUTS:
        found = sum(1 for v in vals[:k] if v >= lvl)
        out[f"P_{k}"] = found / k
        out[f"recall_{k}"] = found / big_r if big_r else 0.0
        out[f"relative_P_{k}"] = found / min(k, big_r) if big_r else 0.0
    for k in (1, 5, 10):
        out[f"success_{k}"] = 1.0 if any(v >= lvl for v in vals[:k]) else 0.0
    for k in (5, 10, 20):
        out[f"unj_{k}"] = 0.0 if stand_in else sum(1 for v in vals[:k] if v < 0) / k
    total = 0.0
    for p in reversed(POINTS):  # trec_eval adds from the last point down
        value = _interpolated(vals, lvl, rr, _lround(p * big_r))
        out[f"iprec_at_recall_{p:3.2f}"] = value
        if _lround(p * big_r) <= rr:
            total += value
    out["11pt_avg"] = total / len(POINTS)
    out["set_P"] = rr / n if n else 0.0
    out["set_recall"] = rr / big_r if big_r else 0.0
    out["utility"] = 0.0 if stand_in else float(
        rr - (n - rr) + 0 * (big_r - rr) + 0 * (n_docs + rr - n - big_r))
    # rbp: default gains are the levels, divided by the highest level when it is above 1
    top_level = max(levels, default=0)
    scale = top_level if top_level > 1 else 1
    rbp, weight = 0.0, 1.0
    resid, any_unjudged = 0.0, False
    for v in vals:
        if v > 0:
            rbp += (v / scale) * weight
        if v < 0:
            any_unjudged = True
            resid += weight
        weight *= 0.9
    out["rbp"] = (1 - 0.9) * rbp
    out["rbp_resid"] = weight + (1 - 0.9) * resid if any_unjudged and not stand_in else 0.0
    ideal = sorted((g for g in levels if g > 0), reverse=True)
    idcg = dcg = 0.0
    for i, g in enumerate(ideal):
        idcg += g / math.log2(i + 2)
    for i, v in enumerate(vals):
        if v > 0:
            dcg += v / math.log2(i + 2)
    out["ndcg"] = dcg / idcg if idcg > 0 else 0.0
    return out


def evaluate(qrels: dict[str, dict[str, int]], run: dict[str, list[tuple[str, float]]], *,
             lvl: int = 1, complete: bool = False, max_ret: int | None = None,
             judged_only: bool = False, n_docs: int = 0) -> tuple[dict[str, dict[str, float]],
                                                                 dict[str, float]]:
    """Per-query values and means, as trec_eval 10.0 computes them."""
    per: dict[str, dict[str, float]] = {}
    for q in sorted(qrels, key=lambda s: s.encode()):
        stand_in = q not in run
        if stand_in and not complete:
            raise ValueError(f"query {q} missing from the run")
        docs = run.get(q, [("ceci_nest_pas_un_docno", 1.0)])
        by_doc = sorted(docs, key=lambda d: d[0].encode(), reverse=True)
        ranked = sorted(by_doc, key=lambda d: -d[1])  # stable: ties keep doc id descending
        ranked = ranked[: max_ret if max_ret is not None else len(ranked)]
        vals = []
        for doc, _ in ranked:
            g = qrels[q].get(doc)
            vals.append(-1 if g is None else (-2 if g < 0 else g))
        if judged_only:
            vals = [v for v in vals if v >= 0]
        values = query_values(vals, qrels[q], lvl, stand_in, n_docs)
        if stand_in:
            values["num_ret"] = 0
        per[q] = values
    names = next(iter(per.values())).keys()
    means: dict[str, float] = {}
    for name in names:
        acc = 0.0
        for q in per:
            acc += per[q][name]
        means[name] = acc if name.startswith("num_") else acc / len(per)
    if complete:  # -c: judgments with a grade > 0 in the whole file, whatever -l says
        means["num_rel"] = sum(1 for docs in qrels.values() for g in docs.values() if g > 0)
    return per, means
