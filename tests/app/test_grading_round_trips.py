"""What a grader's requests cost the database, counted (never timed): the statements of a
"next task" and of a grade over the API, the token read outside a transaction on
PostgreSQL, pooled connections pinged only after they sat idle (a dead one replaced), a
refused grade of a batch leaving nothing behind without a savepoint, and several tasks
leased at once handed out best first."""

from __future__ import annotations

import uuid

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, event, select, text
from sqlalchemy.pool import NullPool

from rankscope.app.factory import create_app
from rankscope.errors import AuthError
from rankscope.services import accounts, assignment, grading, sessions
from rankscope.services.grading import GradeInput
from rankscope.store.models import utcnow
from rankscope.store.models_app import Deferral, Grade, Lease, Rater, Task

from .conftest import make_world

# What each request needs, one statement each (the budget the tests hold the code to):
# next task: the token's user, the evaluation with the grader's role and rater, their own
# leases, the pool's first tasks with their views (before the lock), their items' lock
# (SKIP LOCKED), the final choice leasing what it picks = 6 (SQLite: 5, no lock).
NEXT_STATEMENTS = {"postgresql": 6, "sqlite": 5}
# a grade (a batch of one): the token's user, the evaluation with role and rater, the
# batch's replay lookup, the task with its item's lock (PostgreSQL; SQLite's one writer
# holds everything), its counts (and whether the grader leased it or put it off), the
# grade with the grader's lease ended (no deferral here; SQLite: two statements, it has
# no DELETE inside a WITH), the batch's answer = 7 (8 on SQLite).
GRADE_STATEMENTS = {"postgresql": 7, "sqlite": 8}


class _Counter:
    """Statements sent on an engine, each with whether it ran inside a transaction."""

    def __init__(self, engine) -> None:
        self.engine = engine
        self.seen: list[tuple[str, bool]] = []
        # SQLite: the writer's own BEGIN and each write's savepoint in its group commit
        # (no round trip there); on PostgreSQL every statement counts
        self.skip = {"BEGIN", "SAVEPOINT", "RELEASE"} if engine.dialect.name == "sqlite" else set()
        event.listen(engine, "after_cursor_execute", self._after)

    def _after(self, conn, cursor, statement, params, context, many) -> None:
        dbapi = conn.connection.dbapi_connection
        # psycopg sends BEGIN before a statement unless in autocommit; SQLite: always ours
        in_tx = not getattr(dbapi, "autocommit", False)
        kind = statement.split(None, 1)[0].upper()
        if kind not in self.skip:
            self.seen.append((kind, in_tx))

    def take(self) -> list[tuple[str, bool]]:
        seen, self.seen = self.seen, []
        return seen

    def close(self) -> None:
        event.remove(self.engine, "after_cursor_execute", self._after)


def test_a_next_task_and_a_grade_send_a_statement_per_need(store, world, tmp_path):
    """Before: a next task sent 12 statements and a grade 15 (the token read in a
    transaction of its own, the evaluation, its project, the membership and the rater one
    by one, expired leases deleted when there were none, a savepoint around the grade, a
    deferral deleted when there was none)."""
    token = sessions.create_token(store, world.judge.name, "round trips")
    client = TestClient(create_app(store, tmp_path / "appdata", boundary=world.boundary),
                        base_url="http://testserver")
    headers = {"Authorization": f"Bearer {token}"}
    ev = world.evaluation.id
    # the first round creates the grader's rater row and records the token's use: not counted
    counter = _Counter(store.engine)
    try:
        for round_ in range(3):
            counter.take()
            answer = client.get(f"/api/v1/evaluations/{ev}/tasks/next", headers=headers)
            assert answer.status_code == 200, answer.text
            task = answer.json()[0]["task_id"]
            next_sent = counter.take()
            answer = client.post(f"/api/v1/evaluations/{ev}/grades", headers=headers, json={
                "batch_id": uuid.uuid4().hex, "grades": [{"task_id": task, "value": 2}]})
            assert answer.status_code == 200 and answer.json()["accepted"] == 1, answer.text
            grade_sent = counter.take()
            if round_ == 0:
                continue
            assert len(next_sent) <= NEXT_STATEMENTS[store.dialect], next_sent
            assert len(grade_sent) <= GRADE_STATEMENTS[store.dialect], grade_sent
            # the item's lock is taken by the task's read, not by a statement of its own
            assert sum(kind == "SELECT" for kind, _ in grade_sent) == 5, grade_sent
            if store.dialect == "postgresql":
                # the token's user: one statement outside any transaction (no BEGIN, no
                # ROLLBACK); everything else in the request's one write transaction
                for sent in (next_sent, grade_sent):
                    assert sent[0] == ("SELECT", False)
                    assert all(in_tx for _, in_tx in sent[1:]), sent
                # the lease is ended by the grade's insert (a DELETE in its WITH)
                assert [k for k, _ in grade_sent].count("WITH") == 1, grade_sent
                assert "DELETE" not in [k for k, _ in grade_sent], grade_sent
    finally:
        counter.close()
    with store.read() as s:  # and the grades are there: two rounds' worth and the first's
        rater = s.scalar(select(Rater.id).where(Rater.user_id == world.judge.user_id))
        assert s.scalar(select(Grade.id).where(Grade.rater_id == rater).limit(1)) is not None
        assert len(s.scalars(select(Grade.id).where(Grade.rater_id == rater)).all()) == 3


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_a_pooled_connection_is_pinged_only_after_sitting_idle(store, monkeypatch):
    """A connection back in the pool a moment ago is used without a ping (before: every
    checkout pinged, a round trip twice per request); one idle past PING_IDLE_S is pinged,
    and when its server end was cut it is replaced, the caller never sees it."""
    from rankscope.store import connections

    pings: list[int] = []
    real_ping = store.engine.dialect.do_ping

    def counted_ping(dbapi_connection):
        pings.append(1)
        return real_ping(dbapi_connection)

    monkeypatch.setattr(store.engine.dialect, "do_ping", counted_ping)
    with store.read() as s:
        first_pid = s.execute(text("SELECT pg_backend_pid()")).scalar()
    with store.read() as s:
        assert s.execute(text("SELECT pg_backend_pid()")).scalar() == first_pid
    assert pings == []
    # the pooled connection's server end is cut while it sits in the pool
    outside = create_engine(store.engine.url, poolclass=NullPool)  # not the store's pool
    try:
        with outside.connect() as other:
            other.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": first_pid})
            other.commit()
    finally:
        outside.dispose()
    monkeypatch.setattr(connections, "PING_IDLE_S", -1.0)  # every connection counts as idle
    with store.read() as s:
        pid = s.execute(text("SELECT pg_backend_pid()")).scalar()
    assert pings and pid != first_pid


def test_a_refused_grade_of_a_batch_leaves_the_graders_lease_and_deferral(store, collection):
    """Nothing of a refused grade is written (checked before any write, no savepoint
    needed): the grader still holds the full result's lease and its deferral, while the
    accepted grade beside it in the batch ended theirs."""
    w = make_world(store, collection, grades_wanted=1)
    ev = w.evaluation.id
    full = assignment.next_task(store, w.judge2, ev).task_id
    grading.submit_grade(store, w.judge2, GradeInput(full, 1))  # fills it (1 wanted)
    other = assignment.next_task(store, w.judge, ev).task_id  # leased to the judge
    assert other != full
    grading.judge_later(store, w.judge, full)

    def hold(session):  # the judge's lease of the full result (taken before it filled up)
        rater = accounts.rater_for(session, w.judge)
        session.add(Lease(task_id=full, rater_id=rater.id,
                          expires_at=utcnow() + assignment.LEASE, created_at=utcnow()))
        return rater.id

    rater = store.write(hold)
    answer = grading.submit_batch(store, w.judge, ev, "b1", [GradeInput(full, 2),
                                                            GradeInput(other, 2)])
    assert [r["ok"] for r in answer["results"]] == [False, True]
    assert "grade(s) it wants" in answer["results"][0]["error"]
    with store.read() as s:
        leased = set(s.scalars(select(Lease.task_id).where(Lease.rater_id == rater)))
        deferred = set(s.scalars(select(Deferral.task_id).where(Deferral.rater_id == rater)))
        graded = set(s.scalars(select(Task.id).join(Grade, Grade.item_id == Task.item_id)
                               .where(Grade.rater_id == rater, Task.evaluation_id == ev)))
    assert leased == {full} and deferred == {full} and graded == {other}


def test_several_tasks_at_once_come_best_first_each_leased(store, world):
    """``n`` tasks in one request: the first ``n`` of the order read from the raw rows
    (fewest counted grades, then position, then id), each leased to the grader."""
    ev = world.evaluation.id
    for who in (world.judge2, world.judge3):  # some results get counted grades first
        for _ in range(2):
            task = assignment.next_task(store, who, ev).task_id
            grading.submit_grade(store, who, GradeInput(task, 1))
    with store.read() as s:
        rows = s.execute(select(Task.id, Task.item_id, Task.position)
                         .where(Task.evaluation_id == ev)).all()
        counted: dict[int, int] = {}
        for item, in s.execute(select(Grade.item_id).where(Grade.active)):
            counted[item] = counted.get(item, 0) + 1
    wanted = world.evaluation.grades_wanted
    expected = sorted(((counted.get(item, 0), pos, tid) for tid, item, pos in rows
                       if counted.get(item, 0) < wanted), key=lambda k: k)[:5]
    got = assignment.next_tasks(store, world.judge, ev, 5)
    assert [v.task_id for v in got] == [tid for _, _, tid in expected]
    with store.read() as s:
        rater = s.scalar(select(Rater.id).where(Rater.user_id == world.judge.user_id))
        leased = set(s.scalars(select(Lease.task_id).where(Lease.rater_id == rater)))
    assert leased == {tid for _, _, tid in expected}
    assert all(v.lease_until for v in got)


def test_connections_given_back_are_kept_for_the_next_requests(store):
    """Eight requests at once, then eight more: the second eight reuse the connections of
    the first (before: the pool kept 5 and closed the rest, so every burst past five opened
    new ones; on PostgreSQL a new server process each, 59 for 8 graders in 15 s)."""
    opened: list[int] = []

    def count(*_: object) -> None:
        opened.append(1)

    event.listen(store.engine, "connect", count)
    try:
        for burst in range(2):
            held = [store.engine.connect() for _ in range(8)]
            for connection in held:
                connection.execute(text("SELECT 1"))
            for connection in held:
                connection.close()
            if burst == 0:
                first = len(opened)
        assert first >= 1 and len(opened) == first  # nothing opened the second time
    finally:
        event.remove(store.engine, "connect", count)


def test_the_token_read_begins_no_transaction_on_sqlite(store, world):
    """One statement reads its own snapshot on SQLite as well: before, the token's user was
    read between a BEGIN of ours and a ROLLBACK (two statements more per request); a
    revoked token is still refused by that one read."""
    if store.dialect != "sqlite":
        pytest.skip("PostgreSQL's token read is held by the test above")
    token = sessions.create_token(store, world.judge.name, "one statement")
    sessions.resolve_token(store, token)  # records the use: the next minute's reads only read
    sent: list[str] = []

    def seen(conn, cursor, statement, params, context, many) -> None:
        sent.append(statement.split(None, 1)[0].upper())

    event.listen(store.engine, "after_cursor_execute", seen)
    try:
        owner = sessions.resolve_token(store, token)
        assert owner.user_id == world.judge.user_id
        assert sent == ["SELECT"], sent
        token_id = sessions.list_tokens(store, world.judge.user_id)[0].id
        sessions.revoke_token(store, token_id, owner)
        with pytest.raises(AuthError):
            sessions.resolve_token(store, token)
    finally:
        event.remove(store.engine, "after_cursor_execute", seen)
    with store.read() as s:  # a read of several statements still begins its transaction
        sent.clear()
        event.listen(store.engine, "after_cursor_execute", seen)
        try:
            s.execute(text("SELECT 1"))
        finally:
            event.remove(store.engine, "after_cursor_execute", seen)
    assert sent == ["BEGIN", "SELECT"], sent


def test_the_evaluation_access_statement_is_built_once(store, world):
    """Every request of a grader reads the evaluation with their role and rater: the
    statement is built once and given the user and the evaluation as parameters (before:
    built anew, with both as literals' bound values, on each call), and still answers
    each caller for themselves."""
    from sqlalchemy.orm import Session

    from rankscope.errors import ForbiddenError, NotFoundError
    from rankscope.services.campaigns import evaluation_access, evaluation_row

    statements: list[object] = []

    def seen(state) -> None:
        statements.append(state.statement)

    event.listen(Session, "do_orm_execute", seen)
    try:
        with store.read() as s:
            ev, role, _ = evaluation_access(s, world.judge, world.evaluation.id)
            again, role_again, _ = evaluation_access(s, world.curator, world.evaluation.id)
            assert ev.id == again.id == world.evaluation.id
            assert (role, role_again) == ("judge", "curator")
            with pytest.raises(ForbiddenError):
                evaluation_row(s, world.judge, world.evaluation.id, "curator")
            with pytest.raises(NotFoundError):
                evaluation_access(s, world.judge, world.evaluation.id + 1000)
    finally:
        event.remove(Session, "do_orm_execute", seen)
    assert statements[0] is statements[1] is statements[3], statements


def test_a_grades_statements_are_built_once(store, world):
    """A grade's checks (settled, the grader's own grade, the counted grades, their lease
    and deferral), its batch's replay lookup and its tasks' read are statements built once
    with bound parameters (before: built anew with each grade's values); each grade still
    reads its own task's state."""
    from sqlalchemy.orm import Session

    ev = world.evaluation.id
    per_grade: list[list[object]] = []
    recording = False

    def seen(state) -> None:
        if recording:
            per_grade[-1].append(state.statement)

    event.listen(Session, "do_orm_execute", seen)
    try:
        for who in (world.judge, world.judge2):  # as the API grades: a batch of one
            task = assignment.next_task(store, who, ev).task_id
            per_grade.append([])
            recording = True
            answer = grading.submit_batch(store, who, ev, uuid.uuid4().hex,
                                          [GradeInput(task, 1)])
            recording = False
            assert answer["accepted"] == 1, answer
    finally:
        event.remove(Session, "do_orm_execute", seen)
    first, second = ({id(s): s for s in grade} for grade in per_grade)
    shared = [first[k] for k in first.keys() & second.keys()]
    texts = [str(s) for s in shared]
    for part in ("adjudications", "FROM grade_batches", "FROM tasks"):  # checks, replay, tasks
        assert any(part in text for text in texts), (part, [t[:60] for t in texts])


def test_a_grade_writes_its_rows_without_the_orms_unit_of_work(store, world):
    """A grade and its batch's answer are Core inserts: the request flushes no ORM object
    (before: the grade was added and flushed, the batch's answer flushed at the commit),
    and the rows hold what was sent; a regrade still supersedes the grader's own grade."""
    from sqlalchemy.orm import Session

    from rankscope.store.models_app import GradeBatch

    ev = world.evaluation.id
    first = assignment.next_task(store, world.judge, ev).task_id
    grading.submit_batch(store, world.judge, ev, "warm", [GradeInput(first, 1)])  # rater row
    task = assignment.next_task(store, world.judge, ev).task_id
    flushed: list[int] = []

    def count(session, context, instances) -> None:
        flushed.append(len(session.new) + len(session.dirty) + len(session.deleted))

    event.listen(Session, "before_flush", count)
    try:
        answer = grading.submit_batch(store, world.judge, ev, "b2", [
            GradeInput(task, 2, explanation=" seen ")])
    finally:
        event.remove(Session, "before_flush", count)
    assert flushed == [] and answer["accepted"] == 1
    again = grading.submit_batch(store, world.judge, ev, "b3", [GradeInput(task, 0)])
    with store.read() as s:
        old = s.get(Grade, answer["results"][0]["grade_id"])
        new = s.get(Grade, again["results"][0]["grade_id"])
        batch = s.scalar(select(GradeBatch).where(GradeBatch.batch_key == "b2"))
        assert (old.item_id, old.value, old.explanation, old.source, old.evaluation_id) == (
            new.item_id, 2.0, "seen", "api", ev)
        assert old.created_at is not None and old.created_at.tzinfo is not None
        assert (old.active, old.superseded_by, new.active, new.value) == (
            False, new.id, True, 0.0)
        assert batch.response == {k: v for k, v in answer.items() if k != "replayed"}
        assert batch.evaluation_id == ev and batch.created_at is not None
        # the grade ended the grader's lease of the task (with its insert on PostgreSQL)
        assert s.scalar(select(Lease.id).where(Lease.task_id == task)) is None


def test_a_tasks_view_reads_the_hit_and_grade_as_columns(store, world):
    """A task's view (every next task builds them) reads the hit's and the grader's grade's
    columns, no ORM object of either (before: both loaded as objects into the session,
    the hit with its ``explanation``); the view shows the rows' values, read apart."""
    from sqlalchemy.orm import Session

    from rankscope.store.models import SnapshotHit, SnapshotQuery

    ev = world.evaluation.id
    task = assignment.next_task(store, world.judge, ev).task_id
    given = grading.submit_batch(store, world.judge, ev, "seen", [
        GradeInput(task, 2, explanation="looked")])
    loaded: list[str] = []

    def load(target, context) -> None:
        loaded.append(type(target).__name__)

    event.listen(SnapshotHit, "load", load)
    event.listen(Grade, "load", load)
    try:
        fresh = assignment.next_tasks(store, world.judge, ev, 3)
        shown = assignment.task_view(store, world.judge, task, hold=False)
    finally:
        event.remove(SnapshotHit, "load", load)
        event.remove(Grade, "load", load)
    assert loaded == [] and len(fresh) == 3
    with Session(store.engine) as s:  # the rows, read apart as ORM objects
        grade = s.get(Grade, given["results"][0]["grade_id"])
        assert shown.my_grade == {
            "grade_id": grade.id, "value": 2.0, "reason": grade.reason,
            "explanation": "looked", "created_at": grade.created_at.isoformat()}
        for view in [*fresh, shown]:
            row = s.get(Task, view.task_id)
            hit = s.scalars(select(SnapshotHit).join(
                SnapshotQuery, SnapshotQuery.id == SnapshotHit.snapshot_query_id).where(
                SnapshotHit.doc_id == view.doc_id,
                SnapshotQuery.query_row_id == row.query_row_id)
                .order_by(SnapshotHit.rank, SnapshotHit.id)).first()
            assert (view.title, view.snippet, view.url, view.image, view.fields) == (
                hit.title, hit.snippet, hit.url, hit.image, dict(hit.fields))
    assert all(v.my_grade is None for v in fresh)
