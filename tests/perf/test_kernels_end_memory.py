"""The kernels' end of ``trec_eval -m all_trec`` on large inputs: trec_eval's pooled rows
are the judged rows themselves when no ranked row is judged negative (one row set of 24
bytes a row kept, not two), and the DCG discounts are divided a block at a time, the
global ideal DCG's without an array of every judgment's position; the bits the same as
the definition's."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from rankscope.data.tables import Qrels, Run
from rankscope.engine.c_math import log2_table
from rankscope.engine.context import Context, discounted, log2_ranks
from rankscope.engine.kernels_graded import ndcg
from rankscope.engine.ranking import rank
from rankscope.metrics.parser import parse_metric


def reads_of(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """A list that grows by one at each read of the Context property ``name`` (a
    ``property`` or a ``cached_property``; the value read is unchanged)."""
    held = Context.__dict__[name]
    made = held.fget if isinstance(held, property) else held.func
    reads: list[int] = []

    def counted(self: Context) -> object:
        reads.append(1)
        return made(self)

    monkeypatch.setattr(Context, name, property(counted))
    return reads


def _lists(seed: int, negative: bool, levels: bool = True) -> Context:
    """8 queries (one with no judgment), 30 ranked documents each, ties among scores."""
    rng = np.random.default_rng(seed)
    qrels_rows = []
    run_rows = []
    for q in range(8):
        judged = rng.choice(50, 0 if q == 3 else 20, replace=False)
        grades = rng.integers(0, 4, judged.size).astype(float)
        if negative and q == 5:
            grades[:3] = -1.0
        qrels_rows += [(f"q{q}", f"d{d}", g) for d, g in zip(judged.tolist(), grades.tolist(),
                                                            strict=True)]
        ranked = rng.choice(50, 30, replace=False)
        if negative and q == 5:  # the documents judged negative among the ranked ones
            ranked = np.concatenate((judged[:3], np.setdiff1d(ranked, judged[:3])[:27]))
        run_rows += [(f"q{q}", f"d{d}", float(s)) for d, s in zip(
            ranked.tolist(), rng.integers(0, 8, 30).tolist(), strict=True)]
    qrels = Qrels(pl.DataFrame(qrels_rows, schema=["query_id", "doc_id", "grade"], orient="row"))
    run = Run(pl.DataFrame(run_rows, schema=["query_id", "doc_id", "score"], orient="row"))
    return Context(rank(qrels, run, levels=levels))


@pytest.mark.parametrize("seed", range(3))
def test_the_pooled_rows_are_the_judged_rows_when_none_is_judged_negative(seed: int) -> None:
    ctx = _lists(seed, negative=False)
    grades = ctx.lists.grades
    assert ctx.pool_rows is ctx.judged_rows  # one set (a second one before)
    # the definition: every ranked row in the qrels at all (a level >= 0, or -2)
    assert np.array_equal(ctx.pool_rows.rows, np.flatnonzero((grades >= 0) | (grades == -2)))


@pytest.mark.parametrize("seed", range(3))
def test_the_pooled_rows_keep_the_rows_judged_negative(seed: int) -> None:
    ctx = _lists(seed, negative=True)
    grades = ctx.lists.grades
    expected = np.flatnonzero((grades >= 0) | (grades == -2))
    assert (grades == -2).any()
    assert ctx.pool_rows is not ctx.judged_rows
    assert np.array_equal(ctx.pool_rows.rows, expected)
    starts = ctx.lists.offsets
    q = np.searchsorted(starts, expected, side="right") - 1
    assert np.array_equal(ctx.pool_rows.q, q)
    assert np.array_equal(ctx.pool_rows.pos, expected - starts[q])


def test_discounted_is_the_division_by_each_ranks_discount() -> None:
    rng = np.random.default_rng(7)
    # more rows than one block (65,536), queries of up to 5,000 rows, some empty
    lengths = rng.integers(0, 5_000, 60)
    lengths[[4, 17]] = 0
    pos = np.concatenate([np.arange(n) for n in lengths]).astype(np.int64)
    gains = rng.integers(0, 4, pos.size) * rng.random(pos.size)
    # the definition: gain / log2(rank + 1), the C library's log2 (math.log2)
    table = log2_table(int(pos.max()) + 2)
    expected = gains / table[pos + 2]
    assert np.array_equal(log2_ranks(pos), table[pos + 2])
    assert discounted(gains, pos).tobytes() == expected.tobytes()
    inplace = gains.copy()
    assert discounted(inplace, pos, out=inplace) is inplace
    assert inplace.tobytes() == expected.tobytes()


def test_the_global_ideal_dcg_makes_no_array_of_every_judgments_position(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = _lists(11, negative=False, levels=False)
    reads = reads_of(monkeypatch, "judged_pos")
    metric = parse_metric("ndcg")  # trec_eval's: the ideal of every judgment (global)
    assert metric.get("ideal") == "global"
    values = ndcg(ctx, metric)
    assert reads == []  # read once before: one array of 8 bytes a judgment
    # the definition, query by query: the judged grades best first over log2(rank + 1)
    lists = ctx.lists
    for q in range(lists.n_queries):
        best = np.sort(lists.judged_grades[lists.judged_offsets[q]:lists.judged_offsets[q + 1]])
        best = np.maximum(best[::-1], 0.0)
        ideal = 0.0
        for i, g in enumerate(best.tolist()):
            ideal += g / float(log2_table(i + 2)[i + 2])
        grades = np.nan_to_num(lists.grades[lists.offsets[q]:lists.offsets[q + 1]], nan=0.0)
        dcg = 0.0
        for i, g in enumerate(np.maximum(grades, 0.0).tolist()):
            if g:
                dcg += g / float(log2_table(i + 2)[i + 2])
        assert values[q] == (dcg / ideal if ideal > 0 else 0.0), q
    assert lists.judged_grades.size > 0
