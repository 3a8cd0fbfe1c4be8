"""The command line's contract, case by case (issue 27): never eats an input, never crashes.

Every case runs one command line in a directory of small files and asserts
the exit code of the one scheme (0 done, 1 check failed, 2 bad input or
usage, 3 incomplete, 4 output not written), that stderr's first line names
the problem (fragments written by hand from the case), that no traceback is
printed, and that every file that was there before is byte for byte the same.

The cases are the issue's examples and the other members of their classes
found by trying every subcommand the same way.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rankscope.cli.main import main

# Q1 has d1 (1), d2 (0); Q2 has d3 (1)
QRELS = "Q1 0 d1 1\nQ1 0 d2 0\nQ2 0 d3 1\n"
RUN_A = "Q1 Q0 d1 1 2.0 a\nQ1 Q0 d2 2 1.0 a\nQ2 Q0 d3 1 1.0 a\n"
RUN_B = "Q1 Q0 d2 1 2.0 b\nQ1 Q0 d1 2 1.0 b\nQ2 Q0 d4 1 1.0 b\n"
OTHER = "Z1 Q0 d1 1 2.0 z\n"  # a query nobody judged


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    files = {
        "qrels.txt": QRELS, "a.txt": RUN_A, "b.txt": RUN_B, "other.txt": OTHER,
        "empty.txt": "",
        "grades.csv": "query_id,doc_id,rater,grade\nQ1,d1,ann,1\nQ1,d1,bob,1\n"
                      "Q1,d2,ann,0\nQ1,d2,bob,1\n",
        "one_rater.csv": "query_id,doc_id,rater,grade\nQ1,d1,ann,1\nQ1,d2,ann,0\n",
        "judge_name.csv": "query_id,doc_id,judge_name,grade\nQ1,d1,ann,1\nQ1,d1,bob,0\n",
        "string_grade.json": '{"Q1": {"d1": "2"}}\n',
        "no_grade.jsonl": '{"query_id": "Q1", "doc_id": "d1"}\n',
        "run.csv": "query_id,doc_id,score\nQ1,d1,2\n",
        "llm.csv": "query_id,doc_id,rater,grade\nZ9,x,llm,1\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "link.txt").symlink_to(tmp_path / "a.txt")
    (tmp_path / "existing.html").write_text("<p>an earlier report</p>\n")
    return tmp_path


def _state(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()}


CASES = [
    # (argv, exit code, fragments of stderr's first line)
    # 1. never destroy an input: an output that is an input, also through a link
    (["evaluate", "qrels.txt", "a.txt", "-m", "P@5", "-o", "a.txt"], 2, ["a.txt", "input"]),
    (["evaluate", "qrels.txt", "a.txt", "-m", "P@5", "-o", "qrels.txt"], 2,
     ["qrels.txt", "input"]),
    (["evaluate", "qrels.txt", "a.txt", "-m", "P@5", "-o", "link.txt"], 2, ["link.txt"]),
    (["compare", "qrels.txt", "a.txt", "b.txt", "-m", "P@5", "-o", "b.txt"], 2, ["b.txt"]),
    (["judgments", "aggregate", "grades.csv", "-o", "grades.csv"], 2, ["grades.csv"]),
    (["fuse", "a.txt", "b.txt", "-o", "a.txt"], 2, ["a.txt"]),
    (["coverage", "qrels.txt", "a.txt", "-k", "5", "-o", "qrels.txt"], 2, ["qrels.txt"]),
    (["check", "qrels.txt", "a.txt", "--baseline", "b.txt", "-m", "P@5", "-o", "b.txt"], 2,
     ["b.txt"]),
    (["similarity", "a.txt", "b.txt", "-o", "a.txt"], 2, ["a.txt"]),
    # 2. outputs that cannot be written: exit 4, one line
    (["evaluate", "qrels.txt", "a.txt", "-m", "P@5", "-o", "missing/out.txt"], 4,
     ["missing"]),
    (["fuse", "a.txt", "b.txt", "-o", "missing/fused.txt"], 4, ["missing"]),
    (["report", "qrels.txt", "a.txt", "b.txt", "-o", "r.html", "--figures", "existing.html",
      "--no-plots"], 2, ["existing.html", "not a directory"]),
    (["compare", "qrels.txt", "a.txt", "b.txt", "-m", "P@5", "--seed", "-1"], 2,
     ["--seed", "-1"]),
    # 3. validated before any work
    (["report", "qrels.txt", "a.txt", "b.txt", "-o", "r.html", "--max-k", "100000000"], 2,
     ["--max-k"]),
    (["coverage", "qrels.txt", "a.txt", "-k", "99999999999999999999"], 2, ["-k"]),
    (["judge", "--endpoint", "notaurl", "--model", "m", "--queries", "q.tsv", "--docs",
      "d.jsonl", "--run", "a.txt"], 2, ["--endpoint", "notaurl"]),
    (["judge", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--temperature", "-1",
      "--queries", "q.tsv", "--docs", "d.jsonl", "--run", "a.txt"], 2, ["--temperature"]),
    (["judge", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--setting",
      "seed=notjson", "--queries", "q.tsv", "--docs", "d.jsonl", "--run", "a.txt"], 2,
     ["seed"]),
    (["snapshot", "endpoint.toml", "queries.tsv", "--concurrency", "0", "-o", "r.txt"], 2,
     ["--concurrency"]),
    (["evaluate", "qrels.txt", "a.txt", "-m", "P(rel=-5)@5"], 2, ["rel"]),
    (["evaluate", "qrels.txt", "a.txt", "-m", "IPrec@1.5"], 2, ["IPrec@1.5"]),
    (["evaluate", "qrels.txt", "a.txt", "-m", "IPrec@-0.5"], 2, ["IPrec@-0.5"]),
    (["evaluate", "string_grade.json", "a.txt", "-m", "P@5"], 2, ["string_grade.json"]),
    (["evaluate", "no_grade.jsonl", "a.txt", "-m", "P@5"], 2, ["no_grade.jsonl"]),
    (["fuse", "a.txt", "b.txt", "--method", "wsum", "--weights", "0,0"], 2, ["--weights"]),
    (["metrics", ""], 2, ["metric"]),
    # conflicting or ignored options are loud
    (["fuse", "a.txt", "b.txt", "--rrf-k", "10", "--k", "20"], 2, ["--rrf-k", "--k"]),
    (["fuse", "a.txt", "b.txt", "--method", "wsum", "--weights", "1,2", "--optimize",
      "--qrels", "qrels.txt"], 2, ["--weights", "ignored"]),
    (["evaluate", "qrels.txt", "a.txt", "-m", "P@5", "--rater", "ann"], 2, ["--rater"]),
    (["evaluate", "qrels.txt", "a.txt", "-m", "P@5", "--on-duplicate-grade", "first"], 2,
     ["--on-duplicate-grade"]),
    (["evaluate", "qrels.txt", "run.csv", "-m", "P@5", "--engine", "streaming"], 2,
     ["TREC"]),
    # no shared query is an error everywhere
    (["evaluate", "qrels.txt", "other.txt", "-m", "P@5"], 2, ["no query"]),
    (["coverage", "qrels.txt", "other.txt", "-k", "5"], 2, ["no query"]),
    (["snapshots", "diff", "a.txt", "other.txt"], 2, ["no query"]),
    (["snapshots", "holes", "other.txt", "--qrels", "qrels.txt"], 2, ["no query"]),
    (["judge", "agreement", "qrels.txt", "llm.csv"], 2, ["no result is graded in both"]),
    (["judgments", "agreement", "one_rater.csv"], 2, ["two raters"]),
    (["judgments", "aggregate", "empty.txt"], 2, ["no judgments"]),
    # a store or database named to be read is never created
    (["snapshots", "list", "--store", "nostore.sqlite"], 2, ["nostore.sqlite"]),
    (["user", "token", "ann", "--db", "nodb.sqlite"], 2, ["nodb.sqlite"]),
    # messages a user can act on
    (["judgments", "aggregate", "judge_name.csv"], 2, ["judge_name"]),
    (["check", "qrels.txt", "other.txt", "--baseline", "other.txt", "-m", "P@5"], 2,
     ["--allow-no-overlap"]),
    (["similarity", "a.txt", "b.txt", "a.txt"], 2, ["similarity"]),
    (["serve", "--host", "999.1.1.1", "--db", "app.sqlite"], 2, ["999.1.1.1"]),
]

NOT_CREATED = {"snapshots list": "nostore.sqlite", "user token": "nodb.sqlite",
               "serve --host": "app.sqlite"}


@pytest.mark.parametrize(("argv", "code", "fragments"), CASES,
                         ids=[" ".join(c[0])[:80] for c in CASES])
def test_case(work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
              argv: list[str], code: int, fragments: list[str]) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    before = _state(work)
    got = main(argv)
    out, err = capsys.readouterr()
    assert got == code, err
    assert "Traceback" not in err and "Traceback" not in out
    first = err.splitlines()[0] if err else ""
    for fragment in fragments:
        assert fragment in first, err
    after = _state(work)
    assert {k: after.get(k) for k in before} == before
    for prefix, name in NOT_CREATED.items():
        if " ".join(argv).startswith(prefix):
            assert not (work / name).exists()
    if code == 4:  # nothing half-written beside the target
        assert not [p for p in work.rglob("*") if ".tmp" in p.name]


def test_similarity_usage_is_its_own(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["similarity", "a.txt", "b.txt", "a.txt"]) == 2
    assert "usage: rankscope similarity" in capsys.readouterr().err


def test_serve_says_nothing_before_failing(work: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("fastapi")
    assert main(["serve", "--host", "999.1.1.1", "--db", "app.sqlite"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "serving" not in err


def test_stdin_that_is_not_trec_names_the_format_option(work: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "rankscope", "evaluate", "-", "a.txt", "-m",
                           "P@5"], input="query_id,doc_id,grade\nQ1,d1,1\n",
                          capture_output=True, text=True, timeout=120, cwd=work, check=False)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "line 1: expected 4 fields" in done.stderr and "(--qrels-format)" in done.stderr


FULL = [
    ["evaluate", "qrels.txt", "a.txt", "-m", "P@5"],
    ["compare", "qrels.txt", "a.txt", "b.txt", "-m", "P@5"],
    ["check", "qrels.txt", "a.txt", "--baseline", "a.txt", "-m", "P@5"],
    ["trec_eval", "qrels.txt", "a.txt"],
    ["fuse", "a.txt", "b.txt"],
]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("argv", FULL, ids=[a[0] for a in FULL])
def test_stdout_on_a_full_disk_is_4_in_one_line(work: Path, argv: list[str]) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "rankscope", *argv], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=120, cwd=work,
                              check=False)
    assert done.returncode == 4, done.stderr
    # one line for the problem, the last (compare may warn first about 2 queries)
    # (trec_eval speaks as trec_eval: "trec_eval: cannot write ...")
    errors = [line for line in done.stderr.splitlines()
              if ": error: " in line or line.startswith("trec_eval: ")]
    assert errors == [done.stderr.splitlines()[-1]] and "Traceback" not in done.stderr
    assert "No space left on device" in errors[0]


def test_a_failed_write_leaves_the_old_output(work: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # the result goes to a temporary file renamed at the end: a failure half-way leaves
    # the earlier output as it was
    (work / "out.txt").write_text("earlier\n")
    import rankscope.data._io as io_module

    real = io_module.os.replace

    def fail(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(io_module.os, "replace", fail)
    assert main(["evaluate", "qrels.txt", "a.txt", "-m", "P@5", "-o", "out.txt"]) == 4
    monkeypatch.setattr(io_module.os, "replace", real)
    assert (work / "out.txt").read_text() == "earlier\n"
    assert sorted(p.name for p in work.iterdir() if p.name.startswith("out")) == ["out.txt"]


def test_csv_floats_at_the_precision_asked(work: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    # P@10 of Q1 in a run of 3 relevant among 10: 0.3 (0.1 * 3 = 0.30000000000000004)
    (work / "q3.txt").write_text("".join(f"Q 0 d{i} 1\n" for i in range(3)))
    (work / "r3.txt").write_text("".join(f"Q Q0 d{i} {i + 1} {10 - i} r\n"
                                         for i in range(10)))
    assert main(["evaluate", "q3.txt", "r3.txt", "-m", "P@10", "-f", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("r,P@10,0.3,")
    assert main(["evaluate", "q3.txt", "r3.txt", "-m", "P@10", "-f", "csv", "--digits",
                 "2"]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("r,P@10,0.30,")


def test_the_evaluated_line_goes_to_stderr(work: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "qrels.txt", "a.txt", "-m", "P@5"]) == 0
    out, err = capsys.readouterr()
    assert "evaluated" not in out and "run 'a': 2 queries evaluated" in err


def test_compare_s_evaluated_lines_go_to_stderr(work: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    # the table on stdout, one "run ... evaluated" line per run on stderr (as evaluate)
    assert main(["compare", "qrels.txt", "a.txt", "b.txt", "-m", "P@5"]) == 0
    out, err = capsys.readouterr()
    assert "evaluated" not in out and "P@5" in out and "test: paired t-test" in out
    assert [line for line in err.splitlines() if "evaluated" in line] == [
        line for line in err.splitlines() if line.startswith("rankscope compare: run ")]
    assert "rankscope compare: run 'a': 2 queries evaluated" in err
    assert "rankscope compare: run 'b': 2 queries evaluated" in err
    # a document for people (markdown) keeps them among its notes; JSON has no such line
    assert main(["compare", "qrels.txt", "a.txt", "b.txt", "-m", "P@5", "-f", "markdown"]) == 0
    out, err = capsys.readouterr()
    assert "- run 'a': 2 queries evaluated" in out and "evaluated" not in err


def test_implicit_grades_are_whole_numbers_on_an_integral_scale(
        work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # two sessions of q1: d1 clicked in both at position 1 -> a CTR of 1.0, the top grade
    (work / "clicks.csv").write_text(
        "session_id,query_id,doc_id,position,clicked\n"
        "s1,q1,d1,1,1\ns1,q1,d2,2,0\ns2,q1,d1,1,1\ns2,q1,d2,2,0\n")
    # (CSV: "3.0" before issue 27; the grade is the scale's, 0-3, whole)
    assert main(["judgments", "implicit", "clicks.csv", "--model", "ctr", "--min-impressions",
                 "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("query_id,doc_id,rater,grade,")
    assert [line.split(",")[3] for line in lines[1:]] == ["3", "0"], lines


def test_json_output_is_json(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["judgments", "agreement", "grades.csv", "--scale", "binary", "-f", "json",
                 "-o", "agreement.json"]) == 0
    assert json.loads((work / "agreement.json").read_text())["n_raters"] == 2



@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's embedded engine and a store holding one snapshot of two queries."""
    root = tmp_path_factory.mktemp("store")
    cwd = os.getcwd()
    os.chdir(root)
    try:
        assert main(["demo", "init", "demo"]) == 0
        lines = (root / "demo" / "queries.tsv").read_text().splitlines()
        (root / "two.tsv").write_text("\n".join(lines[:2]) + "\n")
        (root / "other.txt").write_text(OTHER)
        assert main(["snapshot", "demo/endpoint.toml", "two.tsv", "--store", "store.sqlite",
                     "--depth", "5", "--quiet"]) == 0
    finally:
        os.chdir(cwd)
    return root


STORE_CASES = [
    (["snapshot", "demo/endpoint.toml", "two.tsv", "-o", "missing/run.txt"], 4, ["missing"]),
    (["snapshots", "export", "1", "--store", "store.sqlite", "-o", "missing/x.txt"], 4,
     ["missing"]),
    (["snapshots", "export", "1", "--store", "store.sqlite", "-o", "store.sqlite"], 2,
     ["store.sqlite"]),
    (["snapshots", "holes", "1", "--store", "store.sqlite", "--qrels", "demo/qrels.txt", "-o",
      "holes.txt"], 2, ["holes.txt", ".csv"]),
    (["snapshots", "diff", "1", "other.txt", "--store", "store.sqlite"], 2, ["no query"]),
    (["snapshots", "show", "9", "--store", "store.sqlite"], 2, ["9"]),
]


@pytest.mark.parametrize(("argv", "code", "fragments"), STORE_CASES,
                         ids=[" ".join(c[0])[:80] for c in STORE_CASES])
def test_store_case(store_dir: Path, capsys: pytest.CaptureFixture[str],
                    monkeypatch: pytest.MonkeyPatch, argv: list[str], code: int,
                    fragments: list[str]) -> None:
    monkeypatch.chdir(store_dir)
    before = _state(store_dir)
    got = main(argv)
    out, err = capsys.readouterr()
    assert out == ""
    assert got == code, err
    assert "Traceback" not in err
    first = err.splitlines()[0]
    assert ": error: " in first
    for fragment in fragments:
        assert fragment in first, err
    assert _state(store_dir) == before  # nothing written, the store untouched
