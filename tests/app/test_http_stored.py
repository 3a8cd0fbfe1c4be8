"""What the grading forms and the API store, read back from the database.

``test_http.py`` checks every route's status for every kind of user; here each
way of giving a grade is followed to its row in ``grades``: a 0 stays 0 (not
"can't tell"), "can't tell" stays a missing value with its reason, an
explanation is kept, a regrade or an undo leaves the history, "judge later"
is no grade, and a refused form stores nothing. The rows are read with
SQLAlchemy from the store, not through the services the routes call.
"""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from rankscope.services import assignment, grading, sessions
from rankscope.services.grading import GradeInput

from .conftest import app_store, make_world, signed_in


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def site(request, tmp_path_factory):
    """One world per database for the module: each test grades results no other has."""
    from rankscope.app.factory import create_app

    with app_store(request.param, tmp_path_factory.mktemp(f"stored-{request.param}")) as (
            store, data):
        world = make_world(store, data)
        yield create_app(store, data), store, world


@pytest.fixture
def app(site):
    return site[0]


@pytest.fixture
def store(site):
    return site[1]


@pytest.fixture
def world(site):
    return site[2]


def _api(app: Any, store: Any, name: str) -> TestClient:
    client = TestClient(app, base_url="http://testserver", follow_redirects=False)
    client.headers["Authorization"] = f"Bearer {sessions.create_token(store, name)}"
    return client


def _rows(store: Any, task_id: int) -> list[dict[str, Any]]:
    """Every grade row of the task's result in its evaluation, oldest first."""
    from rankscope.store.models_app import Grade, Rater, Task

    with store.read() as session:
        task = session.get(Task, task_id)
        found = session.execute(
            select(Grade, Rater.name).join(Rater, Rater.id == Grade.rater_id)
            .where(Grade.item_id == task.item_id, Grade.evaluation_id == task.evaluation_id)
            .order_by(Grade.id)).all()
        return [{"rater": name, "value": g.value, "reason": g.reason,
                 "explanation": g.explanation, "active": g.active, "source": g.source,
                 "retracted": g.retracted_at is not None} for g, name in found]


def _task(store: Any, who: Any, evaluation_id: int, *, besides: tuple[int, ...] = ()
          ) -> assignment.TaskView:
    """The grader's next task whose result has no grade row yet (an earlier test may have
    undone one: it comes back with its history), other than ``besides``."""
    skipped = list(besides)
    while True:
        task = assignment.next_task(store, who, evaluation_id, exclude=skipped)
        assert task is not None, "no result left without a grade"
        if not _rows(store, task.task_id):
            return task
        skipped.append(task.task_id)


def _one(value: float | None, *, rater: str = "jay", reason: str | None = None,
         explanation: str | None = None, source: str = "app") -> dict[str, Any]:
    return {"rater": rater, "value": value, "reason": reason, "explanation": explanation,
            "active": True, "source": source, "retracted": False}


@pytest.mark.parametrize("way", ["page", "htmx", "list"])
def test_a_grade_of_zero_is_stored_as_zero(app, store, world, way):
    """Mutation: the form reading "0" as no value (``float(value) or None``), which made
    it "can't tell" (or refused it for want of a reason): the stored row is not 0."""
    task = _task(store, world.judge, world.evaluation.id)
    form = {"evaluation_id": str(world.evaluation.id), "value": "0"}
    headers = {"HX-Request": "true"} if way == "htmx" else {}
    if way == "list":
        form |= {"mode": "list", "back": f"/evaluations/{world.evaluation.id}/queries/q01"}
    answer = signed_in(app, "jay").post(f"/tasks/{task.task_id}/grade", data=form,
                                         headers=headers)
    assert answer.status_code == (200 if way == "htmx" else 303), answer.text[:300]
    assert _rows(store, task.task_id) == [_one(0.0)]
    shown = answer.text if way == "htmx" else answer.headers["location"]
    assert "Saved 0" in shown.replace("%20", " ")  # the message names the grade given


def test_cant_tell_keeps_no_value_and_its_reason(app, store, world):
    """Mutation: the reason dropped, or a blank value read as 0: the row differs."""
    task = _task(store, world.judge, world.evaluation.id)
    answer = signed_in(app, "jay").post(f"/tasks/{task.task_id}/grade", data={
        "evaluation_id": str(world.evaluation.id), "value": "",
        "reason": "the page did not load"})
    assert answer.status_code == 303
    assert _rows(store, task.task_id) == [_one(None, reason="the page did not load")]


def test_an_explanation_is_stored_with_its_grade(app, store, world):
    """Mutation: the explanation field not passed on: the row has none."""
    task = _task(store, world.judge, world.evaluation.id)
    answer = signed_in(app, "jay").post(f"/tasks/{task.task_id}/grade", data={
        "evaluation_id": str(world.evaluation.id), "value": "3",
        "explanation": "exactly the function asked for"})
    assert answer.status_code == 303
    assert _rows(store, task.task_id) == [_one(3.0, explanation="exactly the function asked for")]


def test_regrading_along_the_walk_keeps_the_earlier_grade_as_history(app, store, world):
    task = _task(store, world.judge, world.evaluation.id)
    client = signed_in(app, "jay")
    url, ev = f"/tasks/{task.task_id}/grade", str(world.evaluation.id)
    assert client.post(url, data={"evaluation_id": ev, "value": "2"}).status_code == 303
    assert client.post(url, data={"evaluation_id": ev, "value": "0", "walk": "1"}
                       ).status_code == 303
    first, second = _rows(store, task.task_id)
    assert (first["value"], first["active"], second) == (2.0, False, _one(0.0))


def test_undo_retracts_the_latest_grade_only(app, store, world):
    """The page's undo and the API's: the row stays, retracted; the earlier grade counts."""
    client = signed_in(app, "jay")
    ev = world.evaluation.id
    first = _task(store, world.judge, ev)
    assert client.post(f"/tasks/{first.task_id}/grade",
                       data={"evaluation_id": str(ev), "value": "1"}).status_code == 303
    other = _task(store, world.judge, ev)
    assert client.post(f"/tasks/{other.task_id}/grade",
                       data={"evaluation_id": str(ev), "value": "0"}).status_code == 303
    assert client.post(f"/evaluations/{ev}/undo").status_code == 303
    assert _rows(store, other.task_id) == [_one(0.0) | {"active": False, "retracted": True}]
    assert _rows(store, first.task_id) == [_one(1.0)]
    answer = _api(app, store, "jay").post(f"/api/v1/evaluations/{ev}/undo")
    assert answer.json() == {"task_id": first.task_id}
    assert _rows(store, first.task_id) == [_one(1.0) | {"active": False, "retracted": True}]


def test_judge_later_stores_no_grade(app, store, world):
    from rankscope.store.models_app import Deferral

    task = _task(store, world.judge, world.evaluation.id)
    answer = signed_in(app, "jay").post(f"/tasks/{task.task_id}/later",
                                         data={"evaluation_id": str(world.evaluation.id)})
    assert answer.status_code == 303
    assert _rows(store, task.task_id) == []
    with store.read() as session:
        assert task.task_id in session.scalars(select(Deferral.task_id)).all()


def test_the_api_batch_stores_zero_cant_tell_and_explanations(app, store, world):
    """Mutation: the API reading a value of 0 as null (``g.value or None``)."""
    ev = world.evaluation.id
    tasks: list[assignment.TaskView] = []
    for _ in range(3):
        tasks.append(_task(store, world.judge, ev, besides=tuple(t.task_id for t in tasks)))
    answer = _api(app, store, "jay").post(f"/api/v1/evaluations/{ev}/grades", json={
        "batch_id": "b-zero", "grades": [
            {"task_id": tasks[0].task_id, "value": 0},
            {"task_id": tasks[1].task_id, "value": None, "reason": "in Welsh"},
            {"task_id": tasks[2].task_id, "value": 2, "explanation": "close, not it"}]})
    assert answer.status_code == 200, answer.text
    assert answer.json()["accepted"] == 3
    assert [_rows(store, t.task_id) for t in tasks] == [
        [_one(0.0, source="api")], [_one(None, reason="in Welsh", source="api")],
        [_one(2.0, explanation="close, not it", source="api")]]


def test_adjudicating_at_zero_stores_zero(app, store, world):
    """A curator settles a disagreement at 0: the settled grade is 0, the others history."""
    task = _task(store, world.judge, world.evaluation.id)
    grading.submit_grade(store, world.judge, GradeInput(task.task_id, 3))
    grading.submit_grade(store, world.judge2, GradeInput(task.task_id, 1))
    answer = signed_in(app, "cora").post(
        f"/evaluations/{world.evaluation.id}/adjudicate",
        data={"query_id": task.query_id, "doc_id": task.doc_id, "value": "0",
              "note": "neither: a different module"})
    assert answer.status_code == 303, answer.text[:300]
    rows = _rows(store, task.task_id)
    assert [(r["rater"], r["value"], r["active"]) for r in rows] == [
        ("jay", 3.0, False), ("kim", 1.0, False), ("cora", 0.0, True)]


def test_an_imported_grade_of_zero_is_stored_as_zero(app, store, world):
    task = _task(store, world.judge, world.evaluation.id)
    data = (f"query_id,doc_id,rater,grade\n{task.query_id},{task.doc_id},imported,0\n"
            ).encode()
    answer = signed_in(app, "cora").post(
        f"/evaluations/{world.evaluation.id}/import", data={"format": "grades"},
        files={"file": ("g.csv", data, "text/csv")})
    assert answer.status_code == 200, answer.text[:300]
    assert [(r["rater"], r["value"], r["reason"], r["active"])
            for r in _rows(store, task.task_id)] == [("imported", 0.0, None, True)]


@pytest.mark.parametrize(("value", "reason"), [("", ""), ("abc", ""), ("7", ""), ("-1", "")])
def test_a_refused_grade_stores_nothing(app, store, world, value, reason):
    """Can't tell without a reason, not a number, outside the 0-3 scale: a 400 naming
    why, and no row."""
    task = _task(store, world.judge, world.evaluation.id)
    answer = signed_in(app, "jay").post(f"/tasks/{task.task_id}/grade", data={
        "evaluation_id": str(world.evaluation.id), "value": value, "reason": reason})
    assert answer.status_code == 400, answer.text[:300]
    assert any(word in answer.text for word in ("reason", "a number", "outside"))
    assert _rows(store, task.task_id) == []
