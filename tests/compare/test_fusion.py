"""Fusion methods and normalizations on small cases computed by hand; the grid search."""

from __future__ import annotations

import math

import pytest

from rankscope.errors import NoOverlapError, OptionError, RankscopeWarning
from rankscope.fusion.combine import fuse, normalize
from rankscope.fusion.optimize import optimize_fusion, simplex_weights

# A ranks d1 (3), d2 (2), d3 (1); B ranks d2 (4), d4 (2).
A = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
B = {"q1": {"d2": 4.0, "d4": 2.0}}


def _fused(method: str, **options: object) -> dict[str, float]:
    return fuse([A, B], method=method, **options).to_dict()["q1"]  # type: ignore[arg-type]


def test_normalizations_by_hand() -> None:
    # min-max: (s - 1) / (3 - 1)
    assert normalize(A, "min-max").to_dict()["q1"] == {"d1": 1.0, "d2": 0.5, "d3": 0.0}
    # sum: (s - min) / (sum - n min) = (s - 1) / (6 - 3)
    assert normalize(A, "sum").to_dict()["q1"] == pytest.approx(
        {"d1": 2 / 3, "d2": 1 / 3, "d3": 0.0})
    # max: s / 3
    assert normalize(A, "max").to_dict()["q1"] == pytest.approx(
        {"d1": 1.0, "d2": 2 / 3, "d3": 1 / 3})
    # rank: 1 - (r - 1) / n
    assert normalize(A, "rank").to_dict()["q1"] == pytest.approx(
        {"d1": 1.0, "d2": 2 / 3, "d3": 1 / 3})
    # z-score: mean 2, population sd sqrt(2/3): (3 - 2) / sqrt(2/3) = sqrt(3/2)
    z = math.sqrt(1.5)
    assert normalize(A, "zscore").to_dict()["q1"] == pytest.approx(
        {"d1": z, "d2": 0.0, "d3": -z})
    assert normalize(A, "none").to_dict() == A
    # A list of equal scores: min-max has no spread; the 1e-9 floor maps it to 0 (as ranx).
    assert normalize({"q": {"x": 5.0, "y": 5.0}}, "min-max").to_dict()["q"] == {
        "x": 0.0, "y": 0.0}


def test_comb_methods_min_max_by_hand() -> None:
    # min-max: A -> d1 1, d2 0.5, d3 0; B -> d2 1, d4 0.
    assert _fused("combsum") == {"d1": 1.0, "d2": 1.5, "d3": 0.0, "d4": 0.0}
    assert _fused("combmnz") == {"d1": 1.0, "d2": 3.0, "d3": 0.0, "d4": 0.0}  # 1.5 * 2 runs
    assert _fused("combmax") == {"d1": 1.0, "d2": 1.0, "d3": 0.0, "d4": 0.0}
    assert _fused("combmin") == {"d1": 1.0, "d2": 0.5, "d3": 0.0, "d4": 0.0}
    assert _fused("combmed") == {"d1": 1.0, "d2": 0.75, "d3": 0.0, "d4": 0.0}
    assert _fused("combanz") == {"d1": 1.0, "d2": 0.75, "d3": 0.0, "d4": 0.0}  # 1.5 / 2
    # wsum (0.25, 0.75): d1 0.25 * 1, d2 0.25 * 0.5 + 0.75 * 1
    assert _fused("wsum", weights=[0.25, 0.75]) == {"d1": 0.25, "d2": 0.875, "d3": 0.0,
                                                     "d4": 0.0}
    # default weights 1/2 each: half of CombSUM
    assert _fused("wsum") == {"d1": 0.5, "d2": 0.75, "d3": 0.0, "d4": 0.0}


def test_other_normalizations_in_fusion() -> None:
    # sum norm: A -> 2/3, 1/3, 0; B -> (s - 2) / (6 - 4): d2 1, d4 0.
    assert _fused("combsum", norm="sum") == pytest.approx(
        {"d1": 2 / 3, "d2": 4 / 3, "d3": 0.0, "d4": 0.0})
    # max norm: A -> 1, 2/3, 1/3; B -> 1, 1/2.
    assert _fused("combmax", norm="max") == pytest.approx(
        {"d1": 1.0, "d2": 1.0, "d3": 1 / 3, "d4": 0.5})
    # z-score: A -> sqrt(1.5), 0, -sqrt(1.5); B (mean 3, sd 1) -> 1, -1.
    assert _fused("combsum", norm="zscore") == pytest.approx(
        {"d1": math.sqrt(1.5), "d2": 1.0, "d3": -math.sqrt(1.5), "d4": -1.0})
    # raw scores
    assert _fused("combsum", norm="none") == {"d1": 3.0, "d2": 6.0, "d3": 1.0, "d4": 2.0}
    assert _fused("combsum", norm="rank") == pytest.approx(
        {"d1": 1.0, "d2": 2 / 3 + 1.0, "d3": 1 / 3, "d4": 0.5})


def test_rrf_by_hand() -> None:
    # ranks: A d1 1, d2 2, d3 3; B d2 1, d4 2.
    assert _fused("rrf") == pytest.approx(
        {"d1": 1 / 61, "d2": 1 / 62 + 1 / 61, "d3": 1 / 63, "d4": 1 / 62})
    assert _fused("rrf", k=0) == pytest.approx({"d1": 1.0, "d2": 1.5, "d3": 1 / 3, "d4": 0.5})
    # ranx's method names are accepted too
    assert _fused("sum") == _fused("combsum")


def test_rank_ties_and_depth() -> None:
    tied = {"q1": {"x": 1.0, "y": 1.0}}
    # Equal scores rank by document id descending: y first.
    fused = fuse([tied, {"q1": {"z": 1.0}}], method="rrf", k=0).to_dict()["q1"]
    assert fused == {"y": 1.0, "x": 0.5, "z": 1.0}
    fused = fuse([tied, {"q1": {"z": 1.0}}], method="rrf", k=0, ties="input").to_dict()["q1"]
    assert fused == {"x": 1.0, "y": 0.5, "z": 1.0}
    # depth 1: only A's d1 and B's d2 count.
    assert _fused("rrf", k=0, depth=1) == {"d1": 1.0, "d2": 1.0}


def test_queries_are_the_union() -> None:
    with pytest.raises(NoOverlapError, match=r"no query of run 'run' \(1 query: q2\) is in"):
        fuse([A, {"q2": {"e": 1.0}}], method="combsum", norm="none")
    with pytest.warns(RankscopeWarning, match="no query of"):
        fused = fuse([A, {"q2": {"e": 1.0}}], method="combsum", norm="none",
                     allow_no_overlap=True).to_dict()
    assert fused == {"q1": A["q1"], "q2": {"e": 1.0}}
    with pytest.warns(RankscopeWarning, match=r"1 of the 2 queries of run 'run' are in run 'run' "
                                              r"\(1 query\); 1 only in run 'run' \(q2\)"):
        fused = fuse([A, {"q1": {"e": 1.0}, "q2": {"e": 1.0}}], method="combsum",
                     norm="none").to_dict()
    assert set(fused) == {"q1", "q2"}


def test_fused_run_is_a_run() -> None:
    run = fuse([A, B], method="combmnz", name="fused")
    assert run.name == "fused" and run.n_queries == 1 and len(run) == 4
    assert fuse([A, B]).name == "rrf"


def test_refusals() -> None:
    with pytest.raises(OptionError, match="at least two runs"):
        fuse([A])
    with pytest.raises(OptionError, match="rrf has no parameter 'weights'"):
        fuse([A, B], method="rrf", weights=[1, 2])
    with pytest.raises(OptionError, match="2 runs"):
        fuse([A, B], method="wsum", weights=[1.0])
    with pytest.raises(OptionError, match="fusion method"):
        fuse([A, B], method="borda")
    with pytest.raises(OptionError, match="normalization"):
        fuse([A, B], method="combsum", norm="softmax")
    with pytest.raises(OptionError, match="depth"):
        fuse([A, B], depth=0)


# ---- grid search ---------------------------------------------------------------

QRELS = {"q1": {"d1": 1, "d2": 0, "d3": 0}, "q2": {"e1": 1}}
GOOD = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"e1": 2.0, "e2": 1.0}}
BAD = {"q1": {"d3": 3.0, "d2": 2.0, "d1": 1.0}, "q2": {"e2": 2.0, "e1": 1.0}}


def test_wsum_grid_search_by_hand() -> None:
    # min-max, weights (w, 1 - w): q1 d1 = w, d2 = 0.5, d3 = 1 - w; q2 e1 = w, e2 = 1 - w.
    # w > 0.5: both relevant documents first, RR = 1. w <= 0.5: d3 (or, at 0.5, the tie
    # broken by id descending) first: q1 RR 1/3, q2 RR 1/2, mean 5/12.
    search = optimize_fusion(QRELS, {"good": GOOD, "bad": BAD}, method="wsum", metric="RR")
    assert search.trials.height == 11
    scores = dict(zip([tuple(w) for w in search.trials.get_column("weights").to_list()],
                      search.trials.get_column("score").to_list(), strict=True))
    for w_good, w_bad in simplex_weights(2):
        expected = 1.0 if w_good > 0.5 else 5 / 12
        assert scores[(w_good, w_bad)] == pytest.approx(expected)
    assert search.best_params == {"weights": (0.6, 0.4)}  # first best in grid order
    assert search.best_score == 1.0
    assert search.best_run.to_dict()["q2"] == pytest.approx({"e1": 0.6, "e2": 0.4})


def test_rrf_grid_and_custom_grid() -> None:
    # RRF: d1 = 1/(k+1) + 1/(k+3) = d3 > d2 = 2/(k+2) (1/x is convex); the d1-d3 tie goes
    # to d3 (id descending): q1 RR 1/2. q2: e1 = e2, tie to e2: RR 1/2. Every k gives 1/2.
    search = optimize_fusion(QRELS, [GOOD, BAD], method="rrf", metric="RR")
    assert search.trials.get_column("k").to_list() == [1, 5, 10, 20, 30, 40, 50, 60, 70, 80,
                                                       90, 100]
    assert search.trials.get_column("score").to_list() == pytest.approx([0.5] * 12)
    assert search.best_params == {"k": 1}
    custom = optimize_fusion(QRELS, [GOOD, BAD], method="wsum", metric="RR",
                             grid={"weights": [(0.0, 1.0), (1.0, 0.0)]})
    assert custom.trials.get_column("score").to_list() == pytest.approx([5 / 12, 1.0])
    comb = optimize_fusion(QRELS, [GOOD, BAD], method="combmnz", metric="RR")
    assert comb.trials.get_column("norm").to_list() == ["min-max", "zscore", "sum", "max",
                                                        "rank", "none"]


def test_grid_refusals() -> None:
    with pytest.raises(OptionError, match="cannot search"):
        optimize_fusion(QRELS, [GOOD, BAD], method="rrf", grid={"alpha": [1]})
    with pytest.raises(OptionError, match="divide 1"):
        simplex_weights(2, 0.3)
    with pytest.raises(OptionError, match="one metric"):
        optimize_fusion(QRELS, [GOOD, BAD], metric="P.5,10")
