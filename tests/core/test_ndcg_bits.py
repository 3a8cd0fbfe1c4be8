"""nDCG is computed the trec_eval way: each gain divided by the C library's log2(rank + 1).

The reference below is trec_eval's loop written out in Python (gains are the
grades, > 0 only; ranks from score descending, ties by document id descending;
``math.log2`` is the C library's); the engine must match it to the last bit,
so ``rankscope evaluate -m ndcg_cut_10`` and ``rankscope trec_eval -m
ndcg_cut.10`` agree at full precision.
"""

from __future__ import annotations

import math
import random

import pytest
from tests.trec_eval.generate import as_dicts, qrels_and_run

import rankscope

# The data has queries on one side only, on purpose: the overlap warning is expected.
pytestmark = pytest.mark.filterwarnings("ignore::rankscope.errors.RankscopeWarning")


def _reference(judged: dict[str, int], ranked: dict[str, float], k: int | None) -> float:
    order = sorted(ranked, key=lambda d: (ranked[d], d), reverse=True)[:k]
    dcg = 0.0
    for i, d in enumerate(order):
        g = judged.get(d, 0)
        if g > 0:
            dcg += g / math.log2(i + 2)
    ideal = 0.0
    for i, g in enumerate(sorted((g for g in judged.values() if g > 0), reverse=True)[:k]):
        ideal += g / math.log2(i + 2)
    return dcg / ideal if ideal > 0 else 0.0


@pytest.mark.parametrize("seed", range(40))
def test_ndcg_is_trec_eval_to_the_last_bit(seed):
    rng = random.Random(seed)
    judged, ranked = as_dicts(*qrels_and_run(rng, n_docs=rng.choice([30, 120])))
    result = rankscope.evaluate(judged, ranked, ["ndcg", "ndcg_cut.3,10", "nDCG@5"],
                                queries="intersection")
    for q in result.query_ids:
        got = result.per_query[q]
        assert got["ndcg"] == _reference(judged[q], ranked[q], None), q
        assert got["ndcg_cut_3"] == _reference(judged[q], ranked[q], 3), q
        assert got["ndcg_cut_10"] == _reference(judged[q], ranked[q], 10), q
        assert got["nDCG@5"] == _reference(judged[q], ranked[q], 5), q
