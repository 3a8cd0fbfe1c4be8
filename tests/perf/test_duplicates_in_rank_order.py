"""A shuffled run's duplicate check proved on the ranking's order (each query's keys
gathered and sorted), against the definition and against the check of small runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from rankscope.data.tables import Qrels, Run
from rankscope.engine import ranking, ranking_duplicates
from rankscope.engine.ranking import rank

from .test_fast_ranking import layout


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("block", [1, 7, 1 << 20])
def test_distinct_in_order_is_a_search_for_repeats_within_each_query(
        seed: int, block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 9, 20).astype(np.int64)
    n = int(counts.sum())
    query = np.repeat(np.arange(counts.size), counts)
    keys = rng.permutation(np.arange(1000, 1000 + n)).astype(np.uint64)  # distinct
    # seeds 0-1: all distinct; 2-3: one key repeated in another query (not a repeat
    # within a query); 4-5: a key repeated within a late query
    donor = int(np.flatnonzero(counts >= 2)[-1])
    rows = np.flatnonzero(query == donor)
    if seed in (2, 3):
        other = int(np.flatnonzero((counts >= 1) & (np.arange(counts.size) != donor))[0])
        keys[np.flatnonzero(query == other)[0]] = keys[rows[0]]
    elif seed >= 4:
        keys[rows[1]] = keys[rows[0]]
    repeats = any(len(set(keys[query == q].tolist())) < int(counts[q])
                  for q in range(counts.size))
    # the file order is a shuffle of the rows; ``order`` lists them query by query
    file_rows = rng.permutation(n)
    in_file = np.empty(n, dtype=np.uint64)
    in_file[file_rows] = keys
    monkeypatch.setattr(ranking_duplicates, "_GATHERED_BLOCK", block)
    assert ranking_duplicates.distinct_in_order(in_file, file_rows, counts) is (not repeats)
    assert repeats is (seed >= 4)


def _shuffled_run(seed: int, duplicates: int, stray: bool) -> pl.DataFrame:
    """A shuffled run of 6 queries: no pair repeated, then ``duplicates`` repeated pairs
    (with other scores), and with ``stray`` a query the qrels do not have."""
    rng = np.random.default_rng(seed)
    rows = [(f"q{q}", f"d{d}") for q in range(6) for d in rng.choice(40, 25, replace=False)]
    if stray:
        rows += [("q9", f"d{d}") for d in range(10)]
    for i in range(duplicates):
        rows.append(rows[(7 * i + 3 + seed) % len(rows)])
    order = rng.permutation(len(rows))
    return pl.DataFrame({
        "query_id": [rows[i][0] for i in order],
        "doc_id": [rows[i][1] for i in order],
        "score": rng.integers(0, 6, len(rows)).astype(float),
    })


def _written(frame: pl.DataFrame, path: Path) -> Path:
    path.write_text("".join(f"{q} Q0 {d} {i + 1} {s} r\n" for i, (q, d, s) in
                            enumerate(frame.iter_rows())))
    return path


def _checked(qrels: Qrels, path: Path, depth: int | None) -> tuple[object, object]:
    """The ranking's grades and the deferred check's error (None if it passed)."""
    lists = rank(qrels, Run.read(path, _defer_duplicates="error"), depth=depth)
    try:
        lists.check_duplicates()
    except Exception as exc:  # compared between the paths below
        return layout(lists), exc
    return layout(lists), None


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("duplicates", [0, 1, 2])
@pytest.mark.parametrize("stray", [False, True])
@pytest.mark.parametrize("depth", [None, 3])
def test_a_shuffled_runs_check_in_rank_order_reports_what_the_reader_would(
        seed: int, duplicates: int, stray: bool, depth: int | None, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    frame = _shuffled_run(seed, duplicates, stray)
    path = _written(frame, tmp_path / "run.txt")
    qrels = Qrels(pl.DataFrame({"query_id": [f"q{q}" for q in range(6) for _ in range(5)],
                                "doc_id": [f"d{d}" for _ in range(6) for d in range(5)],
                                "grade": [float(d % 3) for _ in range(6) for d in range(5)]}))
    # the reference: the reader's own check (not deferred) names the first duplicate's
    # file, line and value
    try:
        Run.read(path)
        expected: Exception | None = None
    except Exception as exc:  # the error each path must raise, word for word
        expected = exc
    assert (expected is None) is (duplicates == 0)
    proved: list[int] = []
    real = ranking_duplicates.distinct_in_order

    def spy(*args: object) -> bool:
        proved.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(ranking_duplicates, "distinct_in_order", spy)  # the check's proof
    got = {}
    for threaded in (False, True):  # the small runs' path, then the large runs'
        monkeypatch.setattr(ranking, "_THREADED_FROM", 0 if threaded else 1 << 62)
        got[threaded] = _checked(qrels, path, depth)
    # the large runs' path proved the shuffled run in rank order unless a run query is
    # not evaluated (then every pair is hashed, as before); the small one never does
    assert len(proved) == (0 if stray else 1)
    assert got[False][0].keys() == got[True][0].keys()  # type: ignore[attr-defined]
    for q in got[False][0]:  # type: ignore[attr-defined]
        np.testing.assert_array_equal(got[True][0][q], got[False][0][q])  # type: ignore[index]
    for _, error in got.values():
        assert type(error) is type(expected) and str(error) == str(expected)
        assert getattr(error, "line", None) == getattr(expected, "line", None)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("duplicates", [0, 1, 3])
@pytest.mark.parametrize("stray", [False, True])
def test_trec_evals_duplicate_report_of_a_shuffled_run_on_either_path(
        seed: int, duplicates: int, stray: bool, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    frame = _shuffled_run(seed, duplicates, stray)
    path = _written(frame, tmp_path / "run.txt")
    qrels = Qrels(pl.DataFrame({"query_id": [f"q{q}" for q in range(6)],
                                "doc_id": ["d1"] * 6, "grade": [1.0] * 6}))
    # the definition: per evaluated query (q0-q5, in order), its smallest document
    # listed twice (byte order), None without one
    pairs = list(frame.select("query_id", "doc_id").iter_rows())
    expected = [min((d for d in {d for qq, d in pairs if qq == f"q{q}"}
                     if pairs.count((f"q{q}", d)) > 1), default=None) for q in range(6)]
    assert any(d is not None for d in expected) is (duplicates > 0)
    for threaded in (False, True):
        monkeypatch.setattr(ranking, "_THREADED_FROM", 0 if threaded else 1 << 62)
        lists = rank(qrels, Run.read(path, _defer_duplicates="report"))
        assert lists.run_duplicates == expected
