"""C/W/L measures (BPM, INSQ, INST, SDCG, NERR8-11) against cwl_eval.

Three independent sources: ir_measures' own cwl_eval test table (transcribed), a
slow per-query reference written here from cwl_eval's definitions (C vector, W from
its products, expected utility over 1000 positions), and ir_measures' cwl_eval provider
run on seeded generated data.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import rankscope

# ir_measures tests/cwl.qrels and tests/cwl.run (terrierteam/ir_measures)
CWL_QRELS = {
    "T1": {"D1": 1, "D2": 0, "D3": 1, "D4": 1, "D7": 1, "D8": 0, "D9": 1, "D10": 0},
    "T2": {"D1": 1, "D2": 1, "D5": 1, "D6": 0, "D7": 1, "D8": 1, "D9": 1, "D10": 0},
    "T3": {"D4": 0, "D5": 0, "D6": 1, "D7": 1, "D8": 1, "D9": 0, "D10": 1},
}
SCORES = [4.3, 4.2, 4.1, 3.9, 3.8, 3.7, 3.6, 3.5, 3.4, 3.3]
CWL_RUN = {q: {f"D{i + 1}": s for i, s in enumerate(SCORES)} for q in ("T1", "T2", "T3")}

# ir_measures tests/test_cwl_eval.py: "based on a manual execution of cwl-eval"
EXPECTED = {
    "BPM(T=1.0,max_rel=1)@20": (1.0000, 1.0000, 0.1667),
    "BPM(T=2.0,max_rel=1)@10": (0.6667, 1.0000, 0.2857),
    "INSQ(T=1.0,max_rel=1)": (0.5872, 0.6629, 0.0880),
    "INSQ(T=2.0,max_rel=1)": (0.4513, 0.5068, 0.1292),
    "INST(T=1.0,max_rel=1)": (0.7934, 0.9226, 0.0888),
    "INST(T=2.0,max_rel=1)": (0.5994, 0.6924, 0.1397),
    "SDCG(max_rel=1)@10": (0.5645, 0.6531, 0.2848),
    "NERR8(max_rel=1)@10": (1.0000, 1.0000, 0.1667),
    "NERR9(max_rel=1)@10": (1.0000, 1.0000, 0.0680),
    "NERR10(p=0.8,max_rel=1)": (1.0000, 1.0000, 0.0888),
    "NERR11(T=2.0,max_rel=1)": (1.0000, 1.0000, 0.0691),
}


def test_ir_measures_cwl_eval_table() -> None:
    result = rankscope.evaluate(CWL_QRELS, CWL_RUN, list(EXPECTED))
    for name, values in EXPECTED.items():
        got = [result.per_query[q][name] for q in ("T1", "T2", "T3")]
        assert got == pytest.approx(values, abs=1e-4), name


def _reference(family: str, gains: list[float], k: int | None, params: dict[str, float],
               n: int = 1000) -> float:
    """cwl_eval's expected utility, one query, written from its definitions."""
    g = (gains + [0.0] * n)[:n]
    c = []
    cg = 0.0
    for i in range(1, n + 1):
        cg += g[i - 1]
        t = params.get("T", 1.0)
        if family == "BPM":
            c.append(1.0 if cg < t and i < (k or 0) else 0.0)
        elif family == "INSQ":
            c.append(((i + 2 * t - 1) / (i + 2 * t)) ** 2)
        elif family == "INST":
            ti = t - cg
            c.append(((i + t + ti - 1) / (i + t + ti)) ** 2)
        elif family == "SDCG":
            c.append(math.log(i + 1, 2) / math.log(i + 2, 2) if i < (k or 0) else 0.0)
        elif family == "NERR8":
            c.append(1 - g[i - 1] if i < (k or 0) else 0.0)
        elif family == "NERR9":
            c.append(i / (i + 1) * (1 - g[i - 1]) if i < (k or 0) else 0.0)
        elif family == "NERR10":
            c.append(params["p"] * (1 - g[i - 1]))
        else:
            c.append(((i + 2 * t - 1) / (i + 2 * t)) ** 2 * (1 - g[i - 1]))
    reach = [1.0]
    for ci in c[:-1]:
        reach.append(reach[-1] * ci)
    total = sum(reach)
    return sum(r / total * gi for r, gi in zip(reach, g, strict=True))


def _generate(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(15):
        docs = [f"d{i}" for i in range(int(rng.integers(0, 40)))]
        judged = [d for d in docs if rng.random() < 0.7] + [f"x{i}" for i in range(3)]
        qrels[f"q{q}"] = {d: int(rng.integers(-1, 4)) for d in judged}
        if docs:
            run[f"q{q}"] = {d: float(s) for d, s in
                            zip(docs, rng.permutation(len(docs)) + 0.5, strict=True)}
    return qrels, run


CASES = [("BPM", 10, {"T": 1.0}), ("BPM", 25, {"T": 2.5}), ("INSQ", None, {"T": 1.5}),
         ("INST", None, {"T": 2.0}), ("SDCG", 10, {}), ("NERR8", 10, {}), ("NERR9", 20, {}),
         ("NERR10", None, {"p": 0.7}), ("NERR11", None, {"T": 1.0})]


def _name(family: str, k: int | None, params: dict[str, float], max_rel: int) -> str:
    shown = ",".join([f"{key}={value}" for key, value in params.items()] + [f"max_rel={max_rel}"])
    return f"{family}({shown})" + (f"@{k}" if k else "")


QUIET = pytest.mark.filterwarnings("ignore::rankscope.errors.RankscopeWarning")  # queries missing


@QUIET
@pytest.mark.parametrize("min_rel", [0, 1])
def test_against_a_reference_on_generated_data(min_rel: int) -> None:
    qrels, run = _generate(3)
    max_rel = 3
    names = [_name(f, k, p, max_rel).replace("(", f"(min_rel={min_rel},", 1)
             for f, k, p in CASES]
    result = rankscope.evaluate(qrels, run, names, allow_no_overlap=True)
    for (family, k, params), name in zip(CASES, names, strict=True):
        for q in qrels:
            ranked = sorted(run.get(q, {}), key=lambda d: -run[q][d])
            gains = []
            for d in ranked:
                grade = min(max(max(qrels[q].get(d, 0), 0), min_rel), max_rel)
                gains.append((grade - min_rel) / (max_rel - min_rel))
            expected = _reference(family, gains, k, params)
            assert result.per_query[q][name] == pytest.approx(expected, rel=1e-9, abs=1e-12), (
                name, q)


@QUIET
def test_against_ir_measures_cwl_eval_provider() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("cwl")
    qrels, run = _generate(11)
    measures = [ir_measures.parse_measure(_name(f, k, p, 3)) for f, k, p in CASES]
    expected: dict[tuple[str, str], float] = {}
    for metric in ir_measures.cwl_eval.iter_calc(measures, qrels, run):
        expected[(str(metric.measure), metric.query_id)] = metric.value
    names = [_name(f, k, p, 3) for f, k, p in CASES]
    result = rankscope.evaluate(qrels, run, names, allow_no_overlap=True)
    for name, measure in zip(names, measures, strict=True):
        for q in qrels:
            assert result.per_query[q][name] == pytest.approx(
                expected[(str(measure), q)], rel=1e-9, abs=1e-12), (name, q)


def test_parameters_and_refusals() -> None:
    from rankscope.errors import MetricParameterError

    assert rankscope.parse_metric("SDCG(dcg='log2',max_rel=2)@5").name == "SDCG(max_rel=2)@5"
    assert rankscope.parse_metric("NERR10(0.5)").name == "NERR10(p=0.5)"
    with pytest.raises(MetricParameterError, match="needs a cut-off"):
        rankscope.parse_metric("BPM")
    with pytest.raises(MetricParameterError, match=r"max_rel .* must be above min_rel"):
        rankscope.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "INST(min_rel=1)")
