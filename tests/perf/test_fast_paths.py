"""Fast paths of the engine against their definitions, bit for bit, on random data."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rankscope.engine.qrels_index import _best_first
from rankscope.engine.rowsets import CutSums, running_sum


def _grades(rng: np.random.Generator, kind: int, m: int) -> np.ndarray:
    if kind == 0:
        return rng.integers(0, 4, m).astype(float)
    if kind == 1:
        return rng.integers(-3, 3, m).astype(float)  # negative grades
    if kind == 2:
        return rng.integers(0, 4, m) + 0.5 * (rng.random(m) < 0.1)  # a few halves
    if kind == 3:
        return rng.integers(0, 10**6, m).astype(float)  # a span too wide to count
    if kind == 4:
        return np.where(rng.random(m) < 0.2, -0.0, rng.integers(0, 3, m).astype(float))
    return np.where(rng.random(m) < 0.1, np.nan, rng.integers(0, 3, m).astype(float))


@pytest.mark.parametrize("seed", range(40))
def test_best_first_is_the_sort_by_query_then_grade_descending(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 30)), int(rng.integers(0, 300))
    q = rng.integers(0, n, m)
    if seed % 2:
        q = np.sort(q)
    g = _grades(rng, seed % 6, m)
    expected = g[np.lexsort((-g, q))]
    assert _best_first(q.astype(np.int64), g, n).tobytes() == expected.tobytes()


def _running_sum_definition(weights: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    out = np.empty(weights.size)
    for a, b in itertools.pairwise(offsets.tolist()):
        total = 0.0
        for i in range(a, b):  # left to right, as trec_eval's C loops add
            total += float(weights[i])
            out[i] = total
    return out


@pytest.mark.parametrize("at_once", [1, 5, 37])
@pytest.mark.parametrize("seed", range(6))
def test_running_sums_laid_out_a_few_elements_at_a_time_match_their_definition(
        seed: int, at_once: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # at 10^7 judgments each size class is laid out in pieces of _SUMMED_AT_ONCE elements
    # (a segment longer than that alone): the sums must not depend on the pieces
    from rankscope.engine import rowsets

    monkeypatch.setattr(rowsets, "_SUMMED_AT_ONCE", at_once)
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 60, int(rng.integers(2, 40)))
    lengths[0] = 1  # never every segment of one length (the reshaped path)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    size = int(offsets[-1])
    weights = rng.random(size) * 10.0 ** rng.uniform(-6, 6, size)
    expected = _running_sum_definition(weights, offsets)
    assert running_sum(weights, offsets).tobytes() == expected.tobytes()


@pytest.mark.parametrize("seed", range(40))
def test_running_sums_and_cut_sums_match_their_definition(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 25))
    depth = int(rng.integers(1, 30))
    # even seeds: every non-empty query equally long (the reshaped path)
    lengths = np.where(rng.random(n) < 0.3, 0, depth) if seed % 2 == 0 else \
        rng.integers(0, 30, n)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    size = int(offsets[-1])
    weights = rng.random(size) * 10.0 ** rng.uniform(-6, 6, size)
    running = _running_sum_definition(weights, offsets)
    assert running_sum(weights, offsets).tobytes() == running.tobytes()

    q = np.repeat(np.arange(n), lengths)
    dense = np.arange(size) - np.repeat(offsets[:-1], lengths)  # ranks 0, 1, 2, ...
    sparse = dense * 3 + (rng.random(size) < 0.5)  # some ranks skipped
    for pos in (dense, sparse):
        sums = CutSums.of(weights, q, pos, offsets)
        for k in (-1, 0, 1, 2, 5, 10, 100):
            expected = np.zeros(n)
            for query in range(n):
                rows = np.flatnonzero((q == query) & (pos < k))
                if rows.size:
                    expected[query] = running[rows[-1]] + 0.0
            assert sums.above(k).tobytes() == expected.tobytes(), (k, pos is dense)
