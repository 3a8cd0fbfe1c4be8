"""Raters' grades work wherever qrels do: compare, report, coverage, and the exported qrels.

The data are examples/judgments/grades.csv (three raters, graded 0-3) and two
runs over it. By hand, with the platform's graded -> binary rule (0 -> 0,
1..3 -> 1) and a majority vote per result:

- q1: d1 (1, 1, 1) -> 1; d2 (1, 0) tie -> null; d3 (1, 1, -) -> 1; d4 (0, 0, 1) -> 0
- q2: d5 (1, 1) -> 1; d6 (0, 0) -> 0; d7 (1, 1) -> 1
- q3: d8 has no grade at all -> null

bm25 ranks q1: d1 d2 d3 d9 d4, q2: d6 d5 d10 d7 d11, q3: d8 d12; rev ranks
each query in the opposite order.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import rankscope
from rankscope.cli.main import main
from rankscope.errors import RankscopeWarning
from rankscope.judgments import Judgments, coverage, evaluate_judgments

ROOT = Path(__file__).resolve().parents[2]
GRADES = str(ROOT / "examples" / "judgments" / "grades.csv")
RUN = str(ROOT / "examples" / "judgments" / "run.txt")
FEW = pytest.mark.filterwarnings(
    "ignore:too few paired queries:rankscope.errors.RankscopeWarning")


@pytest.fixture
def rev(tmp_path: Path) -> str:
    lines = Path(RUN).read_text().splitlines()
    path = tmp_path / "rev.txt"
    path.write_text("".join(
        " ".join([*line.split()[:4], str(-float(line.split()[4])), "rev"]) + "\n"
        for line in lines))
    return str(path)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- compare, report, coverage ------------------------------------------------------------


@FEW
def test_compare_cli_reads_raters_grades(rev: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "compare", GRADES, RUN, rev, "--scale", "graded",
                          "--unjudged", "null", "-m", "P@5", "-m", "P@1", "-f", "json")
    assert code == 0, err
    data = json.loads(out)
    # P@5 (null rules): q1 graded d1 d3 d4 -> 2/3; q2 graded d6 d5 d7 -> 2/3; q3 null.
    assert data["runs"]["bm25"]["mean"]["P@5"] == pytest.approx(2 / 3)
    assert data["runs"]["rev"]["mean"]["P@5"] == pytest.approx(2 / 3)
    # P@1: bm25 q1 d1 -> 1, q2 d6 -> 0; rev q1 d4 -> 0, q2 d11 ungraded -> null.
    # Paired queries: P@5 q1, q2; P@1 only q1 (bm25 1, rev 0).
    assert data["n_queries"] == {"P@5": 2, "P@1": 1}
    assert data["runs"]["bm25"]["mean"]["P@1"] == 1.0
    assert data["runs"]["rev"]["mean"]["P@1"] == 0.0


def test_compare_python_takes_judgments(rev: str) -> None:
    judgments = Judgments.read(GRADES, scale="graded")
    with pytest.warns(RankscopeWarning, match=r"too few paired queries .*P@5: 2"):
        result = rankscope.compare(judgments, {"bm25": RUN, "rev": rev}, ["P@5"],
                                   unjudged="null")
    assert result.means["bm25"]["P@5"] == pytest.approx(2 / 3)
    c = result.comparison("P@5", "rev")
    assert c.delta == pytest.approx(0.0) and (c.wins, c.ties, c.losses) == (0, 2, 0)
    # The same numbers as evaluating each run against the judgments.
    alone = evaluate_judgments(judgments, rev, ["P@5"], unjudged="null")
    assert result.means["rev"]["P@5"] == alone["P@5"]


@FEW
def test_report_cli_reads_raters_grades(rev: str, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "report.html"
    code, _, err = _run(capsys, "report", GRADES, RUN, rev, "--scale", "graded", "--unjudged",
                        "null", "-m", "P@5", "-m", "nDCG@5", "-o", str(page))
    assert code == 0, err
    html = page.read_text()
    assert "0.6667" in html  # P@5 of both runs
    # interpolated precision has no definition with unjudged documents null: the curve is
    # drawn with them non-relevant, and its caption says so
    assert "unjudged documents count as non-relevant on this curve" in html


def test_coverage_null_rule_counts_tied_votes_as_ungraded(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Default: graded = at least one grade: q1 d1 d2 d3 d4 (4 of 5), q2 d6 d5 d7 (3 of 5),
    # q3 d8 none (0 of 2). Null rule: an aggregated grade. With the graded scale's mean
    # nothing ties; with a majority vote of the 0-3 grades q1's d2 (1 vs 0) and q2's d5
    # (2 vs 1) tie and are ungraded (d1 3,3,2 -> 3; d4 0,0,1 -> 0; d6 0,0; d7 3,3).
    judgments = Judgments.read(GRADES, scale="graded")
    assert coverage(judgments, RUN, 5).per_query.get_column("graded").to_list() == [4, 3, 0]
    mean = coverage(judgments, RUN, 5, unjudged="null")
    assert mean.per_query.get_column("graded").to_list() == [4, 3, 0]
    vote = coverage(judgments, RUN, 5, unjudged="null", strategy="majority")
    assert vote.per_query.get_column("graded").to_list() == [3, 2, 0]
    code, out, _ = _run(capsys, "coverage", GRADES, RUN, "-k", "5", "--scale", "graded",
                        "--strategy", "majority", "--unjudged", "null", "-q", "-f", "json")
    assert code == 0
    per_query = json.loads(out)["per_query"]
    assert [per_query[q]["graded"] for q in ("q1", "q2", "q3")] == [3, 2, 0]


# -- aggregate, then evaluate = evaluate the raters' file -----------------------------------


@pytest.mark.parametrize("unjudged", ["nonrelevant", "null"])
def test_exported_qrels_give_the_raters_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], unjudged: str,
) -> None:
    exported = tmp_path / "binary.csv"
    code, _, err = _run(capsys, "judgments", "aggregate", GRADES, "--scale", "graded",
                        "-m", "P@5", "-m", "RR@5", "-o", str(exported))
    assert code == 0
    assert "aggregated on the binary scale" in err
    # the export keeps the tied and ungraded results as empty grades
    assert "q1,d2,\n" in exported.read_text() and "q3,d8,\n" in exported.read_text()
    argv = ["-m", "P@5", "-m", "RR@5", "--unjudged", unjudged, "-q", "-f", "json"]
    code, direct, _ = _run(capsys, "evaluate", GRADES, RUN, "--scale", "graded", *argv)
    assert code == 0
    code, via_file, _ = _run(capsys, "evaluate", str(exported), RUN, *argv)
    assert code == 0
    a, b = json.loads(direct), json.loads(via_file)
    assert a["mean"] == b["mean"] and a["n_queries"] == b["n_queries"]
    for q in ("q1", "q2"):
        assert a["per_query"][q] == b["per_query"][q]
    # and the numbers are the hand-computed ones
    expected = {"nonrelevant": 2 / 5, "null": 2 / 3}[unjudged]
    assert a["per_query"]["q1"]["P@5"] == pytest.approx(expected)
    assert a["per_query"]["q2"]["P@5"] == pytest.approx(expected)


def test_graded_export_gives_the_graded_metrics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exported = tmp_path / "graded.csv"
    assert main(["judgments", "aggregate", GRADES, "--scale", "graded", "-o",
                 str(exported)]) == 0
    capsys.readouterr()
    direct = evaluate_judgments(Judgments.read(GRADES, scale="graded"), RUN, ["nDCG@5"],
                                unjudged="null", per_query=True)
    with pytest.warns(RankscopeWarning, match=r"only in .*run.txt \(q3\)"):
        via_file = rankscope.evaluate(str(exported), RUN, ["nDCG@5"], unjudged="null")
    assert via_file["nDCG@5"] == pytest.approx(direct["nDCG@5"])


def test_metrics_on_two_scales_cannot_share_one_export(
    capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, "judgments", "aggregate", GRADES, "--scale", "graded",
                          "-m", "P@5", "-m", "nDCG@5")
    assert code == 2 and out == ""
    assert "different scales (binary: P@5; graded: nDCG@5); aggregate once per scale" in err


def test_trec_export_says_what_it_leaves_out(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "binary.qrels"
    code, _, err = _run(capsys, "judgments", "aggregate", GRADES, "--scale", "graded", "-m",
                        "P@5", "-o", str(target), "-f", "trec")
    assert code == 0
    # q1 d2 (tie) and q3 d8 (no grade) have no aggregated grade
    assert "2 results without a grade (ungraded, or a tied vote) left out" in err
    assert "q1 0 d2" not in target.read_text() and "q1 0 d1 1" in target.read_text()


# -- every mean says over how many queries ---------------------------------------------------


def test_counts_per_metric_in_table_csv_and_json(rev: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # rev, null rules: P@1 q1 d4 -> 0, q2 d11 ungraded -> null, q3 d12 -> null: 1 query;
    # P@5 q1 2/3, q2 2/3, q3 null: 2 queries.
    argv = ["evaluate", GRADES, rev, "--scale", "graded", "--unjudged", "null",
            "-m", "P@1", "-m", "P@5"]
    _, out, _ = _run(capsys, *argv, "-f", "json")
    assert json.loads(out)["n_queries"] == {"P@1": 1, "P@5": 2}
    _, out, _ = _run(capsys, *argv, "-f", "csv")
    # one query: std 0 and no interval; two equal values 2/3: std 0, interval [2/3, 2/3]
    # (15 significant digits: 2/3 -> 0.666666666666667)
    assert out.splitlines() == ["run,metric,value,n_queries,std,ci_low,ci_high",
                                "rev,P@1,0.0,1,0.0,,",
                                "rev,P@5,0.666666666666667,2,0.0,0.666666666666667,"
                                "0.666666666666667"]
    _, out, _ = _run(capsys, *argv)
    lines = out.splitlines()
    assert lines[0].split() == ["metric", "value", "n_queries", "std", "ci95"]
    assert lines[2].split() == ["P@1", "0.0000", "1", "0.0000", "-"]
    assert lines[3].split() == ["P@5", "0.6667", "2", "0.0000", "[0.6667,", "0.6667]"]
    _, out, _ = _run(capsys, *argv, "-q", "-f", "csv")
    assert out.splitlines()[-4] == "rev,,n_queries,1,2"  # a summary row: no query
