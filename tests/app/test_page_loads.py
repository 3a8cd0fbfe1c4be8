"""What the project page and the metrics page read per view (speed where a person waits):
each evaluation's data once per page view, a headline computed once per state of its
data and never shown for a state that has passed, and the numbers unchanged (the page's
means are what ``rankscope evaluate`` prints on the evaluation's exports)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from rankscope.cli.main import main
from rankscope.services import (
    adjudication,
    assignment,
    campaign_data,
    campaign_runs,
    campaigns,
    dashboards,
    exchange,
    freezing,
    grading,
    overview,
)
from rankscope.services.grading import GradeInput

from .conftest import make_world, signed_in

METRICS = ("nDCG@5", "P@5", "RR@5")


@pytest.fixture
def loads(monkeypatch):
    """Every read of an evaluation's data (:func:`campaign_data.load_data`), by
    (evaluation, frozen numbers or today's), counted as the pages' services call it."""
    seen: Counter[tuple[int, bool]] = Counter()
    real = campaign_data.load_data

    def counted(session, ev, *, today=False, **rest):
        seen[(ev.id, today or ev.frozen_at is None)] += 1
        return real(session, ev, today=today, **rest)

    monkeypatch.setattr(dashboards, "load_data", counted)
    return seen


def _grade_all(store, judge, evaluation_id, value_of):
    tasks = assignment.next_tasks(store, judge, evaluation_id, n=500)
    for t in tasks:
        grading.submit_grade(store, judge, GradeInput(t.task_id, value_of(t)))
    return tasks


def _app(store, w, tmp_path):
    from rankscope.app.factory import create_app

    return signed_in(create_app(store, tmp_path / "appdata", boundary=w.boundary), "cora")


def test_the_metrics_page_reads_a_provisional_evaluation_once(store, collection, tmp_path,
                                                              loads):
    # before: its metrics and its coverage each read it (2 reads per view)
    w = make_world(store, collection)
    _grade_all(store, w.judge, w.evaluation.id, lambda t: 3 if t.position <= 2 else 1)
    cora = _app(store, w, tmp_path)
    loads.clear()
    assert cora.get(f"/evaluations/{w.evaluation.id}/metrics").status_code == 200
    assert dict(loads) == {(w.evaluation.id, True): 1}


def test_the_metrics_page_of_a_frozen_evaluation_reads_each_set_of_numbers_once(
        store, collection, tmp_path, loads):
    # before: the frozen numbers and today's were each read twice (4 reads per view), and a
    # frozen baseline's twice more; now today's grades once per evaluation shown, and the
    # frozen ones once in the process
    w = make_world(store, collection, grades_wanted=1)
    first = w.evaluation
    _grade_all(store, w.judge, first.id, lambda t: 3 if t.position <= 2 else 1)
    spec = campaigns.EvaluationSpec(name="tuned", query_set_id=w.query_set.id,
                                    endpoint_id=w.tuned.id, grades_wanted=1, depth=5,
                                    metrics=list(METRICS), baseline_id=first.id)
    second = campaigns.create_evaluation(store, w.curator, w.project.id, spec)
    campaign_runs.run_evaluation(store, w.curator, second.id, boundary=w.boundary)
    _grade_all(store, w.judge, second.id, lambda t: 2)
    freezing.freeze_evaluation(store, w.curator, first.id)  # complete: frozen already
    freezing.freeze_evaluation(store, w.curator, second.id)
    cora = _app(store, w, tmp_path)
    loads.clear()
    assert cora.get(f"/evaluations/{first.id}/metrics").status_code == 200
    assert dict(loads) == {(first.id, False): 1, (first.id, True): 1}
    loads.clear()
    page = cora.get(f"/evaluations/{second.id}/metrics")
    assert page.status_code == 200
    # the baseline's frozen grades were read by the view of its own page just before
    assert dict(loads) == {(second.id, False): 1, (second.id, True): 1, (first.id, True): 1}
    # a second view reads today's grades again (they move), not the frozen ones (they never
    # do: kept in the process after the first read)
    loads.clear()
    again = cora.get(f"/evaluations/{second.id}/metrics")
    assert again.status_code == 200
    assert dict(loads) == {(second.id, True): 1, (first.id, True): 1}
    assert again.text == page.text


def test_frozen_numbers_heavier_than_the_budget_are_read_on_each_view(
        store, collection, tmp_path, loads, monkeypatch):
    """A frozen evaluation's data weighing more than the budget
    (:data:`dashboards.KEEP_FROZEN_BYTES`) are not kept: each view reads them again and
    shows the same page. Their weight is polars' estimate of their grades, run and hits:
    one byte short of it, read on each view; with exactly it, the second view reads only
    today's grades."""
    from rankscope.services.kept import KeptByStamp

    w = make_world(store, collection, grades_wanted=1)
    ev = w.evaluation.id
    _grade_all(store, w.judge, ev, lambda t: 3 if t.position <= 2 else 1)
    freezing.freeze_evaluation(store, w.curator, ev)
    data = dashboards.load(store, w.curator, ev)[1]
    weight = sum(f.estimated_size() for f in (data.judgments.frame, data.advisory.frame,
                                              data.run.frame, data.hits))
    cora = _app(store, w, tmp_path)
    for budget, frozen_reads in ((weight - 1, [1, 1]), (weight, [1, 0])):
        monkeypatch.setattr(dashboards, "_FROZEN", KeptByStamp(  # nothing kept yet
            dashboards.KEEP_FROZEN, budget=budget, size=dashboards._data_size))
        pages, reads = [], []
        for _ in range(2):
            loads.clear()
            page = cora.get(f"/evaluations/{ev}/metrics")
            assert page.status_code == 200
            pages.append(page.text)
            reads.append(loads[(ev, False)])
        assert pages[0] == pages[1]
        assert reads == frozen_reads


def test_the_pages_means_are_rankscope_evaluate_on_the_exports(store, collection, tmp_path,
                                                               capsys):
    """The metrics page's means (and the project page's headline) against ``rankscope
    evaluate`` run on the evaluation's exported grades and run: an independent path (the
    TREC text written, read back by the CLI's readers, the library's evaluation)."""
    w = make_world(store, collection, metrics=METRICS)
    values = {1: 3, 2: 0, 3: 2, 4: 1, 5: 3}
    _grade_all(store, w.judge, w.evaluation.id, lambda t: values[t.position])
    _grade_all(store, w.judge2, w.evaluation.id, lambda t: (values[t.position] + 1) % 4)
    report = dashboards.metrics_report(store, w.curator, w.evaluation.id)
    grades, run = tmp_path / "grades.csv", tmp_path / "run.txt"
    grades.write_bytes(exchange.export(store, w.curator, w.evaluation.id, "grades.csv")[0])
    run.write_bytes(exchange.export(store, w.curator, w.evaluation.id, "run.txt")[0])
    argv = ["evaluate", str(grades), str(run), "--format", "json", "-q", "--scale", "graded",
            "--strategy", "graded=mean", "--unjudged", "null"]
    for metric in METRICS:
        argv += ["-m", metric]
    capsys.readouterr()
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)["mean"]
    assert set(printed) == set(METRICS)
    for metric, value in printed.items():
        assert report["mean"][metric] == pytest.approx(value, abs=1e-12)
    row = next(r for r in overview.project_overview(store, w.curator, w.project.id)
               if r.evaluation.id == w.evaluation.id)
    assert row.headline == "nDCG@5"
    assert row.headline_value == pytest.approx(printed["nDCG@5"], abs=1e-12)


def test_the_headline_follows_every_change_and_is_computed_once_per_state(store, collection,
                                                                         loads):
    """Each change kind (a grade, an undo, a regrade, an adjudication, a run, a freeze)
    shows on the project page's next view, equal to the metrics page's number (computed
    apart); with no change, the headline is not computed again (before: once per view)."""
    w = make_world(store, collection, grades_wanted=2, metrics=METRICS)
    ev = w.evaluation.id
    tasks = _grade_all(store, w.judge, ev, lambda t: 3 if t.position == 3 else 1)
    top = next(t for t in tasks if t.position == 1)

    def view():
        loads.clear()
        row = next(r for r in overview.project_overview(store, w.curator, w.project.id)
                   if r.evaluation.id == ev)
        computed = sum(loads.values())
        truth = dashboards.metrics_report(store, w.curator, ev)["mean"]["nDCG@5"]
        assert row.headline == "nDCG@5"
        assert row.headline_value == truth, "the project page shows the metrics page's number"
        return row.headline_value, computed

    first, computed = view()
    assert computed == 1
    assert view() == (first, 0), "nothing changed: the headline kept, not computed again"

    # a grade (a second judge's 0 on a top result): the mean moves
    grading.submit_grade(store, w.judge2, GradeInput(top.task_id, 0))
    graded, computed = view()
    assert computed == 1 and graded != first
    # an undo of it: back
    assert grading.undo_last(store, w.judge2, ev) == top.task_id
    undone, computed = view()
    assert computed == 1 and undone == first
    # a regrade (the first judge changes a top grade from 1 to 0)
    grading.submit_grade(store, w.judge, GradeInput(top.task_id, 0))
    regraded, computed = view()
    assert computed == 1 and regraded != undone
    # an adjudication (the curator settles it at 3)
    adjudication.adjudicate(store, w.curator, ev, top.query_id, top.doc_id, 3)
    settled, computed = view()
    assert computed == 1 and settled != regraded
    assert view() == (settled, 0)
    # a run again: a new snapshot (the same engine answers the same: the same number,
    # computed again on it)
    campaign_runs.run_evaluation(store, w.curator, ev, boundary=w.boundary)
    rerun, computed = view()
    assert computed == 1 and rerun == settled
    # a freeze: computed once more, as frozen; then later grades do not move it nor make it
    # be computed again, though today's numbers move
    freezing.freeze_evaluation(store, w.curator, ev)
    frozen, computed = view()
    assert computed == 1 and frozen == rerun
    other = next(t for t in tasks if t.position == 2)
    grading.submit_grade(store, w.judge2, GradeInput(other.task_id, 3))
    assert view() == (frozen, 0)
    today = dashboards.metrics_report(store, w.curator, ev, today=True)["mean"]["nDCG@5"]
    assert today != frozen


def test_a_rater_let_count_or_kept_apart_changes_the_stamp(store, collection):
    """The stamp stands for the data: a rater kept apart (an LLM judge's switch) changes
    what is counted, so it changes the stamp; reading it changes nothing."""
    from rankscope.store.models_app import Evaluation, Rater

    w = make_world(store, collection)
    _grade_all(store, w.judge, w.evaluation.id, lambda t: 2)

    def stamp():
        with store.read() as session:
            return campaign_data.data_stamp(session, session.get(Evaluation, w.evaluation.id))

    before = stamp()
    assert stamp() == before

    def apart(session):
        rater = session.query(Rater).filter(Rater.name == "jay").one()
        rater.counts = False

    store.write(apart)
    assert stamp() != before


def test_evaluations_of_one_query_set_read_its_grades_once_per_view(store, collection,
                                                                    monkeypatch):
    """The project page (cold) and a metrics page with a baseline of the same query set read
    the grades once for both; each still gets its own numbers (the metrics page's)."""
    w = make_world(store, collection, metrics=METRICS)
    spec = campaigns.EvaluationSpec(name="tuned", query_set_id=w.query_set.id,
                                    endpoint_id=w.tuned.id, grades_wanted=2, depth=5,
                                    metrics=list(METRICS), baseline_id=w.evaluation.id)
    second = campaigns.create_evaluation(store, w.curator, w.project.id, spec)
    campaign_runs.run_evaluation(store, w.curator, second.id, boundary=w.boundary)
    _grade_all(store, w.judge, w.evaluation.id, lambda t: 3 if t.position <= 2 else 0)
    _grade_all(store, w.judge, second.id, lambda t: 1)
    reads = Counter()
    real = campaign_data._read_judgments

    def counted(session, ev, *args):
        reads[ev.id] += 1
        return real(session, ev, *args)

    monkeypatch.setattr(campaign_data, "_read_judgments", counted)
    rows = {r.evaluation.id: r for r in overview.project_overview(store, w.curator,
                                                                   w.project.id)}
    assert sum(reads.values()) == 1
    for ev in (w.evaluation.id, second.id):
        reads.clear()
        alone = dashboards.metrics_report(store, w.curator, ev)["mean"]["nDCG@5"]
        assert rows[ev].headline_value == alone
    assert rows[w.evaluation.id].headline_value != rows[second.id].headline_value
    reads.clear()
    dashboards.metrics_report(store, w.curator, second.id)  # with its baseline's drift
    assert sum(reads.values()) == 1
    # the data handed to each name their own evaluation
    loaded = dashboards.Loaded()
    for ev in (w.evaluation.id, second.id):
        data = dashboards.load(store, w.curator, ev, loaded=loaded)[1]
        assert data.judgments.source == f"evaluation #{ev}"


@pytest.fixture
def statements(store):
    """Every SQL statement the store runs, as sent (cleared by the test)."""
    from sqlalchemy import event

    seen: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany):
        seen.append(statement)

    event.listen(store.engine, "before_cursor_execute", record)
    yield seen
    event.remove(store.engine, "before_cursor_execute", record)


def _reads_of_hits(seen):
    return [s for s in seen if "FROM snapshot_hits" in s]


def test_a_headline_reads_its_hits_without_their_texts(store, collection, statements):
    """A headline is a number: the project page reads each hit's query, document, position
    and score, never its title, snippet or URL (most of the bytes); the metrics page
    still shows them, and the numbers are the metrics page's."""
    w = make_world(store, collection, metrics=METRICS)
    ev = w.evaluation.id
    _grade_all(store, w.judge, ev, lambda t: 3 if t.position <= 2 else 0)
    statements.clear()
    row = next(r for r in overview.project_overview(store, w.curator, w.project.id)
               if r.evaluation.id == ev)
    reads = _reads_of_hits(statements)
    assert len(reads) == 1, reads
    for text in ("snapshot_hits.title", "snapshot_hits.snippet", "snapshot_hits.url"):
        assert text not in reads[0], reads[0]
    assert "snapshot_hits.doc_id" in reads[0] and "snapshot_hits.score" in reads[0]
    assert row.headline_value == dashboards.metrics_report(store, w.curator, ev)["mean"]["nDCG@5"]
    # one request asking the numbers, then the texts: the texts are read for the second ask
    loaded = dashboards.Loaded()
    bare = dashboards.load(store, w.curator, ev, loaded=loaded, texts=False)[1]
    whole = dashboards.load(store, w.curator, ev, loaded=loaded)[1]
    assert "title" not in bare.hits.columns
    assert {"title", "snippet", "url"} <= set(whole.hits.columns)
    assert whole.hits.drop("title", "snippet", "url").equals(bare.hits)
    assert dashboards.load(store, w.curator, ev, loaded=loaded, texts=False)[1] is whole
    assert bare.run.frame.equals(whole.run.frame)


def test_evaluations_served_one_snapshot_read_its_hits_once_per_view(store, collection,
                                                                      statements):
    """Two evaluations of one query set served one snapshot (a second evaluation attached
    to the first's run, with its own metrics): the project page reads the snapshot's hits
    once for both, and each headline is still its own metrics page's mean."""
    w = make_world(store, collection, metrics=METRICS)
    spec = campaigns.EvaluationSpec(name="shallow", query_set_id=w.query_set.id,
                                    endpoint_id=w.endpoint.id, grades_wanted=2, depth=5,
                                    metrics=["P@2", "nDCG@5"])
    second = campaigns.create_evaluation(store, w.curator, w.project.id, spec)
    campaign_runs.attach_snapshot(store, second.id, w.run["snapshot_id"])
    _grade_all(store, w.judge, w.evaluation.id, lambda t: 3 if t.position == 2 else 1)
    statements.clear()
    rows = {r.evaluation.id: r for r in overview.project_overview(store, w.curator,
                                                                   w.project.id)}
    assert len(_reads_of_hits(statements)) == 1
    first = dashboards.metrics_report(store, w.curator, w.evaluation.id)["mean"]["nDCG@5"]
    shallow = dashboards.metrics_report(store, w.curator, second.id)["mean"]["P@2"]
    assert (rows[w.evaluation.id].headline, rows[w.evaluation.id].headline_value) == (
        "nDCG@5", first)
    assert (rows[second.id].headline, rows[second.id].headline_value) == ("P@2", shallow)
    data = dashboards.load(store, w.curator, second.id)[1]
    assert data.run.name == "shallow" and data.judgments.source == f"evaluation #{second.id}"


def test_the_project_page_checks_each_evaluation_for_a_freeze_once(store, collection,
                                                                    monkeypatch):
    """Whether grading is complete (auto-freeze) is checked once per evaluation per view: the
    page checks every one, and its headlines' reads do not check again; a complete one is
    still frozen on the view that sees it complete."""
    w = make_world(store, collection, metrics=METRICS)
    ev = w.evaluation.id
    checks: Counter[int] = Counter()
    real = freezing.auto_freeze

    def counted(store_, evaluation_id):
        checks[evaluation_id] += 1
        return real(store_, evaluation_id)

    monkeypatch.setattr(freezing, "auto_freeze", counted)
    overview.project_overview(store, w.curator, w.project.id)
    assert checks[ev] == 1
    # grading done (2 grades wanted per result: both judges): frozen on the next view
    _grade_all(store, w.judge, ev, lambda t: 3 if t.position == 1 else 0)
    _grade_all(store, w.judge2, ev, lambda t: 2)
    checks.clear()
    row = next(r for r in overview.project_overview(store, w.curator, w.project.id)
               if r.evaluation.id == ev)
    assert checks[ev] == 1 and row.frozen_at is not None
    assert row.headline_value == dashboards.metrics_report(store, w.curator, ev)["mean"]["nDCG@5"]
