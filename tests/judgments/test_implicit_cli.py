"""``rankscope judgments implicit``: the command, its exit codes, and its output used everywhere.

examples/judgments/clicks.csv is the small log test_click_models.py works out by
hand (HAND there); its COEC values are derived in that file's comments.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

from rankscope.cli.exit_codes import EXIT_OUTPUT, EXIT_USAGE
from rankscope.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
CLICKS = str(ROOT / "examples" / "judgments" / "clicks.csv")
DEMO_CLICKS = ROOT / "src" / "rankscope" / "demo_data" / "clicks.csv.gz"
DEMO_QRELS = ROOT / "src" / "rankscope" / "demo_data" / "qrels.txt"


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_coec_judgments_on_stdout(capsys):
    code, out, err = _run(capsys, "judgments", "implicit", CLICKS, "--model", "coec",
                          "--min-impressions", "2", "--grades", "thresholds:0.5,1,1.5")
    assert code == 0
    rows = [line.split(",") for line in out.splitlines()]
    assert rows[0] == ["query_id", "doc_id", "rater", "grade", "coec", "impressions", "clicks"]
    got = {(r[0], r[1]): (r[2], float(r[3]), float(r[4]), int(r[5]), int(r[6]))
           for r in rows[1:]}
    # COEC by hand (test_click_models.test_coec_by_hand): x 2/1.8, y 1/1.2, z 0, u 1/1.2,
    # v 2/1.2; grades: how many of 0.5, 1, 1.5 each exceeds
    expected = {("q1", "x"): (2 / 1.8, 2, 3, 2), ("q1", "y"): (1 / 1.2, 1, 3, 1),
                ("q1", "z"): (0.0, 0, 3, 0), ("q2", "u"): (1 / 1.2, 1, 2, 1),
                ("q2", "v"): (2 / 1.2, 3, 2, 2)}
    assert set(got) == set(expected)
    for key, (value, grade, shown, clicked) in expected.items():
        rater, g, v, n, c = got[key]
        assert rater == "implicit:coec" and g == grade and math.isclose(v, value)
        assert (n, c) == (shown, clicked)
    assert "5 judgments (implicit:coec; graded scale, cut points 0.5, 1, 1.5) from 5 result " \
           "pages of 2 queries" in err


def test_min_impressions_default_and_the_note(capsys):
    # every pair of the small log is shown 2 or 3 times: the default 10 leaves nothing
    code, _, err = _run(capsys, "judgments", "implicit", CLICKS, "--model", "ctr")
    assert code == EXIT_USAGE and "no pair is shown at least 10 times" in err
    code, out, err = _run(capsys, "judgments", "implicit", CLICKS, "--model", "ctr",
                          "--min-impressions", "3", "--grades", "raw")
    assert code == 0 and len(out.splitlines()) == 4  # header + x, y, z
    assert "note: 2 pairs shown fewer than 3 times left out" in err


def test_pbm_writes_its_prior_and_says_how_em_ended(tmp_path, capsys):
    out_file, prior = tmp_path / "pbm.jsonl", tmp_path / "prior.csv"
    code, _, err = _run(capsys, "judgments", "implicit", CLICKS, "--model", "pbm",
                        "--min-impressions", "1", "-o", str(out_file), "--prior", str(prior))
    assert code == 0 and "EM " in err and "converged" in err
    records = [json.loads(x) for x in out_file.read_text().splitlines()]
    assert {r["rater"] for r in records} == {"implicit:pbm"} and len(records) == 5
    assert all(0 <= r["probability"] <= 1 for r in records)
    assert pl.read_csv(prior).columns == ["position", "value", "impressions"]


@pytest.mark.parametrize(("argv", "message"), [
    (["--model", "ctr", "--grades", "percentiles"], "unknown grade mapping"),
    (["--model", "ctr", "--prior", "p.csv"], "ctr has no position prior"),
    (["--model", "coec", "--depth", "0"], "argument --depth: must be a whole number from 1"),
    (["--model", "coec", "--click-action", "click"], "--click-action applies to UBI logs"),
])
def test_bad_options_exit_2_and_write_nothing(tmp_path, capsys, argv, message):
    out_file = tmp_path / "out.csv"
    code, _, err = _run(capsys, "judgments", "implicit", CLICKS, "--min-impressions", "1",
                        *argv, "-o", str(out_file))
    assert code == EXIT_USAGE and message in err, err
    assert not out_file.exists()


def test_a_bad_record_exits_2_naming_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("session_id,query_id,doc_id,position,clicked\ns1,q,d,1,yes\n")
    code, _, err = _run(capsys, "judgments", "implicit", str(bad), "--model", "ctr")
    assert code == EXIT_USAGE
    assert err.strip() == (f"rankscope judgments implicit: error: {bad}, line 2: clicked must "
                           "be 0 or "
                           "1: 'yes'")


def test_an_output_that_cannot_be_written_exits_4(tmp_path, capsys):
    code, _, err = _run(capsys, "judgments", "implicit", CLICKS, "--model", "ctr",
                        "--min-impressions", "1", "-o", str(tmp_path / "no" / "dir.csv"))
    assert code == EXIT_OUTPUT and "cannot write" in err


def test_ubi_files_in_either_order_with_a_query_set(tmp_path, capsys):
    queries = tmp_path / "ubi_queries.jsonl"
    events = tmp_path / "ubi_events.json"
    queries.write_text("".join(json.dumps(q) + "\n" for q in [
        {"query_id": "u1", "user_query": "red shoes", "query_response_hit_ids": ["A", "B"]},
        {"query_id": "u2", "user_query": "red shoes", "query_response_hit_ids": ["B", "A"]},
        {"query_id": "u3", "user_query": "hats", "query_response_hit_ids": ["H"]}]))
    events.write_text(json.dumps([
        {"action_name": "click", "query_id": "u1",
         "event_attributes": {"object": {"object_id": "B"}, "position": {"ordinal": 2}}},
        {"action_name": "purchase", "query_id": "u2",
         "event_attributes": {"object": {"object_id": "B"}, "position": {"ordinal": 1}}}]))
    query_set = tmp_path / "queries.tsv"
    query_set.write_text("q1\tred shoes\n")
    outputs = []
    for order in ((str(events), str(queries)), (str(queries), str(events))):
        code, out, err = _run(capsys, "judgments", "implicit", *order, "--model", "ctr",
                              "--min-impressions", "1", "--grades", "raw", "--queries",
                              str(query_set), "--purchase-weight", "3")
        assert code == 0, err
        outputs.append(out)
    assert outputs[0] == outputs[1]
    rows = {(r[0], r[1]): float(r[4]) for r in (x.split(",") for x in outputs[0].splitlines()[1:])}
    # B: clicked on u1 (weight 1) and purchased on u2 (weight 3): 4 / 4; A: 0 of weight 2
    assert rows == {("q1", "A"): 0.0, ("q1", "B"): 1.0}
    assert "1 searches of 1 query texts not in the query set left out" in err
    code, _, err = _run(capsys, "judgments", "implicit", str(events), str(events),
                        "--model", "ctr")
    assert code == EXIT_USAGE and "one UBI events file" in err


def test_implicit_judgments_are_read_everywhere_judgments_are(tmp_path, capsys):
    implicit = tmp_path / "implicit.csv"
    assert main(["judgments", "implicit", CLICKS, "--model", "coec", "--min-impressions", "2",
                 "--grades", "thresholds:0.5,1,1.5", "-o", str(implicit)]) == 0
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 x 1 3 r\nq1 Q0 y 2 2 r\nq1 Q0 z 3 1 r\nq2 Q0 v 1 2 r\nq2 Q0 u 2 1 r\n")
    capsys.readouterr()
    # evaluate reads the rater column: judgments on the graded scale, aggregated (one rater)
    code, out, err = _run(capsys, "evaluate", str(implicit), str(run), "--scale", "graded",
                          "-m", "nDCG@3", "-q", "-f", "json")
    assert code == 0, err
    per_query = json.loads(out)["per_query"]
    # q1 ranks x (2), y (1), z (0): the ideal order; q2 ranks v (3), u (1): ideal too
    assert per_query["q1"]["nDCG@3"] == pytest.approx(1.0)
    assert per_query["q2"]["nDCG@3"] == pytest.approx(1.0)
    # agreement with another rater's grades: one pair of raters, its kappa
    human = tmp_path / "human.txt"
    human.write_text("q1 0 x 2\nq1 0 y 1\nq1 0 z 0\nq2 0 u 1\nq2 0 v 3\n")
    code, out, err = _run(capsys, "judgments", "agreement", str(human), str(implicit),
                          "--scale", "graded")
    assert code == 0, err
    assert "5 graded results, 2 raters" in out and "percent agreement" in out
    assert "human / implicit:coec: 1.0000 (5 results)" in out  # the same grades: kappa 1


@pytest.mark.skipif(not DEMO_CLICKS.is_file(), reason="the demo click log is not installed")
def test_demo_clicks_give_judgments_that_agree_with_the_human_grades(tmp_path, capsys):
    # The demo log was simulated from the human grades (scripts/make_demo_clicks.py: a grade
    # g attracts with 0.05, 0.2, 0.5, 0.8 and satisfies with 0.1, 0.3, 0.6, 0.9), so the
    # estimates of well-observed pairs must follow the grades: Kendall's tau-b between SDBN's
    # relevance and the grade over pairs shown at least 50 times. Grades are 4 levels with
    # many ties, which caps tau-b well below 1; the simulated relevances a*s of neighbouring
    # grades (0.005, 0.06, 0.3, 0.72) are far apart next to the standard error at 50
    # impressions (<= 0.07), so most pairs must be in order: 0.6.
    stats = pytest.importorskip("scipy.stats")
    out = tmp_path / "implicit.csv"
    code, _, err = _run(capsys, "judgments", "implicit", str(DEMO_CLICKS), "--model", "sdbn",
                        "--min-impressions", "50", "-o", str(out))
    assert code == 0, err
    judged = pl.read_csv(out, schema_overrides={"query_id": pl.String, "doc_id": pl.String})
    grades = pl.read_csv(DEMO_QRELS, separator=" ", has_header=False,
                         new_columns=["query_id", "it", "doc_id", "human"],
                         schema_overrides={"query_id": pl.String, "doc_id": pl.String})
    both = judged.join(grades, on=["query_id", "doc_id"])
    assert both.height == judged.height  # every shown pair is graded in the demo
    tau = stats.kendalltau(both.get_column("probability"), both.get_column("human")).statistic
    assert tau >= 0.6, f"SDBN vs human grades, tau-b {tau:.3f} over {both.height} pairs"
