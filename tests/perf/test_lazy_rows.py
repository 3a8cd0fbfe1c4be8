"""The ranked rows' file rows (``RankedLists.run_rows``) are worked out only when read,
and nDCG's cut-offs read running sums: both against plain loops."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from rankscope.data.tables import Qrels, Run
from rankscope.engine.ranking import STAND_IN_DOC, rank
from rankscope.engine.rowsets import CutSums


def _reference(qrels: dict[tuple[str, str], float], run: list[tuple[str, str, float]],
               max_ret: int | None, condensed: bool) -> list[tuple[str, float]]:
    """trec_eval's rankings written out: score descending, then doc id descending;
    ``max_ret`` cut first, then (condensed) unjudged and negative documents dropped;
    a qrels query the run lacks ranks the stand-in document."""
    out: list[tuple[str, float]] = []
    for q in sorted({q for q, _ in qrels}):
        rows = sorted(((d, s) for rq, d, s in run if rq == q),
                      key=lambda r: (r[1], r[0].encode()), reverse=True)
        if not rows:
            rows = [(STAND_IN_DOC, 1.0)]
        if max_ret is not None:
            rows = rows[:max_ret]
        if condensed:
            rows = [r for r in rows if qrels.get((q, r[0]), -1.0) >= 0]
        out.extend(rows)
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("max_ret", "condensed"), [(None, False), (3, False), (None, True),
                                                    (4, True)])
def test_run_rows_read_late_follow_cuts_stand_ins_and_condensing(
        seed: int, max_ret: int | None, condensed: bool) -> None:
    rng = np.random.default_rng(seed)
    queries = ["10", "2", "1", "3", "20"]  # out of byte order; "20" only in the qrels
    qrels = {(q, f"d{j}"): float(rng.integers(-1, 3)) for q in queries
             for j in rng.choice(12, size=6, replace=False)}
    run = [(q, f"d{j}", float(rng.integers(0, 4))) for q in queries[:4]
           for j in rng.choice(12, size=7, replace=False)]
    qframe = pl.DataFrame({"query_id": [q for q, _ in qrels], "doc_id": [d for _, d in qrels],
                           "grade": list(qrels.values())})
    rframe = pl.DataFrame({"query_id": [r[0] for r in run], "doc_id": [r[1] for r in run],
                           "score": [r[2] for r in run]})
    lists = rank(Qrels(qframe), Run(rframe), levels=True, stand_in=True, max_ret=max_ret,
                 exact_ties=True,  # equal-grade ties otherwise in either order
                 unjudged="condensed" if condensed else "nonrelevant")
    expected = _reference(qrels, run, max_ret, condensed)
    assert lists.doc_ids.to_list() == [d for d, _ in expected]
    assert lists.scores.tolist() == [s for _, s in expected]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_cut_sums_are_the_bits_of_summing_the_rows_above_each_cut(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 30
    lengths = rng.integers(0, 9, size=n)
    q = np.repeat(np.arange(n), lengths)
    pos = np.concatenate([np.sort(rng.choice(40, size=k, replace=False)) for k in lengths])
    terms = rng.standard_normal(q.size) * 10.0 ** rng.integers(-8, 8, size=q.size)
    terms[rng.random(q.size) < 0.1] = -0.0  # a signed zero first must still give +0.0
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    sums = CutSums.of(terms, q.astype(np.int64), pos.astype(np.int64), offsets.astype(np.int64))
    for k in (0, 1, 2, 5, 17, 39, 40, 1000):
        expected = np.zeros(n)
        for i in range(q.size):  # added left to right from +0.0, as trec_eval does
            if pos[i] < k:
                expected[q[i]] = expected[q[i]] + terms[i]
        got = sums.above(k)
        assert got.tobytes() == expected.tobytes()


@pytest.mark.parametrize("seed", [0, 1])
def test_running_sums_of_segments_of_one_size_class_add_left_to_right(seed: int) -> None:
    # every non-empty segment 4..7 rows long: one padded grid holds them all
    from rankscope.engine.rowsets import running_sum

    rng = np.random.default_rng(seed)
    lengths = rng.integers(4, 8, size=25)
    lengths[rng.random(25) < 0.2] = 0
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    weights = rng.standard_normal(int(offsets[-1])) * 10.0 ** rng.integers(-8, 8, int(offsets[-1]))
    expected = np.empty_like(weights)
    for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True):
        total = 0.0
        for i in range(a, b):
            total = total + float(weights[i])
            expected[i] = total
    assert running_sum(weights, offsets).tobytes() == expected.tobytes()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rows_counted_above_a_cut_off_match_a_count_row_by_row(seed: int) -> None:
    from rankscope.engine.rowsets import RowSet

    rng = np.random.default_rng(seed)
    n = 20
    lengths = rng.integers(0, 7, size=n)
    q = np.repeat(np.arange(n), lengths).astype(np.int64)
    pos = np.concatenate([np.sort(rng.choice(30, size=k, replace=False)) for k in lengths])
    rows = RowSet(np.arange(q.size, dtype=np.int64), q, pos.astype(np.int64), n)
    for k in (-1, 0, 1, 3, 10, 29, 30, 31, 1000):
        expected = [sum(1 for i in range(q.size) if q[i] == query and pos[i] < k)
                    for query in range(n)]
        assert rows.count_within(k).tolist() == expected
    depth = rng.integers(0, 31, size=n).astype(np.int64)
    expected = [sum(1 for i in range(q.size) if q[i] == query and pos[i] < depth[query])
                for query in range(n)]
    assert rows.count_within(depth).tolist() == expected
