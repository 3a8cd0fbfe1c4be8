"""Hypothesis strategies: random qrels and runs as nested dicts.

The data is small but nasty: score ties, unjudged and null-graded documents,
graded / fractional / negative grades, empty rankings, queries only in the
qrels or only in the run, ids whose byte order differs from their "natural"
order (``d10`` < ``d2``, ``D1`` < ``d1``, non-ASCII after ASCII), and a
separate generator of long rankings.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from hypothesis import strategies as st

from rankscope.metrics.base import Metric, make_metric

QUERY_POOL = ("q1", "q2", "q10", "Q3", "7", "qé")
NUMERIC_QUERY_POOL = ("1", "2", "10", "3", "25")  # for gdeval, which wants numeric topics
DOC_POOL = ("d1", "d2", "d10", "D1", "a", "b", "0", "00", "z9", "x_y", "é", "ü1")

INT_GRADES = (-1, 0, 0, 0, 1, 1, 2, 3, 4)
ANY_GRADES = (-1, 0, 0, 1, 1, 2, 3, 4, 0.5, 1.5, 2.25)
TIED_SCORES = (-1.0, 0.0, 0.5, 1.0, 1.0, 2.0, 2.5, 3.0)


@dataclass
class Data:
    """One qrels / run pair; dict order is the input order."""

    qrels: dict[str, dict[str, float | int | None]] = field(default_factory=dict)
    run: dict[str, dict[str, float]] = field(default_factory=dict)

    def evaluated(self) -> bool:
        """Whether some query has a non-null grade (so something is evaluated)."""
        return any(g is not None for docs in self.qrels.values() for g in docs.values())


def grade_values(*, integer: bool = False, nulls: bool = True, negative: bool = True
                 ) -> st.SearchStrategy[float | int | None]:
    """Grades: integer or also fractional, optionally negative and null."""
    pool = [g for g in (INT_GRADES if integer else ANY_GRADES) if negative or g >= 0]
    values: st.SearchStrategy[float | int | None] = st.sampled_from(pool)
    if nulls:
        values = st.one_of(values, st.none())
    return values


def score_values(*, ties: bool = True) -> st.SearchStrategy[float]:
    """Scores: a small pool (ties are likely) or distinct-ish floats."""
    if ties:
        return st.one_of(
            st.sampled_from(TIED_SCORES),
            st.integers(-3, 3).map(float),
        )
    return st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, width=64)


def dyadic_scores() -> st.SearchStrategy[float]:
    """Multiples of 1/4 in [-1000, 1000]: exact in float32 and under integer shifts.

    pytrec_eval (and ir_measures through it) keeps scores as 32-bit floats, so
    scores closer than float32 resolution become ties there; these never do.
    """
    return st.integers(-4000, 4000).map(lambda n: n / 4)


@st.composite
def datasets(
    draw: st.DrawFn,
    *,
    grades: st.SearchStrategy[float | int | None] | None = None,
    scores: st.SearchStrategy[float] | None = None,
    distinct_scores: bool = False,
    max_docs: int = 9,
    missing: bool = True,
    empty_rankings: bool = True,
    query_pool: tuple[str, ...] = QUERY_POOL,
) -> Data:
    """Random qrels and run over a few queries.

    ``missing`` allows queries only in the qrels or only in the run;
    ``distinct_scores`` makes every score of one query different (for tools
    whose tie-breaking differs from trec_eval's).
    """
    grades = grades if grades is not None else grade_values()
    scores = scores if scores is not None else score_values()
    qids = draw(st.lists(st.sampled_from(query_pool), unique=True, min_size=1, max_size=4))
    sides = ("both", "both", "both", "qrels", "run") if missing else ("both",)
    data = Data()
    for q in qids:
        side = draw(st.sampled_from(sides))
        if side in ("both", "qrels"):
            docs = draw(st.lists(st.sampled_from(DOC_POOL), unique=True, min_size=1,
                                 max_size=max_docs))
            data.qrels[q] = {d: draw(grades) for d in docs}
        if side in ("both", "run"):
            docs = draw(st.lists(st.sampled_from(DOC_POOL), unique=True,
                                 min_size=0 if empty_rankings else 1, max_size=max_docs + 2))
            if distinct_scores:
                values = draw(st.lists(scores, unique=True, min_size=len(docs),
                                       max_size=len(docs)))
            else:
                values = [draw(scores) for _ in docs]
            data.run[q] = dict(zip(docs, values, strict=True))
    return data


@st.composite
def long_datasets(
    draw: st.DrawFn, *, integer: bool = False, nulls: bool = True, negative: bool = True
) -> Data:
    """A few queries with rankings of hundreds to a few thousand documents.

    Generated with a seeded ``random.Random`` (hypothesis draws the seed and
    the sizes) so that examples stay fast; scores are small integers, so
    ties are everywhere.
    """
    seed = draw(st.integers(0, 2**32 - 1))
    n_queries = draw(st.integers(1, 3))
    rng = random.Random(seed)
    grade_pool: list[float | int | None] = [
        g for g in (INT_GRADES if integer else ANY_GRADES) if negative or g >= 0]
    if nulls:
        grade_pool.append(None)
    data = Data()
    for i in range(n_queries):
        q = f"t{i}"
        n_docs = rng.randint(100, 2500)
        universe = [f"doc{j}" for j in range(int(n_docs * 1.3))]
        judged = rng.sample(universe, rng.randint(1, min(400, len(universe))))
        data.qrels[q] = {d: rng.choice(grade_pool) for d in judged}
        if rng.random() < 0.85:
            ranked = rng.sample(universe, n_docs)
            data.run[q] = {d: float(rng.randint(0, 60)) for d in ranked}
    return data


# ---------------------------------------------------------------- metrics under test

CUTOFFS = (None, 1, 3, 5, 20)
RELS = (1, 2, 0.5)
MONOTONE_GAINS = "0=0,1=1,2=3,3=7,4=15"
ODD_GAINS = "0.5=1,1=5,1.5=4,2=1,3=2"  # not monotone in the grade
# trec_eval's ndcg.1=3,2=9 and its quirks: a negative gain, gains under 1 apart (kept in
# the order given), a gain for unjudged documents (level -1), a key that is not an integer
TREC_GAIN_TABLES = ("1=3,2=9", "0=-1,3=2", "1=2.5,2=2", "-1=5,2=0.5", "x=4,1=0")


def binary_metrics() -> list[Metric]:
    """Every binary family with cut-offs (also beyond the ranking) and thresholds."""
    out: list[Metric] = []
    for fam in ("P", "R", "Hits", "Success", "AP", "RR", "num_rel_ret"):
        out += [make_metric(fam, k=k, rel=rel) for k in CUTOFFS for rel in RELS]
    out += [make_metric("R_cap", k=k, rel=rel) for k in CUTOFFS[1:] for rel in RELS]
    out += [make_metric("F", k=k, beta=beta, rel=rel)
            for k in CUTOFFS for beta in (1.0, 2.0, 0.5) for rel in (1, 2)]
    out += [make_metric("F", k=k, beta2=b2) for k in CUTOFFS for b2 in (0.25, 3.0)]
    out += [make_metric(fam, rel=rel) for fam in ("RPrec", "bpref", "num_rel") for rel in RELS]
    out += [make_metric(fam, k=k) for fam in ("Judged", "num_ret") for k in CUTOFFS]
    out += [make_metric(fam, k=k, judged_only=True) for fam in ("P", "R", "Success", "AP", "RR",
                                                               "F") for k in CUTOFFS]
    out += [make_metric("RPrec", judged_only=True, rel=2)]
    return out


def graded_metrics() -> list[Metric]:
    """CG, DCG, nDCG (three ideals), ERR, RBP and Best with their options."""
    out: list[Metric] = []
    for fam in ("CG", "DCG", "nDCG"):
        ideals = ("global", "max", "local") if fam == "nDCG" else (None,)
        for ideal in ideals:
            extra = {"ideal": ideal} if ideal else {}
            for k in CUTOFFS:
                out += [make_metric(fam, k=k, gain=g, rel=rel, **extra)
                        for g in ("linear", "exp") for rel in (None, 2)]
                out += [make_metric(fam, k=k, gains=gm, **extra)
                        for gm in (MONOTONE_GAINS, ODD_GAINS)]
    out += [make_metric("nDCG", k=k, ideal="max", max_grade=6.0, gain=g)
            for k in CUTOFFS for g in ("linear", "exp")]
    out += [make_metric(fam, k=k, gain_table=t) for fam in ("DCG", "nDCG") for k in CUTOFFS
            for t in TREC_GAIN_TABLES]
    out += [make_metric("ERR", k=k, max_grade=mg) for k in CUTOFFS for mg in (None, 4.0, 5.5)]
    out += [make_metric("ERR", k=k, rank_exponent=0.18) for k in CUTOFFS]
    out += [make_metric("RBP", p=p, gain=g, rel=rel)
            for p in (0.5, 0.8, 0.95) for g in ("binary", "grade") for rel in (1, 2)]
    out += [make_metric("Best", k=k) for k in CUTOFFS[1:]]
    out += [make_metric("nDCG", k=k, judged_only=True, gain=g) for k in CUTOFFS
            for g in ("linear", "exp")]
    out += [make_metric("Compat", p=p, normalize=norm)
            for p in (0.95, 0.5) for norm in (True, False)]
    return out


def all_metrics() -> list[Metric]:
    return binary_metrics() + graded_metrics()
