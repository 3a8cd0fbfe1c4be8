"""A qrels argument is read once, and its shape (qrels or raters' judgments) decided from
what was read (issue 28, section 2: the command line looked at the file's header through
one reader, then read it again through another)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import polars as pl
import pytest

import rankscope.data._io as io_module
from rankscope.cli.main import main
from rankscope.data.tables import Qrels
from rankscope.judgments.relevance import read_relevance
from rankscope.judgments.table import Judgments

PLAIN = "query_id,doc_id,grade\nq1,a,1\nq1,b,0\nq2,c,2\n"
RATERS = "query_id,doc_id,rater,grade\nq1,a,ann,1\nq1,a,bob,1\nq1,b,ann,0\nq2,c,ann,2\n"
RUN = "q1 Q0 a 1 2.0 x\nq1 Q0 b 2 1.0 x\nq2 Q0 d 1 1.0 x\n"


@pytest.fixture
def reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every file read, by name, wherever the reading function was imported."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plain.csv").write_text(PLAIN)
    (tmp_path / "raters.csv").write_text(RATERS)
    (tmp_path / "run.txt").write_text(RUN)
    counted: Counter[str] = Counter()
    original = io_module.read_bytes

    def counting(path: object) -> bytes:
        counted[Path(str(path)).name] += 1
        return original(path)  # type: ignore[arg-type]

    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("rankscope") and \
                getattr(module, "read_bytes", None) is original:
            monkeypatch.setattr(module, "read_bytes", counting)
    return counted


def _mean(capsys: pytest.CaptureFixture[str], metric: str) -> float:
    out = json.loads(capsys.readouterr().out)
    return float(out["mean"][metric])


def test_plain_qrels_are_read_once(reads: Counter[str], capsys: pytest.CaptureFixture[str]):
    assert main(["evaluate", "plain.csv", "run.txt", "-m", "P@1", "-f", "json",
                 "--ci", "never"]) == 0
    assert reads["plain.csv"] == 1
    # q1: a (grade 1) first -> 1; q2: d unjudged first -> 0
    assert _mean(capsys, "P@1") == 0.5


def test_raters_judgments_are_read_once(reads: Counter[str], capsys: pytest.CaptureFixture[str]):
    assert main(["evaluate", "raters.csv", "run.txt", "-m", "P@1", "-f", "json",
                 "--strategy", "mean", "--ci", "never"]) == 0
    assert reads["raters.csv"] == 1
    assert _mean(capsys, "P@1") == 0.5  # a's mean grade 1, c never retrieved


@pytest.mark.parametrize("command", [
    ["coverage", "raters.csv", "run.txt", "-k", "2"],
    ["coverage", "plain.csv", "run.txt", "-k", "2"],
])
def test_other_commands_read_their_qrels_argument_once(reads: Counter[str], command: list[str],
                                                       capsys: pytest.CaptureFixture[str]):
    assert main(command) == 0
    assert reads[command[1]] == 1


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "json", "parquet"])
def test_the_shape_is_decided_from_the_columns_read(tmp_path: Path, fmt: str):
    plain = pl.DataFrame({"qid": ["q1", "q1"], "docno": ["a", "b"], "rel": [2, 0]})
    raters = plain.with_columns(pl.Series("annotator", ["ann", "bob"]))
    for name, frame in (("plain", plain), ("raters", raters)):
        path = tmp_path / f"{name}.{fmt}"
        if fmt == "csv":
            frame.write_csv(path)
        elif fmt == "tsv":
            frame.write_csv(path, separator="\t")
        elif fmt == "jsonl":
            frame.write_ndjson(path)
        elif fmt == "json":
            path.write_text(json.dumps(frame.to_dicts()))
        else:
            frame.write_parquet(path)
    qrels = read_relevance(tmp_path / f"plain.{fmt}")
    assert isinstance(qrels, Qrels)
    assert qrels.to_dict() == {"q1": {"a": 2.0, "b": 0.0}}
    judged = read_relevance(tmp_path / f"raters.{fmt}")
    assert isinstance(judged, Judgments)
    assert sorted(judged.raters) == ["ann", "bob"]
    # asked for: one rater's judgments, named after the file
    forced = read_relevance(tmp_path / f"plain.{fmt}", judgments=True)
    assert isinstance(forced, Judgments) and forced.raters == ["plain"]


def test_a_trec_file_is_qrels_unless_judgments_are_asked_for(tmp_path: Path):
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 a 1\nq1 0 b 0\n")
    assert isinstance(read_relevance(path), Qrels)
    forced = read_relevance(path, judgments=True, rater="ann")
    assert isinstance(forced, Judgments) and forced.raters == ["ann"]
