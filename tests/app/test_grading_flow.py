"""The grading page's flow over HTTP: ``j`` walks forward through the pool (issue 26), a
grade and the next result are one transaction (issue 28), "You graded N results here"
counts this evaluation's grades only (issue 26)."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import event, func, select

from rankscope.services import (
    assignment,
    campaign_runs,
    campaigns,
    grading,
    grading_progress,
)
from rankscope.services.grading import GradeInput
from rankscope.store.models_app import Grade, Task

from .conftest import signed_in

HX = {"HX-Request": "true"}


@pytest.fixture
def app(store, world):
    from rankscope.app.factory import create_app

    return create_app(store, world.data)


def _shown(answer) -> tuple[int | None, str]:
    """The task the page shows and the walk's place it carries for the next form."""
    assert answer.status_code == 200, answer.text[:300]
    task = re.search(r'id="task" class="task" data-task="(\d+)"', answer.text)
    after = re.search(r'name="after" value="(\d*)"', answer.text)
    return (int(task[1]) if task else None), (after[1] if after else "")


def _order(store, evaluation_id: int) -> list[int]:
    """Nothing graded yet: the order is by position, then task id (read from the rows)."""
    with store.read() as s:
        return [t for t, _ in sorted(s.execute(select(Task.id, Task.position).where(
            Task.evaluation_id == evaluation_id)).all(), key=lambda r: (r[1], r[0]))]


def test_j_walks_forward_through_the_pool_and_comes_back_round(app, store, world):
    ev = world.evaluation.id
    order = _order(store, ev)
    client = signed_in(app, world.judge.name)
    seen = [_shown(client.get(f"/evaluations/{ev}/grade", headers=HX))[0]]
    for _ in range(len(order)):
        seen.append(_shown(client.get(f"/evaluations/{ev}/grade?skip={seen[-1]}",
                                      headers=HX))[0])
    # each result once, in the order they are handed out, then the first again
    # (before: the first two results, again and again)
    assert seen == [*order, order[0]]


def test_a_grade_after_skips_goes_on_from_there(app, store, world):
    ev = world.evaluation.id
    order = _order(store, ev)
    client = signed_in(app, world.judge.name)
    _shown(client.get(f"/evaluations/{ev}/grade", headers=HX))
    task, after = _shown(client.get(f"/evaluations/{ev}/grade?skip={order[0]}", headers=HX))
    task, after = _shown(client.get(f"/evaluations/{ev}/grade?skip={task}", headers=HX))
    assert (task, after) == (order[2], str(order[1]))
    answer = client.post(f"/tasks/{task}/grade", headers=HX,
                         data={"evaluation_id": str(ev), "value": "2", "after": after})
    assert "Saved 2" in answer.text
    # the next result is the one after the grade, not the first one skipped
    assert _shown(answer)[0] == order[3]
    # without JavaScript: the redirect keeps the walk's place and shows the result leased
    plain = client.post(f"/tasks/{order[3]}/grade",
                        data={"evaluation_id": str(ev), "value": "1", "after": after})
    assert plain.status_code == 303 and f"after={order[1]}" in plain.headers["location"]
    assert _shown(client.get(plain.headers["location"]))[0] == order[4]


def test_a_grade_and_the_next_result_are_one_transaction(app, store, world):
    ev = world.evaluation.id
    client = signed_in(app, world.judge.name)
    task, _ = _shown(client.get(f"/evaluations/{ev}/grade", headers=HX))
    commits: list[int] = []

    def count(_connection: object) -> None:
        commits.append(1)

    event.listen(store.engine, "commit", count)
    try:
        answer = client.post(f"/tasks/{task}/grade", headers=HX,
                             data={"evaluation_id": str(ev), "value": "3"})
        assert len(commits) == 1  # was 3: submit_grade, task_view, next_task
        following, _ = _shown(answer)
        assert following is not None and following != task
        with store.read() as s:  # the grade is there, and the next result is leased
            assert s.scalar(select(func.count(Grade.id)).where(Grade.active)) == 1
        assert assignment.task_view(store, world.judge, following).lease_until
        commits.clear()
        row = client.post(f"/tasks/{following}/grade", headers=HX,
                          data={"evaluation_id": str(ev), "value": "1", "mode": "list"})
        assert row.status_code == 200 and f'id="t{following}"' in row.text
        assert len(commits) == 1  # the result-list mode too
    finally:
        event.remove(store.engine, "commit", count)


def _mine(page_text: str) -> int:
    found = re.search(r'id="n-mine">(\d+)<', page_text)
    assert found, page_text[:300]
    return int(found[1])


def test_you_graded_counts_the_grades_given_in_this_evaluation_only(app, store, world):
    first = world.evaluation.id
    graded = [t.task_id for t in assignment.next_tasks(store, world.judge, first, n=3)]
    for task_id in graded:
        grading.submit_grade(store, world.judge, GradeInput(task_id, 2))
    again = campaigns.create_evaluation(store, world.curator, world.project.id,
                                        campaigns.EvaluationSpec(
                                            name="again", query_set_id=world.query_set.id,
                                            endpoint_id=world.endpoint.id, depth=5,
                                            grades_wanted=2, metrics=["P@5"]))
    campaign_runs.run_evaluation(store, world.curator, again.id, boundary=world.boundary)
    # the same results: the three grades are shared by both evaluations
    with store.read() as s:
        items = select(Task.item_id).where(Task.id.in_(graded))
        shared = s.scalar(select(func.count(Task.id)).where(Task.evaluation_id == again.id,
                                                            Task.item_id.in_(items)))
    assert shared == 3
    assert grading_progress.progress(store, world.judge, first)["mine"] == 3
    assert grading_progress.progress(store, world.judge, again.id)["mine"] == 0  # was 3
    client = signed_in(app, world.judge.name)
    page = client.get(f"/evaluations/{again.id}/grade")
    assert _mine(page.text) == 0 and 'id="prev-link"' not in page.text  # k: nothing here
    task, _ = _shown(client.get(f"/evaluations/{again.id}/grade", headers=HX))
    answer = client.post(f"/tasks/{task}/grade", headers=HX,
                         data={"evaluation_id": str(again.id), "value": "1"})
    assert _mine(answer.text) == 1
    assert grading_progress.progress(store, world.judge, first)["mine"] == 3
