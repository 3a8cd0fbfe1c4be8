"""A slow, obviously-correct reference implementation of rankscope's metrics.

Written from the metric definitions only (the factory docstrings in
``rankscope.metrics.binary`` / ``graded``, the seeds, and trec_eval's source
for bpref), never from the engine. One query at a time, plain Python lists,
each metric computed literally from its formula.

Conventions (trec_eval's unless an option says otherwise):

- ranking: score descending, ties by document id descending in UTF-8 byte
  order (``ties="trec"``) or kept in input order (``ties="input"``);
- a document is *judged* when the qrels give it a non-null grade; unjudged
  documents are non-relevant and gain 0 (``unjudged="nonrelevant"``) or are
  removed before ranks are assigned (``unjudged="condensed"``, which also drops
  negative grades, as trec_eval -J does);
- relevant means ``grade >= rel``; R counts the query's relevant judgments;
- queries: every query with at least one non-null grade (``"qrels"``; a query
  the run lacks is an empty ranking), only those the run also has
  (``"intersection"``), or as ``"qrels"`` but a query the run lacks has no
  value (``"nonnull"``). Queries are ordered by UTF-8 bytes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rankscope.metrics.base import Metric

Grade = float | None
QrelsDict = Mapping[str, Mapping[str, float | int | None]]
RunDict = Mapping[str, Mapping[str, float | int]]

SUM_FAMILIES = frozenset({"num_ret", "num_rel", "num_rel_ret"})


def byte_key(text: str) -> bytes:
    """Sort key: the UTF-8 bytes of an id (trec_eval compares with strcmp)."""
    return text.encode("utf-8")


def order_run(ranking: Mapping[str, float | int], ties: str) -> list[str]:
    """Document ids of one query's ranking, best first."""
    items = list(ranking.items())  # input order
    if ties == "trec":
        # Stable sorts: first by doc id descending, then by score descending.
        items.sort(key=lambda item: byte_key(item[0]), reverse=True)
    elif ties != "input":
        raise ValueError(ties)
    items.sort(key=lambda item: -float(item[1]))
    return [doc for doc, _ in items]


@dataclass(frozen=True)
class QueryData:
    """What one query's metrics need: ranked grades and the query's judgments."""

    ranked: list[Grade]  # grade of each ranked document (None = unjudged)
    judged: list[float]  # every non-null grade the qrels give the query
    global_max: float  # the highest grade anywhere in the qrels (0 if none)
    in_run: bool = True  # whether the run has the query at all


def query_data(
    qrels_q: Mapping[str, float | int | None],
    run_q: Mapping[str, float | int],
    *,
    ties: str,
    unjudged: str,
    global_max: float,
) -> QueryData:
    grades: dict[str, float] = {d: float(g) for d, g in qrels_q.items() if g is not None}
    ranked: list[Grade] = [grades.get(d) for d in order_run(run_q, ties)]
    if unjudged == "condensed":
        # judged-only lists keep documents with a grade >= 0 (a negative grade means
        # "seen, not judged" in trec_eval, which -J drops too)
        ranked = [g for g in ranked if g is not None and g >= 0]
    elif unjudged != "nonrelevant":
        raise ValueError(unjudged)
    return QueryData(ranked, list(grades.values()), global_max, in_run=len(run_q) > 0)


# ---------------------------------------------------------------- helpers


def _is_rel(g: Grade, rel: float) -> bool:
    return g is not None and g >= rel


def _top(ranked: list[Grade], k: int | None) -> list[Grade]:
    return ranked if k is None else ranked[:k]


def _n_rel(judged: list[float], rel: float) -> int:
    return sum(1 for g in judged if g >= rel)


def _hits(ranked: list[Grade], k: int | None, rel: float) -> int:
    return sum(1 for g in _top(ranked, k) if _is_rel(g, rel))


def _precision(ranked: list[Grade], k: int | None, rel: float) -> float:
    # With k: divide by k (even when fewer were retrieved); without: by n.
    denominator = k if k is not None else len(ranked)
    return _hits(ranked, k, rel) / denominator if denominator else 0.0


def _recall(ranked: list[Grade], judged: list[float], k: int | None, rel: float) -> float:
    big_r = _n_rel(judged, rel)
    return _hits(ranked, k, rel) / big_r if big_r else 0.0


def gain(g: Grade, metric: Metric) -> float:
    """Gain of a grade for CG / DCG / nDCG (see rankscope.metrics.graded)."""
    if g is None or g < 0:
        return 0.0
    rel = metric.get("rel")
    if rel is not None and g < rel:
        return 0.0
    table = dict(metric.get("gains") or ())
    default = float(2.0**g - 1.0) if metric.get("gain") == "exp" else g
    # a grade missing from an explicit map keeps its default gain (trec_eval, ir_measures)
    return float(table.get(g, default))


def _dcg(gains: Sequence[float]) -> float:
    # rank i (1-based) is discounted by log2(i + 1)
    return sum(x / math.log2(i + 1) for i, x in enumerate(gains, start=1))


# ---------------------------------------------------------------- metrics


def metric_value(metric: Metric, data: QueryData) -> float:
    """One query's value of one metric, from the definition."""
    if any(name == "judged_only" and value for name, value in metric.params):
        # judged_only: the ranking without unjudged (or negatively graded) documents
        data = QueryData([g for g in data.ranked if g is not None and g >= 0], data.judged,
                         data.global_max)
        metric = Metric(metric.family, tuple((n, False if n == "judged_only" else v)
                                             for n, v in metric.params), metric.k)
    fam, k, ranked, judged = metric.family, metric.k, data.ranked, data.judged
    if fam in ("P", "R", "R_cap", "F", "Hits", "Success", "RPrec", "AP", "RR", "bpref",
               "num_rel", "num_rel_ret", "RBP"):
        rel = float(metric.get("rel"))
    if fam == "P":
        return _precision(ranked, k, rel)
    if fam == "R":
        return _recall(ranked, judged, k, rel)
    if fam == "R_cap":
        assert k is not None
        cap = min(k, _n_rel(judged, rel))
        return _hits(ranked, k, rel) / cap if cap else 0.0
    if fam == "F":
        b2 = metric.get("beta2")
        b2 = float(metric.get("beta")) ** 2 if b2 is None else float(b2)
        p, r = _precision(ranked, k, rel), _recall(ranked, judged, k, rel)
        if p + r == 0:
            return 0.0
        return (1 + b2) * p * r / (b2 * p + r)
    if fam == "Hits":
        return float(_hits(ranked, k, rel))
    if fam == "Success":
        return 1.0 if _hits(ranked, k, rel) > 0 else 0.0
    if fam == "RPrec":
        big_r = _n_rel(judged, rel)
        return _hits(ranked, big_r, rel) / big_r if big_r else 0.0
    if fam == "AP":
        big_r = _n_rel(judged, rel)
        if not big_r:
            return 0.0
        total, found = 0.0, 0
        for i, g in enumerate(_top(ranked, k), start=1):
            if _is_rel(g, rel):
                found += 1
                total += found / i  # P@i at each relevant rank i
        return total / big_r
    if fam == "RR":
        for i, g in enumerate(_top(ranked, k), start=1):
            if _is_rel(g, rel):
                return 1.0 / i
        return 0.0
    if fam == "bpref":
        return _bpref(ranked, judged, rel)
    if fam == "Judged":
        top = _top(ranked, k)
        return sum(1 for g in top if g is not None) / len(top) if top else 0.0
    if fam == "num_ret":
        return float(len(_top(ranked, k)))
    if fam == "num_rel":
        return float(_n_rel(judged, rel))
    if fam == "num_rel_ret":
        return float(_hits(ranked, k, rel))
    if fam == "CG":
        return sum(gain(g, metric) for g in _top(ranked, k))
    if fam in ("DCG", "nDCG") and metric.get("gain_table") is not None:
        dcg, ideal = _trec_gain_table_dcg(metric, data)
        if fam == "DCG":
            return dcg
        return dcg / ideal if ideal > 0 else 0.0
    if fam == "DCG":
        return _dcg([gain(g, metric) for g in _top(ranked, k)])
    if fam == "nDCG":
        return _ndcg(metric, data)
    if fam == "ERR":
        return _err(metric, data)
    if fam == "RBP":
        p = float(metric.get("p"))
        graded = metric.get("gain") == "grade"
        total = 0.0
        for i, g in enumerate(ranked, start=1):
            if _is_rel(g, rel):
                assert g is not None
                total += (g if graded else 1.0) * p ** (i - 1)
        return (1 - p) * total
    if fam == "Compat":
        return _compat(metric, data)
    if fam == "Best":
        if not judged or max(judged) <= 0:
            return 0.0
        top_grade = max(judged)
        return 1.0 if any(g == top_grade for g in _top(ranked, k)) else 0.0
    raise NotImplementedError(fam)


def _compat(metric: Metric, data: QueryData) -> float:
    """ir_measures' compat provider, literally: RBO of the ranking against the ideal one.

    Documents are named by position: the ranking is r0, r1, ...; the ideal lists the
    positively graded documents by grade (stable), the retrieved ones in run order
    first, then unretrieved ones of each grade (fresh names).
    """
    p, normalize = float(metric.get("p")), bool(metric.get("normalize"))
    ranking = [f"r{i}" for i in range(len(data.ranked))]
    retrieved = [(g, f"r{i}") for i, g in enumerate(data.ranked) if g is not None and g > 0]
    left = sorted((g for g in data.judged if g > 0), reverse=True)
    for g, _ in retrieved:
        left.remove(g)
    pool = retrieved + [(g, f"u{j}") for j, g in enumerate(left)]
    ideal = [name for _, name in sorted(pool, key=lambda item: -item[0])]  # stable

    def rbo(a: list[str], b: list[str], depth: int) -> float:
        seen_a: set[str] = set()
        seen_b: set[str] = set()
        total = 0.0
        for d in range(depth):
            if d < len(a):
                seen_a.add(a[d])
            if d < len(b):
                seen_b.add(b[d])
            total += p**d * len(seen_a & seen_b) / (d + 1)
        return total

    depth = max(len(ranking), len(ideal))
    if depth == 0:
        return 0.0
    best = rbo(ideal, ideal, depth) if normalize else sum(p**d for d in range(depth))
    return rbo(ranking, ideal, depth) / best if best > 0 else 0.0


def _bpref(ranked: list[Grade], judged: list[float], rel: float) -> float:
    """trec_eval's m_bpref.c, literally.

    Judged non-relevant: 0 <= grade < rel. A negative grade is trec_eval's
    "in the pool but unjudged": skipped, and not counted in N. Unjudged
    documents are skipped.
    """
    big_r = sum(1 for g in judged if g >= 0 and g >= rel)
    big_n = sum(1 for g in judged if 0 <= g < rel)
    nonrel_so_far = 0
    total = 0.0
    for g in ranked:
        if g is None or g < 0:
            continue
        if g < rel:
            nonrel_so_far += 1
        elif nonrel_so_far > 0:
            total += 1.0 - min(nonrel_so_far, big_r) / min(big_n, big_r)
        else:
            total += 1.0
    return total / big_r if big_r else 0.0


def _ndcg(metric: Metric, data: QueryData) -> float:
    k = metric.k
    top = _top(data.ranked, k)
    dcg = _dcg([gain(g, metric) for g in top])
    ideal = metric.get("ideal")
    if ideal == "global":
        # best ordering of every judged document of the query, by gain
        best = sorted((gain(g, metric) for g in data.judged), reverse=True)
        idcg = _dcg(best if k is None else best[:k])
    elif ideal == "max":
        top_grade = metric.get("max_grade")
        if top_grade is None:
            top_grade = data.global_max
        # the top grade repeated k times (the number retrieved without a cut-off)
        depth = k if k is not None else len(data.ranked)
        idcg = _dcg([gain(float(top_grade), metric)] * depth)
    elif ideal == "local":
        idcg = _dcg(sorted((gain(g, metric) for g in top), reverse=True))
    else:
        raise ValueError(ideal)
    return dcg / idcg if idcg > 0 else 0.0


def _trec_level(g: Grade) -> int:
    """trec_eval's level of a ranked document: -1 outside the qrels, -2 for a negative grade."""
    if g is None:
        return -1
    return -2 if g < 0 else math.trunc(g)


def _glibc_msort(items: list[list[float]]) -> list[list[float]]:
    """glibc's qsort (a merge sort, halves at n/2, left first on a tie) with trec_eval's
    comparator: the gain difference converted to int (truncated toward zero)."""
    if len(items) <= 1:
        return items
    half = len(items) // 2
    left, right = _glibc_msort(items[:half]), _glibc_msort(items[half:])
    out = []
    while left and right:
        out.append(left.pop(0) if int(left[0][1] - right[0][1]) <= 0 else right.pop(0))
    return out + left + right


def _trec_gain_table_dcg(metric: Metric, data: QueryData) -> tuple[float, float]:
    """DCG and ideal DCG with trec_eval's gain parameters (gain_init.c and m_ndcg.c).

    The table holds one entry per parameter whose key is an integer, then one
    per level 0..L-1 not given (gain = level); the first parameter of a level
    takes the level's number of judgments. A ranked document gains the first
    entry of its level in the sorted table (0 if none). The ideal ranking
    takes each entry's judgments from the top entry down and stops at the first
    entry (with judgments) whose gain is <= 0. A query the run lacks ranks
    trec_eval -c's one unjudged stand-in document.
    """
    pairs = [part.split("=", 1) for part in str(metric.get("gain_table")).split(",")]
    levels = [_trec_level(g) for g in data.ranked]
    if not levels and not data.in_run:
        levels = [-1]
    counts: dict[int, int] = {}
    for g in data.judged:
        if math.trunc(g) >= 0:
            counts[math.trunc(g)] = counts.get(math.trunc(g), 0) + 1
    n_levels = max(counts) + 1 if counts else 0
    table: list[list[float]] = []  # [level, gain, judgments]
    for key, value in pairs:
        body = key[1:] if key[:1] in "+-" else key
        if body.isdigit() and body.isascii():
            table.append([int(key), float(value), 0])
    given = len(table)
    for level in range(n_levels):
        entry = next((e for e in table[:given] if e[0] == level), None)
        if entry is not None:
            entry[2] = counts.get(level, 0)
        else:
            table.append([level, float(level), counts.get(level, 0)])
    table = _glibc_msort(table)

    def gain_of(level: int) -> float:
        return next((e[1] for e in table if e[0] == level), 0.0)

    k = metric.k
    dcg = sum(gain_of(lv) / math.log2(i + 2) for i, lv in enumerate(levels)
              if (k is None or i < k) and gain_of(lv) != 0)
    ideal, i, cur, at = 0.0, 0, len(table) - 1, 0
    ideal_gain = table[cur][1] if cur >= 0 else 0.0
    while ideal_gain > 0.0:
        at += 1
        while cur >= 0 and at > table[cur][2]:
            at, cur = 1, cur - 1
            ideal_gain = table[cur][1] if cur >= 0 else 0.0
        if ideal_gain > 0.0 and (k is None or i < k):
            ideal += ideal_gain / math.log2(i + 2)
        i += 1
    return dcg, ideal


def _err(metric: Metric, data: QueryData) -> float:
    top_grade = metric.get("max_grade")
    if top_grade is None:
        top_grade = data.global_max
    scale = 2.0 ** float(top_grade)
    exponent = float(metric.get("rank_exponent"))  # position factor 1 / i^e
    total, not_stopped = 0.0, 1.0
    for i, g in enumerate(_top(data.ranked, metric.k), start=1):
        r_i = (2.0**g - 1.0) / scale if g is not None and g > 0 else 0.0
        total += not_stopped * r_i / i**exponent
        not_stopped *= 1.0 - r_i
    return total


# ---------------------------------------------------------------- whole runs


@dataclass
class Reference:
    """Per-query values and means, shaped like an EvaluationResult."""

    query_ids: list[str]
    values: list[list[float]]  # queries x metrics, NaN = null
    means: list[float | None]


def evaluated_queries(qrels: QrelsDict, run: RunDict, queries: str) -> list[str]:
    """The queries an evaluation reports, in byte order."""
    judged = {q for q, docs in qrels.items() if any(g is not None for g in docs.values())}
    if queries == "intersection":
        judged &= {q for q, docs in run.items() if len(docs) > 0}
    elif queries not in ("qrels", "nonnull"):
        raise ValueError(queries)
    return sorted(judged, key=byte_key)


def global_max_grade(qrels: QrelsDict) -> float:
    grades = [float(g) for docs in qrels.values() for g in docs.values() if g is not None]
    return max(grades) if grades else 0.0


def reference_evaluate(
    qrels: QrelsDict,
    run: RunDict,
    metrics: Sequence[Metric],
    *,
    ties: str = "trec",
    unjudged: str = "nonrelevant",
    queries: str = "qrels",
) -> Reference:
    qids = evaluated_queries(qrels, run, queries)
    top = global_max_grade(qrels)
    values: list[list[float]] = []
    for q in qids:
        in_run = len(run.get(q, {})) > 0
        if queries == "nonnull" and not in_run:
            values.append([math.nan] * len(metrics))
            continue
        data = query_data(qrels[q], run.get(q, {}), ties=ties, unjudged=unjudged, global_max=top)
        values.append([metric_value(m, data) for m in metrics])
    means: list[float | None] = []
    for j, m in enumerate(metrics):
        present = [row[j] for row in values if not math.isnan(row[j])]
        if not present:
            means.append(None)
        elif m.family in SUM_FAMILIES:
            means.append(math.fsum(present))
        else:
            means.append(math.fsum(present) / len(present))
    return Reference(qids, values, means)


def as_float(value: Any) -> float:
    return math.nan if value is None else float(value)
