"""An undo brings back the grade the undone one had replaced, and the history stays true.

The definitions (services/grade_history.py): a grade counted at a moment ``t`` when it was
given at or before ``t``, was not retracted by then and was not replaced by a grade given
at or before ``t``; of one rater's grades of one result, the one given last counted. So a
regrade then its undo read, as of each moment: the first grade before the regrade, the
regrade between the regrade and the undo, the first grade again after the undo (and now);
and what any moment before the undo reads does not change when the undo comes.

The times of the grades are set by hand (hours apart, long before the undo, which happens
now), so every moment asked about falls between two known events.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from sqlalchemy import select, update

from rankscope.services import grading, task_views
from rankscope.services.campaign_data import load_data
from rankscope.services.grade_records import GRADE_COLUMNS, grade_records
from rankscope.services.grading import GradeInput
from rankscope.store.models_app import Evaluation, Grade, Rater

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
ID, VALUE, STATUS = (list(GRADE_COLUMNS).index(c) for c in ("grade_id", "grade", "grade_status"))


def _given_at(store, times: dict[int, datetime]) -> None:
    def work(session):
        for grade_id, when in times.items():
            session.execute(update(Grade).where(Grade.id == grade_id).values(created_at=when))

    store.write(work)


def _history(store, ev_id: int, as_of: datetime | None, doc_id: str) -> list[tuple]:
    """(grade id, value, status) of each grade of one result given by ``as_of``."""
    with store.read() as session:
        ev = session.get(Evaluation, ev_id)
        data = dataclasses.replace(load_data(session, ev), as_of=as_of)
        return [(r[ID], r[VALUE], r[STATUS]) for r in grade_records(session, ev, data)
                if r[1] == doc_id and r[0] == "q01" and r[STATUS] != "after freeze"]


def _counted(history: list[tuple]) -> list[float]:
    return [value for _, value, status in history if status == "counted"]


def _grades(store, rater_name: str) -> list[int]:
    with store.read() as session:
        return list(session.scalars(select(Grade.id).join(Rater, Grade.rater_id == Rater.id)
                                    .where(Rater.name == rater_name).order_by(Grade.id)))


def test_an_undone_regrade_brings_the_first_grade_back_and_keeps_the_history(store, world):
    ev = world.evaluation.id
    task = task_views.query_results(store, world.curator, ev, "q01")[0]
    grading.submit_grade(store, world.judge, GradeInput(task.task_id, 1))
    grading.submit_grade(store, world.judge, GradeInput(task.task_id, 3))  # a regrade
    first, regrade = _grades(store, world.judge.name)
    _given_at(store, {first: T0, regrade: T0 + 2 * HOUR})
    moments = [T0 + HOUR, T0 + 3 * HOUR]  # after the first grade; after the regrade
    before_undo = [_history(store, ev, t, task.doc_id) for t in moments]
    assert [_counted(h) for h in before_undo] == [[1.0], [3.0]]
    assert _counted(_history(store, ev, None, task.doc_id)) == [3.0]

    undone = grading.undo_grade(store, world.judge, ev)
    assert undone is not None and undone.removed == 3 and undone.restored
    assert undone.restored_value == 1
    # now (and as of any moment after the undo) the first grade is current again
    now = _history(store, ev, None, task.doc_id)
    assert now == [(first, 1.0, "counted"), (regrade, 3.0, "retracted")]
    later = datetime.now(UTC) + HOUR
    assert _history(store, ev, later, task.doc_id) == now
    with store.read() as session:
        assert session.get(Grade, first).active and not session.get(Grade, regrade).active
    # the moments before the undo read what they read then
    assert [_history(store, ev, t, task.doc_id) for t in moments] == before_undo


def test_two_undos_walk_back_two_regrades_and_a_regrade_after_an_undo_replaces_it(store, world):
    ev = world.evaluation.id
    task = task_views.query_results(store, world.curator, ev, "q01")[0]
    for value in (0, 2, 3):  # a grade and two regrades
        grading.submit_grade(store, world.judge, GradeInput(task.task_id, value))
    g0, g2, g3 = _grades(store, world.judge.name)
    _given_at(store, {g0: T0, g2: T0 + 2 * HOUR, g3: T0 + 4 * HOUR})
    moments = [T0 + HOUR, T0 + 3 * HOUR, T0 + 5 * HOUR]
    before = [_history(store, ev, t, task.doc_id) for t in moments]
    assert [_counted(h) for h in before] == [[0.0], [2.0], [3.0]]

    grading.undo_last(store, world.judge, ev)  # 3 undone: 2 again
    assert _counted(_history(store, ev, None, task.doc_id)) == [2.0]
    grading.undo_last(store, world.judge, ev)  # 2 undone: 0 again
    assert _counted(_history(store, ev, None, task.doc_id)) == [0.0]
    assert _counted(_history(store, ev, datetime.now(UTC) + HOUR, task.doc_id)) == [0.0]
    assert [_history(store, ev, t, task.doc_id) for t in moments] == before

    # graded again after the undos: the new grade replaces the restored first one
    grading.submit_grade(store, world.judge, GradeInput(task.task_id, 1))
    g1 = _grades(store, world.judge.name)[-1]
    assert _history(store, ev, None, task.doc_id) == [
        (g0, 0.0, "superseded"), (g2, 2.0, "retracted"), (g3, 3.0, "retracted"),
        (g1, 1.0, "counted")]
    assert [_history(store, ev, t, task.doc_id) for t in moments] == before


SUCCESSOR = list(GRADE_COLUMNS).index("superseded_by")


def _links(store, ev_id: int, as_of: datetime | None, doc_id: str) -> dict[int, tuple]:
    """grade id -> (status, superseded_by) of one result's grades as of ``as_of``."""
    with store.read() as session:
        ev = session.get(Evaluation, ev_id)
        data = dataclasses.replace(load_data(session, ev), as_of=as_of)
        return {r[ID]: (r[STATUS], r[SUCCESSOR]) for r in grade_records(session, ev, data)
                if r[1] == doc_id and r[0] == "q01"}


def test_a_grade_superseded_then_brought_back_names_its_successor_as_of_before_the_undo(
        store, world):
    # Three grades g0, g2, g3 of one result by one grader, hours apart, then two undos
    # (g3, then g2): g0 is current again and its link is cleared. As of T0+3h g0 had been
    # replaced by g2 (the rater's next grade), as of T0+5h g2 by g3 and g0 still by g2:
    # every "superseded" row names the grade that replaced it then, never an empty link.
    ev = world.evaluation.id
    task = task_views.query_results(store, world.curator, ev, "q01")[0]
    for value in (0, 2, 3):
        grading.submit_grade(store, world.judge, GradeInput(task.task_id, value))
    g0, g2, g3 = _grades(store, world.judge.name)
    _given_at(store, {g0: T0, g2: T0 + 2 * HOUR, g3: T0 + 4 * HOUR})
    grading.undo_last(store, world.judge, ev)
    grading.undo_last(store, world.judge, ev)

    assert _links(store, ev, T0 + 3 * HOUR, task.doc_id) == {
        g0: ("superseded", g2), g2: ("counted", None), g3: ("after freeze", None)}
    assert _links(store, ev, T0 + 5 * HOUR, task.doc_id) == {
        g0: ("superseded", g2), g2: ("superseded", g3), g3: ("counted", None)}
    # now: g0 counts, the two undone grades are retracted, nothing superseded
    now = _links(store, ev, None, task.doc_id)
    assert now == {g0: ("counted", None), g2: ("retracted", None), g3: ("retracted", None)}
