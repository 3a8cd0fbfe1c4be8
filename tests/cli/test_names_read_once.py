"""Every command taking ``-m`` reads each metric name once per call, however many runs,
sides, grid points or configurations it evaluates (issue 28, section 2: the command line
and the engine each parsed them). The process's cache of plans is turned off here: a name
read again and found in the cache was still read twice by the command."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import rankscope.engine.conventions as engine_conventions
import rankscope.judgments.evaluation as judgments_evaluation
from rankscope.cli.main import main
from rankscope.metrics.conventions import resolve_name

QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n"
RAW = "query_id,doc_id,rater,grade\nq1,a,ann,1\nq1,a,bob,1\nq1,b,ann,0\nq2,c,ann,2\n"
RUN_A = "q1 Q0 a 1 2.0 x\nq1 Q0 b 2 1.0 x\nq2 Q0 c 1 1.0 x\n"
RUN_B = "q1 Q0 b 1 2.0 y\nq1 Q0 a 2 1.0 y\nq2 Q0 d 1 1.0 y\n"
HUMAN = "query_id,doc_id,grade\nq1,a,1\nq1,b,0\nq2,c,2\n"
LLM = "query_id,doc_id,grade\nq1,a,1\nq1,b,1\nq2,c,0\n"


class _NotKept(dict):  # type: ignore[type-arg]
    """The plans' cache keeping nothing: every read is a read."""

    def __setitem__(self, key: object, value: object) -> None:
        pass


class Reads(Counter[str]):
    """Names read, counted; ``under`` counts them by (name, conventions)."""

    def __init__(self) -> None:
        super().__init__()
        self.under: Counter[tuple[str, str | None]] = Counter()


@pytest.fixture
def reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Reads:
    """Every name read, counted (the one function both the engine and the judgments path
    read names with)."""
    monkeypatch.chdir(tmp_path)
    for name, text in (("qrels.txt", QRELS), ("raters.csv", RAW), ("a.txt", RUN_A),
                       ("b.txt", RUN_B), ("human.csv", HUMAN), ("llm.csv", LLM)):
        (tmp_path / name).write_text(text)
    counted = Reads()

    def counting(item: Any, conventions: str | None = None) -> Any:
        counted[str(item)] += 1
        counted.under[(str(item), conventions)] += 1
        return resolve_name(item, conventions)

    monkeypatch.setattr(engine_conventions, "resolve_name", counting)
    monkeypatch.setattr(engine_conventions, "_PLANS", _NotKept())
    monkeypatch.setattr(judgments_evaluation, "resolve_name", counting)
    return counted


@pytest.mark.parametrize("extra", [[], ["--engine", "streaming"]])
def test_names_are_read_once_for_every_run(reads: Counter[str], extra: list[str],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["evaluate", "qrels.txt", "a.txt", "b.txt", "-m", "P@1", "-m", "ndcg_cut_2",
                 "-f", "json", "--ci", "never", *extra])
    assert code == 0
    assert reads == {"P@1": 1, "ndcg_cut_2": 1}
    runs = json.loads(capsys.readouterr().out)["runs"]
    # P@1: run x ranks a (relevant) first in q1, c in q2 -> 1; run y: b, d -> 0
    assert runs["x"]["mean"]["P@1"] == 1.0
    assert runs["y"]["mean"]["P@1"] == 0.0


def test_names_are_read_once_over_raters_judgments(reads: Counter[str],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["evaluate", "raters.csv", "a.txt", "b.txt", "-m", "P@1", "-f", "json",
                 "--strategy", "mean", "--ci", "never"])
    assert code == 0
    assert reads == {"P@1": 1}
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert (runs["x"]["mean"]["P@1"], runs["y"]["mean"]["P@1"]) == (1.0, 0.0)


@pytest.mark.parametrize("command", [
    ["compare", "qrels.txt", "a.txt", "b.txt", "-m", "P@1", "-m", "ndcg_cut_2"],
    ["compare", "raters.csv", "a.txt", "b.txt", "-m", "P@1", "-m", "ndcg_cut_2",
     "--strategy", "mean"],
    ["report", "qrels.txt", "a.txt", "b.txt", "-m", "P@1", "-m", "ndcg_cut_2", "--no-plots",
     "-o", "report.html"],
])
def test_comparisons_read_their_names_once(reads: Counter[str], command: list[str]) -> None:
    assert main(command) == 0
    assert reads == {"P@1": 1, "ndcg_cut_2": 1}


def test_similarity_reads_its_names_once(reads: Counter[str]) -> None:
    assert main(["similarity", "a.txt", "b.txt", "-m", "Jaccard", "-m", "RBO(p=0.9)"]) == 0
    assert reads == {"Jaccard": 1, "RBO(p=0.9)": 1}


@pytest.mark.parametrize("command", [
    ["check", "qrels.txt", "a.txt", "--baseline", "b.txt", "-m", "P@1", "-m", "ndcg_cut_2"],
    # section 2's "once per evaluate call": a grid of 11 weights, each fused run evaluated
    ["fuse", "a.txt", "b.txt", "--method", "wsum", "--optimize", "--qrels", "qrels.txt",
     "-m", "P@1", "-o", "fused.txt"],
    ["fuse", "a.txt", "b.txt", "--method", "wsum", "--optimize", "--qrels", "qrels.txt",
     "-m", "P@1", "--folds", "2", "-o", "fused.txt"],
    ["judgments", "aggregate", "raters.csv", "--scale", "graded", "-m", "P@1", "-o",
     "agg.txt"],
    # two runs, each evaluated under the human and the LLM grades
    ["judge", "agreement", "human.csv", "llm.csv", "--runs", "a.txt", "b.txt", "-m", "P@1"],
    # both sides' per-query metric
    ["snapshots", "compare", "a.txt", "b.txt", "--qrels", "qrels.txt", "-m", "P@1"],
    ["snapshots", "diff", "a.txt", "b.txt", "--qrels", "qrels.txt", "-m", "P@1"],
])
def test_every_command_taking_m_reads_its_names_once(reads: Reads, command: list[str],
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    assert main(command) == 0, capsys.readouterr().err
    names = [command[i + 1] for i, word in enumerate(command) if word == "-m"]
    assert reads == dict.fromkeys(names, 1)


def test_explain_differences_reads_each_name_once_each_way(
        reads: Reads, capsys: pytest.CaptureFixture[str]) -> None:
    # the command line's check, the plans and both evaluations each read them (3 and 2)
    code = main(["explain-differences", "qrels.txt", "a.txt", "-m", "P@1", "-m",
                 "ndcg_cut_2", "--conventions", "trec_eval", "-f", "json"])
    assert code == 0
    assert reads.under == {("P@1", None): 1, ("ndcg_cut_2", None): 1,
                           ("P@1", "trec_eval"): 1, ("ndcg_cut_2", "trec_eval"): 1}
    metrics = {m["metric"]: m for m in json.loads(capsys.readouterr().out)["metrics"]}
    # run x: q1 ranks a (1) then b (0), q2 ranks c (2): P@1 = (1 + 1) / 2 either way
    assert metrics["P@1"]["default"]["mean"] == metrics["P@1"]["tool"]["mean"] == 1.0


def test_a_bad_name_fails_explain_differences_before_any_file(
        reads: Reads, capsys: pytest.CaptureFixture[str]) -> None:
    # the run file does not exist: the name is refused first (exit 2, the name said)
    assert main(["explain-differences", "qrels.txt", "missing.txt", "-m", "P@zero",
                 "--conventions", "trec_eval"]) == 2
    err = capsys.readouterr().err
    assert "P@zero" in err and "missing.txt" not in err


def test_sweep_reads_its_names_once(reads: Reads, capsys: pytest.CaptureFixture[str]) -> None:
    # three configurations of the demo's embedded endpoint, each evaluated, the first
    # metric again with the holes graded relevant
    assert main(["demo", "init", "demo"]) == 0
    assert main(["sweep", "demo/endpoint.toml", "demo/queries.tsv", "--qrels",
                 "demo/qrels.txt", "--grid", "weights.title=1,2,4", "-m", "nDCG@10", "-m",
                 "P@5", "-o", "sweep"]) == 0, capsys.readouterr().err
    assert reads == {"nDCG@10": 1, "P@5": 1}
