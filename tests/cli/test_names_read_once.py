"""``rankscope evaluate`` reads each metric name once, however many runs it evaluates
(issue 28, section 2: the command line and the engine each parsed them)."""

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


@pytest.fixture
def reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every name read, counted (the one function both the engine and the judgments path
    read names with)."""
    monkeypatch.chdir(tmp_path)
    for name, text in (("qrels.txt", QRELS), ("raters.csv", RAW), ("a.txt", RUN_A),
                       ("b.txt", RUN_B)):
        (tmp_path / name).write_text(text)
    counted: Counter[str] = Counter()

    def counting(item: Any, conventions: str | None = None) -> Any:
        counted[str(item)] += 1
        return resolve_name(item, conventions)

    monkeypatch.setattr(engine_conventions, "resolve_name", counting)
    monkeypatch.setattr(engine_conventions, "_PLANS", {})  # names read by an earlier test
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
