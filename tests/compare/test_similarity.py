"""Rank similarity: RBO (min, res, ext) from hand arithmetic, Jaccard, overlap, Kendall's tau."""

from __future__ import annotations

import itertools
import math
import random
from collections import deque

import pytest

from rankscope.compare.rank_similarity import similarity
from rankscope.engine.evaluate import evaluate
from rankscope.errors import (
    MetricError,
    MetricParameterError,
    NoOverlapError,
    OptionError,
    RankscopeWarning,
)
from rankscope.metrics.parser import parse_metric


def _run(*lists: list[str]) -> dict[str, dict[str, float]]:
    """One query per list, q0, q1, ...; the list order is the ranking (scores descending)."""
    return {f"q{i}": {doc: float(100 - r) for r, doc in enumerate(docs)}
            for i, docs in enumerate(lists)}


def _value(a: list[str], b: list[str], metric: str) -> float | None:
    return similarity(_run(a), _run(b), [metric])[metric]


# ---- RBO by hand ------------------------------------------------------------

def test_rbo_equal_lengths_by_hand() -> None:
    # S = a b c, T = b a d, p = 0.5. Overlaps: X1 = 0, X2 = 2, X3 = 2.
    s, t = ["a", "b", "c"], ["b", "a", "d"]
    # Seed 000's RBO_EXT = X3/3 p^3 + (1-p)/p sum X_d/d p^d
    #   = (2/3)(1/8) + 1 * (0 + (2/2)(1/4) + (2/3)(1/8)) = 1/12 + 1/4 + 1/12 = 5/12
    assert _value(s, t, "rbo(p=0.5)") == pytest.approx(5 / 12, abs=1e-12)
    assert _value(s, t, "RBO(p=0.5,form=ext)") == pytest.approx(5 / 12, abs=1e-12)
    # RBO_MIN = (1-p)/p (sum (X_d - X3)/d p^d - X3 ln(1-p))
    #   = (-2)(1/2) + 0 + 0 + 2 ln 2 = 2 ln 2 - 1
    assert _value(s, t, "rbo_min(p=0.5)") == pytest.approx(2 * math.log(2) - 1, abs=1e-12)
    # The upper bound: the best continuation is S4 = d, T4 = c, then agreement 1 forever,
    # so A = 0, 1, 2/3, 1, 1, ... and RBO_MAX = (1/2)(0 + (1/2)(1) + (1/4)(2/3) + 1/4) = 11/24.
    # RBO_RES = RBO_MAX - RBO_MIN.
    assert _value(s, t, "rbo_res(p=0.5)") == pytest.approx(11 / 24 - (2 * math.log(2) - 1),
                                                          abs=1e-12)


def test_rbo_unequal_lengths_by_hand() -> None:
    # S = a b (s = 2), L = b c a d (l = 4), p = 0.5. X1 = 0, X2 = 1, X3 = 2, X4 = 2 (S's two
    # documents against L's first d). X_s = 1, X_l = 2.
    s, big = ["a", "b"], ["b", "c", "a", "d"]
    # EXT = (1-p)/p [sum_{d<=4} X_d/d p^d + sum_{d=3,4} X_s (d-s)/(s d) p^d]
    #       + ((X_l - X_s)/l + X_s/s) p^l
    #     = [(1/2)(1/4) + (2/3)(1/8) + (2/4)(1/16)] + [(1/6)(1/8) + (2/8)(1/16)]
    #       + (1/4 + 1/2)(1/16)
    #     = 23/96 + 7/192 + 3/64 = 31/96
    assert _value(s, big, "rbo(p=0.5)") == pytest.approx(31 / 96, abs=1e-12)
    assert _value(big, s, "rbo(p=0.5)") == pytest.approx(31 / 96, abs=1e-12)  # symmetric
    # MIN = (1-p)/p [sum (X_d - 2)/d p^d - 2 ln(1/2)] = -1 - 1/8 + 2 ln 2
    assert _value(s, big, "rbo_min(0.5)") == pytest.approx(2 * math.log(2) - 1.125, abs=1e-12)
    # MAX: S3 = c, S4 = d, then full agreement: A = 0, 1/2, 1, 1, ...
    #   RBO_MAX = (1/2)(0 + (1/2)(1/2) + 1/4 + 1/4) = 3/8
    assert _value(s, big, "rbo_res(0.5)") == pytest.approx(3 / 8 - (2 * math.log(2) - 1.125),
                                                           abs=1e-12)


def test_rbo_no_overlap() -> None:
    s, t = ["a", "b", "c"], ["x", "y", "z"]
    assert _value(s, t, "rbo(p=0.5)") == 0.0
    assert _value(s, t, "rbo_min(p=0.5)") == 0.0
    # MAX: S4.. = x y z and T4.. = a b c give X4 = 2, X5 = 4, X6 = 6, then X_d = d:
    #   (1/2)((1/8)(2/4) + (1/16)(4/5) + sum_{d>=6} (1/2)^{d-1}) = (1/2)(1/16 + 1/20 + 1/16)
    assert _value(s, t, "rbo_res(p=0.5)") == pytest.approx(0.5 * (1 / 16 + 1 / 20 + 1 / 16),
                                                           abs=1e-12)


@pytest.mark.parametrize("p", [0.5, 0.9, 0.98])
def test_identical_rankings(p: float) -> None:
    docs = [f"d{i}" for i in range(30)]
    result = similarity(_run(docs), _run(docs),
                        [f"rbo(p={p})", f"rbo_min(p={p})", f"rbo_res(p={p})", "jaccard@10",
                         "overlap@10", "kendall_tau"])
    assert result[f"rbo(p={p})"] == pytest.approx(1.0, abs=1e-12)
    # Lower bound plus residual is the upper bound, which is 1 here.
    assert result[f"rbo_min(p={p})"] + result[f"rbo_res(p={p})"] == pytest.approx(1.0)
    assert result["jaccard@10"] == 1.0
    assert result["overlap@10"] == 1.0
    assert result["kendall_tau"] == 1.0


def test_empty_side_and_both_empty() -> None:
    a = {"q1": {"d1": 1.0, "d2": 0.5}}
    b = {"q2": {"d1": 1.0}}
    with pytest.raises(NoOverlapError, match=r"no query of run 'run' \(1 query: q1\) is in "
                                            r"run 'run' \(1 query: q2\)"):
        similarity(a, b, "jaccard")
    with pytest.warns(RankscopeWarning, match="no query of"):
        result = similarity(a, b, ["rbo(p=0.9)", "rbo_min(0.9)", "rbo_res(0.9)", "jaccard",
                                   "overlap@5", "kendall_tau"], per_query=True,
                            allow_no_overlap=True)
    # Union: q1 is empty in b, q2 empty in a. Nothing shared; RES = 1 (anything possible).
    for q in ("q1", "q2"):
        row = result.per_query[q]
        assert (row["rbo(p=0.9)"], row["rbo_min(0.9)"]) == (0.0, 0.0)
        assert row["rbo_res(0.9)"] == pytest.approx(1.0)
        assert (row["jaccard"], row["overlap@5"], row["kendall_tau"]) == (0.0, 0.0, None)
    with pytest.warns(RankscopeWarning, match="no query of"):
        inter = similarity(a, b, "rbo(p=0.9)", queries="intersection", allow_no_overlap=True)
    assert inter.query_ids == [] and inter["rbo(p=0.9)"] is None


# ---- against slow references ---------------------------------------------------

def _x(s: list[str], t: list[str], d: int) -> int:
    return len(set(s[:d]) & set(t[:d]))


def _ext_reference(a: list[str], b: list[str], p: float) -> float:
    """RBO_EXT for uneven lists written term by term from the formula."""
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    s, l_ = len(short), len(long_)
    xs, xl = _x(short, long_, s), _x(short, long_, l_)
    first = sum(_x(short, long_, d) / d * p**d for d in range(1, l_ + 1))
    second = sum(xs * (d - s) / (s * d) * p**d for d in range(s + 1, l_ + 1))
    return (1 - p) / p * (first + second) + ((xl - xs) / l_ + xs / s) * p**l_


def _seed_ext(s: list[str], t: list[str], p: float) -> float:
    """Seed 000's RBO_EXT for two lists of the same length k."""
    k = len(s)
    return (_x(s, t, k) / k * p**k
            + (1 - p) / p * sum(_x(s, t, d) / d * p**d for d in range(1, k + 1)))


def _truncated(s: list[str], t: list[str], p: float, depth: int) -> float:
    """(1 - p) sum_{d <= depth} p^(d-1) X_d / d, X_d counted one depth at a time."""
    seen_s: set[str] = set()
    seen_t: set[str] = set()
    overlap = 0
    total = 0.0
    for d in range(1, depth + 1):
        x, y = s[d - 1], t[d - 1]
        overlap += (x in seen_t) + (y in seen_s) + (x == y)
        seen_s.add(x)
        seen_t.add(y)
        total += p ** (d - 1) * overlap / d
    return (1 - p) * total


DEPTH = 1500  # the tail beyond it weighs p^1500 < 1e-33 for p <= 0.95


def _min_brute(a: list[str], b: list[str], p: float, depth: int = DEPTH) -> float:
    """No agreement beyond what was seen: extend both with documents nobody else has."""
    s = a + [f"a-only-{i}" for i in range(depth)]
    t = b + [f"b-only-{i}" for i in range(depth)]
    return _truncated(s[:depth], t[:depth], p, depth)


def _max_brute(a: list[str], b: list[str], p: float, depth: int = DEPTH) -> float:
    """Best agreement: every unseen position takes a document the other list already shows.

    At depth d a list past its known part takes the earliest document of the
    other list's first d (its first d - 1 when both are unknown there) that it
    lacks; with nothing to take, both take the same new document.
    """
    set_s: set[str] = set()
    set_t: set[str] = set()
    want_s: deque[str] = deque()  # documents t shows that s lacks, in t's order
    want_t: deque[str] = deque()
    new_ids = itertools.count()
    overlap = 0
    total = 0.0

    def pick(want: deque[str], have: set[str]) -> str | None:
        while want and want[0] in have:
            want.popleft()
        return want.popleft() if want else None

    def put_s(x: str) -> None:
        nonlocal overlap
        overlap += x in set_t
        set_s.add(x)
        if x not in set_t:
            want_t.append(x)

    def put_t(y: str) -> None:
        nonlocal overlap
        overlap += y in set_s
        set_t.add(y)
        if y not in set_s:
            want_s.append(y)

    for d in range(1, depth + 1):
        known_s = a[d - 1] if d <= len(a) else None
        known_t = b[d - 1] if d <= len(b) else None
        if known_s is not None and known_t is not None:
            put_s(known_s)
            put_t(known_t)
        elif known_t is not None:
            put_t(known_t)
            put_s(pick(want_s, set_s) or f"new{next(new_ids)}")
        elif known_s is not None:
            put_s(known_s)
            put_t(pick(want_t, set_t) or f"new{next(new_ids)}")
        else:
            x, y = pick(want_s, set_s), pick(want_t, set_t)
            if x is None and y is None:
                x = y = f"new{next(new_ids)}"
            put_s(x or f"new{next(new_ids)}")
            put_t(y or f"new{next(new_ids)}")
        total += p ** (d - 1) * overlap / d
    return (1 - p) * total


def _random_lists(seed: int, n: int) -> list[tuple[list[str], list[str]]]:
    rng = random.Random(seed)
    pool = [f"d{i}" for i in range(14)]
    return [(rng.sample(pool, rng.randint(1, 9)), rng.sample(pool, rng.randint(1, 9)))
            for _ in range(n)]


@pytest.mark.parametrize("p", [0.5, 0.8, 0.95])
def test_rbo_forms_against_references(p: float) -> None:
    cases = _random_lists(int(p * 100), 60)
    a = _run(*[c[0] for c in cases])
    b = _run(*[c[1] for c in cases])
    result = similarity(a, b, [f"rbo(p={p})", f"rbo_min(p={p})", f"rbo_res(p={p})"])
    rows = result.per_query
    for i, (s, t) in enumerate(cases):
        row = rows[f"q{i}"]
        assert row[f"rbo(p={p})"] == pytest.approx(_ext_reference(s, t, p), abs=1e-12)
        assert row[f"rbo_min(p={p})"] == pytest.approx(_min_brute(s, t, p), abs=1e-9)
        upper = row[f"rbo_min(p={p})"] + row[f"rbo_res(p={p})"]
        assert upper == pytest.approx(_max_brute(s, t, p), abs=1e-9)
        if len(s) == len(t):
            assert row[f"rbo(p={p})"] == pytest.approx(_seed_ext(s, t, p), abs=1e-12)


def test_cut_off_truncates_both_lists() -> None:
    s, t = ["a", "b", "c", "x"], ["b", "a", "d", "x"]
    # @3 sees a b c vs b a d: the first hand example (5/12 at p = 0.5).
    assert _value(s, t, "rbo(p=0.5)@3") == pytest.approx(5 / 12, abs=1e-12)


# ---- Jaccard, overlap, Kendall ----------------------------------------------------

def test_jaccard_and_overlap_by_hand() -> None:
    s, t = ["a", "b", "c", "d"], ["b", "e", "a"]
    # top 2: {a, b} vs {b, e}: 1 shared of 3 -> J = 1/3; overlap@2 = 1/2
    assert _value(s, t, "jaccard@2") == pytest.approx(1 / 3)
    assert _value(s, t, "overlap@2") == pytest.approx(1 / 2)
    # whole lists: {a,b,c,d} vs {b,e,a}: 2 shared of 5
    assert _value(s, t, "jaccard") == pytest.approx(2 / 5)
    # overlap@10 divides by 10 even though the lists are shorter: 2 / 10
    assert _value(s, t, "overlap@10") == pytest.approx(0.2)


def test_kendall_tau_by_hand_and_against_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    s, t = ["a", "b", "c", "d", "x"], ["d", "b", "a", "y", "c"]
    # Shared a b c d; ranks in t in s's order: 3 2 5 1. Pairs (6): concordant (a,c), (b,c);
    # discordant (a,b), (a,d), (b,d), (c,d): tau = (2 - 4) / 6.
    assert _value(s, t, "kendall_tau") == pytest.approx(-1 / 3)
    assert _value(s, t, "kendall_tau") == pytest.approx(
        stats.kendalltau([1, 2, 3, 4], [3, 2, 5, 1]).statistic)
    # @3: a b c vs d b a: shared a, b; a<b in s, a>b in t: tau = -1
    assert _value(s, t, "kendall_tau@3") == -1.0
    assert _value(["a", "b"], ["a", "c"], "kendall_tau") is None  # one shared document


def test_score_ties_follow_the_evaluation_rule() -> None:
    # Equal scores rank by document id descending: a = d2, d1 (like b's explicit order).
    a = {"q": {"d1": 1.0, "d2": 1.0}}
    b = {"q": {"d2": 2.0, "d1": 1.0}}
    assert similarity(a, b, "kendall_tau")["kendall_tau"] == 1.0
    # In input order a is d1, d2: reversed against b.
    assert similarity(a, b, "kendall_tau", ties="input")["kendall_tau"] == -1.0


# ---- names, shape, refusals ------------------------------------------------------

@pytest.mark.parametrize(("name", "form", "p"), [
    ("rbo(p=0.9)", "ext", 0.9), ("RBO(p=0.8)", "ext", 0.8), ("rbo_ext(p=0.7)", "ext", 0.7),
    ("RBO(p=0.9,form=ext)", "ext", 0.9), ("RBO(p=0.9,form=min)", "min", 0.9),
    ("rbo_min(0.6)", "min", 0.6), ("rbo_res(p=0.5)", "res", 0.5), ("RBO", "ext", 0.9),
])
def test_rbo_spellings(name: str, form: str, p: float) -> None:
    metric = parse_metric(name)
    assert (metric.family, metric.get("form"), metric.get("p")) == ("RBO", form, p)


def test_other_spellings_and_bad_parameters() -> None:
    assert parse_metric("jaccard@10").family == "Jaccard"
    assert parse_metric("overlap@10").k == 10
    assert parse_metric("kendall_tau").family == "KendallTau"
    with pytest.raises(MetricParameterError):
        parse_metric("rbo(p=1)")
    with pytest.raises(MetricParameterError):
        parse_metric("overlap")  # needs @k
    with pytest.raises(MetricParameterError):
        parse_metric("rbo_min(form=ext)")


def test_evaluate_refuses_similarity_and_similarity_refuses_effectiveness() -> None:
    run = {"q": {"d1": 1.0}}
    with pytest.raises(MetricError):
        evaluate({"q": {"d1": 1}}, run, "rbo(p=0.9)")
    with pytest.raises(MetricError, match="not a rank-similarity measure"):
        similarity(run, run, "nDCG@10")
    with pytest.raises(OptionError):
        similarity(run, run, "jaccard", queries="qrels")  # type: ignore[arg-type]


def test_json_shape_is_evaluates() -> None:
    a = _run(["a", "b"], ["c"])
    b = _run(["b", "a"], ["c", "d"])
    out = similarity(a, b, ["jaccard", "overlap@2"], per_query=True,
                     names=("old", "new")).to_dict()
    assert set(out) == {"mean", "n_queries", "std", "interval", "confidence", "per_query", "info"}
    # q0: {a,b} vs {b,a} -> J 1; q1: {c} vs {c,d} -> J 1/2; mean 3/4
    assert out["mean"]["jaccard"] == pytest.approx(0.75)
    assert out["per_query"]["q1"] == {"jaccard": 0.5, "overlap@2": 0.5}
    assert out["info"]["run_a"] == "old" and out["info"]["run_b"] == "new"
