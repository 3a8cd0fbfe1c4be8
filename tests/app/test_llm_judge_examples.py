"""An LLM judge of the app shows few-shot examples, as ``rankscope judge --few-shot`` does:
results of the evaluation people graded, each with its grade, before every result it asks.

What an example is (services/llm_judges.py): the people's counted grades of a result, one
grade by their majority (a tied vote is no example), never a result the run grades, never
an LLM's grade. The scripted server is on 127.0.0.1, which these tests' boundary allows."""

from __future__ import annotations

import json

import pytest
from tests.llm_judge.conftest import Reply, ScriptedServer

from rankscope.errors import InputError, OptionError
from rankscope.services import assignment, grading, llm_judges
from rankscope.services.grading import GradeInput

from .conftest import PASSWORD, boundary_for
from .test_llm_judge import LOCAL


@pytest.fixture
def llm():
    server = ScriptedServer()
    server.script = lambda doc, n, body: Reply('{"grade": 1}')
    yield server
    server.stop()


def _grade_fully(store, world, votes: list[tuple[int, int]]) -> list:
    """Each result in turn graded by jay then kim (the two grades it wants): its view."""
    graded = []
    for first, second in votes:
        view = assignment.next_task(store, world.judge, world.evaluation.id)
        grading.submit_grade(store, world.judge, GradeInput(view.task_id, first))
        assignment.task_view(store, world.judge2, view.task_id)
        grading.submit_grade(store, world.judge2, GradeInput(view.task_id, second))
        graded.append(view)
    return graded


def _shots(body: dict) -> list[tuple[str, str]]:
    """(user message, answer) of each few-shot turn of a request."""
    messages = body["messages"]
    turns = list(zip(messages[1:-1:2], messages[2:-1:2], strict=True))
    assert all((u["role"], a["role"]) == ("user", "assistant") for u, a in turns)
    return [(u["content"], a["content"]) for u, a in turns]


def test_the_examples_are_results_people_graded_one_grade_each(store, world, llm):
    # four results agreed on (3, 0, 2, 1), one tied (1 against 3: no example), one with a
    # single grade (still open to the judge: asked, so never an example)
    agreed = _grade_fully(store, world, [(3, 3), (0, 0), (1, 3), (2, 2), (1, 1)])
    tied = agreed.pop(2)
    half = assignment.next_task(store, world.judge, world.evaluation.id)
    grading.submit_grade(store, world.judge, GradeInput(half.task_id, 2))
    judge = llm_judges.attach_judge(store, world.curator, world.evaluation.id,
                                    llm_judges.JudgeSpec(llm.url, "m", max_calls=500,
                                                         few_shot=4), boundary=LOCAL)
    assert judge["few_shot"] == 4
    summary = llm_judges.run_judge(store, world.curator, judge["id"], boundary=LOCAL)
    assert summary["items"] == llm.count > 0

    grade_of = {3: agreed[0], 0: agreed[1], 2: agreed[2], 1: agreed[3]}
    shots = [_shots(body) for body in llm.bodies]
    assert all(s == shots[0] for s in shots)  # the same examples before every result
    answers = [json.loads(answer)["grade"] for _, answer in shots[0]]
    assert sorted(answers) == [0, 1, 2, 3]
    for (shown, _), grade in zip(shots[0], answers, strict=True):
        view = grade_of[grade]  # the result given that grade by both people
        assert view.query_text in shown and view.title in shown
    assert sorted(map(tuple, summary["examples"])) == sorted(
        (v.query_id, v.doc_id, float(g)) for g, v in grade_of.items())
    examples = {(q, d) for q, d, _ in summary["examples"]}
    assert (tied.query_id, tied.doc_id) not in examples
    assert (half.query_id, half.doc_id) not in examples
    # the result asked is never one of the examples shown before it
    for body in llm.bodies:
        asked = body["messages"][-1]["content"]
        assert all(asked != shown for shown, _ in _shots(body))


def test_too_few_graded_results_fail_the_run_and_say_so(store, world, llm):
    _grade_fully(store, world, [(3, 3), (0, 0)])
    judge = llm_judges.attach_judge(store, world.curator, world.evaluation.id,
                                    llm_judges.JudgeSpec(llm.url, "m", few_shot=3),
                                    boundary=LOCAL)
    with pytest.raises(InputError, match=r"only 2 graded pair\(s\) .* for 3 few-shot"):
        llm_judges.run_judge(store, world.curator, judge["id"], boundary=LOCAL)
    after = llm_judges.get_judge(store, world.curator, judge["id"])
    assert after["status"] == "failed" and "only 2 graded" in after["error"]
    assert llm.count == 0


@pytest.mark.parametrize("bad", [-1, llm_judges.MAX_FEW_SHOT + 1, True, 2.5])
def test_a_bad_number_of_examples_is_refused(store, world, bad):
    with pytest.raises(OptionError, match="few-shot examples must be 0 to"):
        llm_judges.attach_judge(store, world.curator, world.evaluation.id,
                                llm_judges.JudgeSpec("http://127.0.0.1:9/v1", "m",
                                                     few_shot=bad), boundary=LOCAL)


def test_the_form_and_the_api_take_it_and_the_card_shows_it(store, world, collection):
    from fastapi.testclient import TestClient

    from rankscope.app.factory import create_app
    from rankscope.services import sessions

    app = create_app(store, collection, boundary=boundary_for(collection, hosts=["127.0.0.1"]))
    client = TestClient(app, follow_redirects=False)
    assert client.post("/login", data={"name": world.curator.name,
                                       "password": PASSWORD}).status_code == 303
    ev = world.evaluation.id
    form = {"endpoint": "http://127.0.0.1:9/v1", "model": "m", "few_shot": "3"}
    assert client.post(f"/evaluations/{ev}/llm", data=form).status_code == 303
    page = client.get(f"/evaluations/{ev}/llm").text
    assert 'data-few-shot="3"' in page and 'name="few_shot"' in page
    for bad in ("x", "11", "-2"):
        answer = client.post(f"/evaluations/{ev}/llm", data={**form, "few_shot": bad})
        assert answer.status_code == 400, bad
    token = sessions.create_token(store, world.curator.name, "t")
    api = TestClient(app, headers={"Authorization": f"Bearer {token}"})
    made = api.post(f"/api/v1/evaluations/{ev}/llm-judges",
                    json={"endpoint": "http://127.0.0.1:9/v1", "model": "m", "few_shot": 2})
    assert made.status_code in (200, 201), made.text
    assert made.json()["few_shot"] == 2
    assert api.post(f"/api/v1/evaluations/{ev}/llm-judges",
                    json={"endpoint": "http://127.0.0.1:9/v1", "model": "m",
                          "few_shot": 40}).status_code in (400, 422)
