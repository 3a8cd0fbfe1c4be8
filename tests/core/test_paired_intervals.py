"""Intervals of runs and of their differences from one set of resampled means (issue 30,
section 3: a comparison resampled every difference as a row of its own).

The reference is independent: resampled means worked out from the drawn query indices one
resample at a time.
"""

from __future__ import annotations

import numpy as np
import pytest

from rankscope.spread import bootstrap_intervals, paired_bootstrap_intervals


def _slow(values: np.ndarray, n_resamples: int, seed: int,
          confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """The definition: each resample's drawn queries, their mean, numpy's quantiles."""
    rows, n = values.shape
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, n, size=(n_resamples, n), dtype=np.int32)
    means = np.array([[values[r, idx].mean() for r in range(rows)] for idx in drawn])
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail], axis=0)
    flat = np.all(values == values[:, :1], axis=1)
    low[flat] = high[flat] = values[flat, 0]
    return (np.clip(low, values.min(axis=1), values.max(axis=1)),
            np.clip(high, values.min(axis=1), values.max(axis=1)))


@pytest.mark.parametrize(("n", "confidence"), [(2, 0.95), (17, 0.9), (250, 0.95)])
def test_runs_and_differences_match_resampling_by_definition(n: int, confidence: float) -> None:
    rng = np.random.default_rng(n)
    runs = np.round(rng.random((4, n)), 3)
    runs[3] = runs[0]  # a run equal to the baseline: a difference of zeros
    pairs = [(1, 0), (2, 0), (3, 0), (2, 1)]
    low, high = paired_bootstrap_intervals(runs, pairs, confidence=confidence,
                                           n_resamples=700, seed=5)
    rows = np.vstack([runs, *[runs[a] - runs[b] for a, b in pairs]])
    want_low, want_high = _slow(rows, 700, 5, confidence)
    np.testing.assert_allclose(low, want_low, rtol=0, atol=1e-12)
    np.testing.assert_allclose(high, want_high, rtol=0, atol=1e-12)
    assert low[6] == high[6] == 0.0  # the equal runs' difference is exactly zero
    # the runs' ends are those of resampling the runs alone, to the bit
    alone = bootstrap_intervals(runs, confidence=confidence, n_resamples=700, seed=5)
    assert np.array_equal(low[:4], alone[0]) and np.array_equal(high[:4], alone[1])


def test_differences_are_not_resampled_as_rows_of_their_own(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every difference comes from its runs' resampled means: the products cover the runs."""
    import rankscope.spread as spread

    shapes: list[tuple[int, int]] = []
    original = spread._resampled_means

    def recorded(x: np.ndarray, batches: object) -> np.ndarray:
        shapes.append(x.shape)
        return original(x, batches)  # type: ignore[arg-type]

    monkeypatch.setattr(spread, "_resampled_means", recorded)
    runs = np.random.default_rng(3).random((5, 40))
    all_pairs = [(j, i) for i in range(5) for j in range(i + 1, 5)]
    low, high = paired_bootstrap_intervals(runs, all_pairs, n_resamples=300)
    assert shapes == [(5, 40)] and low.shape == high.shape == (15,)


def test_differences_in_small_steps_at_many_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """At many rounds the differences' resampled means are made a few at a time; the ends
    are those of making them all at once."""
    import rankscope.spread as spread

    runs = np.random.default_rng(8).random((4, 30))
    pairs = [(1, 0), (2, 0), (3, 0), (3, 1), (2, 1)]
    at_once = paired_bootstrap_intervals(runs, pairs, n_resamples=400, seed=2)
    monkeypatch.setattr(spread, "_BATCH_CELLS", 2 * 400)  # two differences per step
    stepped = paired_bootstrap_intervals(runs, pairs, n_resamples=400, seed=2)
    assert np.array_equal(at_once[0], stepped[0]) and np.array_equal(at_once[1], stepped[1])


def test_fewer_than_two_queries_give_no_interval() -> None:
    low, high = paired_bootstrap_intervals(np.array([[0.5], [0.25]]), [(1, 0)])
    assert low.shape == (3,) and bool(np.isnan(low).all() and np.isnan(high).all())
