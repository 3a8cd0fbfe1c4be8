"""``trec_eval -m all_trec``'s ``bpref`` and ``ndcg_rel`` on large inputs: their per-row
terms made a block of whole queries at a time (no array of every judged or gaining row's
grade, count, rank or term beside the kept ones), R and N counted a block at a time, a
row set's ranks made in place and running sums laid out a quarter million at a time;
the values the definition's, added rank by rank in Python."""

from __future__ import annotations

import itertools
import tracemalloc

import numpy as np
import polars as pl
import pytest
from tests.perf.test_kernels_end_memory import _lists, reads_of

from rankscope.data.tables import Qrels, Run
from rankscope.engine import kernels_trec_gain, rowsets
from rankscope.engine.context import Context
from rankscope.engine.kernels_binary import _bpref_values
from rankscope.engine.kernels_trec_gain import _running_parts
from rankscope.engine.ranking import rank
from rankscope.engine.trec_gains import gain_info
from rankscope.metrics.base import make_metric

QUERIES = 60
"""Queries of 1,000 ranked documents, about 670 of them judged (40,000 judged rows, 30,000
gaining): about 40 blocks of whole queries."""

BLOCK = 1 << 10


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rowsets, "_SEGMENT_ROWS", BLOCK)


@pytest.fixture(scope="module")
def big() -> Context:
    rng = np.random.default_rng(30)
    qrels: dict[str, list[object]] = {"query_id": [], "doc_id": [], "grade": []}
    run: dict[str, list[object]] = {"query_id": [], "doc_id": [], "score": []}
    for q in range(QUERIES):
        judged = np.array([], dtype=np.int64) if q == 7 else rng.choice(1_200, 800, replace=False)
        qrels["query_id"] += [f"q{q}"] * judged.size
        qrels["doc_id"] += [f"d{d}" for d in judged.tolist()]
        qrels["grade"] += rng.integers(0, 4, judged.size).astype(float).tolist()
        ranked = rng.choice(1_200, 1_000, replace=False)
        run["query_id"] += [f"q{q}"] * ranked.size
        run["doc_id"] += [f"d{d}" for d in ranked.tolist()]
        run["score"] += rng.permutation(ranked.size).astype(float).tolist()
    return Context(rank(Qrels(pl.DataFrame(qrels)), Run(pl.DataFrame(run)), levels=True))


def _traced_peak(call: object) -> int:
    tracemalloc.start()
    try:
        call()  # type: ignore[operator]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_bpref_is_the_definition(big: Context) -> None:
    got = _bpref_values(big, 1)
    grades = big.lists.grades
    offsets = big.lists.offsets
    for q in range(big.n):
        mine = grades[offsets[q]:offsets[q + 1]].tolist()
        judged_grades = big.lists.judged_grades[
            big.lists.judged_offsets[q]:big.lists.judged_offsets[q + 1]].tolist()
        big_r = sum(1 for g in judged_grades if g >= 1)
        big_n = sum(1 for g in judged_grades if 0 <= g < 1)
        total, nonrel_above = 0.0, 0
        for g in mine:  # trec_eval's loop: rank by rank
            if g >= 1:
                if nonrel_above > 0:
                    total += 1.0 - min(nonrel_above, big_r) / min(big_n, big_r)
                else:
                    total += 1.0
            elif g >= 0:
                nonrel_above += 1
        assert got[q] == (total / big_r if big_r else 0.0), q


def test_bpref_makes_no_array_of_every_judged_row(big: Context) -> None:
    judged = big.judged_rows  # kept: made before, read by the kernels before bpref
    big.n_relevant(1)
    big.n_judged_nonrelevant(1)
    assert judged.rows.size > 8 * BLOCK
    # on the whole set: the judged grades, the counts above (and their running sums),
    # the relevant rows' set, caps and terms, 8 bytes a row each: 0.3 MB each here
    assert _traced_peak(lambda: _bpref_values(big, 1)) < judged.rows.nbytes // 2


def _ndcg_rel_definition(big: Context) -> list[float]:
    gi = gain_info(big, ())
    run_dcg, run_ideal = _running_parts(big, gi)
    out = []
    for q in range(big.n):
        a, b = int(gi.rows.offsets[q]), int(gi.rows.offsets[q + 1])
        ia, length = int(gi.ideal_offsets[q]), int(gi.ideal_len[q])
        ideal = run_ideal[ia:ia + length].tolist()
        total, hits = 0.0, 0
        with np.errstate(divide="ignore", invalid="ignore"):
            for i in range(a, b):  # each gaining row in rank order
                if gi.gain[i] > 0.0:
                    upto = min(int(gi.rows.pos[i]), length - 1)
                    total += float(np.float64(run_dcg[i]) / np.float64(
                        ideal[upto] if upto >= 0 else 0.0))
                    hits += 1
            ranked = int(big.lists.offsets[q + 1] - big.lists.offsets[q])
            last = [i for i in range(a, b) if gi.rows.pos[i] < ranked]
            full_dcg = run_dcg[last[-1]] if last else 0.0
            full_ideal = ideal[-1] if length else 0.0
            total = float(total + np.float64((length - hits) * full_dcg) / np.float64(full_ideal))
        out.append(total / length if total > 0.0 else 0.0)
    return out


def test_ndcg_rel_is_the_definition(big: Context) -> None:
    got = kernels_trec_gain.ndcg_rel(big, make_metric("ndcg_rel"))
    assert got.tolist() == _ndcg_rel_definition(big)


def test_ndcg_rels_terms_make_no_array_of_every_gaining_row(
        big: Context, monkeypatch: pytest.MonkeyPatch) -> None:
    gi = gain_info(big, ())
    gi.ideal_len  # noqa: B018  (kept with the gain info, made by the kernels before)
    parts = _running_parts(big, gi)
    assert gi.rows.rows.size > 6 * BLOCK
    monkeypatch.setattr(kernels_trec_gain, "_running_parts", lambda st, g: parts)
    metric = make_metric("ndcg_rel")
    # on the whole set: each gaining row's query, rank, ideal DCG, term, ... (8 bytes each)
    assert _traced_peak(lambda: kernels_trec_gain.ndcg_rel(big, metric)) < gi.rows.rows.nbytes


def test_a_row_sets_ranks_are_made_in_place(big: Context) -> None:
    rows = np.flatnonzero(big.judged)
    starts = big.lists.offsets
    got = big.rowset(rows)
    q = np.searchsorted(starts, rows, side="right") - 1  # the definition
    assert np.array_equal(got.q, q)
    assert np.array_equal(got.pos, rows - starts[q])
    assert got.pos.dtype == np.int64
    # the set's query and rank arrays, no third array of its size beside them
    assert _traced_peak(lambda: big.rowset(rows)) < 2.5 * rows.nbytes


def test_running_sums_are_laid_out_a_quarter_million_at_a_time() -> None:
    rng = np.random.default_rng(31)
    lengths = rng.integers(1, 700, 6_000)  # 2.1 M rows of uneven lengths: 17 MB of weights
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    weights = rng.random(int(offsets[-1]))
    expected = [x for a, b in itertools.pairwise(offsets)
                for x in itertools.accumulate(weights[a:b].tolist())]  # from 0, left to right
    peak = _traced_peak(lambda: rowsets.running_sum(weights, offsets, out=weights))
    assert weights.tolist() == expected
    # a matrix of 2^20 elements and its row, column and source indices: 50 MB at once before
    assert peak < 16 * 1024 * 1024


@pytest.mark.parametrize("seed", range(3))
def test_the_judged_counts_make_no_array_of_every_judgments_query(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = _lists(seed, negative=True)
    monkeypatch.setattr(rowsets, "_SEGMENT_ROWS", 16)  # some judgments' queries a block
    reads = reads_of(monkeypatch, "judged_query")
    got_r, got_n = ctx.n_relevant(2), ctx.n_judged_nonrelevant(2)
    assert reads == []  # read before: every kept judgment's query, 8 bytes each
    offsets = ctx.lists.judged_offsets
    for q in range(ctx.n):  # the definition: each query's judgments counted in Python
        grades = ctx.lists.judged_grades[offsets[q]:offsets[q + 1]].tolist()
        assert got_r[q] == sum(1 for g in grades if g >= 2)
        assert got_n[q] == sum(1 for g in grades if 0 <= g < 2)
    assert got_r.dtype == got_n.dtype == np.float64
