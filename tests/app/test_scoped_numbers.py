"""Issue 26 §2, §3 and §5: agreement and disagreements about the evaluation's own results,
what each metric left out, and grades exports that are a complete record."""

from __future__ import annotations

import csv
import io
import json

import pytest

from rankscope.errors import OptionError
from rankscope.services import (
    adjudication,
    campaign_runs,
    campaigns,
    dashboards,
    exchange,
    grading,
    task_views,
)
from rankscope.services.grading import GradeInput

from .conftest import make_world


def _q01(store, w, evaluation_id):
    return task_views.query_results(store, w.curator, evaluation_id, "q01")


def test_agreement_and_disagreements_are_about_the_evaluations_own_results(store, collection):
    """Evaluation #1 (depth 4): jay 1 1 0 0, kim 1 0 0 0 on q01's top 4 -> Cohen's kappa
    (3/4 - 1/2) / (1 - 1/2) = 1/2 over 4 results, one disagreement (rank 2). A deeper
    evaluation (depth 5) of the same query adds q01's fifth result, jay 1 vs kim 0: it is
    not #1's (deeper than its depth), so #1's pages do not show it; the project-wide view
    does: 5 results, p_o = 3/5, p_e = 3/5 * 1/5 + 2/5 * 4/5 = 11/25,
    kappa = (15/25 - 11/25) / (14/25) = 2/7, two disagreements."""
    w = make_world(store, collection, scale="binary", grades_wanted=2, metrics=("P@4",),
                   depth=4)
    tasks = _q01(store, w, w.evaluation.id)
    assert [t.position for t in tasks] == [1, 2, 3, 4]
    for task, a, b in zip(tasks, (1, 1, 0, 0), (1, 0, 0, 0), strict=True):
        grading.submit_grade(store, w.judge, GradeInput(task.task_id, a))
        grading.submit_grade(store, w.judge2, GradeInput(task.task_id, b))
    deeper = campaigns.create_evaluation(store, w.curator, w.project.id,
                                           campaigns.EvaluationSpec(
                                               name="deeper", query_set_id=w.query_set.id,
                                               endpoint_id=w.endpoint.id, scale="binary",
                                               grades_wanted=2, metrics=["P@5"], depth=5))
    campaign_runs.run_evaluation(store, w.curator, deeper.id, boundary=w.boundary)
    fifth = next(t for t in _q01(store, w, deeper.id) if t.position == 5)
    grading.submit_grade(store, w.judge, GradeInput(fifth.task_id, 1))
    grading.submit_grade(store, w.judge2, GradeInput(fifth.task_id, 0))

    own = adjudication.agreement_report(store, w.curator, w.evaluation.id)
    assert own["scope"] == "evaluation" and own["n_items"] == 4
    assert own["cohen_kappa_pairs"][0]["kappa"] == pytest.approx(0.5)
    wide = adjudication.agreement_report(store, w.curator, w.evaluation.id, scope="project")
    assert wide["scope"] == "project" and wide["n_items"] == 5
    assert wide["cohen_kappa_pairs"][0]["kappa"] == pytest.approx(2 / 7)
    assert [(d["query_id"], d["doc_id"]) for d in adjudication.disagreements(
        store, w.curator, w.evaluation.id)] == [("q01", tasks[1].doc_id)]
    assert {d["doc_id"] for d in adjudication.disagreements(
        store, w.curator, w.evaluation.id, scope="project")} == {tasks[1].doc_id, fifth.doc_id}
    with pytest.raises(OptionError, match="scope"):
        adjudication.agreement_report(store, w.curator, w.evaluation.id, scope="all")


def test_each_metric_says_over_how_many_of_its_k_results_it_was_computed(store, collection):
    """Graded scale, mean rule, two graders; P@5 goes through graded -> binary (0 -> 0,
    1..3 -> 1) and aggregates there. q01's top 5 (jay, kim): (2, 2) -> binary (1, 1) = 1;
    (0, 2) -> (0, 1), a tie; (0, 0) -> 0; (0, 3) -> (0, 1), a tie; jay can't tell the
    fifth. P@5 rests on ranks 1 and 3: "over 2 of 5", 2 ties, 1 can't tell, and
    P@5 = 1 / 2 under the null rules. nDCG@5 on the graded scale: means 2, 1, 0, 1.5
    -> over 4 of 5, the can't-tell one left out."""
    w = make_world(store, collection, scale="graded", grades_wanted=2, strategy="mean",
                   metrics=("nDCG@5", "P@5"), depth=5)
    tasks = _q01(store, w, w.evaluation.id)
    grades = [(2, 2), (0, 2), (0, 0), (0, 3)]
    for task, (a, b) in zip(tasks, grades, strict=False):
        grading.submit_grade(store, w.judge, GradeInput(task.task_id, a))
        grading.submit_grade(store, w.judge2, GradeInput(task.task_id, b))
    grading.submit_grade(store, w.judge, GradeInput(tasks[4].task_id, None, "page in Latin"))
    report = dashboards.metrics_report(store, w.curator, w.evaluation.id)
    assert report["per_query"]["q01"]["P@5"] == pytest.approx(0.5)
    p5, ndcg = report["over"]["P@5"], report["over"]["nDCG@5"]
    assert p5["k"] == 5 and p5["per_query"]["q01"] == {
        "positions": 5, "used": 2, "tied": 2, "cant_tell": 1, "ungraded": 0}
    assert {(d["rank"], d["why"]) for d in p5["dropped"] if d["query_id"] == "q01"} == {
        (2, "tied"), (4, "tied"), (5, "cant_tell")}
    assert ndcg["per_query"]["q01"] == {"positions": 5, "used": 4, "tied": 0, "cant_tell": 1,
                                        "ungraded": 0}
    # another query, nothing graded: over 0 of its results, every one ungraded
    other = next(q for q in p5["per_query"] if q != "q01")
    row = p5["per_query"][other]
    assert row["used"] == 0 and row["ungraded"] == row["positions"] > 0
    # the page says it next to coverage and in q01's row, and links the results left out
    from fastapi.testclient import TestClient

    from rankscope.app.factory import create_app

    from .conftest import PASSWORD

    client = TestClient(create_app(store, w.data), follow_redirects=False)
    assert client.post("/login", data={"name": w.curator.name,
                                       "password": PASSWORD}).status_code == 303
    page = client.get(f"/evaluations/{w.evaluation.id}/metrics").text
    assert f"P@5 over 2 of {p5['positions']} (2 ties, 1 can&#39;t tell)" in page
    assert "P@5 computed over 2 of 5 results" in page  # q01's cell
    # q01's results left out: 3 of P@5's (ranks 2, 4, 5) and 1 of nDCG@5's (rank 5)
    assert page.count(f'href="/evaluations/{w.evaluation.id}/snapshot/q01">q01</a> rank') == 4


def _rows(body: bytes, sep: str) -> list[dict[str, str]]:
    text = body.decode()
    lines = [line for line in text.splitlines(keepends=True) if not line.startswith("#")]
    return list(csv.DictReader(io.StringIO("".join(lines)), delimiter=sep))


def test_grades_exports_are_a_complete_record(store, collection, tmp_path):
    """jay grades q01's first result 1 then regrades it 2 with an explanation that looks
    like a formula, can't tell the second ("no page"); kim grades the first 0 and the
    second 3; the curator adjudicates the first to 3 with a note; kim grades the third 1
    and undoes it. Every one of those rows is exported, flagged; only the current ones are
    counted, and the grades reader of rankscope reads only those."""
    from rankscope.judgments.table import Judgments

    w = make_world(store, collection, grades_wanted=2, metrics=("P@5",))
    ev = w.evaluation
    t1, t2, t3 = _q01(store, w, ev.id)[:3]
    grading.submit_grade(store, w.judge, GradeInput(t1.task_id, 1))
    grading.submit_grade(store, w.judge, GradeInput(t1.task_id, 2, explanation="=1+1 says it"))
    grading.submit_grade(store, w.judge, GradeInput(t2.task_id, None, "no page"))
    grading.submit_grade(store, w.judge2, GradeInput(t1.task_id, 0))
    grading.submit_grade(store, w.judge2, GradeInput(t2.task_id, 3))
    adjudication.adjudicate(store, w.curator, ev.id, "q01", t1.doc_id, 3, note="spec sheet")
    grading.submit_grade(store, w.judge2, GradeInput(t3.task_id, 1))
    grading.undo_last(store, w.judge2, ev.id)

    csv_body = exchange.export(store, w.curator, ev.id, "grades.csv")[0]
    tsv_body = exchange.export(store, w.curator, ev.id, "grades.tsv")[0]
    jsonl = [json.loads(line) for line in
             exchange.export(store, w.curator, ev.id, "grades.jsonl")[0].decode().splitlines()]
    rows = _rows(csv_body, ",")
    assert list(rows[0]) == list(exchange.GRADE_COLUMNS)
    assert _rows(tsv_body, "\t") == rows
    seen = {(r["doc_id"], r["rater"], r["grade"], r["grade_status"]) for r in rows}
    assert seen == {
        (t1.doc_id, "jay", "1.0", "superseded"), (t1.doc_id, "jay", "2.0", "superseded"),
        (t1.doc_id, "kim", "0.0", "superseded"), (t1.doc_id, "cora", "3.0", "counted"),
        (t2.doc_id, "jay", "", "counted"), (t2.doc_id, "kim", "3.0", "counted"),
        (t3.doc_id, "kim", "1.0", "retracted")}
    by = {(r["doc_id"], r["rater"], r["grade"]): r for r in rows}
    regrade, first = by[(t1.doc_id, "jay", "2.0")], by[(t1.doc_id, "jay", "1.0")]
    settled = by[(t1.doc_id, "cora", "3.0")]
    assert first["superseded_by"] == regrade["grade_id"]
    assert regrade["superseded_by"] == settled["grade_id"]
    assert regrade["explanation"] == "'=1+1 says it"  # neutralised for spreadsheets
    assert settled["source"] == "adjudication" and settled["adjudication_note"] == "spec sheet"
    assert by[(t2.doc_id, "jay", "")]["reason"] == "no page"
    assert by[(t3.doc_id, "kim", "1.0")]["retracted_at"]
    assert all(r["given_at"] and r["rater_kind"] == "person" for r in rows)
    assert len(jsonl) == len(rows)
    j_regrade = next(r for r in jsonl if r["grade_id"] == int(regrade["grade_id"]))
    assert j_regrade["explanation"] == "=1+1 says it" and j_regrade["scale"] == "graded"
    # read back: only the counted rows are grades
    path = tmp_path / "grades.csv"
    path.write_bytes(csv_body)
    read = Judgments.read(path, scale="graded").frame.sort("doc_id", "rater")
    assert sorted(read.select("doc_id", "rater", "grade").rows(), key=str) == sorted(
        [(t1.doc_id, "cora", 3.0), (t2.doc_id, "jay", None), (t2.doc_id, "kim", 3.0)], key=str)


def test_a_grades_file_with_an_unknown_status_is_refused_with_its_line(tmp_path):
    from rankscope.errors import ParseError
    from rankscope.judgments.table import Judgments

    path = tmp_path / "g.csv"
    path.write_text("query_id,doc_id,rater,grade,grade_status\nq1,d1,a,1,counted\n"
                    "q1,d2,a,0,\nq1,d3,a,2,maybe\n")
    with pytest.raises(ParseError) as info:
        Judgments.read(path, scale="graded")
    assert info.value.line == 4 and info.value.value == "maybe"
