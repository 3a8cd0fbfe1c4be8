"""trec_eval's duplicate report on a run whose queries are each one block of the file:
proved beside the ranking without every row's key held through the matching (80 MB at
10^7 rows), the report the same as the definition's and the command's as before."""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from rankscope.cli.main import main
from rankscope.data.tables import Qrels, Run
from rankscope.engine import ranking

from .test_last_ranking import _alive_when_called, _files


def _grouped_run(seed: int, duplicates: int, layout: str) -> list[tuple[str, str, float]]:
    """6 queries' rows, each query's together (``layout``: in rank order, its rows
    shuffled within the block, or the blocks out of query order), ``duplicates`` pairs
    repeated within their query's block (with other scores)."""
    rng = np.random.default_rng(seed)
    blocks = []
    for q in range(6):
        docs = [f"d{d}" for d in rng.choice(40, 25, replace=False)]
        for i in range(duplicates if q in (1, 4) else 0):
            docs.append(docs[(5 * i + seed) % len(docs)])
        scores = rng.integers(0, 6, len(docs)).astype(float)  # ties among them
        rows = [(f"q{q}", d, float(s)) for d, s in zip(docs, scores, strict=True)]
        if layout == "ranked":
            rows.sort(key=lambda r: (-r[2], r[1]))
        else:
            rows = [rows[i] for i in rng.permutation(len(rows))]
        blocks.append(rows)
    if layout == "blocks":
        blocks = [blocks[i] for i in rng.permutation(len(blocks))]
    return [row for block in blocks for row in block]


def _written(rows: list[tuple[str, str, float]], path: Path) -> Path:
    path.write_text("".join(f"{q} Q0 {d} {i + 1} {s} r\n" for i, (q, d, s) in enumerate(rows)))
    return path


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("duplicates", [0, 1, 3])
@pytest.mark.parametrize("layout", ["ranked", "within", "blocks"])
def test_trec_evals_duplicate_report_of_a_grouped_run_on_either_path(
        seed: int, duplicates: int, layout: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _grouped_run(seed, duplicates, layout)
    path = _written(rows, tmp_path / "run.txt")
    qrels = Qrels(pl.DataFrame({"query_id": [f"q{q}" for q in range(6)],
                                "doc_id": ["d1"] * 6, "grade": [1.0] * 6}))
    # the definition: per query (q0-q5), its smallest document listed twice (byte order)
    pairs = [(q, d) for q, d, _ in rows]
    expected = [min((d for d in {d for qq, d in pairs if qq == f"q{q}"}
                     if pairs.count((f"q{q}", d)) > 1), default=None) for q in range(6)]
    assert any(d is not None for d in expected) is (duplicates > 0)
    for threaded in (False, True):
        monkeypatch.setattr(ranking, "_THREADED_FROM", 0 if threaded else 1 << 62)
        lists = rank_report(qrels, path)
        assert lists.run_duplicates == expected


def rank_report(qrels: Qrels, path: Path) -> Any:
    """The run at ``path`` ranked with trec_eval's duplicate rule (reported per query)."""
    return ranking.rank(qrels, Run.read(path, _defer_duplicates="report"))


def _watch_keys(monkeypatch: pytest.MonkeyPatch, refs: list[weakref.ref[Any]],
                given: list[int]) -> None:
    """Record, for each matching of every row, whether it is given an array to keep every
    row's key in (``given``), and a weak reference to it (``refs``)."""
    for name in ("match_rows", "match_codes"):
        real = getattr(ranking, name)

        def matching(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
            keys = kwargs.get("keys_out")
            given.append(int(keys is not None))
            if keys is not None:
                refs.append(weakref.ref(keys))
            return _real(*args, **kwargs)

        monkeypatch.setattr(ranking, name, matching)


@pytest.mark.parametrize("threaded", [False, True])
def test_trec_eval_holds_no_key_of_every_row_through_the_matching(
        threaded: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # each query's rows are one block of the file: the report's proof hashes the blocks
    # beside the ranking; no array of every row's key is filled by the matching, nor
    # alive at the measures
    from rankscope.trec_eval import command

    q, (run,) = _files(tmp_path, [7])
    refs: list[weakref.ref[Any]] = []
    given: list[int] = []
    seen: list[int] = []
    monkeypatch.setattr(ranking, "_THREADED_FROM", 0 if threaded else 1 << 62)
    _watch_keys(monkeypatch, refs, given)
    _alive_when_called(monkeypatch, command, "evaluate_qrels", refs, seen)
    assert main(["trec_eval", "-m", "all_trec", q, run]) == 0
    assert given == [0]
    assert seen == [0]
    out = capsys.readouterr().out
    monkeypatch.undo()
    assert main(["trec_eval", "-m", "all_trec", q, run]) == 0
    assert capsys.readouterr().out == out


@pytest.mark.parametrize("threaded", [False, True])
def test_trec_evals_duplicate_message_on_a_grouped_run(
        threaded: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # trec_eval prints the queries before the first one listing a document twice, then
    # stops there naming that query's smallest repeated document (exit status 4)
    q, (run,) = _files(tmp_path, [7])
    assert main(["trec_eval", "-q", "-m", "num_ret", q, run]) == 0
    clean = capsys.readouterr().out.splitlines(keepends=True)
    lines = Path(run).read_text().splitlines(keepends=True)
    queries = sorted({line.split()[0] for line in lines})
    failing = queries[2]
    block = [line for line in lines if line.split()[0] == failing]
    # the query lists its first document again (with another score) inside its block:
    # the file stays grouped by query
    doc = block[0].split()[2]
    lines.insert(lines.index(block[-1]) + 1, f"{failing} Q0 {doc} 99 -1.5 r7\n")
    Path(run).write_text("".join(lines))
    monkeypatch.setattr(ranking, "_THREADED_FROM", 0 if threaded else 1 << 62)
    assert main(["trec_eval", "-q", "-m", "num_ret", q, run]) == 4
    got = capsys.readouterr()
    assert got.err == (f"trec_eval.form_res_qrels: duplicate docs {doc}"  # the binary's bytes
                       "trec_eval: Can't calculate measure 'num_ret'\n")
    assert got.out == "".join(line for line in clean
                              if line.split("\t")[1] != "all" and line.split("\t")[1] < failing)
