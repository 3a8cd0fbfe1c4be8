"""Frozen evaluations (issue 26 §1): numbers computed on the grades as of the freeze, which
grades given later anywhere in the project, regrades, undos and adjudications never move."""

from __future__ import annotations

import json

import pytest

from rankscope.cli.main import main
from rankscope.errors import ConflictError
from rankscope.services import (
    assignment,
    campaign_runs,
    campaigns,
    comparison,
    dashboards,
    exchange,
    freezing,
    grading,
    task_views,
)
from rankscope.services.grading import GradeInput

from .conftest import make_world

METRICS = ("nDCG@5", "P@5")


def _evaluation(store, w, name, endpoint, *, wanted=1, baseline=None, depth=5):
    spec = campaigns.EvaluationSpec(
        name=name, query_set_id=w.query_set.id, endpoint_id=endpoint.id, grades_wanted=wanted,
        depth=depth, metrics=list(METRICS), baseline_id=baseline, annotation=f"{name} note")
    ev = campaigns.create_evaluation(store, w.curator, w.project.id, spec)
    campaign_runs.run_evaluation(store, w.curator, ev.id, boundary=w.boundary)
    return ev


def _grade_all(store, judge, evaluation_id, value_of):
    """``judge`` grades every task offered, ``value_of(task)`` giving the grade."""
    n = 0
    for t in assignment.next_tasks(store, judge, evaluation_id, n=500):
        grading.submit_grade(store, judge, GradeInput(t.task_id, value_of(t)))
        n += 1
    return n


def _csv_rows(body: bytes) -> list[dict[str, str]]:
    import csv
    import io

    lines = [line for line in body.decode().splitlines(keepends=True)
             if not line.startswith("#")]
    return list(csv.DictReader(io.StringIO("".join(lines))))


def _cli(capsys, tmp_path, store, w, evaluation_id, *extra_runs):
    """What `rankscope evaluate` prints on the evaluation's grades and run exports."""
    grades, run = tmp_path / f"g{evaluation_id}.csv", tmp_path / f"r{evaluation_id}.txt"
    grades.write_bytes(exchange.export(store, w.curator, evaluation_id, "grades.csv")[0])
    run.write_bytes(exchange.export(store, w.curator, evaluation_id, "run.txt")[0])
    argv = ["evaluate", str(grades), str(run), *map(str, extra_runs), "--format", "json", "-q",
            "--scale", "graded", "--strategy", "graded=mean", "--unjudged", "null"]
    for metric in METRICS:
        argv += ["-m", metric]
    capsys.readouterr()
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_grades_given_in_a_third_evaluation_do_not_move_the_first_or_the_comparison(
        store, collection, capsys, tmp_path):
    """Issue 26's case: grades given in evaluation #3 moved #1's nDCG and the #2-vs-#1
    comparison. #1 and #2 are graded completely (one grade wanted: frozen when complete),
    then two more judges grade the same results in #3 (three wanted) far from the first
    judge's grades: today's numbers move, the frozen ones do not."""
    w = make_world(store, collection, grades_wanted=1, metrics=METRICS)
    first = w.evaluation
    second = _evaluation(store, w, "tuned", w.tuned, baseline=first.id)
    _grade_all(store, w.judge, first.id, lambda t: 3 if t.position <= 2 else 1)
    _grade_all(store, w.judge, second.id, lambda t: 3 if t.position <= 2 else 1)
    seen = dashboards.metrics_report(store, w.curator, first.id)
    seen_cmp = comparison.compare_with_baseline(store, w.curator, second.id)
    assert seen["frozen"]["frozen"] and seen["frozen"]["how"] == "complete"
    assert seen["frozen"]["grades"] == seen["n_grades"] > 0
    third = _evaluation(store, w, "third", w.endpoint, wanted=3)
    # the others grade top results low and the rest high: the means of three move
    for judge in (w.judge2, w.judge3):
        assert _grade_all(store, judge, third.id, lambda t: 0 if t.position <= 2 else 3) > 0
    after = dashboards.metrics_report(store, w.curator, first.id)
    after_cmp = comparison.compare_with_baseline(store, w.curator, second.id)
    assert after["mean"] == seen["mean"] and after["per_query"] == seen["per_query"]
    assert [(r["metric"], r["delta"], r["p_value"]) for r in after_cmp["metrics"]] == [
        (r["metric"], r["delta"], r["p_value"]) for r in seen_cmp["metrics"]]
    # today's numbers did move, and the page says by how much
    today = dashboards.metrics_report(store, w.curator, first.id, today=True)
    assert today["mean"]["nDCG@5"] != pytest.approx(seen["mean"]["nDCG@5"])
    moved = {(d["evaluation_id"], d["metric"]): d for d in after["drift"]}
    d = moved[(first.id, "nDCG@5")]
    assert d["frozen"] == seen["mean"]["nDCG@5"] and d["today"] == today["mean"]["nDCG@5"]
    assert d["delta"] == pytest.approx(today["mean"]["nDCG@5"] - seen["mean"]["nDCG@5"])
    assert after_cmp["drift"], "the comparison says today's grades would change it"
    # history: #1's point is its frozen numbers with its note; #3, complete too (jay's grades
    # and the two others'), is frozen as well
    rows = {r["evaluation_id"]: r for r in comparison.history(store, w.curator, first.id)}
    assert rows[first.id]["mean"] == seen["mean"] and not rows[first.id]["provisional"]
    assert rows[first.id]["annotation"] == "v1"
    assert rows[third.id]["frozen"]["how"] == "complete" and not rows[third.id]["provisional"]
    # #2's own page says its baseline's frozen numbers would move, and by how much
    base_moved = {d["metric"]: d for d in dashboards.metrics_report(
        store, w.curator, second.id)["drift"] if d["role"] == "baseline"}
    assert base_moved["nDCG@5"]["evaluation_id"] == first.id
    assert base_moved["nDCG@5"]["delta"] == pytest.approx(d["delta"])
    # the frozen numbers are what `rankscope evaluate` prints on the exports (later grades
    # are in grades.csv, flagged, and not read as grades)
    printed = _cli(capsys, tmp_path, store, w, first.id)
    for metric, value in printed["mean"].items():
        assert after["mean"][metric] == pytest.approx(value, abs=1e-12)


def test_a_later_regrade_undo_or_adjudication_does_not_move_an_explicit_freeze(store, collection):
    """Two grades wanted, only q01 graded: the curator freezes; then a regrade, an undo that
    brings the earlier grade back, and an adjudication: the frozen values stay."""
    w = make_world(store, collection, grades_wanted=2, metrics=METRICS)
    ev = w.evaluation
    tasks = task_views.query_results(store, w.curator, ev.id, "q01")
    for t in tasks:
        grading.submit_grade(store, w.judge, GradeInput(t.task_id, 1))
    grading.submit_grade(store, w.judge, GradeInput(tasks[0].task_id, 3))  # a regrade
    state = freezing.freeze_evaluation(store, w.curator, ev.id)
    assert state["frozen"] and state["how"] == "explicit" and state["grades"] == len(tasks)
    with pytest.raises(ConflictError, match="frozen already"):
        freezing.freeze_evaluation(store, w.curator, ev.id)
    frozen = dashboards.metrics_report(store, w.curator, ev.id)
    # q01's top result was graded 3 when frozen: the undo below brings 1 back today
    grading.undo_last(store, w.judge, ev.id)
    for t in tasks[1:]:
        grading.submit_grade(store, w.judge2, GradeInput(t.task_id, 3))
    from rankscope.services import adjudication
    adjudication.adjudicate(store, w.curator, ev.id, "q01", tasks[1].doc_id, 0, note="off topic")
    later = dashboards.metrics_report(store, w.curator, ev.id)
    assert later["mean"] == frozen["mean"] and later["per_query"] == frozen["per_query"]
    today = dashboards.metrics_report(store, w.curator, ev.id, today=True)
    assert today["per_query"]["q01"] != frozen["per_query"]["q01"]
    drill = dashboards.drill_down(store, w.curator, ev.id, "q01")
    assert drill["hits"][0]["grade"] == 3  # as frozen, not the 1 the undo brought back


def test_freezing_needs_a_curator_and_a_run(store, world):
    from rankscope.errors import ForbiddenError, NotFoundError

    with pytest.raises(ForbiddenError):
        freezing.freeze_evaluation(store, world.judge, world.evaluation.id)
    with pytest.raises(NotFoundError):
        freezing.freeze_evaluation(store, world.outsider, world.evaluation.id)
    draft = campaigns.create_evaluation(store, world.curator, world.project.id,
                                          campaigns.EvaluationSpec(
                                              name="draft", query_set_id=world.query_set.id,
                                              endpoint_id=world.endpoint.id))
    with pytest.raises(ConflictError, match="run it"):
        freezing.freeze_evaluation(store, world.curator, draft.id)


def test_the_pages_say_as_of_when_and_show_both_and_refuse_bad_input(store, collection):
    """The metrics page of a frozen evaluation says "As of <time>, N grades", offers
    today's numbers side by side, and shows how far grades given since would move them; the
    history draws unfrozen evaluations as provisional; a second freeze is a 409, a bad
    scope a 4xx, never a 500."""
    from fastapi.testclient import TestClient

    from rankscope.app.factory import create_app

    from .conftest import PASSWORD

    w = make_world(store, collection, grades_wanted=1, metrics=METRICS)
    ev = w.evaluation
    later = _evaluation(store, w, "later", w.endpoint, wanted=3)  # stays incomplete
    n = _grade_all(store, w.judge, ev.id, lambda t: 0 if t.position == 1 else 3)
    app = create_app(store, w.data)
    client = TestClient(app, follow_redirects=False)
    assert client.post("/login", data={"name": w.curator.name,
                                       "password": PASSWORD}).status_code == 303
    page = client.get(f"/evaluations/{ev.id}/metrics")
    assert page.status_code == 200
    at = dashboards.metrics_report(store, w.curator, ev.id)["frozen"]["at"]
    assert f"As of {at[:19].replace('T', ' ')} UTC, {n} grades" in page.text
    _grade_all(store, w.judge2, later.id, lambda t: 3)
    page = client.get(f"/evaluations/{ev.id}/metrics?today=1")
    assert 'id="today"' in page.text and "would move nDCG@5 from" in page.text
    history = client.get(f"/evaluations/{later.id}/history")
    assert history.status_code == 200
    assert history.text.count('class="point provisional"') == len(METRICS)  # "later" only
    assert client.post(f"/evaluations/{ev.id}/freeze").status_code == 409
    assert client.get(f"/evaluations/{ev.id}/disagreements?scope=all").status_code in (400, 422)
    project = client.get(f"/evaluations/{ev.id}/agreement/project")
    assert project.status_code == 200 and "Project-wide view" in project.text


def test_complete_grading_freezes_as_of_the_moment_it_was_complete(store, collection, tmp_path):
    """One grade wanted. jay grades every result: 0 the first of each query, 3 the rest, so
    P@5 = 4/5 per query (binary: 0 -> 0, 3 -> 1). Before anyone opens #1, kim grades the
    same results 3 in another evaluation (two wanted): on today's grades the first result
    of each query is a 0-vs-3 tie on the binary scale and drops out, P@5 = 4/4. #1 froze
    when jay's last grade completed it, so it shows 0.8, its counted grades are jay's and
    its frozen time is that last grade's time (read from the export)."""
    w = make_world(store, collection, grades_wanted=1, metrics=METRICS)
    ev = w.evaluation
    n = _grade_all(store, w.judge, ev.id, lambda t: 0 if t.position == 1 else 3)
    other = _evaluation(store, w, "other", w.endpoint, wanted=2)
    assert _grade_all(store, w.judge2, other.id, lambda t: 3) == n
    report = dashboards.metrics_report(store, w.curator, ev.id)
    assert report["frozen"]["how"] == "complete" and report["n_grades"] == n
    full = [q for q, o in report["over"]["P@5"]["per_query"].items() if o["positions"] == 5]
    assert full and all(report["per_query"][q]["P@5"] == pytest.approx(0.8) for q in full)
    assert all(report["today"]["per_query"][q]["P@5"] == pytest.approx(1.0) for q in full)
    rows = _csv_rows(exchange.export(store, w.curator, ev.id, "grades.csv")[0])
    assert {r["rater"] for r in rows if r["grade_status"] == "counted"} == {"jay"}
    assert {r["grade_status"] for r in rows if r["rater"] == "kim"} == {"after freeze"}
    last = max(r["given_at"] for r in rows if r["rater"] == "jay")
    assert report["frozen"]["at"] == last


def test_the_first_moment_of_completion_counts_even_after_an_undo(store, collection):
    """Complete, then the last grade undone (incomplete again), then graded again: the
    evaluation froze as of the first completion, with the undone grade in its numbers."""
    from rankscope.services.grade_history import completion_time
    from rankscope.store.models_app import Evaluation, Grade

    w = make_world(store, collection, grades_wanted=1, metrics=METRICS)
    ev = w.evaluation
    tasks = assignment.next_tasks(store, w.judge, ev.id, n=500)
    for t in tasks:
        grading.submit_grade(store, w.judge, GradeInput(t.task_id, 1))
    grading.undo_last(store, w.judge, ev.id)
    grading.submit_grade(store, w.judge, GradeInput(tasks[-1].task_id, 2))
    with store.read() as session:
        times = sorted(g.created_at for g in session.query(Grade).filter(
            Grade.evaluation_id == ev.id))
        when = completion_time(session, session.get(Evaluation, ev.id))
    # grades: len(tasks) first ones (the last of them undone), then the regrade
    assert len(times) == len(tasks) + 1 and when == times[len(tasks) - 1]


def test_an_llm_judge_let_count_after_the_freeze_does_not_enter_the_frozen_numbers(
        store, collection):
    """jay grades q01's results 3 (P@5 = 1 there); an LLM judge kept apart grades them all 0.
    Frozen, then the curator lets the judge count: on today's grades q01's results are
    3-vs-0 ties on the binary scale and P@5 has no value there; frozen, P@5 stays 1."""
    from rankscope.store.models import utcnow
    from rankscope.store.models_app import Grade, Rater, Task

    w = make_world(store, collection, grades_wanted=1, metrics=METRICS)
    ev = w.evaluation
    tasks = task_views.query_results(store, w.curator, ev.id, "q01")
    for t in tasks:
        grading.submit_grade(store, w.judge, GradeInput(t.task_id, 3))

    def add_llm(session):
        rater = Rater(name="llm:model", kind="llm", counts=False, created_at=utcnow())
        session.add(rater)
        session.flush()
        for t in tasks:
            item = session.get(Task, t.task_id).item_id
            session.add(Grade(item_id=item, rater_id=rater.id, scale="graded", value=0.0,
                              source="llm", evaluation_id=ev.id, active=True,
                              created_at=utcnow()))
        return rater.id

    llm = store.write(add_llm)
    freezing.freeze_evaluation(store, w.curator, ev.id)
    frozen = dashboards.metrics_report(store, w.curator, ev.id)
    assert frozen["per_query"]["q01"]["P@5"] == pytest.approx(1.0)

    def let_count(session):
        session.get(Rater, llm).counts = True

    store.write(let_count)
    later = dashboards.metrics_report(store, w.curator, ev.id)
    assert later["per_query"] == frozen["per_query"] and later["n_grades"] == frozen["n_grades"]
    assert later["today"]["per_query"]["q01"]["P@5"] is None


def test_a_frozen_evaluation_is_not_run_again_and_says_it_is_frozen(store, world):
    ev = world.evaluation
    assert campaigns.get_evaluation(store, world.curator, ev.id).frozen_at is None
    state = freezing.freeze_evaluation(store, world.curator, ev.id)
    view = campaigns.get_evaluation(store, world.curator, ev.id)
    assert view.frozen_at == state["at"] and view.frozen_how == "explicit"
    with pytest.raises(ConflictError, match="frozen"):
        campaign_runs.run_evaluation(store, world.curator, ev.id, boundary=world.boundary)


def test_a_frozen_evaluations_holes_are_todays(store, collection):
    """Frozen with nothing graded; then q01's top result is graded: the coverage stays as
    frozen (0 graded), the holes (what to grade next) no longer list that result."""
    w = make_world(store, collection, grades_wanted=1, metrics=METRICS)
    ev = w.evaluation
    freezing.freeze_evaluation(store, w.curator, ev.id)
    first = task_views.query_results(store, w.curator, ev.id, "q01")[0]
    grading.submit_grade(store, w.judge, GradeInput(first.task_id, 2))
    report = dashboards.coverage_report(store, w.curator, ev.id)
    assert report["graded"] == 0
    assert (first.query_id, first.doc_id) not in {(h["query_id"], h["doc_id"])
                                                  for h in report["holes"]}
    assert len(report["holes"]) == report["positions"] - 1
    rows = _csv_rows(exchange.export(store, w.curator, ev.id, "holes.csv")[0])
    assert len(rows) == len(report["holes"])
    assert (first.query_id, first.doc_id) not in {(r["query_id"], r["doc_id"]) for r in rows}
