"""Qrels read from a large TREC file hold their query ids as codes (issue 30 section 5).

With 1,000 judgments a query at 10^7 lines the qrels are as large as the run:
their query column as string views took 160 MB, as a Categorical 40 MB. From
``COMPACT_FROM`` bytes the reader holds it so (as a run's), ``Qrels.frame``
still gives strings, and the ranking looks the ids up by code. Every check
here is against a definition written out in the test, the slow reference
ranking, or the same file read below the threshold (strings, the path every
small call takes).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import rankscope
from rankscope.data import run_queries, trec
from rankscope.data.tables import Qrels, Run
from rankscope.engine.ranking import rank
from rankscope.errors import DuplicateDocumentError, ParseError

from .conftest import make_case, write_trec
from .test_fast_ranking import layout, slow_rank

_QRELS = "q2 0 a 1\nq2 0 b 0\nq10 0 a 2\n"


def _either_side(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Qrels, Qrels]:
    """The file read just below the threshold (strings) and at it (codes)."""
    monkeypatch.setattr(trec, "COMPACT_FROM", path.stat().st_size + 1)
    small = Qrels.read(path)
    monkeypatch.setattr(trec, "COMPACT_FROM", path.stat().st_size)
    large = Qrels.read(path)
    return small, large


def test_qrels_below_compact_from_hold_strings_above_it_codes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text(_QRELS)
    small, large = _either_side(path, monkeypatch)
    assert small.held.schema["query_id"] == pl.String
    assert large.held.schema["query_id"] == pl.Categorical
    assert large.held.get_column("query_id").to_physical().dtype == pl.UInt32  # 4 bytes a row
    # the file's lines, in file order, as strings through the public frame
    expected = [("q2", "a", 1.0), ("q2", "b", 0.0), ("q10", "a", 2.0)]
    assert small.frame.rows() == large.frame.rows() == expected
    assert large.frame.schema["query_id"] == pl.String
    assert large.query_ids == small.query_ids == ["q10", "q2"]  # byte order
    assert large.n_queries == 2
    assert large.to_dict() == {"q2": {"a": 1.0, "b": 0.0}, "q10": {"a": 2.0}}


def test_coded_qrels_write_the_same_bytes(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text(_QRELS)
    small, large = _either_side(path, monkeypatch)
    small.write(tmp_path / "small.txt", format="trec")
    large.write(tmp_path / "large.txt", format="trec")
    assert (tmp_path / "large.txt").read_bytes() == (tmp_path / "small.txt").read_bytes()
    small.write(tmp_path / "small.csv")
    large.write(tmp_path / "large.csv")
    assert (tmp_path / "large.csv").read_bytes() == (tmp_path / "small.csv").read_bytes()


def test_a_judgment_twice_is_refused_the_same_either_side(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "qrels.txt"
    # line 5 judges (q1, d1) again; line 2 is a comment: lines are the file's
    path.write_text("q1 0 d1 1\n# judged again below\nq2 0 d1 0\nq1 0 d2 2\nq1 0 d1 0\n")
    for compact_from in (path.stat().st_size + 1, path.stat().st_size):
        monkeypatch.setattr(trec, "COMPACT_FROM", compact_from)
        with pytest.raises(DuplicateDocumentError) as err:
            Qrels.read(path)
        assert err.value.line == 5
        assert "query 'q1'" in str(err.value) and "first at line 1" in str(err.value)
        assert err.value.value == "d1"


def test_a_bad_grade_is_refused_the_same_either_side(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 d1 1\n\nq1 0 d2 high\n")
    for compact_from in (path.stat().st_size + 1, path.stat().st_size):
        monkeypatch.setattr(trec, "COMPACT_FROM", compact_from)
        with pytest.raises(ParseError) as err:
            Qrels.read(path)
        assert err.value.line == 3 and err.value.value == "high"
        assert str(path) in str(err.value)


def test_index_of_a_coded_column_is_each_ids_position() -> None:
    # more ids than are looked up one by one, so the codes' path is taken
    n = 3 * run_queries.LISTED_UP_TO
    rng = np.random.default_rng(7)
    pool = ["10", "9", "q", "Q", "é", "1", "01", "x y"]
    ids = [pool[i] for i in rng.integers(0, len(pool), n)]
    # categories of the global pool that are not in this column (codes past its own)
    pl.Series(["only elsewhere", "zz"], dtype=pl.Categorical)
    evaluated = ["01", "1", "10", "Q", "absent", "é"]
    coded = pl.Series(ids, dtype=pl.Categorical)
    got = run_queries.index_of(coded, evaluated)
    # the definition: each id's position in ``evaluated``, -1 when it is not there
    expected = [evaluated.index(i) if i in evaluated else -1 for i in ids]
    assert got.dtype == np.int64
    assert got.tolist() == expected


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("ties", ["trec", "input"])
def test_coded_qrels_rank_as_the_reference(seed: int, ties: str, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """make_case's traps (ids "10" < "9", "Q" and "q", queries on one side only) with the
    qrels' query ids as codes and the run's as strings, and both as codes."""
    qrels, run = make_case(seed, n_queries=40)
    qpath, rpath = write_trec(qrels, run, tmp_path)
    monkeypatch.setattr(run_queries, "LISTED_UP_TO", 4)  # the lookup by code at this size
    monkeypatch.setattr(trec, "COMPACT_FROM", qpath.stat().st_size)
    read = Qrels.read(qpath)
    assert read.held.schema["query_id"] == pl.Categorical
    graded = qrels.filter(pl.col("grade").is_not_null())  # TREC files have no null grade
    expected = slow_rank(graded, run, ties)
    for run_compact in (False, True):
        monkeypatch.setattr(trec, "COMPACT_FROM",
                            rpath.stat().st_size + int(not run_compact))
        ranked = Run.read(rpath)
        got = layout(rank(read, ranked, ties=ties))  # type: ignore[arg-type]
        assert list(got) == list(expected)
        for q in expected:
            np.testing.assert_array_equal(got[q], expected[q])
    # the ranking read the codes: no string column of the qrels' queries was made
    assert read.held.schema["query_id"] == pl.Categorical


def test_the_same_files_evaluate_the_same_either_side(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    qpath, rpath = tmp_path / "qrels.txt", tmp_path / "run.txt"
    # q1: d2 (grade 2) at rank 1, d1 (grade 1) at rank 2, d9 unjudged at rank 3;
    # q3 judged only (one relevant, not retrieved); q4 ranked only (not evaluated)
    qpath.write_text("q1 0 d1 1\nq1 0 d2 2\nq1 0 d3 0\nq3 0 d1 1\n")
    rpath.write_text("q1 Q0 d2 1 3.0 t\nq1 Q0 d1 2 2.0 t\nq1 Q0 d9 3 1.0 t\n"
                     "q4 Q0 d1 1 1.0 t\n")
    metrics = ["P@2", "map", "ndcg@3", "num_rel"]
    results = []
    for compact_from in (qpath.stat().st_size + 1, qpath.stat().st_size):
        monkeypatch.setattr(trec, "COMPACT_FROM", compact_from)
        with pytest.warns(rankscope.RankscopeWarning):
            results.append(rankscope.evaluate(Qrels.read(qpath), rpath, metrics))
    small, large = (r.per_query for r in results)
    assert small == large
    means = results[1].means
    # by hand: q1 P@2 = 1, AP = (1/1 + 2/2) / 2 = 1; q3 (nothing retrieved) 0 and 0;
    # num_rel 2 + 1, summed over the queries as trec_eval sums counts
    assert means["P@2"] == pytest.approx(0.5)
    assert means["map"] == pytest.approx(0.5)
    assert means["num_rel"] == pytest.approx(3.0)
