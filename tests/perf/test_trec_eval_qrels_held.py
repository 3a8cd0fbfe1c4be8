"""What the ``trec_eval`` command holds of its qrels while it ranks (issue 30 section 5).

At 7 M judgments (10^7 run lines, 1,000 judgments a query) the matching is the
command's peak: the qrels file's table (its integer levels, 57 MB) is let go
before the ranking (the engine's qrels share its ids), and the engine's qrels
hold their query ids as codes of the run's query list (2 bytes a judgment, not
a string view of 16: 95 MB less), looked up by code. Checked here against
definitions: each id's position in the evaluated list, the Enum's categories
the qrels' sorted ids; the lines against the same command's with everything
held as before the change (the conformance tests compare them with the binary).
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from rankscope.cli.main import main
from rankscope.data import run_queries
from rankscope.trec_eval import command

from .test_last_ranking import _alive_when_called, _all_trec_freed_then_held, _files


def test_index_of_an_enum_column_is_each_ids_position(monkeypatch: pytest.MonkeyPatch) -> None:
    # more ids than are looked up one by one: the codes' path, no string of every row made
    n = 3 * run_queries.LISTED_UP_TO
    rng = np.random.default_rng(11)
    pool = ["10", "9", "q", "Q", "é", "1", "01", "x y"]
    ids = [pool[i] for i in rng.integers(0, len(pool), n)]
    coded = pl.Series(ids, dtype=pl.Enum(sorted(pool)))
    evaluated = ["01", "1", "10", "Q", "absent", "é"]
    by_code: list[int] = []
    made = run_queries._by_code

    def spied(column: pl.Series, wanted: list[str]) -> Any:
        by_code.append(column.len())
        return made(column, wanted)

    monkeypatch.setattr(run_queries, "_by_code", spied)
    got = run_queries.index_of(coded, evaluated)
    # the definition: each id's position in ``evaluated``, -1 when it is not there
    expected = [evaluated.index(i) if i in evaluated else -1 for i in ids]
    assert got.dtype == np.int64
    assert got.tolist() == expected
    assert by_code == [n]


def test_trec_eval_ranks_with_its_qrels_query_ids_as_the_runs_codes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    q, (run,) = _files(tmp_path, [5])
    held: list[pl.DataFrame] = []
    ranking = command.rank

    def ranked(qrels: Any, *args: Any, **kwargs: Any) -> Any:
        held.append(qrels.held)
        return ranking(qrels, *args, **kwargs)

    monkeypatch.setattr(command, "rank", ranked)
    assert main(["trec_eval", "-m", "all_trec", "-q", q, run]) == 0
    out = capsys.readouterr().out
    (frame,) = held
    dtype = frame.schema["query_id"]
    # codes of the qrels' distinct ids in byte order (the list the run was read against),
    # each judgment's id the file's
    lines = Path(q).read_text().splitlines()
    file_ids = [line.split()[0] for line in lines]
    assert isinstance(dtype, pl.Enum)
    assert list(dtype.categories) == sorted(set(file_ids))
    assert frame.get_column("query_id").to_physical().dtype in (pl.UInt8, pl.UInt16,
                                                                  pl.UInt32)
    assert frame.get_column("query_id").cast(pl.String).to_list() == file_ids
    assert frame.get_column("grade").to_list() == [float(line.split()[3]) for line in lines]
    # the same lines with the qrels' ids held as strings: the run read without the
    # qrels' query list (its ids strings too), as a run with a query outside it is
    parse = command.parse_results

    def unlisted(blob: Any, path: str, encoding: str, queries: Any = None,
                 layout: Any = None) -> Any:
        return parse(blob, path, encoding, None, layout)

    monkeypatch.setattr(command, "parse_results", unlisted)
    assert main(["trec_eval", "-m", "all_trec", "-q", q, run]) == 0
    assert held[-1].schema["query_id"] == pl.String
    assert capsys.readouterr().out == out


def test_trec_eval_lets_its_qrels_file_go_before_the_ranking(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # the file's table (its frame of integer levels) is read by nothing once the engine's
    # qrels are made: not held through the ranking (the matching is the peak at 10^7)
    refs: list[weakref.ref[Any]] = []
    tables = command.tables
    seen: list[int] = []

    def made(rel_info: Any, ranked_run: Any) -> Any:
        refs.extend([weakref.ref(rel_info), weakref.ref(rel_info.frame)])
        return tables(rel_info, ranked_run)

    monkeypatch.setattr(command, "tables", made)
    _alive_when_called(monkeypatch, command, "rank", refs, seen)
    _all_trec_freed_then_held(tmp_path, monkeypatch, capsys, seen, seed=8)
