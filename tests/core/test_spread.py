"""Per-query spread in every result: standard deviation (ranx's return_std) and intervals."""

from __future__ import annotations

import json

import numpy as np
import pytest

import rankscope
from rankscope.spread import population_std


def _data(seed: int, n: int = 60) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = np.random.default_rng(seed)
    qrels = {f"q{i:02d}": {f"d{j}": int(rng.integers(0, 3)) for j in range(8)} for i in range(n)}
    run = {q: {f"d{j}": float(s) for j, s in enumerate(rng.permutation(8))} for q in qrels}
    return qrels, run


def test_std_is_the_population_deviation_of_the_values_with_a_value() -> None:
    qrels, run = _data(1)
    result = rankscope.evaluate(qrels, run, ["P@3", "nDCG@5", "num_ret"])
    for label in result.labels:
        values = [v[label] for v in result.per_query.values()]
        mean = sum(values) / len(values)
        expected = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5  # divisor n
        assert result.std[label] == pytest.approx(expected, rel=1e-12)
    # null values are left out (judging platform's rules), as the means leave them out
    assert population_std(np.array([1.0, np.nan, 3.0])) == 1.0
    assert population_std(np.array([np.nan])) is None


def test_interval_brackets_the_mean_and_matches_the_normal_approximation() -> None:
    qrels, run = _data(2, n=400)
    result = rankscope.evaluate(qrels, run, ["AP", "nDCG@5", "num_ret", "gm_map"])
    for label in ("AP", "nDCG@5"):
        low, high = result.interval[label]  # type: ignore[misc]
        mean, std = result[label], result.std[label]
        assert low < mean < high  # type: ignore[operator]
        # 400 queries: the percentile interval is close to mean +- 1.96 sigma / sqrt(n)
        half = 1.959964 * std / 400**0.5  # type: ignore[operator]
        assert low == pytest.approx(mean - half, abs=0.2 * half)  # type: ignore[operator]
        assert high == pytest.approx(mean + half, abs=0.2 * half)  # type: ignore[operator]
    assert result.interval["num_ret"] is None and result.interval["gm_map"] is None  # sum, gmean
    wider = result.intervals(0.99)["AP"]
    assert wider[0] < result.interval["AP"][0] and wider[1] > result.interval["AP"][1]  # type: ignore[index]


def test_interval_is_compares_for_the_same_run() -> None:
    pytest.importorskip("scipy")
    qrels, run = _data(3, n=50)
    result = rankscope.evaluate(qrels, run, ["nDCG@5"], run_name="a")
    other = {q: {d: -s for d, s in docs.items()} for q, docs in run.items()}
    comparison = rankscope.compare(qrels, {"a": run, "b": other}, ["nDCG@5"])
    assert comparison.intervals["a"]["nDCG@5"] == pytest.approx(result.interval["nDCG@5"])


def test_every_rendering_carries_std_and_interval() -> None:
    qrels, run = _data(4, n=10)
    result = rankscope.evaluate(qrels, run, ["P@5"])
    data = json.loads(result.render("json"))
    assert data["std"]["P@5"] == pytest.approx(result.std["P@5"])
    assert data["interval"]["P@5"] == pytest.approx(list(result.interval["P@5"]))  # type: ignore[arg-type]
    assert data["confidence"] == 0.95
    frame = result.to_polars()
    assert frame.columns == ["metric", "value", "n_queries", "std", "ci_low", "ci_high"]
    header = result.render("csv").splitlines()[0]
    assert header == "run,metric,value,n_queries,std,ci_low,ci_high"
    assert "ci95" in result.render("table").splitlines()[0]


@pytest.mark.slow
def test_std_equals_ranx_return_std() -> None:
    ranx = pytest.importorskip("ranx")
    qrels, run = _data(5, n=40)
    metrics = ["ndcg@5", "map", "precision@3", "mrr"]
    report = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), metrics, return_std=True)
    result = rankscope.evaluate(qrels, run, metrics)
    for m in metrics:
        assert result.std[m] == pytest.approx(report[m]["std"], rel=1e-9), m
