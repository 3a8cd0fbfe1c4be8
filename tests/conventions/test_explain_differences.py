"""``explain_differences`` / ``rankscope explain-differences`` list exactly what changes.

The expected list is found here by evaluating the run both ways with
``rankscope.evaluate`` and comparing every per-query value, the set of
queries with a value, and the mean.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import rankscope
from rankscope.cli.main import main
from rankscope.engine.differences import explain_differences
from rankscope.metrics.conventions import PROFILES

from .data import SHAPES, dataset

pytestmark = pytest.mark.filterwarnings("ignore::rankscope.errors.RankscopeWarning")

METRICS = ["P@5", "P_10", "RR@3", "recip_rank", "Judged@5", "ERR@5", "nDCG@5", "ndcg_cut_10",
           "DCG@3", "bpref", "NumRel", "map", "RBP(p=0.5,rel=1)", "iprec_at_recall_0.20",
           "ndcg_score@5", "SetF(beta=0.5)"]


def _values(result: rankscope.EvaluationResult, label: str) -> dict[str, float]:
    column = result.column(label)
    return {q: float(v) for q, v in zip(result.query_ids, column, strict=True)
            if not math.isnan(v)}


def _differing(qrels: dict, run: dict, conventions: str) -> set[str]:
    ours = rankscope.evaluate(qrels, run, METRICS, allow_no_overlap=True)
    theirs = rankscope.evaluate(qrels, run, METRICS, conventions=conventions,
                                allow_no_overlap=True)
    out = set()
    for label in METRICS:
        a, b = _values(ours, label), _values(theirs, label)
        if a != b or ours.means[label] != theirs.means[label]:
            out.add(label)
    return out


CASES = [(name, seed, shape) for name in PROFILES for seed in range(3) for shape in SHAPES[:4]]


@pytest.mark.parametrize(("conventions", "seed", "shape"), CASES,
                         ids=[f"{c}-{s}-{sh.scores}{sh.top}" for c, s, sh in CASES])
def test_lists_exactly_the_metrics_that_differ(conventions: str, seed: int, shape) -> None:
    qrels, run = dataset(seed, shape)
    top = 3 if conventions == "quepid" else 4  # Quepid's ERR@10 is on a 0-3 scale
    # no negative grades: scikit-learn's ndcg_score refuses them
    qrels = {q: {d: min(max(g, 0), top) for d, g in docs.items()} for q, docs in qrels.items()}
    report = explain_differences(qrels, run, METRICS, conventions, allow_no_overlap=True)
    assert {m.label for m in report.differing} == _differing(qrels, run, conventions)
    for m in report.differing:
        assert m.reasons, m.label  # every change comes with a reason


def test_means_are_those_of_both_evaluations() -> None:
    qrels, run = dataset(1, SHAPES[0])
    report = explain_differences(qrels, run, ["ERR@5", "RR@3"], "ir_measures",
                                 allow_no_overlap=True)
    tool = rankscope.evaluate(qrels, run, ["ERR@5", "RR@3"], conventions="ir_measures",
                              allow_no_overlap=True)
    ours = rankscope.evaluate(qrels, run, ["ERR@5", "RR@3"], allow_no_overlap=True)
    for m in report.metrics:
        assert (m.default_mean, m.tool_mean) == (ours.means[m.label], tool.means[m.label])


def _files(tmp_path: Path) -> tuple[str, str]:
    qrels = tmp_path / "qrels.txt"
    run = tmp_path / "run.txt"
    qrels.write_text("1 0 a 3\n1 0 b 0\n1 0 c 1\n2 0 x 1\n2 0 y 0\n")
    run.write_text("1 Q0 a 1 1.0 r\n1 Q0 b 2 1.0 r\n1 Q0 c 3 0.5 r\n"
                   "2 Q0 y 1 2.0 r\n2 Q0 x 2 1.0 r\n")
    return str(qrels), str(run)


def test_command_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = _files(tmp_path)
    names = ["P@1", "RR@2", "ERR@5", "NumRel"]
    code = main(["explain-differences", qrels, run, "--conventions", "ir_measures",
                 *[arg for n in names for arg in ("-m", n)]])
    assert code == 0
    out = capsys.readouterr().out
    differing = _differing_files(qrels, run, names, "ir_measures")
    assert differing == {"RR@2", "ERR@5"}  # the ids tie a/b: ascending puts a first
    table = out.split("\n\n")[1].splitlines()[1:]
    assert {line.split()[0] for line in table} == differing
    assert "the same under both: P@1, NumRel" in out


def _differing_files(qrels: str, run: str, names: list[str], conventions: str) -> set[str]:
    ours = rankscope.evaluate(qrels, run, names)
    theirs = rankscope.evaluate(qrels, run, names, conventions=conventions)
    return {n for n in names if _values(ours, n) != _values(theirs, n)
            or ours.means[n] != theirs.means[n]}


def test_command_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = _files(tmp_path)
    code = main(["explain-differences", qrels, run, "--conventions", "quepid", "-m", "P@5",
                 "-m", "nDCG@2", "-m", "AP@5", "-f", "json"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    flags = {m["metric"]: m["differs"] for m in data["metrics"]}
    assert {k for k, v in flags.items() if v} == _differing_files(
        qrels, run, ["P@5", "nDCG@2", "AP@5"], "quepid")
    assert data["conventions"] == "quepid"


def test_command_refuses_an_unknown_tool(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = _files(tmp_path)
    assert main(["explain-differences", qrels, run, "--conventions", "irmeasures", "-m",
                 "P@1"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'ir_measures'" in err
