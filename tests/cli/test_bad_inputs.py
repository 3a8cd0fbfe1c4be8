"""Bad input never becomes a number: exit 2, one line on stderr naming file (and line), no stdout.

Each case is one of the holes found by trying rankscope as a new user would
(issue 11, section 1). The expected message fragments are written from the
input files below, by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from rankscope.cli.main import main

QRELS = "Q1 0 d1 1\nQ1 0 d2 0\nQ2 0 d3 1\n"
RUN_LOWER = "q1 Q0 d1 1 1.0 r\nq2 Q0 d3 1 1.0 r\n"
RUN_UPPER = "Q1 Q0 d1 1 2.0 r\nQ1 Q0 d2 2 1.0 r\nQ2 Q0 d3 1 1.0 r\n"


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "qrels_lower.txt").write_text(QRELS.lower())
    (tmp_path / "run.txt").write_text(RUN_LOWER)
    (tmp_path / "good.txt").write_text(RUN_UPPER)
    (tmp_path / "good2.txt").write_text(RUN_UPPER.replace(" r\n", " s\n"))
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "float_ids.csv").write_text("query_id,doc_id,grade\n1.0,d1,1\n2.0,d3,1\n")
    (tmp_path / "int_run.txt").write_text("1 Q0 d1 1 1.0 r\n2 Q0 d3 1 1.0 r\n")
    (tmp_path / "short.csv").write_text("query_id,doc_id,grade\nQ1,d1,1\nQ1,d2\nQ2,d3,1\n")
    (tmp_path / "short.tsv").write_text("query_id\tdoc_id\tgrade\nQ1\td1\t1\nQ1\td2\n")
    (tmp_path / "extra.csv").write_text("query_id,doc_id,grade\nQ1,d1,1,7\n")
    (tmp_path / "raters.csv").write_text(
        "query_id,doc_id,rater,grade\nQ1,d1,ann,1\nQ1,d1,bob\n")
    (tmp_path / "dup.json").write_text('{\n "Q1": {\n  "d1": 1,\n  "d1": 0\n }\n}\n')
    (tmp_path / "dup_query.json").write_text('{"Q1": {"d1": 1},\n "Q1": {"d2": 1}}\n')
    (tmp_path / "bool.json").write_text('{"Q1": {"d1": 1},\n "Q2": {"d3": true}}\n')
    (tmp_path / "dup.jsonl").write_text(
        '{"query_id": "Q1", "doc_id": "d1", "grade": 1}\n'
        '{"query_id": "Q1", "doc_id": "d2", "grade": 0, "grade": 1}\n')
    pl.DataFrame({"query_id": ["Q1"], "doc_id": ["d1"], "grade": [[1]]}).write_parquet(
        tmp_path / "list.parquet")
    pl.DataFrame({"query_id": [["Q1"]], "doc_id": ["d1"], "grade": [1]}).write_parquet(
        tmp_path / "list_ids.parquet")
    (tmp_path / "spaced.csv").write_text("query_id,doc_id,score\nQ1,a b,2\nQ1,c,1\n")
    (tmp_path / "plain.csv").write_text("query_id,doc_id,score\nQ1,c,2\nQ1,d,1\n")
    return tmp_path


CASES = [
    # (argv, fragments the one line must hold)
    (["evaluate", "qrels.txt", "run.txt", "-m", "P@5"],
     ["no query of run.txt (2 queries: q1, q2) is in qrels.txt (2 queries: Q1, Q2)",
      "upper/lower case", "--allow-no-overlap"]),
    (["evaluate", "qrels.txt", "empty.txt", "-m", "P@5"],
     ["no query of empty.txt (no queries) is in qrels.txt (2 queries: Q1, Q2)"]),
    (["evaluate", "empty.txt", "good.txt", "-m", "P@5"],
     ["no query of good.txt (2 queries: Q1, Q2) is in empty.txt (no queries)"]),
    (["evaluate", "/dev/null", "good.txt", "-m", "P@5"],
     ["is in /dev/null (no queries)"]),
    (["evaluate", "float_ids.csv", "int_run.txt", "-m", "P@5"],
     ["is in float_ids.csv (2 queries: 1.0, 2.0)", "look like floats"]),
    (["evaluate", "short.csv", "good.txt", "-m", "P@5"],
     ["short.csv, line 3: too few fields: 2 where the header", "'Q1,d2'"]),
    (["evaluate", "short.tsv", "good.txt", "-m", "P@5"],
     ["short.tsv, line 3: too few fields"]),
    (["evaluate", "extra.csv", "good.txt", "-m", "P@5"],
     ["extra.csv, line 2: too many fields: 4", "'Q1,d1,1,7'"]),
    (["evaluate", "raters.csv", "good.txt", "-m", "P@5"],
     ["raters.csv, line 3: too few fields: 3 where the header"]),
    (["evaluate", "dup.json", "good.txt", "-m", "P@5"],
     ["dup.json, line 4: document 'd1' given twice for query 'Q1'"]),
    (["evaluate", "dup_query.json", "good.txt", "-m", "P@5"],
     ["dup_query.json, line 2: query 'Q1' given twice"]),
    (["evaluate", "bool.json", "good.txt", "-m", "P@5"],
     ["bool.json, line 2: grade for query 'Q2', document 'd3' is a boolean", "'true'"]),
    (["evaluate", "dup.jsonl", "good.txt", "-m", "P@5"],
     ["dup.jsonl, line 2: key 'grade' twice in one record"]),
    (["evaluate", "list.parquet", "good.txt", "-m", "P@5"],
     ["list.parquet: column 'grade' has type List(Int64); a grade must be a number"]),
    (["evaluate", "list_ids.parquet", "good.txt", "-m", "P@5"],
     ["list_ids.parquet: column 'query_id' has type List(String)"]),
    (["evaluate", "qrels.txt", "good.txt", "-m", "P@9223372036854775808"],
     ["cut-off must be at most 2147483647, not 9223372036854775808"]),
    (["evaluate", "-", "-", "-m", "P@5"], ["only one input can come from stdin (-)"]),
    (["compare", "-", "-", "good.txt", "-m", "P@5"], ["only one input can come from stdin"]),
    (["coverage", "-", "-", "-k", "5"], ["only one input can come from stdin"]),
    (["compare", "qrels.txt", "good.txt", "run.txt", "-m", "P@5"],
     ["no query of run.txt (2 queries: q1, q2) is in qrels.txt"]),
    (["report", "qrels.txt", "good.txt", "run.txt", "-o", "r.html", "--no-plots"],
     ["no query of run.txt (2 queries: q1, q2) is in qrels.txt"]),
    (["similarity", "good.txt", "run.txt"],
     ["no query of good.txt (2 queries: Q1, Q2) is in run.txt (2 queries: q1, q2)"]),
    (["fuse", "good.txt", "run.txt", "-o", "fused.txt"],
     ["no query of run.txt (2 queries: q1, q2) is in good.txt"]),
    (["fuse", "good.txt", "good2.txt", "--optimize", "--qrels", "qrels_lower.txt", "-o",
      "fused.txt"],
     ["no query of run 'rrf' (2 queries: Q1, Q2) is in qrels_lower.txt"]),
    (["fuse", "spaced.csv", "plain.csv", "-o", "fused.txt"],
     ["fused.txt: cannot write the document id 'a b' (query 'Q1') to a TREC file",
      "write CSV, TSV, JSON or JSONL instead"]),
]


@pytest.mark.parametrize(("argv", "fragments"), CASES, ids=[" ".join(c[0])[:70] for c in CASES])
def test_bad_input_is_one_line_exit_2_and_no_number(
    files: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    argv: list[str], fragments: list[str],
) -> None:
    monkeypatch.setattr("sys.stdin", open("/dev/null"))  # noqa: SIM115  (closed by pytest)
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith(f"rankscope {argv[0]}: error: ")
    for fragment in fragments:
        assert fragment in err, (fragment, err)
    assert not (files / "fused.txt").exists() and not (files / "r.html").exists()


def test_allow_no_overlap_evaluates_and_says_so(files: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["evaluate", "qrels.txt", "run.txt", "-m", "P@5", "--allow-no-overlap",
                 "-f", "json"])
    out, err = capsys.readouterr()
    assert code == 0
    # Both qrels queries lack from the run: each an empty ranking, P@5 = 0.
    assert json.loads(out)["mean"] == {"P@5": 0.0}
    assert err == ("rankscope evaluate: warning: no query of run.txt (2 queries: q1, q2) is in "
                   "qrels.txt (2 queries: Q1, Q2) (the ids differ only in upper/lower case)\n")


def test_partial_overlap_is_a_one_line_warning_with_the_counts(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (files / "part.txt").write_text("Q1 Q0 d1 1 1.0 r\nQ9 Q0 d3 1 1.0 r\n")
    assert main(["evaluate", "qrels.txt", "part.txt", "-m", "P@1", "-f", "json"]) == 0
    out, err = capsys.readouterr()
    # Q1: d1 relevant at rank 1 -> 1; Q2 missing from the run -> 0; mean 0.5.
    assert json.loads(out)["mean"] == {"P@1": 0.5}
    assert err == ("rankscope evaluate: warning: 1 of the 2 queries of part.txt are in "
                   "qrels.txt (2 queries); 1 only in part.txt (Q9); 1 only in qrels.txt (Q2)\n")


def test_memory_without_streaming_is_a_warning(files: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "qrels.txt", "good.txt", "-m", "P@1", "--memory", "1G",
                 "-f", "csv"]) == 0
    out, err = capsys.readouterr()
    # Q1 ranks d1 (relevant) first; Q2 ranks d3 (relevant) first.
    assert out.splitlines()[1] == "r,P@1,1.0,2,0.0,1.0,1.0"  # two 1s: std 0, interval [1, 1]
    assert err == ("rankscope evaluate: warning: --memory is the budget of --engine "
                   "streaming; ignored with --engine local\n")


def test_empty_grade_field_is_ungraded_not_an_error(files: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    # An explicitly empty field (three fields) is the documented "seen, not graded".
    (files / "ungraded.csv").write_text("query_id,doc_id,grade\nQ1,d1,\nQ1,d2,1\n")
    assert main(["evaluate", "ungraded.csv", "good.txt", "-m", "P@2", "-f", "csv"]) == 0
    out, err = capsys.readouterr()
    # Q1 ranks d1 (ungraded: not relevant), d2 (relevant): P@2 = 1/2; Q2 only in the run.
    assert out.splitlines()[1] == "r,P@2,0.5,1,0.0,,"  # one query: std 0, no interval
    assert "1 only in good.txt (Q2)" in err


def test_did_you_mean_for_a_mistyped_option(files: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "qrels.txt", "good.txt", "-m", "P@1", "--per-qeury"]) == 2
    assert "unrecognized arguments: --per-qeury; did you mean --per-query?" in (
        capsys.readouterr().err)
    assert main(["compare", "qrels.txt", "good.txt", "good2.txt", "-m", "P@1", "--corection",
                 "bh"]) == 2
    assert "did you mean --correction?" in capsys.readouterr().err
    assert main(["evalute", "qrels.txt"]) == 2
    assert "did you mean 'evaluate'?" in capsys.readouterr().err
    assert main(["evaluate", "qrels.txt", "good.txt", "-m", "P@1", "--ties", "trc"]) == 2
    assert "did you mean 'trec'?" in capsys.readouterr().err


def test_deprecated_spellings_still_work_and_say_so(files: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (files / "grades.csv").write_text(
        "query_id,doc_id,rater,grade\nQ1,d1,ann,1\nQ1,d1,bob,1\nQ1,d2,ann,0\nQ1,d2,bob,1\n")
    # --format is the output's form everywhere (issue 27 §5); judgments' old
    # --output-format is its deprecated spelling
    assert main(["judgments", "agreement", "grades.csv", "--input-format", "csv", "--scale",
                 "binary", "--output-format", "json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["n_raters"] == 2
    # (named as typed, as its errors are: "judgments agreement", not "judgments")
    assert err == ("rankscope judgments agreement: warning: --output-format is deprecated "
                   "here, use --format\n")
    assert main(["fuse", "good.txt", "good2.txt", "--k", "10", "-f", "json"]) == 0
    out, err = capsys.readouterr()
    # RRF with k = 10: d1 is first in both runs -> 2 / (10 + 1)
    assert json.loads(out)["Q1"]["d1"] == pytest.approx(2 / 11)
    assert "--k is deprecated here, use --rrf-k" in err
