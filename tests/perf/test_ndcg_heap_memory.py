"""What ``trec_eval -m all_trec``'s nDCG kernels make beside the kept values on large
inputs: no copy of the read-only arrays kept with the qrels for a per-query sum, no array
of every judgment's position for the ideal DCG's cut-off sums, 32-bit (query, rank) keys,
the judged grades gathered a block at a time and running sums taken in place; the bits
the same as the definition's."""

from __future__ import annotations

import itertools
import tracemalloc

import numpy as np
import pytest
from tests.perf.test_kernels_end_memory import _lists, reads_of

from rankscope.engine import rowsets
from rankscope.engine.c_math import log2_table
from rankscope.engine.gain_rule import gains_of
from rankscope.engine.kernels_graded import ndcg
from rankscope.engine.rowsets import CutSums, rank_keys, running_sum, segment_sums
from rankscope.metrics import ndcg as ndcg_metric
from rankscope.metrics.parser import parse_metric

MB = 1024 * 1024


def _offsets(rng: np.random.Generator, queries: int, longest: int) -> np.ndarray:
    lengths = rng.integers(0, longest, queries)
    lengths[[1, queries // 2]] = 0  # empty queries among them
    return np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def test_segment_sums_are_bincounts_bits() -> None:
    rng = np.random.default_rng(3)
    offsets = _offsets(rng, 300, 2_000)  # more rows than a block, one block's worth of queries
    weights = rng.random(int(offsets[-1])) * rng.integers(-3, 4, int(offsets[-1]))
    segment = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    # the definition: each segment's rows added left to right from 0, in Python
    expected = [sum(weights[a:b].tolist(), 0.0) for a, b in itertools.pairwise(offsets)]
    got = segment_sums(weights, offsets)
    assert got.tolist() == expected
    assert got.tobytes() == np.bincount(segment, weights=weights,
                                        minlength=offsets.size - 1).tobytes()


def test_segment_sums_copy_no_read_only_array_whole() -> None:
    rng = np.random.default_rng(5)
    offsets = _offsets(rng, 4_000, 1_000)  # 2 M rows: 16 MB of weights
    weights = _read_only(rng.random(int(offsets[-1])))
    tracemalloc.start()
    try:
        segment_sums(weights, offsets)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # np.bincount copies a read-only array whole: 16 MB for these weights
    assert peak < 4 * MB


def test_judged_sum_reads_no_judged_query(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = _lists(2, negative=False, levels=False)
    lists = ctx.lists
    values = _read_only(np.random.default_rng(1).random(lists.judged_grades.size))
    expected = np.bincount(ctx.judged_query, weights=values, minlength=ctx.n)
    reads = reads_of(monkeypatch, "judged_query")
    got = ctx.judged_sum(values)
    assert reads == []  # read before: a read-only array np.bincount copied whole
    assert got.tobytes() == expected.tobytes()


def test_the_ideal_dcgs_cut_off_sums_make_no_array_of_every_judgments_position(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = _lists(13, negative=False, levels=False)
    reads = reads_of(monkeypatch, "judged_pos")
    lists = ctx.lists
    for k in (3, 10):
        metric = parse_metric(f"ndcg@{k}")
        assert metric.get("ideal") == "global"
        values = ndcg(ctx, metric)
        # the definition, query by query: the judged grades best first over log2(rank + 1)
        for q in range(lists.n_queries):
            judged = lists.judged_grades[lists.judged_offsets[q]:lists.judged_offsets[q + 1]]
            best = np.maximum(np.sort(judged)[::-1], 0.0)[:k]
            ideal = 0.0
            for i, g in enumerate(best.tolist()):
                ideal += g / float(log2_table(i + 2)[i + 2])
            grades = np.nan_to_num(lists.grades[lists.offsets[q]:lists.offsets[q + 1]], nan=0.0)
            dcg = 0.0
            for i, g in enumerate(np.maximum(grades, 0.0)[:k].tolist()):
                if g:
                    dcg += g / float(log2_table(i + 2)[i + 2])
            assert values[q] == (dcg / ideal if ideal > 0 else 0.0), (k, q)
    assert reads == []  # read once before: one array of 8 bytes a judgment


def test_dense_cut_sums_are_the_general_ones() -> None:
    rng = np.random.default_rng(9)
    offsets = _offsets(rng, 50, 40)
    pos = np.concatenate([np.arange(n) for n in np.diff(offsets)]).astype(np.int64)
    q = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    terms = rng.random(pos.size)
    dense, general = CutSums.of_dense(terms, offsets), CutSums.of(terms, q, pos, offsets)
    assert dense.keys is None and dense.stride == general.stride
    for k in (0, 1, 5, 39, 100):
        assert dense.above(k).tobytes() == general.above(k).tobytes()


def test_the_rank_keys_are_32_bit_and_the_cut_off_sums_the_definitions() -> None:
    rng = np.random.default_rng(4)
    offsets = _offsets(rng, 40, 30)
    q = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    # ranks with gaps (the ranked rows of a gain), increasing within each query
    pos = np.concatenate([np.sort(rng.choice(90, n, replace=False))
                          for n in np.diff(offsets)]).astype(np.int64)
    terms = rng.random(pos.size)
    sums = CutSums.of(terms, q, pos, offsets)
    assert sums.keys is not None
    assert sums.keys.dtype == np.int32  # int64 before: 8 bytes a gaining row
    for k in (0, 1, 7, 50, 89, 500):
        expected = [sum((t for t, p in zip(terms[a:b].tolist(), pos[a:b].tolist(), strict=True)
                         if p < k), 0.0)
                    for a, b in itertools.pairwise(offsets)]
        assert sums.above(k).tolist() == expected
    rows = rowsets.RowSet(np.arange(pos.size), q, pos, offsets.size - 1)
    assert rows._rank_keys[0].dtype == np.int32
    for depth in (0, 3, 60, 1_000):
        assert rows.count_within(depth).tolist() == np.bincount(
            q[pos < depth], minlength=offsets.size - 1).tolist()


def test_the_rank_keys_are_64_bit_past_32_bits() -> None:
    q = np.array([0, 1, 2], dtype=np.int64)
    pos = np.array([5, 0, 7], dtype=np.int64)
    keys = rank_keys(q, pos, 3, 1 << 30)
    assert keys.dtype == np.int64
    assert keys.tolist() == [5, (1 << 30), 2 * (1 << 30) + 7]


def test_running_sum_in_place() -> None:
    rng = np.random.default_rng(6)
    offsets = _offsets(rng, 600, 3_000)  # several size classes, pieces past one matrix
    weights = rng.random(int(offsets[-1]))
    expected = running_sum(weights, offsets)
    inplace = weights.copy()
    assert running_sum(inplace, offsets, out=inplace) is inplace
    assert inplace.tobytes() == expected.tobytes()


@pytest.mark.parametrize("metric", [ndcg_metric(), ndcg_metric(gain="exp")], ids=str)
def test_the_gains_of_gathered_rows_gather_a_block_at_a_time(metric: object) -> None:
    rng = np.random.default_rng(8)
    grades = rng.integers(-1, 4, 1 << 22).astype(np.float64)  # 32 MB
    grades[rng.random(grades.size) < 0.3] = np.nan
    rows = np.sort(rng.choice(grades.size, 1 << 21, replace=False))  # 16 MB of gains
    expected = gains_of(grades[rows], metric)  # type: ignore[arg-type]
    tracemalloc.start()
    try:
        got = gains_of(grades, metric, rows)  # type: ignore[arg-type]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got.tobytes() == expected.tobytes()
    # the gains and a few blocks' temporaries, no 16 MB of gathered grades beside them
    assert peak < got.nbytes + 8 * MB
