"""Assignment read from the database's counted grades: ``tasks.grades_counted`` kept exact
by triggers whoever writes, the pool and its size against a reading of the raw rows, the
skip walk, a grader's own leases first, grades that do not count, and two graders never
taking the last slot at once on PostgreSQL (seen not waiting, not timed)."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from sqlalchemy import delete, select, text, update
from sqlalchemy.orm import Session

from rankscope.services import (
    accounts,
    adjudication,
    assignment,
    campaign_runs,
    campaigns,
    exchange,
    grading,
    grading_progress,
    projects,
)
from rankscope.services.grading import GradeInput
from rankscope.store.models import utcnow
from rankscope.store.models_app import (
    Adjudication,
    Deferral,
    Evaluation,
    Grade,
    Lease,
    Rater,
    Task,
)

from .conftest import make_world


def _expected_counted(store) -> dict[int, int]:
    """Each task's counted grades, computed here from the raw rows (not by the triggers)."""
    with store.read() as s:
        counts = {r.id: r.counts for r in s.scalars(select(Rater))}
        scales = {e.id: e.scale for e in s.scalars(select(Evaluation))}
        grades = s.execute(select(Grade.item_id, Grade.scale, Grade.rater_id)
                           .where(Grade.active)).all()
        tasks = s.execute(select(Task.id, Task.item_id, Task.evaluation_id)).all()
    return {t: sum(1 for item, scale, rater in grades
                   if item == item_id and scale == scales[ev] and counts[rater])
            for t, item_id, ev in tasks}


def _stored_counted(store) -> dict[int, int]:
    with store.read() as s:
        return dict(s.execute(select(Task.id, Task.grades_counted)).all())


def _check(store) -> None:
    expected = _expected_counted(store)
    assert _stored_counted(store) == expected
    assert any(expected.values())  # the check compares something


def test_counted_grades_are_kept_by_the_database_whoever_writes(store, world):
    ev = world.evaluation.id
    t1, t2, t3 = assignment.next_tasks(store, world.judge, ev, n=3)
    grading.submit_grade(store, world.judge, GradeInput(t1.task_id, 1))
    grading.submit_grade(store, world.judge2, GradeInput(t1.task_id, 2))
    grading.submit_grade(store, world.judge, GradeInput(t2.task_id, None, "no page"))
    _check(store)
    grading.submit_grade(store, world.judge, GradeInput(t1.task_id, 3))  # a regrade
    grading.undo_last(store, world.judge, ev)  # the regrade undone: the first grade again
    grading.undo_last(store, world.judge, ev)  # then can't tell undone
    _check(store)
    grading.submit_batch(store, world.judge3, ev, "b1", [GradeInput(t3.task_id, 0),
                                                         GradeInput(t1.task_id, 1)])
    adjudication.adjudicate(store, world.curator, ev, t1.query_id, t1.doc_id, 2, "settled")
    _check(store)
    # an import, then a rater that does not count, counted again later
    exchange.import_grades(store, world.curator, ev,
                           f"{t3.query_id} 0 {t3.doc_id} 2\n".encode(), filename="q.txt",
                           fmt="trec", rater="assessor")
    store.write(lambda s: s.execute(update(Rater).where(Rater.name == "assessor")
                                    .values(counts=False)))
    _check(store)
    store.write(lambda s: s.execute(update(Rater).where(Rater.name == "assessor")
                                    .values(counts=True)))
    # new tasks of another evaluation sharing the results, and one on another scale
    for endpoint, scale in ((world.tuned.id, "graded"), (world.endpoint.id, "binary")):
        other = campaigns.create_evaluation(store, world.curator, world.project.id,
                                              campaigns.EvaluationSpec(
                                                  name=f"again {scale}",
                                                  query_set_id=world.query_set.id,
                                                  endpoint_id=endpoint, scale=scale, depth=5,
                                                  grades_wanted=2, metrics=["P@5"]))
        campaign_runs.run_evaluation(store, world.curator, other.id, boundary=world.boundary)
    _check(store)
    # hand-written SQL too: a grade moved to another scale, one deleted
    store.write(lambda s: s.execute(text(
        "UPDATE grades SET scale = 'binary' WHERE id = (SELECT min(id) FROM grades "
        "WHERE active)")))
    store.write(lambda s: s.execute(delete(Grade).where(Grade.id == s.scalar(
        select(Grade.id).where(Grade.active, Grade.scale == "graded")
        .order_by(Grade.id.desc()).limit(1)))))
    _check(store)


def _pool_from_rows(store, ev_id: int, rater_name: str) -> set[int]:
    """The tasks the rater may take, by the rules of the assignment module's docstring,
    read from the raw rows."""
    now = utcnow()
    with store.read() as s:
        ev = s.get(Evaluation, ev_id)
        rater_id = s.scalar(select(Rater.id).where(Rater.name == rater_name))
        counts = {r.id: r.counts for r in s.scalars(select(Rater))}
        grades = s.execute(select(Grade.item_id, Grade.rater_id).where(
            Grade.active, Grade.scale == ev.scale)).all()
        settled = set(s.scalars(select(Adjudication.item_id).where(
            Adjudication.scale == ev.scale)))
        item_of = dict(s.execute(select(Task.id, Task.item_id)).all())
        leases = s.execute(select(Lease.task_id, Lease.rater_id, Lease.expires_at)).all()
        tasks = s.execute(select(Task.id, Task.item_id, Task.grades_wanted)
                          .where(Task.evaluation_id == ev_id)).all()
    held: dict[int, int] = {}
    for task_id, by, until in leases:
        if by != rater_id and until > now:
            held[item_of[task_id]] = held.get(item_of[task_id], 0) + 1
    mine = {item for item, by in grades if by == rater_id}
    return {t for t, item, wanted in tasks
            if item not in mine and item not in settled
            and sum(1 for i, by in grades if i == item and counts[by]) + held.get(item, 0)
            < wanted}


def test_the_pool_and_its_size_match_the_rules_read_from_the_rows(store, world):
    ev = world.evaluation.id

    def check(name: str) -> None:
        actor = accounts.get_user(store, name)
        expected = _pool_from_rows(store, ev, name)
        with store.read() as s:
            row = s.get(Evaluation, ev)
            rater_id = s.scalar(select(Rater.id).where(Rater.name == name))
            picked = assignment.pick(s, row, rater_id, assignment.MAX_BATCH)
            listed = [t.id for t in assignment.open_tasks(s, row, s.get(Rater, rater_id))]
        assert set(picked) == set(listed) == expected
        assert len(picked) == len(listed) == len(expected)
        assert grading_progress.progress(store, actor, ev)["left_for_me"] == len(expected)

    check(world.judge3.name)
    # others' leases fill both slots of a result, one slot of another
    both = assignment.next_task(store, world.judge, ev)
    assignment.next_task(store, world.judge2, ev)
    one = assignment.next_tasks(store, world.judge, ev, n=2)[1]
    assert both.task_id != one.task_id
    grading.submit_grade(store, world.judge, GradeInput(one.task_id, 1))
    # judge3's own grade, deferral and adjudication
    mine = assignment.next_tasks(store, world.judge3, ev, n=4)
    grading.submit_grade(store, world.judge3, GradeInput(mine[0].task_id, 2))
    grading.judge_later(store, world.judge3, mine[1].task_id)
    grading.submit_grade(store, world.judge, GradeInput(mine[2].task_id, 0))
    grading.submit_grade(store, world.judge2, GradeInput(mine[2].task_id, 3))
    adjudication.adjudicate(store, world.curator, ev, mine[2].query_id, mine[2].doc_id, 1)
    for name in (world.judge3.name, world.judge.name, world.judge2.name):
        check(name)
    # leases expire
    store.write(lambda s: s.execute(update(Lease).values(
        expires_at=utcnow() - timedelta(seconds=1))))
    check(world.judge3.name)


def _order(store, ev_id: int, rater_name: str) -> list[int]:
    """The pool in the documented order: put off last, fewest counted grades, position, id."""
    pool = _pool_from_rows(store, ev_id, rater_name)
    counted = _expected_counted(store)
    with store.read() as s:
        rater_id = s.scalar(select(Rater.id).where(Rater.name == rater_name))
        later = set(s.scalars(select(Deferral.task_id).where(Deferral.rater_id == rater_id)))
        position = dict(s.execute(select(Task.id, Task.position)).all())
    return sorted(pool, key=lambda t: (t in later, counted[t], position[t], t))


def test_a_skip_walks_on_after_the_skipped_result_then_wraps(store, world):
    ev = world.evaluation.id
    seed = assignment.next_tasks(store, world.judge2, ev, n=3)  # some results get a grade
    for t in seed:
        grading.submit_grade(store, world.judge2, GradeInput(t.task_id, 2))
    first = assignment.next_task(store, world.judge, ev)
    grading.judge_later(store, world.judge, first.task_id)  # one put off
    assignment.release(store, world.judge, first.task_id)
    order = _order(store, ev, world.judge.name)
    assert order[-1] == first.task_id and len(order) > 5
    at = order[2]
    walked = []
    for _ in range(len(order)):
        assignment.release(store, world.judge, at)
        at = assignment.next_tasks(store, world.judge, ev, after=at)[0].task_id
        walked.append(at)
    start = order.index(order[2])
    assert walked == order[start + 1:] + order[:start + 1]  # round the pool, back to the start
    # from the one put off (the last), the walk wraps to the first
    assignment.release(store, world.judge, at)
    assert assignment.next_tasks(store, world.judge, ev, after=first.task_id)[0].task_id == \
        order[0]


def test_a_skip_of_the_only_result_left_shows_it_again(store, collection):
    w = make_world(store, collection, grades_wanted=1)
    ev = w.evaluation.id
    every = assignment.next_tasks(store, w.judge2, ev, n=500)
    last = every.pop()
    for t in every:
        grading.submit_grade(store, w.judge2, GradeInput(t.task_id, 1))
    assignment.release(store, w.judge2, last.task_id)
    again = assignment.next_tasks(store, w.judge, ev, after=last.task_id)
    assert [t.task_id for t in again] == [last.task_id]


def test_their_live_leases_come_first(store, world):
    ev = world.evaluation.id
    held = assignment.next_tasks(store, world.judge, ev, n=3)
    grading.submit_grade(store, world.judge, GradeInput(held[0].task_id, 1))
    again = assignment.next_tasks(store, world.judge, ev, n=3)
    assert [t.task_id for t in again[:2]] == [t.task_id for t in held[1:]]
    assert again[2].task_id not in {t.task_id for t in held}
    assert all(t.lease_until for t in again)


def test_a_next_task_hands_out_the_pool_in_order_with_each_tasks_own_view(store, world):
    """A grader without live leases (the usual next task: the pool's first tasks read with
    their views) gets the pool in the documented order read from the rows, put off last,
    also when fewer than the tasks read ahead are not put off; each view is the task's as
    one task's view reads it."""
    ev = world.evaluation.id
    judge = world.judge3

    def without_leases() -> None:
        store.write(lambda s: s.execute(delete(Lease)))

    def shown(view) -> dict:
        return {k: v for k, v in view.to_dict().items() if k != "lease_until"}

    taken = assignment.next_tasks(store, judge, ev, n=3)
    for t in taken[:2]:
        grading.judge_later(store, judge, t.task_id)
    without_leases()
    expected = _order(store, ev, judge.name)
    assert len(expected) > assignment.SPARE + 1  # the first one comes from a longer pool
    first = assignment.next_tasks(store, judge, ev, n=1)
    assert [t.task_id for t in first] == expected[:1] and first[0].lease_until
    without_leases()
    every = assignment.next_tasks(store, judge, ev, n=len(expected))
    assert [t.task_id for t in every] == expected
    assert [t.deferred for t in every[-2:]] == [True, True]
    without_leases()
    for t in every:
        assert shown(t) == shown(assignment.task_view(store, judge, t.task_id, hold=False))


def test_grades_that_do_not_count_neither_fill_nor_order(store, world):
    ev = world.evaluation.id
    order = _order(store, ev, world.judge.name)
    with store.read() as s:
        item = s.get(Task, order[0]).item_id

    def grade_as_llm(s):
        rater = Rater(name="llm-x", kind="llm", counts=False, created_at=utcnow())
        s.add(rater)
        s.flush()
        s.add(Grade(item_id=item, rater_id=rater.id, scale="graded", value=3.0, source="llm",
                    evaluation_id=ev, active=True, created_at=utcnow()))

    store.write(grade_as_llm)
    assert assignment.next_task(store, world.judge, ev).task_id == order[0]
    assignment.release(store, world.judge, order[0])
    store.write(lambda s: s.execute(update(Rater).where(Rater.name == "llm-x")
                                    .values(counts=True)))
    now_first = assignment.next_task(store, world.judge, ev).task_id
    assert now_first == order[1]  # the first result has a counted grade now: it goes after
    assert _order(store, ev, world.judge.name)[0] == order[1]


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_two_graders_never_take_the_last_slot_at_once(store, collection):
    """While one grader's transaction has taken a task (not committed yet), another grader
    asking for a task does not wait for it: that item is held, so the second takes the
    next result. With one grade wanted, they get different results. (Before the item
    locks both waited on the project's row, one after the other.)"""
    from rankscope.services.accounts import rater_for

    w = make_world(store, collection, grades_wanted=1)
    ev_id = w.evaluation.id
    other = accounts.create_user(store, "ann", "judge", "p" * 8)
    projects.add_member(store, w.curator, w.project.id, other.name, "judge")
    session = Session(store.engine)  # the first grader's transaction, held open by the test
    session.begin()
    got: dict[str, int] = {}
    try:
        ev = session.get(Evaluation, ev_id)
        first = assignment.take_tasks(session, ev, rater_for(session, w.judge), 1)[0]
        holder = session.connection().exec_driver_sql("SELECT pg_backend_pid()").scalar()

        def second() -> None:
            got["task"] = assignment.next_task(store, other, ev_id).task_id

        thread = threading.Thread(target=second)
        thread.start()
        waiting = 0
        for _ in range(600):  # until the second grader is done, or waits on the first's lock
            with store.engine.connect() as probe:
                waiting = probe.execute(text(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND :holder = ANY(pg_blocking_pids(pid))"), {"holder": holder}).scalar()
            if waiting or not thread.is_alive():
                break
            time.sleep(0.05)
        assert waiting == 0 and not thread.is_alive()  # done while the first is still open
        session.commit()
    finally:
        session.close()
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert got["task"] != first.task_id
