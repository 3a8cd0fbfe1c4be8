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


def _first_version(row: np.ndarray, n_resamples: int, seed: int = 0) -> tuple[float, float]:
    """The interval as the first version computed it: 64-bit draws, counts, one product a batch."""
    n = row.size
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    step = max(1, (1 << 23) // n)
    for start in range(0, n_resamples, step):
        size = min(step, n_resamples - start)
        drawn = rng.integers(0, n, size=(size, n))
        flat = (np.arange(size)[:, None] * n + drawn).ravel()  # how often each query was drawn
        counts = np.bincount(flat, minlength=size * n).reshape(size, n).astype(np.float64)
        means[start:start + size] = (counts @ row[None, :].T / n)[:, 0]
    tail = (1.0 - 0.95) / 2.0  # as computed (0.025000000000000022), the level of a 95% interval
    low, high = np.quantile(means, [tail, 1.0 - tail])
    if np.all(row == row[0]):
        return float(row[0]), float(row[0])
    return (float(np.clip(low, row.min(), row.max())), float(np.clip(high, row.min(), row.max())))


@pytest.mark.parametrize("n", [2, 7, 100, 1001, 4099])
def test_shared_resamples_give_each_metric_its_own_interval_to_the_bit(n: int) -> None:
    from rankscope.spread import bootstrap_intervals, bootstrap_intervals_each

    rng = np.random.default_rng(n)
    rows = np.round(rng.random((3, n)), 2)
    rows[2] = 0.5  # a row of equal values
    resamples = 1000 if n > 1000 else 10000
    low, high = bootstrap_intervals_each(rows, n_resamples=resamples)
    for r in range(3):
        assert (low[r], high[r]) == _first_version(rows[r], resamples)
        one = bootstrap_intervals(rows[r:r + 1], n_resamples=resamples)
        assert (one[0][0], one[1][0]) == (low[r], high[r])


def test_result_intervals_of_metrics_with_values_on_different_queries() -> None:
    import dataclasses

    qrels, run = _data(5, n=150)
    result = rankscope.evaluate(qrels, run, ["AP", "nDCG@5", "P@3", "RR"])
    values = result.values.copy()
    values[:10, 0] = np.nan  # AP, nDCG@5 and P@3 lack values on different queries,
    values[5:30, 1] = np.nan  # AP and P@3 on as many (their resamples are shared)
    values[40:50, 2] = np.nan
    result = dataclasses.replace(result, values=values)
    for j, label in enumerate(result.labels):
        column = result.values[:, j]
        present = column[~np.isnan(column)]
        assert result.interval[label] == _first_version(present, 10000)
