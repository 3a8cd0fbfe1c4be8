"""A last ranking against one qrels keeps nothing with them for another (issue 30 §5).

An evaluation loop keeps what it works out of the qrels (the keyed judgments, the
judged lists' statistics) for the next run. At 10^7 judgments the keyed ones are
24 bytes a judgment and a hash table, held through the kernels when no run
follows. ``QrelsIndex.last_ranking`` says none does: the keyed judgments go with
that ranking, its statistics stay with its context. Here: the values the same as
an evaluation keeping everything (to the bit), nothing keyed left after it, a
ranking after a "last" one still right, and the command lines saying it for
their one run (``trec_eval``) or their last (``evaluate``) only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import rankscope
from rankscope.cli.main import main
from rankscope.data.tables import Qrels
from rankscope.engine import qrels_index as qrels_index_module
from rankscope.engine.qrels_index import OneRun, QrelsIndex, qrels_index

from .test_kept_budget import _PLAN, _case


def _keyed(index: QrelsIndex) -> list[object]:
    return [k for k in index._kept if isinstance(k, tuple) and k[0] in ("judged", "shared")]


def _bits(per_query: dict[str, dict[str, float]]) -> dict[tuple[str, str], bytes]:
    return {(q, m): np.float64(v).tobytes() for q, row in per_query.items()
            for m, v in row.items()}


@pytest.mark.parametrize("seed", [1, 2])
def test_a_last_ranking_gives_the_same_bits_and_keeps_nothing_keyed(seed: int) -> None:
    qrels, run = _case(seed)
    kept_all = Qrels.from_dict(qrels)
    want = _bits(rankscope.evaluate(kept_all, run, _PLAN).per_query)
    assert _keyed(qrels_index(kept_all))  # the usual loop keeps them for the next run

    last = Qrels.from_dict(qrels)
    index = qrels_index(last)
    index.last_ranking()
    assert _bits(rankscope.evaluate(last, run, _PLAN).per_query) == want
    assert _keyed(index) == []
    assert isinstance(index.shared(index.query_ids, levels=False), OneRun)
    # another ranking after all (a library caller's): keyed again, the same values
    assert _bits(rankscope.evaluate(last, run, _PLAN).per_query) == want


def _files(tmp_path: Path, seeds: list[int]) -> tuple[str, list[str]]:
    qrels, _ = _case(seeds[0])
    q = tmp_path / "qrels"
    q.write_text("".join(f"{qid} 0 {d} {g}\n" for qid, docs in qrels.items()
                         for d, g in docs.items()))
    runs = []
    for seed in seeds:
        _, run = _case(seed)  # the same query and document names, other rankings
        path = tmp_path / f"run{seed}"
        path.write_text("".join(f"{qid} Q0 {d} {r} {s} r{seed}\n" for qid, docs in run.items()
                                for r, (d, s) in enumerate(docs.items())))
        runs.append(str(path))
    return str(q), runs


@pytest.fixture
def said(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the command lines tell the qrels' index, in order: each judged list made
    ("lists") and each last_ranking ("last")."""
    events: list[str] = []
    lists, last = QrelsIndex.judged_lists, QrelsIndex.last_ranking

    def judged_lists(self: QrelsIndex, *args: Any, **kwargs: Any) -> Any:
        events.append("lists")
        return lists(self, *args, **kwargs)

    def last_ranking(self: QrelsIndex) -> None:
        events.append("last")
        last(self)

    monkeypatch.setattr(qrels_index_module.QrelsIndex, "judged_lists", judged_lists)
    monkeypatch.setattr(qrels_index_module.QrelsIndex, "last_ranking", last_ranking)
    return events


def test_evaluate_says_it_before_its_last_run_only(tmp_path: Path, said: list[str],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    q, runs = _files(tmp_path, [3, 4, 5])
    assert main(["evaluate", q, *runs, "-m", "map", "-m", "ndcg@5", "-f", "json",
                 "--quiet", "--ci", "never"]) == 0
    together = json.loads(capsys.readouterr().out)
    assert said == ["lists", "lists", "last", "lists"]
    for seed, path in zip([3, 4, 5], runs, strict=True):  # each run alone, the same means
        assert main(["evaluate", q, path, "-m", "map", "-m", "ndcg@5", "-f", "json",
                     "--quiet", "--ci", "never"]) == 0
        alone = json.loads(capsys.readouterr().out)
        for field in ("mean", "std"):
            assert together["runs"][f"r{seed}"][field] == alone[field], (seed, field)


def test_trec_eval_says_it_for_its_one_run(tmp_path: Path, said: list[str],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    q, (run,) = _files(tmp_path, [6])
    assert main(["trec_eval", "-m", "all_trec", q, run]) == 0
    assert said == ["last", "lists"]
    assert "ndcg_cut_10" in capsys.readouterr().out


def _alive_when_called(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str,
                       refs: list[Any], seen: list[int]) -> None:
    """Patch ``owner.name`` to count, on each call, the objects of ``refs`` (weak
    references) still alive, into ``seen``."""
    called = getattr(owner, name)

    def counting(*args: Any, **kwargs: Any) -> Any:
        seen.append(sum(ref() is not None for ref in refs))
        return called(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting)


def _all_trec_freed_then_held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                              capsys: pytest.CaptureFixture[str], seen: list[int],
                              seed: int = 7) -> None:
    # with the patches: nothing watched is alive when the watched call starts; without
    # them (everything held throughout): the same lines
    q, (run,) = _files(tmp_path, [seed])
    assert main(["trec_eval", "-m", "all_trec", q, run]) == 0
    assert seen == [0]
    out = capsys.readouterr().out
    monkeypatch.undo()
    assert main(["trec_eval", "-m", "all_trec", q, run]) == 0
    assert capsys.readouterr().out == out


def test_trec_eval_lets_the_qrels_go_before_its_measures(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # its one run ranked, nothing reads the qrels: their tables (frames and index,
    # about 200 MB at 7 M judgments) are freed before the measures, not held beside them
    import weakref

    from rankscope.trec_eval import command

    refs: list[weakref.ref[Any]] = []
    tables = command.tables
    seen: list[int] = []

    def made(rel_info: Any, run: Any) -> Any:
        qrels, ranked = tables(rel_info, run)
        refs.extend([weakref.ref(rel_info), weakref.ref(qrels)])
        return qrels, ranked

    monkeypatch.setattr(command, "tables", made)
    _alive_when_called(monkeypatch, command, "evaluate_qrels", refs, seen)
    _all_trec_freed_then_held(tmp_path, monkeypatch, capsys, seen)


def test_trec_eval_lets_the_run_go_before_its_measures(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # its run ranked, no measure of trec_eval's qrels reads a document id or score:
    # the run's tables and its ranked lists' columns (800 MB of frame at 10^7 lines)
    # are freed before the measures, not held beside them
    import weakref

    from rankscope.trec_eval import command

    refs: list[weakref.ref[Any]] = []
    tables, ranking = command.tables, command.rank
    seen: list[int] = []

    def made(rel_info: Any, run: Any) -> Any:
        qrels, ranked = tables(rel_info, run)
        refs.extend([weakref.ref(run), weakref.ref(ranked), weakref.ref(run.frame)])
        return qrels, ranked

    def ranked(*args: Any, **kwargs: Any) -> Any:
        lists = ranking(*args, **kwargs)
        refs.extend([weakref.ref(lists.run_docs), weakref.ref(lists.run_scores)])
        return lists

    monkeypatch.setattr(command, "tables", made)
    monkeypatch.setattr(command, "rank", ranked)
    _alive_when_called(monkeypatch, command, "evaluate_qrels", refs, seen)
    _all_trec_freed_then_held(tmp_path, monkeypatch, capsys, seen)


def test_lists_let_go_of_the_run_refuse_its_ids_and_scores() -> None:
    # a measure reading them afterwards fails rather than scoring stand-in values
    from rankscope.data.tables import Run
    from rankscope.engine.ranking import rank

    judged, ranked = _case(3)
    lists = rank(Qrels.from_dict(judged), Run.from_dict(ranked))
    whole = type(lists)(**{f: getattr(lists, f) for f in lists.__dataclass_fields__})
    assert whole.doc_ids.len() == whole.scores.size == lists.grades.size
    lists.let_go_of_run()
    assert lists.run_docs is None and lists.run_scores is None
    for read in ("doc_ids", "scores"):
        with pytest.raises(RuntimeError, match="let go"):
            getattr(lists, read)


def test_trec_eval_lets_the_qrels_file_go_before_reading_its_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # the qrels parsed, their file's memory map (its pages resident, 640 MB for the
    # 10^7 `j1000-url` qrels) is not held beside the run's reading
    import weakref

    from rankscope.trec_eval import command

    refs: list[weakref.ref[Any]] = []
    reading = command.read_input
    seen: list[int] = []

    def read(path: str, what: str, **kwargs: Any) -> Any:
        blob = reading(path, what, **kwargs)
        if what == "qrels":
            refs.append(weakref.ref(blob))
        return blob

    monkeypatch.setattr(command, "read_input", read)
    _alive_when_called(monkeypatch, command, "parse_results", refs, seen)
    _all_trec_freed_then_held(tmp_path, monkeypatch, capsys, seen)
