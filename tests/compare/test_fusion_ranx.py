"""Every fusion method and normalization on ranx's own test cases.

The runs, qrels and expected values are transcribed from ranx's unit tests
(AmenRa/ranx, ``tests/unit/ranx/fusion/*_test.py`` and
``tests/unit/ranx/normalization/*_test.py``); ranx calls its low-level fusion
functions on raw scores, which is ``norm="none"`` here. Each expected value is
written as ranx writes it (a formula over ranks and scores), not read from
rankscope.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rankscope.errors import OptionError
from rankscope.fusion.combine import fuse, normalize
from rankscope.fusion.methods import METHODS, method_spec

# ranx's run_1, run_2, run_3 (most fusion tests)
R1 = {"q1": {"d1": 1, "d2": 2, "d3": 3}, "q2": {"d1": 1, "d2": 2}}
R2 = {"q1": {"d1": 3, "d2": 2}, "q2": {"d1": 1, "d3": 3}}
R3 = {"q1": {"d3": 1}, "q2": {"d2": 2, "d3": 3}}
RUNS = [R1, R2, R3]
# mapfuse/posfuse/probfuse/segfuse/slidefuse_test.py's qrels
QRELS = {"q1": {"d1": 1}, "q2": {"d1": 1}}


def _fused(method: str, runs: list[dict[str, dict[str, float]]] = RUNS,
           **options: object) -> dict[str, dict[str, float]]:
    options.setdefault("norm", "none")
    return fuse(runs, method=method, **options).to_dict()  # type: ignore[arg-type]


def test_isr_log_isr_logn_isr() -> None:
    # isr_test.py, log_isr_test.py, logn_isr_test.py (sigma = 0.1)
    sums = {"q1": {"d1": 1 / 3**2 + 1, "d2": 1 / 2**2 + 1 / 2**2, "d3": 2.0},
            "q2": {"d1": 1 / 2**2 + 1 / 2**2, "d2": 1 + 1 / 2**2, "d3": 2.0}}
    for method, factor in (("isr", 2), ("log_isr", np.log(2)), ("logn_isr", np.log(2.1))):
        got = _fused(method, sigma=0.1) if method == "logn_isr" else _fused(method)
        for q, docs in sums.items():
            assert got[q] == pytest.approx({d: v * factor for d, v in docs.items()}, abs=0,
                                           rel=1e-15)


def test_comb_family() -> None:
    # comb_sum/mnz/max/min/med/anz_test.py
    pairs = {"q1": {"d1": [1, 3], "d2": [2, 2], "d3": [3, 1]},
             "q2": {"d1": [1, 1], "d2": [2, 2], "d3": [3, 3]}}
    for method, agg in (("combsum", sum), ("combmnz", lambda v: sum(v) * 2),
                        ("combmax", max), ("combmin", min), ("combmed", np.median),
                        ("combanz", np.mean)):
        got = _fused(method)
        assert got == {q: {d: pytest.approx(float(agg(v))) for d, v in docs.items()}
                       for q, docs in pairs.items()}, method
    # comb_gmnz_test.py: gamma 1 is CombMNZ, gamma 0 is CombSUM
    assert _fused("combgmnz", gamma=1.0) == _fused("combmnz")
    assert _fused("combgmnz", gamma=0.0) == _fused("combsum")
    assert _fused("comb_gmnz", gamma=1.0) == _fused("combmnz")  # ranx's spelling


def test_weighted_methods() -> None:
    w = [0.3, 0.2, 0.5]
    runs_of = {"q1": {"d1": (0, 1), "d2": (0, 1), "d3": (0, 2)},
               "q2": {"d1": (0, 1), "d2": (0, 2), "d3": (1, 2)}}
    wsum = _fused("wsum", weights=w)
    wmnz = _fused("wmnz", weights=w)
    mixed = _fused("mixed", weights=w)
    for q, docs in runs_of.items():
        for d, (i, j) in docs.items():
            si, sj = RUNS[i][q][d], RUNS[j][q][d]
            assert wsum[q][d] == pytest.approx(w[i] * si + w[j] * sj)  # wsum_test.py
            assert wmnz[q][d] == pytest.approx((si + sj) * (w[i] + w[j]))  # wmnz_test.py
            assert mixed[q][d] == pytest.approx((w[i] * si + w[j] * sj) * np.sqrt(2))
    # wmnz_test.py / mixed_test.py with weights 1, 1, 1
    assert _fused("wmnz", weights=[1, 1, 1]) == _fused("combmnz")
    assert _fused("mixed", weights=[1, 1, 1]) == {
        q: {d: pytest.approx(v / 2 * np.sqrt(2)) for d, v in docs.items()}
        for q, docs in _fused("combmnz").items()}


def test_bordafuse_and_weighted() -> None:
    # bordafuse_test.py and weighted_bordafuse_test.py
    assert _fused("bordafuse") == {"q1": {"d1": 1 + 3 + 1.5, "d2": 2 + 2 + 1.5, "d3": 3 + 1 + 3},
                                   "q2": {"d1": 2 + 2 + 1, "d2": 3 + 1 + 2, "d3": 1 + 3 + 3}}
    assert _fused("w_bordafuse", weights=[1, 1, 1]) == _fused("bordafuse")
    assert _fused("w_bordafuse", weights=[3, 2, 1]) == {
        "q1": {"d1": 3 * 1 + 2 * 3 + 1.5, "d2": 3 * 2 + 2 * 2 + 1.5, "d3": 3 * 3 + 2 * 1 + 3},
        "q2": {"d1": 3 * 2 + 2 * 2 + 1, "d2": 3 * 3 + 2 * 1 + 2, "d3": 3 * 1 + 2 * 3 + 3}}
    # test_bordafuse_no_result_query: q2 empty in every run (here: absent) fuses to nothing
    runs = [{"q1": R1["q1"]}, {"q1": R2["q1"]}, {"q1": R3["q1"]}]
    assert _fused("bordafuse", runs) == {"q1": {"d1": 5.5, "d2": 5.5, "d3": 7.0}}


def test_condorcet_and_weighted() -> None:
    # condorcet_test.py and weighted_condorcet_test.py (their runs differ from the others')
    runs = [{"q1": {"d1": 1, "d2": 2, "d3": 3}, "q2": {"d1": 1, "d2": 2}},
            {"q1": {"d1": 2, "d2": 3}, "q2": {"d1": 1, "d3": 3}},
            {"q1": {"d3": 3}, "q2": {"d2": 2, "d3": 3}}]
    expected = {"q1": {"d1": 1.0, "d2": 2.0, "d3": 3.0}, "q2": {"d1": 1.0, "d2": 2.0, "d3": 3.0}}
    assert _fused("condorcet", runs) == expected
    assert _fused("w_condorcet", runs, weights=[1, 1, 1]) == expected
    assert _fused("w_condorcet", runs, weights=[1, 5, 2]) == {
        "q1": {"d1": 2.0, "d2": 3.0, "d3": 1.0}, "q2": {"d1": 2.0, "d2": 1.0, "d3": 3.0}}
    only_q1 = [{"q1": r["q1"]} for r in runs]  # test_condorcet_no_result_query
    assert _fused("condorcet", only_q1) == {"q1": expected["q1"]}


def test_rbc() -> None:
    # rbc_test.py (Bailey et al.'s example, values rounded to 2 places there)
    runs = [{"q1": {"A": 7, "D": 6, "B": 5, "C": 4, "G": 3, "F": 2}},
            {"q1": {"B": 7, "D": 6, "E": 5, "C": 4}},
            {"q1": {"A": 7, "B": 6, "D": 5, "C": 4, "G": 3, "F": 2, "E": 1}},
            {"q1": {"G": 7, "D": 6, "E": 5, "A": 4, "F": 3, "C": 2}}]
    expected = {
        0.6: {"A": 0.89, "D": 0.86, "B": 0.78, "G": 0.50, "E": 0.31, "C": 0.29, "F": 0.11},
        0.8: {"D": 0.61, "A": 0.50, "B": 0.49, "C": 0.37, "G": 0.36, "E": 0.31, "F": 0.21},
        0.9: {"D": 0.35, "C": 0.28, "A": 0.27, "B": 0.27, "G": 0.23, "E": 0.22, "F": 0.18},
    }
    for phi, values in expected.items():
        got = _fused("rbc", runs, phi=phi)["q1"]
        assert {d: round(v, 2) for d, v in got.items()} == values
        assert list(got) == list(values)  # and in ranx's order


def test_mapfuse() -> None:
    # mapfuse_test.py: MAP of each run on QRELS, by hand. run 1 ranks d1 3rd (q1) and
    # 2nd (q2): (1/3 + 1/2) / 2; run 2 ranks it 1st and 2nd: (1 + 1/2) / 2; run 3 never.
    maps = [(1 / 3 + 1 / 2) / 2, (1 + 1 / 2) / 2, 0.0]
    got = _fused("mapfuse", qrels=QRELS)
    assert got["q1"] == pytest.approx({"d1": maps[0] / 3 + maps[1] / 1,
                                       "d2": maps[0] / 2 + maps[1] / 2,
                                       "d3": maps[0] / 1 + maps[2] / 1})
    assert got["q2"] == pytest.approx({"d1": maps[0] / 2 + maps[1] / 2,
                                       "d2": maps[0] / 1 + maps[2] / 2,
                                       "d3": maps[1] / 1 + maps[2] / 1})


def test_posfuse_and_slidefuse() -> None:
    # posfuse_test.py / slidefuse_test.py: probs [0, 1/2, 1], [1/2, 1/2], [0, 0]
    p = [np.array([0, 1 / 2, 1.0]), np.array([1 / 2, 1 / 2]), np.array([0.0, 0.0])]
    got = _fused("posfuse", qrels=QRELS)
    assert got == {"q1": {"d1": p[0][2] + p[1][0], "d2": p[0][1] + p[1][1],
                          "d3": p[0][0] + p[2][0]},
                   "q2": {"d1": p[0][1] + p[1][1], "d2": p[0][0] + p[2][1],
                          "d3": p[1][0] + p[2][0]}}
    w1 = _fused("slidefuse", qrels=QRELS, window=1)
    assert w1 == {"q1": {"d1": sum(p[0][1:3]) / 2 + sum(p[1]) / 2,
                         "d2": sum(p[0]) / 3 + sum(p[1]) / 2,
                         "d3": sum(p[0][:2]) / 2 + sum(p[2]) / 2},
                  "q2": {"d1": sum(p[0][0:2]) / 2 + sum(p[1]) / 2,
                         "d2": sum(p[0][0:2]) / 2 + sum(p[2]) / 2,
                         "d3": sum(p[1]) / 2 + sum(p[2]) / 2}}
    w2 = _fused("slidefuse", qrels=QRELS, window=2)
    assert w2 == {"q1": {"d1": sum(p[0]) / 3 + sum(p[1]) / 2, "d2": sum(p[0]) / 3 + sum(p[1]) / 2,
                         "d3": sum(p[0]) / 3 + sum(p[2]) / 2},
                  "q2": {"d1": sum(p[0][0:2]) / 2 + sum(p[1]) / 2,
                         "d2": sum(p[0][0:2]) / 2 + sum(p[2]) / 2,
                         "d3": sum(p[1]) / 2 + sum(p[2]) / 2}}


def test_probfuse() -> None:
    # probfuse_test.py, 2 segments: probs [0, 1], [0.5, 0.5], [0, 0]
    p = [[0.0, 1.0], [0.5, 0.5], [0.0, 0.0]]
    got = _fused("probfuse", qrels=QRELS, segments=2)
    assert got == {"q1": {"d1": p[0][1] / 2 + p[1][0], "d2": p[0][0] + p[1][1] / 2,
                          "d3": p[0][0] + p[2][0]},
                   "q2": {"d1": p[0][1] / 2 + p[1][1] / 2, "d2": p[0][0] + p[2][1] / 2,
                          "d3": p[1][0] + p[2][0]}}


def test_segfuse() -> None:
    # segfuse_test.py: probs [0.2, 0, ...], [0.2, 0, ...], [0, ...]; scores + 1
    p = [0.2, 0.2, 0.0]
    got = _fused("segfuse", qrels=QRELS)
    for q, docs in got.items():
        for d, value in docs.items():
            expected = sum(p[i] * (1 + run[q][d]) for i, run in enumerate(RUNS) if d in run[q])
            assert value == pytest.approx(expected)


def test_bayesfuse() -> None:
    # bayesfuse_test.py's qrels and two runs of ten documents
    qrels = {"q1": {d: 1 for d in ("d1", "d2", "d8", "d9", "d10")},
             "q2": {d: 1 for d in ("d2", "d4", "d7")},
             "q3": {d: 1 for d in ("d1", "d3", "d4", "d5", "d6", "d8", "d9")}}
    ten = [f"d{i}" for i in range(1, 11)]
    run_1 = {q: {d: 10.0 - i for i, d in enumerate(ten)} for q in ("q1", "q2", "q3")}
    order_2 = {"q1": ["d1", "d2", "d8", "d9", "d10", "d3", "d4", "d5", "d6", "d7"],
               "q2": ["d2", "d4", "d7", "d1", "d3", "d5", "d6", "d8", "d9", "d10"],
               "q3": ten}
    run_2 = {q: {d: 10.0 - i for i, d in enumerate(docs)} for q, docs in order_2.items()}
    # test_estimate_log_odds: precision of ranks 1-5 is 8/15 (run 1) and 12/15 (run 2),
    # of ranks 6-10 7/15 and 3/15; deeper segments hold nothing: 0 -> 0.001.
    def odds(p: float) -> float:
        return math.log(p / (1 - p))

    lo1 = [odds(8 / 15)] * 5 + [odds(7 / 15)] * 5
    lo2 = [odds(12 / 15)] * 5 + [odds(3 / 15)] * 5
    got = _fused("bayesfuse", [run_1, run_2], qrels=qrels)
    # test_bayesfuse: d's fused score is the sum of its two positions' log-odds
    for q in ("q1", "q2", "q3"):
        for d in ten:
            i, j = ten.index(d), order_2[q].index(d)
            assert got[q][d] == pytest.approx(lo1[i] + lo2[j]), (q, d)


def test_normalizations_on_ranx_cases() -> None:
    # min_max_norm_test.py, max/sum/rank/zmuv_norm_test.py
    run = {"q1": {"d1": 1, "d2": 2, "d3": 3}, "q2": {"d1": 1, "d2": 2}}
    assert normalize(run, "min-max").to_dict() == {"q1": {"d3": 1.0, "d2": 0.5, "d1": 0.0},
                                                   "q2": {"d2": 1.0, "d1": 0.0}}
    for spelling in ("min_max_inverted", "min-max-inverted"):
        assert normalize(run, spelling).to_dict() == {
            "q1": {"d1": (3 - 1) / (3 - 1), "d2": (3 - 2) / (3 - 1), "d3": 0.0},
            "q2": {"d1": (2 - 1) / (2 - 1), "d2": 0.0}}
    assert normalize(run, "max").to_dict() == {"q1": {"d3": 1.0, "d2": 2 / 3, "d1": 1 / 3},
                                               "q2": {"d2": 1.0, "d1": 0.5}}
    assert normalize(run, "sum").to_dict() == {"q1": {"d3": 2 / 3, "d2": 1 / 3, "d1": 0.0},
                                               "q2": {"d2": 1.0, "d1": 0.0}}
    assert normalize(run, "rank").to_dict() == {"q1": {"d3": 1.0, "d2": 1 - 1 / 3,
                                                       "d1": 1 - 2 / 3},
                                                "q2": {"d2": 1.0, "d1": 0.5}}
    z = normalize(run, "zmuv").to_dict()
    assert z["q1"] == pytest.approx({"d1": -1 / 0.816496580927726, "d2": 0.0,
                                     "d3": 1 / 0.816496580927726})
    assert z["q2"] == pytest.approx({"d1": -1.0, "d2": 1.0})


def test_borda_norm() -> None:
    # borda_norm_test.py: each run scored over the 3 candidates; then CombSUM of those
    expected = [
        {"q1": {"d1": 1 / 3, "d2": 2 / 3, "d3": 1.0}, "q2": {"d1": 2 / 3, "d2": 1.0, "d3": 1 / 3}},
        {"q1": {"d1": 1.0, "d2": 2 / 3, "d3": 1 / 3}, "q2": {"d1": 2 / 3, "d2": 1 / 3, "d3": 1.0}},
        {"q1": {"d1": 1.5 / 3, "d2": 1.5 / 3, "d3": 1.0},
         "q2": {"d1": 1 / 3, "d2": 2 / 3, "d3": 1.0}},
    ]
    got = _fused("combsum", norm="borda")
    for q in ("q1", "q2"):
        assert got[q] == pytest.approx({d: sum(e[q][d] for e in expected)
                                        for d in ("d1", "d2", "d3")})
    # The borda norm adds the documents a run lacks: every run now holds all 3.
    mnz = _fused("combmnz", norm="borda")
    assert mnz["q1"]["d1"] == pytest.approx(3 * got["q1"]["d1"])
    with pytest.raises(OptionError, match="needs all the runs"):
        normalize(R1, "borda")


def test_min_max_inverted_reverses_rank_methods() -> None:
    # Distances: the smallest raw score is the best; RRF reads the reversed order.
    got = _fused("rrf", [R1, R2], norm="min-max-inverted", k=0)
    assert got["q1"] == pytest.approx({"d1": 1.0 + 1 / 2, "d2": 1 / 2 + 1.0, "d3": 1 / 3})


def test_methods_table_and_spellings() -> None:
    ranx_names = ["bayesfuse", "bordafuse", "anz", "gmnz", "max", "med", "min", "mnz", "sum",
                  "condorcet", "isr", "log_isr", "logn_isr", "mapfuse", "mixed", "posfuse",
                  "probfuse", "rbc", "rrf", "segfuse", "slidefuse", "w_bordafuse",
                  "w_condorcet", "wmnz", "wsum"]  # ranx's fusion_switch
    for name in ranx_names:
        assert method_spec(name).name in METHODS
    for spec in METHODS.values():
        assert spec.formula and spec.citation and spec.summary
    with pytest.raises(OptionError, match="fusion method"):
        method_spec("borda_count")
    with pytest.raises(OptionError, match="learns from qrels"):
        fuse(RUNS, method="posfuse")
    with pytest.raises(OptionError, match="does not learn"):
        fuse(RUNS, method="rrf", qrels=QRELS)
    with pytest.raises(OptionError, match="has no parameter 'phi'"):
        fuse(RUNS, method="rrf", phi=0.5)
    with pytest.raises(OptionError, match=r"phi must be in \(0, 1\)"):
        fuse(RUNS, method="rbc", phi=1.0)
