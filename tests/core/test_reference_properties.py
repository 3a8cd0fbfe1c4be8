"""The engine equals an independent reference implementation, everywhere.

``core.reference`` computes every metric one query at a time from its
definition; here random qrels and runs (ties, unjudged and null-graded
documents, fractional and negative grades, empty rankings, queries missing on
either side, long rankings) are evaluated by both, for every metric family,
every option of it, and every evaluation option (ties, unjudged, queries).
Per-query values, query ids and means must agree to 1e-9.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.reference import as_float, reference_evaluate
from core.strategies import (
    Data,
    all_metrics,
    binary_metrics,
    datasets,
    grade_values,
    graded_metrics,
    long_datasets,
)
from rankscope.engine.evaluate import evaluate
from rankscope.metrics.base import Metric, make_metric
from rankscope.result import EvaluationResult

# The data are generated with queries missing on either side, on purpose: the partial-overlap
# warning is tested in tests/data/test_overlap.py; here the subject is the numbers.
PARTIAL_OVERLAP = r"ignore:(\d+ of the \d+ quer|no query of):rankscope.errors.RankscopeWarning"
pytestmark = [pytest.mark.filterwarnings(PARTIAL_OVERLAP),
              pytest.mark.usefixtures("both_ranking_paths")]

TOL = 1e-9
TIES = ("trec", "input")
UNJUDGED = ("nonrelevant", "condensed")
QUERIES = ("qrels", "intersection", "nonnull")
OPTIONS = [(t, u, q) for t in TIES for u in UNJUDGED for q in QUERIES]

# bpref is tested on its own below: its treatment of negative grades differs.
BINARY = [m for m in binary_metrics() if m.family != "bpref"]
BPREF = [m for m in binary_metrics() if m.family == "bpref"]
GRADED = graded_metrics()
ALL = BINARY + GRADED


def _close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=TOL)


def _short(obj: object, limit: int = 1500) -> str:
    text = repr(obj)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def check_info(data: Data, result: EvaluationResult, **options: str) -> None:
    """The result says which policy it used and how the query sets compared."""
    info = result.info
    assert (info.queries, info.ties, info.unjudged) == (
        options["queries"], options["ties"], options["unjudged"])
    graded = {q for q, docs in data.qrels.items() if any(g is not None for g in docs.values())}
    ranked = {q for q, docs in data.run.items() if docs}
    assert info.n_evaluated == len(result.query_ids)
    assert info.n_run_queries == len(ranked)
    assert info.n_qrels_queries == len(graded)
    assert info.missing_from_run == sorted(graded - ranked)  # every policy names them
    assert set(info.run_only) == ranked - graded  # a query with only null grades is not judged


def check(
    data: Data,
    metrics: Sequence[Metric],
    *,
    ties: str = "trec",
    unjudged: str = "nonrelevant",
    queries: str = "qrels",
) -> None:
    """Evaluate with both and compare query ids, every value and every mean."""
    result = evaluate(data.qrels, data.run, list(metrics), per_query=True, ties=ties,
                      unjudged=unjudged, queries=queries,  # type: ignore[arg-type]
                      allow_no_overlap=True)  # generated runs may be empty
    ref = reference_evaluate(data.qrels, data.run, metrics, ties=ties, unjudged=unjudged,
                             queries=queries)
    assert result.query_ids == ref.query_ids
    assert result.values.shape == (len(ref.query_ids), len(metrics))
    check_info(data, result, ties=ties, unjudged=unjudged, queries=queries)
    wrong = []
    for j, metric in enumerate(metrics):
        for i, q in enumerate(ref.query_ids):
            got, want = float(result.values[i, j]), ref.values[i][j]
            if not _close(got, want):
                wrong.append(f"{metric.name} q={q!r}: engine {got!r}, reference {want!r}")
        got_mean = as_float(result.means[result.labels[j]])
        if not _close(got_mean, as_float(ref.means[j])):
            wrong.append(f"{metric.name} mean: engine {got_mean!r}, reference {ref.means[j]!r}")
    assert not wrong, (
        f"{len(wrong)} mismatches (ties={ties}, unjudged={unjudged}, queries={queries})\n"
        f"qrels={_short(data.qrels)}\nrun={_short(data.run)}\n" + "\n".join(wrong[:25])
    )


options = st.sampled_from(OPTIONS)
FAST = settings(max_examples=100, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ---------------------------------------------------------------- the reference itself
# Hand-computed values (arithmetic in the comments) and the seeds' worked
# examples pin the reference, so that agreement with it means something.


def _ref1(grades: list[float | None], metric: Metric, judged: list[float] | None = None,
          ties: str = "input") -> float:
    """Reference value of one query whose ranking has these grades, in this order."""
    docs = [f"r{i:03d}" for i in range(len(grades))]
    run = {"q": {d: float(len(docs) - i) for i, d in enumerate(docs)}}
    qrels: dict[str, dict[str, float | None]] = {
        "q": {d: g for d, g in zip(docs, grades, strict=True) if g is not None}}
    for i, g in enumerate(judged or []):
        qrels["q"][f"extra{i}"] = g
    return reference_evaluate(qrels, run, [metric], ties=ties).values[0][0]


def test_reference_seed_001_examples() -> None:
    # seed 001: P@5 of (1,1,0,0,1) = 3/5; AP@5 of (0,0,1,1,1) over its 3 relevant
    # = (1/3 + 2/4 + 3/5) / 3 = 0.4777778; CG (4,3,2,1,0) = 10.
    assert _ref1([1, 1, 0, 0, 1], make_metric("P", k=5)) == pytest.approx(0.6)
    assert _ref1([0, 0, 1, 1, 1], make_metric("AP", k=5)) == pytest.approx(0.4777778, abs=1e-7)
    assert _ref1([4, 3, 2, 1, 0], make_metric("CG", k=5)) == 10
    # DCG (4,3,2,1,0): 4 + 3/log2(3) + 2/2 + 1/log2(5) = 7.323466; exp: 21.34718
    assert _ref1([4, 3, 2, 1, 0], make_metric("DCG", k=5)) == pytest.approx(7.323466, abs=1e-6)
    assert _ref1([4, 3, 2, 1, 0], make_metric("DCG", k=5, gain="exp")) == pytest.approx(
        21.34718, abs=1e-5)
    # local ideal: (3,2,1,4,0) -> 0.8854504, (0,1,2,3,4) -> 0.6104174
    local = make_metric("nDCG", k=5, ideal="local")
    assert _ref1([3, 2, 1, 4, 0], local) == pytest.approx(0.8854504, abs=1e-7)
    assert _ref1([0, 1, 2, 3, 4], local) == pytest.approx(0.6104174, abs=1e-7)
    # global ideal over the whole "index" (4,3,2,1,1,0,3,4,0,0) at k=5: 0.7641958
    glob = make_metric("nDCG", k=5)
    assert _ref1([4, 3, 2, 1, 1, 0, 3, 4, 0, 0], glob) == pytest.approx(0.7641958, abs=1e-7)


def test_reference_seed_003_capped_recall() -> None:
    # seed 003: ranks 1-3, 6-8, 10 relevant (7 relevant): R@5 = 3/7, R_cap@5 = 3/5
    grades: list[float | None] = [1, 1, 1, 0, 0, 1, 1, 1, 0, 1]
    assert _ref1(grades, make_metric("R", k=5)) == pytest.approx(3 / 7)
    assert _ref1(grades, make_metric("R_cap", k=5)) == pytest.approx(3 / 5)


def test_reference_hand_computed() -> None:
    g: list[float | None] = [0, None, 2, 1, 0]  # one extra relevant judged document
    extra = [3.0]
    # R = 3 (grades 2, 1, 3). AP = (1/3 + 2/4) / 3; RR = 1/3; RPrec = P@3 = 1/3
    assert _ref1(g, make_metric("AP"), extra) == pytest.approx((1 / 3 + 2 / 4) / 3)
    assert _ref1(g, make_metric("RR"), extra) == pytest.approx(1 / 3)
    assert _ref1(g, make_metric("RPrec"), extra) == pytest.approx(1 / 3)
    # bpref: N = 2 judged non-relevant (grades 0, 0); relevant at rank 3 has 1
    # non-relevant above: 1 - min(1,3)/min(2,3) = 1/2; rank 4 the same: 1/2.
    # (1/2 + 1/2) / R = 1/3
    assert _ref1(g, make_metric("bpref"), extra) == pytest.approx(1 / 3)
    # Judged@2 = 1/2 (rank 2 unjudged); Judged@10 over 5 retrieved = 4/5
    assert _ref1(g, make_metric("Judged", k=2), extra) == pytest.approx(1 / 2)
    assert _ref1(g, make_metric("Judged", k=10), extra) == pytest.approx(4 / 5)
    # ERR (max grade 3): R_i = (2^g - 1)/8 -> rank 3: 3/8, rank 4: 1/8
    # ERR = (3/8)/3 + (1 - 3/8)(1/8)/4
    assert _ref1(g, make_metric("ERR"), extra) == pytest.approx(1 / 8 + (5 / 8) * (1 / 32))
    # ERR-0.18: position factors 1/3^0.18 and 1/4^0.18 instead of 1/3 and 1/4
    assert _ref1(g, make_metric("ERR", rank_exponent=0.18), extra) == pytest.approx(
        (3 / 8) / 3**0.18 + (5 / 8) * (1 / 8) / 4**0.18)
    # RBP p=0.5 binary: (1 - .5)(.5^2 + .5^3); graded: (1 - .5)(2 * .5^2 + 1 * .5^3)
    assert _ref1(g, make_metric("RBP", p=0.5), extra) == pytest.approx(0.5 * (0.25 + 0.125))
    assert _ref1(g, make_metric("RBP", p=0.5, gain="grade"), extra) == pytest.approx(
        0.5 * (0.5 + 0.125))
    # F1@5: P = 2/5, R = 2/3 -> 2PR/(P+R) = (8/15)/(16/15) = 1/2
    assert _ref1(g, make_metric("F", k=5), extra) == pytest.approx(0.5)
    # Best@3: top grade 3 is not retrieved -> 0
    assert _ref1(g, make_metric("Best", k=3), extra) == 0
    assert _ref1([1, 3], make_metric("Best", k=2), [3.0]) == 1
    # max ideal, k=2, top grade 3: ranking (2, 1) -> (2 + 1/log2 3) / (3 + 3/log2 3)
    assert _ref1([2, 1], make_metric("nDCG", k=2, ideal="max"), [3.0]) == pytest.approx(
        (2 + 1 / math.log2(3)) / (3 + 3 / math.log2(3)))


def test_reference_tie_break_is_doc_id_descending_bytes() -> None:
    # all scores equal: trec order is doc id descending by bytes: "é" > "d2" > "d10" > "D1"
    qrels = {"q": {"D1": 1}}
    run = {"q": {"d10": 1.0, "D1": 1.0, "é": 1.0, "d2": 1.0}}
    rr = make_metric("RR")
    assert reference_evaluate(qrels, run, [rr]).values[0][0] == pytest.approx(1 / 4)
    assert reference_evaluate(qrels, run, [rr], ties="input").values[0][0] == pytest.approx(1 / 2)


# ---------------------------------------------------------------- engine == reference


@pytest.mark.parametrize(("ties", "unjudged", "queries"), OPTIONS)
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=datasets())
def test_every_metric_every_option(data: Data, ties: str, unjudged: str, queries: str) -> None:
    """All ~350 metrics at once, each evaluation option combination."""
    if not data.evaluated():
        return
    check(data, ALL, ties=ties, unjudged=unjudged, queries=queries)


@FAST
@given(data=datasets(), opts=options)
def test_binary_metrics(data: Data, opts: tuple[str, str, str]) -> None:
    if not data.evaluated():
        return
    ties, unjudged, queries = opts
    check(data, BINARY, ties=ties, unjudged=unjudged, queries=queries)


@FAST
@given(data=datasets(), opts=options)
def test_graded_metrics(data: Data, opts: tuple[str, str, str]) -> None:
    if not data.evaluated():
        return
    ties, unjudged, queries = opts
    check(data, GRADED, ties=ties, unjudged=unjudged, queries=queries)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=datasets(grades=grade_values(integer=True, nulls=False, negative=False),
                     missing=False, empty_rankings=False), opts=options)
def test_plain_integer_data(data: Data, opts: tuple[str, str, str]) -> None:
    """The common case (graded 0-4, every query on both sides) on its own."""
    ties, unjudged, queries = opts
    check(data, ALL, ties=ties, unjudged=unjudged, queries=queries)


# One metric per family / option, for the long rankings (the reference is slow).
LONG = [
    make_metric("P", k=10), make_metric("P"), make_metric("R", k=1000), make_metric("R_cap", k=50),
    make_metric("F", k=100, beta=2.0), make_metric("Hits", k=100), make_metric("Success", k=5),
    make_metric("RPrec"), make_metric("AP"), make_metric("AP", k=100, rel=2), make_metric("RR"),
    make_metric("Judged", k=100),
    make_metric("num_ret"), make_metric("num_rel"), make_metric("num_rel_ret"),
    make_metric("CG", k=100), make_metric("DCG", gain="exp"), make_metric("nDCG"),
    make_metric("nDCG", k=10), make_metric("nDCG", k=100, ideal="max"),
    make_metric("nDCG", k=100, ideal="local", gain="exp"), make_metric("nDCG", gains="1=2,2=5"),
    make_metric("ERR", k=200), make_metric("RBP", p=0.95), make_metric("RBP", p=0.99, gain="grade"),
    make_metric("Best", k=50),
]


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=long_datasets(), opts=options)
def test_long_rankings(data: Data, opts: tuple[str, str, str]) -> None:
    ties, unjudged, queries = opts
    check(data, LONG, ties=ties, unjudged=unjudged, queries=queries)


# ---------------------------------------------------------------- bpref


@FAST
@given(data=datasets(grades=grade_values(negative=False)), opts=options)
def test_bpref_nonnegative_grades(data: Data, opts: tuple[str, str, str]) -> None:
    if not data.evaluated():
        return
    ties, unjudged, queries = opts
    check(data, BPREF, ties=ties, unjudged=unjudged, queries=queries)


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=long_datasets(negative=False), opts=options)
def test_bpref_long_rankings(data: Data, opts: tuple[str, str, str]) -> None:
    ties, unjudged, queries = opts
    check(data, BPREF, ties=ties, unjudged=unjudged, queries=queries)


def test_bpref_negative_grade_minimal() -> None:
    """trec_eval reads a negative grade as "in the pool but unjudged" (form_res_rels.c:
    rel < 0 -> RELVALUE_UNJUDGED, not counted in rel_levels), and m_bpref.c skips
    such documents: they are neither counted among the N judged non-relevant
    documents nor ranked above a relevant one. Here the ranking is d2 (grade -1),
    d1 (grade 1); R = 1, N = 0, no judged non-relevant document precedes d1, so
    bpref = 1 (pytrec_eval says 1.0 too). Treating -1 as judged non-relevant
    gives 1 - min(1, 1) / min(3, 1) = 0.
    """
    qrels = {"q1": {"d1": 1, "d2": -1, "d10": -1, "D1": -1}}
    run = {"q1": {"d1": -1.0, "d2": -1.0}}  # tie: d2 ranks first (doc id descending)
    assert reference_evaluate(qrels, run, [make_metric("bpref")]).values == [[1.0]]
    result = evaluate(qrels, run, ["bpref"], per_query=True)
    assert result.values[0, 0] == pytest.approx(1.0)


@FAST
@given(data=datasets(), opts=options)
def test_bpref_any_grades(data: Data, opts: tuple[str, str, str]) -> None:
    """With negative grades too (trec_eval's convention, see the test above)."""
    if not data.evaluated():
        return
    ties, unjudged, queries = opts
    check(data, BPREF, ties=ties, unjudged=unjudged, queries=queries)


def test_metric_grid_covers_every_family() -> None:
    """The grid above names every family the engine registers (bar RBO-like ones)."""
    from rankscope.metrics.base import FAMILIES

    tested = {m.family for m in all_metrics()}
    untested = {name for name, fam in FAMILIES.items() if name not in tested and fam.group in
                ("binary", "graded")}
    assert not untested, f"families without a reference test: {sorted(untested)}"
    # and every parameter of every family is tried with a value other than its default
    grid = all_metrics()
    for name in tested:
        for param in FAMILIES[name].params:
            assert any(m.family == name and m.get(param.name) != param.default for m in grid), (
                f"{name}: parameter {param.name!r} only tested at its default")
