"""A finished snapshot's hits (without texts) and run frame, kept per server process: read
once, never handed to a later snapshot reusing its id, never kept while the snapshot runs
(or runs again, resumed), never changed by what a caller does with its copy; the project
page right after a grade reads no hits."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from sqlalchemy import delete, select

from rankscope.cli.main import main
from rankscope.services import (
    campaign_runs,
    campaigns,
    dashboards,
    exchange,
    freezing,
    grading,
    overview,
    snapshot_hits,
)
from rankscope.services.grading import GradeInput
from rankscope.store.base import utcnow
from rankscope.store.models import Snapshot, SnapshotHit, SnapshotQuery
from rankscope.store.models_app import EvaluationSnapshot

from .conftest import make_world
from .test_page_loads import _grade_all, _reads_of_hits, statements  # noqa: F401

METRICS = ("nDCG@5", "P@5", "RR@5")


def _evaluate_exports(store, w, tmp_path, capsys) -> float:
    """nDCG@5 as ``rankscope evaluate`` prints it on the evaluation's exported grades and run
    (the run written from the hits read whole, with their texts: never from what is kept)."""
    grades, run = tmp_path / "grades.csv", tmp_path / "run.txt"
    grades.write_bytes(exchange.export(store, w.curator, w.evaluation.id, "grades.csv")[0])
    run.write_bytes(exchange.export(store, w.curator, w.evaluation.id, "run.txt")[0])
    capsys.readouterr()
    assert main(["evaluate", str(grades), str(run), "--format", "json", "-q", "--scale",
                 "graded", "--strategy", "graded=mean", "--unjudged", "null",
                 "-m", "nDCG@5"]) == 0
    return float(json.loads(capsys.readouterr().out)["mean"]["nDCG@5"])


def _headline(store, w) -> float | None:
    row = next(r for r in overview.project_overview(store, w.curator, w.project.id)
               if r.evaluation.id == w.evaluation.id)
    return row.headline_value


def _stored(store, snapshot_id, *, texts=False):
    """The snapshot's hits and run frame as the store holds them now (read by the one hits
    reader, nothing kept)."""
    from rankscope.services.snapshot_runs import engine_run_frame

    with store.read() as session:
        hits, depth = snapshot_hits.read_hits(session, snapshot_id, texts=texts)
    return hits, engine_run_frame(hits, depth)


def _set_snapshot(store, snapshot_id, **values):
    def work(session):
        snapshot = session.get(Snapshot, snapshot_id)
        for name, value in values.items():
            setattr(snapshot, name, value)

    store.write(work)


def _reverse_each_query(store, snapshot_id):
    """The snapshot's hits of each query in the opposite order (what a resumed snapshot's
    engine might answer differently): ranks 1..n become n..1."""
    def work(session):
        queries = session.scalars(select(SnapshotQuery.id).where(
            SnapshotQuery.snapshot_id == snapshot_id)).all()
        for hits in (session.scalars(select(SnapshotHit).where(
                SnapshotHit.snapshot_query_id == q).order_by(SnapshotHit.rank)).all()
                for q in queries):
            docs = [h.doc_id for h in hits]
            for hit, doc in zip(hits, reversed(docs), strict=True):
                hit.doc_id = doc

    store.write(work)


def test_a_new_snapshot_reusing_a_deleted_ones_id_is_never_served_its_hits(
        store, collection, tmp_path, capsys):
    """A snapshot deleted and a new one given its id (SQLite reuses the highest id freed; the
    test gives it explicitly, on PostgreSQL too), the engine's order reversed: the project
    page shows the new snapshot's number (``rankscope evaluate`` on the exports), not the
    deleted one's, though the old hits were kept under that id."""
    w = make_world(store, collection, metrics=METRICS)
    values = {1: 3, 2: 0, 3: 2, 4: 1, 5: 0}
    _grade_all(store, w.judge, w.evaluation.id, lambda t: values[t.position])
    sid = w.run["snapshot_id"]
    first = _headline(store, w)
    assert first == pytest.approx(_evaluate_exports(store, w, tmp_path, capsys), abs=1e-12)

    def replace(session):
        old = session.get(Snapshot, sid)
        kept = {c.key: getattr(old, c.key) for c in Snapshot.__table__.columns}
        answers = [(q, [(h.rank, h.doc_id, h.score, h.title, h.snippet, h.url)
                        for h in session.scalars(select(SnapshotHit).where(
                            SnapshotHit.snapshot_query_id == q.id))])
                   for q in session.scalars(select(SnapshotQuery).where(
                       SnapshotQuery.snapshot_id == sid)).all()]
        answers = [(q.query_row_id, q.status, hits) for q, hits in answers]
        session.execute(delete(Snapshot).where(Snapshot.id == sid))  # cascades to its rows
        session.flush()
        later = utcnow() + timedelta(seconds=1)
        session.add(Snapshot(**{**kept, "started_at": later, "heartbeat_at": later,
                                "finished_at": later}))
        session.flush()
        for query_row, status, hits in answers:
            row = SnapshotQuery(snapshot_id=sid, query_row_id=query_row, status=status,
                                n_hits=len(hits))
            session.add(row)
            session.flush()
            ranks = sorted(h[0] for h in hits)
            for (_, doc, score, title, snippet, url), rank in zip(
                    sorted(hits), reversed(ranks), strict=True):
                session.add(SnapshotHit(snapshot_query_id=row.id, rank=rank, doc_id=doc,
                                        score=score, title=title, snippet=snippet, url=url))
        session.add(EvaluationSnapshot(evaluation_id=w.evaluation.id, snapshot_id=sid,
                                       created_at=later))

    store.write(replace)
    with store.read() as session:  # the same id, the same counts: only its start differs
        assert campaigns.latest_snapshot_id(session, w.evaluation.id) == sid
    truth = _evaluate_exports(store, w, tmp_path, capsys)
    assert truth != pytest.approx(first, abs=1e-6), "the reversed order moves nDCG@5"
    assert _headline(store, w) == pytest.approx(truth, abs=1e-12)
    metrics = dashboards.metrics_report(store, w.curator, w.evaluation.id)["mean"]["nDCG@5"]
    assert metrics == pytest.approx(truth, abs=1e-12)


def test_a_running_or_resumed_snapshot_is_not_kept_until_finished(store, collection,
                                                                   statements):  # noqa: F811
    """While a snapshot runs (or runs again, resumed: running, no finish time, as
    ``resume_snapshot`` leaves it) every read of its numbers reads its hits; once it
    finishes, they are read once and kept; its answers changed by a resume are read anew."""
    w = make_world(store, collection, metrics=METRICS)
    ev, sid = w.evaluation.id, w.run["snapshot_id"]
    _grade_all(store, w.judge, ev, lambda t: 3 if t.position == 1 else 0)

    def bare():
        statements.clear()
        data = dashboards.load(store, w.curator, ev, texts=False)[1]
        return data, len(_reads_of_hits(statements))

    data, reads = bare()
    assert reads == 1 and data.hits.equals(_stored(store, sid)[0])
    assert bare()[1] == 0, "a finished snapshot's hits are read once"
    # resumed: running again, no finish time; answers recorded meanwhile
    _set_snapshot(store, sid, status="running", finished_at=None)
    assert bare()[1] == 1
    _reverse_each_query(store, sid)
    running, reads = bare()
    assert reads == 1, "a running snapshot is not kept"
    assert bare()[1] == 1
    assert running.hits.get_column("doc_id").to_list() != data.hits.get_column(
        "doc_id").to_list()
    # finished again: kept from its next read on, the new answers
    _set_snapshot(store, sid, status="complete", finished_at=utcnow())
    again, reads = bare()
    assert reads == 1 and again.hits.equals(running.hits)
    kept, reads = bare()
    assert reads == 0 and kept.hits.equals(running.hits)
    assert kept.run.frame.equals(again.run.frame)
    assert kept.hits.equals(_stored(store, sid)[0])


def test_a_snapshot_resumed_while_its_hits_are_read_is_not_kept(store, collection,
                                                                monkeypatch,
                                                                statements):  # noqa: F811
    """Finished when its stamp is read, resumed (answers changed) before its hits are read:
    never are the resumed answers kept under the finished snapshot's stamp. PostgreSQL
    reads each statement as of its start (the hits read are the resumed ones: the stamp,
    read again after them, has moved, so nothing is kept); SQLite reads within one
    transaction (the hits read are the finished ones, rightly kept)."""
    w = make_world(store, collection, metrics=METRICS)
    ev, sid = w.evaluation.id, w.run["snapshot_id"]
    with store.read() as session:
        finished = snapshot_hits.snapshot_state(session, sid)
    whole = _stored(store, sid)[0]
    real = snapshot_hits.read_hits

    def resumed_meanwhile(session, snapshot_id, **options):
        _set_snapshot(store, sid, status="running", finished_at=None)
        _reverse_each_query(store, sid)
        return real(session, snapshot_id, **options)

    monkeypatch.setattr(snapshot_hits, "read_hits", resumed_meanwhile)
    dashboards.load(store, w.curator, ev, texts=False)
    monkeypatch.setattr(snapshot_hits, "read_hits", real)
    kept = snapshot_hits._KEPT_BARE.get(store, finished)
    assert kept is None or kept[0].equals(whole), "the resumed answers kept as the finished"
    _set_snapshot(store, sid, status="complete", finished_at=utcnow())
    statements.clear()
    dashboards.load(store, w.curator, ev, texts=False)
    assert len(_reads_of_hits(statements)) == 1, "read again: nothing was kept"


@pytest.mark.parametrize("texts", [False, True])
def test_what_is_kept_cannot_be_changed_by_a_caller(store, collection, statements,  # noqa: F811
                                                    texts):
    """Each caller gets its own frames: changing one (a cell, a column's name, a column
    dropped) leaves what the next caller gets as read; their arrays are read-only. With or
    without the hits' texts (a metrics page, a headline)."""
    w = make_world(store, collection, metrics=METRICS)
    ev, sid = w.evaluation.id, w.run["snapshot_id"]
    hits, frame = _stored(store, sid, texts=texts)
    statements.clear()
    first = dashboards.load(store, w.curator, ev, texts=texts)[1]
    assert len(_reads_of_hits(statements)) == 1
    statements.clear()
    second = dashboards.load(store, w.curator, ev, texts=texts)[1]
    assert _reads_of_hits(statements) == [], "the kept ones"
    for data in (first, second):
        data.hits[0, "doc_id"] = "changed"
        data.hits.drop_in_place("score")
        data.run.frame[0, "score"] = -1.0
        data.run.frame.columns = ["a", "b", "c"]
    statements.clear()
    third = dashboards.load(store, w.curator, ev, texts=texts)[1]
    bare = dashboards.load(store, w.curator, ev, texts=False)[1]
    assert _reads_of_hits(statements) == []
    assert third.hits.equals(hits) and third.run.frame.equals(frame)
    assert bare.hits.equals(hits.select("query_id", "rank", "doc_id", "score"))
    scores = third.run.frame.get_column("score").to_numpy()
    assert not scores.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        scores[0] = -1.0


def test_the_metrics_pages_read_a_finished_snapshots_hits_once(store, collection, tmp_path,
                                                              capsys,
                                                              statements):  # noqa: F811
    """The metrics page shows each hit's texts (holes): read once per process for a finished
    snapshot; a new run's snapshot is read (once) on the next view; once frozen, the page
    reads neither the frozen hits nor today's (the same snapshot) again. The page's means
    are ``rankscope evaluate``'s on the exports all along."""
    from .test_page_loads import _app

    w = make_world(store, collection, metrics=METRICS)
    ev = w.evaluation.id
    _grade_all(store, w.judge, ev, lambda t: 3 if t.position == 2 else 1)
    cora = _app(store, w, tmp_path)

    def views(n):
        reads = []
        for _ in range(n):
            statements.clear()
            assert cora.get(f"/evaluations/{ev}/metrics").status_code == 200
            reads.append(len(_reads_of_hits(statements)))
        mean = dashboards.metrics_report(store, w.curator, ev)["mean"]["nDCG@5"]
        assert mean == pytest.approx(_evaluate_exports(store, w, tmp_path, capsys), abs=1e-12)
        return reads

    assert views(3) == [1, 0, 0]
    campaign_runs.run_evaluation(store, w.curator, ev, boundary=w.boundary)
    assert views(2) == [1, 0]
    freezing.freeze_evaluation(store, w.curator, ev)
    assert views(2) == [0, 0]


def test_the_project_page_right_after_a_grade_reads_no_hits(store, collection,
                                                            statements):  # noqa: F811
    """Two provisional evaluations, each its own snapshot: the first view reads each one's
    hits once; right after a grade (both headlines computed again) none, and each headline
    is still its metrics page's number (computed with the hits read whole)."""
    w = make_world(store, collection, metrics=METRICS)
    spec = campaigns.EvaluationSpec(name="tuned", query_set_id=w.query_set.id,
                                    endpoint_id=w.tuned.id, grades_wanted=2, depth=5,
                                    metrics=list(METRICS))
    second = campaigns.create_evaluation(store, w.curator, w.project.id, spec)
    campaign_runs.run_evaluation(store, w.curator, second.id, boundary=w.boundary)
    tasks = _grade_all(store, w.judge, w.evaluation.id, lambda t: 3 if t.position <= 2 else 1)
    _grade_all(store, w.judge, second.id, lambda t: 2 if t.position == 3 else 0)
    statements.clear()
    overview.project_overview(store, w.curator, w.project.id)
    assert len(_reads_of_hits(statements)) == 2
    for value in (0, 2):
        grading.submit_grade(store, w.judge2, GradeInput(tasks[0].task_id, value))
        statements.clear()
        rows = {r.evaluation.id: r for r in overview.project_overview(store, w.curator,
                                                                       w.project.id)}
        assert _reads_of_hits(statements) == [], "before: one read per evaluation"
        for ev in (w.evaluation.id, second.id):
            truth = dashboards.metrics_report(store, w.curator, ev)["mean"]["nDCG@5"]
            assert rows[ev].headline_value == truth


def test_what_is_kept_weighs_at_most_its_budget(store, collection, monkeypatch,
                                                statements):  # noqa: F811
    """Two finished snapshots and room for one (the budget is the larger's weight, polars'
    estimate): reading them in turn, each view reads its hits again and the kept ones
    never weigh more than the budget; with room for neither, every view reads them; the
    numbers are the stored snapshots' all along."""
    w = make_world(store, collection, metrics=METRICS)
    spec = campaigns.EvaluationSpec(name="tuned", query_set_id=w.query_set.id,
                                    endpoint_id=w.tuned.id, grades_wanted=2, depth=5,
                                    metrics=list(METRICS))
    second = campaigns.create_evaluation(store, w.curator, w.project.id, spec)
    run = campaign_runs.run_evaluation(store, w.curator, second.id, boundary=w.boundary)
    evaluations = {w.evaluation.id: w.run["snapshot_id"], second.id: run["snapshot_id"]}
    stored = {ev: _stored(store, sid) for ev, sid in evaluations.items()}
    weights = {ev: sum(f.estimated_size() for f in (hits.select(
        list(snapshot_hits.RANKED_SCHEMA)), frame)) for ev, (hits, frame) in stored.items()}
    for budget, expected in ((max(weights.values()), [0, 1, 1, 1]),
                             (min(weights.values()) - 1, [1, 1, 1, 1])):
        monkeypatch.setattr(snapshot_hits._KEPT_BARE, "budget", budget)
        first = next(iter(evaluations))
        dashboards.load(store, w.curator, first, texts=False)  # kept if it fits
        reads = []
        for ev in [*evaluations, *evaluations]:
            statements.clear()
            data = dashboards.load(store, w.curator, ev, texts=False)[1]
            reads.append(len(_reads_of_hits(statements)))
            assert data.hits.equals(stored[ev][0].select(list(snapshot_hits.RANKED_SCHEMA)))
            assert data.run.frame.equals(stored[ev][1])
            assert snapshot_hits._KEPT_BARE.weight(store) <= budget
        assert reads == expected
