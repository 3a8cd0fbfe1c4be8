"""A run read from a TREC file holds its query ids as codes (issue 30 section 5).

At 10^7 lines a query id repeats once per ranked document: as polars string
views the column took 160 MB, as a Categorical 40 MB. The reader holds it so,
``Run.frame`` still gives strings, and the ranking compares the codes without
ever making the strings; every check here is against a definition written
out in the test (or the slow reference ranking), not the program's own path.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from rankscope.data import run_queries
from rankscope.data.tables import Qrels, Run
from rankscope.engine import ranking_match
from rankscope.engine.ranking import rank

from .conftest import make_case
from .test_fast_ranking import layout, slow_rank

pytestmark = pytest.mark.usefixtures("both_ranking_paths")


@pytest.fixture(autouse=True)
def _every_run_compact(monkeypatch: pytest.MonkeyPatch) -> None:
    """The files here are small: held as codes as a run of COMPACT_FROM bytes is."""
    from rankscope.data import trec

    monkeypatch.setattr(trec, "COMPACT_FROM", 0)


def _write_run(path: Path, run: pl.DataFrame) -> Path:
    lines = [f"{q} Q0 {d} {i + 1} {s!r} tag" for i, (q, d, s) in enumerate(run.iter_rows())]
    path.write_text("\n".join(lines) + "\n")
    return path


def _orders(run: pl.DataFrame, seed: int) -> dict[str, pl.DataFrame]:
    """make_case's run as written (each query together), shuffled, and split in two halves
    (every query's lines in two blocks: a query's rows are not all together)."""
    half = run.height // 2
    return {"grouped": run,
            "shuffled": run.sample(fraction=1.0, shuffle=True, seed=seed),
            "split": pl.concat([run.gather_every(2), run.gather_every(2, offset=1)])
            if half else run}


def test_a_read_run_holds_codes_and_gives_strings(tmp_path: Path) -> None:
    _, run = make_case(1)
    path = _write_run(tmp_path / "run.txt", run)
    read = Run.read(path)
    held = read.held.get_column("query_id")
    assert held.dtype == pl.Categorical
    assert held.to_physical().dtype == pl.UInt32  # 4 bytes a row
    assert read.query_ids == sorted(set(run.get_column("query_id").to_list()))
    frame = read.frame  # the public frame: strings, the file's ids in file order
    assert frame.schema["query_id"] == pl.String
    assert frame.get_column("query_id").to_list() == run.get_column("query_id").to_list()
    assert read.to_polars().schema["query_id"] == pl.String


@pytest.mark.parametrize("kind", ["categorical", "enum"])
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("order", ["grouped", "shuffled", "split"])
def test_coded_query_ids_index_as_their_strings(seed: int, order: str, kind: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # a Categorical column (a TREC file's run) or an Enum (read against a known list of
    # queries, with one more the run lacks), through the same definition
    _, run = make_case(seed)
    run = _orders(run, seed)[order]
    # the first slice decides between listing runs of equal ids and direct lookup, as at
    # 10^6 rows and more
    monkeypatch.setattr(run_queries, "_SLICE", 64)
    monkeypatch.setattr(run_queries, "_DIRECT_FROM", 0)
    ids = run.get_column("query_id").to_list()
    wanted = [*sorted(set(ids))[::2], "not in the run"]
    dtype = pl.Categorical() if kind == "categorical" else \
        pl.Enum(["zz-unused", *sorted(set(ids), reverse=True)])
    evaluated, found = run_queries.run_queries(
        run.get_column("query_id").cast(dtype), lambda names: wanted)
    assert evaluated == wanted
    assert found.names == set(ids)
    # the definition: each row's position in the evaluated list, -1 when not there
    assert found.qidx.tolist() == [wanted.index(q) if q in wanted else -1 for q in ids]
    assert found.counts(len(wanted)).tolist() == [ids.count(q) for q in wanted]
    starts = [i for i in range(len(ids)) if i == 0 or ids[i] != ids[i - 1]]
    if found.starts is not None:  # runs of equal ids listed: the rows where the id changes
        assert found.starts.tolist() == starts
        assert found.lengths is not None
        assert found.lengths.tolist() == np.diff([*starts, len(ids)]).tolist()
    else:  # direct lookup only where most rows start a new run (a shuffled file)
        assert order == "shuffled" and len(starts) * run_queries._SCATTERED > len(ids)
    first_changes = sum(1 for at in starts if 1 <= at <= 64)  # in the first slice
    if first_changes * run_queries._SCATTERED > min(64, len(ids) - 1) + 1:
        # the first slice is scattered: no run start and length listed for nearly every row
        assert found.starts is None and found.lengths is None
    together = len(starts) == len(set(ids))
    assert (found.grouped_lengths is not None) == (together and found.starts is not None)


def test_an_empty_coded_column() -> None:
    evaluated, found = run_queries.run_queries(pl.Series([], dtype=pl.Categorical),
                                               lambda names: ["q1"])
    assert evaluated == ["q1"] and found.names == set() and found.qidx.size == 0


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
@pytest.mark.parametrize("order", ["grouped", "shuffled", "split"])
@pytest.mark.parametrize("ties", ["trec", "input", "docid_asc"])
@pytest.mark.parametrize("halved", [False, True])
def test_a_read_run_ranks_as_the_reference_without_making_strings(
        seed: int, order: str, ties: str, halved: bool, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, run = make_case(seed)
    run = _orders(run, seed)[order]
    monkeypatch.setattr(run_queries, "_SLICE", 64)
    monkeypatch.setattr(run_queries, "_DIRECT_FROM", 0)
    if halved:  # the rows joined in two halves, one after the other, as from 4 M rows
        monkeypatch.setattr(ranking_match, "_HALVED_FROM", 2)
    read = Run.read(_write_run(tmp_path / "run.txt", run), _defer_duplicates="error")
    for depth in (None, 3):
        lists = rank(Qrels(qrels), read, ties=ties, depth=depth)  # type: ignore[arg-type]
        lists.check_duplicates()
        expected = slow_rank(qrels, run, ties)
        if depth is not None:
            expected = {q: g[:depth] for q, g in expected.items()}
        got = layout(lists)
        assert list(got) == list(expected)
        for q in expected:
            np.testing.assert_array_equal(got[q], expected[q])
    # the ranking (and its duplicate check) read the codes: no string column was made
    assert read.held.schema["query_id"] == pl.Categorical


def test_a_duplicate_in_a_read_run_names_its_query_and_lines(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 3 t\nq2 Q0 d1 1 3 t\nq1 Q0 d2 2 2 t\nq1 Q0 d1 3 1 t\n")
    qrels = Qrels(pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "grade": [1.0]}))
    read = Run.read(path, _defer_duplicates="error")
    lists = rank(qrels, read)
    with pytest.raises(Exception) as err:
        lists.check_duplicates()
    assert "'q1'" in str(err.value) and "first at line 1" in str(err.value)
    assert getattr(err.value, "line", None) == 4
