"""An LLM judge's options in the web app, as ``rankscope judge`` has them: the provider
(openai, ollama), how answers are read (strict, lenient) and the built-in prompt
(the assessor prompt among them). They are checked when the judge is attached (a bad
value is a 4xx, never a 500), kept with the judge so every run asks the same way, and
shown on its card. The servers are scripted on 127.0.0.1, which these tests' boundary
allows explicitly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.llm_judge.conftest import Reply, ScriptedServer

from rankscope.errors import OptionError
from rankscope.outbound.hosts import HostPolicy
from rankscope.services import grading_progress, llm_judges
from rankscope.services.boundary import Boundary

from .conftest import PASSWORD, boundary_for

LOCAL = Boundary(files_dir=Path.cwd(), hosts=HostPolicy.parse(["127.0.0.1"]))


def ollama_reply(body: dict, content: str) -> Reply:
    """A non-streamed /api/chat answer as Ollama's API documentation shows it."""
    return Reply(body=json.dumps({
        "model": body["model"], "created_at": "2026-11-27T05:00:00Z",
        "message": {"role": "assistant", "content": content}, "done": True,
        "done_reason": "stop", "prompt_eval_count": 50, "eval_count": 4}))


@pytest.fixture
def llm():
    server = ScriptedServer()
    yield server
    server.stop()


@pytest.fixture
def curator_client(store, world, collection):
    from fastapi.testclient import TestClient

    from rankscope.app.factory import create_app

    client = TestClient(create_app(store, collection,
                                   boundary=boundary_for(collection, hosts=["127.0.0.1"])),
                        follow_redirects=False)
    answer = client.post("/login", data={"name": world.curator.name, "password": PASSWORD})
    assert answer.status_code == 303
    return client


@pytest.fixture
def curator_api(store, world, collection):
    from fastapi.testclient import TestClient

    from rankscope.app.factory import create_app
    from rankscope.services import sessions

    token = sessions.create_token(store, world.curator.name)
    return TestClient(create_app(store, collection,
                                 boundary=boundary_for(collection, hosts=["127.0.0.1"])),
                      headers={"Authorization": f"Bearer {token}"})


def test_an_ollama_judge_asks_ollamas_own_api_on_every_run(store, world, llm):
    ev_id = world.evaluation.id
    llm.script = lambda doc, n, body: ollama_reply(body, '{"grade": 2}')
    judge = llm_judges.attach_judge(store, world.curator, ev_id, llm_judges.JudgeSpec(
        llm.url, "tiny", provider="ollama", max_calls=1), boundary=LOCAL)
    assert (judge["provider"], judge["parse"], judge["prompt"]) == ("ollama", "strict", None)
    for run in (1, 2):  # the second run reads the options kept with the judge
        summary = llm_judges.run_judge(store, world.curator, judge["id"], boundary=LOCAL)
        assert summary["accepted"] == 1 and summary["provider"] == "ollama"
        assert llm.count == run
    # Ollama's native chat: its own path, not streamed, the settings as its options
    assert set(llm.paths) == {"/v1/api/chat"}
    assert all(b["stream"] is False and "options" in b and "temperature" not in b
               for b in llm.bodies)


def test_the_default_provider_is_openais_chat_completions(store, world, llm):
    llm.script = lambda doc, n, body: Reply('{"grade": 1}')
    judge = llm_judges.attach_judge(store, world.curator, world.evaluation.id,
                                    llm_judges.JudgeSpec(llm.url, "tiny", max_calls=1),
                                    boundary=LOCAL)
    llm_judges.run_judge(store, world.curator, judge["id"], boundary=LOCAL)
    assert llm.paths == ["/v1/chat/completions"] and "messages" in llm.bodies[0]


def test_lenient_reading_grades_what_strict_leaves_unrateable(store, world, llm):
    # "grade: 2" is not the JSON the built-in prompt asks for: strict reads no grade,
    # lenient reads 2 (docs/llm_judges.md, parse.py's two readers)
    llm.script = lambda doc, n, body: Reply("grade: 2")
    ev_id = world.evaluation.id
    strict = llm_judges.attach_judge(store, world.curator, ev_id, llm_judges.JudgeSpec(
        llm.url, "tiny", max_calls=1), boundary=LOCAL)
    summary = llm_judges.run_judge(store, world.curator, strict["id"], boundary=LOCAL)
    assert summary["statuses"] == {"unrateable": 1} and summary["accepted"] == 0
    lenient = llm_judges.attach_judge(store, world.curator, ev_id, llm_judges.JudgeSpec(
        llm.url, "tiny", parse="lenient", max_calls=1), boundary=LOCAL)
    summary = llm_judges.run_judge(store, world.curator, lenient["id"], boundary=LOCAL)
    assert summary["statuses"] == {"graded": 1} and summary["accepted"] == 1
    assert summary["parse"] == "lenient"


def test_the_assessor_prompt_is_sent_and_its_final_line_read(store, world, llm):
    llm.script = lambda doc, n, body: Reply("The page answers it.\nFinal grade: 3")
    judge = llm_judges.attach_judge(store, world.curator, world.evaluation.id,
                                    llm_judges.JudgeSpec(llm.url, "tiny", prompt="assessor",
                                                         max_calls=1), boundary=LOCAL)
    summary = llm_judges.run_judge(store, world.curator, judge["id"], boundary=LOCAL)
    assert summary["template"] == "assessor" and summary["accepted"] == 1
    system = llm.bodies[0]["messages"][0]
    assert system["role"] == "system" and "careful relevance assessor" in system["content"]


@pytest.mark.parametrize(("options", "says"), [
    ({"provider": "anthropic"}, "provider is one of ollama, openai"),
    ({"parse": "loose"}, "strict or lenient"),
    ({"prompt": "/etc/passwd"}, "prompt is one of"),  # a name, never a file of the server
    ({"prompt": "binary"}, "grades 0-1"),  # the evaluation's scale is graded 0-3
])
def test_bad_options_are_refused_by_the_service_and_a_4xx(store, world, curator_api,
                                                            curator_client, options, says):
    ev_id = world.evaluation.id
    spec = llm_judges.JudgeSpec("http://127.0.0.1:1/v1", "m", **options)
    with pytest.raises(OptionError, match=says):
        llm_judges.attach_judge(store, world.curator, ev_id, spec, boundary=LOCAL)
    api = curator_api.post(f"/api/v1/evaluations/{ev_id}/llm-judges",
                           json={"endpoint": "http://127.0.0.1:1/v1", "model": "m", **options})
    assert api.status_code == 400 and says in api.json()["error"]
    form = curator_client.post(f"/evaluations/{ev_id}/llm", data={
        "endpoint": "http://127.0.0.1:1/v1", "model": "m", **options})
    assert form.status_code == 400
    assert llm_judges.list_judges(store, world.curator, ev_id) == []


def test_the_form_keeps_the_options_and_the_card_shows_them(store, world, llm,
                                                             curator_client):
    ev_id = world.evaluation.id
    page = curator_client.get(f"/evaluations/{ev_id}/llm").text
    for name, value in (("provider", "ollama"), ("parse", "lenient"), ("prompt", "assessor")):
        assert f'name="{name}"' in page and f'<option value="{value}"' in page
    answer = curator_client.post(f"/evaluations/{ev_id}/llm", data={
        "endpoint": llm.url, "model": "tiny", "provider": "ollama", "parse": "lenient",
        "prompt": "assessor", "max_calls": "1"})
    assert answer.status_code == 303
    (judge,) = llm_judges.list_judges(store, world.curator, ev_id)
    assert (judge["provider"], judge["parse"], judge["prompt"]) == (
        "ollama", "lenient", "assessor")
    html = curator_client.get(f"/evaluations/{ev_id}/llm").text
    card = html[html.index(f'id="judge-{judge["id"]}"'):]
    card = card[:card.index("</section>")]
    assert 'data-provider="ollama"' in card and 'data-parse="lenient"' in card
    assert 'data-prompt="assessor"' in card
    # and the run it starts asks Ollama with the assessor prompt
    llm.script = lambda doc, n, body: ollama_reply(body, "Final grade: 2")
    summary = llm_judges.run_judge(store, world.curator, judge["id"], boundary=LOCAL)
    assert summary["accepted"] == 1 and summary["template"] == "assessor"
    assert llm.paths == ["/v1/api/chat"]
    assert grading_progress.progress(store, world.curator, ev_id)["filled"] == 0  # kept apart


def test_the_api_takes_and_shows_the_options(world, llm, curator_api):
    ev_id = world.evaluation.id
    made = curator_api.post(f"/api/v1/evaluations/{ev_id}/llm-judges", json={
        "endpoint": llm.url, "model": "tiny", "provider": "ollama", "parse": "lenient"})
    assert made.status_code == 201
    shown = curator_api.get(f"/api/v1/evaluations/{ev_id}/llm-judges").json()
    assert [(j["provider"], j["parse"], j["prompt"]) for j in shown] == [
        ("ollama", "lenient", None)]
