"""The reproductions of issue 11, section 2, each in the form of the tool's own test.

The other reproductions live beside their profile: ir_measures' tie rules
(``test_ir_measures_profile.py::test_tie_rules_per_provider``), ranx's bpref
with grade -1 (``test_ranx_profile.py``), pytrec_eval's 32-bit scores
(``test_pytrec_eval_profile.py::test_float32_ties_change_the_number``) and
scikit-learn's averaged ties (``test_sklearn_profile.py::test_tied_gains_are_averaged``).
"""

from __future__ import annotations

import math
import shutil

import pytest

import rankscope

QRELS = {"0": {"D0": 0, "D1": 1, "D2": 2, "D3": 2, "D4": 0}}
RUN = {"0": {"D0": 0.8, "D2": 0.7, "D1": 0.3, "D3": 0.4, "D4": 0.1}}


def test_set_f_beta_is_beta_squared() -> None:
    """trec_eval's set_F weighs by its parameter x: (1 + x) P R / (R + x P). Here P = 3/5,
    R = 1: (1.5 * 0.6) / (0.5 * 0.6 + 1) = 0.6923 for x = 0.5."""
    want = 1.5 * 0.6 / (0.5 * 0.6 + 1)
    assert round(want, 4) == 0.6923
    means = rankscope.evaluate(QRELS, RUN, ["SetF(beta=0.5)", "set_F(beta=0.5)",
                                            "F(beta=0.5)"]).means
    assert means["SetF(beta=0.5)"] == pytest.approx(want, abs=1e-12)
    assert means["set_F(beta=0.5)"] == pytest.approx(want, abs=1e-12)
    # rankscope's own F weighs by beta squared: (1.25 * 0.6) / (0.25 * 0.6 + 1)
    assert means["F(beta=0.5)"] == pytest.approx(1.25 * 0.6 / (0.25 * 0.6 + 1), abs=1e-12)


def test_set_f_beta_against_ir_measures_and_pytrec_eval() -> None:
    im = pytest.importorskip("ir_measures")
    pytrec_eval = pytest.importorskip("pytrec_eval")
    tool = im.calc_aggregate([im.SetF(beta=0.5)], QRELS, RUN)[im.SetF(beta=0.5)]
    assert tool == pytest.approx(0.6923, abs=5e-5)
    by_trec = pytrec_eval.RelevanceEvaluator(QRELS, {"set_F.0.5"}).evaluate(RUN)["0"]["set_F"]
    got = rankscope.evaluate(QRELS, RUN, "SetF(beta=0.5)").means["SetF(beta=0.5)"]
    assert got == pytest.approx(tool, abs=1e-12)
    assert got == pytest.approx(by_trec, abs=1e-12)


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval needs perl")
def test_err_fixes_the_top_grade_at_4() -> None:
    """ir_measures' ERR@k is gdeval's, which divides by 2^4 whatever the scale; on 0-3
    (TREC DL style) qrels rankscope's ERR@k divides by 2^3 (the qrels' top grade)."""
    im = pytest.importorskip("ir_measures")
    qrels = {str(q): {f"d{i}": g for i, g in enumerate(grades)}
             for q, grades in enumerate([(3, 2, 0, 1), (1, 0, 0, 2), (2, 3, 3, 0)], start=1)}
    run = {q: {d: float(10 - i) for i, d in enumerate(docs)} for q, docs in qrels.items()}
    tool = im.calc_aggregate([im.ERR @ 10], qrels, run)[im.ERR @ 10]

    def err(grades: tuple[int, ...], top: int) -> float:
        score, trust = 0.0, 1.0
        for i, g in enumerate(grades):
            r = (2**g - 1) / 2**top
            score += trust * r / (i + 1)
            trust *= 1 - r
        return score

    per_grade = [(3, 2, 0, 1), (1, 0, 0, 2), (2, 3, 3, 0)]
    assert tool == pytest.approx(sum(err(g, 4) for g in per_grade) / 3, abs=5e-6)
    default = rankscope.evaluate(qrels, run, "ERR@10")["ERR@10"]
    assert default == pytest.approx(sum(err(g, 3) for g in per_grade) / 3, abs=1e-12)
    assert not math.isclose(default, tool, abs_tol=0.01)
    profile = rankscope.evaluate(qrels, run, "ERR@10", conventions="ir_measures")["ERR@10"]
    assert profile == pytest.approx(tool, abs=5e-6)
    assert rankscope.evaluate(qrels, run, "ERR(max_grade=4)@10")["ERR(max_grade=4)@10"] == \
        pytest.approx(tool, abs=5e-6)


def test_iprec_at_recall_follows_trec_eval_9_under_pytrec_eval() -> None:
    """pytrec_eval (trec_eval 9.x) turns recall 0.2 of R = 7 into trunc(1.4 + 0.9) = 2
    relevant documents; trec_eval 10.0 into lround(1.4) = 1."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = {"q": {d: 1 for d in "abcdefg"}}
    run = {"q": {"a": 9.0, "x": 8.0, "b": 7.0}}
    tool = pytrec_eval.RelevanceEvaluator(qrels, {"iprec_at_recall", "11pt_avg"}).evaluate(run)
    assert tool["q"]["iprec_at_recall_0.20"] == pytest.approx(2 / 3)  # at the 2nd relevant
    names = ["iprec_at_recall_0.20", "11pt_avg"]
    default = rankscope.evaluate(qrels, run, names).means
    assert default["iprec_at_recall_0.20"] == 1.0  # trec_eval 10.0: at the 1st relevant
    profile = rankscope.evaluate(qrels, run, names, conventions="pytrec_eval").means
    assert profile["iprec_at_recall_0.20"] == pytest.approx(tool["q"]["iprec_at_recall_0.20"])
    assert profile["11pt_avg"] == pytest.approx(tool["q"]["11pt_avg"])
    assert default["11pt_avg"] != pytest.approx(tool["q"]["11pt_avg"])
