"""A large run's grades matched as 1- or 2-byte codes into a table of the judgments'
distinct grades: ``table[codes]`` against the float grades of :func:`match_rows`, bit for
bit, and the cases that keep the float grades."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from rankscope.data.rankings import Ranking
from rankscope.data.tables import Qrels, Run
from rankscope.data.tie_order import find_ties
from rankscope.engine.ranking import rank
from rankscope.engine.ranking_match import NONPOOL, GradeCodes, Judged, match_codes, match_rows


def _judged(grades: list[float]) -> Judged:
    n = len(grades)
    return Judged(np.arange(n, dtype=np.int64) % 3, pl.Series([f"d{i}" for i in range(n)]),
                  np.array(grades, dtype=np.float64), 3, find_duplicates=False)


@pytest.mark.parametrize("levels", [False, True])
@pytest.mark.parametrize("grades", [
    [0, 1, 2, 3, 1, 0],
    [0.5, -1, 2.25, np.nan, 7, -3],            # fractions, negatives, a NaN grade
    [float(g) for g in range(200)],            # 200 distinct: 16-bit codes
])
def test_codes_give_the_float_grades_bit_for_bit(grades: list[float], levels: bool) -> None:
    judged = _judged(grades)
    rng = np.random.default_rng(len(grades))
    # rows: every judgment (their query is i % 3) and as many documents nobody judged
    n = len(grades)
    qidx = np.concatenate([np.arange(n) % 3, rng.integers(0, 3, n)]).astype(np.int64)
    docs = pl.Series([f"d{i}" for i in range(n)] + [f"x{i}" for i in range(n)])
    order = rng.permutation(qidx.size)
    qidx, docs = qidx[order], docs.gather(pl.Series(order))
    coding = judged.grade_codes(levels)
    assert coding is not None
    assert coding.codes.dtype == (np.int8 if len(set(grades)) < 100 else np.int16)
    codes = match_codes(qidx, docs, judged, coding)
    expected = match_rows(qidx, docs, judged, levels=levels)
    got = coding.table[codes]
    # the definition: a judged row's grade (trec_eval's level with ``levels``), else
    # NaN (or the level -1); compared as bits, NaN to NaN
    assert np.array_equal(got, expected, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(expected))
    unjudged = np.array([d.startswith("x") for d in docs.to_list()])
    if levels:
        assert np.all(got[unjudged] == NONPOOL)
    else:
        assert np.all(np.isnan(got[unjudged]))


def test_grades_that_do_not_fit_or_a_negative_zero_stay_float() -> None:
    assert GradeCodes.of(np.array([0.0, -0.0, 1.0])) is None  # -0.0 would become 0.0
    assert GradeCodes.of(np.arange(40_000, dtype=np.float64)) is None  # > 16 bits
    small = GradeCodes.of(np.array([3.0, 1.0, 3.0]))
    assert small is not None and small.table[small.missing] != small.table[small.missing]


def test_a_negative_zero_grade_keeps_its_sign_through_rank(
        both_ranking_paths: str) -> None:
    qrels = Qrels(pl.DataFrame({"query_id": ["q1", "q1", "q1"], "doc_id": ["a", "b", "c"],
                                "grade": [-0.0, 1.0, 0.0]}))
    run = Run(pl.DataFrame({"query_id": ["q1"] * 4, "doc_id": ["c", "a", "b", "z"],
                            "score": [1.0, 4.0, 2.0, 3.0]}))
    grades = rank(qrels, run).grades
    # rank order a (4.0), z (3.0), b (2.0), c (1.0): grades -0.0, NaN, 1, 0.0 (a table
    # of distinct grades would hold one zero for both)
    assert grades[0] == 0 and np.signbit(grades[0])
    assert np.isnan(grades[1]) and list(grades[2:]) == [1.0, 0.0]
    assert not np.signbit(grades[3])


def test_find_ties_reads_no_query_index_with_the_sorted_scores() -> None:
    # two queries of 3 rows in rank order; scores 5 5 1 | 2 2 2 (negated: sorted)
    negated = -np.array([5.0, 5.0, 1.0, 2.0, 2.0, 2.0])
    base = Ranking(np.arange(6, dtype=np.int64), None, np.array([3, 3], dtype=np.int64),
                   negated_scores=negated)
    found = find_ties(base, None, -negated)
    assert found is not None
    # tied runs: positions 0-1 and 3-5 (first and last position of each)
    assert found.bounds.tolist() == [0, 1, 3, 5]
    with pytest.raises(ValueError, match="query index"):
        find_ties(Ranking(np.arange(6, dtype=np.int64), None, np.array([3, 3])), None,
                  -negated)


@pytest.mark.parametrize("levels", [False, True])
@pytest.mark.parametrize("piece", [1, 3, 1 << 20])
def test_codes_made_a_few_judgments_at_a_time_are_the_same(
        levels: bool, piece: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from rankscope.engine import ranking_match

    grades = np.array([2.0, 0.0, np.nan, -1.0, 0.5, 2.0, 3.0, 0.0, -4.0])
    monkeypatch.setattr(ranking_match, "_CODED_AT_ONCE", piece)
    coding = GradeCodes.of(grades, levels)
    assert coding is not None
    # the definition: the grades (trec_eval's levels: -2 below 0, -1 for NaN, truncated)
    if levels:
        want = np.array([2.0, 0.0, -1.0, -2.0, 0.0, 2.0, 3.0, 0.0, -2.0])
    else:
        want = grades
    assert np.array_equal(coding.table[coding.codes], want, equal_nan=True)
    missing = coding.table[coding.missing]
    assert missing == NONPOOL if levels else np.isnan(missing)
