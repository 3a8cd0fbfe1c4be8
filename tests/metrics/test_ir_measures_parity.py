"""Compat, Accuracy, NumQ and ir_measures' spellings IPrec@x, SetAP, SetRelP.

Sources: ir_measures' own tests (transcribed; the Compat data files are in
``tests/metrics/data``, see its README), hand computations, and ir_measures'
providers (compat, accuracy, pytrec_eval) run on seeded generated data.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

import rankscope

DATA = Path(__file__).parent / "data"
QUIET = pytest.mark.filterwarnings("ignore::rankscope.errors.RankscopeWarning")


def _read_compat() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in (DATA / "compat.qrels").read_text().split("\n"):
        if line.strip():
            q, _, d, g = line.split()
            qrels.setdefault(q, {})[d] = int(g)
    run: dict[str, dict[str, float]] = {}
    with gzip.open(DATA / "compat.run.gz", "rt") as fh:
        for line in fh:
            q, _, d, _, s, _ = line.split()
            run.setdefault(q, {})[d] = float(s)
    return qrels, run


def test_compat_on_ir_measures_data() -> None:
    # ir_measures tests/test_compat.py, "based on a manual execution of claclark/Compatibility"
    qrels, run = _read_compat()
    expected = {0.95: (0.51779512165509, 0.018400100569017922),
                0.9: (0.3761334522946854, 0.004344079941789211),
                0.8: (0.16723008845234535, 0.00022806427320561776)}
    names = [f"Compat(p={p})" for p in expected]
    result = rankscope.evaluate(qrels, run, names)
    for name, (v1, v2) in zip(names, expected.values(), strict=True):
        assert result.per_query["31_1"][name] == pytest.approx(v1, abs=1e-9)
        assert result.per_query["31_2"][name] == pytest.approx(v2, abs=1e-9)
    assert result["Compat(p=0.95)"] == pytest.approx(0.268097611, abs=1e-9)


def _rbo_reference(ranking: list[str], ideal: list[str], p: float, depth: int) -> float:
    score, seen_r, seen_i = 0.0, set(), set()
    for d in range(depth):
        if d < len(ranking):
            seen_r.add(ranking[d])
        if d < len(ideal):
            seen_i.add(ideal[d])
        score += p**d * len(seen_r & seen_i) / (d + 1)
    return score


def test_compat_by_hand_with_ties_in_grade() -> None:
    # Ideal: a (2), then the grade-1 documents in run order (c before b), then e (unretrieved).
    qrels = {"q": {"a": 2, "b": 1, "c": 1, "e": 1, "z": 0}}
    run = {"q": {"c": 5.0, "z": 4.0, "a": 3.0, "b": 2.0}}
    ranking, ideal = ["c", "z", "a", "b"], ["a", "c", "b", "e"]
    raw = _rbo_reference(ranking, ideal, 0.7, 4)
    best = _rbo_reference(ideal, ideal, 0.7, 4)
    result = rankscope.evaluate(qrels, run, ["Compat(p=0.7)", "Compat(p=0.7,normalize=False)"])
    assert result["Compat(p=0.7)"] == pytest.approx(raw / best)
    assert result["Compat(p=0.7,normalize=False)"] == pytest.approx(
        raw / sum(0.7**d for d in range(4)))


def test_accuracy_ir_measures_case() -> None:
    # ir_measures tests/test_accuracy.py (queries 0, 1, 2; query 2 ranks its document 2nd)
    qrels = {"0": {"C0_1": 0, "B0_1": 1, "A0_1": 2},
             "1": {"A1_1": 2, "A1_2": 2, "B1_1": 1, "C1_2": 0},
             "2": {"B1_1": 1}}
    run = {"0": {"C0_1": 0.4, "A0_1": 0.3, "C0_2": 0.2, "C0_3": 0.1},
           "1": {"C1_1": 0.8, "A1_1": 0.7, "C1_2": 0.6, "B1_1": 0.5, "C1_3": 0.4},
           "2": {"B1_1": 0.2, "C1_1": 0.1}}
    result = rankscope.evaluate(qrels, run, ["Accuracy", "Accuracy(rel=2)"])
    rel1 = {"0": 2 / 3, "1": 0.5 * (2 / 3 + 1 / 3), "2": 1.0}
    for q, value in rel1.items():
        assert result.per_query[q]["Accuracy"] == pytest.approx(value, abs=1e-9)
    assert result["Accuracy"] == pytest.approx(np.mean(list(rel1.values())), abs=1e-9)
    assert result.per_query["0"]["Accuracy(rel=2)"] == pytest.approx(2 / 3)
    assert result.per_query["1"]["Accuracy(rel=2)"] == pytest.approx(0.75)
    assert result.per_query["2"]["Accuracy(rel=2)"] is None  # nothing relevant retrieved
    assert result.n_queries["Accuracy(rel=2)"] == 2


def _generate(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(20):
        docs = [f"d{i}" for i in range(int(rng.integers(0, 30)))]
        judged = [d for d in docs if rng.random() < 0.6] + [f"u{i}" for i in range(4)]
        qrels[f"q{q}"] = {d: int(rng.integers(0, 4)) for d in judged}
        if docs:
            run[f"q{q}"] = {d: float(s) for d, s in
                            zip(docs, rng.permutation(len(docs)) + 1.0, strict=True)}
    return qrels, run


@QUIET
def test_compat_and_accuracy_against_ir_measures() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = _generate(5)
    names = ["Compat(p=0.95)", "Compat(p=0.6)", "Compat(p=0.8,normalize=False)", "Accuracy",
             "Accuracy(rel=2)@10"]
    measures = [ir_measures.parse_measure(n) for n in names]
    expected: dict[tuple[str, str], float] = {}
    for provider, chosen in ((ir_measures.compat, measures[:3]),
                             (ir_measures.accuracy, measures[3:])):
        for metric in provider.iter_calc(chosen, qrels, run):
            expected[(str(metric.measure), metric.query_id)] = metric.value
    result = rankscope.evaluate(qrels, run, names, allow_no_overlap=True)
    for name, measure in zip(names, measures, strict=True):
        for q in qrels:
            got = result.per_query[q][name]
            want = expected.get((str(measure), q))
            if want is None:  # ir_measures has no value for the query
                assert got is None or (name.startswith("Compat") and got == 0.0), (name, q)
            else:
                assert got == pytest.approx(want, abs=1e-12), (name, q)


@QUIET
def test_numq_and_trec_spellings_against_pytrec_eval_provider() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = _generate(9)
    # IPrec is left out: pytrec_eval computes iprec_at_recall as trec_eval 9.x did, rankscope
    # as trec_eval 10.0 does (tests/trec_eval: the golden outputs of the 10.0 binary).
    names = ["NumQ", "SetAP", "SetRelP", "SetP(relative=True)", "SetAP(rel=2)"]
    measures = [ir_measures.parse_measure(n) for n in names]
    agg = ir_measures.pytrec_eval.calc_aggregate(measures, qrels, run)
    per_query = {(str(m.measure), m.query_id): m.value
                 for m in ir_measures.pytrec_eval.iter_calc(measures, qrels, run)}
    result = rankscope.evaluate(qrels, run, names, allow_no_overlap=True)
    for name, measure in zip(names, measures, strict=True):
        assert result[name] == pytest.approx(agg[measure], abs=1e-12), name
        if name != "NumQ":
            for q in run:
                assert result.per_query[q][name] == pytest.approx(
                    per_query[(str(measure), q)], abs=1e-12), (name, q)
    assert result["NumQ"] == len(run)  # queries the run answers, of the qrels' 20


def test_spellings_name_the_registered_families() -> None:
    assert rankscope.parse_metric("IPrec@0.5") == rankscope.parse_metric("iprec_at_recall(p=0.5)")
    assert rankscope.parse_metric("SetAP").family == "set_map"
    assert rankscope.parse_metric("SetRelP") == rankscope.parse_metric("SetP(relative=True)")
    assert rankscope.parse_metric("SetP") == rankscope.parse_metric("set_P")
    from rankscope.errors import MetricParameterError

    with pytest.raises(MetricParameterError, match="recall level"):
        rankscope.parse_metric("IPrec")


@QUIET
def test_judged_only_against_pytrec_eval_provider() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = _generate(13)
    names = ["P(judged_only=True)@5", "P(judged_only=True,rel=2)@10", "AP(judged_only=True)",
             "Rprec(judged_only=True)", "RR(judged_only=True)", "R(judged_only=True)@10",
             "nDCG(judged_only=True)@10", "Success(judged_only=True)@3"]
    measures = [ir_measures.parse_measure(n) for n in names]
    expected = {(str(m.measure), m.query_id): m.value
                for m in ir_measures.pytrec_eval.iter_calc(measures, qrels, run)}
    result = rankscope.evaluate(qrels, run, names, allow_no_overlap=True)
    for name, measure in zip(names, measures, strict=True):
        for q in run:
            assert result.per_query[q][name] == pytest.approx(
                expected[(str(measure), q)], abs=1e-12), (name, q)
    # and each equals the plain metric under the evaluation option unjudged="condensed"
    plain = rankscope.evaluate(qrels, run, ["P@5", "AP"], unjudged="condensed",
                               allow_no_overlap=True)
    assert result["P(judged_only=True)@5"] == pytest.approx(plain["P@5"])
    assert result["AP(judged_only=True)"] == pytest.approx(plain["AP"])
