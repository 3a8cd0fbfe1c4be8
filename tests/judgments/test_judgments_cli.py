"""The command line: evaluate over judgments, judgments aggregate|agreement|transform, coverage.

The example files are the ones docs/judgments.md walks through; every number
asserted here is derived by hand in the comments.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from rankscope.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "judgments"
GRADES = str(EXAMPLES / "grades.csv")
RUN = str(EXAMPLES / "run.txt")
L2 = math.log2


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _err(g: float, top: float = 3.0) -> float:
    return (2 ** g - 1) / 2 ** top


def test_evaluate_judgments_csv_json_shape(capsys):
    code, out, _ = _run(capsys, "evaluate", GRADES, RUN, "--scale", "graded", "--unjudged",
                        "null", "-m", "P@5", "-m", "nDCG@5", "-m", "ERR@5", "-q", "-f", "json")
    assert code == 0
    data = json.loads(out)
    # one run: its keys at the top (as before) and under "runs", keyed by its name
    assert set(data) == {"mean", "n_queries", "std", "interval", "confidence", "per_query",
                         "info", "runs"}
    assert data["runs"] == {"bm25": {k: v for k, v in data.items() if k != "runs"}}
    # q3 has no value under the null rules: every mean is over the other two queries
    assert data["n_queries"] == {"P@5": 2, "nDCG@5": 2, "ERR@5": 2}
    pq = data["per_query"]
    # P@5 on binary (graded -> binary 0 -> 0, 1..3 -> 1, majority vote):
    # q1 ranks d1 (3,3,2 -> 1), d2 (1,0 -> tie, null), d3 (2,2 -> 1), d9 (ungraded),
    # d4 (0,0,1 -> 0): 2 relevant of 3 graded.
    assert pq["q1"]["P@5"] == pytest.approx(2 / 3)
    # q2 ranks d6 (0,0 -> 0), d5 (2,1 -> 1), d10, d7 (3,3 -> 1), d11: 2 of 3.
    assert pq["q2"]["P@5"] == pytest.approx(2 / 3)
    # q3: its only result is ungraded by both raters -> null everywhere.
    assert pq["q3"] == {"P@5": None, "nDCG@5": None, "ERR@5": None}
    # nDCG@5 on the graded means: q1 gains 8/3, 1/2, 2, 0, 1/3; ideal 8/3, 2, 1/2, 1/3, 0.
    dcg = 8 / 3 + 0.5 / L2(3) + 2 / L2(4) + (1 / 3) / L2(6)
    ideal = 8 / 3 + 2 / L2(3) + 0.5 / L2(4) + (1 / 3) / L2(5)
    assert pq["q1"]["nDCG@5"] == pytest.approx(dcg / ideal)
    # q2 gains 0, 1.5, 0, 3, 0; ideal 3, 1.5
    dcg2 = 1.5 / L2(3) + 3 / L2(5)
    assert pq["q2"]["nDCG@5"] == pytest.approx(dcg2 / (3 + 1.5 / L2(3)))
    # ERR@5 with g_max = 3 (the graded scale's top, though no mean reaches it in q2)
    r = [_err(8 / 3), _err(0.5), _err(2), 0.0, _err(1 / 3)]
    want, reach = 0.0, 1.0
    for i, ri in enumerate(r, start=1):
        want += reach * ri / i
        reach *= 1 - ri
    assert pq["q1"]["ERR@5"] == pytest.approx(want)
    # means over the queries with a value (q1, q2)
    assert data["mean"]["P@5"] == pytest.approx(2 / 3)
    assert data["mean"]["nDCG@5"] == pytest.approx((dcg / ideal + dcg2 / (3 + 1.5 / L2(3))) / 2)


def test_evaluate_detects_judgments_by_rater_column(capsys):
    # Without --scale, a rater column still means judgments, which then need a scale.
    code, _, err = _run(capsys, "evaluate", GRADES, RUN, "-m", "P@5")
    assert code == 2 and "declare the judgments' scale" in err
    code, out, _ = _run(capsys, "evaluate", GRADES, RUN, "--strategy", "max", "-m", "P@5",
                        "--unjudged", "null", "-f", "json")
    # max grade per result, P uses grade >= 1: q1 d1 3, d2 1, d3 2, d4 1 -> 4 of 4;
    # q2: d6 0, d5 2, d7 3 -> 2 of 3
    assert json.loads(out)["mean"]["P@5"] == pytest.approx((1 + 2 / 3) / 2)


def test_evaluate_plain_qrels_unchanged(tmp_path, capsys):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d3 0\n")
    code, out, _ = _run(capsys, "evaluate", str(qrels), RUN, "-m", "P@5", "-f", "json")
    assert code == 0 and json.loads(out)["mean"]["P@5"] == pytest.approx(1 / 5)
    code, out, _ = _run(capsys, "evaluate", str(qrels), RUN, "-m", "P@5", "-f", "json",
                        "--unjudged", "null")
    assert json.loads(out)["mean"]["P@5"] == pytest.approx(1 / 2)  # d1 of graded d1, d3


def test_evaluate_transform_option_and_seed_spellings(capsys):
    code, out, _ = _run(capsys, "evaluate", GRADES, RUN, "--scale", "graded", "--unjudged",
                        "null", "--transform", "graded->binary:1=0", "-m", "P@5",
                        "-m", "ERR-0.18@5", "-q", "-f", "json")
    assert code == 0
    pq = json.loads(out)["per_query"]
    # graded 1 now counts as 0: q1 d2 (1,0 -> 0,0 -> 0), d4 (0,0,0 -> 0): 2 of 4
    assert pq["q1"]["P@5"] == pytest.approx(2 / 4)
    r = [_err(0.0), _err(1.5), 0.0, _err(3.0), 0.0]  # q2 graded means 0, 1.5, -, 3, -
    want, reach = 0.0, 1.0
    for i, ri in enumerate(r, start=1):
        want += reach * ri / i ** 0.18
        reach *= 1 - ri
    assert pq["q2"]["ERR-0.18@5"] == pytest.approx(want)


def test_grade_outside_scale_is_an_error_with_file_and_line(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("query_id,doc_id,rater,grade\nq1,d1,ann,1\nq1,d2,ann,2\n")
    code, _, err = _run(capsys, "evaluate", str(path), RUN, "--scale", "binary", "-m", "P@5")
    assert code == 2
    assert f"{path}, line 3" in err and "binary (0-1)" in err and "'2'" in err


def test_judgments_aggregate(capsys, tmp_path):
    code, out, _ = _run(capsys, "judgments", "aggregate", GRADES, "--scale", "graded")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "query_id,doc_id,grade"
    assert "q1,d2,0.5" in lines and "q3,d8," in lines  # mean of 1, 0; d8 never graded
    out_path = tmp_path / "agg.csv"
    code, _, _ = _run(capsys, "judgments", "aggregate", GRADES, "--scale", "graded",
                      "--strategy", "median", "--details", "-o", str(out_path))
    rows = out_path.read_text().splitlines()
    assert rows[0] == "query_id,doc_id,grade,n_grades,n_raters,tie"
    assert "q1,d1,3.0,3,3,false" in rows  # median of 3, 3, 2


def test_judgments_aggregate_several_trec_files(tmp_path, capsys):
    a, b, c = (tmp_path / f"{n}.txt" for n in "abc")
    a.write_text("q 0 x 1\nq 0 y 0\n")
    b.write_text("q 0 x 1\nq 0 y 1\n")
    c.write_text("q 0 x 0\n")
    code, out, _ = _run(capsys, "judgments", "aggregate", str(a), str(b), str(c),
                        "--scale", "binary")
    # x: 1, 1, 0 -> 1; y: 0, 1 -> tie -> empty
    # grades on an integral scale are written as whole numbers (issue 27)
    assert code == 0 and out.splitlines()[1:] == ["q,x,1", "q,y,"]


def test_judgments_agreement(capsys):
    code, out, _ = _run(capsys, "judgments", "agreement", GRADES, "--scale", "graded",
                        "-f", "json", "--per-query")
    assert code == 0
    data = json.loads(out)
    # tie rate of majority voting on the graded grades as given (strict mode):
    # q1 d1 3,3,2 no; d2 1,0 tie; d3 2,2 no; d4 0,0,1 no; q2 d5 2,1 tie; d6 no; d7 no
    assert data["majority_tie_rate"] == pytest.approx(2 / 7)
    # percent agreement: pairs d1 3 (1 agree), d2 1 (0), d3 1 (1), d4 3 (1), d5 1 (0),
    # d6 1 (1), d7 1 (1) -> 5 / 11
    assert data["percent_agreement"] == pytest.approx(5 / 11)
    assert set(data["per_query"]) == {"q1", "q2", "q3"}
    code, out, _ = _run(capsys, "judgments", "agreement", GRADES, "--scale", "graded")
    assert "Krippendorff's alpha, ordinal" in out and "ann / bob" in out


def test_judgments_transform(capsys, tmp_path):
    out_path = tmp_path / "binary.csv"
    code, _, _ = _run(capsys, "judgments", "transform", GRADES, "--scale", "graded",
                      "--to", "binary", "-o", str(out_path))
    assert code == 0
    lines = out_path.read_text().splitlines()
    assert lines[1:4] == ["q1,d1,ann,1", "q1,d1,bob,1", "q1,d1,cem,1"]
    assert "q1,d3,cem," in lines  # an empty grade stays empty
    code, _, err = _run(capsys, "judgments", "transform", GRADES, "--scale", "graded",
                        "--to", "1-5")
    assert code == 2 and "no transformer rules" in err


def test_coverage_cli(capsys, tmp_path):
    code, out, _ = _run(capsys, "coverage", GRADES, RUN, "-k", "5", "-f", "json", "-q")
    assert code == 0
    data = json.loads(out)
    # q1: d1 d2 d3 d9 d4 -> 4 graded of 5; q2: d6 d5 d10 d7 d11 -> 3 of 5; q3: d8 d12 -> 0 of 2
    assert data["per_query"]["q1"] == {"positions": 5, "graded": 4, "coverage": 0.8}
    assert data["per_query"]["q3"] == {"positions": 2, "graded": 0, "coverage": 0.0}
    assert (data["positions"], data["graded"]) == (12, 7)
    batch = tmp_path / "next.csv"
    code, out, _ = _run(capsys, "coverage", GRADES, RUN, "-k", "3", "--ungraded", str(batch),
                        "--ungraded-rater", "dee")
    assert batch.read_text().splitlines() == [
        "query_id,doc_id,rank,rater,grade", "q2,d10,3,dee,", "q3,d8,1,dee,", "q3,d12,2,dee,"]
    assert "all" in out and "coverage@3" in out
    # with --min-grades 3 only d1 and d4 of q1 count in the top 5
    code, out, _ = _run(capsys, "coverage", GRADES, RUN, "-k", "5", "--min-grades", "3",
                        "-f", "json")
    assert json.loads(out)["graded"] == 2


def test_coverage_cli_with_plain_qrels(tmp_path, capsys):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d6 0\n")
    code, out, _ = _run(capsys, "coverage", str(qrels), RUN, "-k", "2", "-f", "csv")
    # top 2: q1 d1 d2 (1 graded), q2 d6 d5 (1), q3 d8 d12 (0) -> 2 of 6
    # the pooled row in its own row (issue 27), at 15 significant digits
    assert code == 0 and out.splitlines()[-1] == ",overall,6,2,0.333333333333333"
