"""Grading: assignment order, leases, the grades-per-result limit, undo, judge later,
can't tell, idempotent batches, grades shared between evaluations, roles and projects."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from sqlalchemy import func, select, update

from rankscope.errors import ConflictError, ForbiddenError, NotFoundError, OptionError
from rankscope.services import (
    accounts,
    assignment,
    campaign_runs,
    campaigns,
    grading,
    projects,
    task_views,
)
from rankscope.services.grading import GradeInput
from rankscope.store.models import utcnow
from rankscope.store.models_app import Grade, Lease, Task
from rankscope.store.snapshots import snapshot_hits


def _hits(store, w):
    return snapshot_hits(store, w.run["snapshot_id"])


def _count(store, **where) -> int:
    with store.read() as s:
        query = select(func.count(Grade.id))
        for key, value in where.items():
            query = query.where(getattr(Grade, key) == value)
        return int(s.scalar(query))


def _task_of(store, w, query_id, rank) -> assignment.TaskView:
    """The task of the hit at ``rank`` of ``query_id`` (read from the snapshot itself)."""
    doc = next(h["doc_id"] for h in _hits(store, w) if h["query_id"] == query_id
               and h["rank"] == rank)
    every = task_views.query_results(store, w.admin, w.evaluation.id, query_id)
    return next(t for t in every if t.doc_id == doc)


def test_a_run_makes_one_task_per_result_of_its_snapshot(store, world):
    hits = _hits(store, world)
    pairs = {(h["query_id"], h["doc_id"]) for h in hits}
    assert world.run["tasks"] == len(pairs) == len(hits) > 0
    assert world.run["to_grade"] == world.run["tasks"]  # nothing graded yet
    assert campaigns.get_evaluation(store, world.judge, world.evaluation.id).status == "ready"


def test_fewest_grades_first_then_the_highest_position(store, world):
    hits = _hits(store, world)
    first_query = hits[0]["query_id"]
    second_query = next(h["query_id"] for h in hits if h["query_id"] != first_query)
    task = assignment.next_task(store, world.judge, world.evaluation.id)
    assert (task.query_id, task.position) == (first_query, 1)
    grading.submit_grade(store, world.judge, GradeInput(task.task_id, 3))
    # the rank-1 result of the first query now has one grade: another grader starts where
    # nothing is graded, at the top of the next query
    other = assignment.next_task(store, world.judge2, world.evaluation.id)
    assert (other.query_id, other.position) == (second_query, 1)


def test_a_grader_never_gets_a_result_twice_nor_sees_another_grade(store, world):
    task = assignment.next_task(store, world.judge, world.evaluation.id)
    grading.submit_grade(store, world.judge, GradeInput(task.task_id, 2, explanation="close"))
    seen_by_other = assignment.task_view(store, world.judge2, task.task_id)
    assert seen_by_other.my_grade is None  # the judge's grade is not shown to others
    assert "close" not in str(seen_by_other.to_dict())
    mine = assignment.task_view(store, world.judge, task.task_id)
    assert mine.my_grade["value"] == 2 and mine.my_grade["explanation"] == "close"
    every = assignment.next_tasks(store, world.judge, world.evaluation.id, n=500)
    assert task.task_id not in {t.task_id for t in every}
    assert len(every) == world.run["tasks"] - 1


def test_the_grades_wanted_are_never_exceeded(store, world):
    task = assignment.next_task(store, world.judge, world.evaluation.id)
    grading.submit_grade(store, world.judge, GradeInput(task.task_id, 1))
    grading.submit_grade(store, world.judge2, GradeInput(task.task_id, 2))
    with pytest.raises(ConflictError, match="has the 2 grade"):
        grading.submit_grade(store, world.judge3, GradeInput(task.task_id, 3))
    assert _count(store, active=True) == 2
    offered = assignment.next_tasks(store, world.judge3, world.evaluation.id, n=500)
    assert task.task_id not in {t.task_id for t in offered}


def test_leases_hold_a_slot_and_return_it_when_they_expire(store, world):
    first = assignment.next_task(store, world.judge, world.evaluation.id)
    second = assignment.next_task(store, world.judge2, world.evaluation.id)
    assert second.task_id == first.task_id  # two slots: both may hold it
    third = assignment.next_task(store, world.judge3, world.evaluation.id)
    assert third.task_id != first.task_id  # both slots are held
    store.write(lambda s: s.execute(update(Lease).values(
        expires_at=utcnow() - timedelta(seconds=1))))
    # abandoned work is back in the pool (judge3's own lease expired too)
    again = assignment.next_task(store, world.judge3, world.evaluation.id)
    assert again.task_id == first.task_id


def test_cant_tell_needs_a_reason_and_fills_a_slot(store, world):
    task = assignment.next_task(store, world.judge, world.evaluation.id)
    with pytest.raises(OptionError, match="needs a reason"):
        grading.submit_grade(store, world.judge, GradeInput(task.task_id, None))
    with pytest.raises(OptionError, match="outside the graded"):
        grading.submit_grade(store, world.judge, GradeInput(task.task_id, 4))
    grading.submit_grade(store, world.judge, GradeInput(task.task_id, None, "page is empty"))
    grading.submit_grade(store, world.judge2, GradeInput(task.task_id, 2))
    with pytest.raises(ConflictError):
        grading.submit_grade(store, world.judge3, GradeInput(task.task_id, 2))
    with store.read() as s:
        row = s.scalar(select(Grade).where(Grade.value.is_(None)))
        assert row.reason == "page is empty"


def test_judge_later_puts_the_task_after_every_other(store, world):
    task = assignment.next_task(store, world.judge, world.evaluation.id)
    grading.judge_later(store, world.judge, task.task_id)
    offered = assignment.next_tasks(store, world.judge, world.evaluation.id, n=500)
    assert offered[-1].task_id == task.task_id and offered[-1].deferred
    assert offered[0].task_id != task.task_id
    assert _count(store) == 0  # judge later is not a grade


def test_undo_keeps_the_row_and_gives_the_task_back(store, world):
    task = assignment.next_task(store, world.judge, world.evaluation.id)
    grading.submit_grade(store, world.judge, GradeInput(task.task_id, 1))
    grading.submit_grade(store, world.judge, GradeInput(task.task_id, 3))  # a regrade
    assert _count(store) == 2 and _count(store, active=True) == 1
    assert grading.undo_last(store, world.judge, world.evaluation.id) == task.task_id
    view = assignment.task_view(store, world.judge, task.task_id)
    assert view.my_grade["value"] == 1  # the regrade is undone, the first grade counts again
    assert grading.undo_last(store, world.judge, world.evaluation.id) == task.task_id
    assert assignment.task_view(store, world.judge, task.task_id).my_grade is None
    assert _count(store) == 2 and _count(store, active=True) == 0  # nothing deleted
    assert assignment.next_task(store, world.judge, world.evaluation.id).task_id == task.task_id


def test_a_retried_batch_counts_nothing_twice(store, world):
    tasks = assignment.next_tasks(store, world.judge, world.evaluation.id, n=3)
    given = [GradeInput(t.task_id, 2) for t in tasks] + [GradeInput(10**6, 1),
                                                          GradeInput(tasks[0].task_id, 9)]
    first = grading.submit_batch(store, world.judge, world.evaluation.id, "b-1", given)
    assert first["accepted"] == 3 and not first["replayed"]
    assert [r["ok"] for r in first["results"]] == [True, True, True, False, False]
    again = grading.submit_batch(store, world.judge, world.evaluation.id, "b-1", given)
    assert again["replayed"] and again["results"] == first["results"]
    assert _count(store, active=True) == 3
    # the same id from another grader is another batch
    other = grading.submit_batch(store, world.judge2, world.evaluation.id, "b-1", given[:1])
    assert other["accepted"] == 1 and not other["replayed"]


def test_a_replayed_batch_answers_with_the_first_answers_bytes(store, world):
    """A client may compare a retry's answer with the first one byte for byte: the same keys
    in the same order (PostgreSQL's jsonb gives the stored answer back in its own key order)."""
    import json

    tasks = assignment.next_tasks(store, world.judge, world.evaluation.id, n=2)
    given = [GradeInput(tasks[0].task_id, 2), GradeInput(10**6, 1),
             GradeInput(tasks[1].task_id, 9)]
    first = grading.submit_batch(store, world.judge, world.evaluation.id, "b-bytes", given)
    again = grading.submit_batch(store, world.judge, world.evaluation.id, "b-bytes", given)
    assert json.dumps(again) == json.dumps({**first, "replayed": True})


def test_grades_are_reused_by_another_evaluation_of_the_same_queries(store, world):
    for t in assignment.next_tasks(store, world.judge, world.evaluation.id, n=500):
        grading.submit_grade(store, world.judge, GradeInput(t.task_id, 1))
    for t in assignment.next_tasks(store, world.judge2, world.evaluation.id, n=500):
        grading.submit_grade(store, world.judge2, GradeInput(t.task_id, 2))
    spec = campaigns.EvaluationSpec(name="tuned", query_set_id=world.query_set.id,
                                      endpoint_id=world.tuned.id, grades_wanted=2, depth=5,
                                      metrics=["nDCG@5"])
    ev2 = campaigns.create_evaluation(store, world.curator, world.project.id, spec)
    run2 = campaign_runs.run_evaluation(store, world.curator, ev2.id, boundary=world.boundary)
    old = {(h["query_id"], h["doc_id"]) for h in _hits(store, world)}
    new = {(h["query_id"], h["doc_id"]) for h in snapshot_hits(store, run2["snapshot_id"])}
    assert run2["tasks"] == len(new)
    assert run2["to_grade"] == len(new - old) < len(new)


def test_many_graders_at_once_never_exceed_the_limit(store, world):
    judges = [accounts.create_user(store, f"j{i}", "judge", "p" * 8) for i in range(6)]
    for j in judges:
        projects.add_member(store, world.curator, world.project.id, j.name, "judge")
    task = assignment.next_task(store, world.judge, world.evaluation.id)
    start = threading.Barrier(len(judges))
    outcomes: list[str] = []

    def grade(actor):
        start.wait(timeout=30)
        try:
            grading.submit_grade(store, actor, GradeInput(task.task_id, 2))
            outcomes.append("ok")
        except ConflictError:
            outcomes.append("full")

    threads = [threading.Thread(target=grade, args=(j,)) for j in judges]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(outcomes) == ["full"] * 4 + ["ok"] * 2
    assert _count(store, active=True) == 2


def test_roles_and_projects(store, world):
    with pytest.raises(ForbiddenError):
        campaign_runs.run_evaluation(store, world.judge, world.evaluation.id,
                                     boundary=world.boundary)
    for call in (lambda: assignment.next_task(store, world.outsider, world.evaluation.id),
                 lambda: campaigns.get_evaluation(store, world.outsider, world.evaluation.id),
                 lambda: assignment.task_view(store, world.judge, _other_task(store, world))):
        with pytest.raises(NotFoundError):
            call()
    with pytest.raises(ForbiddenError):
        projects.create_project(store, world.judge, "mine")


def _other_task(store, world) -> int:
    with store.read() as s:
        return int(s.scalar(select(Task.id).where(
            Task.evaluation_id == world.other_evaluation.id).limit(1)))


def test_moving_on_without_grading_releases_the_lease(store, world):
    first = assignment.next_task(store, world.judge, world.evaluation.id)
    assignment.next_task(store, world.judge2, world.evaluation.id)  # both slots held
    assert assignment.next_task(store, world.judge3, world.evaluation.id).task_id != first.task_id
    assignment.release(store, world.judge, first.task_id)
    with store.read() as s:
        assert s.scalar(select(func.count(Lease.id)).where(Lease.task_id == first.task_id)) == 1
    # judge3's own lease on another task keeps; the freed slot is now theirs to take
    offered = assignment.next_tasks(store, world.judge3, world.evaluation.id, n=500)
    assert first.task_id in {t.task_id for t in offered}
