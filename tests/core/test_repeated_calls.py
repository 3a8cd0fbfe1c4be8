"""Evaluating many runs against one Qrels object gives what a fresh object gives.

What depends only on the qrels (the graded rows, the keyed judgments and their
hash table, each query's judged lists, and the kernels' statistics of those lists:
R per query, the judged levels, the ideal DCG's terms and cut-off sums) is worked
out once per Qrels object (:mod:`rankscope.engine.qrels_index`), and metric names
once per process: a
validation set evaluated after every epoch, a track of runs, a comparison. Here
one Qrels object (and one list of metric names) serves a sequence of random
runs and option sets, some evaluating other sets of queries than the last;
every result must be identical, bit for bit, to the result of a fresh Qrels
object, on the small-run and the large-run paths of the ranking step.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.strategies import Data, datasets, long_datasets
from core.test_invariants import ALL, OPTIONS, SOME, assert_same
from rankscope.data.tables import Qrels
from rankscope.engine import qrels_index
from rankscope.engine.evaluate import evaluate
from rankscope.engine.ranking import rank
from rankscope.metrics.base import Metric
from rankscope.result import EvaluationResult

PARTIAL_OVERLAP = r"ignore:(\d+ of the \d+ quer|no query of):rankscope.errors.RankscopeWarning"
pytestmark = [pytest.mark.filterwarnings(PARTIAL_OVERLAP),
              pytest.mark.usefixtures("both_ranking_paths")]


def _variants(data: Data, rng: random.Random) -> list[dict[str, dict[str, float]]]:
    """The run, and runs that differ: fewer queries, other scores, rows reordered."""
    out = [data.run]
    queries = list(data.run)
    for _ in range(3):
        kept = [q for q in queries if rng.random() < 0.7]
        variant: dict[str, dict[str, float]] = {}
        for q in kept:
            docs = list(data.run[q].items())
            rng.shuffle(docs)
            variant[q] = {d: (s if rng.random() < 0.5 else float(rng.randint(-3, 3)))
                          for d, s in docs}
        out.append(variant)
    return out


def _evaluate(qrels: object, run: object, opts: tuple[str, str, str],
              metrics: list[Metric] = SOME) -> EvaluationResult:
    ties, unjudged, queries = opts
    return evaluate(qrels, run, metrics, per_query=True, ties=ties,  # type: ignore[arg-type]
                    unjudged=unjudged, queries=queries,  # type: ignore[arg-type]
                    allow_no_overlap=True)


def _check_sequence(data: Data, seed: int, metrics: list[Metric] = SOME,
                    n_options: int = 4) -> None:
    rng = random.Random(seed)
    kept = Qrels.from_dict(data.qrels)  # one object for every call below
    for run in _variants(data, rng):
        for opts in rng.sample(OPTIONS, n_options):
            again = _evaluate(kept, run, opts, metrics)
            fresh = _evaluate(Qrels.from_dict(data.qrels), run, opts, metrics)
            assert_same(fresh, again, f"qrels object reused, options {opts}")


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=datasets(), seed=st.integers(0, 2**32 - 1))
def test_one_qrels_object_for_many_runs(data: Data, seed: int) -> None:
    if data.evaluated():
        _check_sequence(data, seed)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=datasets(), seed=st.integers(0, 2**32 - 1))
def test_every_metric_from_one_qrels_object(data: Data, seed: int) -> None:
    """Every family and option of every metric (trec_eval's gain tables, the ideal DCG's
    flavours, R and N, the judged levels) reads the statistics kept from the run before."""
    if data.evaluated():
        _check_sequence(data, seed, ALL, n_options=2)


def test_the_judged_lists_statistics_are_made_once_and_read_only() -> None:
    """A second run ranked against the same qrels reads the first run's statistics of the
    judged lists (the same arrays, not made again), which nobody may change in place."""
    from rankscope.data.tables import Run
    from rankscope.engine.context import Context

    qrels = Qrels.from_dict({"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d4": 1, "d5": 3}})
    first = rank(qrels, Run.from_dict({"q1": {"d1": 1.0, "d3": 2.0}, "q2": {"d5": 1.0}}))
    second = rank(qrels, Run.from_dict({"q1": {"d2": 1.0}, "q2": {"d4": 2.0, "d5": 1.0}}))
    a, b = Context(first), Context(second)
    assert a.judged_query is b.judged_query and a.n_relevant(1.0) is b.n_relevant(1.0)
    # q1 judged 2, 1, 0 best first; q2 3, 1: R at rel 1 is 2 for both
    assert a.n_relevant(1.0).tolist() == [2.0, 2.0]
    assert a.levels_view().num_rel_levels is b.levels_view().num_rel_levels
    assert a.levels_view().num_rel_levels.tolist() == [3, 4]  # highest level + 1
    with pytest.raises(ValueError, match="read-only"):
        b.judged_pos[0] = 5
    # a fresh qrels object makes its own
    fresh = Context(rank(Qrels.from_dict({"q1": {"d1": 2, "d2": 0, "d3": 1},
                                          "q2": {"d4": 1, "d5": 3}}),
                         Run.from_dict({"q1": {"d2": 1.0}})))
    assert fresh.judged_query is not a.judged_query
    assert fresh.judged_query.tolist() == a.judged_query.tolist() == [0, 0, 0, 1, 1]


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=long_datasets(), seed=st.integers(0, 2**32 - 1))
def test_one_qrels_object_for_many_long_runs(data: Data, seed: int) -> None:
    if data.evaluated():
        _check_sequence(data, seed)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=datasets(), seed=st.integers(0, 2**32 - 1))
def test_levels_and_grades_from_one_qrels_object(data: Data, seed: int) -> None:
    """trec_eval's levels and rankscope's grades are kept apart for the same queries."""
    if not data.evaluated():
        return
    from rankscope.data.tables import Run

    kept = Qrels.from_dict(data.qrels)
    run = Run.from_dict(data.run)
    for levels in (True, False, True):
        again = rank(kept, run, levels=levels, stand_in=levels)
        fresh = rank(Qrels.from_dict(data.qrels), run, levels=levels, stand_in=levels)
        for name in ("offsets", "grades", "judged_offsets", "judged_grades", "in_run"):
            a, b = getattr(again, name), getattr(fresh, name)
            assert a.tobytes() == b.tobytes(), (levels, name)
        assert again.max_grade == fresh.max_grade
        assert again.query_ids == fresh.query_ids


def test_the_kept_parts_go_with_the_qrels_object() -> None:
    qrels = Qrels.from_dict({"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}})
    evaluate(qrels, {"q1": {"d1": 1.0}, "q2": {"d3": 1.0}}, ["AP"])
    assert qrels in qrels_index._INDEXES
    held = len(qrels_index._INDEXES)
    del qrels
    import gc

    gc.collect()
    assert len(qrels_index._INDEXES) == held - 1


def test_a_few_sets_of_evaluated_queries_are_kept() -> None:
    """The intersection policy evaluates each run's own queries: the oldest sets go."""
    qrels = Qrels.from_dict({f"q{i}": {"d1": 1, "d2": 0} for i in range(12)})
    for i in range(12):
        run = {f"q{j}": {"d1": 1.0, "d2": 2.0} for j in range(i + 1)}
        result = evaluate(qrels, run, ["AP", "nDCG"], queries="intersection")
        assert result.query_ids == sorted(run)
    index = qrels_index.qrels_index(qrels)
    # three kinds of entries (keyed judgments, judged lists, their statistics)
    assert len(index._kept) <= 3 * qrels_index._KEPT


def test_results_do_not_share_the_kept_query_list() -> None:
    qrels = Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d2": 1}})
    first = evaluate(qrels, {"q1": {"d1": 1.0}}, ["P@1"], per_query=True)
    first.query_ids.append("q9")  # a caller may change what it was given
    second = evaluate(qrels, {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}, ["P@1"], per_query=True)
    assert second.query_ids == ["q1", "q2"]
    assert np.array_equal(second.values[:, 0], [1.0, 1.0])
