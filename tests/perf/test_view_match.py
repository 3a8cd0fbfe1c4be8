"""A small run's matching by its ids' string views, against a plain-Python dict join.

Each run row's grade is its (query, document)'s first judgment line's grade,
NaN when it has none: the reference is a dict built line by line. Inputs mix
duplicate judgment lines, ids on one side only, queries on one side only,
non-ASCII and empty ids, ids of 12 bytes (the longest a view holds) and 13
and more, on both sides of the size threshold.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from rankscope import evaluate
from rankscope.engine import ranking_match
from rankscope.engine.ranking_match import Judged, match_rows
from rankscope.engine.view_match import ViewedJudgments

from .conftest import make_case
from .test_streaming import PARTIAL_OVERLAP

SHORT = ["d1", "d10", "", "é", "€uro", "ñ-", "doc", "abcdefghijkl", "x" * 11, "\u00e9t\u00e9",
         "a b", "D1", "1", "01", "日本語"]  # 日本語: 9 bytes
LONG = ["abcdefghijklm", "y" * 20, "https://example.com/a/long/path", "é" * 7]


def _reference(judged_q: list[int], judged_docs: list[str], grades: list[float],
               run_q: list[int], run_docs: list[str]) -> list[float]:
    first: dict[tuple[int, str], float] = {}
    for q, d, g in zip(judged_q, judged_docs, grades, strict=True):
        first.setdefault((q, d), g)
    return [first.get((q, d), float("nan")) for q, d in zip(run_q, run_docs, strict=True)]


def _case(seed: int, long_in_qrels: bool) -> tuple[list[int], list[str], list[float],
                                                    list[int], list[str]]:
    rng = np.random.default_rng(seed)
    pool = SHORT + [f"d{i}" for i in range(60)] + [f"é{i}" for i in range(20)]
    judged_pool = pool + (LONG if long_in_qrels else [])
    run_pool = pool + LONG + ["only-run", "r\u00e9"]
    n_q = 12
    m = int(rng.integers(0, 400))
    judged_q = rng.integers(0, n_q - 2, m).tolist()  # queries n_q - 2, n_q - 1: the run's only
    judged_docs = [judged_pool[i] for i in rng.integers(0, len(judged_pool), m)]
    grades = rng.choice([0.0, 1.0, 2.0, 3.0, -1.0, 0.5], m).tolist()
    n = int(rng.integers(0, 900))
    run_q = rng.integers(-1, n_q, n).tolist()  # -1: a query the qrels do not evaluate
    run_docs = [run_pool[i] for i in rng.integers(0, len(run_pool), n)]
    return judged_q, judged_docs, grades, run_q, run_docs


@pytest.mark.parametrize("long_in_qrels", [False, True])
@pytest.mark.parametrize("below", [0, 300, 1 << 30])
@pytest.mark.parametrize("seed", range(12))
def test_the_viewed_matching_finds_what_a_dict_join_finds(
        seed: int, below: int, long_in_qrels: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    judged_q, judged_docs, grades, run_q, run_docs = _case(seed, long_in_qrels)
    viewed = []
    real = ranking_match.viewed_lookup

    def spy(*args: object) -> object:
        viewed.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(ranking_match, "viewed_lookup", spy)
    monkeypatch.setattr(ranking_match, "VIEWED_BELOW", below)
    judged = Judged(np.array(judged_q, dtype=np.int64), pl.Series(judged_docs, dtype=pl.String),
                    np.array(grades, dtype=np.float64), 12, find_duplicates=True)
    got = match_rows(np.array(run_q, dtype=np.int64), pl.Series(run_docs, dtype=pl.String),
                     judged)
    expected = _reference(judged_q, judged_docs, grades, run_q, run_docs)
    np.testing.assert_array_equal(got, np.array(expected, dtype=np.float64))
    # the views serve below the threshold, unless a judged id is too long for its view
    taken = bool(judged_q) and bool(run_q) and len(run_q) < below and not (
        long_in_qrels and any(d in LONG for d in judged_docs))
    assert bool(viewed) == taken


def test_judgments_with_an_id_past_12_bytes_are_not_keyed_by_view() -> None:
    q = np.zeros(2, dtype=np.int64)
    assert ViewedJudgments.of(q, pl.Series(["abcdefghijkl", "d1"])) is not None
    assert ViewedJudgments.of(q, pl.Series(["abcdefghijklm", "d1"])) is None
    assert ViewedJudgments.of(q, pl.Series(["d1", None], dtype=pl.String)) is None


@pytest.mark.filterwarnings(PARTIAL_OVERLAP)
def test_a_small_evaluation_hashes_no_rows_in_polars(monkeypatch: pytest.MonkeyPatch) -> None:
    # polars' row hash hands its work to polars' thread pool: a small call's ids are keyed
    # from their views on the calling thread instead
    qrels, run = make_case(5, n_queries=20, depth=30)
    metrics = ["map", "ndcg", "bpref", "P@10"]
    expected = evaluate(qrels, run, metrics).means
    monkeypatch.setattr(ranking_match, "VIEWED_BELOW", 0)
    assert evaluate(qrels, run, metrics).means == expected  # the row-hash matching
    monkeypatch.undo()
    hashed = []
    real = pl.DataFrame.hash_rows

    def spy(self: pl.DataFrame, *args: object, **kwargs: object) -> pl.Series:
        hashed.append(self.height)
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pl.DataFrame, "hash_rows", spy)
    result = evaluate(qrels, run, metrics)
    assert result.means == expected
    # the judgments are keyed once per qrels (cached), the run's rows not at all
    assert all(h != run.height for h in hashed)
