"""``conventions="ranx"`` gives ranx's numbers, per query and mean.

ranx is run in the test (``make_comparable=True``: without it ranx refuses
runs whose queries differ from the qrels'). ranx orders tied scores by its
own unstable sort (numba's quicksort of the scores, then reversed), which is
no rule rankscope can follow: order-dependent metrics are compared on scores
without ties, and the set metrics (no cut-off) on tied scores as well. ranx
compiles its numba kernels on first use (about 100 s once per fresh
environment), so each dataset is one ranx call for every metric.
"""

from __future__ import annotations

import math
import warnings

import pytest

import rankscope
from rankscope.metrics.conventions import PROFILES

from .data import Shape, dataset

ranx = pytest.importorskip("ranx")
pytestmark = [pytest.mark.slow,
              pytest.mark.filterwarnings("ignore::rankscope.errors.RankscopeWarning")]

NAMES = list(PROFILES["ranx"].names)
ORDER_FREE = ["precision", "recall", "hits", "f1"]  # no cut-off: the order does not matter
TOL = 1e-9


def _both_judged(qrels: dict[str, dict[str, int]], top: int) -> dict[str, dict[str, int]]:
    """Every query gets a grade >= 2 and a grade 0: ranx's bpref has no number for a query
    without a relevant or without a judged non-relevant document (see
    test_bpref_guards_where_ranx_has_no_number)."""
    return {q: {**docs, "rel_doc": top, "non_doc": 0} for q, docs in qrels.items()}


def _ranx(qrels: dict, run: dict, names: list[str]) -> tuple[list[str], dict[str, list[float]]]:
    rq, rr = ranx.Qrels(qrels), ranx.Run(run)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's chatter
        scores = ranx.evaluate(rq, rr, names, return_mean=False, make_comparable=True)
    if len(names) == 1:
        scores = {names[0]: scores}
    return list(rq.keys()), {name: [float(v) for v in scores[name]] for name in names}


def _check(qrels: dict, run: dict, names: list[str]) -> None:
    order, tool = _ranx(qrels, run, names)
    result = rankscope.evaluate(qrels, run, names, conventions="ranx", allow_no_overlap=True)
    assert result.query_ids == sorted(order)
    wrong = []
    for name in names:
        values = dict(zip(order, tool[name], strict=True))
        for q in order:
            got = result.per_query[q][name]
            if got is None or not math.isclose(got, values[q], rel_tol=0, abs_tol=TOL):
                wrong.append(f"{name} q={q}: rankscope {got!r}, ranx {values[q]!r}")
        want = math.fsum(tool[name]) / len(tool[name])  # ranx's mean: np.mean
        mean = result.means[name]
        if mean is None or not math.isclose(mean, want, rel_tol=1e-12, abs_tol=TOL):
            wrong.append(f"mean {name}: rankscope {result.means[name]!r}, ranx {want!r}")
    assert not wrong, f"{len(wrong)} mismatches\nqrels={qrels}\nrun={run}\n" + "\n".join(
        wrong[:15])


DISTINCT = [Shape("distinct", 3, True), Shape("distinct", 4, True), Shape("distinct", 4, False)]
TIED = [Shape("ties", 3, True), Shape("float32", 4, True)]


@pytest.mark.parametrize("shape", DISTINCT, ids=lambda s: f"{s.scores}-{s.top}-{s.negative}")
@pytest.mark.parametrize("seed", range(4))
def test_ranx_names_distinct_scores(shape: Shape, seed: int) -> None:
    qrels, run = dataset(seed, shape)
    _check(_both_judged(qrels, shape.top), run, NAMES)


@pytest.mark.parametrize("shape", TIED, ids=lambda s: f"{s.scores}-{s.top}-{s.negative}")
@pytest.mark.parametrize("seed", range(3))
def test_ranx_set_metrics_tied_scores(shape: Shape, seed: int) -> None:
    qrels, run = dataset(seed, shape)
    _check(qrels, run, ORDER_FREE)


def test_bpref_counts_negative_grades_as_judged_nonrelevant() -> None:
    """The issue's case: ranx's bpref reads grade -1 as judged non-relevant; the profile
    follows it, rankscope's default (trec_eval) skips the document."""
    qrels = {"q": {"a": 1, "b": -1, "c": 0, "d": 2}}
    run = {"q": {"b": 4.0, "a": 3.0, "c": 2.0, "d": 1.0}}
    _, tool = _ranx(qrels, run, ["bpref"])
    # ranx: R = 2 (a, d), N = 2 (b, c); a has 1 non-relevant above, d has 2:
    # (1 - 1/2) + (1 - 2/2) = 1/2, over R: 1/4. trec_eval: N = 1 (c); a: 1, d: 1 - 1/1 = 0.
    assert tool["bpref"] == [pytest.approx(0.25)]
    assert rankscope.evaluate(qrels, run, "bpref", conventions="ranx")["bpref"] == 0.25
    assert rankscope.evaluate(qrels, run, "bpref")["bpref"] == 0.5


def test_bpref_guards_where_ranx_has_no_number() -> None:
    """Where ranx divides by zero (no judged non-relevant document: NaN), the ranx
    variant keeps trec_eval's guard: each retrieved relevant document counts 1."""
    qrels = {"q": {"a": 1, "b": 2}}
    run = {"q": {"a": 2.0, "x": 1.0}}
    _, tool = _ranx(qrels, run, ["bpref"])
    assert math.isnan(tool["bpref"][0])
    assert rankscope.evaluate(qrels, run, "bpref", conventions="ranx")["bpref"] == 0.5
